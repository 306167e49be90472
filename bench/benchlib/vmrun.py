"""One benchmark side on the e2e bed: a fresh overlay and a fresh sparse data
disk, the original script or the agent; boot 1 cold, boot 2 the same VM
again, boot 3 a re-created VM (a new overlay of the guest image as its root
disk) with the same data disk, as a fleet re-creates a VM whose PVC is kept.
Both sides are watched the same way (a QGA poll every POLL_S seconds), and
everything the numbers come from is saved raw."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bed.qga import QgaError
from bed.registry import REPO, Registry
from bed.scenario import FALLBACK_AGENT_UNIT, REPO_DIR, Ctx
from bed.vm import REFERENCE_DIR, VM, make_data_disk

POLL_S = 5.0
CONTAINER = "inference"
TAG = "v1"
# The container acts as an inference server loading its model (tests/e2e/bed/
# oci.py): it refuses connections on port 8000 for HEALTH_AFTER_S seconds,
# then answers GET /health 200 and prints `serving`. The agent is told so
# (READY_PROBE) and is ready at that first good answer; the script does not
# know of it (its ENVS passes the variable through, nothing more).
HEALTH_AFTER_S = 5
ENVS = f"MODEL_NAME=tiny-llm;MAX_BATCH=8;HEALTH_AFTER={HEALTH_AFTER_S}"
READY_PROBE = "http:8000/health"
UNITS = {"script": "docker-bootstrap.service", "agent": "cosmicac-bootstrap.service"}
JOURNAL_UNITS = ["docker-bootstrap.service", "cosmicac-bootstrap.service", "cosmicac-bootstrap-disk.service",
                 "docker.service", "containerd.service"]
JOURNAL_FIELDS = "MESSAGE,MESSAGE_ID,UNIT,_SYSTEMD_UNIT,_TRANSPORT,JOB_TYPE,JOB_RESULT,STEP,REASON,_PID"


# Peak RSS sampler, injected on both sides alike: the unit's main process is
# found by its comm and its cgroup (the agent's disk unit runs the same binary
# earlier in the boot, in its own unit's cgroup), and its VmHWM (and the unit cgroup's memory.peak) read every
# 0.1 s with bash builtins only (no fork per sample), the maximum kept in /run.
# Needed because the agent is done before the host can poll (it finishes
# before multi-user), and its cgroup is pruned when it exits.
RSS_SAMPLER = r"""#!/bin/bash
comm=$1 unit=$2 out=/run/bench-rss
pid= hwm=0 cg=0
exec {nap}<> <(:)   # a pipe we also write to: `read -t` on it sleeps without a fork
while [ -z "$pid" ]; do
  for d in /proc/[0-9]*; do
    read -r c 2>/dev/null < "$d/comm" && [ "$c" = "$comm" ] && read -r g 2>/dev/null < "$d/cgroup" \
      && [ "${g##*/}" = "$unit" ] && { pid=${d#/proc/}; break; }
  done
  [ -z "$pid" ] && read -rt 0.2 -u "$nap"
done
while [ -e "/proc/$pid" ]; do
  while read -r k v _; do [ "$k" = VmHWM: ] && [ "$v" -gt "$hwm" ] && hwm=$v; done 2>/dev/null < "/proc/$pid/status"
  read -r p 2>/dev/null < "/sys/fs/cgroup/system.slice/$unit/memory.peak" && [ "$p" -gt "$cg" ] && cg=$p
  echo "pid=$pid vmhwm_kib=$hwm cgroup_peak_bytes=$cg" > "$out"
  read -rt 0.1 -u "$nap"
done
echo "pid=$pid vmhwm_kib=$hwm cgroup_peak_bytes=$cg done=1" > "$out"
"""
RSS_COMM = {"script": "docker-bootstra", "agent": "cosmicac-bootst"}


def rss_unit(side: str) -> str:
    return f"""[Unit]
Description=bench: peak RSS sampler for {UNITS[side]}
DefaultDependencies=no
Before={UNITS[side]}
[Service]
Type=simple
ExecStart=/usr/local/sbin/bench-rss-sampler {RSS_COMM[side]} {UNITS[side]}
[Install]
WantedBy=multi-user.target
"""


def agent_unit() -> Path:
    unit = REPO_DIR / "units" / "cosmicac-bootstrap.service"
    return unit if unit.exists() else FALLBACK_AGENT_UNIT


def agent_store_units() -> tuple[list[Path], dict]:
    """What `cosmicac-bootstrap install` adds to the main unit so that docker's
    store can live on the data disk: the disk unit, ordered before
    docker.service, and docker's drop-in. Absent in
    an older checkout: then the agent runs as it did (store on the root disk)."""
    disk = REPO_DIR / "units" / "cosmicac-bootstrap-disk.service"
    dropin = REPO_DIR / "units" / "docker.service.d" / "cosmicac-data-disk.conf"
    if not disk.exists() or not dropin.exists():
        return [], {}
    return [disk], {"etc/systemd/system/docker.service.d/cosmicac-data-disk.conf": (0o644, dropin.read_bytes())}


def journal_argv() -> list[str]:
    argv = ["journalctl", "-b", "-o", "json", f"--output-fields={JOURNAL_FIELDS}"]
    argv += [f"UNIT={u}" for u in JOURNAL_UNITS + ["multi-user.target"]]
    argv += ["+"] + [f"_SYSTEMD_UNIT={u}" for u in JOURNAL_UNITS]
    argv += ["+", "_TRANSPORT=kernel"]
    return argv


def clock_offset(vm: VM, samples: int = 7) -> tuple[int, float]:
    """guest wall clock - host wall clock (ns), from the QGA round trip with the
    smallest RTT (error <= RTT/2). The guest runs no NTP, and its clock starts
    from the emulated RTC (1 s resolution), so it must be measured per boot."""
    best = None
    for _ in range(samples):
        h0 = time.time_ns()
        g = int(vm.qga.command("guest-get-time", timeout=10))
        h1 = time.time_ns()
        cand = (h1 - h0, g - (h0 + h1) // 2)
        if best is None or cand[0] < best[0]:
            best = cand
    return best[1], best[0] / 1e6


def root_disk_identity(vm: VM) -> dict:
    """The host file behind the VM's root disk (its qcow2 overlay of the guest
    image, the bed's stand-in for the root DataVolume): path and inode. A boot
    on the same file imported nothing; a new overlay is a new import."""
    st = vm.root.stat()
    return {"path": str(vm.root), "inode": st.st_ino}


class SideRun:
    def __init__(self, side: str, work: Path, image, registry: Registry, cred_iso: Path,
                 agent: Path | None, log, timeout: float = 900):
        self.side, self.work, self.log, self.timeout = side, work, log, timeout
        self.unit = UNITS[side]
        self.registry = registry
        work.mkdir(parents=True, exist_ok=True)
        config = Ctx.config(MNT="/data", IMG=Ctx.image_ref(TAG), NAME=CONTAINER, ENVS=ENVS,
                            READY_PROBE=READY_PROBE)
        self.kw = dict(data_disk=make_data_disk(work / "data.raw", 120), data_serial="pvc-data",
                       cred_iso=cred_iso, config=config, registry_port=registry.port, time_limit=2400)
        if side == "agent":
            units, files = agent_store_units()
            self.kw.update(agent_binary=agent, units=[agent_unit()] + units, files=files)
        else:
            self.kw.update(baseline_script=REFERENCE_DIR / "docker-bootstrap.sh")
        self.image = image
        self.vm = self._new_vm(side)
        self.boot_id: str | None = None

    def _new_vm(self, name: str) -> VM:
        vm = VM(self.work, self.image, name=name, **self.kw)
        vm.files["usr/local/sbin/bench-rss-sampler"] = (0o755, RSS_SAMPLER.encode())
        vm.add_unit("bench-rss-sampler.service", rss_unit(self.side))
        return vm

    # ---- one boot ----------------------------------------------------------------
    def boot(self, n: int) -> dict:
        vm = self.vm
        reg_log = self.registry.dir / "registry.log"
        reg_pos = reg_log.stat().st_size if reg_log.exists() else 0
        serial_pos = len(vm.serial_lines)
        if n == 1:
            qemu_start_ns = time.time_ns()
            vm.boot()
        elif n == 2:
            vm.shutdown()
            qemu_start_ns = time.time_ns()
            vm.boot(inject=False)  # same disks; the files are on the root already
        else:  # re-created: the old VM is gone, a new root disk, the same data disk
            vm.shutdown()
            vm.kill()
            vm = self.vm = self._new_vm(f"{self.side}-re")
            reg_pos = reg_log.stat().st_size if reg_log.exists() else 0
            serial_pos = 0
            qemu_start_ns = time.time_ns()
            vm.boot()
        raw: dict = {"side": self.side, "boot": n, "unit": self.unit, "container": CONTAINER,
                     "repo": REPO, "tag": TAG, "qemu_start_host_ns": qemu_start_ns,
                     "health_after_s": HEALTH_AFTER_S, "root_disk": root_disk_identity(vm)}
        raw["multi_user_host_s"] = round(vm.wait_booted(600), 2)
        state, hwm, polls = self._wait_unit()
        raw["unit_state"], raw["polls"] = state, polls
        raw["vmhwm_sampled_kib"] = hwm
        raw["host_seen_done_s"] = round(vm.elapsed(), 2)
        self.log(f"{self.side} boot {n}: {self.unit} {state} at {raw['host_seen_done_s']} s after QEMU start")
        time.sleep(2)  # let the last events and journal lines land
        self._collect(raw, reg_log, reg_pos, serial_pos)
        return raw

    def _wait_unit(self) -> tuple[str, int | None, int]:
        """Polls the unit every POLL_S s until active/failed, the same for both
        sides; also samples the main process's VmHWM (peak RSS so far)."""
        q, u = self.vm.qga, self.unit
        cmd = (f"systemctl show -P ActiveState {u}; p=$(systemctl show -P MainPID {u}); "
               f"h=0; [ \"$p\" != 0 ] && h=$(sed -n 's/^VmHWM:[[:space:]]*\\([0-9]*\\).*/\\1/p' /proc/$p/status); "
               f"echo \"${{h:-0}}\"; cat /sys/fs/cgroup/system.slice/{u}/memory.peak 2>/dev/null || echo 0")
        deadline = time.monotonic() + self.timeout
        hwm, polls, state = None, 0, "?"
        self.cg_peak = None
        while time.monotonic() < deadline:
            try:
                out = q.sh(cmd, timeout=60).out.split()
            except (OSError, TimeoutError, ConnectionError, QgaError) as e:
                self.log(f"{self.side}: poll failed ({e}); retrying")
                time.sleep(POLL_S)
                continue
            polls += 1
            state = out[0] if out else "?"
            if len(out) > 1 and out[1].isdigit() and int(out[1]) > 0:
                hwm = max(hwm or 0, int(out[1]))
            if len(out) > 2 and out[2].isdigit() and int(out[2]) > 0:
                self.cg_peak = max(self.cg_peak or 0, int(out[2]))
            if state in ("active", "failed"):
                return state, hwm, polls
            if not self.vm.running():
                return "vm-stopped", hwm, polls
            time.sleep(POLL_S)
        return f"timeout({state})", hwm, polls

    def _collect(self, raw: dict, reg_log: Path, reg_pos: int, serial_pos: int) -> None:
        q = self.vm.qga
        raw["clock_offset_ns"], raw["clock_offset_rtt_ms"] = clock_offset(self.vm)
        raw["journal"] = q.exec(journal_argv(), timeout=180).out
        raw["events"] = q.sh("docker events --since 1 --until \"$(date +%s.%N)\" --format '{{json .}}'",
                             timeout=120).out
        r = q.exec(["docker", "inspect", CONTAINER], timeout=60)
        # the container's own lines with dockerd's timestamps: `serving` is its
        # first good /health answer (every start of the container prints one)
        lg = q.exec(["docker", "logs", "--timestamps", CONTAINER], timeout=60)
        raw["container_log"] = (lg.out + lg.err)[-20000:] if lg.exitcode == 0 else None
        # the root disk's own identity, written at its first boot: the same on
        # a restart of the same VM (a VM-kind restart), new on a re-created one
        raw["machine_id"] = q.read_file("/etc/machine-id").decode().strip()
        raw["inspect"] = r.out if r.exitcode == 0 else None
        raw["container_running"] = bool(raw["inspect"] and json.loads(raw["inspect"])[0]["State"]["Running"])
        raw["boot_id"] = q.read_file("/proc/sys/kernel/random/boot_id").decode().strip()
        u = self.unit
        mem = {}
        show = q.exec(["systemctl", "show", u, "-p", "MemoryPeak", "-p", "MemoryCurrent", "-p",
                       "MemoryAccounting", "-p", "ControlGroup", "-p", "MainPID",
                       "-p", "ExecMainStatus"]).out
        for line in show.splitlines():
            k, _, v = line.partition("=")
            mem[k] = v
        cg = mem.get("ControlGroup") or f"/system.slice/{u}"
        # The cgroup goes away when the main process exits (RemainAfterExit keeps
        # only the unit), so memory.peak is the last value the poll saw, unless
        # the cgroup is still there now.
        now = q.sh(f"cat /sys/fs/cgroup{cg}/memory.peak 2>/dev/null").out.strip()
        mem["cgroup_memory_peak"] = now if now.isdigit() else str(self.cg_peak or "")
        mem["cgroup_memory_peak_source"] = "now" if now.isdigit() else "last poll"
        mem["vmhwm_sampled_kib"] = raw.get("vmhwm_sampled_kib")
        rs = q.exec(["cat", "/run/bench-rss"])
        mem["sampler"] = rs.out.strip() if rs.exitcode == 0 else f"no sampler output: {rs.err.strip()[:200]}"
        raw["memory"] = mem
        if self.side == "agent":
            st = q.exec(["cat", "/run/cosmicac-bootstrap/state.json"])
            raw["state_json"] = st.out if st.exitcode == 0 else None
            raw["status_line"] = q.exec(["/usr/local/bin/cosmicac-bootstrap", "status"]).out.strip()
        with self.vm._serial_lock:
            raw["readiness"] = list(self.vm.serial_lines[serial_pos:])
        with open(reg_log, "rb") as f:
            f.seek(reg_pos)
            raw["registry_log"] = f.read().decode(errors="replace")
        raw["systemd_analyze"] = q.exec(["systemd-analyze", "blame"], timeout=60).out[:3000]
        if raw["unit_state"] != "active":
            raw["unit_log_tail"] = q.exec(["journalctl", "-b", "-u", u, "--no-pager", "-n", "80"]).out

    def close(self) -> None:
        self.vm.kill()
