"""The team store in CI (docs/ci/benchbpf-team.yml, issue #40 item 7): what
its series need from each run, and its steps run against a real
PostgreSQL server."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

from benchbpf import history
from benchbpf.results import fingerprint
# The PostgreSQL server and a database of its own: .ci/run's, else one started.
from test_history_pg import server, url  # noqa: F401 (fixtures)

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


def _summary_rows(text):
    """The cells of each data row of a Markdown summary's table."""
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line in text.splitlines()[4:] if line.startswith("|")]


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


def test_only_emulated_change_points_are_marked_emulated(tmp_path, capsys):
    # A store holding real and emulated series: pandas reads the real runs'
    # emulation as NaN, which must not read as a mark.
    from test_history import _stepped
    store = str(tmp_path / "h.sqlite")
    _stepped(store)
    _stepped(store, seed=5, vm={"emulated": True, "accel": "tcg"})
    _, text, _ = _changes(capsys, store)
    assert text.count("-emulated: not a performance figure]") == 1
    assert "[TCG-emulated: not a performance figure]" in text and "nan" not in text
    _, md, _ = _changes(capsys, store, "--format", "markdown")
    marked = [row for row in _summary_rows(md) if "emulated" in row[2]]
    assert len(_summary_rows(md)) == 2 and len(marked) == 1
    assert marked[0][2].endswith("**[TCG-emulated: not a performance figure]**")


# -- .ci/run's PostgreSQL server ------------------------------------------------

CI_POSTGRES = os.path.join(ROOT, "scripts", "ci_postgres.sh")


def _reachable(url):
    psycopg = pytest.importorskip("psycopg")
    try:
        psycopg.connect(f"{url}/postgres", connect_timeout=5).close()
        return True
    except psycopg.OperationalError:
        return False


def _no_postgres_skip():
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        pytest.skip("no PostgreSQL server installed (Debian's postgresql package; "
                    "scripts/install.sh installs it)")


def test_ci_postgres_starts_a_server_and_stops_it(tmp_path):
    _no_postgres_skip()
    top = tempfile.mkdtemp(prefix="benchbpf-ci-pg-")
    try:
        start = subprocess.run([CI_POSTGRES, "start", top], capture_output=True, text=True,
                               timeout=300)
        assert start.returncode == 0, start.stderr
        url = start.stdout.strip()
        assert re.fullmatch(r"postgresql://postgres@127\.0\.0\.1:\d+", url)
        assert _reachable(url)
        again = subprocess.run([CI_POSTGRES, "start", top], capture_output=True, text=True)
        assert again.returncode == 2 and "start takes a new directory" in again.stderr
    finally:
        stop = subprocess.run([CI_POSTGRES, "stop", top], capture_output=True, text=True,
                              timeout=300)
    assert stop.returncode == 0, stop.stderr
    assert not os.path.exists(top) and not _reachable(url)
    bad = subprocess.run([CI_POSTGRES, "begin", top], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage:" in bad.stderr


def test_ci_run_gives_the_suite_a_server_and_stops_it(tmp_path):
    # .ci/run itself, in a copy of the tree whose install.sh and venv python are
    # stand-ins: the real ones would install packages and run the whole suite.
    _no_postgres_skip()
    for part in (".ci", "scripts", ".venv/bin"):
        (tmp_path / part).mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, ".ci", "run"), tmp_path / ".ci" / "run")
    shutil.copy(CI_POSTGRES, tmp_path / "scripts" / "ci_postgres.sh")
    calls = tmp_path / "calls"
    (tmp_path / "scripts" / "install.sh").write_text(f"#!/bin/sh\necho install >> {calls}\n")
    # The suite's stand-in: notes its arguments and the server, checks it
    # answers, and fails with 5, which .ci/run must pass on.
    (tmp_path / ".venv" / "bin" / "python3").write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "pytest $*" >> {calls}
        echo "$BENCHBPF_TEST_POSTGRES" > {tmp_path / "url"}
        {sys.executable} -c "import psycopg, sys; psycopg.connect(sys.argv[1] + '/postgres').close()" \\
            "$BENCHBPF_TEST_POSTGRES" && echo reachable >> {calls}
        exit 5
        """))
    for script in ("scripts/install.sh", "scripts/ci_postgres.sh", ".venv/bin/python3",
                   ".ci/run"):
        os.chmod(tmp_path / script, 0o755)
    done = subprocess.run([str(tmp_path / ".ci" / "run")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 5, done.stderr
    assert calls.read_text().splitlines() == ["install", "install", "pytest -m pytest -q tests",
                                              "reachable"]
    url = (tmp_path / "url").read_text().strip()
    assert url.startswith("postgresql://postgres@127.0.0.1:") and not _reachable(url)


def test_a_named_server_that_is_gone_fails_the_tests_not_skips_them(tmp_path):
    # CI names the server it started; if it is gone, skipping the PostgreSQL
    # tests would pass a suite that tested nothing there.
    pytest.importorskip("psycopg")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         os.path.join(ROOT, "tests", "test_history_pg.py"), "-k", "round_trip"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
        env={**os.environ, "PYTHONPATH": ROOT, "BENCHBPF_TEST_POSTGRES":
             "postgresql://postgres@127.0.0.1:1"})
    assert done.returncode == 1 and "1 error" in done.stdout and "skipped" not in done.stdout
    assert "BENCHBPF_TEST_POSTGRES=postgresql://postgres@127.0.0.1:1: cannot connect" \
        in done.stdout


# -- the team job: docs/ci/benchbpf-team.yml --------------------------------------

WORKFLOW = os.path.join(ROOT, "docs", "ci", "benchbpf-team.yml")
#: Set by GitHub's runner, not by the workflow.
RUNNER_VARS = {"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "PWD"}


def _job():
    # PyYAML comes with the docs extra (myst-parser needs it), which install.sh installs.
    import yaml
    with open(WORKFLOW) as f:
        doc = yaml.safe_load(f)
    return doc, doc["jobs"]["bench"]


def _run_steps(job, env, cwd):
    """Run the job's `run:` steps in order as GitHub's runner does (bash -e
    -o pipefail; what a step appends to $GITHUB_ENV is in the next steps'
    environment); the install step is left out: the suite runs in the venv
    install.sh made."""
    for step in job["steps"]:
        if "run" not in step or step.get("id") == "install":
            continue
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               step["run"]], env=env, cwd=cwd, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, f"step {step['id']}: {done.stdout}\n{done.stderr}"
        with open(env["GITHUB_ENV"]) as f:
            env.update(line.split("=", 1) for line in f.read().splitlines() if "=" in line)


@pytest.mark.fast
def test_the_workflow_runs_on_push_into_a_postgres_service_and_its_steps_use_its_env():
    doc, job = _job()
    assert "push" in doc.get("on", doc.get(True))          # YAML 1.1 reads `on` as True
    service = job["services"]["postgres"]
    assert service["image"].startswith("postgres:")
    user, password, db = (service["env"][k] for k in ("POSTGRES_USER", "POSTGRES_PASSWORD",
                                                      "POSTGRES_DB"))
    assert f"'postgresql://{user}:{password}@127.0.0.1:5432/{db}'" in \
        job["env"]["BENCHBPF_HISTORY_URL"]
    # The steps are plain shell, so the test below runs them as written; every
    # variable they read is the job's, the runner's, or one an earlier step set.
    known = set(job["env"]) | RUNNER_VARS
    for step in job["steps"]:
        if "run" not in step:
            continue
        assert "${{" not in step["run"], step["id"]
        used = set(re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", step["run"]))
        assert used <= known, (step["id"], used - known)
        known |= set(re.findall(r"([A-Z][A-Z0-9_]*)=.*>> \"\$GITHUB_ENV\"", step["run"]))
    from benchbpf.tools import report
    planned = {name for name, *_ in report.plan(True, job["env"]["BENCHBPF_SUITE"])}
    assert len(planned) == len(job["env"]["BENCHBPF_SUITE"].split(","))


def _seed_faster_past(template, store, n=10, factor=10):
    """n runs of `template`'s series `factor` times faster, started days
    before now, from commits seed0.. : the pushes before a slowdown."""
    import dataclasses
    import datetime
    start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=10)
    for i in range(n):
        meta = dict(template.metadata)
        meta["started"] = (start + datetime.timedelta(hours=i)).isoformat()
        meta["fingerprint"] = {**meta["fingerprint"], "git_commit": f"seed{i}"}
        # 1 % apart, so the runs before have a spread, as real ones do.
        scale = factor * (1 + 0.01 * ((i % 3) - 1))
        samples = [dataclasses.replace(s, hits=int(s.hits * scale)) for s in template.samples]
        history.record(dataclasses.replace(template, samples=samples, metadata=meta), store,
                       strict=True)


def test_the_workflow_records_each_push_and_posts_only_its_new_change_points(url, tmp_path):
    import benchbpf
    from benchbpf.tools import report
    doc, job = _job()
    # Ten earlier pushes of this machine's count-local, ten times as fast as
    # it runs now: this push's runs are a slowdown the summary must post (a
    # busy host moves count-local by 2-3 times, never by 10).
    _seed_faster_past(benchbpf.run("count-local", **report.QUICK), url)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "benchbpf").write_text(f'#!/bin/sh\nexec {sys.executable} -m benchbpf "$@"\n')
    os.chmod(bindir / "benchbpf", 0o755)
    work = tmp_path / "checkout"
    work.mkdir()
    env = {**os.environ, **job["env"], "PYTHONPATH": ROOT,
           "PATH": f"{bindir}:{os.environ['PATH']}",
           # The job's own store and suite, short: one benchmark, 4 runs.
           "BENCHBPF_HISTORY_URL": url, "BENCHBPF_SUITE": "count-local", "BENCHBPF_REPEAT": "4"}
    for name in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        env[name] = str(tmp_path / name.lower())
        open(env[name], "w").close()
    _run_steps(job, env, work)

    since = env["BENCHBPF_SINCE"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", since)
    assert env["BENCHBPF_SUITE_STATUS"] == "0"
    assert os.path.exists(work / "benchbpf-out" / "suite.json")
    runs = history.series("count-local", store=url)
    assert len(runs) == 14 and runs["series"].nunique() == 1
    assert runs["source"].tolist()[-4:] == ["benchbpf-out/suite.json"] * 4
    summary = open(env["GITHUB_STEP_SUMMARY"]).read()
    lines = summary.splitlines()
    assert re.fullmatch(rf"### benchbpf: \d+ new change points? since {since}", lines[0])
    assert lines[2].startswith("| benchmark | parameters | machine | at run |")
    ours = [row for row in _summary_rows(summary) if row[0] == "count-local"]
    # Noise among this push's runs may add a change point of its own; the
    # slowdown must be there, at the first of them.
    ours = [row for row in ours if row[3] == "11 of 14"]
    assert len(ours) == 1, summary
    assert float(ours[0][5].split(" %")[0]) < -50
    head = fingerprint.fingerprint()["git_commit"]
    assert ours[0][7] == f"seed9 → {head[:12]}"
    assert lines[-1].startswith(f"E-Divisive means ({history.DETECTOR_REQUIREMENT}), p < 0.001")

    # The next push: the slowdown is known, so it is not posted again.
    for name in ("GITHUB_ENV", "GITHUB_STEP_SUMMARY"):
        open(env[name], "w").close()
    env["BENCHBPF_REPEAT"] = "2"
    _run_steps(job, env, work)
    summary = open(env["GITHUB_STEP_SUMMARY"]).read()
    assert summary.startswith("### benchbpf: ") and len(history.series(
        "count-local", store=url)) == 16
    assert not [row for row in _summary_rows(summary) if row[3] == "11 of 16"], summary

