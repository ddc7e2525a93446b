#!/usr/bin/env python3
"""Execute notebooks in place with a real Jupyter kernel and save them with their outputs.

    python3 scripts/run_notebooks.py                      # every notebook, full runs
    python3 scripts/run_notebooks.py ringbuf_vs_perfbuf   # one (a stem, file name or path)
    python3 scripts/run_notebooks.py --quick              # BENCHBPF_QUICK=1: short runs
    python3 scripts/run_notebooks.py --quick --no-save    # check they run, keep the files

The committed notebooks carry the outputs of a full (not --quick) run; the first
code cell of each prints which it was, the load average and the CPU count.  Cells
run top to bottom in one kernel (the "python3" kernel: this interpreter, through
ipykernel) started in notebooks/, importing the benchbpf this script imports.  A
failing cell stops that notebook, which is then not saved, and the exit status is
1; the others still run.  Each notebook's wall time is printed.
"""
import argparse
import pathlib
import re
import sys
import time

import _record

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS_DIR = ROOT / "notebooks"


class NotebookError(Exception):
    """A cell failed: the notebook, the cell's source and the error."""

    def __init__(self, path, source, error):
        self.path, self.source, self.error = path, source, error
        super().__init__(f"{path.name}: cell failed:\n{source}\n---\n{error}")


def notebook_paths(names=()):
    """Paths of the notebooks named (stem, file name or path); every one if none."""
    if not names:
        return sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
    out = []
    for name in names:
        path = pathlib.Path(name)
        if not path.suffix:
            path = NOTEBOOKS_DIR / f"{name}.ipynb"
        elif not path.exists() and (NOTEBOOKS_DIR / path.name).exists():
            path = NOTEBOOKS_DIR / path.name
        if not path.exists():
            have = ", ".join(p.stem for p in sorted(NOTEBOOKS_DIR.glob("*.ipynb")))
            raise FileNotFoundError(f"no notebook {name!r}; have: {have}")
        out.append(path)
    return out


def kernel_env(quick):
    """The environment the kernel inherits: this script's benchbpf importable,
    quick or not."""
    env = _record.child_env()
    if quick:
        env["BENCHBPF_QUICK"] = "1"
    else:
        env.pop("BENCHBPF_QUICK", None)
    # No progress bars in saved outputs; figures render inline, no window opens.
    env["BENCHBPF_PROGRESS"] = "0"
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    return env


def execute(path, quick=False, timeout=1800):
    """Run every cell of the notebook at `path`; return the executed notebook.

    Raises NotebookError naming the failing cell's source.  `timeout` is per
    cell, seconds."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(str(path), as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS_DIR)}})
    try:
        client.execute(env=kernel_env(quick))
    except CellExecutionError as e:
        failing = next((c for c in nb.cells if c.cell_type == "code" and any(
            o.get("output_type") == "error" for o in c.get("outputs", []))), None)
        source = failing.source if failing is not None else "(cell not found)"
        # The kernel's traceback is coloured for a terminal.
        raise NotebookError(path, source, re.sub(r"\x1b\[[0-9;]*m", "", str(e))) from None
    return nb


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="notebooks (default: all in notebooks/)")
    ap.add_argument("--quick", action="store_true",
                    help="BENCHBPF_QUICK=1: short runs and fewer points")
    ap.add_argument("--no-save", action="store_true", help="run only; leave the files as they are")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per cell (1800)")
    args = ap.parse_args(argv)
    import nbformat

    failed = []
    total = time.monotonic()
    for path in notebook_paths(args.names):
        start = time.monotonic()
        try:
            nb = execute(path, quick=args.quick, timeout=args.timeout)
        except NotebookError as e:
            print(f"{path.name}: FAILED after {time.monotonic() - start:.0f} s\n{e}",
                  file=sys.stderr)
            failed.append(path.name)
            continue
        if not args.no_save:
            nbformat.write(nb, str(path))
        print(f"{path.name}: {time.monotonic() - start:.0f} s"
              f"{'' if args.no_save else ', saved'}", flush=True)
    print(f"total: {time.monotonic() - total:.0f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
