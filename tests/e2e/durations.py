#!/usr/bin/python3
"""durations.tsv from a ctest log: each e2e scenario's wall seconds as ctest printed them.

    tests/e2e/durations.py build/ctest-output.log [--write]

Prints the new table (or writes tests/e2e/durations.tsv with --write); scenarios the log
does not have keep their old figure. Measure on a quiet machine: the lanes are planned
from the ratios, so a uniformly slow run plans the same.
"""
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TABLE = HERE / "durations.tsv"
LINE = re.compile(r"Test +#\d+: e2e:(\S+) .*?(Passed|Failed|\*\*\*\w+).*?([0-9]+\.[0-9]+) sec$")


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    header = [line for line in TABLE.read_text().splitlines() if line.startswith("#")]
    old = dict(line.split("\t")[:2] for line in TABLE.read_text().splitlines()
               if line and not line.startswith("#"))
    new = {m.group(1): f"{float(m.group(3)):.0f}" for m in map(LINE.search, Path(sys.argv[1]).read_text().splitlines())
           if m and m.group(2) == "Passed" and m.group(1) != "prepare"}
    merged = {**old, **new}
    text = "\n".join(header + [f"{k}\t{v}" for k, v in sorted(merged.items(), key=lambda kv: -float(kv[1]))]) + "\n"
    if sys.argv[2:] == ["--write"]:
        TABLE.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
