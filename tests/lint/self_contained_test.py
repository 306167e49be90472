#!/usr/bin/python3
"""tests/lint/self_contained.py finds what it claims to: each planted path to
the shared folder beside the repository, in a small tree laid out like this one,
is reported by file and line; tests/realapi/, unversioned run outputs and
binary files are not read."""

import shutil
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import self_contained  # noqa: E402


class PlantedPaths(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="self-contained-test."))
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        self.plant("tests/unit/host/test_files.cpp",
                   'std::string schemas_dir() { return COSMICAC_SOURCE_DIR "/tests/data/kubevirt-schemas"; }\n')
        self.plant("bench/run", "#!/usr/bin/python3\n# the shared clock of both sides\n")
        self.plant(".ci/run", "#!/usr/bin/env bash\nexec tests/run\n")
        self.plant("packaging/build-release", "#!/usr/bin/env bash\n--disable-shared --enable-static\n")

    def plant(self, rel: str, text: str) -> None:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    def files_found(self) -> list[str]:
        return [f.split(":", 2)[0] + ":" + f.split(":", 2)[1] for f in self_contained.check(self.root)]

    def test_a_tree_without_the_folder_is_clean(self):
        self.assertEqual(self_contained.check(self.root), [])

    def test_the_old_schemas_path_in_a_cpp_file(self):
        self.plant("tests/unit/host/test_files.cpp",
                   '#include <string>\n\nstd::string schemas_dir() { return COSMICAC_SOURCE_DIR "/../shared/schemas"; }\n')
        found = self_contained.check(self.root)
        self.assertEqual(len(found), 1, found)
        self.assertTrue(found[0].startswith("tests/unit/host/test_files.cpp:3: names the shared folder"), found)

    def test_absolute_paths_in_python_shell_and_markdown(self):
        self.plant("tests/unit/packaging/release_test.py", 'SEED_UNIT = "/work/shared/reference/docker-bootstrap.service"\n')
        self.plant("bench/README.md", "intro\n\n- the script: `/work/shared/reference/docker-bootstrap.sh`\n")
        self.plant(".ci/run", "#!/usr/bin/env bash\nexport COSMICAC_KUBE_BIN=/work/shared/kube-bin\nexec tests/run\n")
        self.assertEqual(self.files_found(), [
            "tests/unit/packaging/release_test.py:1", "bench/README.md:3", ".ci/run:2"])

    def test_paths_built_from_parts(self):
        self.plant("tests/e2e/bed/vm.py", 'REF = os.path.join(REPO, "..", "shared", "reference")\n'
                                          "SEEDS = Path(REPO).parent / 'shared' / 'seeds'\n")
        self.plant("packaging/install-deps", "kube_bin=$top/../shared/kube-bin\n")
        self.assertEqual(self.files_found(), [
            "tests/e2e/bed/vm.py:1", "tests/e2e/bed/vm.py:2", "packaging/install-deps:1"])

    def test_the_real_api_suite_outputs_and_binaries_are_not_read(self):
        self.plant("tests/realapi/suite.py", 'default=os.path.join(REPO, "..", "shared", "kube-bin")\n')
        self.plant("tests/e2e/work/agent-fresh-boot/console.log", "/work/shared/reference\n")
        self.plant("bench/work/20261123/notes.txt", "../shared/reference\n")
        self.plant("tests/e2e/bed/__pycache__/vm.cpython-311.pyc", "../shared/reference\n")
        (self.root / "tests/data").mkdir(parents=True)
        (self.root / "tests/data/blob.bin").write_bytes(b"\0\1../shared/x\n")
        self.assertEqual(self_contained.check(self.root), [])

    def test_a_folder_named_like_the_exemption_is_still_read(self):
        self.plant("tests/realapi-extra/x.py", "../shared/kube-bin\n")
        self.assertEqual(self.files_found(), ["tests/realapi-extra/x.py:1"])


if __name__ == "__main__":
    unittest.main()
