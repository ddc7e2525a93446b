"""Write notebooks/*.ipynb from the cell lists below (keeps them diffable and tested)."""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent

QUICKSTART = [
    ("md", "# benchbpf quick start\n\nRun the kernel's BPF benchmarks from Python, "
           "look at the samples, compare and plot. Needs root (or CAP_BPF + CAP_PERFMON)."),
    ("code", "import benchbpf\nbenchbpf.__version__, len(benchbpf.list_benchmarks())"),
    ("md", "What this kernel can run (each probe really loads a program):"),
    ("code", "print(benchbpf.features())"),
    ("md", "## One run\nA `Result` prints as the kernel bench's summary line and keeps every sample."),
    ("code", "r = benchbpf.run(\"trig-rawtp\", warmup=1, duration=3)\nprint(r)\n"
             "r.mean, r.stdev, r.median, r.percentile(90), r.metadata[\"trigger\"]"),
    ("code", "r"),
    ("code", "[(round(s.interval_ns / 1e6, 3), round(s.hits_mps, 3)) for s in r.samples]"),
    ("md", "## Ring buffer vs perf buffer\nThe headline family: libbpf consumer, sampled notifications."),
    ("code", "rb = benchbpf.ringbuf(producers=1, duration=3)\n"
             "pb = benchbpf.perfbuf(duration=3, sampled=True)\nprint(rb)\nprint(pb)\n"
             "print(benchbpf.compare(pb, rb))"),
    ("md", "## Sweep and plot\nBatching amortises the `BPF_PROG_TEST_RUN` syscall of kernel-driven triggers."),
    ("code", "sw = benchbpf.sweep(\"trig-rawtp\", \"trig_batch_iters\", [1, 10, 100, 1000], "
             "warmup=1, duration=2)\nprint(sw)"),
    ("code", "%matplotlib inline\nax = sw.plot()\nax.set_xscale(\"log\")"),
    ("md", "## Save and load\n"),
    ("code", "r.to_json(\"/tmp/trig-rawtp.json\")\n"
             "benchbpf.Result.from_json(\"/tmp/trig-rawtp.json\") == r"),
]


def notebook(cells):
    out = []
    for kind, text in cells:
        cell = {"cell_type": "markdown" if kind == "md" else "code", "metadata": {},
                "source": text.splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        out.append(cell)
    return {"cells": out, "metadata": {"kernelspec": {"display_name": "Python 3",
                                                      "language": "python", "name": "python3"},
                                       "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


if __name__ == "__main__":
    path = ROOT / "notebooks" / "quickstart.ipynb"
    path.write_text(json.dumps(notebook(QUICKSTART), indent=1) + "\n")
    print(path)
