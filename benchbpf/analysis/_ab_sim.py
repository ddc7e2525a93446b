"""ab's simulator: its sequential rules (_ab_rule) run over seeded simulated
series of rounds, for their error rates without running anything.  Two
kinds of series: simulate() draws a host that drifts as this kind of machine
does (slow phases, drift, heavy tails); simulate_fitted() draws rounds whose
contamination (core spread, bursts, autocorrelation) is fitted to ab's
stored rounds (FITTED; scripts/ab_robust_replay.py fits it)."""
import dataclasses
import math
import random
import statistics
from dataclasses import dataclass

from ._ab_rule import ALPHA, MIN_ROUNDS, PRECISION, RULE, replay, sequence
from ._outcome import FASTER, SAME, SLOWER, THRESHOLD, UNDECIDED, VERDICTS


@dataclass(frozen=True)
class SimulatedRates:
    """Error rates of the stopping rule on simulated comparisons.

    effect: the true slowdown of B (0.05: B is 5 % slower); n: comparisons;
    slower, faster, same, undecided: how many ended so; median_rounds: the
    rounds a comparison took, median; median_decided_rounds: the same over
    those that ended with a verdict (None when none did)."""
    effect: float
    n: int
    slower: int
    faster: int
    same: int
    undecided: int
    median_rounds: float
    median_decided_rounds: object = None

    @property
    def false_alarm_rate(self):
        """Share of comparisons calling a difference that is not there
        (effect 0: slower or faster; else: faster)."""
        wrong = self.slower + self.faster if self.effect == 0 else self.faster
        return wrong / self.n

    @property
    def power(self):
        """Share of comparisons calling B slower (for effect > 0)."""
        return self.slower / self.n


def simulated_log_ratios(rng, rounds, effect, fast_sd, slow_sd, phase_s, round_s,
                          outlier_p, side_sd, side_phi, tails_df):
    """Log ratios B/A of simulated rounds on a host with slow phases (levels
    of sd slow_sd that change after exponential times of mean phase_s), a
    drifting component of seconds (AR(1)), fast noise per run with heavy
    tails (Student's t with tails_df degrees of freedom, scaled to sd
    fast_sd), now and then a disturbed run (10-40 % slow, with probability
    outlier_p), and a bias for one side that lasts a few rounds (AR(1) of
    coefficient side_phi and sd side_sd: a side left on a busier CPU for a
    while).  Sides run in a random order, round_s apart per round."""
    level, change_at = rng.gauss(0, slow_sd), rng.expovariate(1 / phase_s)
    drift, bias, t, out = 0.0, 0.0, 0.0, []
    tail_scale = math.sqrt((tails_df - 2) / tails_df)
    for _ in range(rounds):
        order = ["a", "b"]
        rng.shuffle(order)
        bias = side_phi * bias + rng.gauss(0, side_sd * math.sqrt(1 - side_phi ** 2))
        x = {}
        for side in order:
            t += round_s / 2
            while t > change_at:
                level = rng.gauss(0, slow_sd)
                change_at += rng.expovariate(1 / phase_s)
            drift = 0.7 * drift + rng.gauss(0, 0.03)
            chi2 = sum(rng.gauss(0, 1) ** 2 for _ in range(tails_df))
            v = level + drift + fast_sd * tail_scale * rng.gauss(0, 1) / math.sqrt(chi2 / tails_df)
            if rng.random() < outlier_p:
                v -= rng.uniform(0.1, 0.4)
            x[side] = v + (math.log(1 - effect) + bias if side == "b" else 0.0)
        out.append(x["b"] - x["a"])
    return out


@dataclass(frozen=True)
class Contamination:
    """How a comparison's rounds scatter, as fitted to stored rounds.

    Each comparison draws its core spread (the robust sd of its rounds'
    log ratios) from a log-normal of log-mean spread_log_mean and log-sd
    spread_log_sd, and its share of bursts from a Beta(burst_a, burst_b);
    a round's core noise is Student's t with 5 degrees of freedom at that
    spread; a burst adds 0.1 + an exponential of mean burst_excess to the
    log ratio, towards B faster with probability burst_faster; a side bias
    lasting rounds (AR(1) of coefficient bias_phi, its sd bias_share of the
    core's variance) makes rounds follow each other."""
    spread_log_mean: float
    spread_log_sd: float
    burst_a: float
    burst_b: float
    burst_excess: float
    burst_faster: float = 0.5
    bias_phi: float = 0.0
    bias_share: float = 0.0

    def autocorrelated(self, tau):
        """The same contamination with a side bias whose rounds have an
        integrated autocorrelation time tau (>= 1): AR(1) of coefficient
        (tau - 1) / (tau + 1), as large as the core."""
        return dataclasses.replace(self, bias_phi=(tau - 1) / (tau + 1), bias_share=1.0)


#: The contamination of ab's stored rounds (results/ab-power-2cpu.jsonl and
#: the truth cells: every series of the mode, identical sides and power
#: cells), fitted by scripts/ab_robust_replay.py and stated in
#: results/ab-power-robust-2cpu.md.  The rounds' autocorrelation at lags
#: 1-6 is within +-0.07 interleaved (-0.15 at lag 1 in a duet, whose CPU
#: halves swap every round): no side bias is fitted; autocorrelated() adds one.
FITTED = {
    "interleaved": Contamination(-3.849, 1.244, 0.353, 1.852, 0.206, 0.498),
    "duet": Contamination(-3.471, 1.330, 0.506, 3.133, 0.119, 0.520),
}


def contaminated_log_ratios(rng, rounds, effect, contamination):
    """Log ratios B/A of `rounds` simulated rounds of one comparison, B
    slower than A by `effect` (0.05 = 5 %), scattered as `contamination`
    (a Contamination) says."""
    c = contamination
    spread = math.exp(rng.gauss(c.spread_log_mean, c.spread_log_sd))
    share = rng.betavariate(c.burst_a, c.burst_b)
    t_unit = math.sqrt(3.0 / 5.0)        # Student's t(5) scaled to unit sd
    bias_sd = spread * math.sqrt(c.bias_share)
    bias = rng.gauss(0.0, bias_sd)
    shift = math.log(1 - effect)
    out = []
    for _ in range(rounds):
        bias = c.bias_phi * bias + rng.gauss(0.0, bias_sd * math.sqrt(1 - c.bias_phi ** 2))
        chi2 = sum(rng.gauss(0, 1) ** 2 for _ in range(5))
        x = shift + bias + spread * t_unit * rng.gauss(0, 1) / math.sqrt(chi2 / 5)
        if rng.random() < share:
            burst = 0.1 + rng.expovariate(1 / c.burst_excess)
            x += burst if rng.random() < c.burst_faster else -burst
        out.append(x)
    return out


def _rates(series, effect, rule, threshold, precision, alpha, planned, min_rounds):
    """The rule's verdicts on each series of log ratios, replayed as ab()
    looks (after every round): a SimulatedRates."""
    counts = {v: 0 for v in VERDICTS}
    used, decided = [], []
    for logs in series:
        verdict, _, k, _ = replay(logs, rule, alpha, planned, threshold, precision, min_rounds)
        counts[verdict] += 1
        used.append(k)
        if verdict != UNDECIDED:
            decided.append(k)
    return SimulatedRates(effect, len(used), counts[SLOWER], counts[FASTER], counts[SAME],
                          counts[UNDECIDED], statistics.median(used),
                          statistics.median(decided) if decided else None)


def misses(effect=0.0, n=200, rounds=111, seed=1, mode="interleaved", tau=1.0, rule=RULE,
           alpha=ALPHA, min_rounds=MIN_ROUNDS):
    """How many of n seeded comparisons, drawn as simulate_fitted draws
    them, have the rule's interval of B/A leave the true ratio (1 - effect)
    at some look from min_rounds on, looking after every round and never
    stopping: what a confidence sequence at 1 - alpha promises to keep
    under alpha * n, and the most sensitive check of it (a verdict of
    "same" stops a comparison before most misses could happen)."""
    contamination = FITTED[mode] if tau == 1.0 else FITTED[mode].autocorrelated(tau)
    rng = random.Random(seed)
    truth, missed = 1 - effect, 0
    for _ in range(n):
        seq = rule(alpha, rounds) if callable(rule) else sequence(rule, alpha, rounds)
        for k, x in enumerate(contaminated_log_ratios(rng, rounds, effect, contamination), 1):
            seq.add(x)
            if k >= min_rounds:
                _, low, high = seq.interval()
                if low is not None and not low <= truth <= high:
                    missed += 1
                    break
    return missed


def simulate_fitted(effect=0.0, n=200, rounds=22, seed=1, mode="interleaved", tau=1.0,
                    rule=RULE, threshold=THRESHOLD, precision=PRECISION, alpha=ALPHA,
                    min_rounds=MIN_ROUNDS):
    """Run a rule over n seeded comparisons of at most `rounds` rounds
    (22: 60 s interleaved; 111: 300 s) whose rounds scatter as ab's stored
    rounds of `mode` do (FITTED), B slower by `effect`; tau > 1 adds a side
    bias that makes rounds follow each other (autocorrelation time tau).
    rule: a name in _ab_rule.RULES, or a callable (alpha, planned_rounds)
    -> a sequence with add() and interval(), to simulate a rule of one's
    own.  A SimulatedRates; nothing runs."""
    contamination = FITTED[mode] if tau == 1.0 else FITTED[mode].autocorrelated(tau)
    rng = random.Random(seed)
    series = (contaminated_log_ratios(rng, rounds, effect, contamination) for _ in range(n))
    return _rates(series, effect, rule, threshold, precision, alpha, rounds, min_rounds)


def simulate(effect=0.0, n=200, rounds=100, seed=1, fast_sd=0.05, slow_sd=0.10,
             phase_s=120.0, round_s=3.0, outlier_p=0.03, side_sd=0.03, side_phi=0.5,
             tails_df=3, threshold=THRESHOLD, precision=PRECISION, alpha=ALPHA, rule=RULE):
    """Run the stopping rule ab() uses over n seeded simulated comparisons
    of at most `rounds` rounds each, B slower than A by `effect` (0.05 =
    5 %), on a simulated host (see simulated_log_ratios: slow phases of sd
    slow_sd lasting phase_s s on average, fast noise of sd fast_sd per run
    with tails of Student's t at tails_df, a disturbed run with probability
    outlier_p, a bias for one side of sd side_sd lasting rounds as AR(1)
    side_phi).  Looks after every round, as ab() does.  rule: as
    simulate_fitted's.  A SimulatedRates; no BPF, nothing runs."""
    rng = random.Random(seed)
    series = (simulated_log_ratios(rng, rounds, effect, fast_sd, slow_sd, phase_s, round_s,
                                   outlier_p, side_sd, side_phi, tails_df) for _ in range(n))
    return _rates(series, effect, rule, threshold, precision, alpha, rounds, MIN_ROUNDS)
