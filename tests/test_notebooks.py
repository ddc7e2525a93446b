"""The notebooks run: every code cell, with durations shortened."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _cells(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            # IPython magics are not Python; a run here needs no inline backend.
            src = "\n".join(l for l in src.splitlines() if not l.startswith("%"))
            # Same calls, shorter: CI time, not different behaviour.
            src = re.sub(r"duration=\d+", "duration=0.4, interval=0.2", src)
            src = re.sub(r"warmup=\d+", "warmup=0.2", src)
            yield src


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path, monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    ns = {}
    for src in _cells(path):
        exec(compile(src, str(path), "exec"), ns)
