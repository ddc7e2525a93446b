"""Sweeps: runs of one benchmark over a grid of parameter values.

Between the runner and the families: a sweep is runs of runs, and a
family's study may run sweeps (local_storage, ringbuf), so this sits below
them and above _runner and _progress.  benchbpf.sweep and benchbpf.Sweep
(also benchbpf.analysis.sweep / .Sweep) are these."""
import itertools
import math
import statistics
from dataclasses import dataclass

from . import _progress, _runner
from ..results._plot import _axes, legend_outside, log_scale_fits, mark_min_max
from ..results.resultset import ResultSet, format_table, format_table_html, table_rows, warnings_of
from ..results.stats import median_ci

__all__ = ["Sweep", "sweep"]


@dataclass(frozen=True, repr=False)
class Sweep:
    """Results of one benchmark over the values of one parameter.

    As a ResultSet, it iterates over its Results and prints a table of Rows;
    items() gives (value, Result) pairs and sw[value] the Result of one value."""
    name: str
    param: str
    values: tuple
    results: tuple

    def __iter__(self):
        return iter(self.results)

    def items(self):
        """(value, Result) pairs, in run order."""
        return list(zip(self.values, self.results))

    def __len__(self):
        return len(self.values)

    def __getitem__(self, value):
        for v, r in self.items():
            if v == value:
                return r
        raise KeyError(value)

    def table(self, counter="hits"):
        """A Row per value (label: the value) of the `counter`'s median, mean
        and stdev, M/s, drops, M/s, latency, ns, and the control and adjusted
        latencies, ns, where runs have a control."""
        return table_rows(self.items(), counter)

    def __str__(self):
        return format_table(f"{self.name} over {self.param}", self.param, self.table(),
                            warned=warnings_of(self.items()))

    def __repr__(self):
        return f"<Sweep of {len(self)} results: {self.name}, axes=[{self.param!r}]>"

    def _repr_html_(self):
        return format_table_html(f"{self.name} over {self.param}", self.param, self.table(),
                                 warned=warnings_of(self.items()))

    def plot(self, ax=None, counter="hits", confidence=0.95):
        """Median per swept value with its confidence interval (needs matplotlib).

        Error bars are the distribution-free `confidence` interval of each
        run's median (median_ci); a run with too few samples for it shows
        its min..max and the legend says so.  Numeric values spanning two
        decades or more get a logarithmic x axis.  The y axis starts at 0."""
        ax = _axes(ax)
        xs, meds, lo, hi, wide = [], [], [], [], []
        for v, r in self.items():
            rates = r.rates_mps(counter)
            med = statistics.median(rates) if rates else math.nan
            low, high = median_ci(rates, confidence)
            wide.append(bool(rates) and (low, high) == (min(rates), max(rates)))
            xs.append(v)
            meds.append(med)
            lo.append(med - low)
            hi.append(high - med)
        ax.errorbar(xs, meds, yerr=[lo, hi], marker="o", capsize=3,
                    label=f"{self.name}: median, {confidence:.0%} CI")
        mark_min_max(ax, [(x, m) for x, m, w in zip(xs, meds, wide) if w])
        if log_scale_fits(xs):
            ax.set_xscale("log")
        ax.set_ylim(bottom=0)
        ax.set_xlabel(self.param)
        ax.set_ylabel(f"{counter}, M/s")
        ax.set_title(f"{self.name}: {counter} vs {self.param}")
        legend_outside(ax)
        return ax

    def to_resultset(self):
        """The Results as a ResultSet with this sweep's parameter as its one axis."""
        grid = {self.param: list(self.values)}
        return ResultSet(self.results, axes=(self.param,),
                         metadata={"benchmark": self.name, "grid": grid})

    def to_dataframe(self):
        """One row per run (needs pandas): see ResultSet.to_dataframe."""
        return self.to_resultset().to_dataframe()


#: Options that take a sequence (a CPU set) as one value: a list or tuple of
#: them is an axis only when its items are themselves CPU sets or None.
_SEQUENCE_OPTIONS = ("prod_affinity", "cons_affinity")


def _is_axis(key, value):
    if not isinstance(value, (list, tuple, range)):
        return False
    if key in _SEQUENCE_OPTIONS:
        return all(v is None or isinstance(v, (list, tuple, range, str)) for v in value)
    return True


def _label(combo):
    return ", ".join(f"{k}={v!r}" for k, v in combo.items())


def sweep(name, *args, progress=None, budget=None, **axes_and_options):
    """Run benchmark `name` over a grid of parameter values.

    ``sweep("rb-libbpf", producers=[1, 2, 4], rb_sampled=[False, True],
    duration=3)`` runs all 6 combinations: every list or tuple is an axis,
    every other value a fixed option.  Combinations run in
    itertools.product order over the axes in keyword order (the last axis
    changes fastest).  prod_affinity and cons_affinity take a CPU set as one
    value, so a list of ints there is that set; they are an axis only when
    given as a list of CPU sets or None: ``prod_affinity=[[0], [1], None]``.
    Returns a ResultSet whose `axes` are the axis names, in keyword order.

    The one-parameter form ``sweep(name, param, values, **options)`` returns
    a Sweep, as before.

    Every combination is checked (benchbpf.check: name, type and range of
    each option, and the benchmark's own checks of combinations) before the
    first run starts, so a bad value in the last one wastes no runs.

    With precision= every combination is a precision run (see run()), and
    their short runs are interleaved: one of each in turn, then more for
    those not yet within the precision, widest interval first, so that the
    time goes where the figure is uncertain and the runs of each spread
    over the whole sweep.  budget: the wall time, s, after which no run
    starts (each combination has at least one); the unfinished stop "by
    budget" (Result.stopped_by).

    progress: True shows a progress bar on stderr (tqdm.auto, also in
    Jupyter; without tqdm one line per run), False none; None (default) shows
    it when stderr is a terminal or in a Jupyter kernel."""
    if args or "param" in axes_and_options or "values" in axes_and_options:
        given = dict(zip(("param", "values"), args))
        for key in ("param", "values"):
            if key in axes_and_options:
                if key in given:
                    raise TypeError(f"sweep() got {key} both by position and by keyword")
                given[key] = axes_and_options.pop(key)
        if len(args) > 2:
            raise TypeError(f"sweep(name, param, values, **options) takes at most two "
                            f"arguments after the name, got {len(args)}: {args!r}")
        missing = [k for k in ("param", "values") if k not in given]
        if missing:
            what = repr(given["param"]) if "param" in given else "the parameter"
            raise TypeError(
                f"sweep({name!r}, {', '.join(repr(a) for a in args)}): missing "
                f"{' and '.join(missing)}: give the values to take for {what}, as "
                f"sweep({name!r}, 'producers', [1, 2, 4]) or sweep({name!r}, "
                "producers=[1, 2, 4])")
        return _sweep_one(name, given["param"], given["values"], progress=progress,
                          budget=budget, **axes_and_options)
    axes = {k: tuple(v) for k, v in axes_and_options.items() if _is_axis(k, v)}
    fixed = {k: v for k, v in axes_and_options.items() if k not in axes}
    for k, values in axes.items():
        if not values:
            raise ValueError(f"axis {k!r} is empty: give at least one value")
    combos = [dict(zip(axes, values)) for values in itertools.product(*axes.values())]
    for combo in combos:
        _runner.check(name, **fixed, **combo)
    results = run_calls(name, [(_label(combo), name, {**fixed, **combo}) for combo in combos],
                        progress, budget)
    grid = {k: list(v) for k, v in axes.items()}
    return ResultSet(results, axes=tuple(axes), metadata={"benchmark": name, "grid": grid})


def run_calls(name, calls, progress, budget):
    """[Result] of calls (label, benchmark, options) in order, one progress
    bar; interleaved precision runs when they ask for precision."""
    precise = any(kw.get("precision") is not None for _, _, kw in calls)
    if budget is not None and not precise:
        raise ValueError(f"budget={budget!r}: a time budget applies to precision runs; "
                         "give precision= too, or leave budget out")
    with _progress.session(name, 0 if precise else len(calls), progress):
        if precise:
            return _runner.run_interleaved(calls, budget_s=budget)
        return [_progress.run(_runner.run, bench, label=label, **kw)
                for label, bench, kw in calls]


def _sweep_one(name, param, values, progress=None, budget=None, **options):
    if not isinstance(param, str):
        raise TypeError(f"param={param!r}: the name of the parameter to sweep, a str")
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"values={values!r}: a list of values for {param!r}")
    values = tuple(values)
    if not values:
        raise ValueError(f"values for {param!r} is empty: give at least one value")
    for v in values:
        _runner.check(name, **{**options, param: v})
    results = tuple(run_calls(name, [(f"{param}={v!r}", name, {**options, param: v})
                                      for v in values], progress, budget))
    return Sweep(name, param, values, results)
