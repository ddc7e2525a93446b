#!/usr/bin/env python3
"""Write notebooks/*.ipynb from the cell lists below (keeps them diffable and tested).

    python3 scripts/make_notebooks.py            # write every notebook
    python3 scripts/make_notebooks.py --check    # exit 1 if a notebook's cells differ

A cell whose source did not change keeps the outputs the notebook already has
(scripts/run_notebooks.py fills them), so regenerating after editing one cell
does not throw away the outputs of the others.  The published figures each
study notebook shows are typed in here, with a markdown cell saying where each
table comes from.
"""
import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS_DIR = ROOT / "notebooks"

#: Every study notebook starts so: run lengths and points come from benchbpf.quick().
SETUP = """import os
import benchbpf
import pandas as pd
%matplotlib inline

# BENCHBPF_QUICK=1 (the test suite): short runs and fewer points; otherwise the full study.
QUICK = benchbpf.quick()
DURATION = 0.3 if QUICK else 2          # seconds measured per point
WARMUP = 0.1 if QUICK else 1
RUN = dict(warmup=WARMUP, duration=DURATION, interval=0.1 if QUICK else 0.5)
print("quick mode" if QUICK else "full run", RUN, "| load average", os.getloadavg(),
      "| CPUs", os.cpu_count())"""

MACHINE_NOTE = (
    "**This machine**: 2 vCPUs shared with other work, kernel with BTF but locked down: "
    "fentry programs are refused, so every producer that the original study fired from "
    "fentry on `getpgid()` fires here from the `syscalls/sys_enter_getpgid` tracepoint "
    "(`Result.metadata[\"trigger\"]`). Absolute figures are not comparable with the "
    "study's machine; the shape of each curve and the ratios are what to compare.")

QUICKSTART = [
    ("md", "# benchbpf quick start\n\nRun the kernel's BPF benchmarks from Python, "
           "look at the samples, compare and plot. Needs root (or CAP_BPF + CAP_PERFMON)."),
    ("code", "import benchbpf\n%matplotlib inline\n\n"
             "# BENCHBPF_QUICK=1: short runs (the test suite); otherwise 1 s warm-up, 3 s measured.\n"
             "RUN = dict(warmup=0.1, duration=0.3, interval=0.1) if benchbpf.quick() else \\\n"
             "    dict(warmup=1, duration=3, interval=1)\n"
             "benchbpf.__version__, len(benchbpf.list_benchmarks())"),
    ("md", "What this kernel can run (each probe really loads a program):"),
    ("code", "print(benchbpf.features())"),
    ("md", "## One run\nA `Result` prints as the kernel bench's summary line and keeps every sample."),
    ("code", "r = benchbpf.run(\"trig-rawtp\", **RUN)\nprint(r)\n"
             "r.mean, r.stdev, r.median, r.percentile(90), r.metadata[\"trigger\"]"),
    ("code", "r"),
    ("code", "[(round(s.interval_ns / 1e6, 3), round(s.hits_mps, 3)) for s in r.samples]"),
    ("md", "## Ring buffer vs perf buffer\nThe headline family: libbpf consumer, sampled notifications."),
    ("code", "rb = benchbpf.ringbuf(producers=1, **RUN)\n"
             "pb = benchbpf.perfbuf(sampled=True, **RUN)\n"
             "print(rb)\nprint(pb)\n"
             "# Sampled against unsampled notifications: a difference compare() refuses\n"
             "# unless told that it is the point.\n"
             "print(benchbpf.compare(pb, rb, different_params=True))"),
    ("md", "## Sweep and plot\nA list value is an axis of the sweep. Batching amortises the "
           "`BPF_PROG_TEST_RUN` syscall of kernel-driven triggers."),
    ("code", "rs = benchbpf.sweep(\"trig-rawtp\", trig_batch_iters=[1, 10, 100, 1000], **RUN)\n"
             "rs.to_dataframe()"),
    ("code", "ax = rs.plot(x=\"trig_batch_iters\")\nax.set_xscale(\"log\")"),
    ("md", "## Save and load\n"),
    ("code", "r.to_json(\"/tmp/trig-rawtp.json\")\n"
             "benchbpf.Result.from_json(\"/tmp/trig-rawtp.json\") == r"),
]

# ---------------------------------------------------------------- ring buffer
RINGBUF = [
    ("md", """# BPF ring buffer vs perf buffer

The scenarios of the original ring buffer study, as the kernel's
`tools/testing/selftests/bpf/benchs/run_bench_ringbufs.sh` runs them (`-a`: consumer on
CPU 0, producer on CPU 1), each next to the study's published figure, plus a record-size
sweep the study did not have.

- `rb-libbpf` / `rb-custom`: BPF ring buffer read with libbpf's `ring_buffer` or a minimal
  reader of the mmapped ring; `pb-libbpf` / `pb-custom`: the same for a perf buffer.
- A hit is one record read by the consumer; each `getpgid()` of the producer emits a batch
  of 500 records of 8 bytes (`rb_batch_cnt`, `record_size`).
- *sampled*: the consumer is notified once 500 records wait (`rb_sampled`); *back-to-back*:
  producer and consumer alternate on one CPU (`rb_b2b`).
- `rb-custom` reads as the kernel bench's reader does: a pass that stops at a record not
  yet committed publishes nothing and reads those records again, so under contention some
  are counted twice (`rb_count_once=True` counts each once; the record-size sweep uses it)."""),
    ("md", """## Where the published figures come from

Andrii Nakryiko, *[PATCH v4 bpf-next 4/5] bpf: add BPF ringbuf and perf buffer benchmarks*,
bpf/netdev mailing lists, 2020-05-29, Message-ID `<20200529075424.3139988-5-andriin@fb.com>`
(the patch that added `bench_ringbufs.c` and `run_bench_ringbufs.sh`). Measured there on a
28-core/56-thread Intel Xeon E5-2680 v4 @ 2.40GHz, `bench -w3 -d10 -a`, fentry trigger.
Figures are the mean hit rate in M records/s as the script printed it; the message gives
the ring buffer multi-producer sweep for 1..52 producers and no perf-buffer multi-producer
figures (that sweep was added to the script later).

""" + MACHINE_NOTE),
    ("code", SETUP),
    ("code", """# Published figures (mean M records/s), typed from the message cited above.
PUBLISHED = {
    "single_producer_parallel": {"rb-libbpf": 12.054, "rb-custom": 8.158, "pb-libbpf": 0.931, "pb-custom": 0.965},
    "single_producer_sampled": {"rb-libbpf": 11.563, "rb-custom": 15.895, "pb-libbpf": 9.889, "pb-custom": 9.866},
    "back_to_back": {"rb-libbpf": 15.507, "rb-custom": 21.449, "pb-libbpf": 1.601, "pb-custom": 1.607},
    "back_to_back_sampled": {"rb-libbpf": 14.692, "rb-custom": 20.024, "pb-libbpf": 8.545, "pb-custom": 8.988},
    "reserve_vs_output": {"reserve": 22.819, "output": 18.906},
    "reserve_vs_output_sampled": {"reserve": 15.350, "output": 14.195},
    "same_cpu": {"rb-libbpf": 3.045, "rb-custom": 3.055, "pb-libbpf": 1.393, "pb-custom": 1.407},
    "ringbuf_sample_rate_sweep": {1: 1.106, 5: 4.746, 10: 7.706, 25: 12.893, 50: 15.961, 100: 18.203,
                                  250: 19.962, 500: 20.881, 1000: 21.317, 2000: 21.331, 3000: 21.688},
    "perfbuf_sample_rate_sweep": {1: 1.035, 5: 3.476, 10: 5.094, 25: 7.118, 50: 8.169, 100: 8.887,
                                  250: 9.180, 500: 9.353, 1000: 9.411, 2000: 9.464, 3000: 9.575},
    "multi_producer": {1: 10.916, 2: 4.931, 3: 4.880, 4: 3.926, 8: 4.011, 12: 3.967, 16: 2.604,
                       20: 2.233, 24: 2.085, 28: 2.055, 32: 1.962, 36: 2.089, 40: 2.118, 44: 2.105,
                       48: 2.120, 52: 2.074},
}
# Published drops (M/s) where they were not ~0: same CPU, low batch count.
PUBLISHED_DROPS = {"same_cpu": {"rb-libbpf": 3.536, "rb-custom": 3.893}}"""),
    ("md", """## Every scenario of the study

`benchbpf.ringbuf_study(name)` runs one scenario of the kernel script. The sample-rate
sweeps use the script's rates (batch count = sample rate, back-to-back); the multi-producer
sweeps go up to 4 producers: **this machine has 2 CPUs**, so past one producer the
producers share CPUs with each other and with the consumer, unlike the study's 1..52
producers on 56 hardware threads. The study's figures beyond 4 producers have no
counterpart here."""),
    ("code", """RATES = (1, 50, 500) if QUICK else benchbpf.ringbuf.SAMPLE_RATES
PRODUCERS = (1, 2) if QUICK else (1, 2, 3, 4)
SCENARIOS = {
    "single_producer_parallel": {}, "single_producer_sampled": {},
    "back_to_back": {}, "back_to_back_sampled": {},
    "ringbuf_sample_rate_sweep": {"rates": RATES}, "perfbuf_sample_rate_sweep": {"rates": RATES},
    "reserve_vs_output": {}, "reserve_vs_output_sampled": {}, "same_cpu": {},
    "multi_producer": {"producer_counts": PRODUCERS},
    "perfbuf_multi_producer": {"producer_counts": PRODUCERS},
}
studies = {name: benchbpf.ringbuf_study(name, **extra, **RUN) for name, extra in SCENARIOS.items()}
print({name: len(s) for name, s in studies.items()}, "runs; trigger:",
      studies["back_to_back"]["rb-custom"].metadata["trigger"])"""),
    ("md", "### The study's table and this machine's, side by side\n\n"
           "`median` is the median of the per-interval hit rates of one run, `published` the "
           "study's mean, `here / published` their ratio."),
    ("code", """rows = []
for name, study in studies.items():
    for row in study.table():
        rows.append(dict(scenario=name, label=row.label, median=row.median, mean=row.mean,
                         stdev=row.stdev, drops=row.drops_mps,
                         published=PUBLISHED.get(name, {}).get(row.label),
                         published_drops=PUBLISHED_DROPS.get(name, {}).get(row.label)))
table = pd.DataFrame(rows)
table["here / published"] = table["median"] / table["published"]
pd.set_option("display.max_rows", 200)
table.round(3)"""),
    ("code", """import matplotlib.pyplot as plt
fig, axes = plt.subplots(1, 4, figsize=(16, 3.5), sharey=False)
for ax, name in zip(axes, ["single_producer_parallel", "single_producer_sampled",
                           "back_to_back", "back_to_back_sampled"]):
    t = table[table.scenario == name].set_index("label")
    t[["median", "published"]].plot.bar(ax=ax, rot=30, title=name)
    ax.set_ylabel("M records/s")
plt.tight_layout()"""),
    ("code", """fig, ax = plt.subplots(figsize=(7, 4))
for name, style in (("ringbuf_sample_rate_sweep", "o-"), ("perfbuf_sample_rate_sweep", "s-")):
    t = table[table.scenario == name]
    ax.plot(t["label"], t["median"], style, label=f"{name}: here")
    pub = PUBLISHED[name]
    ax.plot(list(pub), list(pub.values()), style, alpha=0.35, label=f"{name}: published")
ax.set_xscale("log"); ax.set_xlabel("sample rate = batch count"); ax.set_ylabel("M records/s")
ax.set_title("back-to-back, effect of the notification sample rate"); ax.legend(fontsize=8);"""),
    ("code", """fig, ax = plt.subplots(figsize=(7, 4))
for name in ("multi_producer", "perfbuf_multi_producer"):
    t = table[table.scenario == name]
    ax.plot(t["label"], t["median"], "o-", label=f"{name}: here")
pub = PUBLISHED["multi_producer"]
ax.plot(list(pub), list(pub.values()), "o--", alpha=0.4, label="multi_producer: published")
ax.axvline(os.cpu_count(), color="grey", linestyle=":", label=f"CPUs here ({os.cpu_count()})")
ax.set_xscale("log"); ax.set_xlabel("producers"); ax.set_ylabel("M records/s")
ax.set_title("multi-producer contention, batch 50"); ax.legend(fontsize=8);"""),
    ("md", """## Record size (not in the study)

`record_size` goes from the study's 8 bytes up to 64 KiB. The ring buffer writes with
`bpf_ringbuf_output()` (`rb_use_output=True`), which copies the whole record as
`bpf_perf_event_output()` does, so both sides move every byte; a perf record is at most
65516 bytes. Throughput in MB/s is hits × `record_size`; `rb_count_once=True` so that no
record is counted twice."""),
    ("code", """SIZES = [8, 4096] if QUICK else [8, 64, 256, 1024, 4096, 16384, 65536]
rb_sizes = benchbpf.sweep("rb-custom", record_size=SIZES, rb_use_output=True, rb_count_once=True,
                          affinity=True, **RUN)
pb_sizes = benchbpf.sweep("pb-custom", record_size=[s for s in SIZES if s <= 65516],
                          affinity=True, **RUN)
by_size = benchbpf.ResultSet([*rb_sizes, *pb_sizes], axes=("record_size",))
sizes = by_size.to_dataframe()[["name", "record_size", "median", "ci_low", "ci_high", "drops_mps"]]
sizes["MB/s"] = sizes["median"] * sizes["record_size"]
sizes.round(3)"""),
    ("code", """fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4))
by_size.plot(x="record_size", hue="name", ax=a)
sizes.pivot(index="record_size", columns="name", values="MB/s").plot(ax=b, marker="o", logx=True)
b.set_ylabel("MB/s (hits x record_size)"); b.set_title("payload throughput vs record size");"""),
    ("md", "## Conclusion (computed from the tables above)"),
    ("code", """def median_of(name, label):
    return table[(table.scenario == name) & (table.label == label)]["median"].iloc[0]

pairs = [(s, c) for s in ("single_producer_parallel", "single_producer_sampled", "back_to_back",
                          "back_to_back_sampled") for c in ("libbpf", "custom")]
here = sum(median_of(s, f"rb-{c}") > median_of(s, f"pb-{c}") for s, c in pairs)
published = sum(PUBLISHED[s][f"rb-{c}"] > PUBLISHED[s][f"pb-{c}"] for s, c in pairs)
print(f"ring buffer beats perf buffer in {here} of {len(pairs)} scenario/consumer pairs here "
      f"(published: {published} of {len(pairs)})")

rates = [r for r in RATES if r in PUBLISHED["ringbuf_sample_rate_sweep"]]
wins = sum(median_of("ringbuf_sample_rate_sweep", r) > median_of("perfbuf_sample_rate_sweep", r)
           for r in rates)
print(f"back-to-back with sample rate = batch: ring buffer ahead at {wins} of {len(rates)} rates")
lo, hi = min(RATES), max(RATES)
for name in ("ringbuf_sample_rate_sweep", "perfbuf_sample_rate_sweep"):
    gain = median_of(name, hi) / median_of(name, lo)
    pub = PUBLISHED[name][hi] / PUBLISHED[name][lo]
    print(f"{name}: rate {hi} carries {gain:.1f}x the records of rate {lo} (published {pub:.1f}x)")

for name in ("reserve_vs_output", "reserve_vs_output_sampled"):
    ratio = median_of(name, "reserve") / median_of(name, "output")
    pub = PUBLISHED[name]["reserve"] / PUBLISHED[name]["output"]
    print(f"{name}: reserve+submit / output = {ratio:.2f} here (published {pub:.2f})")

two = median_of("multi_producer", 2) / median_of("multi_producer", 1) - 1
pub = PUBLISHED["multi_producer"][2] / PUBLISHED["multi_producer"][1] - 1
print(f"rb-libbpf, 1 -> 2 producers: {two:+.0%} here (published {pub:+.0%}; "
      f"{os.cpu_count()} CPUs here)")

big = max(s for s in SIZES if s <= 65516)
mbs = sizes[sizes.record_size == big].set_index("name")["MB/s"]
print(f"{big}-byte records: rb-custom (output) {mbs['rb-custom']:.0f} MB/s, "
      f"pb-custom {mbs['pb-custom']:.0f} MB/s")
ratio = table["here / published"].dropna()
print(f"here / published over {len(ratio)} figures: median {ratio.median():.2f} "
      f"(range {ratio.min():.2f}..{ratio.max():.2f})")"""),
]

# ---------------------------------------------------------------- local storage
LOCAL_STORAGE = [
    ("md", """# Task local storage: the cache cliff

`bpf_task_storage_get()` finds a task's storage through a cache of 16 slots
(`BPF_LOCAL_STORAGE_CACHE_SIZE`). With more task storage maps than that, gets miss the
cache and walk the task's list of storages. The original study measured hits (gets) per
second against the number of maps:

- *sequential get* (`local-storage-cache-seq-get`): gets of maps 0, 1, ..., nr_maps-1 in turn;
- *interleaved get* (`local-storage-cache-int-get`): the same plus gets of the "important"
  map 0, 4 in every 10;
- *hashmap control* (`local-storage-cache-hashmap-control`): lookups of random keys below
  `hashmap_nr_keys_used` in one 4,194,304-key hash map: what a map keyed by pid costs.

Each `getpgid()` runs a `bpf_loop()` of 10000 gets; the study subtracted the time of a run
with the get commented out (`adjust_overhead=True` here runs that control after each run:
`Result.adjusted_latency_ns`)."""),
    ("md", """## Where the published figures come from

Dave Marchevsky, *[PATCH v6 bpf-next] selftests/bpf: Add benchmark for local_storage get*,
bpf mailing list, 2022-06-20, Message-ID `<20220620222554.270578-1-davemarchevsky@fb.com>`,
merged as commit 73087489250d. Skylake, 20 cores, fentry trigger. The message gives hits
throughput (M ops/s) and latency for every map count and both benchmarks, the hashmap
control for 10 .. 4194304 keys, a second table with the get commented out, and the
adjusted latencies (raw minus that run) for sequential get and for the hashmap control at
1k, 10k, 100k keys.

""" + MACHINE_NOTE),
    ("code", SETUP + "\nfrom benchbpf import local_storage"),
    ("code", """# Published (M ops/s) from the message cited above.
NR_MAPS_PUBLISHED = [1, 10, 16, 17, 24, 32, 100, 1000]
PUBLISHED = pd.DataFrame({
    "nr_maps": NR_MAPS_PUBLISHED,
    "seq M/s": [47.298, 40.240, 44.515, 38.778, 19.317, 13.333, 6.360, 0.452],
    "int M/s": [55.277, 48.701, 49.553, 43.848, 24.397, 16.898, 7.303, 0.542],
    "int important M/s": [55.277, 17.393, 15.767, 13.349, 6.863, 4.717, 1.907, 0.136],
    "seq adjusted ns": [12.1, 16.0, 13.8, 16.8, 40.9, 65.2, 148.2, 2204],   # "~" in the message
}).set_index("nr_maps")
PUBLISHED_HASHMAP = pd.DataFrame({
    "keys": [10, 1000, 10000, 100000, 4194304],
    "M/s": [20.900, 13.758, 6.995, 4.452, 3.043],
    "adjusted ns": [None, 53.8, 124.2, 206.5, None],   # only these three were given
}).set_index("keys")
PUBLISHED"""),
    ("md", """## Sequential and interleaved get against nr_maps

One run per map count and benchmark, each followed by its control (same loop, no get).
`local_storage.cliff()` runs the plain sweep in one call; here each point also needs its
control, so the family functions are called with `adjust_overhead=True`."""),
    ("code", """NR_MAPS = [1, 16, 17, 1000] if QUICK else NR_MAPS_PUBLISHED
import statistics
seq = [local_storage.seq_get(n, adjust_overhead=True, **RUN) for n in NR_MAPS]
interleaved = [local_storage.int_get(n, adjust_overhead=True, **RUN) for n in NR_MAPS]
important = lambda r: statistics.median(r.rates_mps("important_hits"))
measured = pd.DataFrame({
    "nr_maps": NR_MAPS,
    "seq M/s": [r.median for r in seq],
    "seq ns/op": [r.latency_ns for r in seq],
    "seq control ns/op": [r.control_latency_ns for r in seq],
    "seq adjusted ns": [r.adjusted_latency_ns for r in seq],
    "int M/s": [r.median for r in interleaved],
    "int important M/s": [important(r) for r in interleaved],
    "int adjusted ns": [r.adjusted_latency_ns for r in interleaved],
}).set_index("nr_maps")
print("trigger:", seq[0].metadata["trigger"])
measured.round(2)"""),
    ("code", """side = measured[["seq M/s", "seq adjusted ns", "int M/s", "int important M/s"]].join(
    PUBLISHED.add_suffix(" (published)"))
side.round(2)"""),
    ("code", """import matplotlib.pyplot as plt
fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4))
for col, style in (("seq M/s", "o-"), ("int M/s", "s-")):
    a.plot(measured.index, measured[col], style, label=f"{col} here")
    a.plot(PUBLISHED.index, PUBLISHED[col], style, alpha=0.35, label=f"{col} published")
a.axvline(16.5, color="grey", linestyle=":", label="16 cache slots")
a.set_xscale("log"); a.set_xlabel("nr_maps"); a.set_ylabel("M gets/s"); a.legend(fontsize=8)
b.plot(measured.index, measured["seq adjusted ns"], "o-", label="sequential, adjusted, here")
b.plot(PUBLISHED.index, PUBLISHED["seq adjusted ns"], "o--", alpha=0.4, label="published")
b.set_xscale("log"); b.set_yscale("log"); b.set_xlabel("nr_maps"); b.set_ylabel("ns per get")
b.axvline(16.5, color="grey", linestyle=":"); b.legend(fontsize=8);"""),
    ("md", """## Hashmap control against `hashmap_nr_keys_used`

A grid sweep: every key count with and without the lookup (`skip_access`), the control run
right after the run it adjusts. One hash map of 4,194,304 keys (filled before each run, a
few seconds) serves the one slot (`nr_maps=1`, as the study ran it)."""),
    ("code", """KEYS = [10, 4194304] if QUICK else [10, 1000, 10000, 100000, 4194304]
hm = benchbpf.sweep("local-storage-cache-hashmap-control", hashmap_nr_keys_used=KEYS,
                    skip_access=[False, True], nr_maps=1, **RUN)
raw = {r.params["hashmap_nr_keys_used"]: r for r in hm if not r.params["skip_access"]}
control = {r.params["hashmap_nr_keys_used"]: r for r in hm if r.params["skip_access"]}
hashmap = pd.DataFrame({"M/s": {k: r.median for k, r in raw.items()},
                        "ns/op": {k: r.latency_ns for k, r in raw.items()},
                        "control ns/op": {k: r.latency_ns for k, r in control.items()}})
hashmap.index.name = "keys"
hashmap["adjusted ns"] = hashmap["ns/op"] - hashmap["control ns/op"]
hashmap.join(PUBLISHED_HASHMAP.add_suffix(" (published)")).round(2)"""),
    ("code", """ax = hm.plot(x="hashmap_nr_keys_used", y="latency_ns", hue="skip_access")
ax.set_title("hash map control: time per loop iteration, with and without the lookup");"""),
    ("md", "## Conclusion (computed from the tables above)"),
    ("code", """def change(frame, col, a, b):
    return frame.loc[b, col] / frame.loc[a, col] - 1

print(f"sequential get changes by {change(measured, 'seq M/s', 16, 17):+.0%} from 16 to 17 maps "
      f"here (published: {change(PUBLISHED, 'seq M/s', 16, 17):+.0%}), and by "
      f"{change(measured, 'seq M/s', 16, max(NR_MAPS)):+.0%} from 16 to {max(NR_MAPS)} maps")
last = max(NR_MAPS)
print(f"sequential get at {last} maps: {measured.loc[last, 'seq adjusted ns']:.0f} ns per get adjusted "
      f"(published {PUBLISHED.loc[last, 'seq adjusted ns']:.0f} ns); "
      f"{measured.loc[16, 'seq M/s'] / measured.loc[last, 'seq M/s']:.0f}x fewer gets/s than with 16 maps "
      f"(published {PUBLISHED.loc[16, 'seq M/s'] / PUBLISHED.loc[last, 'seq M/s']:.0f}x)")
flat = [n for n in NR_MAPS if n <= 16]
print(f"up to 16 maps the adjusted cost stays within "
      f"{measured.loc[flat, 'seq adjusted ns'].min():.1f}..{measured.loc[flat, 'seq adjusted ns'].max():.1f} ns "
      f"(a difference of two noisy runs: near 0, even below, is within the noise here)")
gain = measured.loc[last, "int important M/s"] / (measured.loc[last, "seq M/s"] / last)
print(f"at {last} maps interleaving gets of map 0 gives it {gain:.0f}x the gets it has in the "
      f"sequential run")
big = max(KEYS)
print(f"hashmap control, {big} keys: {hashmap.loc[big, 'ns/op']:.0f} ns per loop iteration vs "
      f"{measured.loc[16, 'seq ns/op']:.0f} ns for a cached task-storage get of 16 maps "
      f"({hashmap.loc[big, 'ns/op'] / measured.loc[16, 'seq ns/op']:.0f}x; unadjusted)")"""),
]

# ---------------------------------------------------------------- hashmap lookup
HASHMAP = [
    ("md", """# Hashmap lookups against fill factor

`bpf-hashmap-lookup`: a BPF program times, with `bpf_ktime_get_ns()`, batches of 1,000,000
lookups of keys 1..nr_entries in a hash map of 65536 entries (`map_flags=0x40`,
`BPF_F_ZERO_SEED`) holding nr_entries keys. The figure is lookups per second per CPU.
`benchbpf.hashmap.fill_sweep()` runs the study's sweep, 4096 .. 65536 keys in steps of 4096.
A sample here is a CPU's consecutive batches adding up to at least 10 ms (see the module's
documentation for why the kernel bench's single-batch samples swing)."""),
    ("md", """## Where the published figures come from

Anton Protopopov, *[PATCH bpf-next v2 7/7] selftest/bpf/benchs: Add benchmark for hashmap
lookups*, bpf mailing list, 2023-02-13, Message-ID
`<20230213091519.1202813-8-aspsk@isovalent.com>`: the loop
`for nr_entries in $(seq 4096 4096 65536); do ./bench -d2 -a bpf-hashmap-lookup --key_size=4
--nr_entries=$nr_entries --max_entries=65536 --nr_loops=1000000 --map_flags=0x40; done`
on an AMD Ryzen 9 3950X, fentry trigger, one CPU (`cpu01`). The fill percentages are the
message's (integer division).

""" + MACHINE_NOTE),
    ("code", SETUP + "\nfrom benchbpf import hashmap"),
    ("code", """# Published M events/s (cpu01) from the message cited above, nr_entries 4096 .. 65536.
PUBLISHED = pd.Series(
    [50.739, 47.751, 45.153, 43.826, 41.971, 41.034, 39.946, 38.256,
     36.580, 36.252, 35.200, 34.061, 34.374, 33.244, 32.182, 31.497],
    index=pd.Index(hashmap.SWEEP_ENTRIES, name="nr_entries"), name="published M/s")
PUBLISHED.to_frame().T"""),
    ("code", """ENTRIES = [4096, 32768, 65536] if QUICK else hashmap.SWEEP_ENTRIES
sweep = hashmap.fill_sweep(ENTRIES, **RUN)
measured = pd.DataFrame(sweep.rows(), columns=["nr_entries", "fill %", "M/s", "stdev", "samples"]
                        ).set_index("nr_entries")
print("trigger:", sweep.results[0].metadata["trigger"])
side = measured.join(PUBLISHED)
side["here / published"] = side["M/s"] / side["published M/s"]
side.round(3)"""),
    ("code", """ax = side.plot(y=["M/s", "published M/s"], x="fill %", marker="o", figsize=(7, 4))
ax.set_ylim(bottom=0); ax.set_ylabel("M lookups/s per CPU")
ax.set_title("hash map lookups vs fill factor (65536 entries)");"""),
    ("md", "## Conclusion (computed from the table above)"),
    ("code", """first, last = side.index[0], side.index[-1]
drop = 1 - side.loc[last, "M/s"] / side.loc[first, "M/s"]
pub = 1 - PUBLISHED[last] / PUBLISHED[first]
print(f"lookups fall by {drop:.0%} from {side.loc[first, 'fill %']:.0f} % to "
      f"{side.loc[last, 'fill %']:.0f} % full here (published: {pub:.0%})")
steps = side["M/s"].diff().dropna()
print(f"{(steps < 0).sum()} of {len(steps)} steps up in fill are slower than the step before")
print(f"this machine / the study's machine: {side['here / published'].median():.2f} "
      f"(median over {side['here / published'].count()} fill factors)")"""),
]

# ---------------------------------------------------------------- bloom filter
BLOOM = [
    ("md", """# Bloom filter map

Throughput of `BPF_MAP_TYPE_BLOOM_FILTER` lookups (`bloom-lookup`, peeks) and updates
(`bloom-update`, pushes) and its false-positive rate (`bloom-false-positive`) against the
number of hash functions and of entries; then hash map lookups of keys that are mostly
absent, without and with a bloom filter in front (`hashmap-without-bloom`,
`hashmap-with-bloom`; the figure there is total operations, hits + drops, as the study's
script printed it)."""),
    ("md", """## Where the published figures come from

Joanne Koong, *[PATCH v6 bpf-next 4/5] bpf/benchs: Add benchmark tests for bloom filter
throughput + false positive*, 2021-10-27 (quoted in full in Andrii Nakryiko's reply of
2021-10-28, Message-ID `<CAEf4BzZFZTt5eOC7VW9UyWkN=EdgOH6uZxODDch8GZmGAibfWg@mail.gmail.com>`):
one thread, 1..5 hash functions, 50k .. 5M entries, 8- and 64-byte values; lookups, updates
(M/s) and false-positive rate. And *[PATCH v6 bpf-next 5/5] bpf/benchs: Add benchmarks for
comparing hashmap lookups w/ vs. w/out bloom filter*, Message-ID
`<20211027234504.30744-6-joannekoong@fb.com>`: only how much faster hashmap-with-bloom was
("N% faster"), 5 hash functions, 8 threads, average of 3 runs; no absolute figures. Here
`nr_entries` goes up to 1,048,576, so the study's 2.5M and 5M rows have no counterpart.

""" + MACHINE_NOTE),
    ("code", SETUP),
    ("code", """# Published, 8-byte values, one thread (M/s and %), from the messages cited above.
rows = [  # (hash functions, entries, lookups M/s, updates M/s, false positive %)
    (1, 50000, 51.1, 33.6, 24.15), (1, 100000, 51.0, 33.4, 24.04), (1, 500000, 50.5, 33.1, 27.45), (1, 1000000, 49.7, 32.9, 27.45),
    (2, 50000, 34.1, 20.1, 9.13), (2, 100000, 33.7, 18.9, 9.13), (2, 500000, 32.7, 18.1, 12.61), (2, 1000000, 30.6, 18.9, 12.54),
    (3, 50000, 25.1, 14.6, 7.65), (3, 100000, 24.7, 14.1, 7.71), (3, 500000, 22.9, 13.9, 2.62), (3, 1000000, 19.8, 12.6, 2.60),
    (4, 50000, 19.7, 11.1, 1.01), (4, 100000, 19.5, 10.9, 1.00), (4, 500000, 18.2, 10.6, 2.05), (4, 1000000, 15.5, 9.6, 1.99),
    (5, 50000, 16.4, 9.1, 0.78), (5, 100000, 16.3, 9.0, 0.79), (5, 500000, 15.1, 8.8, 1.82), (5, 1000000, 13.2, 7.8, 1.81),
]
PUBLISHED = pd.DataFrame(rows, columns=["nr_hash_funcs", "nr_entries", "lookup M/s", "update M/s",
                                        "false positive %"]).set_index(["nr_hash_funcs", "nr_entries"])
# hashmap-with-bloom vs without, 5 hash functions, value_size 8: "% faster".
PUBLISHED_SPEEDUP = pd.Series({10000: 30, 50000: 40, 100000: 50, 500000: 80, 1000000: 100},
                              name="published % faster")
PUBLISHED.unstack("nr_entries")"""),
    ("code", """HASH_FUNCS = [1, 3, 5] if QUICK else [1, 2, 3, 4, 5]
ENTRIES = [1000, 50000] if QUICK else [50000, 100000, 500000, 1000000]
lookup = benchbpf.sweep("bloom-lookup", nr_hash_funcs=HASH_FUNCS, nr_entries=ENTRIES, **RUN)
update = benchbpf.sweep("bloom-update", nr_hash_funcs=HASH_FUNCS, nr_entries=ENTRIES, **RUN)
false_pos = benchbpf.sweep("bloom-false-positive", nr_hash_funcs=HASH_FUNCS, nr_entries=ENTRIES, **RUN)
key = lambda r: (r.params["nr_hash_funcs"], r.params["nr_entries"])
measured = pd.DataFrame({
    "lookup M/s": {key(r): r.median for r in lookup},
    "update M/s": {key(r): r.median for r in update},
    "false positive %": {key(r): r.false_positive_pct for r in false_pos},
})
measured.index.names = ["nr_hash_funcs", "nr_entries"]
print("trigger:", lookup[0].metadata["trigger"])
measured.join(PUBLISHED.add_suffix(" (published)")).round(2)"""),
    ("code", """import matplotlib.pyplot as plt
fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4))
lookup.plot(x="nr_hash_funcs", hue="nr_entries", ax=a)
update.plot(x="nr_hash_funcs", hue="nr_entries", ax=b);"""),
    ("code", """fig, axes = plt.subplots(1, 3, figsize=(16, 4))
for ax, col in zip(axes, ["lookup M/s", "update M/s", "false positive %"]):
    for n in ENTRIES:
        s = measured.xs(n, level="nr_entries")[col]
        ax.plot(s.index, s.values, "o-", label=f"{n} entries, here")
        if n in PUBLISHED.index.get_level_values("nr_entries"):
            p = PUBLISHED.xs(n, level="nr_entries")[col]
            ax.plot(p.index, p.values, "o--", alpha=0.35, label=f"{n} entries, published")
    ax.set_xlabel("nr_hash_funcs"); ax.set_title(col); ax.legend(fontsize=7)
axes[2].set_yscale("log");"""),
    ("md", """## Hash map lookups with and without a bloom filter

5 hash functions, 8-byte values (the study's best setting), one producer here (the
study used 8 threads)."""),
    ("code", """MAP_ENTRIES = [10000, 100000] if QUICK else [10000, 50000, 100000, 500000, 1000000]
import statistics
without = benchbpf.sweep("hashmap-without-bloom", nr_entries=MAP_ENTRIES, nr_hash_funcs=5, **RUN)
with_bloom = benchbpf.sweep("hashmap-with-bloom", nr_entries=MAP_ENTRIES, nr_hash_funcs=5, **RUN)
total = lambda r: statistics.median(h + d for h, d in zip(r.rates_mps("hits"), r.rates_mps("drops")))
compare = pd.DataFrame({
    "without bloom M ops/s": {r.params["nr_entries"]: total(r) for r in without},
    "with bloom M ops/s": {r.params["nr_entries"]: total(r) for r in with_bloom},
})
compare.index.name = "nr_entries"
compare["% faster"] = (compare["with bloom M ops/s"] / compare["without bloom M ops/s"] - 1) * 100
compare.join(PUBLISHED_SPEEDUP).round(1)"""),
    ("code", """ax = compare[["without bloom M ops/s", "with bloom M ops/s"]].plot(marker="o", logx=True, figsize=(7, 4))
ax.set_ylim(bottom=0); ax.set_ylabel("M operations/s (hits + drops)");"""),
    ("md", "## Conclusion (computed from the tables above)"),
    ("code", """few, many = min(HASH_FUNCS), max(HASH_FUNCS)
for col in ("lookup M/s", "update M/s"):
    per_n = measured[col].groupby(level="nr_hash_funcs").median()
    pub = PUBLISHED[col].groupby(level="nr_hash_funcs").median()
    print(f"{col}: {many} hash functions give {per_n[many] / per_n[few]:.2f}x the rate of {few} "
          f"(published {pub[many] / pub[few]:.2f}x)")
fp = measured["false positive %"].groupby(level="nr_hash_funcs").median()
pub_fp = PUBLISHED["false positive %"].groupby(level="nr_hash_funcs").median()
print("false positive %, median over entries, by hash functions: here "
      + ", ".join(f"{n}: {v:.2f}" for n, v in fp.items())
      + " | published " + ", ".join(f"{n}: {v:.2f}" for n, v in pub_fp.items() if n in fp.index))
falling = all(a >= b for a, b in zip(fp.values, fp.values[1:]))
print("the false-positive rate falls with every added hash function" if falling else
      "the false-positive rate does not fall with every added hash function here")
faster = (compare["% faster"] > 0).sum()
print(f"the bloom filter made hash map lookups faster at {faster} of {len(compare)} sizes "
      f"(here {compare['% faster'].min():.0f}..{compare['% faster'].max():.0f} %, published "
      f"{PUBLISHED_SPEEDUP.min()}..{PUBLISHED_SPEEDUP.max()} % with 8 threads)")"""),
]

# ---------------------------------------------------------------- bpf_loop + strncmp
LOOP_STRNCMP = [
    ("md", """# `bpf_loop()` and `bpf_strncmp()`

Two helpers benchmarked when they were added:

- `bpf-loop`: on each `getpgid()` the program makes 1000 calls of
  `bpf_loop(nr_loops, empty callback)`; a hit is one callback iteration, and the latency
  (ns/op) is the time per iteration.
- `strncmp-no-helper` / `strncmp-helper`: one comparison of `cmp_str_len` characters per
  `getpgid()`, by an open-coded byte loop or by the `bpf_strncmp()` helper."""),
    ("md", """## Where the published figures come from

- `bpf_loop`: Joanne Koong, *[PATCH v3 bpf-next 4/4] selftest/bpf/benchs: add bpf_loop
  benchmark*, 2021-11-29, Message-ID `<20211129223725.2770730-5-joannekoong@fb.com>` (merged as
  commit ec151037af4f): "my dev machine", 1 thread, fentry trigger, nr_loops 10 .. 10^6
  (the message has no nr_loops = 1 row).
- `bpf_strncmp`: Hou Tao, *[PATCH bpf-next 4/5] selftests/bpf: add benchmark for
  bpf_strncmp() helper*, 2021-11-30, Message-ID `<20211130142215.1237217-5-houtao1@huawei.com>`
  (quoted in full in Andrii Nakryiko's reply of 2021-12-06): x86-64 figures (the message
  also has arm64 ones), tracepoint trigger as here, cmp_str_len 1 .. 4095.

""" + MACHINE_NOTE),
    ("code", SETUP),
    ("code", """# Published, from the messages cited above.
PUBLISHED_LOOP = pd.DataFrame({
    "nr_loops": [10, 100, 500, 1000, 5000, 10000, 50000, 100000, 500000, 1000000],
    "M ops/s": [198.519, 247.448, 260.839, 262.806, 264.211, 265.366, 235.986, 264.482, 309.773, 262.818],
    "ns/op": [5.037, 4.041, 3.834, 3.805, 3.785, 3.768, 4.238, 3.781, 3.228, 3.805],
}).set_index("nr_loops")
PUBLISHED_STRNCMP = pd.DataFrame({   # M comparisons/s, x86-64
    "cmp_str_len": [1, 8, 32, 64, 128, 512, 2048, 4095],
    "strncmp-no-helper": [3.504, 3.357, 3.064, 2.563, 1.975, 0.759, 0.329, 0.117],
    "strncmp-helper": [3.347, 3.307, 3.253, 3.040, 2.641, 1.574, 0.602, 0.327],
}).set_index("cmp_str_len")
PUBLISHED_LOOP.T"""),
    ("md", "## ns per iteration against nr_loops"),
    ("code", """NR_LOOPS = [1, 1000, 10**6] if QUICK else [1, 10, 100, 1000, 10**4, 10**5, 10**6]
loops = benchbpf.sweep("bpf-loop", nr_loops=NR_LOOPS, **RUN)
loop_df = loops.to_dataframe().rename(columns={"mean": "M ops/s", "latency_ns": "ns/op"})
print("trigger:", loops[0].metadata["trigger"])
loop_df.set_index("nr_loops")[["M ops/s", "median", "ns/op"]].join(
    PUBLISHED_LOOP.add_suffix(" (published)")).round(3)"""),
    ("code", """ax = loops.plot(y="latency_ns")
ax.plot(PUBLISHED_LOOP.index, PUBLISHED_LOOP["ns/op"], "o--", alpha=0.5, label="published")
ax.set_ylabel("ns per iteration"); ax.legend();"""),
    ("md", "## `bpf_strncmp()` against an open-coded loop"),
    ("code", """STR_LENS = [1, 64, 4095] if QUICK else [1, 8, 32, 64, 128, 512, 2048, 4095]
cmp = benchbpf.ResultSet([r for name in ("strncmp-no-helper", "strncmp-helper")
                          for r in benchbpf.sweep(name, cmp_str_len=STR_LENS, **RUN)],
                         axes=("cmp_str_len",))
strncmp = cmp.to_dataframe().pivot(index="cmp_str_len", columns="name", values="median")
strncmp["helper / no helper"] = strncmp["strncmp-helper"] / strncmp["strncmp-no-helper"]
pub = PUBLISHED_STRNCMP.assign(**{"helper / no helper": PUBLISHED_STRNCMP["strncmp-helper"]
                                   / PUBLISHED_STRNCMP["strncmp-no-helper"]})
strncmp.join(pub.add_suffix(" (published)")).round(3)"""),
    ("code", """ax = cmp.plot(x="cmp_str_len", hue="name")
ax.set_ylabel("M comparisons/s (median, 95% CI)");"""),
    ("md", "## Conclusion (computed from the tables above)"),
    ("code", """ns = loop_df.set_index("nr_loops")["ns/op"]
print(f"bpf_loop: {ns.iloc[0]:.2f} ns per iteration at nr_loops={ns.index[0]}, "
      f"{ns.iloc[-1]:.2f} ns at {ns.index[-1]} (published {PUBLISHED_LOOP['ns/op'].iloc[0]:.2f} ns at 10, "
      f"{PUBLISHED_LOOP['ns/op'].iloc[-1]:.2f} ns at 10^6)")
big = [n for n in NR_LOOPS if n >= 1000]
print(f"from 1000 loops on the cost per iteration stays within {ns[big].min():.2f}..{ns[big].max():.2f} ns")
ratio = strncmp["helper / no helper"]
longest = ratio.index.max()
print(f"bpf_strncmp() is faster than the byte loop at {(ratio > 1).sum()} of {len(ratio)} lengths; "
      f"at {longest} characters {ratio[longest]:.2f}x "
      f"(published {pub.loc[longest, 'helper / no helper']:.2f}x)")
even = ratio[ratio > 1]
if len(even):
    print(f"the helper pulls ahead from cmp_str_len={even.index.min()} "
          f"(published: from {pub[pub['helper / no helper'] > 1].index.min()})")"""),
]

# ---------------------------------------------------------------- triggers
TRIGGER = [
    ("md", """# What firing a BPF program costs, by hook

Every `trig-*` benchmark this kernel runs, as ns per hit (1000 / M hits/s; one producer):
the user-space baselines (`trig-syscall-count`: a `getpgid()` loop, no BPF;
`trig-usermode-count`: a plain function call loop), the kernel-driven ones batched through
`BPF_PROG_TEST_RUN` (`trig-kernel-count`, `trig-tp`, `trig-rawtp`, kprobes, fentry...)
against `trig_batch_iters`, and the uprobe/uretprobe/USDT ones. Those this kernel refuses
are listed with the kernel's answer."""),
    ("md", """## Where the reference figures come from

The batched trigger benchmarks are those of Andrii Nakryiko's *selftests/bpf: add batched,
mostly in-kernel BPF triggering benchmarks* (commit 7df4e597ea2c, 2024). **That commit
message's table is not available here**, so no figure of the original study is shown.
What is shown instead is `../shared/reference/kernel-bench-newest-2cpu.md`: the kernel's own
`bench` at its newest upstream level run on a 2-vCPU machine of this kind (same kernel,
locked down), `-w1 -d3`, two passes (the mean of the two is used), batch 1, 100 (default)
and 1000. Those are the kernel bench's figures on comparable hardware, not the study's.

""" + MACHINE_NOTE),
    ("code", SETUP + "\nfrom benchbpf.harness.features import missing_features"),
    ("code", """# kernel-bench-newest-2cpu.md, M hits/s: (pass 1 + pass 2) / 2, by trig_batch_iters.
def mean2(a, b):
    return (a + b) / 2
REFERENCE = {
    ("trig-kernel-count", 1): mean2(3.02, 2.48), ("trig-kernel-count", 100): mean2(82.6, 81.6),
    ("trig-kernel-count", 1000): mean2(105.6, 106.2),
    ("trig-tp", 1): mean2(2.64, 2.38), ("trig-tp", 100): mean2(22.5, 19.6), ("trig-tp", 1000): mean2(24.3, 22.7),
    ("trig-rawtp", 1): mean2(2.85, 2.67), ("trig-rawtp", 100): mean2(30.2, 29.7), ("trig-rawtp", 1000): mean2(34.4, 31.2),
    ("trig-syscall-count", None): mean2(7.69, 7.81), ("trig-usermode-count", None): mean2(106.9, 105.8),
    ("trig-uprobe-nop", None): mean2(1.744, 1.531), ("trig-uprobe-push", None): mean2(1.688, 1.428),
    ("trig-uprobe-ret", None): mean2(1.727, 1.522), ("trig-uretprobe-nop", None): mean2(1.131, 1.120),
    ("trig-uretprobe-push", None): mean2(1.202, 1.041), ("trig-uretprobe-ret", None): mean2(1.188, 1.131),
    ("trig-uprobe-multi-nop", None): mean2(1.713, 1.703), ("trig-uprobe-multi-push", None): mean2(1.698, 1.739),
    ("trig-uprobe-multi-ret", None): mean2(1.749, 1.688), ("trig-uretprobe-multi-nop", None): mean2(1.166, 1.188),
    ("trig-uretprobe-multi-push", None): mean2(1.249, 1.188), ("trig-uretprobe-multi-ret", None): mean2(1.230, 1.129),
    ("trig-usdt-nop", None): mean2(1.842, 1.832),
}"""),
    ("md", "## What this kernel lets BPF do"),
    ("code", "print(benchbpf.features())"),
    ("md", """## Every trigger benchmark

Batched benchmarks are swept over `trig_batch_iters` (a grid sweep per benchmark); the
others run once. A benchmark this kernel refuses raises `benchbpf.UnsupportedError`
before anything is measured: it is recorded with the reason."""),
    ("code", """BATCHES = [1, 1000] if QUICK else [1, 10, 100, 1000]
names = [n for n in benchbpf.list_benchmarks() if n.startswith("trig-")]
rows, refused, batched_results = [], {}, []
for name in names:
    batched = "trig_batch_iters" in benchbpf.describe(name).params
    needs = ", ".join(missing_features(name)) or "-"
    try:
        if batched:
            results = benchbpf.sweep(name, trig_batch_iters=BATCHES, **RUN)
        else:
            results = benchbpf.ResultSet([benchbpf.run(name, **RUN)])
    except benchbpf.UnsupportedError as e:
        refused[name] = dict(benchmark=name, needs=needs, reason=str(e))
        continue
    for u in results.unsupported:     # a sweep may record what could not run
        refused.setdefault(u.name, dict(benchmark=u.name, needs=needs, reason=u.reason))
    if batched:
        batched_results += results
    for r in results:
        batch = r.params.get("trig_batch_iters") if batched else None
        rows.append(dict(benchmark=name, trig_batch_iters=batch, median_mps=r.median,
                         ns_per_hit=1e3 / r.median, reference_mps=REFERENCE.get((name, batch))))
hits = pd.DataFrame(rows).astype({"trig_batch_iters": "Int64"})
hits["reference ns/hit"] = 1e3 / hits["reference_mps"]
hits["here / reference"] = hits["median_mps"] / hits["reference_mps"]
print(f"{len(names)} trigger benchmarks: {len(set(hits.benchmark))} ran, {len(refused)} refused")
hits.round(3)"""),
    ("code", """pd.set_option("display.max_colwidth", 200)
pd.DataFrame(list(refused.values()), columns=["benchmark", "needs", "reason"])"""),
    ("code", """import matplotlib.pyplot as plt
fig, (a, b) = plt.subplots(1, 2, figsize=(15, 4.5))
benchbpf.ResultSet(batched_results, axes=("trig_batch_iters",)).plot(y="latency_ns", ax=a)
a.set_title("kernel-driven triggers: batching amortises the syscall")
batched = hits.dropna(subset=["trig_batch_iters"])
single = hits[hits.trig_batch_iters.isna()].set_index("benchmark")["ns_per_hit"].sort_values()
single.plot.barh(ax=b, logx=True); b.set_xlabel("ns per hit"); b.set_title("one run each")
plt.tight_layout()"""),
    ("md", "## Conclusion (computed from the tables above)"),
    ("code", """kernel = batched.pivot(index="trig_batch_iters", columns="benchmark", values="ns_per_hit")
lo, hi = kernel.index.min(), kernel.index.max()
for name in kernel.columns:
    print(f"{name}: {kernel.loc[lo, name]:.0f} ns per hit at batch {lo}, {kernel.loc[hi, name]:.1f} ns "
          f"at batch {hi} ({kernel.loc[lo, name] / kernel.loc[hi, name]:.0f}x less)")
if "trig-kernel-count" in kernel and "trig-rawtp" in kernel:
    print(f"at batch {hi} a raw tracepoint program adds "
          f"{kernel.loc[hi, 'trig-rawtp'] - kernel.loc[hi, 'trig-kernel-count']:.1f} ns per hit to the "
          f"driver loop; a tracepoint program "
          f"{kernel.loc[hi, 'trig-tp'] - kernel.loc[hi, 'trig-kernel-count']:.1f} ns")
base = single.get("trig-usermode-count")
probes = single[[n for n in single.index if n.startswith(("trig-uprobe", "trig-uretprobe", "trig-usdt"))]]
if base is not None and len(probes):
    print(f"user-space probes: {probes.min():.0f}..{probes.max():.0f} ns per hit, "
          f"{probes.min() / base:.0f}x..{probes.max() / base:.0f}x a plain call ({base:.1f} ns)")
ratio = hits["here / reference"].dropna()
print(f"{len(hits)} figures, {len(ratio)} with a reference: here / kernel bench reference median "
      f"{ratio.median():.2f} (range {ratio.min():.2f}..{ratio.max():.2f})")
print(f"refused here: {', '.join(refused) or 'none'}")"""),
]

# ---------------------------------------------------------------- RCU Tasks Trace
RCU = [
    ("md", """# RCU Tasks Trace: ticks per grace period against the number of tasks

`local-storage-tasks-trace`: `nr_procs` tasks sleep 0..3 s and call `getpgid()` in a loop;
a BPF program creates and deletes task local storage on each call, so every call queues an
RCU Tasks Trace callback. Each interval reports the `rcu_tasks_trace` kthread's CPU ticks
per grace period, and the grace-period latency where it can be measured
(`metadata["gp_latency_source"]`: fentry where the kernel loads it, else the kthread's
context switches)."""),
    ("md", """## Where the published figures come from

Dave Marchevsky, *[PATCH v4 bpf-next] selftests/bpf: Add benchmark for local_storage RCU
Tasks Trace usage*, 2022-07-05, Message-ID `<20220705190018.3239050-1-davemarchevsky@fb.com>`
(merged as commit 2b4b2621fd64): a virtualised Skylake with 8 CPUs, **15000 tasks only**,
before and after Paul McKenney's RCU Tasks patches. The message has no sweep over
`nr_procs`, so the only published point is 15000 tasks; this machine's kernel (6.18) has
those patches, so the "after" figures are the ones to set beside it.

""" + MACHINE_NOTE),
    ("code", SETUP + "\nfrom benchbpf import rcu_tasks_trace"),
    ("code", """PUBLISHED = pd.DataFrame({
    "gp latency us": [22298.551, 16969.197], "gp latency stddev us": [1302.165, 2525.053],
    "ticks per gp": [2.291, 1.146], "ticks per gp stddev": [0.324, 0.178],
}, index=pd.Index(["before RCU Tasks patches", "after"], name="15000 tasks (published)"))
PUBLISHED"""),
    ("code", """NR_PROCS = [1, 1000] if QUICK else [1, 100, 1000, 5000, 15000]
# Grace periods take tens of ms and a tick is several: longer runs than the other
# studies, for enough grace periods per point.
TT_RUN = dict(RUN, duration=DURATION * 5)
tt = benchbpf.sweep("local-storage-tasks-trace", nr_procs=NR_PROCS, **TT_RUN)
df = tt.to_dataframe()
df["ticks per gp"] = [rcu_tasks_trace.ticks_per_gp(r)[0] for r in tt]
df["ticks stdev"] = [rcu_tasks_trace.ticks_per_gp(r)[1] for r in tt]
df["gp latency us"] = [rcu_tasks_trace.gp_latency_us(r)[0] for r in tt]
df["grace periods"] = [sum(s.extra["gp_count"] for s in r.samples) for r in tt]
print("latency source:", tt[0].metadata.get("gp_latency_source"),
      tt[0].metadata.get("gp_latency_unavailable") or "")
df.set_index("nr_procs")[["ticks per gp", "ticks stdev", "gp latency us", "grace periods"]].round(3)"""),
    ("code", """import matplotlib.pyplot as plt
fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4))
a.errorbar(df["nr_procs"], df["ticks per gp"], yerr=df["ticks stdev"], marker="o", capsize=3, label="here")
a.plot([15000], [PUBLISHED.loc["after", "ticks per gp"]], "r*", markersize=12, label="published, after")
a.plot([15000], [PUBLISHED.loc["before RCU Tasks patches", "ticks per gp"]], "kx", markersize=10,
       label="published, before")
a.set_xscale("log"); a.set_xlabel("nr_procs"); a.set_ylabel("kthread ticks per grace period"); a.legend()
b.plot(df["nr_procs"], df["gp latency us"], "o-", label="here")
b.plot([15000], [PUBLISHED.loc["after", "gp latency us"]], "r*", markersize=12, label="published, after")
b.set_xscale("log"); b.set_xlabel("nr_procs"); b.set_ylabel("grace period latency, us"); b.legend();"""),
    ("md", "## Conclusion (computed from the tables above)"),
    ("code", """t = df.set_index("nr_procs")
few, many = t.index.min(), t.index.max()
print(f"ticks per grace period: {t.loc[few, 'ticks per gp']:.3f} with {few} tasks, "
      f"{t.loc[many, 'ticks per gp']:.3f} with {many} "
      f"({t.loc[many, 'ticks per gp'] / t.loc[few, 'ticks per gp']:.1f}x)")
if 15000 in t.index:
    print(f"at 15000 tasks: {t.loc[15000, 'ticks per gp']:.3f} ticks per grace period here, published "
          f"{PUBLISHED.loc['after', 'ticks per gp']} after / "
          f"{PUBLISHED.loc['before RCU Tasks patches', 'ticks per gp']} before the RCU Tasks patches")
lat = t["gp latency us"].dropna()
if len(lat):
    print(f"grace-period latency {lat.min() / 1e3:.1f}..{lat.max() / 1e3:.1f} ms over {len(lat)} task counts "
          f"(published at 15000 tasks, after: {PUBLISHED.loc['after', 'gp latency us'] / 1e3:.1f} ms)")
else:
    print("grace-period latency not measured here:", tt[0].metadata.get("gp_latency_unavailable"))"""),
]

#: Notebook file stem -> cell list, in the order of the studies.
# ---------------------------------------------------------------- seed claims
SEED_CLAIMS = [
    ("md", """# The original studies' A/B claims, decided on this kernel

Each benchmark family came with a claim of the form "B is faster (or slower) than A".
Here each claim is decided by `benchbpf.ab`: the two sides in rounds taken in turns,
until the 95 % confidence sequence of B/A lies within ±2 % of 1 ("same"), beyond it
("slower"/"faster"), is within ±1 %, or the budget runs out ("undecided"). A claim is
**confirmed** when the verdict goes its way, **refuted** when it goes the other way (or
says "same" where the claim saw a difference), **undecided** when the budget ran out
first. The ratio, its interval and the time each decision took are in the table at the
end."""),
    ("md", """## Where the published figures come from

The ratios below are computed from the published figures of the studies the other
notebooks cite, where a study gave both sides:

- ring buffer and perf buffer, sampled and not: Andrii Nakryiko, *[PATCH v4 bpf-next
  4/5] bpf: add BPF ringbuf and perf buffer benchmarks*, 2020-05-29, Message-ID
  `<20200529075424.3139988-5-andriin@fb.com>` (`ringbuf_vs_perfbuf.ipynb`); one producer
  only: the message has no perf buffer figures for more producers, so at 2 and 3
  producers the claim is that the one-producer ordering holds;
- `bpf_loop()`: Joanne Koong, Message-ID `<20211129223725.2770730-5-joannekoong@fb.com>`
  (`bpf_loop_strncmp.ipynb`), 3.8 ns per callback iteration; the open-coded `bpf_for()`
  iterator, added later, runs the same empty body without a callback per iteration, so
  the claim is that its iterations cost less; no study gave both side by side;
- `bpf_strncmp()` at 512 characters: Hou Tao, Message-ID
  `<20211130142215.1237217-5-houtao1@huawei.com>` (`bpf_loop_strncmp.ipynb`);
- a bloom filter in front of a hash map: Joanne Koong, Message-ID
  `<20211027234504.30744-6-joannekoong@fb.com>` (`bloom_filter.ipynb`): "30 % to 100 %
  faster", total operations;
- local storage at 16 against 17 maps (the cache has 16 slots): Dave Marchevsky,
  Message-ID `<20220620222554.270578-1-davemarchevsky@fb.com>` (`local_storage_cache.ipynb`);
- hash map lookups against updates a full map refuses: Anton Protopopov's lookup
  benchmark, Message-ID `<20230213091519.1202813-8-aspsk@isovalent.com>`
  (`hashmap_lookup.ipynb`), gave no update figures; the claim is that a refused update
  (a bucket search, then a failed allocation) costs more than a lookup.

""" + MACHINE_NOTE),
    ("code", """import os
import benchbpf
import pandas as pd

# BENCHBPF_QUICK=1 (the test suite): 8 short rounds a claim; otherwise ab's defaults
# (5 minutes at most a claim).
QUICK = benchbpf.quick()
AB = dict(max_rounds=8, budget=None, warmup=0.1, duration=0.3, interval=0.05) if QUICK \\
    else dict()
print("quick mode" if QUICK else "full run", AB, "| load average", os.getloadavg(),
      "| CPUs", os.cpu_count())"""),
    ("code", """# (claim, A, B, direction the study saw, published B/A or None, ab options)
CLAIMS = [
    ("ring buffer ahead of perf buffer, 1 producer", "rb-libbpf", "pb-libbpf",
     "slower", 0.931 / 12.054, dict(different_benchmarks=True)),
    ("ring buffer ahead of perf buffer, 2 producers", "rb-libbpf -p 2", "pb-libbpf -p 2",
     "slower", None, dict(different_benchmarks=True)),
    ("ring buffer ahead of perf buffer, 3 producers", "rb-libbpf -p 3", "pb-libbpf -p 3",
     "slower", None, dict(different_benchmarks=True)),
    ("sampled notification speeds the perf buffer up", "pb-libbpf", "pb-libbpf --rb-sampled",
     "faster", 9.889 / 0.931, {}),
    ("sampled notification costs the ring buffer a little", "rb-libbpf",
     "rb-libbpf --rb-sampled", "slower", 11.563 / 12.054, {}),
    ("open-coded bpf_for() iterations cost less than bpf_loop()'s", "bpf-loop", "bpf-for",
     "faster", None, dict(different_benchmarks=True)),
    ("bpf_strncmp() beats a byte loop at 512 characters",
     "strncmp-no-helper --cmp-str-len 512", "strncmp-helper --cmp-str-len 512",
     "faster", 1.574 / 0.759, dict(different_benchmarks=True)),
    ("a bloom filter in front speeds hash map lookups up", "hashmap-without-bloom",
     "hashmap-with-bloom", "faster", None, dict(different_benchmarks=True,
                                                counter="total_ops")),
    ("local storage: 17 maps overflow the 16-slot cache",
     "local-storage-cache-seq-get --nr_maps 16", "local-storage-cache-seq-get --nr_maps 17",
     "slower", 38.778 / 44.515, {}),
    ("a refused update of a full hash map costs more than a lookup", "bpf-hashmap-lookup",
     "bpf-hashmap-full-update", "slower", None, dict(different_benchmarks=True)),
]
len(CLAIMS)"""),
    ("md", """## The comparisons

One `benchbpf.ab` per claim, in turn; each prints its line as it ends. A claim this
kernel cannot run is said so (`UnsupportedError`) and counted neither way."""),
    ("code", """def status(expected, verdict):
    if verdict == "undecided":
        return "undecided"
    return "confirmed" if verdict == expected else "refuted"

rows, results = [], {}
for claim, a, b, expected, published, options in CLAIMS:
    try:
        r = benchbpf.ab(a, b, progress=False, **AB, **options)
    except benchbpf.UnsupportedError as e:
        print(f"{claim}: cannot run here: {e}")
        rows.append(dict(claim=claim, status="cannot run here"))
        continue
    results[claim] = r
    print(r)
    rows.append(dict(claim=claim, A=a, B=b, expected=expected,
                     published_ratio=published, ratio=r.ratio, low=r.low, high=r.high,
                     verdict=r.verdict, status=status(expected, r.verdict),
                     rounds=len(r.rounds), seconds=round(r.wall_s)))
table = pd.DataFrame(rows).set_index("claim")
table"""),
    ("md", """## A claim in detail

Every comparison keeps its rounds; `to_markdown()` is the table a commit message would
carry."""),
    ("code", """first = next(iter(results.values()))
print(first.to_markdown())"""),
    ("code", """counts = table["status"].value_counts()
print("claims:", len(table), "|", ", ".join(f"{k} {v}" for k, v in counts.items()),
      "| machine:", os.cpu_count(), "CPUs, kernel", os.uname().release,
      "| quick mode: figures of 8 short rounds, not decisions to quote" if QUICK else "")"""),
]

NOTEBOOKS = {
    "quickstart": QUICKSTART,
    "ringbuf_vs_perfbuf": RINGBUF,
    "local_storage_cache": LOCAL_STORAGE,
    "hashmap_lookup": HASHMAP,
    "bloom_filter": BLOOM,
    "bpf_loop_strncmp": LOOP_STRNCMP,
    "trigger_cost": TRIGGER,
    "rcu_tasks_trace": RCU,
    "seed_claims": SEED_CLAIMS,
}


def notebook(cells, old=None):
    """The notebook of `cells`; code cells whose source equals the same
    cell of `old` (a notebook dict) keep its outputs."""
    old_cells = (old or {}).get("cells", [])
    out = []
    for i, (kind, text) in enumerate(cells):
        # Ids by position: stable across regenerations, so diffs show only real changes.
        cell = {"cell_type": "markdown" if kind == "md" else "code", "id": f"cell-{i}",
                "metadata": {}, "source": text.splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
            if i < len(old_cells) and old_cells[i].get("cell_type") == "code" and \
                    "".join(old_cells[i].get("source", [])) == text:
                cell.update(execution_count=old_cells[i].get("execution_count"),
                            outputs=old_cells[i].get("outputs", []))
        out.append(cell)
    metadata = {"kernelspec": {"display_name": "Python 3", "language": "python",
                               "name": "python3"},
                "language_info": {"name": "python"}}
    return {"cells": out, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}


def sources(nb):
    """(cell type, source) of every cell: what the generator controls."""
    return [(c["cell_type"], "".join(c["source"])) for c in nb["cells"]]


def path_of(stem):
    return NOTEBOOKS_DIR / f"{stem}.ipynb"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if a notebook's cells differ from its cell list")
    args = ap.parse_args(argv)
    stale = []
    for stem, cells in NOTEBOOKS.items():
        path = path_of(stem)
        old = json.loads(path.read_text()) if path.exists() else None
        new = notebook(cells, old)
        if args.check:
            if old is None or sources(old) != sources(new):
                stale.append(path)
            continue
        path.write_text(json.dumps(new, indent=1, ensure_ascii=False) + "\n")
        print(path)
    if stale:
        print("out of date (run scripts/make_notebooks.py):", *map(str, stale), sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
