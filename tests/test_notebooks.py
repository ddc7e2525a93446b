"""The notebooks run: every cell, top to bottom, in a real Jupyter kernel
(nbclient + ipykernel), with BENCHBPF_QUICK=1; and each is what
scripts/make_notebooks.py writes from its cell list."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

import benchbpf

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _script(name):
    # As when run: the script's folder first on sys.path, for its sibling modules.
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return module


@pytest.fixture(scope="module")
def runner():
    pytest.importorskip("nbclient")
    pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")
    return _script("run_notebooks")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, runner):
    try:
        nb = runner.execute(path, quick=True, timeout=600)
    except runner.NotebookError as e:
        pytest.fail(str(e), pytrace=False)
    first = next(c for c in nb.cells if c.cell_type == "code")
    text = "".join(o.get("text", "") for o in first.outputs)
    if "quick mode" in first.source:
        assert "quick mode" in text, f"{path.name} did not run in quick mode: {text!r}"


def test_failing_cell_fails_with_its_source(runner, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import benchbpf\nprint(benchbpf.quick())"),
                nbformat.v4.new_code_cell("x = 1\nraise ValueError('broken cell')"),
                nbformat.v4.new_code_cell("print('never')")]
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, str(path))
    with pytest.raises(runner.NotebookError) as info:
        runner.execute(path, quick=True, timeout=60)
    assert "raise ValueError('broken cell')" in info.value.source
    assert "broken cell" in str(info.value)
    assert "print('never')" not in info.value.source


def test_kernel_sees_quick_mode_and_this_checkout(runner, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import sys, benchbpf\nprint(benchbpf.quick(), benchbpf.__file__, sys.executable)")]
    path = tmp_path / "env.ipynb"
    nbformat.write(nb, str(path))
    for quick in (True, False):
        out = runner.execute(path, quick=quick, timeout=60).cells[0].outputs
        text = "".join(o.get("text", "") for o in out)
        assert text.startswith(str(quick)), text
        assert str(ROOT / "benchbpf") in text, text
        # This interpreter (a venv's, as README's commands run), not another python3.
        assert text.split()[-1] == sys.executable, text


def test_notebooks_are_what_the_generator_writes():
    make = _script("make_notebooks")
    assert make.main(["--check"]) == 0
    assert {p.stem for p in NOTEBOOKS} == set(make.NOTEBOOKS)


def test_generator_keeps_outputs_of_unchanged_cells():
    make = _script("make_notebooks")
    cells = [("md", "# t"), ("code", "a = 1"), ("code", "b = 2")]
    old = make.notebook(cells)
    old["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]
    old["cells"][2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["2\n"]}]
    new = make.notebook([("md", "# t"), ("code", "a = 1"), ("code", "b = 3")], old)
    assert new["cells"][1]["outputs"] == old["cells"][1]["outputs"]
    assert new["cells"][2]["outputs"] == []


def test_study_notebooks_cite_and_conclude():
    """Every study notebook says where its published figures come from and
    ends with a code cell that prints its conclusion."""
    for path in NOTEBOOKS:
        if path.stem == "quickstart":
            continue
        cells = json.loads(path.read_text())["cells"]
        md = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        assert "published figures come from" in md or "reference figures come from" in md, path
        assert cells[-1]["cell_type"] == "code" and "print(" in "".join(cells[-1]["source"]), path


@pytest.mark.parametrize("value, expected", [
    (None, False), ("", False), ("0", False), ("false", False), ("No", False), ("off", False),
    ("1", True), ("yes", True), ("true", True), ("quick", True)])
def test_quick_reads_the_environment(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("BENCHBPF_QUICK", raising=False)
    else:
        monkeypatch.setenv("BENCHBPF_QUICK", value)
    assert benchbpf.quick() is expected


@pytest.mark.parametrize("value, expected", [("0", False), ("off", False), ("1", True),
                                             ("yes", True)])
def test_progress_follows_the_environment(monkeypatch, value, expected):
    from benchbpf.harness import _progress
    monkeypatch.setenv("BENCHBPF_PROGRESS", value)
    assert _progress.wanted(None) is expected
    assert _progress.wanted(not expected) is (not expected)   # an explicit choice wins
