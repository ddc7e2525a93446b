"""Module paths that moved when benchbpf's modules went into layer folders.

The old paths keep working for one release: an old module path that is a
public name of benchbpf (a family, ab, vm, hostdrift) silently, any other
with a DeprecationWarning naming the new path."""
import importlib
import sys
import types
import warnings

__all__ = ["MOVED", "install", "package_getattr"]

#: Old path under benchbpf -> where the module is now (from release 0.2).
MOVED = {
    "result": "results.result", "resultset": "results.resultset",
    "stats": "results.stats", "fingerprint": "results.fingerprint",
    "bpf_timing": "results.bpf_timing", "features": "harness.features",
    "cli": "tools.cli", "report": "tools.report", "pytest_plugin": "tools.pytest_plugin",
}


def _moved(old, stacklevel):
    new = MOVED[old]
    warnings.warn(f"benchbpf.{old} moved to benchbpf.{new}; the old path goes in the "
                  "next release", DeprecationWarning, stacklevel=stacklevel + 1)
    return importlib.import_module(f"benchbpf.{new}")


class _MovedModule(types.ModuleType):
    """Stands at an old path in sys.modules: `from benchbpf.stats import x`
    warns and reads x from the module's new place."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(_moved(self.__name__.rpartition(".")[2], 2), name)


def install(package, public):
    """Make `import benchbpf.<old>` work: each public module under its
    name, each moved one behind a warning.  public: {name: module}."""
    for name, module in public.items():
        sys.modules.setdefault(f"{package}.{name}", module)
    for old in MOVED:
        sys.modules.setdefault(f"{package}.{old}", _MovedModule(f"{package}.{old}"))


def package_getattr(name):
    """The package's __getattr__: benchbpf.stats and the like, with a warning."""
    if name in MOVED:
        return _moved(name, 2)
    raise AttributeError(f"module 'benchbpf' has no attribute {name!r}")
