#!/usr/bin/python3
"""The tests need nothing outside the repository: a plain clone builds and
passes them. The developers' checkout has a folder `shared` beside it
(../shared, /work/shared) that a clone does not have, so no file under
tests/, bench/, packaging/ or .ci/ may name it; the data the tests read lives
in tests/data/. The one exception is tests/realapi/: its kube-apiserver
binaries and the KubeVirt/CDI CRDs are too large to keep here, and the suite
says NOT RUN without them.

Besides the literal paths, it catches the usual ways of building them
(os.path.join(repo, "..", "shared"), Path(repo).parent / "shared").

  tests/lint/self_contained.py [--root DIR]   exit 0 clean, 1 with one line per finding
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

SCANNED = ("tests", "bench", "packaging", ".ci")
EXEMPT = ("tests/realapi",)
# Outputs of runs, never versioned (.gitignore): what they mention is not read by a test.
UNVERSIONED = ("tests/e2e/work", "bench/work")
# This check and its test state the rule, so they name the folder.
RULE_FILES = ("tests/lint/self_contained.py", "tests/lint/self_contained_test.py")

PATTERNS = [
    re.compile(r"\.\./shared\b"),
    re.compile(r"/work/shared\b"),
    re.compile(r"""["']\.\.["']\s*,\s*["']shared["']"""),
    re.compile(r"""\.parent\s*/\s*["']shared\b"""),
]


def _under(rel: str, prefixes: tuple[str, ...]) -> bool:
    return any(rel == p or rel.startswith(p + "/") for p in prefixes)


def files(root: Path):
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(root / top):
            rel_dir = Path(dirpath).relative_to(root).as_posix()
            dirnames[:] = sorted(d for d in dirnames
                                 if d != "__pycache__"
                                 and not _under(f"{rel_dir}/{d}", EXEMPT + UNVERSIONED))
            for name in sorted(filenames):
                rel = f"{rel_dir}/{name}"
                if rel not in RULE_FILES:
                    yield rel


def check(root: Path) -> list[str]:
    findings = []
    for rel in files(root):
        data = (root / rel).read_bytes()
        if b"\0" in data:
            continue  # binary
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if any(p.search(line) for p in PATTERNS):
                findings.append(f"{rel}:{number}: names the shared folder outside the repository "
                                f"(a plain clone has none: keep test data in tests/data/): {line.strip()}")
    return findings


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    a = ap.parse_args()
    found = check(a.root)
    for f in found:
        print(f)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
