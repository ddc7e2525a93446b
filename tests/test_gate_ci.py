"""The CI recipe of docs/ci/benchbpf-gate.yml cannot rot: its shell steps
that record and compare baselines run here, in a temporary project, and
the manual shows the file as it is."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# PyYAML comes with the docs extra (myst-parser needs it), which install.sh installs.
yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (pip install "
                                          "'benchbpf[docs]')")

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "docs" / "ci" / "benchbpf-gate.yml"
PAGE = ROOT / "docs" / "tasks" / "pytest-gate.md"

#: The project's checks: the manual's example, with a limit beyond this
#: shared machine's swings (tests/test_pytest_plugin.py's LIMIT_PCT).
CHECK = """
import benchbpf

def test_count_local(benchbpf_gate):
    benchbpf_gate.check(
        "count-local",
        lambda: benchbpf.run("count-local", warmup=0.2, duration=1, interval=0.001,
                             work_per_hit=40),
        max_drop_pct=60)
"""


def _job():
    return yaml.safe_load(RECIPE.read_text())["jobs"]["gate"]


def _step(job, step_id):
    found = [s for s in job["steps"] if s.get("id") == step_id]
    assert len(found) == 1, f"{RECIPE}: one step with id {step_id!r}"
    return found[0]


def test_the_manual_shows_the_recipe_verbatim():
    blocks = re.findall(r"```yaml\n(.*?)```", PAGE.read_text(), re.S)
    assert RECIPE.read_text() in blocks


def test_the_baselines_are_kept_between_runs():
    # Recorded only when the cache missed, saved under the key they are
    # restored by: the next run compares against them.
    job = _job()
    restore, record = _step(job, "restore"), _step(job, "record")
    keep = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/cache/save")]
    assert len(keep) == 1
    assert restore["uses"].startswith("actions/cache/restore")
    assert restore["with"] == keep[0]["with"]
    assert record["if"] == keep[0]["if"] == "steps.restore.outputs.cache-hit != 'true'"
    assert "if" not in _step(job, "compare")


def test_the_recipes_steps_record_then_compare_here(tmp_path):
    job = _job()
    project = tmp_path / "project"
    (project / job["env"]["CHECKS"]).mkdir(parents=True)
    (project / job["env"]["CHECKS"] / "test_gate.py").write_text(CHECK)
    # `python3` in the steps is this interpreter (install.sh's venv in CI).
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    output = tmp_path / "github_output"
    env = {**os.environ, **{k: str(v) for k, v in job["env"].items()},
           "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(output),
           "PYTHONPATH": str(ROOT), "RUNNER_TEMP": str(tmp_path)}
    env.pop("BENCHBPF_HISTORY", None)
    ran = {}
    for step_id in ("machine", "record", "compare"):
        ran[step_id] = subprocess.run(["bash", "-e", "-c", _step(job, step_id)["run"]],
                                      cwd=project, env=env, capture_output=True, text=True,
                                      timeout=600)
        assert ran[step_id].returncode == 0, (step_id, ran[step_id].stdout[-3000:],
                                              ran[step_id].stderr[-3000:])
    assert re.fullmatch(r"key=\S+-\d+cpu-[0-9a-f]{12}\n", output.read_text())
    saved = project / job["env"]["BASELINES"] / "count-local.json"
    assert saved.exists()
    assert f"count-local: saved baseline {saved.relative_to(project)}" in ran["record"].stdout
    assert re.search(r"^count-local: ok B/A ", ran["compare"].stdout, re.M), \
        ran["compare"].stdout[-3000:]
