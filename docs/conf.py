"""Sphinx configuration of benchbpf's manual.

    python3 -m sphinx -W --keep-going -b html docs OUT

Warnings are errors: a broken {ref}, {doc} or page link fails the build.  The
reference pages are generated from the code at build time (docs/_ext), which
imports benchbpf: build with benchbpf installed (its C extension built); no
BPF privileges and no network are needed.

Measurement records: docs/results is a symbolic link to the repository's
results/, so each results/*.md is a page of the manual (measurements/index.md
lists them; docs/_ext gives each a title of its own).  A page links to a record by its path, from docs/tasks/x.md
either [the record](../../results/precision-2cpu.md) (the repository's path,
which GitHub follows too) or [the record](../results/precision-2cpu.md)
(through docs/results): the extension (docs/_ext) points both at the
record's page.  A record that does not exist is a broken link, hence an
error; other files there (.json.gz, .png) linked so are copied into the
built manual as downloads.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))

from benchbpf import __version__  # noqa: E402

project = "benchbpf"
release = version = __version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "benchbpf_docs"]

source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
# Sections carry their Markdown anchors: [text](page.md#a-heading) works.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# Members named in each module's __all__ (in that order), documented or not,
# so that a missing docstring shows as an empty entry rather than a missing one.
autodoc_default_options = {"members": True, "undoc-members": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"

html_theme = "furo"
# Flags and options stay as typed: "--flag" must not become an en dash.
smartquotes = False
html_title = f"benchbpf {release}"
