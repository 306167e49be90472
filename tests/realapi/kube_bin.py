"""The control plane's binaries: kube-apiserver and kube-controller-manager from a directory of
xz-compressed builds with their SHA256SUMS (../shared/kube-bin/, or COSMICAC_KUBE_BIN), unpacked
once into a cache keyed by the SHA256SUMS file's own hash and checked against it on every use;
etcd from Debian's etcd-server."""

import hashlib
import lzma
import os
import shutil
import tempfile

COMPONENTS = ("kube-apiserver", "kube-controller-manager")
ENV_VAR = "COSMICAC_KUBE_BIN"


class Unavailable(Exception):
    """The binaries are not there (a clone without ../shared): the suite cannot run."""


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_sums(path):
    sums = {}
    with open(path, encoding="ascii") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                sums[parts[1].lstrip("*")] = parts[0]
    return sums


def _cache_root():
    for root in (os.environ.get("COSMICAC_KUBE_BIN_CACHE"), "/var/cache/cosmicac/kube-bin",
                 os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                              "cosmicac", "kube-bin")):
        if not root:
            continue
        try:
            os.makedirs(root, exist_ok=True)
        except OSError:
            continue
        if os.access(root, os.W_OK):
            return root
    raise Unavailable("no writable cache directory for the unpacked binaries")


def locate(source_dir):
    """Returns {component: path} of verified, executable binaries, plus 'etcd'.
    Raises Unavailable naming what is missing."""
    if not source_dir or not os.path.isdir(source_dir):
        raise Unavailable(f"no directory of control-plane binaries at {source_dir or '(unset)'}")
    sums_path = os.path.join(source_dir, "SHA256SUMS")
    if not os.path.isfile(sums_path):
        raise Unavailable(f"{sums_path} is missing")
    sums = _read_sums(sums_path)
    for c in COMPONENTS:
        if c not in sums:
            raise Unavailable(f"{sums_path} has no line for {c}")
        if not os.path.isfile(os.path.join(source_dir, c + ".xz")):
            raise Unavailable(f"{os.path.join(source_dir, c + '.xz')} is missing")
    etcd = shutil.which("etcd") or ("/usr/bin/etcd" if os.path.exists("/usr/bin/etcd") else None)
    if not etcd:
        raise Unavailable("etcd is not installed (Debian package etcd-server: packaging/install-deps)")

    cache = os.path.join(_cache_root(), _sha256(sums_path))
    os.makedirs(cache, exist_ok=True)
    found = {"etcd": etcd}
    for c in COMPONENTS:
        target = os.path.join(cache, c)
        if not (os.path.isfile(target) and _sha256(target) == sums[c]):
            # Unpack beside the target and rename: a concurrent or interrupted run never
            # leaves a half-written binary under the final name.
            fd, tmp = tempfile.mkstemp(dir=cache, prefix=c + ".")
            try:
                with os.fdopen(fd, "wb") as out, lzma.open(os.path.join(source_dir, c + ".xz")) as src:
                    shutil.copyfileobj(src, out, 1 << 20)
                os.chmod(tmp, 0o755)
                got = _sha256(tmp)
                if got != sums[c]:
                    raise Unavailable(f"{c}.xz unpacks to sha256 {got}, SHA256SUMS says {sums[c]}")
                os.replace(tmp, target)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        found[c] = target
    return found


def default_dir(repo):
    """Where the binaries are looked for: $COSMICAC_KUBE_BIN, else kube-bin in the shared folder
    beside the repository (for the tools outside tests/realapi/ that use this control plane)."""
    return os.environ.get(ENV_VAR) or os.path.join(repo, "..", "shared", "kube-bin")
