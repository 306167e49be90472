"""A minimal cpio "newc" writer (the initramfs format), for the per-boot file
injection: the archive is appended to the base initrd and the image's
init-bottom script copies /cosmicac-inject onto the root. Python's stdlib has
no cpio writer and the format is 30 lines."""

from __future__ import annotations

import stat
from dataclasses import dataclass


@dataclass
class Entry:
    path: str            # inside the archive, no leading slash
    mode: int            # full st_mode (type | permissions)
    data: bytes = b""    # file content or symlink target


def _pad4(n: int) -> bytes:
    return b"\0" * ((4 - n % 4) % 4)


def newc(entries: list[Entry]) -> bytes:
    out = bytearray()
    ino = 1000
    for e in entries + [Entry("TRAILER!!!", 0)]:
        name = e.path.encode() + b"\0"
        fields = [ino, e.mode, 0, 0, 2 if stat.S_ISDIR(e.mode) else 1, 0, len(e.data),
                  0, 0, 0, 0, len(name), 0]
        if e.path == "TRAILER!!!":
            fields = [0] * 13
            fields[4] = 1
            fields[11] = len(name)
        hdr = b"070701" + b"".join(b"%08X" % f for f in fields)
        out += hdr + name
        out += _pad4(len(hdr) + len(name))
        out += e.data + _pad4(len(e.data))
        ino += 1
    return bytes(out)


def tree(files: dict[str, tuple[int, bytes]], symlinks: dict[str, str], root: str) -> list[Entry]:
    """files: guest path -> (permissions, content); symlinks: guest path -> target.
    Returns entries under `root` with every parent directory listed first."""
    dirs: set[str] = set()
    for p in list(files) + list(symlinks):
        parts = p.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    entries = [Entry(root, stat.S_IFDIR | 0o755)]
    for d in sorted(dirs):
        entries.append(Entry(f"{root}/{d}", stat.S_IFDIR | 0o755))
    for p, (perm, data) in sorted(files.items()):
        entries.append(Entry(f"{root}/{p.strip('/')}", stat.S_IFREG | perm, data))
    for p, target in sorted(symlinks.items()):
        entries.append(Entry(f"{root}/{p.strip('/')}", stat.S_IFLNK | 0o777, target.encode()))
    return entries
