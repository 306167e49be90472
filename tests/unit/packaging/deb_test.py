"""packaging/build-deb: what the .deb ships, read back with dpkg-deb (the real
consumer), built around a stand-in binary so no static build is needed."""
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD_DEB = os.path.join(ROOT, "packaging", "build-deb")


class Deb(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="deb-test.")
        binary = os.path.join(cls.tmp, "agent")
        shutil.copy("/bin/true", binary)
        cls.deb = os.path.join(cls.tmp, "t.deb")
        env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
        subprocess.run([BUILD_DEB, binary, "9.9.9", cls.deb, os.path.join(cls.tmp, "stage")], check=True, env=env)
        tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", cls.deb], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            cls.members = {m.name: m for m in tf.getmembers()}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def member(self, path):
        self.assertIn("./" + path, self.members, sorted(self.members))
        return self.members["./" + path]

    def test_config_file_ships_0600_root_root(self):
        m = self.member("etc/default/docker-bootstrap")
        self.assertEqual(m.mode & 0o7777, 0o600, oct(m.mode))
        self.assertEqual((m.uid, m.gid, m.uname, m.gname), (0, 0, "root", "root"))

    def test_config_file_is_a_conffile(self):
        out = subprocess.run(["dpkg-deb", "--info", self.deb, "conffiles"], check=True, capture_output=True, text=True)
        self.assertEqual(out.stdout.split(), ["/etc/default/docker-bootstrap"])

    def test_binary_and_unit_modes(self):
        self.assertEqual(self.member("usr/local/bin/cosmicac-bootstrap").mode & 0o7777, 0o755)
        self.assertEqual(self.member("lib/systemd/system/cosmicac-bootstrap.service").mode & 0o7777, 0o644)


if __name__ == "__main__":
    unittest.main()
