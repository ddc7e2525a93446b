"""A Result as one row of the history store, and the keys of its series."""
import datetime
import hashlib
import json
import math

from ..results.result import Result, emulation

#: What names a machine in the store: its runs on any kernel are one
#: machine's (the kernel is an axis of a series, not part of its key).
#: machine_id (fingerprint.machine_id(), hashed) keeps two guests of one
#: image and CPU apart; a run from before it was read has none and hashes
#: as it did then, so rows already stored keep their series.
MACHINE_KEYS = ("machine", "cpu_model", "nr_cpus", "machine_id")


def canonical(value):
    """JSON with sorted keys and no spaces: one text for equal parameters."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=dict)


def _digest(*parts):
    return hashlib.sha256(canonical(list(parts)).encode()).hexdigest()[:16]


def _number(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _epoch(iso):
    if not iso:
        return None
    try:
        when = datetime.datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def machine_of(metadata):
    """(machine hash, label) of a run's metadata: MACHINE_KEYS, read from
    the run's metadata, else from its fingerprint."""
    fp = metadata.get("fingerprint") or {}
    values = {k: metadata.get(k, fp.get(k)) for k in MACHINE_KEYS}
    label = f"{values['cpu_model'] or '?'}, {values['nr_cpus'] or '?'} CPUs, {values['machine'] or '?'}"
    keys = [k for k in MACHINE_KEYS if k != "machine_id" or values[k] is not None]
    if values["machine_id"] is not None:
        label += f", {values['machine_id']}"
    return _digest(*(values[k] for k in keys)), label


def row(result, source=None, set_metadata=None):
    """The store's row (a dict of _store.NAMES) for one Result; metadata the
    run lacks (its fingerprint) is taken from `set_metadata`, its ResultSet's."""
    if not isinstance(result, Result):
        raise TypeError(f"history records Results, got {type(result).__name__}")
    meta = {**dict(set_metadata or {}), **dict(result.metadata)}
    fp = dict(meta.get("fingerprint") or {})
    machine, label = machine_of(meta)
    params = canonical(result.params)
    emulated = emulation(result)
    ci = result.mean_ci_mps
    vm = meta.get("vm") or {}
    return {
        "series": _digest(result.name, params, machine, emulated),
        "benchmark": result.name,
        "params": params,
        "median_mps": _number(result.median),
        "mean_mps": _number(result.mean) if result.samples else None,
        "ci_low_mps": _number(ci.low) if ci else None,
        "ci_high_mps": _number(ci.high) if ci else None,
        "started": meta.get("started"),
        "started_s": _epoch(meta.get("started")),
        "kernel_release": meta.get("kernel") or fp.get("kernel_release"),
        "kernel_build": fp.get("kernel_version") if not vm else vm.get("kernel_version"),
        "kernel_commit": meta.get("kernel_commit") or vm.get("kernel_commit"),
        "machine": machine,
        "machine_label": label,
        "cpu_model": meta.get("cpu_model", fp.get("cpu_model")),
        "nr_cpus": meta.get("nr_cpus", fp.get("nr_cpus")),
        "benchbpf_version": meta.get("benchbpf_version", fp.get("benchbpf_version")),
        "benchbpf_commit": fp.get("git_commit"),
        "emulated": emulated,
        "fingerprint": canonical(fp) if fp else None,
        "source": None if source is None else str(source),
    }


def ab_side(ab, key):
    """Side `key` ("a" or "b") of an A/B comparison as one Result made of
    its rounds' runs, as a precision run is made of its own: the samples in
    round order, the interval over the rounds (Result.runs,
    stats.runs_mean_ci), the first round's metadata.  Parameters that
    differ between rounds (a duet swaps the sides' CPUs each round) are
    the comparison's placement, not the side's: left out.  None without
    rounds."""
    runs = [getattr(rnd, key) for rnd in ab.rounds]
    if not runs:
        return None
    params = {k: v for k, v in runs[0].params.items()
              if all(r.params.get(k) == v for r in runs)}
    start = ab.rounds[0].started_s
    meta = {**runs[0].metadata,
            "precision_runs": tuple(len(r.samples) for r in runs),
            "precision_run_starts_s": tuple(round(rnd.started_s - start, 3)
                                            for rnd in ab.rounds)}
    return Result(name=runs[0].name, params=params,
                  samples=[s for r in runs for s in r.samples], metadata=meta)


def _ab_rows(ab, source):
    """An A/B comparison's two sides, one row each; `source` names the
    comparison and its outcome, which the one table of runs has no
    columns for, so that a reader can pair the two sides."""
    said = (f"{ab.mode} A/B: A = {ab.a.text}, B = {ab.b.text}: {ab.outcome.text()}; "
            f"{len(ab.rounds)} rounds")
    out = []
    for key in ("a", "b"):
        side = ab_side(ab, key)
        if side is not None:
            note = f"ab side {key.upper()} of {said}"
            out.append(row(side, note if source is None else f"{source}: {note}"))
    return out


def rows(result_or_set, source=None):
    """The rows of a Result, of each Result of a ResultSet (a report, a
    --repeat) or a Sweep, or of both sides of an ABResult (ab_side)."""
    from ..analysis.ab import ABResult
    if isinstance(result_or_set, Result):
        return [row(result_or_set, source)]
    if isinstance(result_or_set, ABResult):
        return _ab_rows(result_or_set, source)
    results = getattr(result_or_set, "results", None)
    if results is None:
        raise TypeError("history records a Result, a ResultSet, a Sweep or an ABResult, "
                        f"got {type(result_or_set).__name__}")
    meta = getattr(result_or_set, "metadata", None)
    return [row(r, source, meta) for r in results]
