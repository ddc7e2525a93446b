"""The team store in CI (docs/ci/benchbpf-team.yml, issue #40 item 7): what
its series need from each run, and its steps run against a real
PostgreSQL server."""
import os
import subprocess
import sys

import pytest

from benchbpf import history
from benchbpf.results import fingerprint

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.fast
def test_a_run_names_the_commit_of_its_checkout():
    # The job's change points name the commits either side: a run must carry
    # the commit of the tree benchbpf was loaded from.
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    commit = fingerprint.fingerprint()["git_commit"]
    assert commit is not None and commit.removesuffix("-dirty") == head.stdout.strip()


@pytest.fixture
def stepped(tmp_path):
    """A store of 40 runs, 10 % slower from run 26 on (test_history's)."""
    from test_history import _stepped
    store = str(tmp_path / "h.sqlite")
    _stepped(store)
    return store


def _changes(capsys, store, *argv):
    """`benchbpf history changes ARGV` on `store`: (status, stdout, stderr)."""
    from benchbpf.tools import cli
    status = cli.main(["history", "--history", store, "changes", *argv])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_since_lists_only_the_change_points_new_runs_made_appear(stepped):
    # Run 26 (index 25) is the first slower one; runs i start on day 1 + i // 2.
    made = history.series_changes(history.series("count-local", store=stepped),
                                  since="2026-11-13T11:00:00Z")
    assert made["index"].tolist() == [25]
    # Runs after the change, once it was already found, add no new one.
    assert history.series_changes(history.series("count-local", store=stepped),
                                  since="2026-11-16T10:00:00+00:00").empty
    # No zone is UTC; Unix seconds are taken too.
    from benchbpf.history._changes import since_epoch
    assert since_epoch("2026-11-13T11:00:00") == since_epoch("2026-11-13T11:00:00Z") == \
        since_epoch(1794567600) == 1794567600.0
    with pytest.raises(ValueError, match=r"since='yesterday': not a date and time"):
        history.series_changes(history.series("count-local", store=stepped), since="yesterday")


def test_the_markdown_summary_has_a_heading_a_row_per_change_and_the_detector(stepped,
                                                                              capsys):
    status, out, err = _changes(capsys, stepped, "--since", "2026-11-13T11:00:00Z",
                                "--format", "markdown")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "### benchbpf: 1 new change point since 2026-11-13T11:00:00Z"
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 3 and table[0].count("|") == table[2].count("|") == 10
    row = [cell.strip() for cell in table[2].strip("|").split("|")]
    assert row[0] == "count-local" and row[3] == "26 of 40"
    assert row[5].startswith("-10.") and row[7] == "c24 → c25" and row[8] == "6.12 → 6.18"
    assert lines[-1].startswith(f"E-Divisive means ({history.DETECTOR_REQUIREMENT}), p < 0.001, "
                                "over 1 series (40 runs).")
    _, none, _ = _changes(capsys, stepped, "--since", "2026-11-20T11:00:00Z", "--format",
                          "markdown")
    assert none.splitlines()[:3] == [
        "### benchbpf: 0 new change points since 2026-11-20T11:00:00Z", "",
        "No new change point in 1 series (40 runs)."]
    _, text, _ = _changes(capsys, stepped, "--since", "2026-11-20T11:00:00Z")
    assert text.startswith("0 change points new since 2026-11-20T11:00:00Z (p < 0.001")
    status, _, err = _changes(capsys, stepped, "--since", "soon")
    assert status == 2 and "since='soon': not a date and time" in err
