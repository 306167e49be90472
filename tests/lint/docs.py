#!/usr/bin/python3
"""The documentation check: README.md stays something a newcomer reads in an
hour, and the reference it points to can be reached and does not rot.

- README.md has fewer than MAX_README_LINES lines (the reference lives in docs/);
- every docs/*.md page is linked from README.md (a page nobody links is lost);
- every relative markdown link in README.md and docs/*.md names a file or folder
  that exists, and a `#anchor` on a markdown file (or alone, for the same page)
  names one of that file's headings, slugged as GitHub slugs them.

Links inside code spans and fenced code blocks are not links. Absolute URLs
(`https:`, `mailto:` ...) are not checked: the test must not need a network.

  tests/lint/docs.py [--root DIR]    exit 0 clean, 1 with one line per finding
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

MAX_README_LINES = 300

# [text](target) or [text](target "title"); images (![alt](src)) alike.
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# [label]: target (a reference-style link's definition)
DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text (code spans and link syntax
    reduced to their text), lowercased, every character but letters, digits,
    `_`, `-` and space dropped, spaces turned into `-`."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = "".join(c for c in text.lower() if c.isalnum() or c in "_- ")
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor; a repeated one gets -1, -2 ... as on GitHub."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(text: str):
    """(line number, target) of every link outside code."""
    for n, line in prose_lines(text):
        if m := DEFINITION.match(line):
            yield n, m.group(1)
            continue
        for m in LINK.finditer(CODE_SPAN.sub("", line)):
            yield n, m.group(1)


def check(root: Path) -> list[str]:
    root = root.resolve()
    findings: list[str] = []
    readme = root / "README.md"
    if not readme.is_file():
        return ["README.md: missing"]
    docs = sorted((root / "docs").glob("*.md"))
    pages = [readme] + docs

    count = len(readme.read_text().splitlines())
    if count >= MAX_README_LINES:
        findings.append(f"README.md: {count} lines, the limit is {MAX_README_LINES - 1}: "
                        f"move reference text to a page in docs/")

    anchor_cache: dict[Path, set[str]] = {}

    def anchors_of(path: Path) -> set[str]:
        if path not in anchor_cache:
            anchor_cache[path] = anchors(path.read_text())
        return anchor_cache[path]

    linked_from_readme: set[Path] = set()
    for page in pages:
        rel = page.relative_to(root)
        for n, target in links(page.read_text()):
            if not target or URL_SCHEME.match(target) or target.startswith("//"):
                continue
            path_part, _, anchor = target.partition("#")
            if path_part.startswith("/"):
                findings.append(f"{rel}:{n}: link {target} is absolute; use a path relative to {rel}")
                continue
            dest = (page.parent / path_part).resolve() if path_part else page
            try:
                dest.relative_to(root)
            except ValueError:
                findings.append(f"{rel}:{n}: link {target} leaves the repository")
                continue
            if not dest.exists():
                findings.append(f"{rel}:{n}: link {target}: no such file")
                continue
            if page == readme and dest.is_file():
                linked_from_readme.add(dest)
            if anchor and dest.suffix == ".md" and dest.is_file() and anchor not in anchors_of(dest):
                findings.append(f"{rel}:{n}: link {target}: {dest.relative_to(root)} "
                                f"has no heading #{anchor}")

    for doc in docs:
        if doc not in linked_from_readme:
            findings.append(f"{doc.relative_to(root)}: not linked from README.md")
    return findings


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    findings = check(ap.parse_args().root)
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
