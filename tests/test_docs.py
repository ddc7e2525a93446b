"""The manual (docs/) builds without a warning, and what it generates says
what the code says.

The manual is built once for the module (a subprocess running Sphinx, as CI
would: `python3 -m sphinx -W --keep-going -b html docs OUT`); the other
tests read the HTML it wrote:

- the build prints no dump of a parser's settings (it once printed MyST's
  whole MdParserConfig on every build);

- the benchmark reference has a section for every benchmark `benchbpf -l`
  lists, and no other, and each option `benchbpf NAME --help` prints appears
  in its section with the same flag, default, range and choices;
- every public module (benchbpf, each layer folder, each module of a folder
  not named _private that has an __all__) has a section on the API pages (the
  top level's, then one page per layer folder), and every name in its
  __all__ an entry there (an anchor id="benchbpf.module.name", or a link from
  its module's section to the entry that documents it) showing a docstring;
- each function the top level exports, and benchbpf.ab, the callable module,
  is documented on the top level's page under the name users call, with the
  function's parameters and the modules that export it too;
- the sidebar holds the sections in order, Measurements (every record, each
  page titled as no other) out of Reference, and the index links each of a
  newcomer's tasks;
- the pages README links to, and the index, hold no MyST role or label line
  (a forge shows them raw): their links are Markdown links;
- a broken {ref}, {doc} or page link, and a link to a measurement record
  that does not exist, fail the build, while a link to one that does
  resolves to its page.
"""
import contextlib
import importlib
import inspect
import io
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

import benchbpf
from benchbpf.tools import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _sphinx(source, out, *extra, quiet=True):
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", *(["-q"] if quiet else []),
         "-b", "html", *extra, str(source), str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(the finished Sphinx process, the directory of the HTML it wrote).
    Not quiet: what a reader building the manual sees is checked too."""
    out = tmp_path_factory.mktemp("manual")
    return _sphinx(DOCS, out, quiet=False), out


def _page(built, name):
    proc, out = built
    path = out / name
    assert path.exists(), f"the build wrote no {name}:\n{proc.stderr}{proc.stdout}"
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _text(element):
    return " ".join(element.get_text(" ").split())


def _section(page, anchor):
    """The section whose anchor is `anchor` (Sphinx puts a section's extra
    ids on the section or on an empty element just inside it, by version)."""
    element = page.find(id=anchor)
    if element is None or element.name == "section":
        return element
    return element.find_parent("section")


def test_the_manual_builds_without_a_warning(built):
    proc, _ = built
    assert proc.returncode == 0 and not proc.stderr.strip(), (
        f"sphinx exited {proc.returncode}; its output:\n{proc.stderr}{proc.stdout}")


#: What a dump of a parser's settings looks like: MyST's MdParserConfig(...),
#: an argparse Namespace(...) or ArgumentParser(...).
PARSER_DUMP = re.compile(r"\b(?:\w*Config|Namespace|ArgumentParser)\(\w+=")


def test_the_build_prints_no_parser_settings(built):
    proc, _ = built
    output = proc.stdout + proc.stderr
    assert "build succeeded" in proc.stdout, output    # not quiet: it printed its progress
    dumps = [line for line in output.splitlines() if PARSER_DUMP.search(line)]
    assert not dumps, "the build printed a parser's settings:\n" + "\n".join(dumps)


def test_the_dump_pattern_catches_a_dump():
    assert PARSER_DUMP.search("myst v5.2.0: MdParserConfig(commonmark_only=False, gfm_only=False)")
    assert PARSER_DUMP.search("Namespace(warmup=1, duration=2)")
    assert not PARSER_DUMP.search("reading sources... [ 19%] reference/api")


# ---------------------------------------------------------------- benchmarks

def _listed_benchmarks():
    """The names `benchbpf -l` lists (a line each: '-' or '!', the name, its help)."""
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-l"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return re.findall(r"^[-!] (\S+)", out, re.M)


def _help(name):
    """What `benchbpf NAME --help` prints (the command's main(), in process)."""
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert cli.main([name, "--help"]) == 0
    return stdout.getvalue()


_HELP_OPTION = re.compile(r"^  (?P<flag>-\S+)(?: (?P<metavar>NUM|TEXT|NAME|\S*\|\S*))?"
                          r"(?:\s+(?P<help>.*))?$")
_HELP_DEFAULT = re.compile(r"\((?:default (?P<default>.*?)|(?P<required>required))"
                           r"(?:, (?P<lo>-?\d+)\.\.(?P<hi>-?\d+)(?P<chars> characters)?)?\)$")


def _help_options(text):
    """[{flags, metavar, default, required, range, choices}] of the
    "options of this benchmark" block of a benchmark's --help."""
    lines = text.splitlines()
    options = []
    for line in lines[lines.index("options of this benchmark:") + 1:]:
        if not line.strip() or line.strip() == "none besides the common options":
            break
        if line.startswith("  -") and " | " in line:     # a mode switch: a flag per choice
            flags = line.split(" | ")
            options.append({"flags": [f.strip() for f in flags], "metavar": "switch",
                            "help": "", "choices": [f.strip()[2:] for f in flags]})
        elif line.startswith("  -"):
            m = _HELP_OPTION.match(line)
            metavar = m.group("metavar") or ""
            options.append({"flags": [m.group("flag")], "metavar": metavar,
                            "help": m.group("help") or "",
                            "choices": metavar.split("|") if "|" in metavar else []})
        elif re.match(r" {6}\S", line):                  # a choice and its help
            options[-1]["choices"].append(line.split()[0])
        else:                                             # a mode switch's help
            options[-1]["help"] = line.strip()
    for option in options:
        m = _HELP_DEFAULT.search(option["help"])
        assert m, f"no (default ...) in {option['help']!r}"
        option.update(m.groupdict())
    return options


def _expected_default(option):
    """The default as the reference writes it (Python's spelling) for one
    --help option: off -> False, --rx-pass -> "rx-pass", auto -> "auto"."""
    if option["required"]:
        return "required"
    default = option["default"]
    if option["metavar"] == "switch":
        return f'default "{default[2:]}"'
    if option["metavar"] == "NUM":
        return f"default {default}"
    if option["metavar"] == "":
        return "default " + {"off": "False", "on": "True"}[default]
    return f'default "{default}"'


def test_the_benchmark_reference_lists_what_benchbpf_lists(built):
    page = _page(built, "reference/benchmarks.html")
    listed = _listed_benchmarks()
    assert len(listed) == len(benchbpf.list_benchmarks())
    # bench-NAME marks a benchmark's section, bench-NAME-KEYWORD its options
    documented = [e["id"][len("bench-"):] for e in page.find_all(id=re.compile("^bench-"))
                  if e.name != "dt"]
    assert sorted(documented) == sorted(listed), (
        f"not in the reference: {sorted(set(listed) - set(documented))}; "
        f"not listed by benchbpf -l: {sorted(set(documented) - set(listed))}")


def test_the_benchmark_reference_states_the_options_help_states(built):
    page = _page(built, "reference/benchmarks.html")
    problems = []
    for name in benchbpf.list_benchmarks():
        section = _section(page, f"bench-{name}")
        assert section is not None, f"no section bench-{name}"
        terms = section.find_all("dt")
        help_options = _help_options(_help(name))
        if len(terms) != len(help_options):
            problems.append(f"{name}: {len(terms)} options in the reference, "
                            f"{len(help_options)} in --help")
        for option in help_options:
            term = next((t for t in terms if all(f in _text(t).split()
                                                 for f in option["flags"])), None)
            if term is None:
                problems.append(f"{name} {option['flags'][0]}: not in the reference")
                continue
            body = _text(term.find_next_sibling("dd"))
            expected = [_expected_default(option), *option["choices"]]
            if option["lo"] is not None:
                expected.append(f"{option['lo']}..{option['hi']}{option['chars'] or ''}")
            missing = [e for e in expected
                       if not re.search(rf"(?<![\w-]){re.escape(e)}(?![\w-])", body)]
            if missing:
                problems.append(f"{name} {option['flags'][0]}: --help says {missing}, "
                                f"the reference: {body!r}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- API

def _public_modules():
    """benchbpf, its layer folders, and each module of a folder not named
    _private that has an __all__."""
    modules = [benchbpf]
    for folder in pkgutil.iter_modules(benchbpf.__path__):
        if not folder.ispkg or folder.name.startswith("_"):
            continue
        package = importlib.import_module(f"benchbpf.{folder.name}")
        modules.append(package)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                module = importlib.import_module(f"{package.__name__}.{info.name}")
                if hasattr(module, "__all__"):
                    modules.append(module)
    return modules


class _Pages:
    """The API pages read as one: find(id=...) looks in each in turn."""

    def __init__(self, pages):
        self.pages = pages

    def find(self, id):
        return next((e for p in self.pages if (e := p.find(id=id)) is not None), None)


def _api_pages(built):
    """The top level's API page and each layer folder's."""
    _, out = built
    names = ["reference/api.html"] + sorted(
        str(p.relative_to(out)) for p in (out / "reference" / "api").glob("*.html"))
    assert len(names) > 1, "the build wrote no per-layer API page (reference/api/*.html)"
    return _Pages([_page(built, name) for name in names])


def _shows_docstring(page, anchor):
    """Whether the entry at `anchor` shows text of its own: a module's
    section its docstring (before its members and its list of names
    documented elsewhere), an object's <dd> a paragraph before its members."""
    if anchor.startswith("module-"):
        section = _section(page, "api-" + anchor[len("module-"):])
        for child in section.find_all(recursive=False) if section else ():
            if child.name == "dl" or "rubric" in child.get("class", ()):
                return False
            if child.name not in ("h1", "h2", "h3", "h4") and _text(child):
                return True
        return False
    body = page.find(id=anchor).find_next_sibling("dd")
    return body is not None and any(
        child.name and child.name != "dl" and _text(child) for child in body.children)


def _entry(page, module, name):
    """The anchor of the entry documenting `name` of `module`, found as a
    reader would: its own entry, or its module section's link to it."""
    obj = getattr(module, name)
    if isinstance(obj, type(benchbpf)):
        return f"module-{obj.__name__}"
    own = f"{module.__name__}.{name}"
    if page.find(id=own) is not None:
        return own
    section = _section(page, f"api-{module.__name__}")
    for link in section.find_all("a", href=True) if section else ():
        item = link.find_parent("li")
        if item is not None and re.match(rf"{re.escape(name)} ?:", _text(item)):
            return link["href"].partition("#")[2]
    return None


def test_every_public_module_has_a_section_on_the_api_pages(built):
    page = _api_pages(built)
    missing = [m.__name__ for m in _public_modules()
               if _section(page, f"api-{m.__name__}") is None]
    assert not missing, (f"public modules not on the API pages (a new layer folder "
                         f"needs its page in docs/reference/api/): {missing}")


def test_every_public_name_is_documented_with_a_docstring(built):
    page = _api_pages(built)
    absent, undocumented = [], []
    for module in _public_modules():
        for name in module.__all__:
            label = f"{module.__name__}.{name}"
            if not hasattr(module, name):
                absent.append(f"{label} (in __all__, not in the module)")
                continue
            anchor = _entry(page, module, name)
            if anchor is None or page.find(id=anchor) is None:
                absent.append(label + (" (a constant: it needs a #: comment)"
                                       if not callable(getattr(module, name)) else ""))
            elif not _shows_docstring(page, anchor):
                undocumented.append(label)
    assert not (absent or undocumented), (
        "no entry on the API page:\n  " + "\n  ".join(absent or ["none"])
        + "\nan entry without a docstring:\n  " + "\n  ".join(undocumented or ["none"]))


def _called(obj):
    """The function a callable module (benchbpf.ab) runs, else obj."""
    callable_module = isinstance(obj, type(benchbpf)) and callable(obj)
    return getattr(obj, obj.__call_target__) if callable_module else obj


def test_top_level_functions_are_documented_under_the_name_users_call(built):
    """benchbpf.sweep, benchbpf.ab (a callable module), ... each have an
    entry of that name on the top level's page, showing the parameters of
    the function a call runs and naming the modules that export it too."""
    page = _page(built, "reference/api.html")
    problems = []
    for name in benchbpf.__all__:
        obj = getattr(benchbpf, name)
        function = _called(obj)
        if not inspect.isroutine(function):
            continue
        entry = page.find(id=f"benchbpf.{name}")
        if entry is None:
            problems.append(f"benchbpf.{name}: no entry on reference/api.html")
            continue
        shown = {e.get_text() for e in entry.find_all(class_="n")}
        missing = [p for p in inspect.signature(function).parameters if p not in shown]
        if missing:
            problems.append(f"benchbpf.{name}: the signature lacks {missing}")
        body = _text(entry.find_next_sibling("dd"))
        for module in _public_modules()[1:]:
            for other in module.__all__:
                full = f"{module.__name__}.{other}"
                if getattr(module, other, None) is function and full not in body:
                    problems.append(f"benchbpf.{name}: its entry does not say {full}")
    assert not problems, "\n".join(problems)
    assert page.find(id="benchbpf.ab") is not None, "the test checked no callable module"


# ---------------------------------------------------------------- navigation

#: The manual's sections, in the order of its sidebar.
SECTIONS = ["Getting started", "Tasks", "Reference", "Measurements", "Background",
            "Troubleshooting"]

#: A newcomer's tasks (issue #39) and the page of each, which the index's
#: own text links: the run, the list, ab, sweep and plot, the gate, the
#: report, other kernels, troubleshooting.
TASK_PAGES = ["tasks/how-fast.html", "tasks/how-fast.html#which-benchmarks-there-are",
              "tasks/compare.html", "tasks/notebooks.html", "tasks/pytest-gate.html",
              "tasks/suite-report.html", "tasks/other-kernels.html", "troubleshooting.html"]


def _sidebar_sections(page):
    tree = page.find(class_="sidebar-tree")
    return [_text(a) for a in tree.select("ul > li.toctree-l1 > a")]


def test_the_sidebar_has_the_sections_in_order(built):
    shown = _sidebar_sections(_page(built, "index.html"))
    # Pages written on another branch (glossary, ...) may stand between them.
    assert [s for s in shown if s in SECTIONS] == SECTIONS, shown


def test_the_index_links_every_newcomer_task(built):
    _, out = built
    article = _page(built, "index.html").find("article")
    links = {a["href"] for a in article.find_all("a", href=True)}
    missing = [t for t in TASK_PAGES if t not in links]
    assert not missing, f"docs/index.md links none of {missing}"
    for target in TASK_PAGES:
        page, _, anchor = target.partition("#")
        assert (out / page).exists(), target
        if anchor:
            assert _page(built, page).find(id=anchor) is not None, target


def test_measurement_records_are_their_own_section_with_unique_titles(built):
    _, out = built
    records = sorted(p.stem for p in (ROOT / "results").glob("*.md"))
    measurements = _page(built, "measurements/index.html").find("article")
    linked = {a["href"].partition("#")[0] for a in measurements.find_all("a", href=True)}
    assert {f"../results/{r}.html" for r in records} <= linked, linked
    # Out of Reference: its page lists no record.
    reference = _page(built, "reference/index.html").find("article")
    assert not [a["href"] for a in reference.find_all("a", href=True)
                if "results/" in a["href"]]
    titles = {r: _text(_page(built, f"results/{r}.html").find("h1")).rstrip("¶ ")
              for r in records}
    shared = {t for t in titles.values() if list(titles.values()).count(t) > 1}
    assert not shared, {r: t for r, t in titles.items() if t in shared}


def _extension():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        return importlib.import_module("benchbpf_docs")
    finally:
        sys.path.remove(str(DOCS / "_ext"))


def test_records_sharing_a_heading_get_their_machine_or_file_name(tmp_path):
    taken = "- taken: {day} 22:19 UTC, 1310 s; host: {cpu}, 2 CPUs, kernel 6.18\n"
    (tmp_path / "amd.md").write_text(
        "# Side by side\n\n" + taken.format(day="2026-12-01", cpu="AMD EPYC"))
    (tmp_path / "intel.md").write_text(
        "# Side by side\n\n" + taken.format(day="2026-12-03",
                                               cpu="Intel(R) Xeon(R) Processor"))
    (tmp_path / "again.md").write_text(
        "# Side by side\n\n" + taken.format(day="2026-12-03",
                                               cpu="Intel(R) Xeon(R) Processor"))
    (tmp_path / "bare.md").write_text("# Alone\n")
    (tmp_path / "twin-a.md").write_text("# Twin\n")
    (tmp_path / "twin-b.md").write_text("# Twin\n")
    assert _extension().record_titles(tmp_path) == {
        "amd": "Side by side (AMD EPYC, 2026-12-01)",
        "intel": "Side by side (intel)", "again": "Side by side (again)",
        "bare": "Alone", "twin-a": "Twin (twin-a)", "twin-b": "Twin (twin-b)"}


# ---------------------------------------------------------------- links

#: MyST's syntax a forge shows raw: a role ({ref}`x`, {doc}`x`, {py:func}`x`)
#: and a label line, "(label)=".
ROLE = re.compile(r"\{[\w:-]+\}`")
LABEL_LINE = re.compile(r"^\([^)\s]+\)=\s*$")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def _forge_pages():
    """The manual's pages README links to, and the index."""
    links = re.findall(r"\]\((docs/[^)#\s]+\.md)(?:#[^)]*)?\)",
                       (ROOT / "README.md").read_text(encoding="utf-8"))
    return sorted({ROOT / link for link in links} | {DOCS / "index.md"})


def _raw_myst(text):
    """(line number, line) of each role or label line outside code fences."""
    out, fence = [], None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m and (fence is None or m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)):
            fence = m.group(1) if fence is None else None
            continue
        if fence is None and (ROLE.search(line) or LABEL_LINE.match(line)):
            out.append((number, line))
    return out


def test_pages_readme_links_read_cleanly_on_a_forge():
    pages = _forge_pages()
    assert len(pages) > 10 and all(p.exists() for p in pages), (
        f"README links pages that do not exist: {[str(p) for p in pages if not p.exists()]}")
    problems = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
                for p in pages for n, line in _raw_myst(p.read_text(encoding="utf-8"))]
    assert not problems, ("MyST roles or label lines, raw on a forge (write "
                          "[text](page.md#heading-anchor)):\n" + "\n".join(problems))


def test_the_forge_check_finds_roles_and_labels():
    text = ("(a-label)=\n## A heading\nSee {ref}`a-label` and {doc}`page`.\n"
            "```{toctree}\n(in-a-fence)=\n{ref}`in-a-fence`\n```\n")
    assert [n for n, _ in _raw_myst(text)] == [1, 3]

def test_broken_links_fail_the_build_and_record_links_resolve(tmp_path):
    """A page with a missing label, a missing page, a missing measurement
    record and an existing one, built with the manual's configuration."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "results").symlink_to(ROOT / "results")
    record = sorted((ROOT / "results").glob("*.md"))[0]
    (source / "index.md").write_text(
        "# Links\n\n"
        "{ref}`no-such-label`, {doc}`no-such-page`, [a page](no-such-page.md),\n"
        "[no record](../../results/no-such-record.md),\n"
        f"[a record](results/{record.name}).\n\n"
        "```{toctree}\n:glob:\n\n/results/*\n```\n")
    proc = _sphinx(source, tmp_path / "out", "-c", str(DOCS))
    warnings = proc.stderr
    assert proc.returncode != 0
    for expected in ("no-such-label", "no-such-page", "no-such-page.md",
                     "no-such-record"):
        assert expected in warnings, f"no warning names {expected}:\n{warnings}"
    assert record.stem not in warnings, warnings
    html = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert f'href="results/{record.stem}.html"' in html


def test_every_family_has_a_section_on_what_it_measures():
    # docs/background/families.md is written by hand: a new family must add
    # its section there, or this names it.
    text = (ROOT / "docs" / "background" / "families.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^## (\S+)$", text, re.M))
    families = {benchbpf.describe(n).family for n in benchbpf.list_benchmarks()}
    assert not families - headings, f"no section in families.md: {sorted(families - headings)}"
