"""Size of the shipped agent: the packed release binary (dist/) and its raw
size, got by `upx -d` on a copy (the release keeps only the packed one). The
unpacked copy is kept in `workdir` so that `status` can be timed both ways."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def sizes(packed: Path, workdir: Path) -> tuple[dict, Path]:
    workdir.mkdir(parents=True, exist_ok=True)
    raw_copy = workdir / "cosmicac-bootstrap.raw"
    shutil.copy2(packed, raw_copy)
    r = subprocess.run(["upx", "-q", "-d", str(raw_copy)], capture_output=True, text=True)
    if r.returncode != 0:
        note = f"upx -d refused ({r.stderr.strip()[:200]}): the binary is not packed"
    else:
        note = "raw size = `upx -d` of a copy of the packed binary"
    return ({"binary": str(packed), "packed_bytes": packed.stat().st_size,
             "raw_bytes": raw_copy.stat().st_size, "note": note}, raw_copy)
