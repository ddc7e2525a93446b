"""Result's words: its summary line and notes, warning lines, repr and
HTML, apart from the data and statistics they are made of (results.result,
whose methods call these)."""
import html

from . import _lines


def emulation(r):
    """How r's timings were taken when not on real CPUs: "TCG" for a guest
    QEMU emulated (benchbpf.vm without KVM), else None.  Counts are real in
    such a guest; rates are an emulator's, not performance figures."""
    vm = r.metadata.get("vm") if r is not None else None
    if vm and vm.get("emulated"):
        return str(vm.get("accel", "tcg")).upper()
    return None


def emulation_note(r):
    """" [TCG-emulated guest, kernel R: not a performance figure]" or ""."""
    how = emulation(r)
    if how is None:
        return ""
    return (f" [{how}-emulated guest, kernel {r.metadata.get('kernel', '?')}: "
            "not a performance figure]")


def summary(r):
    """Result.summary: the kernel bench's summary line, then a precision
    run's interval and an emulated guest's note."""
    return _lines.summary_line(r) + precision_note(r) + emulation_note(r)


def text(r):
    """str(Result): the summary line, then a "WARNING: ..." line per warning."""
    return r.summary() + warning_lines(r)


def precision_note(r):
    """A precision run's interval, runs, span and what stopped it, for its
    summary line ("" for any other run)."""
    if r.params.get("precision") is None:
        return ""
    ci = r.mean_ci_mps
    interval = "95% CI unknown" if ci is None else (
        f"95% CI {ci.low:.3f}..{ci.high:.3f}M/s (\u00b1{ci.relative_half_width * 100:.2f}%)")
    return (f", {interval} over {len(r.runs())} runs in {r._span_s():.0f} s, "
            f"stopped by {r.stopped_by} after {r.duration_s:.1f} s measured "
            f"(warm-up {r.warmup_s:.1f} s)" + host_note(r))


def host_note(r):
    """The host drift the interval allows for ("; with this host's drift ..."), or ""."""
    host = r.host_ci_mps
    if host is None:
        return ""
    drift = r.host_drift
    earlier = "" if drift.history is None else \
        f" and {drift.history.runs} earlier runs"
    return (f"; with this host's drift over {drift.span_s / 60:.3g} min{earlier} "
            f"±{host.relative_half_width * 100:.2f}%")


def host_interval_warning(r):
    """What a precision run's stated interval cannot speak for, as a
    warning, or None: without a host drift calibration, the host's
    drift (the run's own interval held the long-run figure in 20-67 %
    of runs on the machines measured, results/precision-2cpu.md); with
    one, the hours its young history has not seen
    (HostDrift.young_history)."""
    if r.params.get("precision") is None:
        return None
    own, host, drift = r.mean_ci_mps, r.host_ci_mps, r.host_drift
    if drift is None:
        if own is None:
            return None
        return (f"the \u00b1{own.relative_half_width * 100:.2f}% interval describes this "
                f"run's own runs only: with no host drift calibration for this machine "
                f"and kernel (benchbpf host-drift), nothing allows for how far the host "
                f"moves the figure between runs")
    reason = drift.young_history() if host is not None else None
    if reason is None:
        return None
    return (f"host interval \u00b1{host.relative_half_width * 100:.2f}% rests on a young "
            f"history ({reason}): it holds for about that long, the machine's "
            f"slower or faster hours may lie outside it")


def warning_lines(r):
    """A "\nWARNING: ..." line per warning of r, to follow its text."""
    return "".join(f"\nWARNING: {w}" for w in r.warnings)


def html_table(r):
    """r as Jupyter shows it (Result._repr_html_): name, parameters, summary,
    warnings, program costs and the samples in a folded table."""
    rows = "".join(
        f"<tr><td>{i}{' (late)' if s.late else ''}</td><td>{s.interval_ns / 1e6:.1f}</td>"
        f"<td>{s.hits_mps:.3f}</td><td>{s.drops_mps:.3f}</td></tr>"
        for i, s in enumerate(r.samples))
    params = ", ".join(f"{k}={v!r}" for k, v in r.params.items())
    progs = "".join(
        f"<tr><td>{html.escape(p.name)}</td><td>{html.escape(p.type)}</td>"
        f"<td>{p.run_cnt}</td><td>{p.run_time_ns}</td><td>{p.ns_per_run:.3f}</td></tr>"
        for p in r.prog_stats)
    if progs:
        progs = ("<table><tr><th>program</th><th>type</th><th>run_cnt</th>"
                 "<th>run_time_ns</th><th>ns/run</th></tr>" + progs + "</table>")
    warns = "".join(f"<div style=\"color:#b00\">WARNING: {html.escape(w)}</div>"
                    for w in r.warnings)
    return (f"<div><b>{html.escape(r.name)}</b> "
            f"<code>{html.escape(params)}</code><br>"
            f"<pre>{html.escape(r.summary())}</pre>{warns}{progs}"
            f"<details><summary>{len(r.samples)} samples "
            f"({r.metadata.get('kernel', '?')}, {r.metadata.get('cpu_model', '?')})"
            f"</summary><table><tr><th>#</th><th>interval ms</th><th>hits M/s</th>"
            f"<th>drops M/s</th></tr>{rows}</table></details></div>")


def repr_text(r):
    """Result.__repr__: the mean and spread, the samples, steps, late samples,
    a precision run's interval and the warnings."""
    if r.report == "false_hits":
        false_hits, total = _lines.false_hits_totals(r.samples)
        return (f"<Result {r.name}: false positives {r.false_positive_pct:.2f}% "
                f"({false_hits} of {total} operations) over {len(r.samples)} "
                f"samples{emulation_note(r)}>" + warning_lines(r))
    progs = f", {len(r.prog_stats)} programs' stats" if r.prog_stats else ""
    late = r.late_samples
    if late and late < len(r.samples):
        rest = r.without_late_samples()
        note = (f", {late} late (without: {rest.mean:.3f} \u00b1 "
                f"{rest.stdev:.3f} M/s)")
    else:
        note = f", {late} late" if late else ""
    step = r.coarse_step_mps()
    steps = f", in steps of {step:.3g} M/s" if step else ""
    runs = ""
    if r.params.get("precision") is not None and r.mean_ci_mps is not None:
        runs = (f", 95% CI \u00b1{r.precision_reached * 100:.2f}% over "
                f"{len(r.runs())} runs (stopped by {r.stopped_by}"
                f"{host_note(r)})")
    return (f"<Result {r.name}: {r.mean:.3f} \u00b1 {r.stdev:.3f} M/s "
            f"over {len(r.samples)} samples{steps}{note}{runs}{progs}"
            f"{emulation_note(r)}>" + warning_lines(r))
