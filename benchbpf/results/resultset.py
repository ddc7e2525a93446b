"""Many Results together: a sweep over a parameter grid, or a suite report."""
import html
import math
import statistics
from collections import namedtuple
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from ._plot import _axes, _figure, _is_number, legend_outside, log_scale_fits, mark_min_max
from .result import JsonFile, Result, _frozen, _thawed
from .stats import mean_ci, median_ci

__all__ = ["ResultSet", "Unsupported", "Row"]

FORMAT = "benchbpf-resultset"
FORMAT_VERSION = 1

#: Statistics columns of to_dataframe(), after the parameters.
STAT_COLUMNS = ("mean", "stdev", "median", "ci_low", "ci_high", "samples", "step_mps",
                "drops_mps", "latency_ns", "control_latency_ns", "adjusted_latency_ns")
#: Metadata columns of to_dataframe(), last.
METADATA_COLUMNS = ("trigger", "kernel", "started", "cpu_model", "nr_cpus",
                    "concurrent_runs", "stopped_by")
_CONFIDENCE = 0.95


#: One row of every table of runs (Sweep, ring buffer Study, ResultSet, and so
#: local_storage.cliff and hashmap sweeps): what the run is (`label`: the swept
#: value, the study's label or the axes' values), then the counter's median, mean
#: and stdev, M/s, drops (M/s, NaN where the benchmark reports none), time per hit
#: per producer (ns), and for runs with an overhead control (adjust_overhead=True)
#: the control's time per hit and the adjusted one (ns; None without a control).
Row = namedtuple("Row", ("label", "median", "mean", "stdev", "drops_mps", "latency_ns",
                         "control_latency_ns", "adjusted_latency_ns"))


def table_rows(labelled, counter="hits"):
    """Row per (label, Result) pair, in order."""
    rows = []
    for label, r in labelled:
        mean, sd = r.stat(counter)
        xs = r.rates_mps(counter)
        rows.append(Row(label, statistics.median(xs) if xs else math.nan, mean, sd,
                        r.drops_mps if r.report == "hits_drops" else math.nan,
                        r.latency_ns, r.control_latency_ns, r.adjusted_latency_ns))
    return rows


def _table_columns(rows, counter):
    cols = [(f"median {counter} M/s", "median", "{:.3f}"), ("mean", "mean", "{:.3f}"),
            ("stdev", "stdev", "{:.3f}"), ("drops M/s", "drops_mps", "{:.3f}"),
            ("ns/op", "latency_ns", "{:.2f}")]
    if any(r.control_latency_ns is not None for r in rows):
        cols += [("control ns/op", "control_latency_ns", "{:.2f}"),
                 ("adjusted ns/op", "adjusted_latency_ns", "{:.2f}")]
    return cols


def _cell(fmt, value):
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else fmt.format(value)


def warnings_of(items):
    """"label: warning" for each instability warning of each (label, Result)
    (Result.warnings): a bistable ring's states, a high spread, a drift."""
    return tuple(f"{label}: {w}" for label, r in items for w in getattr(r, "warnings", ()))


def format_table(title, label_header, rows, counter="hits", warned=()):
    """The text every table of runs prints: a title line, then a row per run,
    then a "WARNING: label: ..." line per warning (warnings_of)."""
    cols = _table_columns(rows, counter)
    width = max([len(label_header)] + [len(str(r.label)) for r in rows])
    lines = [title, f"{label_header:>{width}} " +
             " ".join(f"{h:>{max(len(h), 10)}}" for h, _, _ in cols)]
    for r in rows:
        lines.append(f"{str(r.label):>{width}} " + " ".join(
            f"{_cell(fmt, getattr(r, key)):>{max(len(h), 10)}}" for h, key, fmt in cols))
    lines += [f"WARNING: {w}" for w in warned]
    return "\n".join(lines)


def format_table_html(title, label_header, rows, counter="hits", warned=()):
    """format_table() as an HTML table (Jupyter's view)."""
    cols = _table_columns(rows, counter)
    head = "".join(f"<th>{html.escape(h)}</th>" for h, _, _ in cols)
    body = "".join(
        f"<tr><td>{html.escape(str(r.label))}</td>" +
        "".join(f"<td>{_cell(fmt, getattr(r, key))}</td>" for _, key, fmt in cols) + "</tr>"
        for r in rows)
    notes = "".join(f"<br>WARNING: {html.escape(w)}" for w in warned)
    return (f"<b>{html.escape(title)}</b><table><tr><th>{html.escape(label_header)}</th>"
            f"{head}</tr>{body}</table>" + (f"<small>{notes[4:]}</small>" if notes else ""))


@dataclass(frozen=True)
class Unsupported:
    """A benchmark that could not run here, and the reason the kernel gave."""
    name: str
    reason: str
    params: "MappingProxyType" = field(default_factory=lambda: _frozen({}))

    def __post_init__(self):
        object.__setattr__(self, "params", _frozen(self.params))

    def as_dict(self):
        """The fields as a plain dict (for JSON)."""
        return {"name": self.name, "reason": self.reason, "params": _thawed(self.params)}


class ResultSet(JsonFile, Sequence):
    """An immutable sequence of Results, in run order.

    `axes` names the parameters that vary across the set (a grid sweep's
    axes); `unsupported` lists what could not run, with the reason;
    `metadata` holds what the whole set shares (e.g. the fingerprint)."""
    __slots__ = ("_results", "_axes", "_unsupported", "_metadata")

    def __init__(self, results=(), *, axes=(), unsupported=(), metadata=None):
        results = tuple(results)
        for r in results:
            if not isinstance(r, Result):
                raise TypeError(f"ResultSet holds Results, got {type(r).__name__}")
        unsupported = tuple(u if isinstance(u, Unsupported) else Unsupported(**u)
                            for u in unsupported)
        object.__setattr__(self, "_results", results)
        object.__setattr__(self, "_axes", tuple(axes))
        object.__setattr__(self, "_unsupported", unsupported)
        object.__setattr__(self, "_metadata", _frozen(metadata or {}))

    def __setattr__(self, name, value):
        raise AttributeError("a ResultSet is immutable")

    @property
    def results(self):
        """The Results, a tuple in run order."""
        return self._results

    @property
    def axes(self):
        """The names of the parameters that vary across the set, a tuple."""
        return self._axes

    @property
    def unsupported(self):
        """An Unsupported per benchmark that could not run here, a tuple."""
        return self._unsupported

    @property
    def metadata(self):
        """What the whole set shares, a read-only mapping (e.g. the
        fingerprint; "incomplete" when interrupted)."""
        return self._metadata

    def __len__(self):
        return len(self._results)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ResultSet(self._results[index], axes=self._axes,
                             metadata=self._metadata)
        return self._results[index]

    def __eq__(self, other):
        if not isinstance(other, ResultSet):
            return NotImplemented
        return (self._results, self._axes, self._unsupported, dict(self._metadata)) == \
            (other._results, other._axes, other._unsupported, dict(other._metadata))

    __hash__ = None

    def __repr__(self):
        names = sorted({r.name for r in self._results})
        axes = f", axes={list(self._axes)}" if self._axes else ""
        miss = f", {len(self._unsupported)} unsupported" if self._unsupported else ""
        return f"<ResultSet of {len(self)} results: {', '.join(names) or '-'}{axes}{miss}>"

    def _labels(self):
        """Each run's label in tables: its values of the axes (else its name)."""
        if not self._axes:
            return [r.name for r in self._results]
        many = len(self.names) > 1
        if len(self._axes) == 1 and not many:      # as a Sweep's: the value
            return [r.params.get(self._axes[0]) for r in self._results]
        return [(f"{r.name}: " if many else "") +
                ", ".join(f"{a}={r.params.get(a)!r}" for a in self._axes)
                for r in self._results]

    def table(self, counter="hits"):
        """A Row per run of the `counter`'s statistics, M/s (label: the run's
        values of the axes, else its name), as Sweep.table()."""
        return table_rows(zip(self._labels(), self._results), counter)

    def items(self):
        """(label, Result) pairs, the labels of table()."""
        return list(zip(self._labels(), self._results))

    def __str__(self):
        title = f"{', '.join(self.names) or 'no results'}" + \
            (f" over {', '.join(self._axes)}" if self._axes else "")
        if self._metadata.get("incomplete"):
            title += " (INCOMPLETE: interrupted)"
        return format_table(title, ", ".join(self._axes) or "benchmark", self.table(),
                            warned=warnings_of(self.items()))

    def _repr_html_(self):
        title = f"{', '.join(self.names)}" + \
            (f" over {', '.join(self._axes)}" if self._axes else "")
        return format_table_html(title, ", ".join(self._axes) or "benchmark", self.table(),
                                 warned=warnings_of(self.items()))

    @property
    def names(self):
        """Benchmark names, each once, in run order."""
        return tuple(dict.fromkeys(r.name for r in self._results))

    def where(self, name=None, **params):
        """The Results of benchmark `name` (if given) whose params equal `params`.
        A parameter no Result has is a mistake (a typo), not an empty answer:
        ValueError naming it and the parameters there are."""
        known = self._param_names()
        unknown = [k for k in params if k not in known]
        if unknown and self._results:
            raise ValueError(f"where({', '.join(f'{k}=' for k in unknown)}...): "
                             f"{', '.join(map(repr, unknown))} is not a parameter of these "
                             f"results; parameters: {', '.join(known)}")

        def keep(r):
            if name is not None and r.name != name:
                return False
            return all(k in r.params and r.params[k] == v for k, v in params.items())
        return ResultSet((r for r in self._results if keep(r)), axes=self._axes,
                         metadata=self._metadata)

    # ---- tables and plots ----
    def _param_names(self):
        return tuple(dict.fromkeys(k for r in self._results for k in r.params))

    def _rows(self):
        """(column names, one dict per run) of to_dataframe(), without pandas."""
        params = self._param_names()
        meta = {k: f"{k}_used" if k in params else k for k in METADATA_COLUMNS}
        rows = []
        for r in self._results:
            rates = r.rates_mps()
            low, high = median_ci(rates, _CONFIDENCE)
            row = {"name": r.name, **{k: r.params.get(k) for k in params}}
            row.update(mean=r.mean, stdev=r.stdev, median=r.median, ci_low=low, ci_high=high,
                       samples=len(rates), step_mps=r.step_mps(),
                       drops_mps=r.drops_mps if r.report == "hits_drops" else math.nan,
                       latency_ns=r.latency_ns, control_latency_ns=r.control_latency_ns,
                       adjusted_latency_ns=r.adjusted_latency_ns)
            row.update({meta[k]: r.metadata.get(k) for k in METADATA_COLUMNS})
            # benchbpf.vm guests: "kvm" or "tcg" (emulated: not performance figures)
            row["accel"] = (r.metadata.get("vm") or {}).get("accel")
            row["warnings"] = r.warnings
            mean_ci = r.mean_ci_mps
            row["mean_ci_low"], row["mean_ci_high"] = (mean_ci.low, mean_ci.high) \
                if mean_ci is not None else (math.nan, math.nan)
            rows.append(row)
        return ("name",) + params + STAT_COLUMNS + tuple(meta.values()) + \
            ("accel", "warnings", "mean_ci_low", "mean_ci_high"), rows

    def to_dataframe(self):
        """A pandas DataFrame, one row per run in run order (needs pandas:
        ``pip install benchbpf[analysis]``).  Columns:

        - ``name``: the benchmark;
        - every parameter of Result.params (common options and the
          benchmark's own), one column each; None where a run lacks it;
        - ``mean``, ``stdev``, ``median``: of the per-sample hit rates, M/s;
        - ``ci_low``, ``ci_high``: the distribution-free 95 % confidence
          interval of the median (stats.median_ci; min..max with fewer
          than 6 samples), M/s;
        - ``samples``: how many samples the statistics are over;
        - ``step_mps``: the resolution of the per-sample rates (Result.step_mps:
          benchmarks counting a batch per event move in steps), M/s;
        - ``drops_mps``: mean drops, M/s, for benchmarks that report drops
          (report "hits_drops"), else NaN;
        - ``latency_ns``: time per hit per producer, ns (Result.latency_ns);
        - ``control_latency_ns``, ``adjusted_latency_ns``: for runs with an
          overhead control (local_storage adjust_overhead=True), the control's
          time per hit and this run's less it, ns; None otherwise;
        - metadata: ``trigger`` (the program that fired the producers, None
          when none did), ``kernel``, ``started`` (UTC, ISO 8601),
          ``cpu_model``, ``nr_cpus``, ``concurrent_runs``, ``stopped_by``
          (a precision run's "precision" or "duration", else None).  A metadata
          column named like a parameter gets ``_used`` appended: the
          ``trigger`` option ("auto") and ``trigger_used``, what ran;
        - ``accel``: for runs in a benchbpf.vm guest, "kvm" or "tcg" (an
          emulated guest: its rates are not performance figures), else None;
        - ``warnings``: the run's instability warnings (Result.warnings), a
          tuple of strings, empty when none (``df[df.warnings.str.len() > 0]``
          keeps the runs that warn);
        - ``mean_ci_low``, ``mean_ci_high``: the 95 % interval of the mean
          (Result.mean_ci_mps: over a precision run's runs, else over the
          run's autocorrelated samples), M/s; NaN under 4 samples."""
        try:
            import pandas
        except ImportError:
            raise ImportError("ResultSet.to_dataframe() needs pandas: "
                              "pip install benchbpf[analysis]") from None
        columns, rows = self._rows()
        return pandas.DataFrame(rows, columns=list(columns))

    def plot(self, x=None, y="median", hue=None, ax=None):
        """y against parameter x, one line per value of hue (needs matplotlib).

        x: a parameter (default: the first axis).  y: a numeric column of
        to_dataframe(): "median" has the 95 % confidence interval of the
        median as error bars, "mean" Student's t 95 % interval of the mean,
        other columns none; the legend says which, and rings the points whose
        bars are min..max (too few samples for an interval).  A list of
        columns, e.g. ``y=["median", "drops_mps"]``, draws one panel each side
        by side (a new figure; returns the list of axes).  hue: a parameter or
        a list of them; None: the axes other than x (and the benchmark name
        when the set holds several), so each line is one combination.
        Numeric x spanning two decades or more gets a log axis; y starts at 0.
        The legend stands right of the axes."""
        if isinstance(y, (list, tuple)):
            if ax is not None:
                raise ValueError("y=[...] draws one panel per column in a new figure: "
                                 "leave ax=None")
            if not y:
                raise ValueError("y=[]: name at least one column")
            fig = _figure(figsize=(6.4 * len(y), 4.8))
            axes = fig.subplots(1, len(y), squeeze=False)[0]
            return [self.plot(x=x, y=col, hue=hue, ax=a) for col, a in zip(y, axes)]
        rows = self._rows()[1]
        params = self._param_names()
        if x is None:
            if not self._axes:
                raise ValueError("x=None: this ResultSet has no axes; name the parameter "
                                 f"to plot against, one of: {', '.join(params)}")
            x = self._axes[0]
        if x not in params:
            raise ValueError(f"x={x!r}: not a parameter of these results; "
                             f"parameters: {', '.join(params)}")
        if y not in STAT_COLUMNS:
            raise ValueError(f"y={y!r}: must be one of {', '.join(STAT_COLUMNS)}")
        if hue is None:
            hue = [a for a in self._axes if a != x]
            if len(self.names) > 1:
                hue.insert(0, "name")
        elif isinstance(hue, str):
            hue = [hue]
        for h in hue:
            if h not in params and h != "name":
                raise ValueError(f"hue={h!r}: not a parameter of these results; "
                                 f"parameters: {', '.join(params)}")
        lines = {}
        for r, row in zip(self._results, rows):
            lines.setdefault(tuple(row[h] for h in hue), []).append((r, row))
        xs_all = [row[x] for row in rows]
        numeric = all(_is_number(v) for v in xs_all)
        what = {"median": ": median, 95% CI", "mean": ": mean, 95% CI (t)"}.get(y, "")
        ax = _axes(ax)
        for key, members in lines.items():
            xs = [row[x] if numeric else str(row[x]) for _, row in members]
            ys = [row[y] for _, row in members]
            if y == "median":
                bounds = [(row["ci_low"], row["ci_high"]) for _, row in members]
            elif y == "mean":
                bounds = [mean_ci(r.rates_mps(), _CONFIDENCE) for r, _ in members]
            else:
                bounds = None
            name = ", ".join(f"{h}={v!r}" for h, v in zip(hue, key)) or \
                ", ".join(self.names)
            yerr = None if bounds is None else \
                [[v - lo for v, (lo, _) in zip(ys, bounds)],
                 [hi - v for v, (_, hi) in zip(ys, bounds)]]
            ax.errorbar(xs, ys, yerr=yerr, marker="o", capsize=3, label=name + what)
            if y == "median":
                mark_min_max(ax, [(xv, yv) for xv, yv, (r, row) in zip(xs, ys, members)
                                  if _spans_all(r, (row["ci_low"], row["ci_high"]))])
        if numeric and log_scale_fits(xs_all):
            ax.set_xscale("log")
        elif numeric and all(isinstance(v, int) for v in xs_all):
            from matplotlib.ticker import MaxNLocator
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(bottom=0)
        ax.set_xlabel(x)
        ax.set_ylabel(_axis_label(y))
        ax.set_title(f"{', '.join(self.names)}: {y} vs {x}")
        legend_outside(ax)
        return ax

    # ---- serialisation ----
    def as_dict(self):
        """The set as plain dicts and lists, the layout to_json() writes
        ("format": "benchbpf-resultset")."""
        return {"format": FORMAT, "version": FORMAT_VERSION, "axes": list(self._axes),
                "metadata": _thawed(self._metadata),
                "results": [r.as_dict() for r in self._results],
                "unsupported": [u.as_dict() for u in self._unsupported]}

    @classmethod
    def from_dict(cls, d):
        """The ResultSet that as_dict() gave `d`.  ValueError when d is not
        a benchbpf result set or of another format version."""
        if d.get("format") != FORMAT:
            raise ValueError(f"not a benchbpf result set (format {d.get('format')!r})")
        if d.get("version") != FORMAT_VERSION:
            raise ValueError(f"result set format version {d.get('version')!r} not supported "
                             f"(this benchbpf reads version {FORMAT_VERSION})")
        return cls((Result.from_dict(r) for r in d["results"]), axes=d.get("axes", ()),
                   unsupported=d.get("unsupported", ()), metadata=d.get("metadata") or {})

    def save(self, path):
        """Write the set as JSON to `path`; ResultSet.load(path) reads it back."""
        self.to_json(path)

    @classmethod
    def load(cls, path):
        """The ResultSet save() wrote to `path` (as from_json: ValueError
        naming the file when it is not one)."""
        return cls.from_json(path)


def _axis_label(column):
    """A column's name with its unit."""
    if column in ("mean", "stdev", "median", "ci_low", "ci_high"):
        return f"hits {column}, M/s"
    for suffix, unit in (("_mps", "M/s"), ("_ns", "ns")):
        if column.endswith(suffix):
            return f"{column[:-len(suffix)]}, {unit}"
    return column


def _spans_all(result, bounds):
    rates = result.rates_mps()
    return bool(rates) and tuple(bounds) == (min(rates), max(rates))
