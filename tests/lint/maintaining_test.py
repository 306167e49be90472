#!/usr/bin/python3
"""tests/lint/maintaining.py finds what it claims to: a path that does not
exist, a glob that matches nothing and a file named as a folder are reported;
placeholders, commands and fenced blocks are not paths; the real tree is clean."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import maintaining  # noqa: E402

PAGE = """# Maintaining

## Add a thing

- `host/cli/wait.cpp`: the flag; `host/cli/<command>.cpp` is new; `config/settings.*` too.
- `host/verbs/wait/`, run `tests/checklist.py build --write`, probe `http:PORT/PATH`, `KEY=a/b`.

```
`not/a/checked/path.cpp`
```
"""


class MaintainingCheck(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        for f in ("host/cli/wait.cpp", "config/settings.cpp", "config/settings.hpp", "host/verbs/wait/job.cpp"):
            (self.root / f).parent.mkdir(parents=True, exist_ok=True)
            (self.root / f).write_text("")
        (self.root / "docs").mkdir()
        self.write(PAGE)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, text):
        (self.root / maintaining.PAGE).write_text(text)

    def findings(self):
        return maintaining.check(self.root)[0]

    def test_clean_tree(self):
        self.assertEqual(self.findings(), [])
        self.assertEqual(maintaining.check(self.root)[1], 3)  # wait.cpp, settings.*, verbs/wait/

    def test_missing_file(self):
        self.write(PAGE.replace("host/cli/wait.cpp", "host/cli/wiat.cpp"))
        self.assertEqual(self.findings(), ["docs/maintaining.md:5: `host/cli/wiat.cpp` does not exist"])

    def test_glob_that_matches_nothing(self):
        self.write(PAGE.replace("config/settings.*", "config/setting.*"))
        self.assertEqual(self.findings(), ["docs/maintaining.md:5: `config/setting.*` matches no file"])

    def test_file_named_as_folder(self):
        self.write(PAGE.replace("host/verbs/wait/", "host/cli/wait.cpp/"))
        self.assertEqual(self.findings(), ["docs/maintaining.md:6: `host/cli/wait.cpp/` is not a folder"])

    def test_real_tree(self):
        run = subprocess.run([sys.executable, str(HERE / "maintaining.py")], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


if __name__ == "__main__":
    unittest.main()
