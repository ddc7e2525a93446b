"""The package's imports go one way: results at the bottom, the runner and
the families in the middle, the tools on top (the manual, "Architecture,
for contributors").

Read from the source with ast, every import counted wherever it stands (a
function-level import is an arrow too), so nothing is imported here."""
import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "benchbpf"

#: The data and what describes it: imports nothing of benchbpf above it.
BOTTOM = {"result", "resultset", "fingerprint", "stats", "_report", "_plot", "_version",
          "_host_drift",
          "_core", "bpf_timing"}
#: Runs and what runs use, below the families.
RUNNER = {"_runner", "_progress", "_sweep", "_concurrency", "_cpuset", "features",
          "_precision"}
#: The tools: nothing below imports them.
TOP = {"analysis", "report", "cli", "pytest_plugin", "__main__", "__init__",
       "vm", "_guest", "ab", "_duet", "_cmdline"}
# Every other module is a family, between the runner and the tools.


def _rank(module):
    if module in BOTTOM:
        return 0
    if module in RUNNER:
        return 1
    if module in TOP:
        return 3
    return 2


def _modules():
    """{module name: its source file}; "__init__" is the package itself and
    _core, the C extension, has no Python source."""
    return {p.stem: p for p in PACKAGE.glob("*.py")}


def _targets(node, modules):
    """The benchbpf modules one import statement reaches."""
    if isinstance(node, ast.Import):
        out = []
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] == "benchbpf":
                out.append(parts[1] if len(parts) > 1 else "__init__")
        return out
    if node.level == 0:
        parts = (node.module or "").split(".")
        if parts[0] != "benchbpf":
            return []
        sub = parts[1:]
    elif node.level == 1:
        sub = node.module.split(".") if node.module else []
    else:
        return []
    if sub:
        return [sub[0]]
    # "from . import x": a module of the package, or a name of its __init__.
    return [a.name if a.name in modules or a.name == "_core" else "__init__"
            for a in node.names]


def import_graph():
    """{module: set of benchbpf modules it imports}.

    Importing benchbpf.x runs the package's __init__ first; that implicit
    arrow is left out, every written one is in."""
    modules = _modules()
    graph = {"_core": set()}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        graph[name] = {t for node in ast.walk(tree)
                       if isinstance(node, (ast.Import, ast.ImportFrom))
                       for t in _targets(node, modules) if t != name}
    return graph


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph()
    assert "_runner" in graph["count"]             # from ._runner import run
    assert "_core" in graph["fingerprint"]         # from . import _core, in a function
    assert {"stats", "_sweep", "_plot"} <= graph["analysis"]
    assert set(BOTTOM | RUNNER | TOP) - {"_core"} <= set(_modules()), \
        "a module named in the layers is gone: update the lists"


def test_no_module_imports_one_that_imports_it_back():
    cycles = _cycles(import_graph())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_imports_point_down():
    graph = import_graph()
    upward = sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                    if _rank(b) > _rank(a))
    assert not upward, "imports pointing up a layer: " + ", ".join(upward)


def test_bottom_imports_only_the_bottom():
    graph = import_graph()
    for module in BOTTOM:
        assert graph.get(module, set()) <= BOTTOM, \
            f"{module} imports {sorted(graph[module] - BOTTOM)}, above the bottom layer"
