"""What the measurement scripts share: their command line (`--out FILE`
takes the measurement and writes its record, `--summarize FILE` prints the
record's tables, the markdown of its results/ page) and the environment of
the `python3 -m benchbpf` commands they start.

A sibling module, imported as `import _record`: Python puts a script's own
folder first on sys.path (scripts/README.md says why this is enough)."""
import argparse
import os

import benchbpf


def main(doc, run, summarize, add_arguments=None, other=None):
    """Parse the command line and do what it asks; the script's exit status.
    run(args) takes the measurement; summarize(path) returns the tables;
    add_arguments(parser) adds the script's own options; other(args), when
    given, may answer first (True: done)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", help="the record to write")
    ap.add_argument("--summarize", metavar="FILE", help="print the tables of a record")
    if add_arguments:
        add_arguments(ap)
    args = ap.parse_args()
    if other and other(args):
        return 0
    if args.summarize:
        print(summarize(args.summarize))
        return 0
    if not args.out:
        ap.error("--out FILE or --summarize FILE")
    run(args)
    return 0


def child_env():
    """The environment of a Python started to run benchbpf (`python3 -m
    benchbpf ...`) beside this script: it imports the benchbpf this script
    imported (an installed one or PYTHONPATH's), so that the command and
    the API measure the same code."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(benchbpf.__file__)))
    path = [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(path))
