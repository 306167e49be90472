#!/usr/bin/python3
"""tests/lint/layers.py finds what it claims to: each planted violation in a
copy of the tree's module folders (CMakeLists + sources) is reported, and the
untouched copy is clean."""

import shutil
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import layers  # noqa: E402


class PlantedViolations(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="layers-test."))
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        for module in layers.ALLOWED:
            shutil.copytree(REPO / module, self.root / module,
                            ignore=shutil.ignore_patterns("examples", "rbac", "golden"))

    def plant(self, rel: str, text: str) -> None:
        (self.root / rel).write_text(text)

    def edit(self, rel: str, old: str, new: str) -> None:
        p = self.root / rel
        body = p.read_text()
        self.assertIn(old, body, f"test setup: {rel} changed, update this test")
        p.write_text(body.replace(old, new, 1))

    def findings(self) -> list[str]:
        return layers.check(self.root)

    def test_the_copy_is_clean(self):
        self.assertEqual(self.findings(), [])

    def test_a_module_including_another_it_must_not_know(self):
        self.plant("disk/planted.cpp", '#include "registry/pull.hpp"\n')
        self.edit("disk/CMakeLists.txt", "DEPS cosmicac_common", "DEPS cosmicac_common cosmicac_registry")
        self.assertEqual(self.findings(), [
            "disk/ must not depend on registry/ (disk/planted.cpp includes it; disk/ may use: common)"])

    def test_config_outside_agent_and_host(self):
        self.plant("engine/planted.hpp", '#include "config/settings.hpp"\n')
        found = self.findings()
        self.assertIn("engine/ must not depend on config/ (engine/planted.hpp includes it; engine/ may use: common)",
                      found)
        self.assertIn("engine/CMakeLists.txt does not link cosmicac_config, but engine/planted.hpp includes config/",
                      found)

    def test_rendering_reaching_the_cluster(self):
        # The host's libraries are modules of their own: what renders objects
        # offline must not include the client that reaches a cluster.
        self.plant("host/render/planted.cpp", '#include "host/cluster/kube_client.hpp"\n')
        self.edit("host/render/CMakeLists.txt", "DEPS cosmicac_host_spec", "DEPS cosmicac_host_cluster cosmicac_host_spec")
        self.assertEqual(self.findings(), [
            "host/render/ must not depend on host/cluster/ (host/render/planted.cpp includes it; "
            "host/render/ may use: common, config, host/base, host/spec)"])

    def test_a_subfolder_is_part_of_its_module(self):
        # host/verbs/wait/ is host/verbs: its includes are held to the same layer.
        self.plant("host/verbs/wait/planted.cpp", '#include "host/cli/command.hpp"\n')
        self.assertIn("host/verbs/ must not depend on host/cli/ (host/verbs/wait/planted.cpp includes it; "
                      "host/verbs/ may use: common, host/base, host/cluster, host/render, host/spec, readiness)",
                      self.findings())

    def test_two_files_of_host_cli_including_each_other(self):
        # A command file including another's, which includes it back (through its header).
        self.plant("host/cli/planted.hpp", '#include "host/cli/wait.cpp"\n')
        self.edit("host/cli/wait.cpp", '#include "host/cli/command.hpp"\n',
                  '#include "host/cli/command.hpp"\n#include "host/cli/planted.hpp"\n')
        self.assertEqual(self.findings(), [
            "host/cli/: host/cli/planted, host/cli/wait include each other (a file of host/cli/ includes "
            "another one way only)"])

    def test_a_longer_loop_in_host_cli(self):
        self.edit("host/cli/flags.hpp", '#include "host/cli/problem.hpp"\n',
                  '#include "host/cli/problem.hpp"\n#include "host/cli/dispatch.hpp"\n')
        self.assertEqual(self.findings(), [
            "host/cli/: host/cli/command, host/cli/command_table, host/cli/completion, host/cli/dispatch, "
            "host/cli/flags include each other (a file of host/cli/ includes another one way only)"])

    def test_an_include_without_its_link(self):
        self.edit("agent/CMakeLists.txt", "cosmicac_disk ", "")
        self.assertEqual(self.findings(), [
            "agent/CMakeLists.txt does not link cosmicac_disk, but agent/bootstrap.cpp includes disk/"])

    def test_a_link_without_an_include(self):
        self.edit("readiness/CMakeLists.txt", "DEPS cosmicac_common", "DEPS cosmicac_common cosmicac_engine")
        self.assertEqual(self.findings(), [
            "readiness/CMakeLists.txt links cosmicac_engine, but no file of readiness/ includes engine/"])

    def test_third_party_headers_and_targets(self):
        self.plant("config/planted.cpp", "#include <curl/curl.h>\n")
        self.edit("engine/CMakeLists.txt", "dep_curl ", "dep_curl dep_blkid ")
        self.assertEqual(self.findings(), [
            "config/CMakeLists.txt does not link dep_curl, but config/planted.cpp includes its headers",
            "engine/CMakeLists.txt links dep_blkid, but no file of engine/ includes its headers"])

    def test_a_stale_known_exception(self):
        planted = dict(layers.KNOWN_EXCEPTIONS)
        planted[("disk", "engine")] = "nothing in disk/ includes engine/"
        original, layers.KNOWN_EXCEPTIONS = layers.KNOWN_EXCEPTIONS, planted
        try:
            self.assertEqual(self.findings(), [
                "known exception disk/ -> engine/ is no longer needed: delete its line "
                "in KNOWN_EXCEPTIONS (tests/lint/layers.py)"])
        finally:
            layers.KNOWN_EXCEPTIONS = original

    def test_the_command_exits_1_on_a_finding(self):
        import subprocess
        self.plant("common/planted.cpp", '#include "readiness/event.hpp"\n')
        r = subprocess.run([sys.executable, str(HERE / "layers.py"), "--root", str(self.root)],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("common/ must not depend on readiness/", r.stdout)
        r = subprocess.run([sys.executable, str(HERE / "layers.py")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
