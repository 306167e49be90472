#!/usr/bin/python3
"""The formatting check: every C++ file of the tree is as clang-format-14 with the
repository's .clang-format writes it, so a diff shows what changed, not whose
editor touched it. Fix a finding with `clang-format-14 -i FILE` (or
`git clang-format-14` for the lines you changed).

  tests/lint/format.py [--root DIR] [--clang-format PATH]    exit 0 clean, 1 with one line per file that differs
"""

from __future__ import annotations

import argparse
import re
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


# clang-format's --dry-run names each place it would change as PATH:LINE:COL: (with --Werror) error:
# code should be clang-formatted [-Wclang-format-violations]; it writes a replacement only where
# its output differs from the text, so a file named there is one whose output is not its text.
VIOLATION = re.compile(r"^(?P<path>.+?):\d+:\d+: (?:warning|error): code should be clang-formatted")
# Files per clang-format process: one process costs its start (loading LLVM, ~50 ms of CPU), which
# one process per file paid 454 times; a chunk keeps the command line far below ARG_MAX.
CHUNK = 200


def differing(clang_format: str, files: list[Path]) -> list[Path]:
    """The files clang-format would change, from one --dry-run process per CHUNK files. Fails
    closed: a process that exits non-zero without naming a file raises (a missing or broken
    clang-format is no clean tree)."""
    bad: set[str] = set()
    for i in range(0, len(files), CHUNK):
        chunk = [str(f) for f in files[i:i + CHUNK]]
        out = subprocess.run([clang_format, "--style=file", "--dry-run", "--Werror", *chunk],
                             capture_output=True, text=True, errors="replace")
        named = {m["path"] for m in map(VIOLATION.match, out.stderr.splitlines()) if m}
        if out.returncode != 0 and not named:
            raise RuntimeError(f"{clang_format} exited {out.returncode} naming no file:\n{out.stderr[-2000:]}")
        if named - set(chunk):
            raise RuntimeError(f"{clang_format} named files it was not given: {sorted(named - set(chunk))[:3]}")
        bad |= named
    return [f for f in files if str(f) in bad]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    ap.add_argument("--clang-format", default="clang-format-14")
    a = ap.parse_args()
    files = sources(a.root)
    if not files:
        print(f"format: no C++ files under {a.root}")
        return 1
    try:
        bad = differing(a.clang_format, files)
    except (OSError, RuntimeError) as e:
        print(f"format: {e}")
        return 1
    for f in bad:
        print(f"format: {f.relative_to(a.root)} differs from {a.clang_format}'s output "
              f"(fix: {a.clang_format} -i {f.relative_to(a.root)})")
    if not bad:
        print(f"format: {len(files)} C++ files are as {a.clang_format} writes them")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
