"""JOB_TYPE=GPU_CONTAINER: the container gets /dev/net/tun and NET_ADMIN (in
its effective capabilities) and the NVIDIA hook runs for it. Then a changed
config on the next boot recreates the container: the image (v1 -> v2) and one
ENVS variable at once, and the journal names both (Image and the variable,
never its value, and not the variable that stayed). The GPU health check (a
stand-in nvidia-smi and IB sysfs, bed/gpu_standin.py): boot 1 has no counts
and no nvidia-smi, so the check is skipped and says so; from boot 2 the config
carries GPU_COUNT/IB_COUNT: the fabric In Progress then Completed gives
progress events, then ready; within boot 2 the by-hand re-run
(`run --step=gpu-check`) walks gpu-count, gpu-fabric, ib-link and gpu-xid into
the state file, each failure stopping the container and the healthy look
between them starting it again (the bootstrap's phase untouched). Boot 3 fails
with gpu-count, seen by the state file and by `cosmicac-vmi wait`: the
container dockerd's restart policy started at boot is stopped, stays stopped
when dockerd restarts, and a by-hand check that passes starts it again (boot
2's Xid is not this boot's). In boot 2, `status` is not ready while a
by-hand check holds the container, and records the Xid injected after ready
at once (`ready` failed, gpu-xid). Boot 1 also shows what `--ipc=host` shares
(docs/threat-model.md): the guest's /dev/shm and its System V IPC objects.
Boot 2, once ready, performs issue 52's attack from the container: a process
dies of a segfault in a file named like an agent event (this boot's real
boot_id, `failed` gpu-xid), and in one named like the driver's Xid 79; the
kernel prints both names on the console. `cosmicac-vmi wait` over the whole
console (boots 1 and 2) exits 0 at ready, and `status` stays ready and
healthy (the Xid part needs the agent's Xid reader of issue 52 item 1).
Three boots (issue 36: the ENVS change had a boot of its own)."""

import json
import struct
import threading
import time
from pathlib import Path

from bed import checks
from bed import events
from bed import gpu_standin
from bed.catalog import scenario
from bed.kube_standin import KubeWait

CAP_NET_ADMIN = 12
SECRET_OLD = "s3cr3t-old-7f1e2d"   # values that must never reach the journal
SECRET_NEW = "s3cr3t-new-9a4c0b"


def envs(secret: str) -> str:
    return f"MODEL_NAME=tiny-llm;API_KEY={secret}"


def cap_eff(t, vm, name: str) -> int:
    r = vm.qga.exec(["docker", "exec", name, "/bin/cat", "/proc/1/status"])
    t.expect(r.exitcode == 0, f"docker exec {name} cat /proc/1/status failed: {r.err.strip()}")
    line = [x for x in r.out.splitlines() if x.startswith("CapEff:")]
    t.expect(len(line) == 1, f"no CapEff line in the container's /proc/1/status: {r.out[:400]}")
    return int(line[0].split()[1], 16)


def status_json(t, vm) -> tuple[int, dict]:
    r = vm.qga.exec(["/usr/local/bin/cosmicac-bootstrap", "status", "--json"])
    try:
        return r.exitcode, json.loads(r.out)
    except ValueError:
        t.expect(False, f"status --json printed no JSON: {r.out[:400]!r} {r.err[:400]!r}")
        return r.exitcode, {}


def container_running(t, vm, name: str) -> bool:
    info = t.docker_inspect(vm, name)
    t.expect(info is not None, f"container {name} is gone")
    return bool(info and info["State"]["Running"])


def gpu_check_by_hand(t, vm, expect_reason: str | None, phase: str = "ready") -> str:
    """`run --step=gpu-check`: its exit and verdict, the state file's summary
    after it, and the container: stopped after a failure, running after a pass."""
    r = vm.qga.exec(["/usr/local/bin/cosmicac-bootstrap", "run", "--step=gpu-check"], timeout=120)
    first = r.out.splitlines()[0] if r.out else ""
    running = container_running(t, vm, "inference")
    t.expect(running == (expect_reason is None),
             f"after a by-hand check {expect_reason or 'healthy'} the container is "
             f"{'running' if running else 'stopped'}: {r.out[-600:]!r}")
    if expect_reason is None:
        t.expect(r.exitcode == 0 and first == "GPU health: healthy",
                 f"gpu-check exited {r.exitcode}, printed {r.out[:600]!r}, expected healthy")
    else:
        t.expect(r.exitcode == 1 and first.startswith(f"GPU health: failed reason={expect_reason} "),
                 f"gpu-check exited {r.exitcode}, printed {r.out[:600]!r}, expected {expect_reason}")
    # `status` looks again (issue 41): not ready while the check holds the
    # container stopped, yet the run's phase stands (READY_FAILURE_THRESHOLD
    # is 10 in this boot: the stopped looks are counted, not recorded).
    code, st = status_json(t, vm)
    health = st.get("gpu_health") or {}
    ready_now = expect_reason is None and phase == "ready"
    t.expect(code == (0 if ready_now else 1) and st.get("phase") == phase,
             f"the re-run changed the bootstrap's state: exit {code}, {st}")
    t.expect(health.get("verdict") == ("healthy" if expect_reason is None else "failed")
             and health.get("reason") == expect_reason,
             f"state file's gpu_health after the re-run: {health}, expected {expect_reason}")
    return first


def ipc_host_shares(t, vm) -> None:
    """--ipc=host (docs/threat-model.md): the container sees the guest's /dev/shm
    and root's System V IPC objects."""
    gpu_standin.write(vm, "/dev/shm/cosmicac-e2e-ipc", "guest-shm-7d2a\n")
    r = vm.qga.exec(["docker", "exec", "inference", "/bin/cat", "/dev/shm/cosmicac-e2e-ipc"])
    t.expect(r.exitcode == 0 and r.out == "guest-shm-7d2a\n",
             f"the container does not see the guest's /dev/shm: {r.exitcode} {r.out!r} {r.err[:300]!r}")
    mk = vm.qga.exec(["ipcmk", "-M", "4096"])
    shmid = mk.out.strip().rsplit(" ", 1)[-1]
    t.expect(mk.exitcode == 0 and shmid.isdigit(), f"ipcmk -M in the guest: {mk.out!r} {mk.err!r}")
    seen = vm.qga.exec(["docker", "exec", "inference", "/bin/cat", "/proc/sysvipc/shm"]).out
    vm.qga.exec(["ipcrm", "-m", shmid])
    vm.qga.exec(["rm", "-f", "/dev/shm/cosmicac-e2e-ipc"])
    t.expect(any(line.split()[1:2] == [shmid] for line in seen.splitlines()[1:]),
             f"the container does not see the guest's System V segment {shmid}: {seen[:600]!r}")
    t.step(f"boot 1: --ipc=host: the container reads the guest's /dev/shm and its SysV segment {shmid}")


def segfaulting_elf() -> bytes:
    """A static x86-64 ELF of 124 bytes whose first instruction writes to
    address 0: SIGSEGV in its own code, so the kernel's report names its file."""
    base, ehdr, phdr = 0x400000, 64, 56
    code = bytes([0x31, 0xC0, 0x89, 0x00])  # xor eax, eax; mov [rax], eax
    size = ehdr + phdr + len(code)
    header = struct.pack("<4sBBBBB7xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0,
                         2, 0x3E, 1, base + ehdr + phdr, ehdr, 0, 0, ehdr, phdr, 1, 0, 0, 0)
    program = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x1000)
    return header + program + code


def fault_in_file_named(t, vm, name: str) -> str:
    """A process of the container, with no privilege of its own, dies of a
    segfault in its executable, a file called `name`. The console's text from
    just before, once the kernel's report of it has reached the console."""
    t.expect(len(name.encode()) <= 255 and "/" not in name and "\0" not in name, f"not a file name: {name!r}")
    r = vm.qga.exec(["/usr/bin/tee", "/tmp/cosmicac-e2e-crash"], stdin=segfaulting_elf())
    t.expect(r.exitcode == 0, f"writing the crashing program in the guest: {r.err.strip()}")
    vm.qga.exec(["chmod", "755", "/tmp/cosmicac-e2e-crash"], check=True)
    r = vm.qga.exec(["docker", "cp", "/tmp/cosmicac-e2e-crash", "inference:/crash"])
    t.expect(r.exitcode == 0, f"docker cp into the container: {r.err.strip()}")
    r = vm.qga.exec(["docker", "exec", "inference", "/bin/busybox", "cp", "/crash", "/" + name])
    t.expect(r.exitcode == 0, f"naming the program {name!r} in the container: {r.err.strip()}")
    start = Path(vm.console_log).stat().st_size
    r = vm.qga.exec(["docker", "exec", "inference", "/" + name])
    t.expect(r.exitcode == 139, f"the program did not die of SIGSEGV: exit {r.exitcode} {r.err[:300]!r}")
    first_line = name.split("\n")[0]
    deadline = time.monotonic() + 30
    while True:
        with open(vm.console_log, "rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace")
        if "segfault at" in text and name.split("\n")[-2 if name.endswith("\n") else -1] in text:
            return text
        t.expect(time.monotonic() < deadline, f"the kernel's segfault report of {first_line!r}… never reached "
                 f"the console (console level below KERN_INFO?): {text[-800:]!r}")
        time.sleep(0.5)


def forged_event_fault(t, vm, boot: int) -> None:
    """docs/threat-model.md (the inference container): the kernel prints an
    agent event that a process chose, with the real boot_id, and neither
    `cosmicac-vmi wait` nor the console reader takes it."""
    r = vm.qga.exec(["docker", "exec", "inference", "/bin/cat", "/proc/sys/kernel/random/boot_id"])
    boot_id = r.out.strip()
    t.expect(r.exitcode == 0 and len(boot_id) == 36, f"the container cannot read the boot_id: {r.out!r} {r.err!r}")
    forged = events.CONSOLE_PREFIX + json.dumps(
        {"v": 1, "seq": 999, "boot_id": boot_id, "ts": "2026-01-01T00:00:00.000Z", "mono_ms": 1,
         "phase": "failed", "step": "ready", "status": "failed", "reason": "gpu-xid", "message": "GPU lost"},
        separators=(",", ":"))
    text = fault_in_file_named(t, vm, "x\n" + forged + "\n")
    events.keep_capture(f"{t.name}-forged-event-console.txt", text)  # the bytes the unit tests feed the reader
    lines = [l for l in text.split("\n") if forged in l]
    t.expect(lines and not any(l.startswith(events.CONSOLE_PREFIX) for l in lines),
             f"the kernel printed the forged event at a line's start (printk time off?): {lines}")
    t.expect(all(e.get("seq") != 999 for e in events.console_events(vm.console())[0]),
             "the bed's console reader took the forged event")
    # What keeps the kernel's lines behind their timestamp is out of the container's reach.
    r = vm.qga.exec(["docker", "exec", "-i", "inference", "/bin/busybox", "tee", "/sys/module/printk/parameters/time"],
                    stdin=b"N\n")
    kmsg = vm.qga.exec(["docker", "exec", "inference", "/bin/busybox", "test", "-e", "/dev/kmsg"])
    stamped = vm.qga.exec(["cat", "/sys/module/printk/parameters/time"]).out.strip()
    t.expect(r.exitcode != 0 and kmsg.exitcode != 0 and stamped == "Y",
             f"the container turned printk's time off ({r.exitcode}, {r.err.strip()!r}) or has /dev/kmsg "
             f"({kmsg.exitcode}); time is {stamped!r}")
    kube = KubeWait(t, vm)  # `cosmicac-vmi wait`, reading the whole console: boots 1 and 2 and the forged line
    rc = kube.finish(300)
    kube.stop()
    t.expect(rc == 0 and "ready: container inference" in kube.output() and "gpu-xid" not in kube.transcript(),
             f"cosmicac-vmi wait took the forged event (exit {rc}):\n{kube.transcript()}")
    t.step(f"boot {boot}: a container process faulted in a file named like a failed gpu-xid event of this "
           f"boot: the kernel printed it behind its timestamp ({lines[0][:16]!r}…); cosmicac-vmi wait exit 0 ready")


def forged_xid_fault(t, vm, boot: int) -> None:
    """Issue 52 item 1 (the agent's Xid reader, another branch): the driver's
    words in a file name are not the driver's record; `status` stays ready."""
    name = "x\nNVRM: Xid (PCI:0000:0f:00): 79, pid=1, name=crash, GPU has fallen off the bus.\n"
    fault_in_file_named(t, vm, name)
    r = vm.qga.exec(["/usr/local/bin/cosmicac-bootstrap", "status"])
    t.expect(r.exitcode == 0 and r.out.startswith("ready "),
             f"status after a forged Xid in a file name: exit {r.exitcode}, {r.out.strip()!r}")
    code, st = status_json(t, vm)
    t.expect(code == 0 and (st.get("gpu_health") or {}).get("verdict") == "healthy",
             f"status --json after a forged Xid in a file name: exit {code}, {st}")
    t.step(f"boot {boot}: a container process faulted in a file named like the driver's Xid 79: status ready, "
           "healthy")


class ConsoleFrom:
    """This boot's part of the console file, copied as it grows into its own
    file: what `cosmicac-vmi wait` reads (earlier boots' ready lines stay out)."""

    def __init__(self, vm, work: Path):
        self.src = Path(vm.console_log)
        self.offset = self.src.stat().st_size if self.src.exists() else 0
        self.console_log = work / "boot3-console.log"
        self.console_log.write_bytes(b"")
        self.stop = False
        threading.Thread(target=self._copy, daemon=True).start()

    def _copy(self) -> None:
        while not self.stop:
            with open(self.src, "rb") as f:
                f.seek(self.offset)
                data = f.read()
            if data:
                self.offset += len(data)
                with open(self.console_log, "ab") as out:
                    out.write(data)
            time.sleep(0.2)


def recreated_on_boot(t, vm, config: str, old_id: str) -> tuple[dict, str]:
    """Reboots with `config` injected; returns (inspect, this boot's unit journal)."""
    vm.files["etc/default/docker-bootstrap"] = (0o644, config.encode())
    since = len(vm.serial_lines)
    vm.reboot(inject=True, timeout=600)
    vm.wait_serial(lambda l: '"phase":"ready"' in l or '"phase":"failed"' in l, 900, since=since)
    ready = [l for l in vm.serial_lines[since:] if '"phase":"ready"' in l]
    journal = vm.qga.exec(["journalctl", "-b", "-u", "cosmicac-bootstrap", "--no-pager", "-o", "cat"]).out
    t.expect(ready, "no ready after the config change; unit journal:\n" + journal[-3000:])
    info = t.docker_inspect(vm, "inference")
    t.expect(info is not None, "container inference is gone after the config change")
    t.expect(info["Id"] != old_id, f"container not recreated: same id {old_id[:12]}")
    return info, journal


@scenario("agent-gpu-container", timeout=3000)
def agent_gpu_container(t):
    agent = t.agent
    reg = t.registry()
    cfg = dict(IMG=t.image_ref("v1"), NAME="inference", JOB_TYPE="GPU_CONTAINER", ENVS=envs(SECRET_OLD))
    vm = t.vm(cred_iso=t.cred_iso(reg), config=t.config(**cfg),
              agent_binary=agent, units=[t.agent_unit()])

    # ---- boot 1: GPU container semantics ------------------------------------
    vm.boot()
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    t.step("ready (" + t.wait_ready(vm, "inference", 900) + ")")
    t.metric("boot1_to_ready_s", round(vm.elapsed(), 1))
    info1 = checks.inference_container(t, vm, "inference", "v1", ["MODEL_NAME=tiny-llm", f"API_KEY={SECRET_OLD}"],
                                       mnt=None, gpu=True, tun=True)  # CapAdd, Devices, hook for this id
    t.expect(vm.qga.exec(["docker", "exec", "inference", "/bin/busybox", "test", "-c", "/dev/net/tun"]).exitcode == 0,
             "/dev/net/tun is not a character device inside the container")
    eff = cap_eff(t, vm, "inference")
    t.expect(eff >> CAP_NET_ADMIN & 1, f"NET_ADMIN (bit {CAP_NET_ADMIN}) not in CapEff {eff:#x}")
    t.step(f"boot 1: tun + NET_ADMIN (CapEff {eff:#x}) + hook for {info1['Id'][:12]}")
    code, st = status_json(t, vm)
    health = st.get("gpu_health") or {}
    t.expect(code == 0 and st.get("ready") is True, f"status --json on a ready VM: exit {code}, {st}")
    t.expect(health.get("verdict") == "skipped" and "GPU_COUNT is not set" in health.get("message", ""),
             f"no counts, no nvidia-smi: the check should be skipped and say why: {health}")
    t.step("boot 1: GPU health " + health.get("verdict", "?") + ": " + health.get("message", ""))
    ipc_host_shares(t, vm)

    # ---- boot 2: IMG v1 -> v2 and one ENVS value, the counts with a stand-in nvidia-smi
    cfg["IMG"] = t.image_ref("v2")
    cfg["ENVS"] = envs(SECRET_NEW)
    cfg.update(gpu_standin.config_keys())
    cfg["READY_FAILURE_THRESHOLD"] = "10"
    vm.files.update(gpu_standin.files("fabric-wait"))
    t0 = time.monotonic()
    since2 = len(vm.serial_lines)
    info2, journal2 = recreated_on_boot(t, vm, t.config(**cfg), info1["Id"])
    t.metric("boot2_to_ready_s", round(time.monotonic() - t0, 1))
    checks.inference_container(t, vm, "inference", "v2", ["MODEL_NAME=tiny-llm", f"API_KEY={SECRET_NEW}"],
                               mnt=None, gpu=True, tun=True)
    changed = [l for l in journal2.splitlines() if "differs in" in l]
    t.expect(changed and "Image" in changed[0].split("differs in", 1)[1],
             "journal does not name the changed field Image: " + (changed[0] if changed else journal2[-2000:]))
    t.expect("API_KEY" in changed[0], "journal does not name the changed variable API_KEY: " + changed[0])
    t.expect("MODEL_NAME" not in changed[0], f"an unchanged variable is named as changed: {changed[0]}")
    t.step("boot 2: " + changed[0].strip())
    events2 = [json.loads(l) for l in vm.serial_lines[since2:] if l.startswith("{")]
    waits = [i for i, e in enumerate(events2) if e.get("step") == "container"
             and e.get("message", "").startswith("GPU health waiting: GPU 2 (00000000:0C:00.0) In Progress")]
    ready_at = [i for i, e in enumerate(events2) if e.get("phase") == "ready"]
    t.expect(waits and ready_at and waits[0] < ready_at[0],
             f"no GPU health waiting event before ready: {[e.get('message') for e in events2][-20:]}")
    code, st = status_json(t, vm)
    health = st.get("gpu_health") or {}
    t.expect(health.get("verdict") == "healthy" and len(health.get("gpus", [])) == 8
             and all(g.get("fabric") == "Completed Success" and g.get("ecc") == "ok" for g in health["gpus"])
             and health.get("ib_ports") == [{"device": "mlx5_0", "port": 1, "state": "4: ACTIVE"}],
             f"status --json gpu_health after a healthy check: {health}")
    t.step(f"boot 2: fabric In Progress -> {len(waits)} waiting event(s) -> ready; status --json healthy, 8 GPUs")
    forged_event_fault(t, vm, 2)
    forged_xid_fault(t, vm, 2)

    # By hand, in the same boot: each failure into the state file and the
    # container stopped; the healthy look starts it again (the same container).
    gpu_standin.set_mode(vm, "one-missing")
    said = [gpu_check_by_hand(t, vm, "gpu-count")]
    gpu_standin.set_mode(vm, "fabric-failed")
    said.append(gpu_check_by_hand(t, vm, "gpu-fabric"))
    gpu_standin.set_mode(vm, "healthy")
    gpu_standin.set_ib_state(vm, "1: DOWN")
    said.append(gpu_check_by_hand(t, vm, "ib-link"))
    gpu_standin.set_ib_state(vm, "4: ACTIVE")
    said.append(gpu_check_by_hand(t, vm, None))
    # An Xid after ready: the next `status` records it at once, whatever the
    # threshold (a GPU that needs a reset does not come back by itself).
    gpu_standin.inject_xid(vm)
    r = vm.qga.exec(["/usr/local/bin/cosmicac-bootstrap", "status"])
    t.expect(r.exitcode == 1 and r.out.startswith("failed reason=gpu-xid step=ready message=\"Xid 79 at "),
             f"status after an Xid since ready: exit {r.exitcode}, {r.out.strip()!r}")
    said.append("status: " + r.out.strip())
    said.append(gpu_check_by_hand(t, vm, "gpu-xid", phase="failed"))
    t.expect(t.docker_inspect(vm, "inference")["Id"] == info2["Id"], "the by-hand check replaced the container")
    for line in said:
        t.step("by hand: " + line[:140])
    # The Xid stays in this boot's kernel log, so no check passes again until a
    # reboot: start the container as an operator would after resetting the GPU,
    # so that dockerd's restart policy starts it at boot 3 (before the check).
    r = vm.qga.exec(["docker", "start", "inference"], timeout=120)
    t.expect(r.exitcode == 0, f"docker start inference after the by-hand checks: {r.err.strip()}")

    # ---- boot 3: a GPU missing: failed with gpu-count, as the host sees it -----
    vm.files.update(gpu_standin.files("one-missing"))
    vm.shutdown()
    console = ConsoleFrom(vm, t.work)
    since3 = len(vm.serial_lines)
    vm.boot(inject=True)
    kube = KubeWait(t, console)  # `cosmicac-vmi wait inference` on this boot's console through the stand-in
    line = vm.wait_serial(lambda l: '"phase":"failed"' in l or '"phase":"ready"' in l, 900, since=since3)
    ev = json.loads(line)
    t.expect(ev.get("phase") == "failed" and ev.get("reason") == "gpu-count",
             f"expected failed with gpu-count, got {line}")
    t.expect("expected 8 GPUs, nvidia-smi lists 7" in ev.get("message", ""), f"the failure does not say so: {line}")
    # Restart=on-failure may start a new run 20 s later; while it is before its
    # own failure, status says running: ask again.
    deadline = time.monotonic() + 90
    code, st = status_json(t, vm)
    while st.get("phase") != "failed" and time.monotonic() < deadline:
        time.sleep(1)
        code, st = status_json(t, vm)
    t.expect(code == 1 and st.get("phase") == "failed" and st.get("reason") == "gpu-count"
             and (st.get("gpu_health") or {}).get("reason") == "gpu-count",
             f"status --json after gpu-count: exit {code}, {st}")
    rc = kube.finish(180)
    console.stop = True
    t.expect(rc == 1, f"cosmicac-vmi wait exited {rc}, expected 1:\n{kube.transcript()}")
    t.expect("bootstrap failed: reason=gpu-count step=container message=" in kube.stderr,
             f"cosmicac-vmi wait did not name reason gpu-count:\n{kube.transcript()}")
    t.step("boot 3: failed gpu-count; status --json and cosmicac-vmi wait say so")

    # dockerd's restart policy started boot 2's container before the check: the
    # failed check stopped it, and it stays stopped when dockerd restarts.
    events3 = [l for l in vm.serial_lines[since3:] if l.startswith("{")]
    t.expect(any("container inference stopped: the GPU health check failed (gpu-count)" in l for l in events3),
             "no event says the container was stopped: " + "\n".join(events3[-15:]))
    t.expect(not container_running(t, vm, "inference"), "the container runs on GPUs the check failed")
    vm.qga.exec(["systemctl", "stop", "cosmicac-bootstrap.service"], timeout=120)  # no more restarts of the run
    r = vm.qga.exec(["systemctl", "restart", "docker.service"], timeout=180)
    t.expect(r.exitcode == 0, f"systemctl restart docker: {r.err.strip()}")
    time.sleep(10)
    info = t.docker_inspect(vm, "inference")
    t.expect(info is not None and not info["State"]["Running"] and info["Id"] == info2["Id"],
             f"after dockerd restarted, the held container: {info and info['State']}")
    gpu_standin.set_mode(vm, "healthy")
    said = gpu_check_by_hand(t, vm, None, phase="failed")
    t.expect(t.docker_inspect(vm, "inference")["Id"] == info2["Id"], "the by-hand check replaced the container")
    # Started again, it is boot 2's container as boot 2 made it (image, ENVS, GPUs, TUN).
    checks.inference_container(t, vm, "inference", "v2", ["MODEL_NAME=tiny-llm", f"API_KEY={SECRET_NEW}"],
                               mnt=None, gpu=True, tun=True)
    t.expect((status_json(t, vm)[1].get("gpu_health") or {}).get("verdict") == "healthy",
             "boot 3 (the Xid was boot 2's): GPU health is not healthy")
    t.step("boot 3: the container stopped by the failed check, still stopped after dockerd restarted; "
           "by hand: " + said[:60] + ", container running again")
    # The whole journal, every boot and every field (not only MESSAGE): no ENVS value.
    everything = vm.qga.exec(["journalctl", "--no-pager", "-o", "export"], timeout=120).out
    t.expect(len(everything) > 10000, "journal export suspiciously short")
    for secret in (SECRET_OLD, SECRET_NEW):
        t.expect(secret not in everything, f"an ENVS value ({secret[:9]}…) appears in the guest's journal")
    t.step("the whole journal (3 boots, every field): no ENVS value")
