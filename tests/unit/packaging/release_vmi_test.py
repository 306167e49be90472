"""cosmicac-vmi as packaging/build-release leaves it in dist/: the static binary as a kubectl
plugin (kubectl's own `plugin list` and `kubectl cosmicac ...`), its .deb read back (layout,
man page, completion, examples; lintian; piuparts installs and purges it in a bookworm root),
krew's archive and manifest. A missing dist/ FAILS (run packaging/build-release)."""
import fcntl
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import unittest

import yaml

from release_test import DIST, ROOT, need, project_version

PIUPARTS_CACHE = os.path.join(os.environ.get("COSMICAC_CACHE", "/var/cache/cosmicac"), "piuparts")
MIRROR = "http://deb.debian.org/debian"


def vmi_deb():
    debs = sorted(f for f in os.listdir(need(DIST)) if re.fullmatch(r"cosmicac-vmi_.*_amd64\.deb", f))
    if len(debs) != 1:
        raise AssertionError(f"expected one dist/cosmicac-vmi_*_amd64.deb, found {debs}")
    return os.path.join(DIST, debs[0])


class KubectlPlugin(unittest.TestCase):
    """kubectl finds kubectl-cosmicac on PATH and hands it its arguments, its global flags too."""

    @classmethod
    def setUpClass(cls):
        cls.kubectl = shutil.which("kubectl")
        if cls.kubectl is None:
            raise AssertionError("no kubectl (packaging/install-deps installs Debian's kubernetes-client)")
        cls.tmp = tempfile.mkdtemp(prefix="kubectl-plugin-test.")
        os.symlink(need(os.path.join(DIST, "cosmicac-vmi")), os.path.join(cls.tmp, "kubectl-cosmicac"))
        cls.env = {"PATH": cls.tmp + ":/usr/bin:/bin", "HOME": cls.tmp, "KUBECONFIG": os.path.join(cls.tmp, "none")}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def kubectl_run(self, *args):
        return subprocess.run([self.kubectl, *args], capture_output=True, text=True, env=self.env, timeout=60)

    def test_plugin_list_finds_it(self):
        r = self.kubectl_run("plugin", "list")
        self.assertIn(os.path.join(self.tmp, "kubectl-cosmicac"), r.stdout, r.stdout + r.stderr)
        self.assertNotIn("warning", (r.stdout + r.stderr).lower())

    def test_kubectl_cosmicac_version(self):
        r = self.kubectl_run("cosmicac", "--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith(f"cosmicac-vmi {project_version()}\ncommit: "), r.stdout)

    def test_kubectl_global_flags_taken_or_refused_by_name(self):
        r = self.kubectl_run("cosmicac", "get", "vm", "--token", "x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--token is kubectl's global flag and is not taken", r.stderr)
        # Taken: it gets as far as the kubeconfig (which does not exist).
        r = self.kubectl_run("cosmicac", "get", "vm", "--request-timeout", "5s", "--as", "bob", "-n", "x")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertNotIn("not taken", r.stderr)


class VmiDeb(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.deb = vmi_deb()
        tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", cls.deb], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            cls.members = {m.name: m for m in tf.getmembers()}
            cls.contents = {m.name: tf.extractfile(m).read() for m in tf.getmembers() if m.isfile()}

    def test_binary_and_the_plugin_name(self):
        self.assertEqual(self.members["./usr/bin/cosmicac-vmi"].mode, 0o755)
        link = self.members["./usr/bin/kubectl-cosmicac"]
        self.assertTrue(link.issym())
        self.assertEqual(link.linkname, "cosmicac-vmi")

    def test_man_page_from_the_help_and_every_command(self):
        page = gzip.decompress(self.contents["./usr/share/man/man1/cosmicac-vmi.1.gz"]).decode()
        self.assertIn('.TH COSMICAC-VMI "1"', page)
        for command in ("render", "apply", "wait", "delete", "list", "get", "doctor"):
            self.assertIn(f".SS {command}\n", page)
        self.assertIn("--fail-fast", page)  # a flag known only from wait's own page

    def test_completion_and_examples(self):
        bash = self.contents["./usr/share/bash-completion/completions/cosmicac-vmi"].decode()
        self.assertIn("complete -o default -F _cosmicac_vmi cosmicac-vmi kubectl-cosmicac", bash)
        self.assertTrue(self.contents["./usr/share/zsh/vendor-completions/_cosmicac-vmi"].startswith(b"#compdef "))
        ex = "./usr/share/doc/cosmicac-vmi/examples/"
        with open(os.path.join(ROOT, "host/rbac/role.yaml"), "rb") as f:
            self.assertEqual(self.contents[ex + "rbac/role.yaml"], f.read())
        for name in ("rbac/clusterrole-doctor.yaml", "operator/profile.yaml", "h100-8gpu.yaml", "minimal.json"):
            self.assertIn(ex + name, self.contents)

    def test_lintian_clean(self):
        tmp = tempfile.mkdtemp(prefix="vmi-lintian.")
        try:
            copy = os.path.join(tmp, os.path.basename(self.deb))
            shutil.copy(self.deb, copy)
            os.chmod(copy, 0o644)
            r = subprocess.run(["lintian", "--fail-on", "error,warning,info,pedantic", "--display-level", ">=pedantic",
                                "-E", "--tag-display-limit", "0", copy], capture_output=True, text=True)
        finally:
            shutil.rmtree(tmp)
        tags = [line for line in r.stdout.splitlines() if re.match(r"^[EWIPX]: ", line)]
        self.assertEqual((r.returncode, tags), (0, []), r.stdout + r.stderr)


def piuparts_base():
    """A bookworm minbase tarball for piuparts, built once by mmdebstrap and cached."""
    key = hashlib.sha256(f"bookworm {MIRROR} minbase eatmydata\n".encode()).hexdigest()[:16]
    final = os.path.join(PIUPARTS_CACHE, key, "base.tgz")
    os.makedirs(PIUPARTS_CACHE, exist_ok=True)
    with open(os.path.join(PIUPARTS_CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(final):
            os.makedirs(os.path.dirname(final), exist_ok=True)
            tmp = final + f".tmp{os.getpid()}.tar.gz"
            subprocess.run(["mmdebstrap", "--mode=root", "--variant=minbase", "--include=eatmydata", "bookworm", tmp,
                            f"deb {MIRROR} bookworm main"], check=True, capture_output=True)
            os.rename(tmp, final)
    return final


class VmiPiuparts(unittest.TestCase):
    def test_installs_and_purges_cleanly(self):
        deb = vmi_deb()
        r = subprocess.run(["piuparts", "-b", piuparts_base(), "-d", "bookworm", "-m", MIRROR, "--skip-minimize",
                            "--no-upgrade-test", deb], capture_output=True, text=True, timeout=600)
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out[-4000:])
        self.assertIn("PASS: Installation and purging test.", out)
        self.assertNotIn("Inadequate results", out, out[-4000:])  # adequate: no missing library or symbol


class Krew(unittest.TestCase):
    def test_manifest_names_the_archive_by_its_sha256(self):
        version = project_version()
        archive = os.path.join(need(DIST), f"cosmicac-vmi_{version}_linux_amd64.tar.gz")
        with open(need(os.path.join(DIST, "cosmicac.yaml"))) as f:
            doc = yaml.safe_load(f)
        self.assertEqual((doc["kind"], doc["metadata"]["name"], doc["spec"]["version"]),
                         ("Plugin", "cosmicac", "v" + version))
        (platform,) = doc["spec"]["platforms"]
        self.assertEqual(platform["selector"]["matchLabels"], {"os": "linux", "arch": "amd64"})
        with open(archive, "rb") as f:
            self.assertEqual(platform["sha256"], hashlib.sha256(f.read()).hexdigest())
        self.assertTrue(platform["uri"].endswith("/" + os.path.basename(archive)))
        with tarfile.open(archive) as tf:
            member = tf.getmember(platform["bin"])
            self.assertEqual(member.mode & 0o111, 0o111)
            with open(os.path.join(DIST, "cosmicac-vmi"), "rb") as f:
                self.assertEqual(tf.extractfile(member).read(), f.read())
        self.assertEqual(platform["files"], [{"from": "cosmicac-vmi", "to": "."}])


if __name__ == "__main__":
    unittest.main()
