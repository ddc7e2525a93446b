"""The manual's generated reference, so that it cannot drift from the code:

    ```{benchbpf-benchmarks}     the common options, then every benchmark by family,
    ```                          from the registry (benchbpf.describe)
    ```{benchbpf-cli}            the command and each subcommand, from their
    ```                          argparse parsers
    ```{benchbpf-api}            per module named (one a line): autodoc of its
    benchbpf.count               __all__, and links for the names it exports
    ```                          that another module documents

and links to measurement records (results/*.md) pointed at their pages,
whose titles it makes unique (record_titles).

benchmark_reference() is the data the first renders.  Every example it shows
is checked when the manual builds: the Python call with benchbpf.check(),
the command lines with the command's own checker (benchbpf.tools.cli.check_command,
which must read them as the same run), the family function by calling it
with the run intercepted.  None of it loads BPF or needs privileges.
"""
import argparse
import dataclasses
import functools
import importlib
import inspect
import json
import pkgutil
import re
import shlex
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.errors import ExtensionError
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

import benchbpf
from benchbpf.harness import would_run
from benchbpf.tools import cli, report
from benchbpf import trigger

LOGGER = logging.getLogger(__name__)

# The module: benchbpf.features is the function features().
features = importlib.import_module("benchbpf.harness.features")

#: Values the examples give to parameters a run must give: what the
#: report's suites give them, as each family declares (REQUIRED_PARAMS).
EXAMPLE_VALUES = report.REQUIRED_PARAMS

#: Families that are benchbpf's own: the kernel's bench has no such benchmark.
OWN_FAMILIES = {"selftest"}


@dataclasses.dataclass(frozen=True)
class OptionDoc:
    """One benchmark parameter as the reference states it."""
    keyword: str            # the Python keyword: "rb_batch_cnt"
    flags: tuple            # its CLI flags: ("--rb-batch-cnt",), ("-s", "--stacktrace")
    metavar: str            # "NUM", "TEXT", "NAME", "auto|fentry|tp", "" for switches
    type: str               # "int", "bool", "choice", "string"
    default: object         # the Python default; None when required
    required: bool
    allowed: str            # ParamInfo.allowed(): the words errors use
    help: str
    choices: tuple          # ((choice, its help or ""), ...)
    kernel_flag: bool       # the kernel's bench has this flag too


@dataclasses.dataclass(frozen=True)
class BenchmarkDoc:
    """One benchmark as the reference states it."""
    name: str
    family: str
    help: str
    report: str
    max_producers: int
    default_consumers: int
    max_consumers: int
    needs_bpf: bool
    always_pinned: bool
    extra: tuple
    options: tuple          # (OptionDoc, ...)
    features: tuple         # kernel features of a default run
    features_by_choice: tuple  # ((keyword, choice, features), ...) where a choice changes them
    python_call: str        # benchbpf.run("rb-libbpf", rb_b2b=True)
    family_call: str        # benchbpf.ringbuf.ringbuf(consumer="libbpf"), or ""
    family_function: str    # benchbpf.ringbuf.ringbuf, or ""
    command: str            # benchbpf rb-libbpf --rb-b2b
    kernel_command: str     # ./bench -c1 rb-libbpf --rb-b2b, or "" (benchbpf's own)


def _option(p):
    flags = p.flags
    if p.choice_flags:
        metavar = ""
    elif p.type == "bool":
        flags = (cli.SHORT_FLAGS[flags[0]], *flags) if flags[0] in cli.SHORT_FLAGS \
            else flags
        metavar = ""
    elif p.type == "choice":
        metavar = "NAME" if p.choice_help else "|".join(p.choices)
    else:
        metavar = "TEXT" if p.type == "string" else "NUM"
    choices = ()
    if p.type == "choice":
        choices = tuple(zip(p.choices, p.choice_help or ("",) * len(p.choices)))
    return OptionDoc(keyword=p.name, flags=tuple(flags), metavar=metavar, type=p.type,
                     default=p.default, required=p.required, allowed=p.allowed(),
                     help=p.help, choices=choices,
                     kernel_flag=bool(p.cli) or p.choice_flags)


def _py(value):
    """A value as Python source, strings in double quotes."""
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _call(function, args=(), kwargs=()):
    parts = [_py(a) for a in args] + [f"{k}={_py(v)}" for k, v in kwargs]
    return f"{function}({', '.join(parts)})"


def _example_params(info):
    """The parameters of the example run: what a run needs (EXAMPLE_VALUES,
    else a required choice's first choice or the least value), and, to show
    a flag beside its keyword, the first switch the kernel's bench also has,
    where that run passes benchbpf.check()."""
    needed = {}
    given = EXAMPLE_VALUES.get(info.name, {})
    for key, p in info.params.items():
        if key in given:
            needed[key] = given[key]
        elif p.required:
            needed[key] = p.choices[0] if p.type == "choice" else p.min
    _checked(info.name, needed)
    for key, p in info.params.items():
        if p.type == "bool" and p.cli and key not in needed:
            shown = {**needed, key: True}
            try:
                benchbpf.check(info.name, **shown)
            except (ValueError, TypeError):
                continue
            return shown
    return needed


def _checked(name, params):
    try:
        benchbpf.check(name, **params)
    except (ValueError, TypeError) as e:
        raise ExtensionError(f"the reference's example run of {name} ({params}) is refused: "
                             f"{e}; give the parameter a value in the family's REQUIRED_PARAMS") from None


def _argv(info, params, kernel):
    """A command line of the run `params`: benchbpf's, or the kernel bench's
    (which has no consumer by default and needs -a where benchbpf always pins)."""
    argv = []
    if kernel and info.default_consumers:
        argv.append(f"-c{info.default_consumers}")
    if kernel and info.always_pinned:
        argv.append("-a")
    argv.append(info.name)
    for key, value in params.items():
        p = info.params[key]
        if p.choice_flags:
            argv.append("--" + value)
        elif p.type == "bool":
            if value:
                argv.append(p.flag)
        else:
            argv += [p.flag, str(value)]
    return argv


def _same_run(info, argv, params):
    """The command's own checker must read argv as the run `params`."""
    try:
        name, kwargs = cli.check_command(argv)
    except (ValueError, TypeError, SystemExit) as e:
        raise ExtensionError(f"the reference's command line {shlex.join(argv)!r} is refused: "
                             f"{e}") from None
    got = {k: v for k, v in kwargs.items() if k in info.params}
    if name != info.name or got != params:
        raise ExtensionError(f"the reference's command line {shlex.join(argv)!r} reads as "
                             f"{name} {got}, not {info.name} {params}")


def _runs(call):
    """(benchmark, parameters) that call() would run, nothing loaded."""
    return would_run(call)


def _family_calls():
    """benchmark -> (function's dotted name, args, kwargs) of the family
    modules: their BENCHMARKS tables (function name -> benchmark name), and
    the functions that take the benchmark as an argument."""
    calls = {}
    for name in benchbpf.list_benchmarks():
        family = benchbpf.describe(name).family
        try:
            module = importlib.import_module(f"benchbpf.{family}")
        except ImportError:
            continue
        table = getattr(module, "BENCHMARKS", None)
        if isinstance(table, dict):
            for function, bench in table.items():
                calls.setdefault(bench, (f"{module.__name__}.{function}", (), ()))
    for kind in trigger.UPROBE_KINDS:
        for ret in (False, True):
            for multi in (False, True):
                kwargs = tuple((k, True) for k, v in (("ret", ret), ("multi", multi)) if v)
                calls.setdefault(trigger.uprobe_name(kind, ret, multi),
                                 ("benchbpf.trigger.uprobe", (kind,), kwargs))
    for site in trigger.USDT_SITES:
        calls.setdefault(f"trig-usdt-{site}", ("benchbpf.trigger.usdt", (site,), ()))
    for function, kinds in (("ringbuf", ("rb-libbpf", "rb-custom")),
                            ("perfbuf", ("pb-libbpf", "pb-custom"))):
        for bench, consumer in zip(kinds, benchbpf.ringbuf.CONSUMERS):
            calls.setdefault(bench, (f"benchbpf.ringbuf.{function}", (),
                                     (("consumer", consumer),)))
    calls.setdefault("count-global", ("benchbpf.count.global_", (), ()))
    calls.setdefault("count-local", ("benchbpf.count.local", (), ()))
    calls.setdefault("sockmap", ("benchbpf.sockmap.sockmap", (), ()))
    calls.setdefault("xdp-lb", ("benchbpf.xdp_lb.scenario",
                                (benchbpf.describe("xdp-lb").params["scenario"].choices[0],), ()))
    return calls


def _resolve(dotted):
    module, _, attr = dotted.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def _family_call(info, calls):
    """The family function's call of this benchmark, checked to run it:
    (call text, function), or ("", "")."""
    if info.name not in calls:
        return "", ""
    function, args, kwargs = calls[info.name]
    target = _resolve(function)
    # A positional parameter without default takes the example's value.
    sig = inspect.signature(target)
    args = list(args)
    for pname, param in list(sig.parameters.items())[len(args):]:
        if param.default is param.empty and param.kind in (param.POSITIONAL_ONLY,
                                                          param.POSITIONAL_OR_KEYWORD):
            given = EXAMPLE_VALUES.get(info.name, {})
            if pname not in given:
                raise ExtensionError(f"{function}() needs {pname}: give it a value in "
                                     f"the family's REQUIRED_PARAMS")
            args.append(given[pname])
    ran, _ = _runs(lambda: target(*args, **dict(kwargs)))
    if ran != info.name:
        raise ExtensionError(f"{_call(function, args, kwargs)} runs {ran}, not {info.name}")
    return _call(function, args, kwargs), function


def _features_by_choice(info):
    base = features.requirements(info.name)
    out = []
    for key, p in info.params.items():
        if p.type != "choice":
            continue
        for choice in p.choices:
            needs = features.requirements(info.name, **{key: choice})
            if needs != base:
                out.append((key, choice, tuple(needs)))
    return base, tuple(out)


def benchmark_reference():
    """[(family, module name or "", [BenchmarkDoc, ...]), ...] in registry order."""
    calls = _family_calls()
    families = {}
    for name in benchbpf.list_benchmarks():
        info = benchbpf.describe(name)
        params = _example_params(info)
        command = ["benchbpf", *_argv(info, params, kernel=False)]
        _same_run(info, command[1:], params)
        kernel = ""
        if info.family not in OWN_FAMILIES:
            kernel_argv = _argv(info, params, kernel=True)
            _same_run(info, kernel_argv, params)
            kernel = shlex.join(["./bench", *kernel_argv])
        family_call, family_function = _family_call(info, calls)
        needs, by_choice = _features_by_choice(info)
        families.setdefault(info.family, []).append(BenchmarkDoc(
            name=name, family=info.family, help=info.help, report=info.report,
            max_producers=info.max_producers, default_consumers=info.default_consumers,
            max_consumers=info.max_consumers, needs_bpf=info.needs_bpf,
            always_pinned=info.always_pinned, extra=info.extra,
            options=tuple(_option(p) for p in info.params.values()),
            features=tuple(needs), features_by_choice=by_choice,
            python_call=_call("benchbpf.run", (name,), params.items()),
            family_call=family_call, family_function=family_function,
            command=shlex.join(command), kernel_command=kernel))
    out = []
    for family, benches in families.items():
        try:
            module = importlib.import_module(f"benchbpf.{family}").__name__
        except ImportError:
            module = ""
        out.append((family, module, benches))
    return out


# ---------------------------------------------------------------- rendering

_CODE = re.compile(r"``(.+?)``|`([^`]+)`")


def _inline(text):
    """Text nodes, with `code` and ``code`` as literals (help texts and
    docstrings write code so)."""
    out, pos = [], 0
    for m in _CODE.finditer(text):
        if m.start() > pos:
            out.append(nodes.Text(text[pos:m.start()]))
        out.append(nodes.literal(text=m.group(1) or m.group(2)))
        pos = m.end()
    if pos < len(text):
        out.append(nodes.Text(text[pos:]))
    return out


def _para(*parts):
    p = nodes.paragraph()
    for part in parts:
        if isinstance(part, str):
            p += _inline(part)
        else:
            p += part
    return p


def _parsed(directive, lines):
    """Nodes of generated Markdown lines, parsed where the directive stands."""
    body = nodes.Element()
    directive.state.nested_parse(StringList(lines, source=directive.get_source_info()[0]),
                                 directive.content_offset, body)
    return body.children


def _section(document, label, title):
    """A section other pages can {ref} by `label` (its id in the page too)."""
    section = nodes.section(ids=[label], names=[label])
    section += nodes.title(text=title)
    document.note_explicit_target(section)
    return section


def _xref(domain, reftype, target, text, literal=True):
    ref = addnodes.pending_xref("", refdomain=domain, reftype=reftype, reftarget=target,
                                refexplicit=True, refwarn=True)
    ref += nodes.literal(text=text) if literal else nodes.inline(text=text)
    return ref


def _code(text, language):
    block = nodes.literal_block(text, text)
    block["language"] = language
    return block


def _summary(module_name):
    doc = inspect.getdoc(importlib.import_module(module_name)) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def _threads(b):
    producers = "one producer thread" if b.max_producers == 1 else \
        f"1..{b.max_producers} producer threads (default 1)"
    if b.max_consumers:
        consumers = f"{b.default_consumers} consumer threads by default, at most " \
            f"{b.max_consumers}"
    else:
        consumers = "no consumer thread"
    text = f"Threads: {producers}, {consumers}."
    if b.always_pinned:
        text += " Threads are always pinned to CPUs (the kernel's bench requires -a)."
    return text


def _option_item(b, o):
    item = nodes.definition_list_item()
    term = nodes.term(ids=[f"bench-{b.name}-{o.keyword}"])
    invocation = " | ".join(o.flags) if o.type == "choice" and not o.metavar else \
        ", ".join(o.flags) + (f" {o.metavar}" if o.metavar else "")
    term += nodes.literal(text=invocation)
    term += nodes.Text(" · ")
    term += nodes.literal(text=f"{o.keyword}=")
    item += term
    body = nodes.definition()
    body += _para(o.help)
    default = "required" if o.required else f"default {_py(o.default)}"
    facts = f"{o.type}, {default}; {o.allowed}."
    if not o.kernel_flag:
        facts += " benchbpf's own: the kernel's bench has no such flag."
    body += _para(facts)
    described = [(c, h) for c, h in o.choices if h]
    if described:
        choices = nodes.bullet_list()
        for choice, text in described:
            choices += nodes.list_item("", _para(nodes.literal(text=choice), ": ", text))
        body += choices
    item += body
    return item


def _benchmark_section(document, b):
    section = _section(document, f"bench-{b.name}", b.name)
    section += _para(b.help)
    family = _xref("std", "ref", f"family-{b.family}", b.family, literal=False)
    section += _para("Family ", family, f"; report kind {b.report}. ",
                     "Loads BPF programs." if b.needs_bpf else "Loads no BPF program.",
                     " ", _threads(b))
    if b.extra:
        section += _para("Counters of each sample besides hits and drops: ",
                         ", ".join(f"`{x}`" for x in b.extra), ".")
    probe = _xref("py", "func", api_entry(features.__name__, "features"), "features()")
    if b.features:
        section += _para("Kernel features it needs, as ", probe, " names them: ",
                         ", ".join(f"`{f}`" for f in b.features) + ".")
    elif b.needs_bpf:
        section += _para("It needs no kernel feature that ", probe,
                         " probes, beyond loading BPF programs.")
    else:
        section += _para("It needs nothing of BPF from the kernel.")
    for keyword, choice, needs in b.features_by_choice:
        section += _para(f"With `{keyword}={_py(choice)}`: "
                         + (", ".join(f"`{f}`" for f in needs) or "none") + ".")
    if b.options:
        section += _para("Options, besides the ",
                         _xref("std", "ref", "common-options", "common options",
                               literal=False), ":")
        options = nodes.definition_list()
        for o in b.options:
            options += _option_item(b, o)
        section += options
    else:
        section += _para("No options besides the ",
                         _xref("std", "ref", "common-options", "common options",
                               literal=False), ".")
    section += _para("An example run from Python:")
    section += _code(b.python_call, "python")
    if b.family_call:
        section += _para("Its family's function, ",
                         _xref("py", "func", api_entry(*b.family_function.rsplit(".", 1)),
                               b.family_function + "()"),
                         ", runs it too (here with its defaults):")
        section += _code(b.family_call, "python")
    shell = f"$ {b.command}"
    if b.kernel_command:
        shell += f"\n$ {b.kernel_command}      # the kernel's bench"
    section += _para("The same run from the command line"
                     + (", benchbpf's, then the kernel's bench's:" if b.kernel_command else
                        " (benchbpf's own benchmark: the kernel's bench has no such one):"))
    section += _code(shell, "console")
    return section


def common_options():
    """[(keyword, flag, default, help)] of the options every benchmark
    takes: run()'s keywords (COMMON_OPTIONS), the command's flags and help."""
    parser = cli.build_parser()
    by_flag = {f: a for a in parser._actions for f in a.option_strings}
    formatter = parser._get_formatter()
    out = []
    for keyword, default in benchbpf.COMMON_OPTIONS.items():
        flag = cli.COMMON_FLAGS.get(keyword, "--" + keyword.replace("_", "-"))
        action = by_flag.get(flag)
        if action is None:
            raise ExtensionError(f"common option {keyword}: the command has no {flag}")
        out.append((keyword, formatter._format_action_invocation(action), default,
                    formatter._expand_help(action)))
    return out


def _table(rows, widths):
    """A table of text cells (`code` as literals), the first row its head."""
    table = nodes.table()
    group = nodes.tgroup(cols=len(widths))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head, body = nodes.thead(), nodes.tbody()
    for i, row in enumerate(rows):
        line = nodes.row()
        for cell in row:
            line += nodes.entry("", _para(cell))
        (head if i == 0 else body).append(line)
    group += head
    group += body
    return table


def _common_options_section(document):
    section = _section(document, "common-options", "Common options")
    section += _para("Every benchmark takes these: from Python as keywords of ",
                     _xref("py", "func", "benchbpf.run", "benchbpf.run()"),
                     ", from the command line as flags (",
                     _xref("std", "ref", "cli-benchbpf", "the benchbpf command",
                           literal=False),
                     "). A benchmark's own options are given with it below.")
    rows = [("Python keyword", "Command line", "Default", "What it sets")]
    rows += [(f"`{k}=`", f"`{flag}`", f"`{_py(d)}`", h) for k, flag, d, h in common_options()]
    section += _table(rows, (14, 18, 10, 58))
    return section


class BenchmarksDirective(SphinxDirective):
    """The common options, then every benchmark, family by family, from the
    registry."""
    has_content = False

    def run(self):
        document = self.state.document
        out = [_common_options_section(document)]
        for family, module, benches in benchmark_reference():
            section = _section(document, f"family-{family}", family)
            if module:
                section += _para(_summary(module), " Python module: ",
                                 _xref("py", "mod", module, module), ".")
            else:
                section += _para("No Python module of its own: run its benchmarks with ",
                                 _xref("py", "func", "benchbpf.run", "benchbpf.run()"), ".")
            for b in benches:
                section += _benchmark_section(document, b)
            out.append(section)
        return out


# ---------------------------------------------------------------- command line

class _Captured(Exception):
    def __init__(self, parser):
        super().__init__(parser.prog)
        self.parser = parser


def _subcommand_parser(main):
    """The parser whose help `benchbpf WORD --help` gives, taken as main()
    is about to parse or print: main() builds it inside, nothing runs."""
    def capture(parser, *args, **kwargs):
        raise _Captured(parser)
    methods = ("parse_args", "parse_known_args", "print_help")
    saved = {m: getattr(argparse.ArgumentParser, m) for m in methods}
    for m in methods:
        setattr(argparse.ArgumentParser, m, capture)
    try:
        main(["--help"])
    except _Captured as e:
        return e.parser
    finally:
        for m, method in saved.items():
            setattr(argparse.ArgumentParser, m, method)
    raise ExtensionError(f"{main.__name__}(['--help']) built no parser")


def parsers():
    """[(label, parser)]: the command's, then each subcommand's."""
    out = [("cli-benchbpf", cli.build_parser())]
    for word, main in cli.SUBCOMMANDS.items():
        out += _with_nested(f"cli-{word}", _subcommand_parser(main))
    return out


def _with_nested(label, parser):
    """[(label, parser)] of a parser and of the subcommands it has in turn
    (`benchbpf history record`, ...), each with its own flags."""
    out = [(label, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for word, sub in action.choices.items():
                out += _with_nested(f"{label}-{word}", sub)
    return out


_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")


def _md(text):
    """Markdown of plain text: ASCII punctuation escaped, `code` kept."""
    out, pos = [], 0
    for m in _CODE.finditer(text):
        out.append(_PUNCT.sub(r"\\\1", text[pos:m.start()]))
        out.append(f"``{m.group(1) or m.group(2)}``")
        pos = m.end()
    out.append(_PUNCT.sub(r"\\\1", text[pos:]))
    return "".join(out)


_BENCHES = re.compile(r"\s*\[([a-z0-9, -]+)\]$")


def _help_markdown(text):
    """An option's help; a trailing [bench, ...] becomes links to them."""
    m = _BENCHES.search(text)
    names = [n.strip() for n in m.group(1).split(",")] if m else []
    if not names or any(n not in benchbpf.list_benchmarks() for n in names):
        return _md(text)
    return _md(text[:m.start()]) + " (" + ", ".join(
        f"{{ref}}`{n} <bench-{n}>`" for n in names) + ")"


def _usage(parser):
    """The usage line; options of the parser's own groups only, each other
    group as [its title] (the command's benchmark options are many)."""
    own = (parser._positionals, parser._optionals)
    actions = [a for g in own for a in g._group_actions]
    formatter = parser._get_formatter()
    formatter.add_usage(parser.usage, actions, parser._mutually_exclusive_groups, prefix="")
    usage = formatter.format_help().strip()
    extra = [f"[{g.title}]" for g in parser._action_groups
             if g not in own and _shown(g)]
    return " ".join([usage, *extra])


def _shown(group):
    """A group's actions that --help describes (not those it hides,
    as the command's benchmark options: `benchbpf NAME --help` has them)."""
    return [a for a in group._group_actions if a.help != argparse.SUPPRESS]


def _argparse_text(parser, text):
    """A description or epilog as argparse prints it (%(prog)s only)."""
    return text % {"prog": parser.prog} if "%(prog)" in text else text


def _parser_markdown(parser):
    formatter = parser._get_formatter()
    lines = ["```text", _usage(parser), "```", ""]
    if parser.description:
        lines += [_md(_argparse_text(parser, parser.description)), ""]
    lines += [f"```{{program}} {parser.prog}", "```", ""]
    for group in parser._action_groups:
        if not _shown(group):
            continue
        lines += [f"```{{rubric}} {group.title.capitalize()}", "```", ""]
        for action in _shown(group):
            invocation = formatter._format_action_invocation(action)
            help_text = formatter._expand_help(action) if action.help else ""
            lines += [f"```{{option}} {invocation}", _help_markdown(help_text), "```", ""]
    if parser.epilog:
        lines += ["```text", _argparse_text(parser, parser.epilog).strip(), "```", ""]
    return lines


class CliDirective(SphinxDirective):
    """The command and each subcommand, from their argparse parsers."""
    has_content = False

    def run(self):
        document = self.state.document
        out = []
        for label, parser in parsers():
            section = _section(document, label, parser.prog)
            section += _parsed(self, _parser_markdown(parser))
            out.append(section)
        return out


# ---------------------------------------------------------------- API

def layer_modules(folder):
    """A layer folder (benchbpf.results) and its modules whose names do not
    start with '_' and that have an __all__, by name: what its API page
    documents."""
    package = importlib.import_module(folder)
    out = [package]
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"{folder}.{info.name}")
            if hasattr(module, "__all__"):
                out.append(module)
    return out


def public_modules():
    """benchbpf, then each layer folder (by name) and its public modules."""
    out = [benchbpf]
    for info in sorted(pkgutil.iter_modules(benchbpf.__path__), key=lambda i: i.name):
        if info.ispkg and not info.name.startswith("_"):
            out += layer_modules(f"benchbpf.{info.name}")
    return out


def _every_module():
    """Every module of the package, private ones too (for the `#:` comments
    of what the public ones re-export)."""
    for info in pkgutil.walk_packages(benchbpf.__path__, "benchbpf."):
        if not info.name.endswith("__main__"):
            yield importlib.import_module(info.name)


def called_function(obj):
    """The function a callable module runs when called (benchbpf.ab runs
    benchbpf.analysis.ab.ab), else obj itself."""
    if inspect.ismodule(obj) and callable(obj):
        return getattr(obj, obj.__call_target__)
    return obj


@functools.lru_cache(maxsize=None)
def api_homes():
    """id(class or function) -> (module, name) of the entry that documents
    it.  A function the top level exports is documented there, under the
    name users call it by (benchbpf.sweep; benchbpf.ab, the callable module,
    for the function it runs).  Any other class or function: the module
    that defines it where that module exports it, else the first other
    submodule that does (by name), else the top level.  Every other module
    that exports it links there."""
    modules = public_modules()
    homes = {}
    for module in [*modules[1:], modules[0]]:
        for name in module.__all__:
            obj = getattr(module, name, None)
            # Values (numbers, tuples) may be one object by chance: each
            # module documents its own.
            if not (inspect.isclass(obj) or inspect.isroutine(obj)):
                continue
            defined_in = getattr(obj, "__module__", None)
            if id(obj) not in homes or defined_in == module.__name__:
                homes[id(obj)] = (module.__name__, name)
    for name in benchbpf.__all__:
        obj = called_function(getattr(benchbpf, name, None))
        if inspect.isroutine(obj):
            homes[id(obj)] = (benchbpf.__name__, name)
    return homes


def api_entry(module_name, name):
    """The full name under which `name` of module `module_name` is documented."""
    module = importlib.import_module(module_name)
    if not hasattr(module, name):
        return f"{module_name}.{name}"   # autodoc then says it is missing
    obj = getattr(module, name)
    if inspect.ismodule(obj) and not documented_as_function(module_name, name):
        return obj.__name__
    home = api_homes().get(id(called_function(obj)))
    return ".".join(home) if home else f"{module_name}.{name}"


def documented_as_function(module_name, name):
    """Whether `name` of `module_name` is a callable module documented
    there as the function it runs (benchbpf.ab)."""
    obj = getattr(importlib.import_module(module_name), name, None)
    return inspect.ismodule(obj) and callable(obj) and \
        api_homes().get(id(called_function(obj))) == (module_name, name)


def other_exports(obj):
    """[(module, full name)] of the public modules below the top level that
    export obj: where a name the top level documents lives too."""
    return [(m.__name__, f"{m.__name__}.{n}") for m in public_modules()[1:]
            for n in m.__all__ if getattr(m, n, None) is obj]


def _api_docstring(app, what, name, obj, options, lines):
    """autodoc's docstring of an entry: a callable module's section shows
    the module's own docstring and its function entry the function's; an
    entry of the top level names the modules that export it too."""
    from sphinx.util.docstrings import prepare_docstring
    if inspect.ismodule(obj) and callable(obj):
        own = vars(obj).get("__doc__") if what == "module" else \
            inspect.getdoc(called_function(obj))
        lines[:] = prepare_docstring(own or "")
    if what != "function" or name.rpartition(".")[0] != benchbpf.__name__:
        return
    same = [f"``{full}``, in :py:mod:`{module}`"
            for module, full in other_exports(called_function(obj))]
    if same:
        lines += ["", "The same function: " + "; ".join(same) + "."]
    if inspect.ismodule(obj):
        lines += ["", f"``{name}`` is the module :py:mod:`{obj.__name__}`, callable: "
                  "its other names are its attributes."]


def _attribute_docs(module_name):
    """{name: lines} of a module's `#:` comments (autodoc's source of data
    docs), empty where its source cannot be read."""
    from sphinx.pycode import ModuleAnalyzer, PycodeError
    try:
        docs = ModuleAnalyzer.for_module(module_name).find_attr_docs()
    except PycodeError:
        return {}
    return {name: list(lines) for (scope, name), lines in docs.items() if not scope}


def reexported_data(module):
    """[(name, comment lines)] of the values a module exports but assigns
    elsewhere (from ._runner import COMMON_OPTIONS): autodoc finds no `#:`
    comment for them where they are exported, so they take the one where
    they are assigned."""
    own = _attribute_docs(module.__name__)
    wanted = [n for n in module.__all__ if hasattr(module, n) and n not in own
              and not (inspect.isclass(getattr(module, n)) or
                       inspect.isroutine(getattr(module, n)) or
                       inspect.ismodule(getattr(module, n)))]
    out = []
    for name in wanted:
        for other in _every_module():
            if other is not module and getattr(other, name, None) is getattr(module, name):
                comment = _attribute_docs(other.__name__).get(name)
                if comment:
                    out.append((name, comment))
                    break
    return out


def _named_modules(lines):
    """Module names of a benchbpf-api directive's lines: a module, or a
    layer folder followed by .* for the folder and its public modules."""
    for line in (line.strip() for line in lines if line.strip()):
        if line.endswith(".*"):
            yield from (m.__name__ for m in layer_modules(line[:-2]))
        else:
            yield line


class ApiDirective(SphinxDirective):
    """One section per module named in the content (one a line, or
    benchbpf.FOLDER.* for a layer folder and its public modules): its
    docstring and every name of its __all__ documented there, and links for
    the names it exports that another module documents."""
    has_content = True

    def run(self):
        document = self.state.document
        out = []
        for module_name in _named_modules(self.content):
            module = importlib.import_module(module_name)
            absent = [n for n in module.__all__ if not hasattr(module, n)]
            if absent:
                # autodoc would leave them out without a word
                LOGGER.warning(f"{module_name}.__all__ names {', '.join(absent)}, which "
                               "the module does not have", location=self.get_location())
            elsewhere = [(n, api_entry(module_name, n)) for n in module.__all__
                         if api_entry(module_name, n) != f"{module_name}.{n}"]
            # automodule would take a module for data: each is documented
            # after it, as the function it runs
            functions = [n for n in module.__all__ if documented_as_function(module_name, n)]
            lines = ["```{eval-rst}", f".. automodule:: {module_name}"]
            if elsewhere or functions:
                excluded = [n for n, _ in elsewhere] + functions
                lines.append(f"   :exclude-members: {', '.join(excluded)}")
            if elsewhere:
                # the directive's content: after the module's docstring
                lines += ["", "   .. rubric:: Also exported here", ""]
                lines += [f"   * ``{n}``: :py:obj:`{entry}`" for n, entry in elsewhere]
            for name in functions:
                lines += ["", f".. autofunction:: {module_name}.{name}"]
            for name, comment in reexported_data(module):
                lines += ["", f".. autodata:: {module_name}.{name}", ""]
                lines += ["   " + x for x in comment]
            lines += ["```", ""]
            section = _section(document, f"api-{module_name}", module_name)
            section += _parsed(self, lines)
            out.append(section)
        return out


# ---------------------------------------------------------------- records

#: A record's "- taken: 2026-12-01 22:19 UTC, 1310 s; host: AMD EPYC, 2 CPUs, ..." line.
_TAKEN = re.compile(r"^- taken: (\d{4}-\d\d-\d\d)[^;\n]*; host: ([^,\n]+)", re.M)
_HEADING = re.compile(r"^# (.+)$", re.M)


def _machine(text):
    """"AMD EPYC, 2026-12-01": the CPU and day of a record's taken/host
    line, or "" where it has none."""
    m = _TAKEN.search(text)
    if not m:
        return ""
    cpu = re.sub(r"\((?:R|TM)\)|\b(?:Processor|CPU)\b", "", m.group(2))
    return f"{' '.join(cpu.split())}, {m.group(1)}"


def record_titles(folder):
    """{file stem: title in the manual} of the measurement records (*.md)
    in `folder`: each record's first heading, made its own where another
    record has the same one by the machine and day it was taken (its
    taken/host line), else by its file name.  The file keeps its heading."""
    heads = {}
    for path in sorted(Path(folder).glob("*.md")):
        text = path.read_text(encoding="utf-8")
        m = _HEADING.search(text)
        heads[path.stem] = (m.group(1).strip() if m else path.stem, _machine(text))
    shared = [t for t, _ in heads.values()]
    titles = {stem: f"{t} ({machine or stem})" if shared.count(t) > 1 else t
              for stem, (t, machine) in heads.items()}
    # the same heading, machine and day: the file names tell them apart
    taken = list(titles.values())
    return {stem: t if taken.count(t) == 1 else f"{heads[stem][0]} ({stem})"
            for stem, t in titles.items()}


def _record_title(app, docname, source):
    """A record's page takes its title from record_titles()."""
    folder, _, stem = docname.partition("/")
    if folder != "results":
        return
    title = record_titles(Path(app.srcdir) / folder).get(stem)
    if title is None:
        return
    heading = f"# {title}"
    if _HEADING.search(source[0]):
        source[0] = _HEADING.sub(lambda m: heading, source[0], count=1)
    else:
        source[0] = f"{heading}\n\n{source[0]}"


def _record_links(app, doctree):
    """A link to a measurement record resolves, through the docs/results
    link, to results/NAME.md outside the source (which Sphinx names by an
    absolute or a ../ path, by version): point it at the record's page."""
    srcdir = Path(app.srcdir)
    results = (srcdir / "results").resolve()
    for ref in doctree.findall(addnodes.pending_xref):
        if ref.get("refdomain") != "doc":
            continue
        target = (srcdir / ref.get("reftarget", "")).resolve()
        if target.parent == results:
            ref["reftarget"] = f"results/{target.name}"


class _NoParserConfigDump:
    """Drops MyST's "myst vX: MdParserConfig(...)" line: a page-wide dump of
    every parser setting that each build printed, telling nobody anything."""

    def filter(self, record):
        return not any(type(a).__name__ == "MdParserConfig" for a in (record.args or ()))


def setup(app):
    # myst_parser logs its settings when the builder starts (after this setup).
    logging.getLogger("myst_parser.sphinx_ext.main").logger.addFilter(_NoParserConfigDump())
    app.add_directive("benchbpf-benchmarks", BenchmarksDirective)
    app.add_directive("benchbpf-cli", CliDirective)
    app.add_directive("benchbpf-api", ApiDirective)
    app.connect("doctree-read", _record_links)
    app.connect("source-read", _record_title)
    app.connect("autodoc-process-docstring", _api_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
