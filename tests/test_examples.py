"""Every example in README.md and docs/**/*.md is true of the code.

Python: the fenced ```python blocks of a page (and `>>>` sessions) run in
order in one namespace, as a reader would run them, in a temporary
directory.  A run that does not say how long to take is shortened here, for
this test only: the defaults benchbpf/_runner.py fills in when warmup,
duration or interval are not given (_build_env) become SHORT_DEFAULTS; a
value the example gives is kept, and precision runs are left alone.
A block preceded by `<!-- example: skip-run (why) -->` (it boots a guest,
or runs for minutes) is compiled, its imports run, and every name and
attribute it reads from what the page has defined so far must exist.

Shell: in ```sh/```bash/```shell blocks every line, in ```console blocks the
lines after a `$ ` prompt (the rest is output), may hold commands; those that
call `benchbpf` or `python3 -m benchbpf` (python3 by path too, as
`.venv/bin/python3`; after `&&`, `;` or `|` too) are parsed and checked by the
CLI's own main(), stopped where it would start to measure, boot or load files
(STOPS).  The cheap ones (listing, help, short runs, compare of files the page
made) then run for real and must exit 0; a shell block marked skip-run is only
checked.

Every failure names the file, line and block."""
import ast
import builtins
import contextlib
import io
import re
import shlex
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

import benchbpf
from benchbpf.harness import _cmdline, _runner
from benchbpf.tools import cli, report
from benchbpf import hostdrift, vm
from benchbpf import ab as ab_module
from benchbpf import history as history_module
from benchbpf.tools import history as history_tool
from benchbpf.tools import show as show_tool

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: What a run of an example takes when it does not say, s.
SHORT_DEFAULTS = {"warmup": 0.1, "duration": 0.3, "interval": 0.1}
#: A command line runs for real when it measures no longer than this, s.
CHEAP_RUN_S = 1.5
CHEAP_TOTAL_S = 5.0
#: A quick suite report runs for real when it plans at most this many runs.
CHEAP_REPORT_RUNS = 2

PY_LANGS = {"python", "py", "python3", "pycon"}
SH_LANGS = {"sh", "bash", "shell", "console"}
MARKERS = {"skip-run"}

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
MARKER = re.compile(r"^<!--\s*example:\s*(?P<what>[\w-]+)\s*(?:\((?P<why>[^)]*)\))?\s*-->$")


def pages():
    """README.md and the manual's Markdown sources (not build output)."""
    found = sorted(p for p in DOCS.rglob("*.md")
                   if not any(part.startswith(("_", ".")) for part in p.relative_to(DOCS).parts))
    return [ROOT / "README.md", *found]


@dataclass
class Block:
    path: Path
    line: int       # the block's first line of code, 1-based
    number: int     # the block's place among the page's fenced blocks, 1-based
    lang: str
    text: str
    marker: "str | None"

    def where(self):
        return f"{self.path.relative_to(ROOT)}:{self.line} (block {self.number}, {self.lang})"


def _language(info):
    words = info.split()
    if not words:
        return ""
    if words[0].startswith("{"):     # MyST: ```{code-block} python
        return words[1].lower() if words[0] in ("{code-block}", "{code}", "{sourcecode}") \
            and len(words) > 1 else ""
    return words[0].lower()


def blocks(path):
    """The fenced code blocks of a Markdown page, with the marker before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], len(m["indent"])
        end = i + 1
        while end < len(lines) and not re.fullmatch(
                rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*", lines[end]):
            end += 1
        # A fence indented (in a list) indents its lines as much.
        body = [line[indent:] if not line[:indent].strip() else line
                for line in lines[i + 1:end]]
        first = i + 2
        if m["info"].strip().startswith("{"):   # a directive's :option: lines
            while body and body[0].startswith(":"):
                body.pop(0)
                first += 1
        before = i - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        marker = MARKER.match(lines[before].strip()) if before >= 0 else None
        found.append(Block(path, first, len(found) + 1, _language(m["info"]), "\n".join(body),
                           marker["what"] if marker else None))
        i = end + 1
    return found


def _page_id(path):
    return str(path.relative_to(ROOT))


PYTHON_PAGES = [p for p in pages() if any(b.lang in PY_LANGS for b in blocks(p))]
SHELL_PAGES = [p for p in pages() if any(b.lang in SH_LANGS for b in blocks(p))]


# ---- Python ----

def python_source(block):
    """The block's code, on the block's own lines: a `>>>` session keeps what
    follows its prompts, and its output lines become blank."""
    lines = block.text.splitlines()
    if not any(line.lstrip().startswith(">>>") for line in lines):
        return block.text
    code = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith((">>> ", "... ")) or stripped in (">>>", "..."):
            code.append(stripped[4:])
        else:
            code.append("")
    return "\n".join(code)


def compiled(block):
    """The block compiled so that tracebacks point at the Markdown file's lines."""
    padded = "\n" * (block.line - 1) + python_source(block)
    return compile(padded, str(block.path), "exec"), ast.parse(padded)


def _bound_names(tree):
    """Names a block binds itself: assignments, defs, imports, arguments."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def unresolved(tree, namespace):
    """What a block reads that does not exist: names defined neither by the
    block nor before it, and attributes missing from what they are read on
    (followed from names the page defined earlier, e.g. benchbpf.vm.run)."""
    # The page's imports have run: what they bind is checked like the rest.
    imported = {(a.asname or a.name).split(".")[0] for n in tree.body
                if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    bound = _bound_names(tree) - imported
    problems = set()

    def known(name):
        return name in namespace or hasattr(builtins, name)

    def value(name):
        return namespace[name] if name in namespace else getattr(builtins, name)

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                and node.id not in bound and not known(node.id):
            problems.add(f"line {node.lineno}: name {node.id!r} is not defined")
        if not isinstance(node, ast.Attribute):
            continue
        chain, root = [], node
        while isinstance(root, ast.Attribute):
            chain.append(root.attr)
            root = root.value
        if not isinstance(root, ast.Name) or root.id in bound or not known(root.id):
            continue
        obj, path = value(root.id), root.id
        for attr in reversed(chain):
            if not hasattr(obj, attr):
                problems.add(f"line {node.lineno}: {path} has no attribute {attr!r}")
                break
            obj, path = getattr(obj, attr), f"{path}.{attr}"
    return sorted(problems)


@pytest.fixture
def short_runs(monkeypatch):
    """Runs whose caller gives no warm-up, duration or interval take
    SHORT_DEFAULTS instead of the runner's defaults (precision runs keep theirs)."""
    build_env = _runner._build_env

    def shortened(info, opts):
        if opts.get("precision") is None:
            for key, value in SHORT_DEFAULTS.items():
                if opts.get(key) is None:
                    opts[key] = value
        return build_env(info, opts)
    monkeypatch.setattr(_runner, "_build_env", shortened)


def test_short_defaults_apply_only_where_the_caller_gives_none(short_runs):
    short = benchbpf.run("count-global")
    assert short.params["duration"] == SHORT_DEFAULTS["duration"]
    assert short.params["warmup"] == SHORT_DEFAULTS["warmup"]
    given = benchbpf.run("count-global", warmup=0, duration=0.4, interval=0.2)
    assert (given.params["warmup"], given.params["duration"], len(given.samples)) == (0, 0.4, 2)


@pytest.mark.parametrize("path", PYTHON_PAGES, ids=_page_id)
def test_python_examples_run(path, short_runs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = {"__name__": "__example__"}
    ran = 0
    try:
        for block in blocks(path):
            if block.lang not in PY_LANGS:
                continue
            try:
                code, tree = compiled(block)
            except SyntaxError as e:
                pytest.fail(f"{block.where()}: does not compile: {e}", pytrace=False)
            if block.marker == "skip-run":
                imports = ast.Module([n for n in tree.body
                                      if isinstance(n, (ast.Import, ast.ImportFrom))], [])
                exec(compile(imports, str(block.path), "exec"), namespace)
                problems = unresolved(tree, namespace)
                assert not problems, f"{block.where()}: " + "; ".join(problems)
                continue
            try:
                exec(code, namespace)
            except Exception:
                pytest.fail(f"{block.where()}: failed:\n{traceback.format_exc()}",
                            pytrace=False)
            ran += 1
    finally:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            plt.close("all")
    assert ran or any(b.marker == "skip-run" for b in blocks(path))


# ---- shell ----

class _Stop(BaseException):
    """The command line got as far as measuring, booting or loading files."""


#: Where check_line() stops main() before the work: every benchmark run, and
#: per subcommand what does its work.  A subcommand missing here is not
#: checked (it could run for minutes): its examples fail until it is added.
STOPS = {
    "report": ((report, "run_suite"),),
    "compare": ((report, "load"),),
    "host-drift": ((hostdrift, "calibrate"), (hostdrift, "load")),
    "--kernel": ((vm, "run_many"), (vm, "features")),
    # Every side is checked before the rounds start, where this stops.
    "ab": ((ab_module, "_runner_for"),),
    # Arguments parsed, before the store is opened or the detector installed.
    "history": ((history_tool, "Store"), (history_module, "install_detector")),
    "show": ((show_tool, "load"),),
}


def commands(block):
    """(line, argv) of every benchbpf command in a shell block."""
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        line, number = lines[i], block.line + i
        i += 1
        if block.lang == "console":
            if not line.startswith("$ "):
                continue            # output
            line = line[2:]
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + " " + lines[i].lstrip("> ")
            i += 1
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        segment = []
        for token in [*lexer, ";"]:
            if token in ("&&", "||", ";", "|", "&"):
                while segment and re.match(r"[A-Za-z_]\w*=", segment[0]):
                    segment.pop(0)      # VAR=value before the command
                if segment[:1] == ["benchbpf"]:
                    yield number, segment[1:]
                elif segment[:1] and segment[0].rsplit("/", 1)[-1] in ("python3", "python") \
                        and segment[1:3] == ["-m", "benchbpf"]:
                    yield number, segment[3:]     # python3 by name or path (.venv/bin/)
                segment = []
            else:
                segment.append(token)


@dataclass
class Checked:
    status: "int | None"    # main()'s status, None when it stopped before doing the work
    output: str
    runs: list              # run() keywords of each run it would take
    stopped_at: "str | None"


def check_line(argv, monkeypatch):
    """main(argv), stopped where it would start the work (a benchmark's run,
    a suite, a calibration, a guest, reading result files): every check it
    makes before that is made, and the run's options are checked as run()
    checks them (benchbpf.check)."""
    runs = []

    def stop(what):
        def stopped(*args, **kwargs):
            raise _Stop(what)
        return stopped

    def run(name, callback=None, **options):
        _runner.check(name, **options)
        runs.append(options)
        raise _Stop("run")

    with monkeypatch.context() as m:
        m.setattr(_runner, "run", run)
        for module, name in (stop_at for stops in STOPS.values() for stop_at in stops):
            m.setattr(module, name, stop(f"{module.__name__}.{name}"))
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                status, stopped_at = cli.main(argv), None
            except _Stop as e:
                status, stopped_at = None, e.args[0]
            except SystemExit as e:
                status, stopped_at = e.code, None
    return Checked(status, out.getvalue(), runs, stopped_at)


def cheap(argv, checked, cwd):
    """Whether a checked command line is cheap enough to run for real."""
    if checked.stopped_at is None:
        return True                     # -l, --help, -V, --list-scenarios
    if checked.stopped_at == "run":
        options = checked.runs[0]
        warmup, duration = options.get("warmup"), options.get("duration")
        if options.get("precision") is not None or not isinstance(warmup, (int, float)) \
                or duration is None:
            return False
        repeat = _cmdline._checking_parser().parse_args(argv).repeat
        return warmup + duration <= CHEAP_RUN_S and \
            repeat * (warmup + duration) <= CHEAP_TOTAL_S
    if checked.stopped_at == "benchbpf.tools.report.run_suite":
        args = cli._report_parser().parse_args(argv[1:])
        return args.quick and args.repeat == 1 and \
            len(report.plan(True, args.only, not args.no_prog_stats)) <= CHEAP_REPORT_RUNS
    if checked.stopped_at == "benchbpf.tools.report.load":
        args = cli._compare_parser().parse_args(argv[1:])
        return (cwd / args.base).exists() and (cwd / args.new).exists()
    if checked.stopped_at == "benchbpf.tools.show.load":
        return all((cwd / f).exists() for f in argv[1:] if not f.startswith("-"))
    return False        # host-drift, --kernel


@pytest.mark.parametrize("path", SHELL_PAGES, ids=_page_id)
def test_shell_examples_parse_and_cheap_ones_run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    failures = []
    for block in blocks(path):
        if block.lang not in SH_LANGS:
            continue
        for line, argv in commands(block):
            where = f"{path.relative_to(ROOT)}:{line} (block {block.number}, {block.lang})"
            shown = "benchbpf " + shlex.join(argv)
            if argv and argv[0] in cli.SUBCOMMANDS and argv[0] not in STOPS:
                failures.append(f"{where}: `{shown}`: subcommand {argv[0]} has no stop "
                                "point in STOPS (tests/test_examples.py): not checked")
                continue
            checked = check_line(argv, monkeypatch)
            if checked.status not in (None, 0):
                failures.append(f"{where}: `{shown}` refused (exit {checked.status}):\n"
                                f"{checked.output.strip()}")
                continue
            if block.marker == "skip-run" or not cheap(argv, checked, tmp_path):
                continue
            done = subprocess.run([sys.executable, "-m", "benchbpf", *argv], cwd=tmp_path,
                                  capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                failures.append(f"{where}: `{shown}` exited {done.returncode}:\n"
                                f"{(done.stderr or done.stdout).strip()[-2000:]}")
    assert not failures, "\n\n".join(failures)


# ---- the checks themselves ----

def test_markers_are_known():
    unknown = [f"{b.where()}: {b.marker!r}" for p in pages() for b in blocks(p)
               if b.marker is not None and b.marker not in MARKERS]
    assert not unknown, f"unknown example markers (known: {sorted(MARKERS)}): {unknown}"


def test_blocks_and_commands_are_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n<!-- example: skip-run (boots a guest) -->\n```python\n"
                    "x = 1\n```\n\n```console\n$ FOO=1 benchbpf -l | head\nbenchbpf output\n"
                    "$ ./x && python3 -m benchbpf -q \\\n  count-local  # a comment\n"
                    "$ .venv/bin/python3 -m benchbpf -l\n```\n")
    found = blocks(page)
    assert [(b.lang, b.line, b.marker) for b in found] == [("python", 5, "skip-run"),
                                                           ("console", 9, None)]
    assert list(commands(found[1])) == [(9, ["-l"]), (11, ["-q", "count-local"]), (13, ["-l"])]


def test_a_bad_command_line_is_refused(monkeypatch):
    assert check_line(["-d", "0.5", "count-local"], monkeypatch).status == 2
    assert check_line(["nope-bench"], monkeypatch).status == 2
    assert check_line(["count-local", "--rb-sampled"], monkeypatch).status == 2
    ok = check_line(["-w0", "-d0.3", "--interval", "0.1", "count-local"], monkeypatch)
    assert (ok.status, ok.stopped_at, ok.runs[0]["duration"]) == (None, "run", 0.3)


def test_unresolved_names_and_attributes_are_reported():
    tree = ast.parse("import benchbpf\nbenchbpf.vm.run\nbenchbpf.vm.nosuch\nx = 1\nx.y\n"
                     "undefined_name\n")
    namespace = {"benchbpf": benchbpf}
    assert unresolved(tree, namespace) == [
        "line 3: benchbpf.vm has no attribute 'nosuch'",
        "line 6: name 'undefined_name' is not defined"]
