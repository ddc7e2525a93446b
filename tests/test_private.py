"""Private means private: what the project shows its users (the scripts, the
notebooks, the manual's code and its Sphinx extension) uses only public
names of benchbpf.  A leading underscore marks what may change without
notice; code that readers copy must not depend on it.

Caught: `from benchbpf.x._y import`, `from benchbpf.x import _y`, `import
benchbpf.x._y`, and `_y` read off anything imported from benchbpf
(`benchbpf._core`, `cli._dest`, `ab_module._simulated_log_ratios`), also
in code a script hands a child Python as a string.  Dunders (`benchbpf.__file__`) are not private.  No exemptions."""
import ast
import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parent.parent

#: benchbpf.a._b written out (any text: shell lines, console blocks).
DOTTED = re.compile(r"\bbenchbpf(?:\.[A-Za-z]\w*)*\._[A-Za-z0-9]\w*")
#: from benchbpf... import ..., _b  (text that is not Python as a whole).
FROM_IMPORT = re.compile(r"\bfrom\s+benchbpf[\w.]*\s+import\s+\(?([\w\s,]*)")
#: Markdown code fences: the opening line's info string and the block.
FENCE = re.compile(r"^(```+|~~~+)([^\n]*)\n(.*?)^\1\s*$", re.M | re.S)


def _private(part):
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _python_offences(tree):
    """(line, what) for each private benchbpf name an AST imports or reads."""
    bound = set()       # names bound to benchbpf modules or objects
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "benchbpf":
            if any(_private(p) for p in node.module.split(".")):
                out.append((node.lineno, f"from {node.module} import ..."))
            for a in node.names:
                if _private(a.name):
                    out.append((node.lineno, f"from {node.module} import {a.name}"))
                bound.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] != "benchbpf":
                    continue
                if any(_private(p) for p in parts):
                    out.append((node.lineno, f"import {a.name}"))
                bound.add(a.asname or parts[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain, base = [node.attr], node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            # Reported where the first private part is read (once per chain).
            if isinstance(base, ast.Name) and base.id in bound and _private(node.attr) \
                    and not any(_private(c) for c in chain[1:]):
                out.append((node.lineno, ".".join([base.id] + chain[::-1])))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # Code in a string: what a script hands a child `python3 -c`.
            out += [(node.lineno + line - 1, what) for line, what in _text_offences(node.value)]
    return out


def _text_offences(text):
    """(line, what) for private benchbpf names written in text that is not
    Python as a whole (shell, console sessions)."""
    out = []
    for m in DOTTED.finditer(text):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(0)))
    for m in FROM_IMPORT.finditer(text):
        for name in re.split(r"[\s,()]+", m.group(1)):
            if name and _private(name.split(" as ")[0]):
                out.append((text.count("\n", 0, m.start()) + 1, f"import {name}"))
    return out


def offences(source, python=True):
    """(line, what) for each private benchbpf name `source` uses: by its AST
    when it is Python (IPython magics and doctest prompts left out), else by
    the text."""
    if python:
        lines = []
        for line in source.splitlines():
            stripped = line.lstrip()
            if stripped.startswith(("%", "!")):
                line = ""         # an IPython magic or shell escape
            elif stripped.startswith((">>> ", "... ")) or stripped in (">>>", "..."):
                line = stripped[4:]
            lines.append(line)
        try:
            return _python_offences(ast.parse("\n".join(lines)))
        except SyntaxError:
            pass
    return _text_offences(source)


def _report(found):
    def place(item):
        where = item[0].rsplit(":", 1)
        return where[0], int(where[1])
    return "private benchbpf names used (make them public, or use a public one):\n" + \
        "\n".join(f"  {where}: {what}" for where, what in sorted(found, key=place))


def _scan_python_file(path):
    return [(f"{path.relative_to(ROOT)}:{line}", what)
            for line, what in offences(path.read_text(), python=True)]


# ---------------------------------------------------------------- the checker

@pytest.mark.parametrize("source, expected", [
    ("from benchbpf.harness._cmdline import parse_side", "from benchbpf.harness._cmdline"),
    ("from benchbpf.harness import _precision", "import _precision"),
    ("from benchbpf import (run,\n    _moved)", "import _moved"),
    ("import benchbpf.results._drift as d", "import benchbpf.results._drift"),
    ("import benchbpf\nbenchbpf._core.setup_count()", "benchbpf._core"),
    ("import benchbpf\nx = benchbpf.results.stats._t_quantile(0.9, 3)",
     "benchbpf.results.stats._t_quantile"),
    ("from benchbpf.tools import cli\ncli._dest('--x', p)", "cli._dest"),
    ("from benchbpf import ab as ab_module\nab_module._simulated_log_ratios", "ab_module._simulated"),
    (">>> import benchbpf\n>>> benchbpf._core", "benchbpf._core"),
    ("%matplotlib inline\nfrom benchbpf.x import _y", "import _y"),
    ("subprocess.run([sys.executable, '-c', 'import benchbpf._core'])", "benchbpf._core"),
])
def test_the_check_finds_each_kind(source, expected):
    assert any(expected in what for _, what in offences(source)), offences(source)


@pytest.mark.parametrize("source", [
    "import benchbpf\nbenchbpf.__file__, benchbpf.__version__",
    "from benchbpf.analysis import usable_rates, fastest\nfastest(usable_rates(r), 10)",
    "import _record\n_record.main(doc, run, summarize)",     # a script's own helper
    "import os\nos._exit(0)",                                 # not benchbpf's
    "r = benchbpf_run()\nr._private",
])
def test_the_check_passes_public_use(source):
    assert offences(source) == []


def test_text_that_is_not_python_is_read_as_text():
    shell = 'python3 -c "import benchbpf._core as c; print(c)"\n$ benchbpf -l\n'
    assert [w for _, w in offences(shell)] == ["benchbpf._core"]
    assert [w for _, w in offences("$ from benchbpf.x import a, _b\n")] == ["import _b"]


# ---------------------------------------------------------------- the project

def test_scripts_use_only_public_names():
    found = []
    for path in sorted((ROOT / "scripts").iterdir()):
        if path.suffix == ".py":
            found += _scan_python_file(path)
        elif path.suffix in (".sh", ".md"):
            found += [(f"{path.relative_to(ROOT)}:{line}", what)
                      for line, what in offences(path.read_text(), python=False)]
    assert not found, _report(found)


def test_notebooks_use_only_public_names():
    found = []
    paths = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert paths
    for path in paths:
        cells = json.loads(path.read_text())["cells"]
        for i, cell in enumerate(cells):
            if cell["cell_type"] == "code":
                found += [(f"{path.relative_to(ROOT)} cell {i}:{line}", what)
                          for line, what in offences("".join(cell["source"]))]
    assert not found, _report(found)


def test_docs_code_blocks_use_only_public_names():
    found, blocks = [], 0
    for path in sorted((ROOT / "docs").rglob("*.md")):
        text = path.read_text()
        for m in FENCE.finditer(text):
            info = m.group(2).strip()
            if info.startswith("{"):
                continue            # a directive (toctree, benchbpf-api), not code
            blocks += 1
            first = text.count("\n", 0, m.start(3)) + 1
            found += [(f"{path.relative_to(ROOT)}:{first + line - 1}", what)
                      for line, what in offences(m.group(3), python=info in ("python", "py",
                                                                             "pycon", ""))]
    assert blocks, "no code blocks found in docs/: the fence pattern is wrong"
    assert not found, _report(found)


def test_docs_extension_uses_only_public_names():
    found = []
    for path in sorted((ROOT / "docs" / "_ext").glob("*.py")):
        found += _scan_python_file(path)
    assert not found, _report(found)
