"""The command line the measurement scripts share: `--out FILE` takes the
measurement and writes its record, `--summarize FILE` prints the record's
tables (the markdown of its results/ page)."""
import argparse


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
