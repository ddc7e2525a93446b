"""Modules that are also functions: benchbpf.ab and benchbpf.ringbuf are
each a module (its names stay reachable as attributes) that, called, runs
its main function.

Such a module tells what its call takes as a function would:
inspect.signature() gives the function's signature (``__signature__``),
and help() starts with the function's signature and docstring, then the
module's own (``__doc__``; the module's docstring as written stays in its
``__dict__``).  ``__call_target__`` names the function."""
import inspect
import sys
import types


def _target(module):
    """The function a call runs, looked up at each call so that a patched
    function is the one called (and described)."""
    return getattr(module, module.__dict__["__call_target__"])


def _doc(module):
    """The function's first paragraph, its signature, the rest of its
    docstring, then the module's own docstring: what help() shows."""
    function = _target(module)
    head, _, rest = (inspect.getdoc(function) or "").partition("\n\n")
    own = inspect.cleandoc(module.__dict__.get("__doc__") or "")
    # A literal block: a signature's "*" and "**" are no reST markup.
    parts = [" ".join(head.split()),
             f"Called, this module runs {function.__name__}()::",
             f"    {function.__name__}{inspect.signature(function)}", rest,
             f"The module {module.__name__}, besides:", own]
    return "\n\n".join(p for p in parts if p)


class CallableModule(types.ModuleType):
    # No docstring of its own: __doc__ is the property below (see the module's).

    def __call__(self, *args, **kwargs):
        return _target(self)(*args, **kwargs)

    @property
    def __signature__(self):
        return inspect.signature(_target(self))

    __doc__ = property(_doc, lambda self, text: self.__dict__.__setitem__("__doc__", text))


def callable_module(module_name, function_name):
    """Make the module `module_name` (already in sys.modules) callable:
    calling it calls its attribute `function_name`."""
    module = sys.modules[module_name]
    module.__call_target__ = function_name
    module.__class__ = CallableModule
