"""The team store in CI (docs/ci/benchbpf-team.yml, issue #40 item 7): what
its series need from each run, and its steps run against a real
PostgreSQL server."""
import os
import subprocess

import pytest

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
