#!/usr/bin/python3
"""tests/lint/docs.py finds what it claims to: each planted fault in a small
tree of README.md and docs/ pages is reported, the untouched tree is clean, and
the real tree is clean."""

import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import docs  # noqa: E402

README = """# project

What it is. [Configuration](docs/configuration.md), [keys](docs/configuration.md#the-keys-mnt--img),
[status](docs/events.md#cosmicac-bootstrap-status), [the tool](docs/events.md#cosmicac-vmi--the-host-side-tool),
[again](docs/events.md#notes-1), the [folders](#folders), ![a picture](docs/pic.svg "title").

## Folders

`[not a link](nowhere.md)` and a URL [upstream](https://example.invalid/x#y).

```
[not a link either](nowhere.md)
```
"""

CONFIGURATION = """# Configuration

[Back](../README.md) to [the events](events.md#notes).

## The keys: `MNT` & `IMG`
"""

EVENTS = """# Events

## `cosmicac-bootstrap status`

## cosmicac-vmi — the host-side tool

## Notes

## Notes

```
## not a heading
```
"""


class PlantedFaults(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="docs-test."))
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        (self.root / "docs").mkdir()
        self.write("README.md", README)
        self.write("docs/configuration.md", CONFIGURATION)
        self.write("docs/events.md", EVENTS)
        self.write("docs/pic.svg", "<svg/>")

    def write(self, rel: str, text: str) -> None:
        (self.root / rel).write_text(text)

    def edit(self, rel: str, old: str, new: str) -> None:
        body = (self.root / rel).read_text()
        self.assertIn(old, body, f"test setup: {rel} has no {old!r}")
        self.write(rel, body.replace(old, new, 1))

    def findings(self) -> list[str]:
        return docs.check(self.root)

    def test_the_tree_is_clean(self):
        self.assertEqual(self.findings(), [])

    def test_a_long_readme(self):
        self.edit("README.md", "What it is.", "What it is.\n" + "more\n" * 300)
        self.assertEqual(self.findings(), [
            "README.md: 314 lines, the limit is 299: move reference text to a page in docs/"])

    def test_a_page_not_linked_from_the_readme(self):
        self.write("docs/delivery.md", "# Delivery\n")
        self.assertEqual(self.findings(), ["docs/delivery.md: not linked from README.md"])

    def test_a_page_linked_only_from_another_page(self):
        self.write("docs/delivery.md", "# Delivery\n")
        self.edit("docs/configuration.md", "[Back]", "[Delivery](delivery.md), [Back]")
        self.assertEqual(self.findings(), ["docs/delivery.md: not linked from README.md"])

    def test_a_link_to_a_missing_file(self):
        self.edit("docs/configuration.md", "(events.md#notes)", "(event.md#notes)")
        self.assertEqual(self.findings(), ["docs/configuration.md:3: link event.md#notes: no such file"])

    def test_an_anchor_with_no_heading(self):
        self.edit("README.md", "#cosmicac-bootstrap-status", "#status")
        self.assertEqual(self.findings(), ["README.md:4: link docs/events.md#status: docs/events.md has no heading #status"])

    def test_an_anchor_into_the_same_page(self):
        self.edit("README.md", "(#folders)", "(#folder)")
        self.assertEqual(self.findings(), ["README.md:5: link #folder: README.md has no heading #folder"])

    def test_a_heading_inside_a_code_block_is_no_anchor(self):
        self.edit("docs/configuration.md", "(events.md#notes)", "(events.md#not-a-heading)")
        self.assertEqual(self.findings(), [
            "docs/configuration.md:3: link events.md#not-a-heading: docs/events.md has no heading #not-a-heading"])

    def test_a_reference_style_definition(self):
        self.edit("docs/configuration.md", "## The keys", "[ev]: events.md#note\n\n## The keys")
        self.assertEqual(self.findings(), ["docs/configuration.md:5: link events.md#note: docs/events.md has no heading #note"])

    def test_a_link_leaving_the_repository(self):
        self.edit("docs/configuration.md", "(../README.md)", "(../../etc/passwd)")
        self.assertEqual(self.findings(), ["docs/configuration.md:3: link ../../etc/passwd leaves the repository"])

    def test_an_absolute_link(self):
        self.edit("docs/configuration.md", "(../README.md)", "(/README.md)")
        self.assertEqual(self.findings(), [
            "docs/configuration.md:3: link /README.md is absolute; use a path relative to docs/configuration.md"])

    def test_the_command_exits_1_with_the_findings(self):
        self.write("docs/delivery.md", "# Delivery\n")
        r = subprocess.run([sys.executable, str(HERE / "docs.py"), "--root", str(self.root)],
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (1, "docs/delivery.md: not linked from README.md\n"))


class Slugs(unittest.TestCase):
    def test_as_github_makes_them(self):
        self.assertEqual(docs.slug("The agent: `cosmicac-bootstrap`"), "the-agent-cosmicac-bootstrap")
        self.assertEqual(docs.slug("cosmicac-vmi — the host-side tool"), "cosmicac-vmi--the-host-side-tool")
        self.assertEqual(docs.slug("Event lines (protocol v1)"), "event-lines-protocol-v1")
        self.assertEqual(docs.slug("Docker's image store on the data disk"), "dockers-image-store-on-the-data-disk")
        self.assertEqual(docs.slug("The host tool's unit tests (`tests/unit/host/`, `ctest -R host_tests`)"),
                         "the-host-tools-unit-tests-testsunithost-ctest--r-host_tests")


class TheTree(unittest.TestCase):
    def test_the_repository_is_clean(self):
        r = subprocess.run([sys.executable, str(HERE / "docs.py")], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (0, ""))


if __name__ == "__main__":
    unittest.main()
