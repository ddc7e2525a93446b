"""ab's simulator: its sequential rule (_ab_rule) run over seeded simulated
series of rounds on a host that drifts as this kind of machine does, for
its error rates without running anything."""
import math
import random
import statistics
from dataclasses import dataclass

from ._ab_rule import ALPHA, PRECISION, decided, interval
from ._outcome import FASTER, SAME, SLOWER, THRESHOLD, UNDECIDED, VERDICTS, verdict_of


@dataclass(frozen=True)
class SimulatedRates:
    """Error rates of the stopping rule on simulated comparisons.

    effect: the true slowdown of B (0.05: B is 5 % slower); n: comparisons;
    slower, faster, same, undecided: how many ended so; median_rounds: the
    rounds a comparison took, median."""
    effect: float
    n: int
    slower: int
    faster: int
    same: int
    undecided: int
    median_rounds: float

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


def simulate(effect=0.0, n=200, rounds=100, seed=1, fast_sd=0.05, slow_sd=0.10,
             phase_s=120.0, round_s=3.0, outlier_p=0.03, side_sd=0.03, side_phi=0.5,
             tails_df=3, threshold=THRESHOLD, precision=PRECISION, alpha=ALPHA):
    """Run the stopping rule ab() uses over n seeded simulated comparisons
    of at most `rounds` rounds each, B slower than A by `effect` (0.05 =
    5 %), on a simulated host (see simulated_log_ratios: slow phases of sd
    slow_sd lasting phase_s s on average, fast noise of sd fast_sd per run
    with tails of Student's t at tails_df, a disturbed run with probability
    outlier_p, a bias for one side of sd side_sd lasting rounds as AR(1)
    side_phi).  Looks after every round, as ab() does.  A SimulatedRates;
    no BPF, nothing runs."""
    rng = random.Random(seed)
    counts = {v: 0 for v in VERDICTS}
    used = []
    for _ in range(n):
        logs = simulated_log_ratios(rng, rounds, effect, fast_sd, slow_sd, phase_s,
                                     round_s, outlier_p, side_sd, side_phi, tails_df)
        k = 0
        low = high = None
        for k in range(1, rounds + 1):
            ratio, low, high = interval(logs[:k], alpha, rounds)
            if decided(k, ratio, low, high, threshold, precision):
                break
        counts[verdict_of(low, high, threshold)[0]] += 1
        used.append(k)
    return SimulatedRates(effect, n, counts[SLOWER], counts[FASTER], counts[SAME],
                          counts[UNDECIDED], statistics.median(used))
