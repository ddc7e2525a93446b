"""`benchbpf show FILE`: what a JSON file benchbpf saved holds, as pyperf's
`show`: each figure with its interval and units, the parameters, when and
where it was measured; `--metadata` adds the machine's fingerprint.

    benchbpf show r.json              # benchbpf NAME --json r.json
    benchbpf show --metadata ab.json  # benchbpf ab ... --json ab.json

In Python, load(path) reads any of them (KINDS lists what it knows) and
text(obj) says what show prints."""
import argparse
import json
import math
import statistics
import sys

from ..analysis import ab as _ab
from ..results import result as _result, resultset as _resultset
from ..results.stats import median_ci
from ._gate_file import BASELINE_FORMAT, BASELINE_VERSION, Baseline, rounded

__all__ = ["KINDS", "load", "text", "main"]


def _baseline(d):
    """A gate baseline file's Baseline, as the gate reads it at the file's
    own counter, share and alpha."""
    return Baseline.from_dict(d, d["counter"], d["top_pct"], d["alpha"])


def _baseline_lines(b):
    unit = "M/s per producer CPU-second" if b.per_cpu else "M/s"
    speeds = [x for x in b.speeds if not math.isnan(x)]
    shown = f"{min(speeds):.3f}..{max(speeds):.3f} {unit}" if speeds else "none usable"
    return [f"a pytest gate baseline of {b.first.name}: reference {rounded(b.reference)} "
            f"{unit} ({b.counter}, the fastest {b.top_pct} %, lower bound at alpha "
            f"{b.alpha}), from {len(b.runs)} runs",
            f"run speeds {shown}, spread {b.spread_pct:.1f} %",
            f"parameters: {_params(b.first.params)}", _where(b.first.metadata)]

#: The files benchbpf writes, by their "format" field: (what writes them,
#: the format version this benchbpf reads, the reader of the file's dict).
KINDS = {
    "benchbpf-result": ("a run (benchbpf NAME --json, Result.to_json)",
                        _result.FORMAT_VERSION, _result.Result.from_dict),
    _resultset.FORMAT: ("a result set (benchbpf NAME --repeat N --json, benchbpf report "
                        "--json, ResultSet.save of a sweep)",
                        _resultset.FORMAT_VERSION, _resultset.ResultSet.from_dict),
    _ab.FORMAT: ("an A/B comparison (benchbpf ab --json, ABResult.save)",
                 _ab.FORMAT_VERSION, _ab.ABResult.from_dict),
    BASELINE_FORMAT: ("a pytest gate baseline (--benchbpf-save)", BASELINE_VERSION,
                      _baseline),
}


def _expected():
    return "; ".join(f"{kind} version {version}: {what}"
                     for kind, (what, version, _) in KINDS.items())


def load(path):
    """What the JSON file at `path` holds, as its "format" field says: a
    Result, a ResultSet, an ABResult or a gate Baseline
    (benchbpf.tools.pytest_plugin.Baseline).  ValueError naming the file and
    what was expected when it is not JSON, not a kind benchbpf writes, or
    of another format version (a newer benchbpf's); OSError when it cannot
    be read."""
    with open(path) as f:
        try:
            d = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e}); expected a file benchbpf saved: "
                             f"{_expected()}") from None
    kind = d.get("format") if isinstance(d, dict) else None
    if kind not in KINDS:
        found = (f"a JSON {type(d).__name__}" if not isinstance(d, dict) else
                 'no "format" field' if kind is None else f"format {kind!r}")
        raise ValueError(f"{path}: not a file benchbpf saved ({found}); expected one of: "
                         f"{_expected()}")
    what, version, read = KINDS[kind]
    if d.get("version") != version:
        newer = isinstance(d.get("version"), int) and d["version"] > version
        raise ValueError(f"{path}: {kind} format version {d.get('version')!r}"
                         + (", from a newer benchbpf" if newer else "")
                         + f"; this benchbpf reads version {version} ({what})")
    try:
        return read(d)
    except (KeyError, TypeError, ValueError) as e:
        detail = f"missing {e}" if isinstance(e, KeyError) else str(e)
        raise ValueError(f"{path}: a damaged {kind} file ({detail})") from None


def _figure(r):
    """A run's figure: its mean hit rate with the 95 % interval, M/s."""
    ci = r.mean_ci_mps
    interval = (f"95 % interval {ci.low:.3f}..{ci.high:.3f} M/s" if ci is not None else
                f"no interval: {len(r.samples)} samples, too few")
    return f"hits {r.mean:.3f} M/s mean, {interval}"


def _where(meta):
    """When and where, from a result's or a comparison's metadata."""
    fields = [meta.get("started") or "?", f"kernel {meta.get('kernel', '?')}",
              f"{meta.get('cpu_model', '?')} ({meta.get('nr_cpus', '?')} CPUs)",
              f"benchbpf {meta.get('benchbpf_version', '?')}"]
    vm = meta.get("vm")
    if vm:
        fields.insert(2, f"in a guest ({str(vm.get('accel', '?')).upper()})")
    return "measured: " + ", ".join(map(str, fields))


def _params(params):
    return ", ".join(f"{k}={v!r}" for k, v in params.items()) or "-"


def _fingerprint(fp, indent="  "):
    lines = []
    for key, value in (fp or {}).items():
        if isinstance(value, dict):
            lines.append(f"{indent}{key}:")
            lines += [f"{indent}  {k}: {v}" for k, v in value.items()]
        else:
            lines.append(f"{indent}{key}: {value}")
    return lines or [f"{indent}(none recorded)"]


def _result_lines(r):
    lines = [f"{r.name}: {_figure(r)}", str(r), f"parameters: {_params(r.params)}"]
    if r.stopped_by:
        lines.append(f"precision run: {len(r.runs())} runs, stopped by {r.stopped_by}")
    lines.append(_where(r.metadata))
    return lines


def _set_lines(rs):
    meta = rs.metadata
    what = ("a report" if "report" in meta else
            f"{meta['repeat']} repeated runs" if "repeat" in meta else
            f"a sweep over {', '.join(rs.axes)}" if rs.axes else "a result set")
    lines = [f"{what}: {len(rs)} runs of {', '.join(rs.names) or 'no benchmark'}"
             + (" (INCOMPLETE: interrupted)" if meta.get("incomplete") else "")]
    for label, r in rs.items():
        varied = {k: r.params.get(k) for k in rs.axes}
        lines.append(f"  {label}: {_figure(r)}"
                     + (f" [{_params(varied)}]" if varied and len(rs.names) > 1 else ""))
    same = {(r.name, json.dumps(r.params, sort_keys=True, default=str)) for r in rs}
    if len(rs) > 1 and len(same) == 1:
        means = [r.mean for r in rs]
        low, high = median_ci(means)
        # Below 6 runs no pair of them holds the median with 95 %: median_ci
        # gives their range, said as such.
        enough = 2 * 0.5 ** len(means) <= 0.05
        lines.append(f"across the {len(rs)} runs: hits {statistics.median(means):.3f} M/s, "
                     "the median of their means, "
                     + (f"95 % interval {low:.3f}..{high:.3f} M/s" if enough else
                        f"range {low:.3f}..{high:.3f} M/s (too few runs for a 95 % "
                        "interval of the median: 6)"))
    for u in rs.unsupported:
        lines.append(f"  {u.name}: could not run here ({u.reason})")
    if len(rs):
        first = rs[0]
        common = {k: v for k, v in first.params.items()
                  if k not in rs.axes and all(r.params.get(k) == v for r in rs)}
        lines.append(f"parameters of every run: {_params(common)}")
        lines.append(_where(first.metadata))
    return lines


def _ab_lines(c):
    meta = c.metadata
    settings = dict(mode=c.mode, rule=c.rule, threshold=c.threshold, precision=c.precision,
                    alpha=c.alpha, budget=c.budget_s, warmup=meta.get("warmup"),
                    duration=meta.get("duration"), interval=meta.get("interval"),
                    seed=c.seed)
    return [str(c), f"settings: {_params(settings)}", _where(meta)]


def _fingerprint_of(obj):
    if isinstance(obj, Baseline):
        return obj.first.metadata.get("fingerprint")
    if isinstance(obj, _resultset.ResultSet):
        return obj[0].metadata.get("fingerprint") if len(obj) else None
    return obj.metadata.get("fingerprint")


def text(obj, metadata=False):
    """What `benchbpf show` prints of obj (a Result, ResultSet, ABResult or Baseline,
    as load() returns them); metadata=True adds the machine's fingerprint
    it was measured with."""
    if isinstance(obj, _ab.ABResult):
        lines = _ab_lines(obj)
    elif isinstance(obj, Baseline):
        lines = _baseline_lines(obj)
    elif isinstance(obj, _resultset.ResultSet):
        lines = _set_lines(obj)
    elif isinstance(obj, _result.Result):
        lines = _result_lines(obj)
    else:
        raise TypeError(f"text(): a Result, ResultSet, ABResult or Baseline, not {type(obj).__name__}")
    if metadata:
        lines += ["fingerprint:", *_fingerprint(_fingerprint_of(obj))]
    return "\n".join(lines)


def _parser():
    ap = argparse.ArgumentParser(
        prog="benchbpf show",
        description="Summarise a JSON file benchbpf saved: a run (benchbpf NAME --json), a "
                    "result set (--repeat N, report --json, a sweep) or an A/B comparison "
                    "(ab --json) or a pytest gate baseline: each figure with its 95 % interval, the parameters, and "
                    "when and where it was measured.",
        epilog="exit status: 0 shown, 2 a file that cannot be read or is not one of "
               "those (of another format version too), named with what was expected")
    ap.add_argument("files", metavar="FILE", nargs="+", help="the JSON file(s) to show")
    ap.add_argument("--metadata", action="store_true",
                    help="also print the machine's fingerprint the figures were measured "
                         "with (kernel, JIT, CPU frequency, mitigations...)")
    return ap


def main(argv):
    """`benchbpf show FILE... [--metadata]`, argv its words after `show`:
    returns the exit status (0 shown, 2 a file refused, named with what was
    expected)."""
    args = _parser().parse_args(argv)
    loaded = []
    for path in args.files:      # every file checked before anything is printed
        try:
            loaded.append(load(path))
        except (OSError, ValueError) as e:
            why = f"{path}: {e.strerror}" if isinstance(e, OSError) else str(e)
            print(f"benchbpf show: error: {why}", file=sys.stderr)
            return 2
    for i, obj in enumerate(loaded):
        if len(loaded) > 1:
            print(("\n" if i else "") + f"== {args.files[i]}")
        print(text(obj, metadata=args.metadata))
    return 0
