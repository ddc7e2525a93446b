"""Run by the detector's own interpreter (its venv holds apache-otava and
the numpy/scipy it pins), never imported by benchbpf: reads
{"series": [[figure, ...], ...], "max_pvalue": p, "window": w} as JSON on
stdin, writes one list of change points per series on stdout.

Each change point: the index of the first point after it, otava's t-test
p-value, and the two segments it separates (between the neighbouring
change points, as otava's merge step leaves them): their means, standard
deviations and sizes, with the 95 % interval of after/before (Welch's t
on the log ratio, delta method)."""
import json
import math
import sys


def _ratio_interval(m1, s1, n1, m2, s2, n2):
    from scipy.stats import t
    if m1 <= 0 or m2 <= 0 or n1 < 2 or n2 < 2:
        return None, None
    # Sample variances of the means, relative: otava's std is the population one.
    v1 = (s1 ** 2 * n1 / (n1 - 1)) / n1 / m1 ** 2
    v2 = (s2 ** 2 * n2 / (n2 - 1)) / n2 / m2 ** 2
    se = math.sqrt(v1 + v2)
    if se == 0:
        return m2 / m1, m2 / m1
    df = (v1 + v2) ** 2 / (v1 ** 2 / (n1 - 1) + v2 ** 2 / (n2 - 1)) if v1 + v2 else n1 + n2 - 2
    half = t.ppf(0.975, df) * se
    log_ratio = math.log(m2 / m1)
    return math.exp(log_ratio - half), math.exp(log_ratio + half)


def changes(series, max_pvalue, window):
    """The change points of one series (a list of figures)."""
    from otava.analysis import compute_change_points
    points, _ = compute_change_points(series, window_len=window, max_pvalue=max_pvalue)
    bounds = [0] + [int(p.index) for p in points] + [len(series)]
    out = []
    for i, p in enumerate(points):
        n1, n2 = bounds[i + 1] - bounds[i], bounds[i + 2] - bounds[i + 1]
        s = p.stats
        low, high = _ratio_interval(float(s.mean_1), float(s.std_1), n1,
                                    float(s.mean_2), float(s.std_2), n2)
        low, high = (None, None) if low is None else (float(low), float(high))
        out.append({"index": int(p.index), "pvalue": float(s.pvalue),
                    "mean_before": float(s.mean_1), "mean_after": float(s.mean_2),
                    "sd_before": float(s.std_1), "sd_after": float(s.std_2),
                    "n_before": n1, "n_after": n2, "ratio_low": low, "ratio_high": high})
    return out


def main():
    """stdin to stdout, as the module's docstring says."""
    from importlib.metadata import version
    request = json.load(sys.stdin)
    result = [changes([float(x) for x in s], request["max_pvalue"], request["window"])
              for s in request["series"]]
    json.dump({"detector": f"apache-otava {version('apache-otava')}",
               "changes": result}, sys.stdout)


if __name__ == "__main__":
    main()
