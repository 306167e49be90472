#!/usr/bin/python3
"""The maintaining check: every file docs/maintaining.md's lists name exists,
so "which files a change touches" cannot name a file that was renamed or
folded away.

A path is a code span with a slash and nothing but path characters
(`host/cli/wait.cpp`, `host/verbs/wait/`, `config/settings.*`): it must name
a file or folder of the tree; one with `*` must match at least one. A span
with a placeholder (`host/cli/<command>.cpp`) names a file still to be
written and is skipped. Spans with spaces, `:` or `=` (commands, `http:PORT/PATH`)
are not paths.

  tests/lint/maintaining.py [--root DIR]    exit 0 clean, 1 with one line per finding
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

PAGE = "docs/maintaining.md"
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
PATH = re.compile(r"^[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-*<>]*)+$")
PLACEHOLDER = re.compile(r"<[^>]*>")


def named_paths(text: str):
    """(line number, path) of every code span outside fenced blocks that is a path."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in CODE_SPAN.finditer(line):
            span = m.group(2).strip()
            if PATH.match(span):
                yield n, span


def check(root: Path) -> tuple[list[str], int]:
    """(findings, how many paths were checked)."""
    page = root / PAGE
    if not page.is_file():
        return [f"{PAGE}: missing"], 0
    findings: list[str] = []
    checked = 0
    for n, path in named_paths(page.read_text()):
        if PLACEHOLDER.search(path):
            continue
        checked += 1
        if "*" in path:
            if not any(root.glob(path)):
                findings.append(f"{PAGE}:{n}: `{path}` matches no file")
        elif not (root / path).exists():
            findings.append(f"{PAGE}:{n}: `{path}` does not exist")
        elif path.endswith("/") and not (root / path).is_dir():
            findings.append(f"{PAGE}:{n}: `{path}` is not a folder")
    return findings, checked


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    a = ap.parse_args()
    findings, checked = check(a.root)
    for f in findings:
        print(f"maintaining: {f}")
    if not findings:
        print(f"maintaining: the {checked} paths {PAGE} names exist")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
