"""JOB_TYPE=GPU_CONTAINER: the container gets /dev/net/tun and NET_ADMIN (in
its effective capabilities) and the NVIDIA hook runs for it. Then a changed
config on the next boot recreates the container: the image (v1 -> v2, the
journal names Image), then one ENVS variable (the journal names the variable,
never its value). Three boots."""

import time

from bed import checks
from bed.catalog import scenario

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


@scenario("agent-gpu-container", timeout=2400)
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

    # ---- boot 2: IMG v1 -> v2 --------------------------------------------------
    cfg["IMG"] = t.image_ref("v2")
    t0 = time.monotonic()
    info2, journal2 = recreated_on_boot(t, vm, t.config(**cfg), info1["Id"])
    t.metric("boot2_to_ready_s", round(time.monotonic() - t0, 1))
    checks.inference_container(t, vm, "inference", "v2", [f"API_KEY={SECRET_OLD}"], mnt=None, gpu=True, tun=True)
    changed = [l for l in journal2.splitlines() if "differs in" in l]
    t.expect(changed and "Image" in changed[0].split("differs in", 1)[1],
             "journal does not name the changed field Image: " + (changed[0] if changed else journal2[-2000:]))
    t.step("boot 2: " + changed[0].strip())

    # ---- boot 3: one ENVS value changes ----------------------------------------
    cfg["ENVS"] = envs(SECRET_NEW)
    info3, journal3 = recreated_on_boot(t, vm, t.config(**cfg), info2["Id"])
    checks.inference_container(t, vm, "inference", "v2", ["MODEL_NAME=tiny-llm", f"API_KEY={SECRET_NEW}"],
                               mnt=None, gpu=True, tun=True)
    changed = [l for l in journal3.splitlines() if "differs in" in l]
    t.expect(changed and "API_KEY" in changed[0], "journal does not name the changed variable API_KEY: "
             + (changed[0] if changed else journal3[-2000:]))
    t.expect("MODEL_NAME" not in changed[0], f"an unchanged variable is named as changed: {changed[0]}")
    t.step("boot 3: " + changed[0].strip())
    # The whole journal, every boot and every field (not only MESSAGE).
    everything = vm.qga.exec(["journalctl", "--no-pager", "-o", "export"], timeout=120).out
    t.expect(len(everything) > 10000, "journal export suspiciously short")
    for secret in (SECRET_OLD, SECRET_NEW):
        t.expect(secret not in everything, f"an ENVS value ({secret[:9]}…) appears in the guest's journal")
