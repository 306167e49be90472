#!/usr/bin/python3
"""tests/lint/format.py finds what it claims to: in a copy of .clang-format with
two small files, the one formatted by hand is reported and the other is not."""

import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


class PlantedDrift(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="format-test."))
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        shutil.copy(REPO / ".clang-format", self.root / ".clang-format")
        (self.root / "agent").mkdir()
        (self.root / "agent" / "tidy.cpp").write_text("int answer() { return 42; }\n")

    def check(self):
        return subprocess.run([sys.executable, str(HERE / "format.py"), "--root", str(self.root)],
                              capture_output=True, text=True)

    def test_a_formatted_tree_passes(self):
        r = self.check()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1 C++ files are as clang-format-14 writes them", r.stdout)

    def test_drift_is_named(self):
        (self.root / "agent" / "drift.cpp").write_text("int  answer2( ) {return 42;}\n")
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(r.stdout.splitlines(), [
            "format: agent/drift.cpp differs from clang-format-14's output "
            "(fix: clang-format-14 -i agent/drift.cpp)"])

    def test_each_drifting_file_is_named(self):
        # one clang-format process reads them all: every file it would change is named, no other
        for name in ("b_drift.cpp", "c_drift.hpp"):
            (self.root / "agent" / name).write_text("int  f( ) {return 1;}\n")
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual([line.split()[1] for line in r.stdout.splitlines()], ["agent/b_drift.cpp", "agent/c_drift.hpp"])

    def test_a_failing_clang_format_fails(self):
        # fail closed: a formatter that exits non-zero without naming a file is no clean tree
        r = subprocess.run([sys.executable, str(HERE / "format.py"), "--root", str(self.root),
                            "--clang-format", "/bin/false"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("/bin/false exited 1 naming no file", r.stdout)


if __name__ == "__main__":
    unittest.main()
