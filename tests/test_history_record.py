"""Recording into the history store: what record() takes (Results, sets,
sweeps, A/B comparisons) and every command's --history, on real SQLite
files and real short runs; a store that cannot take the write never costs
the run."""
import pytest

from benchbpf import history
from benchbpf.analysis.ab import ABResult, Round, Side
from benchbpf.harness._sweep import Sweep
from benchbpf.history import Store
from test_history import make_result


@pytest.fixture
def store(tmp_path):
    return str(tmp_path / "h.sqlite")


def rows(store):
    with Store(store) as s:
        return s.rows()


def test_a_sweep_is_one_row_per_value(store):
    sw = Sweep("count-local", "work_per_hit", (0, 10, 100),
               tuple(make_result(100.0 / (1 + w), params={"work_per_hit": w}) for w in (0, 10, 100)))
    assert history.record(sw, store) == 3
    assert sorted(r["params"] for r in rows(store)) == \
        ['{"work_per_hit":0}', '{"work_per_hit":100}', '{"work_per_hit":10}']


def make_ab(n=6, a_mps=100.0, b_mps=90.0, gap_s=6.0):
    """An A/B comparison of n rounds, gap_s apart, B at b_mps against A's a_mps;
    each round's A swaps its producer CPU, as a duet's sides do."""
    rounds = []
    for i in range(n):
        day = f"2026-12-01T10:{i:02d}:00+00:00"
        a = make_result(a_mps * (1 + 0.01 * (i % 3 - 1)), started=day,
                        params={"producers": 1, "prod_affinity": str(i % 2)})
        b = make_result(b_mps * (1 + 0.01 * (i % 3 - 1)), started=day,
                        params={"producers": 1, "work_per_hit": 10})
        rounds.append(Round(i, a, b, "a", i * gap_s))
    return ABResult(Side("count-local", {}), Side("count-local", {"work_per_hit": 10}),
                    "interleaved", tuple(rounds), "decided", n * gap_s)


def test_an_ab_is_its_two_sides_each_one_run_of_its_rounds(store):
    ab = make_ab()
    assert history.record(ab, store) == 2
    a, b = rows(store)[0], rows(store)[1]
    # Each side's figure is over all its rounds' samples; its interval is
    # over the rounds, as a precision run's is over its runs.
    assert a["median_mps"] == pytest.approx(100.0, rel=0.02)
    assert b["median_mps"] == pytest.approx(90.0, rel=0.02)
    for r in (a, b):
        assert r["ci_low_mps"] < r["median_mps"] < r["ci_high_mps"]
    side = history._rows.ab_side(ab, "a")
    assert len(side.samples) == sum(len(r.a.samples) for r in ab.rounds)
    assert side.mean_ci_mps.basis == "runs" and side.mean_ci_mps.effective_n == 6
    # The CPUs a round gave a side are the comparison's, not the side's.
    assert a["params"] == '{"producers":1}'
    assert b["params"] == '{"producers":1,"work_per_hit":10}'
    assert a["series"] != b["series"]
    for key, r in (("A", a), ("B", b)):
        assert r["source"].startswith(f"ab side {key} of interleaved A/B: A = count-local, "
                                      "B = count-local work_per_hit=10: B/A 0.9")
        assert "slower" in r["source"] and r["source"].endswith("6 rounds")
    assert r["started"] == "2026-12-01T10:00:00+00:00"
    # The same comparison again adds nothing; one without rounds has no rows.
    assert history.record(ab, store) == 0
    assert history.record(make_ab(n=0), store) == 0


def test_record_names_what_it_cannot_take(store):
    with pytest.raises(TypeError, match=r"a Result, a ResultSet, a Sweep or an ABResult, "
                                        r"got dict"):
        history.record({"median": 1}, store)
