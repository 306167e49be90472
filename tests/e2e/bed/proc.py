"""Child processes of the bed: each dies with the harness (PR_SET_PDEATHSIG, so
a ctest TIMEOUT that kills python also ends QEMU and the registry) and is
stopped by its own PID, never by name."""

from __future__ import annotations

import ctypes
import signal
import subprocess

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def spawn(argv: list[str], **kw) -> subprocess.Popen:
    kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen(argv, preexec_fn=_die_with_parent, **kw)


def stop(p: subprocess.Popen, grace: float = 10) -> int:
    """SIGTERM, wait up to `grace`, then SIGKILL; returns the exit status."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode
