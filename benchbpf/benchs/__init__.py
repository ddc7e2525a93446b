"""The families, one module each, as the kernel keeps them in benchs/.

Every module of this folder is found when benchbpf is imported and is
offered as ``benchbpf.<family>``: a new family is its file here, nothing
else to list.  A family calls the harness (benchbpf.harness) and may
use the results layer; nothing but the analysis and the tools above
imports it."""
import importlib
import pkgutil

#: Family module name -> the module, every public module of this folder.
FAMILIES = {info.name: importlib.import_module(f"{__name__}.{info.name}")
            for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name)
            if not info.name.startswith("_")}

__all__ = ["FAMILIES"]
