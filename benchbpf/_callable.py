"""Modules that are also functions: benchbpf.ab and benchbpf.ringbuf are
each a module (its names stay reachable as attributes) that, called, runs
its main function."""
import sys
import types


class CallableModule(types.ModuleType):
    """A module whose call runs the function callable_module() named."""

    def __call__(self, *args, **kwargs):
        return getattr(self, self.__dict__["__call_target__"])(*args, **kwargs)


def callable_module(module_name, function_name):
    """Make the module `module_name` (already in sys.modules) callable:
    calling it calls its attribute `function_name`, looked up at each call
    so that a patched function is the one called."""
    module = sys.modules[module_name]
    module.__call_target__ = function_name
    module.__class__ = CallableModule
