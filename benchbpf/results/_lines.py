"""The kernel bench's output lines, by report kind.

The kinds several families share are formatted here; a kind that is one
family's own (htab_mem, tasks_trace, hashmap_*) is formatted by that family
module, which registers its formatters at import (register()), so that
this module, at the bottom of the package with result.py, names no family."""

PLUS_MINUS = "\u00b1"

#: report kind -> summary(result), and -> progress(index, sample,
#: producers, interval_ns), registered by the families that own them.
_SUMMARIES = {}
_PROGRESS = {}


def register(report, summary=None, progress=None):
    """Format report kind `report` with a family's own functions: summary(r)
    gives Result r's summary line(s), progress(index, sample, producers,
    interval_ns) an interval's line(s); None keeps the shared format."""
    if summary is not None:
        _SUMMARIES[report] = summary
    if progress is not None:
        _PROGRESS[report] = progress


def progress_line(report, index, sample, producers, interval_ns=1_000_000_000):
    """The per-interval 'Iter' line the kernel bench prints (None: it prints
    none, as for BPF-timed runs)."""
    if report in _PROGRESS:
        return _PROGRESS[report](index, sample, producers, interval_ns)
    delta_ns = sample.interval_ns
    head = f"Iter {index:3d} ({(delta_ns - interval_ns) / 1000.0:7.3f}us): "
    if report == "ops":
        hits = sample.hits_mps
        return head + f"hits {hits:8.3f}M/s ({hits / producers:7.3f}M/prod)"
    if report == "local_storage":
        return head + (f"hits {sample.hits_mps:8.3f}M/s "
                       f"important_hits {sample.rate_mps('important_hits'):8.3f}M/s")
    if report == "creates":
        creates_k = sample.hits_mps * 1e3
        return head + (f"creates {creates_k:8.3f}k/s ({creates_k / producers:7.3f}k/prod), "
                       f"{_ratio(sample.extra.get('kmallocs', 0), sample.hits):3.2f} "
                       "kmallocs/create")
    if report in ("hashmap_lookup", "hashmap_full_update"):
        what = "lookups" if report == "hashmap_lookup" else "updates"
        return head + (f"{what} {sample.hits_mps:8.3f}M/s in {sample.extra.get('runs', 0)} "
                       f"BPF-timed samples")
    if report == "false_hits":
        total = sample.false_hits + sample.hits + sample.drops
        return head + (f"{sample.false_hits} false hits of {total} total operations. "
                       f"Percentage = {_pct(sample.false_hits, total):2.2f} %")
    hits, drops = sample.hits_mps, sample.drops_mps
    return head + (f"hits {hits:8.3f}M/s ({hits / producers:7.3f}M/prod), "
                   f"drops {drops:8.3f}M/s, total operations {hits + drops:8.3f}M/s")


def _ratio(part, whole):
    return part / whole if whole else float("nan")


def _pct(part, total):
    return part / total * 100 if total else float("nan")


def false_hits_totals(samples):
    """(false hits, total operations) over samples, as the kernel bench adds
    them up for its false hit percentage: total = hits + false hits + drops."""
    false_hits = sum(s.false_hits for s in samples)
    return false_hits, false_hits + sum(s.hits + s.drops for s in samples)


def summary_latency_ns(r):
    """The latency the kernel bench's summary line states for Result r, ns/op,
    or None where it states none: per producer for "ops" reports
    (ops_report_final), 1000 / mean hits whatever the producers for local
    storage (local_storage_report_final)."""
    if r.report == "ops":
        return r.latency_ns
    if r.report == "local_storage":
        mean = r.stat("hits")[0]
        return 1e3 / mean if mean > 0 else float("inf")
    return None


def summary_line(r):
    """The kernel bench's 'Summary:' line for result r."""
    report = r.report
    if report in _SUMMARIES:
        return _SUMMARIES[report](r)
    if report == "false_hits":
        false_hits, total = false_hits_totals(r.samples)
        return (f"Summary: {false_hits} false hits of {total} total operations. "
                f"Percentage =  {_pct(false_hits, total):2.2f} %")
    if report == "local_storage":
        mean, sd = r.stat("hits")
        imp, imp_sd = r.stat("important_hits")
        lat = summary_latency_ns(r)
        return (f"Summary: hits throughput {mean:8.3f} {PLUS_MINUS} {sd:5.3f} M ops/s, "
                f"hits latency {lat:8.3f} ns/op, "
                f"important_hits throughput {imp:8.3f} {PLUS_MINUS} {imp_sd:5.3f} M ops/s")
    if report == "creates":
        return creates_summary(r)
    if report == "ops":
        mean, sd = r.stat("hits")
        lat = summary_latency_ns(r)
        return (f"Summary: throughput {mean:8.3f} {PLUS_MINUS} {sd:5.3f} M ops/s "
                f"({mean / r.producers:7.3f}M ops/prod), latency {lat:8.3f} ns/op")
    hits, hits_sd = r.stat("hits")
    drops, drops_sd = r.stat("drops")
    tot, tot_sd = r.stat("total_ops")
    return (f"Summary: hits {hits:8.3f} {PLUS_MINUS} {hits_sd:5.3f}M/s "
            f"({hits / r.producers:7.3f}M/prod), drops {drops:8.3f} {PLUS_MINUS} "
            f"{drops_sd:5.3f}M/s, total operations {tot:8.3f} {PLUS_MINUS} {tot_sd:5.3f}M/s")


def creates_summary(r):
    """local-storage-create's summary: creates in k/s, kmallocs per create,
    and a line of errors when any owner or storage creation failed."""
    mean, sd = r.stat("hits")
    creates = sum(s.hits for s in r.samples)
    kmallocs = sum(s.extra.get("kmallocs", 0) for s in r.samples)
    line = (f"Summary: creates {mean * 1e3:8.3f} {PLUS_MINUS} {sd * 1e3:5.3f}k/s "
            f"({mean * 1e3 / r.producers:7.3f}k/prod), "
            f"{_ratio(kmallocs, creates):4.2f} kmallocs/create")
    owner_errs = sum(s.extra.get("owner_errs", 0) for s in r.samples)
    create_errs = sum(s.extra.get("create_errs", 0) for s in r.samples)
    if owner_errs or create_errs:
        owner = "socket" if r.params.get("storage_type") == "socket" else "pthread_create"
        line += f"\n{owner}() errors {owner_errs} create_errs {create_errs}"
    return line
