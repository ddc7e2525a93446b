"""What this kernel lets BPF programs do, found by asking it.

    >>> from benchbpf.features import features
    >>> f = features()
    >>> f["fentry"].supported, f["fentry"].errno_name
    >>> print(f)                      # one line per feature

Each probe really loads a minimal program (and for attach kinds attaches
and detaches it) and records the kernel's answer; nothing stays loaded.
Probing needs the same privileges as running a benchmark.
"""
import errno as _errno
import threading
from collections import namedtuple
from collections.abc import Mapping

from .. import _core
from ._runner import describe

__all__ = ["Feature", "Features", "features", "requirements", "missing_features"]


class Feature(namedtuple("Feature", "name supported errno detail")):
    """One probed feature.

    name: "fentry", "ringbuf", ...; supported: bool; errno: the positive
    errno the kernel answered (0 when supported); detail: what was tried and
    what the kernel said, as a sentence.
    """
    __slots__ = ()

    @property
    def errno_name(self):
        """Symbolic errno ("EPERM"), or "" when supported."""
        if not self.errno:
            return ""
        if self.errno == 524:
            return "ENOTSUPP"
        if self.errno == _errno.EOPNOTSUPP:
            return "EOPNOTSUPP"  # as the C side names it, not ENOTSUP
        return _errno.errorcode.get(self.errno, str(self.errno))

    def __str__(self):
        state = "supported" if self.supported else \
            f"unsupported ({self.errno_name or 'no errno'})"
        return f"{self.name}: {state}: {self.detail}"


class Features(Mapping):
    """Immutable mapping of feature name -> Feature, in probe order."""
    __slots__ = ("_items",)

    def __init__(self, items):
        object.__setattr__(self, "_items", {f.name: f for f in items})

    def __setattr__(self, name, value):
        raise AttributeError("Features is immutable")

    def __getitem__(self, name):
        return self._items[name]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def supported(self):
        """Names of the supported features."""
        return [n for n, f in self._items.items() if f.supported]

    def unsupported(self):
        """Names of the features this kernel refused."""
        return [n for n, f in self._items.items() if not f.supported]

    def table(self):
        """Aligned text table: feature, yes/no, errno, detail."""
        rows = [("feature", "supported", "errno", "detail")]
        for f in self._items.values():
            err = f"{f.errno_name} ({f.errno})" if f.errno else "-"
            rows.append((f.name, "yes" if f.supported else "no", err, f.detail))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join(
            f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}"
            for r in rows)

    def __str__(self):
        return self.table()

    def __repr__(self):
        n = len(self._items)
        missing = ", ".join(self.unsupported()) or "none"
        return (f"<Features: {n - len(self.unsupported())} of {n} supported; "
                f"unsupported: {missing}>\n{self.table()}")

    def __eq__(self, other):
        if isinstance(other, Features):
            return self._items == other._items
        return NotImplemented

    def __hash__(self):
        return hash(tuple(self._items.values()))


_cache = None
_lock = threading.Lock()


def features(refresh=False):
    """Probe the kernel (once per process unless refresh=True).

    Returns a Features mapping; raises benchbpf.UnsupportedError if this
    build has no probes, PermissionError-like failures show up as refused
    features with errno EPERM.
    """
    global _cache
    with _lock:
        if _cache is None or refresh:
            _cache = Features(Feature(name, bool(ok), int(err), detail)
                              for name, ok, err, detail in _core.probe_features())
        return _cache


def requirements(name, **params):
    """The features (names of features()) benchmark `name` needs, as its C
    table declares them: those a choice in `params` (else the choice's
    default) adds, then its own (local-storage-create's storage_type
    "socket" adds bpf_lsm).  ValueError for an unknown name."""
    info = describe(name)
    chosen = (dict(zip(p.choices, p.choice_needs)).get(params.get(p.name, p.default))
              for p in info.params.values() if p.choice_needs is not None)
    return tuple(need for need in chosen if need) + info.needs


def missing_features(name, probed=None, **params):
    """The features benchmark `name` (with `params`) needs that this kernel
    refuses (a tuple, empty when it can run).  probed: a features() result
    (probed if None)."""
    probed = features() if probed is None else probed
    return tuple(f for f in requirements(name, **params)
                 if f in probed and not probed[f].supported)
