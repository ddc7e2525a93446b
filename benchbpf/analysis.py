"""Sweeps, comparisons and plots over Results."""
import math
import statistics
from dataclasses import dataclass

from ._runner import run
from .result import Result

__all__ = ["Sweep", "sweep", "Comparison", "compare", "plot"]


@dataclass(frozen=True)
class Sweep:
    """Results of one benchmark over the values of one parameter."""
    name: str
    param: str
    values: tuple
    results: tuple

    def __iter__(self):
        return iter(zip(self.values, self.results))

    def __len__(self):
        return len(self.values)

    def __getitem__(self, value):
        for v, r in self:
            if v == value:
                return r
        raise KeyError(value)

    def table(self, counter="hits"):
        """Rows of (value, mean, stdev, median) of a counter's rate, M/s."""
        rows = []
        for v, r in self:
            mean, sd = r.stat(counter)
            xs = r.rates_mps(counter)
            rows.append((v, mean, sd, statistics.median(xs) if xs else math.nan))
        return rows

    def __str__(self):
        head = f"{self.param:>16} {'mean M/s':>12} {'stdev':>10} {'median':>12}"
        lines = [f"{self.name} over {self.param}", head]
        lines += [f"{v!s:>16} {m:12.3f} {s:10.3f} {md:12.3f}" for v, m, s, md in self.table()]
        return "\n".join(lines)

    def _repr_html_(self):
        rows = "".join(f"<tr><td>{v}</td><td>{m:.3f}</td><td>{s:.3f}</td><td>{md:.3f}</td></tr>"
                       for v, m, s, md in self.table())
        return (f"<b>{self.name}</b> over <code>{self.param}</code><table><tr><th>"
                f"{self.param}</th><th>mean M/s</th><th>stdev</th><th>median</th></tr>"
                f"{rows}</table>")

    def plot(self, ax=None, counter="hits"):
        """Mean ± stdev against the swept value (needs matplotlib)."""
        ax = _axes(ax)
        rows = self.table(counter)
        ax.errorbar([r[0] for r in rows], [r[1] for r in rows],
                    yerr=[r[2] for r in rows], marker="o", capsize=3, label=self.name)
        ax.set_xlabel(self.param)
        ax.set_ylabel(f"{counter}, M/s")
        ax.set_title(f"{self.name}: {counter} vs {self.param}")
        return ax


def sweep(name, param, values, **options):
    """Run `name` once per value of `param` (a benchmark or common option)."""
    values = tuple(values)
    if not values:
        raise ValueError(f"values for {param!r} is empty: give at least one value")
    results = tuple(run(name, **{**options, param: v}) for v in values)
    return Sweep(name, param, values, results)


@dataclass(frozen=True)
class Comparison:
    """How `new` differs from `base` on one counter's per-sample rates."""
    base: Result
    new: Result
    counter: str = "hits"

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

    @property
    def significant(self):
        """True if the two runs' samples do not overlap at all.

        Deliberately conservative: these figures are noisy (up to 2x between
        runs on shared machines), so only a clean separation counts."""
        a, b = self.base.rates_mps(self.counter), self.new.rates_mps(self.counter)
        return bool(a and b) and (min(b) > max(a) or max(b) < min(a))

    def __str__(self):
        verdict = "significant" if self.significant else "within noise"
        return (f"{self.new.name} vs {self.base.name}: {self.counter} median "
                f"{self.new_median:.3f} vs {self.base_median:.3f} M/s "
                f"({self.change_pct:+.1f}%, {verdict})")


def compare(base, new, counter="hits"):
    """Compare two Results (e.g. before/after a kernel change)."""
    for label, r in (("base", base), ("new", new)):
        if not isinstance(r, Result):
            raise TypeError(f"{label} must be a benchbpf.Result, not {type(r).__name__}")
    base.rates_mps(counter)  # KeyError naming the counters if unknown
    return Comparison(base, new, counter)


def _axes(ax):
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'benchbpf[plot]'") from None
    return plt.figure().gca()


def plot(result, ax=None, counter="hits"):
    """Per-sample rate of one Result over time (needs matplotlib)."""
    ax = _axes(ax)
    t, xs = 0.0, []
    times = []
    for s in result.samples:
        t += s.interval_s
        times.append(t)
        xs.append(s.rate_mps(counter))
    ax.plot(times, xs, marker=".", label=result.name)
    ax.axhline(result.stat(counter)[0], linestyle="--", linewidth=0.8)
    ax.set_xlabel("time, s")
    ax.set_ylabel(f"{counter}, M/s")
    ax.set_title(result.name)
    return ax
