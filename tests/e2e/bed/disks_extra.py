"""More disks for the agent scenarios (additive to vm.py): a VM with extra
block devices beside the data disk, and builders/fingerprints for the disk
states the agent must handle (foreign LVM PV, a zapped GPT, our half-made
partition)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

from .scenario import Ctx
from .vm import VM, make_data_disk_with_fs


class MultiDiskVM(VM):
    """A VM with `extra_disks` [(raw image, "virtio"|"nvme", serial), ...]
    after the data disk (virtio ones become vdc, vdd, ... after root vda and a
    virtio data disk vdb)."""

    def __init__(self, *args, extra_disks=(), **kw):
        super().__init__(*args, **kw)
        self.extra_disks = list(extra_disks)

    def argv(self, initrd: Path, accel: str) -> list[str]:
        a = super().argv(initrd, accel)
        extra: list[str] = []
        for i, (path, bus, serial) in enumerate(self.extra_disks):
            if bus not in ("virtio", "nvme"):
                raise ValueError(f"extra disk bus {bus!r}: virtio or nvme")
            dev = "nvme" if bus == "nvme" else "virtio-blk-pci"
            extra += ["-drive", f"if=none,id=extra{i},file={path},format=raw,cache=unsafe,discard=unmap",
                      "-device", f"{dev},drive=extra{i},serial={serial}"]
        at = a.index("-netdev")  # before the NIC: PCI slots (and vdX names) follow the data disk
        return a[:at] + extra + a[at:]


def multi_disk_vm(t: Ctx, extra_disks=(), **kw) -> MultiDiskVM:
    """Like Ctx.vm(), with extra disks."""
    registry = kw.pop("registry", None) or (t.registries[-1] if t.registries else None)
    kw.setdefault("registry_port", registry.port if registry else None)
    vm = MultiDiskVM(t.work, t.image, name=kw.pop("name", f"vm{len(t.vms)}"), extra_disks=extra_disks, **kw)
    t.vms.append(vm)
    return vm


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
