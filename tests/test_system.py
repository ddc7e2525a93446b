"""benchbpf system show | tune | reset: real values of this machine, and a
round trip on a knob that exists on every kernel benchbpf runs on
(kernel.bpf_stats_enabled), put back as it was."""
import json
import os

import pytest

from benchbpf.results import fingerprint
from benchbpf.tools import system

STATS = "/proc/sys/kernel/bpf_stats_enabled"


def _by_name(checks):
    return {c.name: c for c in checks}


def test_show_reads_this_machine():
    checks = _by_name(system.show(steal_seconds=0.1))
    assert checks["kernel.bpf_stats_enabled"].value == int(open(STATS).read())
    jit = checks["net.core.bpf_jit_enable"]
    assert jit.value == int(open("/proc/sys/net/core/bpf_jit_enable").read())
    assert jit.ok == (jit.value == 1)
    governor = checks["CPU frequency governor"]
    has_cpufreq = os.path.exists("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    assert (governor.status == "not available") == (not has_cpufreq)
    steal = checks["steal time"]
    assert steal.value is None or steal.value.endswith(" %")
    for c in checks.values():
        assert c.status in ("ok", "warning", "not available", "info") and c.advice
    text = system.format_checks(list(checks.values()))
    assert len(text.splitlines()) == len(checks)


def test_the_fingerprint_records_the_configuration_items():
    fp = fingerprint.fingerprint()
    for key in ("bpf_stats_enabled", "bpf_jit_enable", "bpf_jit_harden", "cpu_governors",
                "cpu_boost", "smt_active", "cpu_vulnerabilities", "isolated_cpus",
                "nohz_full", "irq_default_affinity"):
        assert key in fp
    assert fp["irq_default_affinity"] == fingerprint.read("/proc/irq/default_smp_affinity")


def test_a_fingerprint_from_before_the_new_keys_is_no_difference():
    new = fingerprint.fingerprint()
    old = {k: v for k, v in new.items() if k not in ("cpu_boost", "isolated_cpus",
                                                     "nohz_full", "irq_default_affinity")}
    assert fingerprint.differences(old, new) == []
    assert fingerprint.differences(new, dict(new, irq_default_affinity="1")) \
        == [f"irq_default_affinity: {new['irq_default_affinity']!r} -> '1'"]


@pytest.fixture
def stats_switch():
    """kernel.bpf_stats_enabled turned on for the test, as it was after."""
    before = open(STATS).read().strip()
    with open(STATS, "w") as f:
        f.write("1")
    yield
    with open(STATS, "w") as f:
        f.write(before)


def test_tune_then_reset_puts_back_exactly_what_it_changed(stats_switch, tmp_path):
    state = tmp_path / "tune.json"
    changes = system.tune(str(state))
    assert system.Change(STATS, "1", "0") in changes
    assert open(STATS).read().strip() == "0"
    recorded = json.loads(state.read_text())["changes"]
    assert {"path": STATS, "old": "1", "new": "0"} in recorded
    # A second tune changes nothing more and keeps the first old value.
    assert system.Change(STATS, "1", "0") not in system.tune(str(state))
    restored = system.reset(str(state))
    assert system.Change(STATS, "0", "1") in restored
    assert open(STATS).read().strip() == "1"
    assert not state.exists()
    assert system.reset(str(state)) == []            # nothing recorded: nothing done


def test_tune_leaves_knobs_already_as_wanted(tmp_path):
    state = tmp_path / "tune.json"
    if open(STATS).read().strip() != "0":
        pytest.skip("bpf_stats_enabled is on here")
    assert all(c.path != STATS for c in system.tune(str(state)))
    system.reset(str(state))


def test_a_damaged_record_is_refused_naming_it(tmp_path):
    state = tmp_path / "tune.json"
    state.write_text("{not json")
    with pytest.raises(ValueError, match="tune.json: not a benchbpf system tune record"):
        system.reset(str(state))


def test_the_record_goes_where_the_environment_says(monkeypatch, tmp_path):
    monkeypatch.setenv(system.STATE_ENV, str(tmp_path / "x.json"))
    assert system.state_path() == str(tmp_path / "x.json")


def test_bad_sampling_time_is_refused_naming_the_parameter():
    with pytest.raises(ValueError, match=r"steal_seconds=0: must be > 0 seconds"):
        system.show(steal_seconds=0)
