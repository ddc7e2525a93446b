"""Inside a benchbpf.vm guest: run the jobs the host wrote, write back the answers.

    python3 -m benchbpf.guests._guest RUNDIR           # a batch: jobs.json in, done.json out
    python3 -m benchbpf.guests._guest RUNDIR --serve   # one job at a time, until told to quit

RUNDIR is shared read-write with the host (the guest's console output and
exit status do not reach it): jobs in, progress and answers out.  A serving
guest reads ask-N.json (N = 1, 2, ...) as the host writes them and answers
each in answer-N.json, so that a guest stays booted between runs (an A/B
comparison of two kernels alternates runs between two such guests).
"""
import json
import os
import platform
import sys
import time

from ..harness._errors import to_dict


def _writer(rundir):
    path = os.path.join(rundir, "progress")

    def say(line):
        with open(path, "a") as f:
            f.write(line + "\n")
    return say


def _run_job(job, say):
    from .._core import BenchmarkError, UnsupportedError
    from ..harness._runner import run
    name, options = job["name"], job["options"]
    total = [0]

    def on_sample(sample, index, warmup):
        total[0] += sample.hits
    say(f"running {name}")
    try:
        r = run(name, callback=on_sample, **options)
    except UnsupportedError as e:
        say(f"{name}: cannot run here: {e}")
        return {"error": to_dict(e)}
    except (BenchmarkError, ValueError, TypeError, PermissionError, OSError) as e:
        say(f"{name}: failed: {e}")
        return {"error": to_dict(e)}
    say(f"{name}: {r.summary()}")
    return {"result": r.as_dict()}


def _features_job():
    from ..harness._runner import list_benchmarks
    from ..harness.features import features, missing_features
    f = features()
    return {"features": [tuple(x) for x in f.values()],
            "missing": {n: list(missing_features(n, f)) for n in list_benchmarks()}}


def _write_whole(rundir, name, answer):
    tmp = os.path.join(rundir, name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(answer, f)
    os.rename(tmp, os.path.join(rundir, name))   # whole, or not at all


#: How often a serving guest looks for the host's next job, s.
POLL_S = 0.02


def serve(rundir):
    """Answer the host's jobs one at a time until a job of kind "quit"."""
    say = _writer(rundir)
    say("booted")
    n = 1
    while True:
        ask = os.path.join(rundir, f"ask-{n}.json")
        if not os.path.exists(ask):
            time.sleep(POLL_S)
            continue
        with open(ask) as f:
            job = json.load(f)
        if job["kind"] == "quit":
            return 0
        try:
            answer = _run_job(job, say)
        except BaseException as e:   # report anything, and keep serving
            answer = {"error": to_dict(e, with_traceback=True)}
        answer["release"] = platform.release()
        _write_whole(rundir, f"answer-{n}.json", answer)
        n += 1


def main(rundir):
    say = _writer(rundir)
    say("booted")
    answer = {"release": platform.release(), "jobs": []}
    try:
        with open(os.path.join(rundir, "jobs.json")) as f:
            jobs = json.load(f)
        for job in jobs:
            if job["kind"] == "features":
                answer["jobs"].append(_features_job())
            else:
                answer["jobs"].append(_run_job(job, say))
    except BaseException as e:   # report anything, even an import failure
        answer["fatal"] = to_dict(e, with_traceback=True)
    _write_whole(rundir, "done.json", answer)
    return 0


if __name__ == "__main__":
    if sys.argv[2:] == ["--serve"]:
        sys.exit(serve(sys.argv[1]))
    sys.exit(main(sys.argv[1]))
