#!/usr/bin/python3
"""The formatting check: every C++ file of the tree is as clang-format-14 with the
repository's .clang-format writes it, so a diff shows what changed, not whose
editor touched it. Fix a finding with `clang-format-14 -i FILE` (or
`git clang-format-14` for the lines you changed).

  tests/lint/format.py [--root DIR] [--clang-format PATH]    exit 0 clean, 1 with one line per file that differs
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

# Product and test code; not the generated trees, the build directories or test data.
FOLDERS = ["agent", "common", "config", "container", "disk", "engine", "gpu", "host", "readiness", "registry",
           "tests", "bench"]
SKIP_PARTS = {"data", "work", "corpus"}
SUFFIXES = {".cpp", ".hpp", ".h", ".cc"}


def sources(root: Path) -> list[Path]:
    found = []
    for folder in FOLDERS:
        for p in sorted((root / folder).rglob("*")):
            rel = p.relative_to(root)
            if p.suffix in SUFFIXES and p.is_file() and not (set(rel.parts[:-1]) & SKIP_PARTS):
                found.append(p)
    return found


def differs(clang_format: str, path: Path) -> bool:
    """True when clang-format would change the file (its output is not the file's text)."""
    original = path.read_bytes()
    out = subprocess.run([clang_format, "--style=file", f"--assume-filename={path}"], input=original,
                         capture_output=True, check=True, cwd=path.parent)
    return out.stdout != original


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    ap.add_argument("--clang-format", default="clang-format-14")
    a = ap.parse_args()
    files = sources(a.root)
    if not files:
        print(f"format: no C++ files under {a.root}")
        return 1
    bad = [f for f in files if differs(a.clang_format, f)]
    for f in bad:
        print(f"format: {f.relative_to(a.root)} differs from {a.clang_format}'s output "
              f"(fix: {a.clang_format} -i {f.relative_to(a.root)})")
    if not bad:
        print(f"format: {len(files)} C++ files are as {a.clang_format} writes them")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
