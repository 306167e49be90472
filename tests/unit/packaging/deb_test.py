"""packaging/build-deb: what the .deb ships, read back with dpkg-deb (the real
consumer), built around a stand-in binary so no static build is needed."""
import gzip
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest

from release_test import exec_starts, systemd_root, verify

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD_DEB = os.path.join(ROOT, "packaging", "build-deb")
# What `cosmicac-bootstrap install` writes (agent/install.cpp), where the package puts it.
MAIN_UNIT = "lib/systemd/system/cosmicac-bootstrap.service"
DISK_UNIT = "lib/systemd/system/cosmicac-bootstrap-disk.service"
DROPIN = "lib/systemd/system/docker.service.d/cosmicac-data-disk.conf"
GROW_UNIT = "lib/systemd/system/cosmicac-bootstrap-grow.service"
GROW_RULES = "lib/udev/rules.d/60-cosmicac-bootstrap-grow.rules"


class Deb(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="deb-test.")
        binary = os.path.join(cls.tmp, "agent")
        shutil.copy("/bin/true", binary)
        cls.deb = os.path.join(cls.tmp, "t.deb")
        env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
        cls.deb_version = subprocess.run(
            ["dpkg-parsechangelog", "-l", os.path.join(ROOT, "packaging", "deb", "changelog"), "-S", "Version"],
            check=True, capture_output=True, text=True).stdout.strip()
        cls.upstream = cls.deb_version.rsplit("-", 1)[0]
        subprocess.run([BUILD_DEB, binary, cls.upstream, cls.deb, os.path.join(cls.tmp, "stage")], check=True, env=env)
        tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", cls.deb], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            cls.members = {m.name: m for m in tf.getmembers()}
            cls.contents = {m.name: tf.extractfile(m).read() for m in tf.getmembers() if m.isfile()}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def content(self, path):
        self.member(path)
        return self.contents["./" + path]

    def field(self, name):
        out = subprocess.run(["dpkg-deb", "--field", self.deb, name], check=True, capture_output=True, text=True)
        return out.stdout.strip()

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
        self.assertEqual(self.member("usr/sbin/cosmicac-bootstrap").mode & 0o7777, 0o755)
        self.assertEqual(self.member("lib/systemd/system/cosmicac-bootstrap.service").mode & 0o7777, 0o644)

    def test_nothing_under_usr_local(self):
        # /usr/local belongs to the local administrator (Debian policy 9.1.2).
        self.assertEqual([n for n in self.members if n.startswith("./usr/local")], [])

    def test_unit_runs_the_packaged_binary(self):
        unit = self.content("lib/systemd/system/cosmicac-bootstrap.service").decode()
        self.assertEqual([l for l in unit.splitlines() if l.startswith("ExecStart")],
                         ["ExecStart=/usr/sbin/cosmicac-bootstrap run"])
        with open(os.path.join(ROOT, "units", "cosmicac-bootstrap.service")) as f:
            source = f.read()
        self.assertEqual(unit, source.replace("ExecStart=/usr/local/bin/cosmicac-bootstrap run",
                                              "ExecStart=/usr/sbin/cosmicac-bootstrap run"))

    def test_disk_unit_and_dockers_dropin_ship_0644_root_root(self):
        for path in (DISK_UNIT, DROPIN, GROW_UNIT, GROW_RULES):
            m = self.member(path)
            self.assertEqual(m.mode & 0o7777, 0o644, f"{path}: {oct(m.mode)}")
            self.assertEqual((m.uid, m.gid, m.uname, m.gname), (0, 0, "root", "root"), path)
        self.assertTrue(self.member("lib/systemd/system/docker.service.d").isdir())

    def test_disk_unit_runs_the_packaged_binarys_disk_step(self):
        unit = self.content(DISK_UNIT).decode()
        self.assertEqual(exec_starts(unit), ["ExecStart=/usr/sbin/cosmicac-bootstrap run --step=disk"])
        with open(os.path.join(ROOT, "units", "cosmicac-bootstrap-disk.service")) as f:
            source = f.read()
        self.assertEqual(unit, source.replace("ExecStart=/usr/local/bin/cosmicac-bootstrap run --step=disk",
                                              "ExecStart=/usr/sbin/cosmicac-bootstrap run --step=disk"))

    def test_grow_unit_runs_the_packaged_binarys_grow_step_and_udev_starts_it(self):
        unit = self.content(GROW_UNIT).decode()
        self.assertEqual(exec_starts(unit), ["ExecStart=/usr/sbin/cosmicac-bootstrap run --step=grow"])
        with open(os.path.join(ROOT, "units", "cosmicac-bootstrap-grow.service")) as f:
            source = f.read()
        self.assertEqual(unit, source.replace("ExecStart=/usr/local/bin/cosmicac-bootstrap run --step=grow",
                                              "ExecStart=/usr/sbin/cosmicac-bootstrap run --step=grow"))
        with open(os.path.join(ROOT, "units", "60-cosmicac-bootstrap-grow.rules"), "rb") as f:
            self.assertEqual(self.content(GROW_RULES), f.read())
        self.assertIn(b"start cosmicac-bootstrap-grow.service", self.content(GROW_RULES))

    def test_dockers_dropin_is_the_one_install_writes(self):
        with open(os.path.join(ROOT, "units", "docker.service.d", "cosmicac-data-disk.conf"), "rb") as f:
            self.assertEqual(self.content(DROPIN), f.read())

    def test_units_and_dropin_verify_where_the_package_puts_them(self):
        # The stand-in binary is executable: verify's ExecStart check passes on it.
        tmp = tempfile.mkdtemp(prefix="verify.", dir=self.tmp)
        os.chmod(tmp, 0o755)
        root = systemd_root(tmp)
        subprocess.run(["dpkg-deb", "-x", self.deb, root], check=True)
        for unit in (MAIN_UNIT, DISK_UNIT, GROW_UNIT):
            self.assertEqual(verify(root, "/" + unit), (0, []), unit)
        # docker.service (another package's) with the drop-in in the vendor directory:
        # verify loads the drop-in from there and finds nothing to say about it.
        docker = os.path.join(root, "etc/systemd/system/docker.service")
        os.makedirs(os.path.dirname(docker))
        with open(docker, "w") as f:
            f.write("[Unit]\nDescription=stand-in dockerd\n[Service]\nExecStart=/usr/sbin/cosmicac-bootstrap\n")
        rc, lines = verify(root, "/etc/systemd/system/docker.service")
        self.assertEqual((rc, [l for l in lines if "cosmicac" in l]), (0, []))
        # ... and would: the same place with a key systemd does not know is reported.
        with open(os.path.join(root, DROPIN), "a") as f:
            f.write("NoSuchKey=1\n")
        r = subprocess.run(["systemd-analyze", "verify", f"--root={root}", "/etc/systemd/system/docker.service"],
                           capture_output=True, text=True)
        self.assertIn("cosmicac-data-disk.conf", r.stdout + r.stderr)

    def test_changelog_is_gzip_9n_of_the_debian_changelog(self):
        raw = self.content("usr/share/doc/cosmicac-bootstrap/changelog.Debian.gz")
        self.assertEqual(raw[:2], b"\x1f\x8b")
        flags, mtime = raw[3], int.from_bytes(raw[4:8], "little")
        self.assertEqual(flags & 0x08, 0, "gzip header carries a file name (not -n)")
        self.assertEqual(mtime, 0, "gzip header carries a timestamp (not -n)")
        self.assertEqual(raw[8], 2, "not compressed with -9")
        with open(os.path.join(ROOT, "packaging", "deb", "changelog"), "rb") as f:
            self.assertEqual(gzip.decompress(raw), f.read())
        version = subprocess.run(["dpkg-parsechangelog", "-l", "-", "-S", "Version"], input=gzip.decompress(raw),
                                 check=True, capture_output=True).stdout.decode().strip()
        self.assertEqual(version, self.field("Version"))
        self.assertRegex(version, r"^[0-9][0-9.]*-[0-9]+$")  # non-native: changelog.Debian.gz

    def test_a_build_at_another_version_than_the_changelog_fails(self):
        env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
        r = subprocess.run([BUILD_DEB, "/bin/true", self.upstream + ".1", os.path.join(self.tmp, "x.deb"),
                            os.path.join(self.tmp, "stage-x")], env=env, capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("add a changelog entry", r.stderr)

    def test_copyright_is_machine_readable(self):
        text = self.content("usr/share/doc/cosmicac-bootstrap/copyright").decode()
        paragraphs = [p for p in text.split("\n\n") if p.strip()]
        self.assertEqual(paragraphs[0].splitlines()[0],
                         "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
        files = [p for p in paragraphs if p.startswith("Files:")]
        self.assertTrue(files)
        licenses = {p.splitlines()[0].split(":", 1)[1].strip() for p in paragraphs if p.startswith("License:")}
        for p in files:
            fields = {l.split(":", 1)[0] for l in p.splitlines() if not l.startswith(" ")}
            self.assertLessEqual({"Files", "Copyright", "License"}, fields, p)
            for name in p.split("License:", 1)[1].splitlines()[0].split(" and "):
                name = name.strip()
                # A license named but not given in full here must have its own paragraph.
                has_text = any(l.startswith(" ") for l in p.split("License:", 1)[1].splitlines()[1:])
                self.assertTrue(name in licenses or has_text, f"license {name!r} has no text")

    def test_maintainer_is_not_a_placeholder_and_matches_the_changelog(self):
        maintainer = self.field("Maintainer")
        self.assertNotRegex(maintainer, r"@localhost|@example\.(com|org)>|<>|TODO|FIXME")
        self.assertRegex(maintainer, r"^[^<>]+ <[^@<>\s]+@[^@<>\s]+\.[^@<>\s]+>$")
        with open(os.path.join(ROOT, "packaging", "deb", "changelog")) as f:
            trailer = [l for l in f if l.startswith(" -- ")][0]
        self.assertEqual(trailer[4:].split("  ")[0], maintainer)

    def test_maintainer_scripts_are_debhelpers_systemd_blocks(self):
        scripts = {}
        for name in ("postinst", "prerm", "postrm"):
            out = subprocess.run(["dpkg-deb", "--info", self.deb, name], check=True, capture_output=True)
            scripts[name] = out.stdout.decode()
            subprocess.run(["sh", "-n", "-c", scripts[name]], check=True)
            self.assertIn("# Automatically added by dh_installsystemd/", scripts[name])
            self.assertNotIn("#DEBHELPER#", scripts[name])
        for unit in ("cosmicac-bootstrap-disk.service", "cosmicac-bootstrap.service"):
            for verb in ("unmask", "enable", "update-state"):
                self.assertIn(f"\tdeb-systemd-helper {verb} '{unit}' >/dev/null || true\n", scripts["postinst"])
            self.assertIn(f"deb-systemd-helper --quiet was-enabled '{unit}'; then\n", scripts["postinst"])
        # --no-start: enabled for the next boot, never started on install.
        self.assertNotIn("deb-systemd-invoke start", scripts["postinst"])
        # One command for both units, as dh_installsystemd writes it (sorted names).
        both = "'cosmicac-bootstrap-disk.service' 'cosmicac-bootstrap.service' >/dev/null || true\n"
        self.assertIn("\t\t\tdeb-systemd-invoke try-restart " + both, scripts["postinst"])
        self.assertIn("\tdeb-systemd-invoke stop " + both, scripts["prerm"])
        self.assertIn("\t\tdeb-systemd-helper purge " + both, scripts["postrm"])
        for name, text in scripts.items():
            for line in text.splitlines():
                if line.lstrip().startswith("deb-systemd-"):
                    self.assertRegex(line, r"'cosmicac-bootstrap(-disk)?\.service' >/dev/null", f"{name}: {line}")

    def test_md5sums_cover_every_file(self):
        out = subprocess.run(["dpkg-deb", "--info", self.deb, "md5sums"], check=True, capture_output=True, text=True)
        listed = sorted(l.split("  ", 1)[1] for l in out.stdout.splitlines())
        files = sorted(n[2:] for n, m in self.members.items() if m.isfile())
        self.assertEqual(listed, files)
        self.assertLessEqual({MAIN_UNIT, DISK_UNIT, DROPIN}, set(listed))

    def test_lintian_overrides_each_carry_a_reason(self):
        text = self.content("usr/share/lintian/overrides/cosmicac-bootstrap").decode()
        previous = ""
        for line in text.splitlines():
            if line.startswith("cosmicac-bootstrap:"):
                self.assertTrue(previous.startswith("#"), f"override without a reason: {line}")
            previous = line


if __name__ == "__main__":
    unittest.main()
