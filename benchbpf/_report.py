"""The kernel bench's output lines, by report kind."""

PLUS_MINUS = "\u00b1"


def progress_line(report, index, sample, producers, interval_ns=1_000_000_000):
    """The per-interval 'Iter' line the kernel bench prints."""
    delta_ns = sample.interval_ns
    head = f"Iter {index:3d} ({(delta_ns - interval_ns) / 1000.0:7.3f}us): "
    if report == "ops":
        hits = sample.hits_mps
        return head + f"hits {hits:8.3f}M/s ({hits / producers:7.3f}M/prod)"
    hits, drops = sample.hits_mps, sample.drops_mps
    return head + (f"hits {hits:8.3f}M/s ({hits / producers:7.3f}M/prod), "
                   f"drops {drops:8.3f}M/s, total operations {hits + drops:8.3f}M/s")


def summary_line(r):
    """The kernel bench's 'Summary:' line for result r."""
    report = r.report
    if report == "ops":
        mean, sd = r.stat("hits")
        lat = 1e3 / mean if mean > 0 else float("inf")
        return (f"Summary: throughput {mean:8.3f} {PLUS_MINUS} {sd:5.3f} M ops/s "
                f"({mean / r.producers:7.3f}M ops/prod), latency {lat:8.3f} ns/op")
    hits, hits_sd = r.stat("hits")
    drops, drops_sd = r.stat("drops")
    tot, tot_sd = r.stat("total_ops")
    return (f"Summary: hits {hits:8.3f} {PLUS_MINUS} {hits_sd:5.3f}M/s "
            f"({hits / r.producers:7.3f}M/prod), drops {drops:8.3f} {PLUS_MINUS} "
            f"{drops_sd:5.3f}M/s, total operations {tot:8.3f} {PLUS_MINUS} {tot_sd:5.3f}M/s")
