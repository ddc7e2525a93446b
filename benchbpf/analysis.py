"""Sweeps, comparisons and plots over Results.

The top of the package: what it re-exports lives below it (sweeps in
_sweep, statistics in stats, plots in _plot), so that families and Results
use those without importing this module."""
import html
import math
import statistics
import warnings
from dataclasses import dataclass

from ._plot import log_scale_fits, plot  # noqa: F401 (re-exported)
from ._sweep import Sweep, sweep
from .fingerprint import differences
from .result import Result, check_emulation
from .stats import mann_whitney_u, mean_ci, median_ci, samples_needed

__all__ = ["Sweep", "sweep", "Comparison", "compare", "plot", "mann_whitney_u",
           "median_ci", "mean_ci", "samples_needed", "BenchmarkMismatchWarning"]


class BenchmarkMismatchWarning(UserWarning):
    """Two Results of different benchmarks were compared."""


@dataclass(frozen=True)
class Comparison:
    """How `new` differs from `base` on one counter's per-sample rates.

    `p_value` is the two-sided Mann-Whitney U test over the per-interval
    rates; `significant` means p_value < alpha.  `fingerprint_differences`
    lists what differs between the machines (kernel, command line, CPU
    mitigations, JIT settings, versions...) when the runs were taken."""
    base: Result
    new: Result
    counter: str = "hits"
    alpha: float = 0.05

    @property
    def base_median(self):
        return statistics.median(self.base.rates_mps(self.counter))

    @property
    def new_median(self):
        return statistics.median(self.new.rates_mps(self.counter))

    @property
    def ratio(self):
        """new median / base median."""
        b = self.base_median
        return self.new_median / b if b else math.inf

    @property
    def change_pct(self):
        return (self.ratio - 1.0) * 100.0

    def p_value(self, alternative="two-sided"):
        """Mann-Whitney U p-value of new vs base per-sample rates.
        alternative "less": new is slower; "greater": faster."""
        return mann_whitney_u(self.new.rates_mps(self.counter),
                              self.base.rates_mps(self.counter), alternative)[1]

    @property
    def significant(self):
        """True if the two-sided Mann-Whitney U p-value is below alpha."""
        return self.p_value() < self.alpha

    @property
    def fingerprint_differences(self):
        """What differed between the two runs' machines, one line each."""
        return differences(self.base.metadata.get("fingerprint"),
                           self.new.metadata.get("fingerprint"))

    def _verdict(self):
        return "significant" if self.significant else "within noise"

    def __str__(self):
        names = f"{self.new.name} vs {self.base.name}"
        if self.new.metadata.get("family", self.new.name) != \
                self.base.metadata.get("family", self.base.name):
            names += " (DIFFERENT BENCHMARKS)"
        head = (f"{names}: {self.counter} median "
                f"{self.new_median:.3f} vs {self.base_median:.3f} M/s "
                f"({self.change_pct:+.1f}%, Mann-Whitney U p={self.p_value():.2g}, "
                f"{self._verdict()})")
        diffs = self.fingerprint_differences
        if diffs:
            head += "\nfingerprint differences:\n" + "\n".join("  " + d for d in diffs)
        return head

    def _repr_html_(self):
        def row(label, r):
            mean, sd = r.stat(self.counter)
            xs = r.rates_mps(self.counter)
            return (f"<tr><td>{label}</td><td>{html.escape(r.name)}</td>"
                    f"<td>{statistics.median(xs):.3f}</td><td>{mean:.3f}</td>"
                    f"<td>{sd:.3f}</td><td>{len(xs)}</td>"
                    f"<td>{html.escape(str(r.metadata.get('started', '?')))}</td></tr>")
        diffs = self.fingerprint_differences
        diff_html = ("<br><b>fingerprint differences</b><ul>"
                     + "".join(f"<li><code>{html.escape(d)}</code></li>" for d in diffs)
                     + "</ul>") if diffs else ""
        return (f"<div><b>{html.escape(self.counter)}</b>: "
                f"{self.change_pct:+.1f}% (ratio {self.ratio:.3f}), Mann-Whitney U "
                f"p={self.p_value():.2g}, <b>{self._verdict()}</b>"
                f"<table><tr><th></th><th>benchmark</th><th>median M/s</th>"
                f"<th>mean</th><th>stdev</th><th>samples</th><th>started</th></tr>"
                f"{row('base', self.base)}{row('new', self.new)}</table>{diff_html}</div>")


def compare(base, new, counter="hits", alpha=0.05, different_benchmarks=False,
            allow_emulated=False):
    """Compare two Results (e.g. before/after a kernel change).

    Two benchmarks of one family with the same report (rb-libbpf and
    pb-libbpf: records read per second) compare as they are.  Results of
    benchmarks that measure different things (count-global and rb-libbpf)
    are refused (ValueError) unless different_benchmarks=True, and then
    compared with a BenchmarkMismatchWarning."""
    for label, r in (("base", base), ("new", new)):
        if not isinstance(r, Result):
            raise TypeError(f"{label} must be a benchbpf.Result, not {type(r).__name__}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} out of range: 0 < alpha < 1")
    family = base.metadata.get("family")
    alike = base.name == new.name or (family is not None and family == new.metadata.get(
        "family") and base.report == new.report)
    if not alike:
        if not different_benchmarks:
            raise ValueError(f"base is {base.name} and new is {new.name}: these "
                             "benchmarks measure different things; pass "
                             "different_benchmarks=True to compare them anyway")
        warnings.warn(f"comparing different benchmarks: {new.name} vs {base.name}",
                      BenchmarkMismatchWarning, stacklevel=2)
    check_emulation(base, new, allow_emulated)
    base.rates_mps(counter)  # KeyError naming the counters if unknown
    return Comparison(base, new, counter, alpha)
