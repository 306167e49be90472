"""The release artifacts in dist/ (packaging/build-release), read back by their
real consumers: the ConfigMap by PyYAML (pure-Python and libyaml loaders), its
units and the .deb's by `systemd-analyze verify` inside a root laid out as the
guest has it, the .deb by lintian. A missing dist/ FAILS (run packaging/build-release)."""
import base64
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import unittest

import yaml

import size_table  # packaging/size_table.py (PYTHONPATH): the budget and its verdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DIST = os.environ.get("COSMICAC_DIST") or os.path.join(ROOT, "dist")  # another build's, to compare
CM = os.path.join(DIST, "bootstrap-cm.yaml")
SIZES = os.path.join(DIST, "size-table.json")
PACKED = os.path.join(DIST, "cosmicac-bootstrap")
SEED_UNIT = os.path.join(ROOT, "tests", "data", "reference", "docker-bootstrap.service")
LIMIT = 1024 * 1024
ENCODED_LIMIT = 1536 * 1024


def need(path):
    if not os.path.exists(path):
        raise AssertionError(f"{path} missing: run packaging/build-release first")
    return path


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"^project\(cosmicac-bootstrap VERSION ([0-9.]+)", f.read(), re.M).group(1)


def systemd_root(tmp):
    """A root for `systemd-analyze verify --root`: the host's unit directory
    (targets such as multi-user.target) and nothing else. verify checks that
    ExecStart's binary exists and is executable inside it."""
    root = os.path.join(tmp, "root")
    shutil.copytree("/usr/lib/systemd/system", os.path.join(root, "usr/lib/systemd/system"), symlinks=True)
    os.symlink("usr/lib", os.path.join(root, "lib"))
    return root


def verify(root, unit_path):
    r = subprocess.run(["systemd-analyze", "verify", f"--root={root}", unit_path], capture_output=True, text=True)
    name = os.path.basename(unit_path)
    out = r.stdout + r.stderr
    # verify exits 0 on some warnings: any line about our unit is a failure.
    return r.returncode, [l for l in out.splitlines() if name in l]


def exec_starts(unit_text):
    return [l for l in unit_text.splitlines() if l.startswith("ExecStart")]


class ConfigMap(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(need(CM), "rb") as f:
            cls.raw = f.read()
        cls.doc = yaml.load(cls.raw, Loader=yaml.CSafeLoader)
        with open(need(PACKED), "rb") as f:
            cls.packed = f.read()
        cls.tmp = tempfile.mkdtemp(prefix="release-test.")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_both_yaml_loaders_read_the_same_configmap(self):
        self.assertEqual(yaml.load(self.raw, Loader=yaml.SafeLoader), self.doc)
        self.assertEqual((self.doc["apiVersion"], self.doc["kind"]), ("v1", "ConfigMap"))
        self.assertEqual(self.doc["metadata"]["name"], "bootstrap-cm")

    def test_keys_serve_the_legacy_worker_and_cosmicac_vmi(self):
        self.assertEqual(sorted(self.doc["binaryData"]), ["docker-bootstrap.sh"])
        self.assertEqual(sorted(self.doc["data"]), ["agent-version", "cosmicac-bootstrap.service",
                                                    "docker-bootstrap.default", "docker-bootstrap.service"])
        # The file cosmicac-vmi's install unit copies off the CD-ROM is a key here.
        with open(os.path.join(ROOT, "host", "spec", "guest_layout.hpp")) as f:
            iso_file = re.search(r'kAgentIsoFile = "([^"]+)"', f.read()).group(1)
        self.assertIn(iso_file, self.doc["binaryData"])

    def test_one_copy_of_the_binary_identical_to_the_packed_agent(self):
        binary = base64.b64decode(self.doc["binaryData"]["docker-bootstrap.sh"], validate=True)
        self.assertEqual(binary, self.packed)
        for key, value in self.doc["data"].items():
            self.assertLess(len(value), 64 * 1024, f"data key {key} is large: a second copy?")

    def test_size_within_the_api_server_and_etcd_limits(self):
        counted = (sum(len(v.encode()) for v in self.doc["data"].values())
                   + sum(len(base64.b64decode(v)) for v in self.doc["binaryData"].values()))
        self.assertLessEqual(counted, LIMIT)
        self.assertLessEqual(len(self.raw), ENCODED_LIMIT)
        self.assertIn(f"# Counted size (data + decoded binaryData): {counted} of {LIMIT} bytes.".encode(), self.raw)

    def test_counted_size_within_the_budget_else_the_top_contributors_named(self):
        counted = (sum(len(v.encode()) for v in self.doc["data"].values())
                   + sum(len(base64.b64decode(v)) for v in self.doc["binaryData"].values()))
        with open(need(SIZES)) as f:
            sizes = json.load(f)
        # The table describes this very binary: its packed size is the ConfigMap's copy.
        self.assertEqual(sizes["packed"], len(self.packed))
        self.assertEqual(sum(sizes["contributors"].values()), sizes["raw"])
        verdict = size_table.budget_verdict(counted, sizes["contributors"])
        if verdict:
            self.fail(verdict)

    def test_agent_version_matches_the_binary(self):
        version = project_version()
        self.assertEqual(self.doc["data"]["agent-version"], version)
        self.assertEqual(self.doc["metadata"]["labels"]["app.kubernetes.io/version"], version)
        legacy = os.path.join(self.tmp, "docker-bootstrap.sh")
        with open(legacy, "wb") as f:
            f.write(base64.b64decode(self.doc["binaryData"]["docker-bootstrap.sh"]))
        os.chmod(legacy, 0o755)
        out = subprocess.run([legacy, "--version"], check=True, capture_output=True, text=True).stdout
        self.assertEqual(out, f"cosmicac-bootstrap {version}\n")

    def test_legacy_unit_installed_as_the_worker_does_verifies_and_runs_the_agent(self):
        unit = self.doc["data"]["docker-bootstrap.service"]
        with open(need(SEED_UNIT)) as f:
            seed = f.read()
        # The worker's unit runs exactly this line; the agent's unit keeps its install target.
        self.assertEqual(exec_starts(unit), exec_starts(seed))
        self.assertIn("\n[Install]\nWantedBy=multi-user.target\n", unit)
        self.assertIn("\nType=notify\n", unit)
        self.assertIn("\nLimitCORE=0\n", unit)
        root = systemd_root(self.tmp)
        os.makedirs(os.path.join(root, "usr/local/bin"))
        os.makedirs(os.path.join(root, "etc/systemd/system"))
        with open(os.path.join(root, "usr/local/bin/docker-bootstrap.sh"), "wb") as f:
            f.write(base64.b64decode(self.doc["binaryData"]["docker-bootstrap.sh"]))
        os.chmod(os.path.join(root, "usr/local/bin/docker-bootstrap.sh"), 0o755)
        with open(os.path.join(root, "etc/systemd/system/docker-bootstrap.service"), "w") as f:
            f.write(unit)
        rc, lines = verify(root, "/etc/systemd/system/docker-bootstrap.service")
        self.assertEqual((rc, lines), (0, []))
        # The same check sees a missing binary (it cannot pass vacuously).
        os.chmod(os.path.join(root, "usr/local/bin/docker-bootstrap.sh"), 0o644)
        rc, lines = verify(root, "/etc/systemd/system/docker-bootstrap.service")
        self.assertTrue(rc != 0 or lines)

    def test_cosmicac_unit_is_the_agents_embedded_unit(self):
        with open(os.path.join(ROOT, "units", "cosmicac-bootstrap.service")) as f:
            self.assertEqual(self.doc["data"]["cosmicac-bootstrap.service"], f.read())


class _DistDeb(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        debs = sorted(f for f in os.listdir(need(DIST)) if re.fullmatch(r"cosmicac-bootstrap_.*_amd64\.deb", f))
        if len(debs) != 1:
            raise AssertionError(f"expected one dist/cosmicac-bootstrap_*_amd64.deb, found {debs}")
        cls.deb = os.path.join(DIST, debs[0])
        cls.tmp = tempfile.mkdtemp(prefix="release-deb-test.")
        os.chmod(cls.tmp, 0o755)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)


class Deb(_DistDeb):
    def test_units_verify_where_the_package_puts_them(self):
        root = systemd_root(self.tmp)
        subprocess.run(["dpkg-deb", "-x", self.deb, root], check=True)
        self.assertTrue(os.stat(os.path.join(root, "usr/sbin/cosmicac-bootstrap")).st_mode & stat.S_IXUSR)
        for name, exec_start in (("cosmicac-bootstrap.service", "ExecStart=/usr/sbin/cosmicac-bootstrap run"),
                                 ("cosmicac-bootstrap-disk.service",
                                  "ExecStart=/usr/sbin/cosmicac-bootstrap run --step=disk"),
                                 ("cosmicac-bootstrap-grow.service",
                                  "ExecStart=/usr/sbin/cosmicac-bootstrap run --step=grow")):
            with open(os.path.join(root, "lib/systemd/system", name)) as f:
                self.assertEqual(exec_starts(f.read()), [exec_start])
            self.assertEqual(verify(root, "/lib/systemd/system/" + name), (0, []), name)


class Lintian(_DistDeb):
    def test_lintian_clean(self):
        # Every tag at every level, pedantic and experimental included; the
        # overrides shipped in the package (each with its reason) apply.
        copy = os.path.join(self.tmp, os.path.basename(self.deb))
        shutil.copy(self.deb, copy)
        os.chmod(copy, 0o644)
        r = subprocess.run(["lintian", "--fail-on", "error,warning,info,pedantic", "--display-level", ">=pedantic",
                            "-E", "--tag-display-limit", "0", copy], capture_output=True, text=True)
        tags = [l for l in r.stdout.splitlines() if re.match(r"^[EWIPX]: ", l)]
        self.assertEqual((r.returncode, tags), (0, []), r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
