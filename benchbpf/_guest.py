"""Inside a benchbpf.vm guest: run the jobs the host wrote, write back the answers.

    python3 -m benchbpf._guest RUNDIR

RUNDIR is shared read-write with the host (the guest's console output and
exit status do not reach it): jobs.json in, progress and done.json out.
"""
import json
import os
import platform
import sys
import traceback


def _writer(rundir):
    path = os.path.join(rundir, "progress")

    def say(line):
        with open(path, "a") as f:
            f.write(line + "\n")
    return say


def _error(e):
    err = {"type": type(e).__name__, "message": str(e)}
    if getattr(e, "log", None):
        err["log"] = e.log[-4000:]
    return err


def _run_job(job, say):
    from ._core import BenchmarkError, UnsupportedError
    from ._runner import run
    name, options = job["name"], job["options"]
    total = [0]

    def on_sample(sample, index, warmup):
        total[0] += sample.hits
    say(f"running {name}")
    try:
        r = run(name, callback=on_sample, **options)
    except UnsupportedError as e:
        say(f"{name}: cannot run here: {e}")
        return {"error": _error(e)}
    except (BenchmarkError, ValueError, TypeError, PermissionError, OSError) as e:
        say(f"{name}: failed: {e}")
        return {"error": _error(e)}
    say(f"{name}: {r.summary()}")
    return {"result": r.as_dict()}


def _features_job():
    from ._runner import list_benchmarks
    from .features import features, missing_features
    f = features()
    return {"features": [tuple(x) for x in f.values()],
            "missing": {n: list(missing_features(n, f)) for n in list_benchmarks()}}


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
        answer["fatal"] = {"type": type(e).__name__,
                           "message": f"{e}\n{traceback.format_exc()[-2000:]}"}
    tmp = os.path.join(rundir, "done.json.tmp")
    with open(tmp, "w") as f:
        json.dump(answer, f)
    os.rename(tmp, os.path.join(rundir, "done.json"))   # whole, or not at all
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
