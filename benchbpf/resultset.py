"""Many Results together: a sweep over a parameter grid, or a suite report."""
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from .result import JsonFile, Result, _frozen, _thawed

__all__ = ["ResultSet", "Unsupported"]

FORMAT = "benchbpf-resultset"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Unsupported:
    """A benchmark that could not run here, and the reason the kernel gave."""
    name: str
    reason: str
    params: "MappingProxyType" = field(default_factory=lambda: _frozen({}))

    def __post_init__(self):
        object.__setattr__(self, "params", _frozen(self.params))

    def as_dict(self):
        return {"name": self.name, "reason": self.reason, "params": _thawed(self.params)}


class ResultSet(JsonFile, Sequence):
    """An immutable sequence of Results, in run order.

    `axes` names the parameters that vary across the set (a grid sweep's
    axes); `unsupported` lists what could not run, with the reason;
    `metadata` holds what the whole set shares (e.g. the fingerprint)."""
    __slots__ = ("_results", "_axes", "_unsupported", "_metadata")

    def __init__(self, results=(), *, axes=(), unsupported=(), metadata=None):
        results = tuple(results)
        for r in results:
            if not isinstance(r, Result):
                raise TypeError(f"ResultSet holds Results, got {type(r).__name__}")
        unsupported = tuple(u if isinstance(u, Unsupported) else Unsupported(**u)
                            for u in unsupported)
        object.__setattr__(self, "_results", results)
        object.__setattr__(self, "_axes", tuple(axes))
        object.__setattr__(self, "_unsupported", unsupported)
        object.__setattr__(self, "_metadata", _frozen(metadata or {}))

    def __setattr__(self, name, value):
        raise AttributeError("a ResultSet is immutable")

    @property
    def results(self):
        return self._results

    @property
    def axes(self):
        return self._axes

    @property
    def unsupported(self):
        return self._unsupported

    @property
    def metadata(self):
        return self._metadata

    def __len__(self):
        return len(self._results)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ResultSet(self._results[index], axes=self._axes,
                             metadata=self._metadata)
        return self._results[index]

    def __eq__(self, other):
        if not isinstance(other, ResultSet):
            return NotImplemented
        return (self._results, self._axes, self._unsupported, dict(self._metadata)) == \
            (other._results, other._axes, other._unsupported, dict(other._metadata))

    __hash__ = None

    def __repr__(self):
        names = sorted({r.name for r in self._results})
        axes = f", axes={list(self._axes)}" if self._axes else ""
        miss = f", {len(self._unsupported)} unsupported" if self._unsupported else ""
        return f"<ResultSet of {len(self)} results: {', '.join(names) or '-'}{axes}{miss}>"

    @property
    def names(self):
        """Benchmark names, each once, in run order."""
        return tuple(dict.fromkeys(r.name for r in self._results))

    def where(self, name=None, **params):
        """The Results of benchmark `name` (if given) whose params equal `params`."""
        def keep(r):
            if name is not None and r.name != name:
                return False
            return all(k in r.params and r.params[k] == v for k, v in params.items())
        return ResultSet((r for r in self._results if keep(r)), axes=self._axes,
                         metadata=self._metadata)

    # ---- serialisation ----
    def as_dict(self):
        return {"format": FORMAT, "version": FORMAT_VERSION, "axes": list(self._axes),
                "metadata": _thawed(self._metadata),
                "results": [r.as_dict() for r in self._results],
                "unsupported": [u.as_dict() for u in self._unsupported]}

    @classmethod
    def from_dict(cls, d):
        if d.get("format") != FORMAT:
            raise ValueError(f"not a benchbpf result set (format {d.get('format')!r})")
        if d.get("version") != FORMAT_VERSION:
            raise ValueError(f"result set format version {d.get('version')!r} not supported "
                             f"(this benchbpf reads version {FORMAT_VERSION})")
        return cls((Result.from_dict(r) for r in d["results"]), axes=d.get("axes", ()),
                   unsupported=d.get("unsupported", ()), metadata=d.get("metadata") or {})

    def save(self, path):
        """Write the set as JSON to `path`; ResultSet.load(path) reads it back."""
        self.to_json(path)

    @classmethod
    def load(cls, path):
        return cls.from_json(path)
