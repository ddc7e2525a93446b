#!/usr/bin/env python3
"""The local storage cache cliff: local-storage-cache-seq-get for the original
study's map counts, each run with its overhead control (adjust_overhead=True),
twice; prints one line per run and writes /tmp/ls_cliff.json.

    BENCHBPF_LOCK_DIR=... python3 scripts/local_storage_cliff.py
"""
import json, statistics, sys, warnings
import benchbpf
from benchbpf import local_storage as ls
warnings.simplefilter("ignore")
out = {}
for n in ls.CLIFF_NR_MAPS:
    rows = []
    for rep in range(2):
        r = ls.seq_get(nr_maps=n, adjust_overhead=True, warmup=1, duration=3)
        rows.append(dict(mops=r.mean, sd=r.stdev, lat=r.latency_ns, ctl=r.control_latency_ns,
                         adj=r.adjusted_latency_ns, imp=r.stat("important_hits")[0],
                         conc=r.metadata["concurrent_runs"]))
        print(n, rows[-1], flush=True)
    out[n] = rows
json.dump(out, open("/tmp/ls_cliff.json", "w"), indent=1)
