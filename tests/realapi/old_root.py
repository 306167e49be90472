"""An older Debian root for the static release cosmicac-vmi (suite.py, case static_old_root).

A static glibc binary meets, where it runs, another libc's nsswitch.conf, resolv.conf and
trust store. The oldest release deb.debian.org serves (bullseye: glibc 2.31, OpenSSL 1.1.1,
against this build's 2.36 and 3.0) is built once with mmdebstrap (variant essential, plus
ca-certificates and libnss-myhostname, so its nsswitch.conf names a module that a static
binary must not load) and cached as a tar under /var/cache/cosmicac/old-root/<key>/, as the
e2e bed caches its guest image; each run unpacks it into a temp directory (about a second)
and chroots into it. A DNS server on loopback (Debian's dnsmasq) answers for a name that only
DNS knows."""

import fcntl
import hashlib
import os
import shutil
import subprocess
import tarfile
import time

SUITE = "bullseye"
MIRROR = f"deb http://deb.debian.org/debian {SUITE} main"
PACKAGES = ["ca-certificates", "libnss-myhostname"]
CACHE_ROOT = os.path.join(os.environ.get("COSMICAC_CACHE", "/var/cache/cosmicac"), "old-root")
DNS_ADDRESS = "127.53.0.1"  # a loopback address of its own: port 53 of 127.0.0.1 may be taken


def key():
    h = hashlib.sha256()
    h.update(f"{SUITE}\n{MIRROR}\n{','.join(PACKAGES)}\n".encode())
    with open(__file__, "rb") as fh:
        h.update(fh.read())
    return h.hexdigest()[:16]


def cached_tar(log=print):
    """The root's tar, built on first use (serialised by a lock)."""
    k = key()
    final = os.path.join(CACHE_ROOT, k, "root.tar")
    os.makedirs(CACHE_ROOT, exist_ok=True)
    with open(os.path.join(CACHE_ROOT, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(final):
            return final
        if shutil.which("mmdebstrap") is None:
            raise RuntimeError("mmdebstrap missing: run packaging/install-deps")
        tmp = os.path.join(CACHE_ROOT, f".build-{k}-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        t0 = time.monotonic()
        log(f"old-root: building the {SUITE} root {k} (once; cached in {CACHE_ROOT})")
        r = subprocess.run(["mmdebstrap", "--mode=root", "--variant=essential", "--format=tar",
                            "--include=" + ",".join(PACKAGES),
                            "--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/locale/*",
                            "--dpkgopt=path-exclude=/usr/share/doc/*", SUITE, os.path.join(tmp, "root.tar"), MIRROR],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"mmdebstrap {SUITE} failed (exit {r.returncode}):\n{r.stderr[-3000:]}")
        os.makedirs(os.path.dirname(final), exist_ok=True)
        os.rename(os.path.join(tmp, "root.tar"), final)
        shutil.rmtree(tmp, ignore_errors=True)
        for d in os.listdir(CACHE_ROOT):  # earlier keys
            if d != k and not d.startswith("."):
                shutil.rmtree(os.path.join(CACHE_ROOT, d), ignore_errors=True)
        log(f"old-root: built in {time.monotonic() - t0:.0f} s")
        return final


def unpack(tar_path, dest):
    with tarfile.open(tar_path) as tf:
        tf.extractall(dest, numeric_owner=True)  # device nodes included: we are root, as mmdebstrap was


def glibc_version(root):
    libs = [n for n in os.listdir(os.path.join(root, "lib/x86_64-linux-gnu")) if n.startswith("libc-")]
    return libs[0][len("libc-"):-len(".so")] if libs else "?"


class Dns:
    """dnsmasq on DNS_ADDRESS:53 answering `records` (name -> address) and nothing else."""

    def __init__(self, records, logfile):
        argv = ["dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts", "--no-poll",
                f"--listen-address={DNS_ADDRESS}", "--bind-interfaces", "--port=53", "--pid-file=",
                "--user=root", "--log-facility=" + logfile, "--log-queries"]
        argv += [f"--host-record={n},{a}" for n, a in records.items()]
        if shutil.which("dnsmasq") is None:
            raise RuntimeError("dnsmasq missing (Debian's dnsmasq-base): run packaging/install-deps")
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.3)
        if self.proc.poll() is not None:
            raise RuntimeError(f"dnsmasq did not start: {self.proc.stderr.read().decode(errors='replace')}")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
