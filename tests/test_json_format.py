"""The JSON format page (docs/reference/json-format.md) lists every metadata
and fingerprint key, and no key the code no longer has.

Its tables are read back: the fingerprint table must be FINGERPRINT_KEYS,
both ways; every key a real run writes into Result.metadata, every key the
C core notes (bench_note), and every key the package writes into or reads
from a metadata mapping must be in one of the page's tables; and every key
the page lists must still occur in the package's or the core's source."""
import ast
import re
from pathlib import Path

import pytest

import benchbpf
from benchbpf.results.fingerprint import FINGERPRINT_KEYS

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "json-format.md"
PACKAGE = ROOT / "benchbpf"
CSRC = ROOT / "csrc"
QUICK = {"warmup": 0, "duration": 0.3, "interval": 0.1}


#: The page's key tables by the heading above each (a forge shows the
#: manual's label lines raw, so the headings name them).
SECTIONS = {"A Result's `metadata`": "metadata-keys",
            'The fingerprint: `metadata["fingerprint"]`': "fingerprint-keys",
            '`metadata["vm"]`: the guest of a run under `--kernel`': "vm-metadata-keys",
            "A ResultSet's `metadata`": "resultset-metadata-keys",
            "An A/B comparison's `metadata`": "ab-metadata-keys"}


def _tables():
    """{label: set of keys} of the page's key tables: each table's first
    cell names one or more `key`s; a table belongs to the heading above it
    (SECTIONS)."""
    tables, label = {}, None
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        m = re.fullmatch(r"#+ (?P<heading>.+)", line.strip())
        if m:
            label = SECTIONS.get(m["heading"])
            continue
        if label and line.startswith("| `"):
            first = line.split("|")[1]
            tables.setdefault(label, set()).update(re.findall(r"`(\w+)`", first))
    return tables


TABLES = _tables()
METADATA = set().union(*(keys for label, keys in TABLES.items() if label != "fingerprint-keys"))


def _sources(root, pattern):
    return sorted(p for p in root.rglob(pattern) if "build" not in p.parts)


def _is_metadata(node):
    """`metadata` or `X.metadata` (also `X._metadata`)."""
    return (isinstance(node, ast.Name) and node.id == "metadata") or \
        (isinstance(node, ast.Attribute) and node.attr in ("metadata", "_metadata"))


def _dict_keys(node):
    return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def written_and_read_keys():
    """{key: "file:line"} of keys the package writes into a metadata mapping
    (metadata={...}, a dict extending **x.metadata, metadata[k] = ..., a
    *metadata() function's dict) or reads from one (metadata[k],
    metadata.get(k))."""
    found = {}
    for path in _sources(PACKAGE, "*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            keys = set()
            if isinstance(node, ast.keyword) and node.arg == "metadata" \
                    and isinstance(node.value, ast.Dict):
                keys = _dict_keys(node.value)
            elif isinstance(node, ast.Dict) and any(
                    k is None and _is_metadata(v) for k, v in zip(node.keys, node.values)):
                keys = _dict_keys(node)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                    isinstance(t, ast.Name) and t.id == "metadata" for t in node.targets):
                keys = _dict_keys(node.value)
            elif isinstance(node, ast.FunctionDef) and node.name.endswith("metadata"):
                for ret in ast.walk(node):
                    if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Dict):
                        keys |= _dict_keys(ret.value)
            elif isinstance(node, ast.Subscript) and _is_metadata(node.value) \
                    and isinstance(node.slice, ast.Constant):
                keys = {node.slice.value}
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "get" and _is_metadata(node.func.value) \
                    and node.args and isinstance(node.args[0], ast.Constant):
                keys = {node.args[0].value}
            for key in keys:
                found.setdefault(key, f"{where}:{getattr(node, 'lineno', '?')}")
    return found


def noted_keys():
    """{key: file} of the keys the C core notes into a run's metadata."""
    found = {}
    for path in _sources(CSRC, "*.c"):
        for key in re.findall(r'bench_note\(\s*ctx,\s*"(\w+)"', path.read_text(encoding="utf-8")):
            found.setdefault(key, str(path.relative_to(ROOT)))
    return found


def test_the_page_has_the_tables_the_tests_read():
    assert {"metadata-keys", "fingerprint-keys", "vm-metadata-keys", "resultset-metadata-keys",
            "ab-metadata-keys"} <= set(TABLES), sorted(TABLES)
    assert len(TABLES["metadata-keys"]) >= 20


def test_the_fingerprint_table_is_the_fingerprint():
    documented = TABLES["fingerprint-keys"]
    assert not set(FINGERPRINT_KEYS) - documented, \
        f"fingerprint keys not on {PAGE.name}: {sorted(set(FINGERPRINT_KEYS) - documented)}"
    assert not documented - set(FINGERPRINT_KEYS), \
        f"{PAGE.name} lists fingerprint keys the code has not: " \
        f"{sorted(documented - set(FINGERPRINT_KEYS))}"


def test_a_fingerprint_has_exactly_its_keys():
    run = benchbpf.run("count-local", **QUICK)
    assert set(run.metadata["fingerprint"]) == set(FINGERPRINT_KEYS)


@pytest.mark.parametrize("name, options", [("count-local", {}),
                                           ("selftest", {"prog_stats": True})])
def test_every_key_a_run_writes_is_documented(name, options):
    run = benchbpf.run(name, **QUICK, **options)
    missing = set(run.metadata) - TABLES["metadata-keys"]
    assert not missing, f"{name} wrote metadata keys not on {PAGE.name}: {sorted(missing)}"


def test_every_key_the_core_notes_is_documented():
    noted = noted_keys()
    assert len(noted) >= 10, noted       # the pattern still finds the notes
    missing = {k: f for k, f in noted.items() if k not in TABLES["metadata-keys"]}
    assert not missing, f"keys noted by the core, not on {PAGE.name}: {missing}"


def test_every_key_the_package_writes_or_reads_is_documented():
    used = written_and_read_keys()
    assert {"trigger", "fingerprint", "interval_ns", "repeat"} <= set(used), sorted(used)
    missing = {k: w for k, w in used.items() if k not in METADATA}
    assert not missing, f"metadata keys in the package, not on {PAGE.name}: {missing}"


def test_every_documented_key_is_still_in_the_code():
    text = "\n".join(p.read_text(encoding="utf-8")
                     for p in [*_sources(PACKAGE, "*.py"), *_sources(CSRC, "*.c")])
    stale = sorted(k for k in METADATA | TABLES["fingerprint-keys"] if f'"{k}"' not in text)
    assert not stale, f"{PAGE.name} lists keys no source names: {stale}"


def test_a_missing_or_an_extra_key_is_caught(tmp_path, monkeypatch):
    """The checks can fail: a table without a key, or with one too many."""
    page = tmp_path / "page.md"
    text = PAGE.read_text(encoding="utf-8")
    page.write_text(text.replace("| `trigger` |", "| `trigger_gone` |")
                    .replace("| `git_commit` |", "| `git_commit` |\n| `no_such_key` | x |"))
    monkeypatch.setattr(__import__(__name__), "PAGE", page)
    tables = _tables()
    assert "trigger" not in tables["metadata-keys"]
    assert "no_such_key" in tables["fingerprint-keys"] - set(FINGERPRINT_KEYS)
