"""mkfs.ext4 on a 1 TiB sparse data disk: the agent's options against the
script's plain `mkfs.ext4 -F`, alternately, each on a freshly made sparse file
behind a loop device (on the host; in the guest through QGA if asked).
Both run with -q so neither pays for printing progress."""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path

TIB = 1 << 40
VARIANTS = {
    "agent": ["mkfs.ext4", "-F", "-q", "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard",
              "-L", "cosmicac-data"],
    "script": ["mkfs.ext4", "-F", "-q"],
}


def _stats(xs: list[float]) -> dict:
    return {"n": len(xs), "median_s": statistics.median(xs), "min_s": min(xs), "max_s": max(xs),
            "all_s": [round(x, 3) for x in xs]}


def on_host(workdir: Path, pairs: int, log) -> dict:
    workdir.mkdir(parents=True, exist_ok=True)
    img = workdir / "mkfs-1tib.raw"
    times: dict[str, list[float]] = {"agent": [], "script": []}
    for i in range(pairs):
        for side in ("script", "agent"):
            img.unlink(missing_ok=True)
            with open(img, "wb") as f:
                f.truncate(TIB)
            loop = subprocess.run(["losetup", "--find", "--show", str(img)], check=True,
                                  capture_output=True, text=True).stdout.strip()
            try:
                t0 = time.monotonic()
                subprocess.run(VARIANTS[side] + [loop], check=True, capture_output=True, timeout=1800)
                dt = time.monotonic() - t0
            finally:
                subprocess.run(["losetup", "--detach", loop], check=False)
            times[side].append(dt)
            log(f"mkfs host pair {i + 1}/{pairs} {side}: {dt:.2f} s")
    used = img.stat().st_blocks * 512
    img.unlink(missing_ok=True)
    fs = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", str(workdir)], capture_output=True,
                        text=True).stdout.strip()
    return {"where": f"host, loop device over a sparse 1 TiB file on {fs}",
            "agent": _stats(times["agent"]), "script": _stats(times["script"]),
            "last_file_allocated_bytes": used}


GUEST_LOOP = r'''
set -e
img=/var/tmp/mkfs-1tib.raw
rm -f "$img"; truncate -s 1T "$img"
dev=$(losetup --find --show "$img")
a=$EPOCHREALTIME
"$@" "$dev" >/dev/null 2>&1 || rc=$?
b=$EPOCHREALTIME
losetup --detach "$dev"; rm -f "$img"
echo "${a/./} ${b/./} ${rc:-0}"
'''


def in_guest(qga, pairs: int, log) -> dict:
    times: dict[str, list[float]] = {"agent": [], "script": []}
    for i in range(pairs):
        for side in ("script", "agent"):
            r = qga.exec(["/bin/bash", "-c", GUEST_LOOP, "mkfs"] + VARIANTS[side], timeout=1800)
            parts = r.out.split()
            if len(parts) != 3 or parts[2] != "0":
                raise RuntimeError(f"guest mkfs ({side}) failed: {r.out!r} {r.err[-500:]!r}")
            dt = (int(parts[1]) - int(parts[0])) / 1e6
            times[side].append(dt)
            log(f"mkfs guest pair {i + 1}/{pairs} {side}: {dt:.2f} s")
    return {"where": "guest (TCG), loop device over a sparse 1 TiB file on the root ext4 (qcow2 overlay)",
            "agent": _stats(times["agent"]), "script": _stats(times["script"])}
