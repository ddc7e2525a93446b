"""Bad input, tried systematically: property-based over every benchmark's
parameter table and the common options.

Every rejected value must raise ValueError or TypeError whose message names
the parameter, shows the value and says what is allowed, and must be
rejected before anything is set up: the core counts the runs that reached
setup, and that count must not move.  Values at the bounds must be taken.
"""
import math
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import benchbpf
import leakcheck
from benchbpf import _core
from benchbpf.benchs import FAMILIES
from benchbpf.harness import _cmdline
from benchbpf.tools import cli
from conftest import REQUIRED_PARAMS

NAMES = benchbpf.list_benchmarks()
PARAMS = [(name, p) for name in NAMES for p in benchbpf.describe(name).params.values()]
INT_PARAMS = [(n, p) for n, p in PARAMS if p.type == "int"]
BOOL_PARAMS = [(n, p) for n, p in PARAMS if p.type == "bool"]
CHOICE_PARAMS = [(n, p) for n, p in PARAMS if p.type == "choice"]
FAST = dict(warmup=0, duration=0.05, interval=0.05)
NR_CPUS = os.cpu_count()
RESERVED = set(benchbpf.COMMON_OPTIONS) | {"callback"}

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def rejected(name, **kw):
    """Call run(); return the exception after checking nothing was set up.
    Parameters a benchmark requires are given unless kw names them, so that
    what is refused is what kw gives."""
    setups = _core.setup_count()
    required = REQUIRED_PARAMS.get(name, {}) if isinstance(name, str) else {}
    try:
        benchbpf.run(name, **{**FAST, **required, **kw})
    except (ValueError, TypeError) as e:
        err = e
    else:
        pytest.fail(f"{name}({kw!r}) was accepted")
    assert _core.setup_count() == setups, f"{name}({kw!r}) reached setup before failing"
    assert not leakcheck.snapshot().bpf_fds
    return err


def says(err, *words):
    msg = str(err)
    for w in words:
        assert w in msg, f"{w!r} missing from {msg!r}"


# Values of the wrong type for any parameter (bool is never an int here).
WRONG_TYPE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.none(),
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.complex_numbers(allow_nan=False, max_magnitude=10),
)


def _one(params):
    return st.sampled_from(params) if params else st.nothing()


# ---- each benchmark's own parameters ----

@pytest.mark.fast
@SETTINGS
@given(st.data())
def test_int_params_out_of_range(data):
    name, p = data.draw(_one(INT_PARAMS))
    value = data.draw(st.one_of(st.integers(max_value=p.min - 1),
                                st.integers(min_value=p.max + 1)))
    err = rejected(name, **{p.name: value})
    assert isinstance(err, ValueError)
    says(err, f"{p.name}={value!r}", f"{p.min}..{p.max}")


@SETTINGS
@given(st.data())
def test_params_of_the_wrong_type(data):
    name, p = data.draw(_one(PARAMS))
    value = data.draw(WRONG_TYPE if p.type != "int" else st.one_of(WRONG_TYPE, st.booleans()))
    if p.type in ("choice", "string"):
        assume(not isinstance(value, str))
    err = rejected(name, **{p.name: value})
    assert isinstance(err, TypeError)
    says(err, f"{p.name}={value!r}", p.allowed())


@SETTINGS
@given(st.data())
def test_bool_params_take_only_booleans(data):
    name, p = data.draw(_one(BOOL_PARAMS))
    value = data.draw(st.integers().filter(lambda v: v not in (0, 1)))
    err = rejected(name, **{p.name: value})
    says(err, f"{p.name}={value!r}", "True or False")


@SETTINGS
@given(st.data())
def test_choice_params_take_only_their_choices(data):
    name, p = data.draw(_one(CHOICE_PARAMS))
    value = data.draw(st.text(max_size=20).filter(lambda v: v not in p.choices))
    err = rejected(name, **{p.name: value})
    assert isinstance(err, ValueError)
    says(err, f"{p.name}={value!r}", *(repr(c) for c in p.choices))


@SETTINGS
@given(st.data())
def test_core_itself_range_checks_int_params(data):
    """The C core checks ranges too, for callers that bypass the Python layer."""
    name, p = data.draw(_one(INT_PARAMS))
    value = data.draw(st.one_of(st.integers(min_value=-2**63, max_value=p.min - 1),
                                st.integers(min_value=p.max + 1, max_value=2**63 - 1)))
    setups = _core.setup_count()
    env = {"interval_ns": 50_000_000, "warmup_samples": 0, "duration_samples": 1}
    with pytest.raises(ValueError) as info:
        _core.run(name, env, {p.name: value})
    says(info.value, f"{p.name}={value}", f"{p.min}..{p.max}")
    with pytest.raises(TypeError) as info:
        _core.run(name, env, {p.name: str(value)})
    says(info.value, p.name)
    assert _core.setup_count() == setups


# ---- one range: the table's, in errors, in describe() and in --help ----

INT_PARAM_IDS = [f"{n}-{p.name}" for n, p in INT_PARAMS]


def _cli_required(name, skip):
    """The flags a command line needs for the parameters `name` requires."""
    params = benchbpf.describe(name).params
    return [f"{params[k].flag}={v}" for k, v in REQUIRED_PARAMS.get(name, {}).items()
            if k != skip]


@pytest.mark.fast
def test_required_params_are_the_ones_the_tests_give():
    """What the table marks required is what REQUIRED_PARAMS gives (its
    values are what the other tests run with), and a required parameter has
    no default to show."""
    required = {n: {k for k, p in benchbpf.describe(n).params.items() if p.required}
                for n in NAMES}
    assert {n: ks for n, ks in required.items() if ks} == \
        {n: set(kw) for n, kw in REQUIRED_PARAMS.items()}
    for name, keys in required.items():
        for key in keys:
            assert benchbpf.describe(name).params[key].default is None, (name, key)


@pytest.mark.fast
@pytest.mark.parametrize("name, p", INT_PARAMS, ids=INT_PARAM_IDS)
def test_an_int_default_lies_in_its_range(name, p):
    """A default outside min..max would be a value no caller may give: such
    a parameter has no default and is required."""
    assert p.required or p.min <= p.default <= p.max, (name, p)


@pytest.mark.parametrize("name, p", INT_PARAMS, ids=INT_PARAM_IDS)
def test_int_range_is_one_in_check_describe_help_and_cli(name, p, capsys):
    """min - 1 and max + 1 are refused by check() and by the command line
    (exit 2), each naming the value and the range describe() gives, which
    is the range `benchbpf NAME --help` prints on the parameter's line."""
    span = f"{p.min}..{p.max}"
    assert span in p.allowed()
    flag = p.flag
    assert cli.main([name, "--help"]) == 0
    line = [l for l in capsys.readouterr().out.splitlines() if l.startswith(f"  {flag} ")]
    assert len(line) == 1 and line[0].endswith(
        f"({'required' if p.required else f'default {p.default}'}, {span})"), line
    required = {k: v for k, v in REQUIRED_PARAMS.get(name, {}).items() if k != p.name}
    for value in (p.min - 1, p.max + 1):
        setups = _core.setup_count()
        with pytest.raises(ValueError) as err:
            benchbpf.check(name, **required, **{p.name: value})
        says(err.value, f"{p.name}={value}", span)
        assert cli.main([name, "-q", "-d1", f"{flag}={value}",
                         *_cli_required(name, p.name)]) == 2
        says(capsys.readouterr().err, f"{flag} {value}", span)
        assert _core.setup_count() == setups


#: Bounds this machine may refuse whatever the other options: the refusal
#: names the parameter and says why.  Each family declares its own
#: (MACHINE_LIMITS: parameter -> what bounds it), so none is listed here.
MACHINE_LIMITS = {(family, key): why for family, module in FAMILIES.items()
                  for key, why in getattr(module, "MACHINE_LIMITS", {}).items()}


@pytest.mark.parametrize("name, p", INT_PARAMS, ids=INT_PARAM_IDS)
def test_int_bounds_pass_check_but_for_combinations(name, p):
    """min and max themselves are allowed: check() takes each, unless it
    refuses a combination, whose message then states the rule with the
    other option's value (or the bound is a limit of this machine)."""
    info = benchbpf.describe(name)
    others = [k for k in [*info.params, "producers", "consumers", "interval", "duration"]
              if k != p.name]
    required = {k: v for k, v in REQUIRED_PARAMS.get(name, {}).items() if k != p.name}
    for value in (p.min, p.max):
        try:
            benchbpf.check(name, **required, **{p.name: value})
        except ValueError as e:
            msg = str(e)
            assert f"{p.name}={value}" in msg or f"{p.name}={value:#x}" in msg, msg
            assert (info.family, p.name) in MACHINE_LIMITS or \
                any(f"{k}=" in msg for k in others), msg


def test_lpm_nr_entries_one_range_from_the_command_line():
    """The installed command itself: a required parameter's help, and the
    same range for a value below it, at 0 and above it."""
    out = subprocess.run([sys.executable, "-m", "benchbpf", "lpm-trie-lookup", "--help"],
                         capture_output=True, text=True, timeout=60)
    assert "(required, 1..100000000)" in out.stdout and "default 0" not in out.stdout
    for value in ("-5", "0", "100000001"):
        out = subprocess.run([sys.executable, "-m", "benchbpf", "lpm-trie-lookup",
                              "-q", "-d1", "--nr_entries", value],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2
        says(out.stderr, f"--nr_entries {value}", "an int in 1..100000000")


@pytest.mark.fast
@pytest.mark.parametrize("name, key", [(n, k) for n, kw in REQUIRED_PARAMS.items()
                                       for k in kw])
def test_the_core_refuses_a_run_without_a_required_param(name, key):
    """The core's own check, for callers that bypass the Python layer: the
    range of an int, the number of choices of a choice."""
    params = benchbpf.describe(name).params
    p = params[key]
    given = {k: params[k].to_core(v) for k, v in REQUIRED_PARAMS[name].items() if k != key}
    env = {"interval_ns": 50_000_000, "warmup_samples": 0, "duration_samples": 1}
    setups = _core.setup_count()
    with pytest.raises(ValueError) as err:
        _core.validate(name, env, given)
    says(err.value, f"{name} needs {key}",
         f"{p.min}..{p.max}" if p.type == "int" else f"{len(p.choices)} choices")
    assert _core.setup_count() == setups


@SETTINGS
@given(st.sampled_from(NAMES), st.text(min_size=1, max_size=24))
def test_unknown_parameter_names(name, key):
    assume(key not in benchbpf.describe(name).params and key not in RESERVED)
    err = rejected(name, **{key: 1})
    assert isinstance(err, TypeError)
    says(err, name, repr(key))


@SETTINGS
@given(st.one_of(st.text(max_size=30), st.integers(), st.none(), st.binary(max_size=5)))
def test_unknown_benchmarks(name):
    assume(name not in NAMES)
    err = rejected(name)
    if isinstance(name, str):
        assert isinstance(err, ValueError)
        says(err, repr(name))
    else:
        assert isinstance(err, TypeError)


# ---- common options ----

@SETTINGS
@given(st.sampled_from(NAMES), st.data())
def test_thread_counts_out_of_range(name, data):
    info = benchbpf.describe(name)
    key, lo, hi = data.draw(st.sampled_from([("producers", 1, info.max_producers),
                                             ("consumers", 0, info.max_consumers)]))
    value = data.draw(st.one_of(st.integers(max_value=lo - 1), st.integers(min_value=hi + 1)))
    err = rejected(name, **{key: value})
    assert isinstance(err, ValueError)
    says(err, f"{key}={value!r}", str(hi))


@SETTINGS
@given(st.sampled_from(NAMES), st.sampled_from(["producers", "consumers"]),
       st.one_of(WRONG_TYPE.filter(lambda v: v is not None), st.booleans()))
def test_thread_counts_of_the_wrong_type(name, key, value):
    err = rejected(name, **{key: value})
    assert isinstance(err, TypeError)
    says(err, f"{key}={value!r}")


@SETTINGS
@given(st.sampled_from(NAMES), st.sampled_from(["warmup", "duration", "interval"]),
       st.one_of(st.floats(max_value=0.0009), st.floats(min_value=86400.01),
                 st.just(math.nan), st.integers(min_value=86401)))
def test_seconds_out_of_range(name, key, value):
    # A warm-up is any length from 0 s: only negative ones are out of its range below.
    assume(not (key == "warmup" and 0 <= value <= 86400))
    err = rejected(name, **{key: value})
    assert isinstance(err, ValueError)
    says(err, f"{key}={value!r}", "86400")


@SETTINGS
@given(st.sampled_from(NAMES), st.sampled_from(["warmup", "duration", "interval"]),
       st.one_of(st.text(max_size=5), st.booleans(), st.lists(st.floats(), max_size=2),
                 st.complex_numbers(allow_nan=False, max_magnitude=5)))
def test_seconds_of_the_wrong_type(name, key, value):
    err = rejected(name, **{key: value})
    assert isinstance(err, TypeError)
    says(err, f"{key}={value!r}", "seconds")


@SETTINGS
@given(st.sampled_from(NAMES), st.sampled_from(["prod_affinity", "cons_affinity"]),
       st.data())
def test_cpu_sets_naming_cpus_that_do_not_exist(name, key, data):
    missing = data.draw(st.integers(min_value=NR_CPUS, max_value=10**12))
    # (value, the first CPU in it that does not exist)
    value, first = data.draw(st.sampled_from([
        ([missing], missing), (str(missing), missing), (f"0-{missing}", NR_CPUS),
        (f"{missing}-{missing + 5}", missing), ([0, missing], missing),
    ]))
    err = rejected(name, **{key: value})
    assert isinstance(err, ValueError)
    says(err, f"{key}={value!r}", f"CPU {first}", f"0..{NR_CPUS - 1}")


@SETTINGS
@given(st.sampled_from(NAMES), st.sampled_from(["prod_affinity", "cons_affinity"]),
       st.one_of(st.text(alphabet="0123456789,- x", min_size=1, max_size=8),
                 st.lists(st.integers(max_value=-1), min_size=1, max_size=3),
                 st.lists(st.floats(), min_size=1, max_size=2),
                 st.just([]), st.just(""), st.just([0, 0]), st.booleans()))
def test_malformed_cpu_sets(name, key, value):
    try:
        cpus = benchbpf.harness._cpuset.parse_cpuset(value, key, NR_CPUS)
    except (ValueError, TypeError):
        cpus = None
    assume(cpus is None)   # only what the parser refuses
    err = rejected(name, **{key: value})
    says(err, key)


@SETTINGS
@given(st.sampled_from(NAMES), st.sampled_from(["affinity", "verbose", "prog_stats", "callback"]),
       st.one_of(st.integers(), st.text(max_size=4), st.floats()))
def test_flags_of_the_wrong_type(name, key, value):
    err = rejected(name, **{key: value})
    assert isinstance(err, TypeError)
    says(err, f"{key}={value!r}")


# ---- options that contradict each other ----

@pytest.mark.fast
@pytest.mark.parametrize("name", [n for n in NAMES if benchbpf.describe(n).max_consumers == 0])
def test_consumers_for_a_benchmark_that_takes_none(name):
    says(rejected(name, consumers=1), "consumers=1", "takes no consumer")


@pytest.mark.fast
@pytest.mark.parametrize("kw, words", [
    (dict(prod_affinity=[0, 0], producers=2), ["prod_affinity=[0, 0]", "one CPU per producer"]),
    (dict(prod_affinity=[0], producers=2), ["prod_affinity=[0]", "one CPU per producer"]),
    (dict(duration=0.25, interval=0.1), ["duration=0.25", "whole number of intervals"]),
    (dict(duration=0.05, interval=0.1), ["duration=0.05", "shorter than one sampling interval",
                                         "seconds in 0.1..86400"]),
])
def test_contradictory_common_options(kw, words):
    says(rejected("count-local", **kw), *words)


# ---- at the bounds: taken ----

def _bound_values(p):
    if p.type == "int":
        return sorted({p.min, p.max})
    if p.type == "bool":
        return [False, True]
    if p.type == "string":
        return [p.default]
    return list(p.choices)


BOUNDS = [(n, p.name, v) for n, p in PARAMS for v in _bound_values(p)
          if not (n == "selftest" and p.name == "fault" and v != "none")
          and not (n == "selftest" and p.name.endswith("delay_ms") and v)]


#: Bounds whose run the kernel may still fail with the other parameter
#: named (crypto_len of a cipher that takes whole blocks: only the kernel's
#: crypto API knows the cipher's block).
KERNEL_JUDGES = {("crypto-encrypt", "crypto_len"): "crypto_cipher",
                 ("crypto-decrypt", "crypto_len"): "crypto_cipher"}


@pytest.mark.parametrize("name, key, value", BOUNDS,
                         ids=[f"{n}-{k}={v}" for n, k, v in BOUNDS])
def test_values_at_the_bounds_are_taken(name, key, value):
    """A value at its bound passes the range check.  The run may still be
    refused for a reason that names it (another parameter it conflicts
    with: before setup, or once loaded where the kernel judges the
    combination) or for a feature this kernel lacks."""
    setups = _core.setup_count()
    kw = {key: value}
    if name == "selftest" and key == "fault_after_ms":
        kw["fault"] = "producer"
    if key not in REQUIRED_PARAMS.get(name, {}):
        kw.update(REQUIRED_PARAMS.get(name, {}))
    try:
        benchbpf.run(name, **FAST, **kw)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    except benchbpf.BenchmarkError as e:
        other = KERNEL_JUDGES.get((name, key))
        if other is not None:
            says(e, f"{key}={value}", f"{other}=")
        elif "on purpose" not in str(e):
            raise
    except ValueError as e:
        assert _core.setup_count() == setups
        says(e, key)
