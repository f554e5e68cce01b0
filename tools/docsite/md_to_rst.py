#!/usr/bin/env python3
"""docs/*.md as reStructuredText for Ansible's docs site (docs/docsite/rst/, listed in docs/docsite/extra-docs.yml).

antsibull-docs renders a collection's extra docs from RST only, and docs/ is Markdown (read on the repository and
in the installed collection). This converts each page with pandoc (pypandoc-binary, in the docs virtualenv,
constraints/docs.txt), gives it the label antsibull-docs expects, and (the pandoc filter links.lua) turns links to
another page of docs/ into references to that page, and links to other files of the repository (which the docs
site does not have) into the file's path as text. The RST is generated, never edited: `make docsite` writes it, and the docs check
(`--check`) fails when a page of docs/ changed without it.

Usage: md_to_rst.py [--check]
"""

import argparse
import difflib
import os
import sys

import pypandoc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")
OUT = os.path.join(DOCS, "docsite", "rst")
LABEL = "ansible_collections.flightcontrol.openstack.docsite.%s"
FILTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "links.lua")
HEADER = ".. Generated from docs/%s.md by tools/docsite/md_to_rst.py (make docsite): edit the Markdown.\n\n"


def pages():
    """The names of the pages of docs/ (without .md), sorted."""
    return sorted(name[:-3] for name in os.listdir(DOCS) if name.endswith(".md"))


def convert(name):
    """The RST of docs/<name>.md (links and labels by the pandoc filter links.lua)."""
    body = pypandoc.convert_file(os.path.join(DOCS, name + ".md"), "rst", format="gfm",
                                 extra_args=["--wrap=none", "--lua-filter", FILTER])
    return HEADER % name + ".. _%s:\n\n" % (LABEL % name) + body.rstrip() + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the RST differs from what docs/ makes")
    args = parser.parse_args()
    known = pages()
    stale = []
    os.makedirs(OUT, exist_ok=True)
    wanted = set(name + ".rst" for name in known)
    for name in known:
        path, rst = os.path.join(OUT, name + ".rst"), convert(name)
        current = open(path).read() if os.path.exists(path) else ""
        if current == rst:
            continue
        if args.check:
            stale.append(name)
            sys.stdout.writelines(list(difflib.unified_diff(current.splitlines(True), rst.splitlines(True),
                                                            path, "generated"))[:20])
        else:
            with open(path, "w") as handle:
                handle.write(rst)
    extra = sorted(set(os.listdir(OUT)) - wanted)
    for name in extra:
        if args.check:
            stale.append(name)
        else:
            os.remove(os.path.join(OUT, name))
    if stale:
        print("docs/docsite/rst is not what docs/ makes (%s): run make docsite" % ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
