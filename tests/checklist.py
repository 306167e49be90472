#!/usr/bin/python3
"""What tests/run checks, as a list kept in the repository (tests/checklist.txt).

    tests/checklist.py BUILD_DIR            print the list of this tree and build
    tests/checklist.py BUILD_DIR --check    compare it with tests/checklist.txt (exit 1 on a difference)
    tests/checklist.py BUILD_DIR --write    rewrite tests/checklist.txt

Three parts, each sorted so the list does not depend on the order anything runs in:
  ctest       every CTest name of the build that tests/run runs (`ctest -N -LE bed`: the unit tests one
              per Catch2 TEST_CASE, lint, packaging, the real-API suite, the VM scenarios);
  fuzz        every fuzz target with its seed corpus files (tests/fuzz/**/CMakeLists.txt,
              tests/fuzz/corpus/<target>/);
  vm-check    every check of every VM scenario by name, read from its source in order: the
              message of each `t.expect(...)` (an f-string's {…} parts shown as {…}) and each
              call of the bed's shared checks (`checks.*`, `events.expect_*`,
              `events.boot_to_final`, `events.scan_for_secret`, …).
A check that moves (folded into another boot or scenario) shows in the diff under its new
scenario; one that disappears is a difference --check refuses until the file is rewritten
on purpose (and the closing note says why).
"""
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "tests" / "checklist.txt"
# The bed's functions that assert (they call t.expect or fail the scenario).
SHARED_CHECKS = re.compile(r"^(checks\.\w+|events\.(expect_\w+|boot_to_final|scan_for_secret))$")


def ctest_names(build: Path) -> list[str]:
    # -LE bed: what the ci test preset leaves out (the bed's self-test, the script's baseline)
    out = subprocess.run(["ctest", "--test-dir", str(build), "-N", "-LE", "bed"], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    names = [m.group(1) for m in re.finditer(r"^\s*Test\s+#\d+: (.+)$", out, re.M)]
    if not names:
        sys.exit(f"checklist: ctest -N in {build} lists no test")
    return [f"ctest\t{n}" for n in sorted(names)]


def fuzz_targets() -> list[str]:
    rows = []
    for cm in sorted((ROOT / "tests" / "fuzz").rglob("CMakeLists.txt")):
        for name in re.findall(r"^\s*cosmicac_fuzz_target\((\w+)", cm.read_text(), re.M):
            corpus = ROOT / "tests" / "fuzz" / "corpus" / name
            files = sorted(p.name for p in corpus.iterdir()) if corpus.is_dir() else ["<no corpus>"]
            rows.append(f"fuzz\t{name}\t{' '.join(files)}")
    return sorted(rows)


def _text(node: ast.expr) -> str:
    """A message as written: literal parts kept, expressions as {…}."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(v) if isinstance(v, ast.Constant) else "{…}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left) + _text(node.right)
    return "{…}"


def _callee(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        return f"{f.value.id}.{f.attr}"
    return ""


def vm_checks() -> list[str]:
    rows = []
    for path in sorted((ROOT / "tests" / "e2e" / "scenarios").glob("*.py")):
        tree = ast.parse(path.read_text())
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        names = {fn.name: next((d.args[0].value for d in fn.decorator_list if isinstance(d, ast.Call)
                                and getattr(d.func, "id", "") == "scenario" and d.args
                                and isinstance(d.args[0], ast.Constant)), None) for fn in functions}
        file_scenarios = ",".join(sorted(n for n in names.values() if n))
        for fn in functions:
            # a helper of the file (undecorated) checks for the file's scenarios that call it
            name = names[fn.name] or f"{file_scenarios}:{fn.name}"
            seen: dict[str, int] = {}
            for call in sorted((n for n in ast.walk(fn) if isinstance(n, ast.Call)),
                               key=lambda n: (n.lineno, n.col_offset)):
                callee = _callee(call)
                if callee == "t.expect" and len(call.args) >= 2:
                    check = "expect: " + " ".join(_text(call.args[1]).split())
                elif SHARED_CHECKS.match(callee):
                    check = callee
                else:
                    continue
                seen[check] = seen.get(check, 0) + 1
                suffix = f" (#{seen[check]})" if seen[check] > 1 else ""
                rows.append(f"vm-check\t{name}\t{check}{suffix}")
    return sorted(rows)


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = Path(sys.argv[1])
    lines = ctest_names(build) + fuzz_targets() + vm_checks()
    text = "".join(line + "\n" for line in lines)
    mode = sys.argv[2] if len(sys.argv) > 2 else ""
    if mode == "--write":
        LIST.write_text(text)
        print(f"checklist: {len(lines)} checks written to {LIST.relative_to(ROOT)}")
        return 0
    if mode == "--check":
        kept = LIST.read_text().splitlines() if LIST.exists() else []
        gone = sorted(set(kept) - set(lines))
        new = sorted(set(lines) - set(kept))
        for line in gone:
            print(f"checklist: NO LONGER RUN: {line}")
        for line in new:
            print(f"checklist: not in tests/checklist.txt: {line}")
        if gone or new:
            print(f"checklist: {len(gone)} gone, {len(new)} new against tests/checklist.txt; if that is meant, "
                  f"`tests/checklist.py {build} --write` and say why in the commit", file=sys.stderr)
            return 1
        print(f"checklist: the {len(lines)} checks of tests/checklist.txt, no more, no less")
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
