"""The static dashboard: an index of series, most recent change first, and
one page per series with its runs, their intervals and the change points,
drawn as inline SVG.  No server, nothing fetched: the pages open from disk."""
import html
import json
import os

#: The plot's size and margins, px.
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 900, 360, 70, 20, 20, 50

_STYLE = """body{font-family:sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}
td.n{text-align:right}.emulated{color:#a40}svg{background:#fff;border:1px solid #ccc}
.point{fill:#1f5fa8}.ci{stroke:#1f5fa8;stroke-width:1}.change{stroke:#c00;stroke-width:2;
stroke-dasharray:6 4}.axis{stroke:#444}.label{font-size:11px;fill:#444}"""
# Counts what the browser laid out, so a test in a real browser reads it back.
_COUNT = """<script>
document.body.dataset.points = document.querySelectorAll("svg .point").length;
document.body.dataset.changes = document.querySelectorAll("svg .change").length;
</script>"""


def _page(title, body):
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
            f"<body>{body}{_COUNT}</body></html>\n")


def _describe(run):
    params = json.dumps(run["params"], sort_keys=True)
    mark = f" [{run['emulated']}-emulated: not a performance figure]" if run["emulated"] else ""
    return f"{run['benchmark']} {params} on {run['machine_label']}{mark}"


def _svg(runs, changes):
    values = [v for col in ("median_mps", "ci_low_mps", "ci_high_mps")
              for v in runs[col] if v is not None and v == v]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.05 or 1.0
    lo, hi = lo - pad, hi + pad
    n = len(runs)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i):
        return LEFT + (plot_w * (i + 0.5) / n if n else 0)

    def y(v):
        return TOP + plot_h * (hi - v) / (hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'role="img" aria-label="median hits per run, M/s">',
           f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}"/>',
           f'<line class="axis" x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" '
           f'y2="{TOP + plot_h}"/>']
    for v in (lo + pad, (lo + hi) / 2, hi - pad):
        out.append(f'<text class="label" x="{LEFT - 6}" y="{y(v) + 4:.1f}" '
                   f'text-anchor="end">{v:.3g}</text>')
    out.append(f'<text class="label" x="{LEFT + plot_w / 2}" y="{HEIGHT - 10}" '
               f'text-anchor="middle">runs in the order they ran (M/s, 95 % CI of the mean)</text>')
    for i, (_, r) in enumerate(runs.iterrows()):
        if r["ci_low_mps"] is not None and r["ci_low_mps"] == r["ci_low_mps"]:
            out.append(f'<line class="ci" x1="{x(i):.1f}" x2="{x(i):.1f}" '
                       f'y1="{y(r["ci_low_mps"]):.1f}" y2="{y(r["ci_high_mps"]):.1f}"/>')
        if r["median_mps"] is None or r["median_mps"] != r["median_mps"]:
            continue
        tip = (f"{r['started']}: {r['median_mps']:.3f} M/s, kernel {r['kernel_release']}, "
               f"commit {r['benchbpf_commit']}")
        out.append(f'<circle class="point" cx="{x(i):.1f}" cy="{y(r["median_mps"]):.1f}" r="3">'
                   f'<title>{html.escape(tip)}</title></circle>')
    for _, c in changes.iterrows():
        cx = (x(c["index"] - 1) + x(c["index"])) / 2
        tip = f"change {c['change_pct']:+.1f} %, p = {c['pvalue']:.2g}"
        out.append(f'<line class="change" x1="{cx:.1f}" x2="{cx:.1f}" y1="{TOP}" '
                   f'y2="{TOP + plot_h}"><title>{html.escape(tip)}</title></line>')
    out.append("</svg>")
    return "".join(out)


def _change_rows(changes):
    rows = []
    for _, c in changes.iterrows():
        interval = (f"{(c['ratio_low'] - 1) * 100:+.1f} .. {(c['ratio_high'] - 1) * 100:+.1f} %"
                    if c["ratio_low"] is not None and c["ratio_low"] == c["ratio_low"] else "?")
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
            f"run {c['index'] + 1}", f"{c['started_before']} \u2192 {c['started_after']}",
            f"{c['mean_before']:.3f} \u2192 {c['mean_after']:.3f}", f"{c['change_pct']:+.1f} %",
            interval, f"{c['pvalue']:.2g}", f"{c['commit_before']} \u2192 {c['commit_after']}",
            f"{c['kernel_before']} \u2192 {c['kernel_after']}")) + "</tr>")
    head = ("<tr><th>at</th><th>ran</th><th>mean M/s</th><th>change</th><th>95 % CI</th>"
            "<th>p</th><th>commit</th><th>kernel</th></tr>")
    return f"<table>{head}{''.join(rows)}</table>" if rows else "<p>No change point.</p>"


def write(df, changes, out_dir, detector):
    """Write index.html and one page per series of `df` (history.series())
    with `changes` (history.series_changes() of it) into `out_dir`, noting
    `detector`; returns the paths written, the index first."""
    os.makedirs(out_dir, exist_ok=True)
    entries, paths = [], []
    for key, runs in df.groupby("series", sort=False):
        runs = runs.reset_index(drop=True)
        mine = changes[changes["series"] == key]
        first = runs.iloc[0]
        name = f"series-{key}.html"
        runs_rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
                i + 1, r["started"], f"{r['median_mps']:.3f}" if r["median_mps"] == r["median_mps"]
                and r["median_mps"] is not None else "-",
                f"{r['ci_low_mps']:.3f} .. {r['ci_high_mps']:.3f}"
                if r["ci_low_mps"] is not None and r["ci_low_mps"] == r["ci_low_mps"] else "-",
                r["kernel_release"], r["benchbpf_commit"])) + "</tr>"
            for i, (_, r) in enumerate(runs.iterrows()))
        body = (f'<p><a href="index.html">all series</a></p><h1>{html.escape(_describe(first))}</h1>'
                f"<p>{len(runs)} runs, {len(mine)} change points ({html.escape(detector)}); "
                f"machine {first['machine']}, series {key}.</p>"
                f"{_svg(runs, mine)}<h2>Change points</h2>{_change_rows(mine)}"
                "<h2>Runs</h2><table><tr><th>#</th><th>ran</th><th>median M/s</th>"
                f"<th>95 % CI of the mean</th><th>kernel</th><th>commit</th></tr>{runs_rows}</table>")
        path = os.path.join(out_dir, name)
        with open(path, "w") as f:
            f.write(_page(_describe(first), body))
        paths.append(path)
        last = mine["started_after"].max() if len(mine) else None
        entries.append((last or "", runs["started"].max() or "", name, first, len(runs), mine))
    # Most recent change first; series without one after, most recent run first.
    entries.sort(key=lambda e: (e[0] != "", e[0], e[1]), reverse=True)
    rows = "".join(
        f'<tr><td><a href="{name}">{html.escape(_describe(first))}</a></td>'
        f'<td class="n">{n}</td><td class="n">{len(mine)}</td><td>{html.escape(last or "-")}</td>'
        + (f"<td>{mine.iloc[-1]['change_pct']:+.1f} %</td>" if len(mine) else "<td>-</td>")
        + "</tr>" for last, _, name, first, n, mine in entries)
    index = os.path.join(out_dir, "index.html")
    with open(index, "w") as f:
        f.write(_page("benchbpf history", "<h1>benchbpf history</h1>"
                      f"<p>{len(entries)} series, most recent change first ({html.escape(detector)})."
                      "</p><table><tr><th>series</th><th>runs</th><th>changes</th>"
                      f"<th>last change after</th><th>size</th></tr>{rows}</table>"))
    return [index] + paths
