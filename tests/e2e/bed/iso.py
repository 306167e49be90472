"""ISO images for the guest's CD-ROMs, made the way KubeVirt makes them:
`xorrisofs -follow-links -joliet -rock -V <label>` over a directory laid out
like a kubelet Secret volume (..<timestamp>/ holding the files, ..data -> it,
top-level symlinks into ..data)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SECRET_TS_DIR = "..2026_01_01_00_00_00.123"


def make_iso(out: Path, label: str, files: dict[str, bytes], secret_layout: bool = False) -> Path:
    if shutil.which("xorrisofs") is None:
        raise SystemExit("e2e: xorrisofs missing (package xorriso); run packaging/install-deps")
    staging = out.with_suffix(".d")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    real = staging / SECRET_TS_DIR if secret_layout else staging
    real.mkdir(exist_ok=True)
    for name, data in files.items():
        (real / name).write_bytes(data)
    if secret_layout:
        os.symlink(SECRET_TS_DIR, staging / "..data")
        for name in files:
            os.symlink(f"..data/{name}", staging / name)
    r = subprocess.run(["xorrisofs", "-quiet", "-follow-links", "-joliet", "-rock", "-V", label,
                        "-o", str(out), str(staging)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"xorrisofs failed for {out}: {r.stderr.strip()}")
    return out


def make_cred_iso(out: Path, registry: str, username: str, token: str, label: str = "cfgdata",
                  extra: dict[str, bytes] | None = None) -> Path:
    """The registry-credential CD-ROM. Values carry no trailing newline, as a
    Secret created from literals (`kubectl create secret --from-literal`)."""
    files = {"DOCKER_REGISTRY": registry.encode(), "DOCKER_USERNAME": username.encode(),
             "DOCKER_TOKEN": token.encode()}
    files.update(extra or {})
    return make_iso(out, label, files, secret_layout=True)
