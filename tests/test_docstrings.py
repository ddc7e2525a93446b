"""Every public name says what it is: the names in the __all__ of benchbpf
and of each public module have a docstring (constants a ``#:`` comment,
which the manual's autodoc shows as theirs), and a function that takes
parameters names at least one of them in it.  For public classes, the same
of each public method and property.  Each docstring is valid reST: the
manual renders it."""
import ast
import importlib
import inspect
import io
import re
import types
from pathlib import Path

import docutils.core
import pytest

import benchbpf

pytestmark = pytest.mark.fast

PACKAGE = Path(benchbpf.__file__).parent

def _dotted(path):
    """benchbpf/harness/features.py -> benchbpf.harness.features; a folder's
    __init__ is the folder."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


#: Every public module: the package, its layer folders and their modules
#: not named with "_".
MODULES = sorted(_dotted(p) for p in PACKAGE.rglob("*.py")
                 if not any(part.startswith("_") and part != "__init__.py"
                            for part in p.relative_to(PACKAGE).parts))


def _is_ours(obj):
    return (getattr(obj, "__module__", None) or "").startswith("benchbpf")


def _module_constants():
    """module stem -> (names assigned at its top level, those of them with
    a ``#:`` comment above or a string right after: what autodoc documents a
    constant by, names it imports from another module of the package)."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text()
        lines = source.splitlines()
        tree = ast.parse(source)
        assigned, documented, imported = set(), set(), {}
        for i, node in enumerate(tree.body):
            if isinstance(node, ast.ImportFrom) and node.level >= 1 and node.module:
                package = _dotted(path).split(".")
                if path.name != "__init__.py":
                    package.pop()
                base = ".".join(package[:len(package) - node.level + 1] + [node.module])
                # "from .x import *" lends every name x defines: key "*"
                imported.update({a.asname or a.name: base for a in node.names})
                continue
            if isinstance(node, ast.Assign):
                targets = [n.id for t in node.targets for n in ast.walk(t)
                           if isinstance(n, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                targets = [node.target.id]
            else:
                continue
            assigned.update(targets)
            above = lines[node.lineno - 2].lstrip() if node.lineno > 1 else ""
            after = tree.body[i + 1] if i + 1 < len(tree.body) else None
            string_after = isinstance(after, ast.Expr) and \
                isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)
            if above.startswith("#:") or string_after:
                documented.update(targets)
        out[_dotted(path)] = (assigned, documented, imported)
    return out


CONSTANTS = _module_constants()


def _constant_documented(module, name):
    """Whether the constant `name` of `module` is documented where it is
    defined: there, or in the module it imports it from."""
    while module in CONSTANTS:
        assigned, documented, imported = CONSTANTS[module]
        if name in assigned:
            return name in documented
        module = imported.get(name, imported.get("*"))
    return False


def _params(func):
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters if p not in ("self", "cls")]


def _check_function(label, func, problems):
    # Its own: inspect.getdoc would lend it a library base class's (Mapping.items).
    doc = inspect.cleandoc(func.__doc__ or "")
    if not doc:
        problems.append(f"{label}: no docstring")
        return
    params = _params(func)
    if params and not any(re.search(rf"\b{re.escape(p)}\b", doc) for p in params):
        problems.append(f"{label}: docstring names none of its parameters {params}")


def _members(cls):
    """The public methods and properties a class defines, its own and those
    of the project's classes it derives from, by name."""
    seen = {}
    for klass in reversed(cls.__mro__):
        if not _is_ours(klass):
            continue
        for name, attr in vars(klass).items():
            if name.startswith("_"):
                continue
            if isinstance(attr, (staticmethod, classmethod)):
                attr = attr.__func__
            if isinstance(attr, (types.FunctionType, property)):
                seen[name] = (klass, attr)
    return seen


def _check_class(label, cls, problems):
    if not (cls.__doc__ or "").strip():
        problems.append(f"{label}: no docstring")
    for name, (_, attr) in sorted(_members(cls).items()):
        member = f"{label}.{name}"
        if isinstance(attr, property):
            if not (attr.__doc__ or "").strip():
                problems.append(f"{member}: no docstring")
        else:
            _check_function(member, attr, problems)


def _public(module):
    mod = importlib.import_module(module)
    names = getattr(mod, "__all__", None)
    if names is None:
        return mod, None
    return mod, [(f"{module}.{n}", getattr(mod, n)) for n in names]


def _problems(module):
    problems = []
    mod, public = _public(module)
    if public is None:
        return [f"{module}: no __all__"]
    if not (mod.__doc__ or "").strip():
        problems.append(f"{module}: no module docstring")
    for label, obj in public:
        if isinstance(obj, types.ModuleType):
            if not (obj.__doc__ or "").strip():
                problems.append(f"{label}: no module docstring")
        elif inspect.isclass(obj):
            _check_class(label, obj, problems)
        elif callable(obj) and _is_ours(obj):
            _check_function(label, obj, problems)
        elif not _constant_documented(module, label.rsplit(".", 1)[1]):
            problems.append(f"{label}: a constant without a #: comment")
    return problems


def _documented_objects():
    """Every docstring the manual renders: (label, text)."""
    out = []
    for module in MODULES:
        mod, public = _public(module)
        out.append((module, mod.__doc__ or ""))
        for label, obj in public or ():
            if inspect.isclass(obj):
                out.append((label, obj.__doc__ or ""))
                out += [(f"{label}.{n}", a.__doc__ or "")
                        for n, (_, a) in _members(obj).items()]
            elif callable(obj) and not isinstance(obj, types.ModuleType):
                out.append((label, obj.__doc__ or ""))
    return out


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_has_a_docstring(module):
    problems = _problems(module)
    assert not problems, "\n".join(problems)


def test_docstrings_are_valid_rest():
    """docutils parses each one (as autodoc would, dedented) without a
    warning: no unbalanced inline markup, no broken indentation."""
    bad = []
    for label, doc in _documented_objects():
        text = inspect.cleandoc(doc)
        if not text:
            continue
        stream = io.StringIO()
        docutils.core.publish_doctree(
            text, settings_overrides={"warning_stream": stream, "report_level": 2,
                                      "halt_level": 5})
        if stream.getvalue():
            bad.append(f"{label}: {stream.getvalue().strip()}")
    assert not bad, "\n".join(bad)


def test_the_checks_catch_what_they_look_for():
    """A function without a docstring, one that names none of its
    parameters, and a class whose property has none, are each reported."""
    def bare(x):
        pass

    def vague(count):
        """Does something."""

    class Thing:
        """A thing."""
        __module__ = "benchbpf.example"

        @property
        def size(self):
            return 1

    problems = []
    _check_function("bare", bare, problems)
    _check_function("vague", vague, problems)
    _check_class("Thing", Thing, problems)
    assert problems == ["bare: no docstring",
                        "vague: docstring names none of its parameters ['count']",
                        "Thing.size: no docstring"]


def _callable_modules():
    """(label, module) of each module that benchbpf or a public module
    exports and that is callable (benchbpf.ab, benchbpf.ringbuf)."""
    out = {}
    for module in MODULES:
        _, public = _public(module)
        for label, obj in public or ():
            if isinstance(obj, types.ModuleType) and callable(obj):
                out.setdefault(obj.__name__, (label, obj))
    return sorted(out.values(), key=lambda x: x[0])


def test_the_callable_modules_are_found():
    labels = [label for label, _ in _callable_modules()]
    assert "benchbpf.ab" in labels and "benchbpf.ringbuf" in labels, labels


@pytest.mark.parametrize("label, module", [pytest.param(label, module, id=label)
                                           for label, module in _callable_modules()])
def test_a_callable_module_shows_its_function(label, module):
    """inspect.signature() and help() of benchbpf.ab tell what benchbpf.ab(...)
    takes: the parameters and docstring of the function it calls."""
    import pydoc
    function = getattr(module, module.__call_target__)
    sig = inspect.signature(module)
    assert list(sig.parameters) == list(inspect.signature(function).parameters), label
    assert sig == inspect.signature(function), label
    text = pydoc.render_doc(module, renderer=pydoc.plaintext)
    flat = " ".join(text.split())
    assert f"{function.__name__}{sig}" in flat, f"help({label}) shows no signature"
    first = " ".join(inspect.getdoc(function).split("\n\n")[0].split())
    assert first in flat, f"help({label}) does not start from the function's docstring"
    own = " ".join(inspect.cleandoc(module.__dict__["__doc__"]).split())
    assert own[:200] in flat, f"help({label}) lost the module's own docstring"
    # The function's description comes first: it is what a caller wants.
    assert flat.index(first) < flat.index(own[:200])
