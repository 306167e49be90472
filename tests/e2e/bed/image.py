"""The e2e guest image: Debian bookworm built with mmdebstrap from deb.debian.org.

Output (cached under CACHE_ROOT/<key>/, key = hash of the package list, this
file and everything under guest/):
  root.raw     raw GPT disk, one ext4 partition (like a cloud image); read-only
               base for per-scenario qcow2 overlays
  vmlinuz      kernel for direct boot
  initrd.img   its initrd (contains the init-bottom injection script)
  manifest.json  key, sizes, root fs UUID, kernel cmdline, build time

No loop devices and no mounts: the partition is written by `mkfs.ext4 -d` at
an offset inside the disk file.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GUEST = HERE / "guest"
CACHE_ROOT = Path(os.environ.get("COSMICAC_E2E_CACHE", "/var/cache/cosmicac/e2e"))

SUITE = "bookworm"
MIRRORS = [
    "deb http://deb.debian.org/debian bookworm main",
    "deb http://deb.debian.org/debian bookworm-updates main",
    "deb http://deb.debian.org/debian-security bookworm-security main",
]
PACKAGES = sorted([
    # boot
    "systemd", "systemd-sysv", "udev", "dbus", "linux-image-cloud-amd64",
    "initramfs-tools", "busybox", "kmod", "zstd",
    # disks (and what the original script would apt-get install)
    "e2fsprogs", "util-linux", "fdisk", "parted", "curl", "ca-certificates",
    # container runtime; apparmor: docker 20.10 refuses to start containers on
    # an AppArmor-enabled kernel without it
    "docker.io", "tini", "apparmor", "iptables",
    # inspection and delivery
    "qemu-guest-agent", "cloud-init", "procps", "iproute2", "less",
])
# Units that only cost boot time in a throw-away test VM.
MASKED_UNITS = [
    "apt-daily.timer", "apt-daily-upgrade.timer", "apt-daily.service",
    "apt-daily-upgrade.service", "e2scrub_all.timer", "e2scrub_all.service",
    "e2scrub_reap.service", "fstrim.timer", "dpkg-db-backup.timer",
    "logrotate.timer", "man-db.timer", "systemd-timesyncd.service",
    "getty@tty1.service", "motd-news.timer",
    # Measured with systemd-analyze blame under TCG (each a process or mount that a test VM
    # never uses): kernel modules nothing here loads, debug/trace/config/fuse/hugepage
    # filesystems, binfmt_misc.
    "modprobe@drm.service", "modprobe@efi_pstore.service", "modprobe@fuse.service",
    "modprobe@configfs.service", "modprobe@loop.service", "modprobe@dm_mod.service",
    "sys-kernel-debug.mount", "sys-kernel-tracing.mount", "sys-kernel-config.mount",
    "sys-fs-fuse-connections.mount", "dev-hugepages.mount",
    "proc-sys-fs-binfmt_misc.automount", "proc-sys-fs-binfmt_misc.mount", "systemd-binfmt.service",
]
ENABLED_UNITS = ["systemd-networkd.service", "e2e-boot-marker.service"]

ROOT_FS_UUID = "6c0c6f35-e2e0-4c0c-9a1c-0000c05a1c00"
ROOT_DISK_BYTES = 4 << 30
PART_START_SECTOR = 2048
KERNEL_CMDLINE = (
    f"root=UUID={ROOT_FS_UUID} rw console=ttyS0,115200 panic=-1 "
    "mitigations=off tsc=reliable no_timer_check systemd.show_status=auto "
    "net.ifnames=0"
)


def image_key() -> str:
    h = hashlib.sha256()
    h.update(("\n".join(PACKAGES) + "\n" + "\n".join(MIRRORS) + "\n").encode())
    h.update(Path(__file__).read_bytes())
    for p in sorted(GUEST.rglob("*")):
        rel = p.relative_to(GUEST).as_posix()
        h.update(rel.encode() + b"\0")
        if p.is_file():
            h.update(oct(p.stat().st_mode & 0o777).encode() + p.read_bytes())
    return h.hexdigest()[:16]


class Image:
    def __init__(self, directory: Path):
        self.dir = directory
        self.root = directory / "root.raw"
        self.kernel = directory / "vmlinuz"
        self.initrd = directory / "initrd.img"
        self.manifest = json.loads((directory / "manifest.json").read_text())
        self.cmdline = self.manifest["cmdline"]


def _log(msg: str) -> None:
    print(f"[e2e-image] {msg}", file=sys.stderr, flush=True)


def require_tools() -> None:
    missing = [t for t in ("mmdebstrap", "mkfs.ext4", "sgdisk", "qemu-img", "qemu-system-x86_64")
               if shutil.which(t) is None]
    if missing:
        raise SystemExit(
            f"e2e: missing host tools {missing}; run packaging/install-deps as root")


def get_image(rebuild: bool = False) -> Image:
    """Returns the cached image, building it first if absent (serialised by a lock)."""
    require_tools()
    key = image_key()
    final = CACHE_ROOT / key
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(CACHE_ROOT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if rebuild and final.exists():
            shutil.rmtree(final)
        if not (final / "manifest.json").exists():
            _build(final, key)
            _prune(keep=key)
    return Image(final)


def _prune(keep: str) -> None:
    for d in CACHE_ROOT.iterdir():
        if d.is_dir() and d.name != keep and not d.name.startswith("."):
            _log(f"removing stale image {d}")
            shutil.rmtree(d, ignore_errors=True)


def _run(argv: list[str], log) -> None:
    log.write(f"$ {' '.join(argv)}\n")
    log.flush()
    r = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        raise RuntimeError(f"image build step failed (exit {r.returncode}): {argv[0]}; see {log.name}")


def _build(final: Path, key: str) -> None:
    t0 = time.monotonic()
    tmp = final.parent / f".build-{key}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    rootfs = tmp / "rootfs"
    logpath = tmp / "build.log"
    _log(f"building guest image {key} (log {logpath}); a few minutes on a cold cache")
    with open(logpath, "w") as log:
        _run([
            "mmdebstrap", "--mode=root", "--variant=minbase", "--format=directory",
            "--include=" + ",".join(PACKAGES),
            "--dpkgopt=path-exclude=/usr/share/man/*",
            "--dpkgopt=path-exclude=/usr/share/locale/*",
            "--dpkgopt=path-exclude=/usr/share/doc/*",
            "--dpkgopt=path-include=/usr/share/doc/*/copyright",
            "--setup-hook=cp -a " + str(GUEST / "setup") + "/. \"$1\"/",
            "--customize-hook=cp -a " + str(GUEST / "root") + "/. \"$1\"/",
            "--customize-hook=chroot \"$1\" update-initramfs -u -k all",
            SUITE, str(rootfs), *MIRRORS,
        ], log)
        t_debootstrap = time.monotonic() - t0
        _customize(rootfs, log)
        boot = rootfs / "boot"
        kernels = sorted(boot.glob("vmlinuz-*"))
        initrds = sorted(boot.glob("initrd.img-*"))
        if len(kernels) != 1 or len(initrds) != 1:
            raise RuntimeError(f"expected one kernel and one initrd in {boot}: {kernels} {initrds}")
        shutil.copy2(kernels[0], tmp / "vmlinuz")
        shutil.copy2(initrds[0], tmp / "initrd.img")
        _make_disk(rootfs, tmp / "root.raw", log)
        shutil.rmtree(rootfs)
    manifest = {
        "key": key,
        "packages": PACKAGES,
        "kernel": kernels[0].name,
        "root_fs_uuid": ROOT_FS_UUID,
        "cmdline": KERNEL_CMDLINE,
        "build_seconds": round(time.monotonic() - t0, 1),
        "mmdebstrap_seconds": round(t_debootstrap, 1),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    os.rename(tmp, final)
    _log(f"built {final} in {manifest['build_seconds']} s")


def _customize(rootfs: Path, log) -> None:
    # Empty machine-id: every boot of a fresh overlay is a first boot.
    (rootfs / "etc/machine-id").write_text("")
    dbus_id = rootfs / "var/lib/dbus/machine-id"
    if dbus_id.exists() or dbus_id.is_symlink():
        dbus_id.unlink()
    (rootfs / "etc/fstab").write_text(
        f"UUID={ROOT_FS_UUID} / ext4 defaults,errors=remount-ro 0 1\n")
    # AppArmor stays enabled (docker needs it) but compiling profiles nobody
    # uses costs tens of seconds per boot under TCG; dockerd loads its own.
    for prof in (rootfs / "etc/apparmor.d").iterdir():
        if prof.is_file():
            prof.unlink()
    # ldconfig/hwdb/catalog "needs update" units would run on every first boot.
    usr_ns = (rootfs / "usr").stat().st_mtime_ns
    for d in ("etc", "var"):
        (rootfs / d / ".updated").write_text(
            f"# written by the e2e image build\nTIMESTAMP_NSEC={usr_ns}\n")
    _run(["systemctl", f"--root={rootfs}", "mask", *MASKED_UNITS], log)
    _run(["systemctl", f"--root={rootfs}", "enable", *ENABLED_UNITS], log)
    # Root has no password; the tests use the guest agent, and the console is a log.
    for p in ("var/cache/apt/archives", "var/lib/apt/lists"):
        d = rootfs / p
        if d.is_dir():
            for f in d.iterdir():
                if f.is_file():
                    f.unlink()


def _make_disk(rootfs: Path, disk: Path, log) -> None:
    with open(disk, "wb") as f:
        f.truncate(ROOT_DISK_BYTES)
    _run(["sgdisk", "--clear", f"--new=1:{PART_START_SECTOR}:0", "--typecode=1:8300",
          "--change-name=1:cloudimg-rootfs", str(disk)], log)
    out = subprocess.run(["sgdisk", "--info=1", str(disk)], capture_output=True, text=True,
                         check=True).stdout
    last = None
    for line in out.splitlines():
        if line.startswith("Last sector:"):
            last = int(line.split()[2])
    if last is None:
        raise RuntimeError(f"cannot read partition 1 of {disk}: {out}")
    part_bytes = (last - PART_START_SECTOR + 1) * 512
    _run(["mkfs.ext4", "-q", "-F", "-L", "cloudimg-rootfs", "-U", ROOT_FS_UUID,
          "-E", f"offset={PART_START_SECTOR * 512}", "-d", str(rootfs),
          str(disk), f"{part_bytes // 1024}k"], log)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="build or locate the e2e guest image")
    ap.add_argument("--rebuild", action="store_true")
    a = ap.parse_args()
    img = get_image(rebuild=a.rebuild)
    print(img.dir)
