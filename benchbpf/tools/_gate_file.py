"""The pytest gate's baseline file format, apart from the plugin (which
needs pytest) so that `benchbpf show` reads baselines without it."""

#: The format of a baseline file as the gate saves it: what the comparison
#: needs of each run (its fastest rates, its speed, its mean and span for
#: the host test) and the first run without samples (what it was a run of,
#: the machine's fingerprint), not every sample of every run (1.4 MB for a
#: 1-second check at interval=0.001).
BASELINE_FORMAT = "benchbpf-gate-baseline"
BASELINE_VERSION = 1
