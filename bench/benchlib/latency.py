"""Latency of `cosmicac-bootstrap status` (what KubeVirt's readiness probe
pays): N invocations timed one by one with bash's $EPOCHREALTIME (no fork for
the clock), next to /bin/true as the fork+exec floor of the same shell.

In the guest (through QGA, under emulation) and on the host against the state
file the agent wrote in the guest (a private mount namespace with a tmpfs on
/run holds it; its boot_id is set to the host's so `status` takes the `ready`
path, as a probe would)."""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
from pathlib import Path

LOOP = r'''
n=$1; shift
for i in $(seq "$n"); do
  a=$EPOCHREALTIME; "$@" >/dev/null 2>&1; rc=$?; b=$EPOCHREALTIME
  echo "${a/./} ${b/./} $rc"
done
'''


def summarize(out: str) -> dict:
    ds, rcs = [], set()
    for line in out.split("\n"):
        parts = line.split()
        if len(parts) == 3:
            ds.append((int(parts[1]) - int(parts[0])) / 1000.0)
            rcs.add(int(parts[2]))
    if not ds:
        raise RuntimeError(f"latency loop printed nothing usable: {out[:300]!r}")
    return {"n": len(ds), "median_ms": statistics.median(ds), "min_ms": min(ds), "max_ms": max(ds),
            "exit_codes": sorted(rcs)}


def in_guest(qga, binary: str = "/usr/local/bin/cosmicac-bootstrap", n: int = 100) -> dict:
    res = {}
    for key, argv in (("status", [binary, "status"]), ("true", ["/bin/true"])):
        r = qga.exec(["/bin/bash", "-c", LOOP, "loop", str(n)] + argv, timeout=900)
        res[key] = summarize(r.out)
    return res


def on_host(binaries: dict[str, Path], state_json: str, n: int = 100) -> dict:
    boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    state = json.loads(state_json.strip().splitlines()[-1])
    state["boot_id"] = boot_id
    res = {}
    with tempfile.TemporaryDirectory() as d:
        sf = Path(d) / "state.json"
        sf.write_text(json.dumps(state, separators=(",", ":")) + "\n")
        for key, b in list(binaries.items()) + [("true", Path("/bin/true"))]:
            argv = [str(b)] + (["status"] if key != "true" else [])
            # private mount namespace: the host's /run is never touched
            script = ("mount -t tmpfs bench-run /run && mkdir -m 0755 /run/cosmicac-bootstrap && "
                      f"cp {sf} /run/cosmicac-bootstrap/state.json && "
                      f"{argv[0]} status > /run/first.txt 2>&1; cat /run/first.txt >&2; "
                      f"exec bash -c '{LOOP}' loop {n} " + " ".join(argv))
            r = subprocess.run(["unshare", "--mount", "--propagation", "private", "bash", "-c", script],
                               capture_output=True, text=True, timeout=600)
            s = summarize(r.stdout)
            s["first_output"] = r.stderr.strip()[:300]
            res[key] = s
    return res
