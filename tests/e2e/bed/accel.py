"""KVM or TCG. /dev/kvm may exist and still be unable to run a stock guest
kernel (kvm_pvm inside Firecracker), so we do not assume: a quick probe boots
the image's kernel without a root under KVM and expects it to reach the
"unable to mount root" panic. The answer is cached per host boot.
COSMICAC_E2E_ACCEL=tcg|kvm overrides."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import proc
from .image import CACHE_ROOT, Image

_chosen: str | None = None


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def probe_kvm(image: Image, timeout: float = 20) -> tuple[bool, str]:
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "/dev/kvm not accessible"
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "console.log"
        p = proc.spawn(["qemu-system-x86_64", "-nodefaults", "-nographic", "-machine", "q35",
                        "-accel", "kvm", "-cpu", "host", "-m", "256", "-no-reboot",
                        "-kernel", str(image.kernel),
                        "-append", "console=ttyS0 panic=-1 root=/dev/nonexistent",
                        "-serial", f"file:{log}", "-monitor", "none"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        t0 = time.monotonic()
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.stop(p, 2)
            return False, f"KVM probe guest did not reach its root-mount panic in {timeout}s"
        text = log.read_text(errors="replace") if log.exists() else ""
        if "Kernel panic" in text and "mount root" in text:
            return True, f"KVM probe booted the kernel in {time.monotonic() - t0:.1f}s"
        return False, f"KVM probe failed (exit {p.returncode}): {out.decode(errors='replace').strip()[:300]}"


def choose(image: Image) -> str:
    global _chosen
    if _chosen:
        return _chosen
    forced = os.environ.get("COSMICAC_E2E_ACCEL")
    if forced in ("tcg", "kvm"):
        _chosen = forced
        return forced
    cache = CACHE_ROOT / f".accel-{_boot_id()}"
    if cache.exists():
        _chosen = cache.read_text().strip()
        return _chosen
    ok, why = probe_kvm(image)
    _chosen = "kvm" if ok else "tcg"
    print(f"[e2e] accelerator: {_chosen} ({why})", file=sys.stderr, flush=True)
    for old in CACHE_ROOT.glob(".accel-*"):
        old.unlink(missing_ok=True)
    cache.write_text(_chosen + "\n")
    return _chosen
