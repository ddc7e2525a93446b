"""CPU sets: lists of ints or the kernel's "0,2-4" strings."""


def parse_cpuset(value, name, nr_cpus=None):
    """Return a tuple of CPU numbers from "0,2-4", an int, or an iterable of ints.

    With nr_cpus, a range reaching past the last CPU is refused before it is
    expanded, so that "0-99999999999" costs nothing."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a CPU list or a string like '0,2-4', not bool")
    if isinstance(value, int):
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
            if isinstance(c, bool) or not isinstance(c, int):
                raise TypeError(f"{name}={value!r}: CPU numbers must be ints")
            if c < 0:
                raise ValueError(f"{name}={value!r}: CPU numbers must be >= 0")
    if not cpus:
        raise ValueError(f"{name}={value!r}: empty CPU set")
    if len(set(cpus)) != len(cpus):
        raise ValueError(f"{name}={value!r}: CPU listed twice")
    return tuple(cpus)


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
