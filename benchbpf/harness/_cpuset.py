"""CPU sets: lists of ints or the kernel's "0,2-4" strings, and thread placement."""
import numbers


def parse_cpuset(value, name, nr_cpus=None):
    """Return the ascending tuple of CPU numbers in "0,2-4", an int, or an iterable of ints.

    A set, as the kernel bench's: order and repeats do not matter ("3,1-2,2"
    is CPUs 1, 2, 3).  With nr_cpus, a range reaching past the last CPU is
    refused before it is expanded, so that "0-99999999999" costs nothing."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a CPU list or a string like '0,2-4', not bool")
    if isinstance(value, numbers.Integral):
        value = [value]
    if isinstance(value, str):
        cpus = []
        for part in value.split(","):
            part = part.strip()
            if not part:
                raise ValueError(f"{name}={value!r}: empty entry in CPU set")
            lo, sep, hi = part.partition("-")
            try:
                first, last = int(lo), int(hi) if sep else int(lo)
            except ValueError:
                raise ValueError(
                    f"{name}={value!r}: {part!r} is not a CPU number or range "
                    "(use e.g. '0,2-4')") from None
            if first < 0 or last < first:
                raise ValueError(f"{name}={value!r}: bad range {part!r}")
            if nr_cpus is not None and last >= nr_cpus:
                raise ValueError(f"{name}={value!r} names CPU {max(first, nr_cpus)}: "
                                 f"this machine has CPUs 0..{nr_cpus - 1}")
            cpus.extend(range(first, last + 1))
    else:
        try:
            cpus = list(value)
        except TypeError:
            raise TypeError(
                f"{name} must be a CPU list or a string like '0,2-4', "
                f"not {type(value).__name__}") from None
        for c in cpus:
            if isinstance(c, bool) or not isinstance(c, numbers.Integral):
                raise TypeError(f"{name}={value!r}: CPU numbers must be ints")
            if c < 0:
                raise ValueError(f"{name}={value!r}: CPU numbers must be >= 0")
        cpus = [int(c) for c in cpus]
    if not cpus:
        raise ValueError(f"{name}={value!r}: empty CPU set")
    return tuple(sorted(set(cpus)))


def place_threads(consumers, producers, nr_cpus, cons_cpus=None, prod_cpus=None,
                  given=None):
    """The CPUs the kernel bench pins threads to with affinity on:
    (consumer CPUs, producer CPUs).

    As its next_cpu(): consumers take their set's CPUs in ascending order, or
    CPUs 0, 1, ... in turn; producers take theirs, or without a set go on
    after the last consumer CPU.  Without a set the count wraps around the
    online CPUs (Linux 6.5 and later; before, more threads than CPUs failed).
    A set with fewer CPUs than threads raises ValueError, showing the set as
    given[key] if given.  The C core places threads by the same rules."""
    given = given or {}
    for key, cpus, count, who in (("cons_affinity", cons_cpus, consumers, "consumer"),
                                  ("prod_affinity", prod_cpus, producers, "producer")):
        if cpus is not None and len(cpus) < count:
            shown = given.get(key, format_cpuset(cpus))
            raise ValueError(f"{key}={shown!r} names {len(cpus)} CPUs for "
                             f"{count} {who}s: list one CPU per {who}")
    placed_cons, next_cpu = [], 0
    for i in range(consumers):
        if cons_cpus is not None:
            placed_cons.append(cons_cpus[i])
            next_cpu = cons_cpus[i] + 1
        else:
            placed_cons.append(next_cpu % nr_cpus)
            next_cpu += 1
    if prod_cpus is not None:
        placed_prod = list(prod_cpus[:producers])
    else:
        placed_prod = [(next_cpu + i) % nr_cpus for i in range(producers)]
    return tuple(placed_cons), tuple(placed_prod)


def format_cpuset(cpus):
    """(0, 2, 3, 4) -> "0,2-4"."""
    out, i = [], 0
    cpus = list(cpus)
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)
