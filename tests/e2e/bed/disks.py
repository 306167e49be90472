"""Disk images for the scenarios: the data disk (blank, or holding ext4 with
files), and the states the agent must handle (foreign LVM PV, a zapped GPT, our
half-made partition), plus fingerprints of their bytes. A VM takes them as its
data disk or, beside it, as `VM(extra_disks=[(path, bus, serial), ...])`."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path


def make_data_disk(path: Path, gib: int = 120) -> Path:
    """A sparse raw disk (no table, like a fresh PVC)."""
    with open(path, "wb") as f:
        f.truncate(gib << 30)
    return path


def make_data_disk_with_fs(path: Path, gib: int, files: dict[str, bytes], label: str = "data",
                           partitioned: bool = True) -> Path:
    """A sparse disk already holding ext4 (in partition 1 of a GPT, or on the
    whole disk) with `files` in it; written with mkfs.ext4 -d at an offset, no mount."""
    make_data_disk(path, gib)
    staging = path.with_suffix(".files")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    for rel, data in files.items():
        p = staging / rel.strip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    args = ["mkfs.ext4", "-q", "-F", "-L", label, "-d", str(staging)]
    lazy = "lazy_itable_init=1,lazy_journal_init=1"  # keep the sparse file sparse
    size = []
    if partitioned:
        subprocess.run(["sgdisk", "--clear", "--new=1:2048:0", "--typecode=1:8300", str(path)],
                       check=True, capture_output=True)
        out = subprocess.run(["sgdisk", "--info=1", str(path)], check=True, capture_output=True,
                             text=True).stdout
        last = int(re.search(r"Last sector: (\d+)", out).group(1))
        lazy += f",offset={2048 * 512}"
        size = [f"{(last - 2048 + 1) * 512 // 1024}k"]
    subprocess.run(args + ["-E", lazy, str(path)] + size, check=True, capture_output=True)
    shutil.rmtree(staging)
    return path


def sparse_disk(path: Path, size_bytes: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size_bytes)
    return path


def lvm_pv_disk(path: Path, mib: int = 256) -> Path:
    """A small disk holding a real LVM2 physical-volume label (pvcreate on a loop device)."""
    sparse_disk(path, mib << 20)
    loop = subprocess.run(["losetup", "--find", "--show", str(path)], check=True, capture_output=True,
                          text=True).stdout.strip()
    try:
        subprocess.run(["pvcreate", "-y", "-q", loop], check=True, capture_output=True,
                       stdin=subprocess.DEVNULL, close_fds=True)
    finally:
        subprocess.run(["losetup", "-d", loop], check=True, capture_output=True)
    probe = subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", str(path)], capture_output=True,
                           text=True).stdout.strip()
    if probe != "LVM2_member":
        raise RuntimeError(f"{path}: blkid sees {probe!r} after pvcreate, expected LVM2_member")
    return path


def zapped_gpt_disk(path: Path, gib: int = 1, files: dict[str, bytes] | None = None) -> Path:
    """What a stray dd (or wiping the head) leaves of a partitioned disk: the
    first MiB (protective MBR, primary GPT header and entries) zeroed, the
    backup GPT at the last LBA and the ext4 with `files` from 1 MiB intact.
    Checks that blkid sees nothing on the whole disk (so the agent before the
    fix took it for blank) and the ext4 at 1 MiB."""
    make_data_disk_with_fs(path, gib, files or {"MARKER": b"somebody's data\n"}, label="olddata")
    with open(path, "r+b") as f:
        f.write(bytes(1 << 20))
    whole = subprocess.run(["blkid", "-p", str(path)], capture_output=True, text=True)
    if whole.returncode != 2:
        raise RuntimeError(f"{path}: blkid -p finds something on the zapped disk: {whole.stdout.strip()}")
    at = subprocess.run(["blkid", "-p", "-O", str(1 << 20), "-o", "value", "-s", "TYPE", str(path)],
                        capture_output=True, text=True).stdout.strip()
    if at != "ext4":
        raise RuntimeError(f"{path}: blkid sees {at!r} at 1 MiB, expected the old ext4")
    return path


def our_partition_without_fs(path: Path, gib: int = 120) -> Path:
    """The state after a crash between partitioning and mkfs: a GPT with one
    partition from 1 MiB to the end, named cosmicac-data, type Linux
    filesystem, and nothing in it."""
    sparse_disk(path, gib << 30)
    subprocess.run(["sgdisk", "--clear", "--new=1:2048:0", "--typecode=1:8300",
                    "--change-name=1:cosmicac-data", str(path)], check=True, capture_output=True)
    return path


def partition_guid(path: Path, number: int = 1) -> str:
    """The unique GUID of a partition (lower case, as lsblk's PARTUUID)."""
    out = subprocess.run(["sgdisk", f"--info={number}", str(path)], check=True, capture_output=True,
                         text=True).stdout
    m = re.search(r"Partition unique GUID: ([0-9A-Fa-f-]+)", out)
    if not m:
        raise RuntimeError(f"{path}: no partition {number}: {out.strip()}")
    return m.group(1).lower()


def file_sha256(path: Path) -> str:
    """Hash of every byte (small disks only)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def allocated_bytes(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def head_is_zero(path: Path, nbytes: int = 1 << 20) -> bool:
    with open(path, "rb") as f:
        return f.read(nbytes).count(0) == nbytes


def grow_disk(path: Path, gib: int) -> Path:
    """The disk made larger (sparse), as a PVC grows under a stopped VM."""
    with open(path, "r+b") as f:
        f.truncate(gib << 30)
    return path


def grow_partition_only(path: Path, number: int = 1) -> None:
    """What a grow interrupted before resize2fs leaves: the backup GPT at the
    disk's end and the partition extended to it (sfdisk, as libfdisk does it),
    the filesystem inside as it was."""
    subprocess.run(["sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", "-N", str(number), str(path)],
                   input=", +\n", text=True, check=True, capture_output=True)


def e2fsck_partition(path: Path, start_bytes: int = 1 << 20) -> subprocess.CompletedProcess:
    """e2fsck -fn of the filesystem in a partition of a disk image, no loop device
    (e2fsprogs' offset= option of the device name)."""
    return subprocess.run(["e2fsck", "-fn", f"{path}?offset={start_bytes}"], capture_output=True, text=True)


def grown_disk_with_foreign_type(path: Path) -> Path:
    """Our partition name and our ext4 (label cosmicac-data) under a partition
    type that is not Linux filesystem (swap), 512 MiB on a disk since grown from
    1 to 2 GiB: the agent uses it as it is but must refuse to grow it."""
    sparse_disk(path, 1 << 30)
    subprocess.run(["sfdisk", "--quiet", str(path)], check=True, capture_output=True, text=True,
                   input="label: gpt\nstart=2048, size=512MiB, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F, "
                         "name=cosmicac-data\n")
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "cosmicac-data",
                    "-E", f"lazy_itable_init=1,lazy_journal_init=1,offset={1 << 20}", str(path), "524288k"],
                   check=True, capture_output=True)
    return grow_disk(path, 2)
