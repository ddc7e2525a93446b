"""The package's imports go one way, and the folders are the layers (the
manual, "Architecture, for contributors"):

    results   the data and what describes it      (bottom)
    harness   runs: options, the C core, sweeps, the command line of a run
    benchs    the families               guests   runs in guests of other kernels
    analysis  comparing runs: compare, ab, host drift
    history   results over time: the store, series, change points
    tools     the command, the report, the pytest plugin                  (top)

and the package's own __init__ above them all.  Read from the source with
ast, every import counted wherever it stands (a function-level import is an
arrow too), so nothing is imported here."""
import ast
import pathlib

import pytest

pytestmark = pytest.mark.fast

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "benchbpf"

#: Layer folder -> its rank; a module may import its own layer and lower ones.
LAYERS = {"results": 0, "harness": 1, "benchs": 2, "guests": 2, "analysis": 3, "history": 3.5,
          "tools": 4}
#: Modules at the package's top: what every layer may use, and the package.
BASE = {"benchbpf._core", "benchbpf._version", "benchbpf._moved", "benchbpf._callable"}
PACKAGE_RANK = 5


def rank(module):
    """The layer of a dotted module name (benchbpf.harness._runner -> 1)."""
    if module in BASE:
        return -1
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in LAYERS:
        return LAYERS[parts[1]]
    return PACKAGE_RANK


def layer(module):
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and parts[1] in LAYERS else None


def _modules():
    """{dotted module name: its source file}; a folder's __init__ is the folder."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(current, node, modules):
    """The benchbpf modules one import statement reaches, as dotted names."""
    is_package = modules[current].name == "__init__.py"
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "benchbpf"]
    if node.level == 0:
        base = node.module or ""
        if base.split(".")[0] != "benchbpf":
            return []
    else:
        pkg = current.split(".") if is_package else current.split(".")[:-1]
        pkg = pkg[:len(pkg) - (node.level - 1)]
        base = ".".join(pkg + ([node.module] if node.module else []))
    out = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        out.append(sub if sub in modules or sub == "benchbpf._core" else base)
    return out


def import_graph():
    """{module: set of benchbpf modules it imports}.

    Importing a module runs its packages' __init__ first; those implicit
    arrows are left out, every written one is in."""
    modules = _modules()
    graph = {"benchbpf._core": set()}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        graph[name] = {t for node in ast.walk(tree)
                       if isinstance(node, (ast.Import, ast.ImportFrom))
                       for t in _resolve(name, node, modules) if t != name}
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
    assert "benchbpf.harness._runner" in graph["benchbpf.benchs.count"]   # from ..harness._runner import run
    assert "benchbpf._core" in graph["benchbpf.results.fingerprint"]      # from .. import _core, in a function
    assert "benchbpf.results.stats" in graph["benchbpf.analysis._compare"]
    assert "benchbpf.analysis._compare" in graph["benchbpf.analysis"]      # a folder's __init__


def test_every_module_lives_in_a_layer_folder():
    loose = sorted(m for m in _modules() if rank(m) == PACKAGE_RANK
                   and m not in ("benchbpf", "benchbpf.__main__"))
    assert not loose, f"modules outside the layer folders: {loose}"
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS), f"layer folders {sorted(folders)} != {sorted(LAYERS)}"


def test_no_module_imports_one_that_imports_it_back():
    cycles = _cycles(import_graph())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_imports_point_down():
    graph = import_graph()
    upward = sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                    if rank(b) > rank(a))
    assert not upward, "imports pointing up a layer: " + ", ".join(upward)


def test_families_and_guests_do_not_import_each_other():
    graph = import_graph()
    across = sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                    if {layer(a), layer(b)} == {"benchs", "guests"})
    assert not across, "benchs and guests are side by side: " + ", ".join(across)


def test_a_family_imports_no_other_family():
    graph = import_graph()
    across = sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                    if layer(a) == layer(b) == "benchs" and "benchbpf.benchs" not in (a, b))
    assert not across, "families importing families: " + ", ".join(across)
