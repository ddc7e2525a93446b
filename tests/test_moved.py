"""Module paths from before the layer folders keep working one release:
public names silently, the other old paths with a DeprecationWarning that
names the new path."""
import importlib
import subprocess
import sys
import warnings

import pytest

import benchbpf
from benchbpf import _moved

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("old", sorted(_moved.MOVED))
def test_an_old_module_path_warns_and_reads_the_new_module(old):
    new = importlib.import_module("benchbpf." + _moved.MOVED[old])
    name = new.__all__[0]
    with pytest.warns(DeprecationWarning, match=f"benchbpf.{old} moved to "
                      f"benchbpf.{_moved.MOVED[old]}"):
        value = getattr(importlib.import_module("benchbpf." + old), name)
    assert value is getattr(new, name)


def test_an_old_attribute_warns_unless_it_is_a_public_name():
    with pytest.warns(DeprecationWarning, match="benchbpf.stats moved"):
        assert benchbpf.stats.median_ci is benchbpf.results.stats.median_ci
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert callable(benchbpf.features)           # the function, not the module
        assert callable(benchbpf.ringbuf) and callable(benchbpf.ab)
        assert benchbpf.bloom is benchbpf.benchs.bloom


def test_every_family_imports_by_its_old_path_silently():
    code = ("import warnings; warnings.simplefilter('error'); import importlib, benchbpf; "
            "[importlib.import_module('benchbpf.' + f) for f in benchbpf.benchs.FAMILIES]; "
            "from benchbpf.bloom import lookup; import benchbpf.vm, benchbpf.hostdrift; "
            "print(len(benchbpf.benchs.FAMILIES))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert int(out) == len(benchbpf.benchs.FAMILIES) >= 17


def test_an_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        benchbpf.nonesuch
