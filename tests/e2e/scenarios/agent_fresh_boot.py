"""First boot of a fresh VM with the agent, then a reboot: blank 120 GiB NVMe
data disk named by DATA_DISK_SERIAL next to a LARGER blank virtio decoy, with
a root disk that is itself over 100 GiB (the original script would have taken
the decoy: the largest disk >= 100 GiB), and the decoy never written; a decoy
CD-ROM labelled cfgdata first (like a KubeVirt ConfigMap disk), so the
credential ISO (also cfgdata) is sr1; an ENVS holding every value the original
script mangled or executed; v1 image. The example the other agent scenarios
follow. (Issue 36 folded agent-nvme-serial's boot into this one: its disks and
checks are here.)"""

from bed import checks, events
from bed.disks import allocated_bytes, head_is_zero, sparse_disk
from bed.kube_standin import KubeWait
from bed.catalog import scenario

# The original script's failures: JS-style objects with a URL (":" and "//"),
# a value with a space, bare words, a quoted ";" inside an object, and a
# command substitution it would have eval'ed.
ENVS = ('CFG={url:"http://h:8080/x",n:5};MSG=hello world;J={name:llama,max_tokens:512};'
        'S={a:"x;y"};X=1 $(touch /tmp/pwned)')
EXPECTED_ENV = ['CFG={"url":"http://h:8080/x","n":5}', "MSG=hello world",
                'J={"name":"llama","max_tokens":512}', 'S={"a":"x;y"}', "X=1 $(touch /tmp/pwned)"]
IMAGE_ENV = ("PATH=", "COSMICAC_IMAGE_TAG=")  # the test image's own Env
FIRST_BOOT_ORDER = [("config", "done"), ("docker", "started"), ("docker", "done"),
                    ("credentials", "started"), ("credentials", "done"), ("login", "started"),
                    ("login", "done"), ("pull", "started"), ("pull", "done"), ("container", "started"),
                    ("container", "done"), ("ready", "done")]
DISK_ORDER = [("config", "done"), ("disk", "started"), ("disk", "done"), ("container", "started")]


def expect_decoy_untouched_in_guest(t, vm) -> None:
    """The disks as the guest sees them: root >= 100 GiB, the decoy larger than
    the data disk, and the decoy without partitions or any signature."""
    sizes = dict(line.split() for line in vm.qga.exec(
        ["lsblk", "-b", "-d", "-n", "-o", "SERIAL,SIZE"]).out.splitlines() if len(line.split()) == 2)
    root_src = vm.qga.exec(["findmnt", "-n", "-o", "SOURCE", "/"]).out.strip()
    t.step(f"disks by serial: {sizes}; / on {root_src}")
    t.expect(int(sizes.get("cosmicac-root", 0)) >= 100 << 30, f"root disk is not ≥ 100 GiB: {sizes}")
    t.expect(int(sizes.get("pvc-decoy", 0)) > int(sizes.get("pvc-data", 0)) > 0,
             f"the decoy is not larger than the data disk: {sizes}")
    names = dict(line.split() for line in vm.qga.exec(
        ["lsblk", "-d", "-n", "-o", "SERIAL,NAME"]).out.splitlines() if len(line.split()) == 2)
    decoy_dev = names.get("pvc-decoy", "")
    t.expect(decoy_dev.startswith("vd"), f"decoy disk not found in the guest ({decoy_dev!r})")
    kids = vm.qga.exec(["lsblk", "-n", "-o", "NAME", f"/dev/{decoy_dev}"]).out.split()
    t.expect(kids == [decoy_dev], f"the decoy /dev/{decoy_dev} got partitions: {kids}")
    sig = vm.qga.exec(["blkid", "-p", f"/dev/{decoy_dev}"])
    t.expect(sig.exitcode == 2 and not sig.out.strip(), f"the decoy carries a signature: {sig.out.strip()}")


def expect_bed_as_promised(t, vm) -> None:
    """What the bed promises every agent scenario (bed-selftest proves it without
    the agent; tests/run does not run that): the guest reaches nothing on the
    host outside guestfwd, the fake NVIDIA nodes exist, cloud-init is off
    without a seed."""
    out = vm.qga.exec(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5",
                       "http://10.0.2.2:1/"]).out
    t.expect(out == "000", f"guest reached the host outside guestfwd ({out!r})")
    nodes = vm.qga.exec(["stat", "-c", "%n %t:%T", "/dev/nvidiactl", "/dev/nvidia0"]).out.split("\n")
    t.expect(nodes[:2] == ["/dev/nvidiactl c3:ff", "/dev/nvidia0 c3:0"], f"fake NVIDIA nodes: {nodes}")
    t.expect(vm.qga.exec(["test", "-e", "/run/cloud-init/disabled"]).exitcode == 0,
             "cloud-init not disabled without a seed")


@scenario("agent-fresh-boot", timeout=1800)
def agent_fresh_boot(t):
    agent = t.agent  # fails first, clearly, if there is no usable agent binary
    reg = t.registry()
    decoy = t.iso("decoy.iso", "cfgdata", {"app.properties": b"log.level=debug\n",
                                           "DOCKER_NOTE": b"not a credential\n"})
    decoy_disk = sparse_disk(t.work / "decoy.raw", 200 << 30)
    vm = t.vm(extra_disks=[(decoy_disk, "virtio", "pvc-decoy")], root_size_gib=110,
              data_disk=t.data_disk(120), data_bus="nvme", data_serial="pvc-data",
              extra_cdroms=[decoy], cred_iso=t.cred_iso(reg),
              config=t.config(MNT="/data", IMG=t.image_ref("v1"), NAME="inference", ENVS=ENVS,
                              DATA_DISK_SERIAL="pvc-data"),
              agent_binary=agent, units=[t.agent_unit()])
    vm.boot()
    kube = KubeWait(t, vm)  # `cosmicac-vmi wait inference` follows this boot's console through the stand-in
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    final = events.expect_final(t, vm, what="first boot")
    sr = vm.qga.exec(["lsblk", "-n", "-o", "NAME,LABEL", "/dev/sr0", "/dev/sr1"]).out.split()
    t.expect(sr == ["sr0", "cfgdata", "sr1", "cfgdata"], f"CD-ROMs are not two cfgdata ISOs: {sr}")

    # The readiness port: every step, in graph order, no failure, one run.
    run1 = events.this_boot(vm)
    events.expect_seq_increasing(t, run1)
    events.expect_order(t, run1, FIRST_BOOT_ORDER)
    events.expect_order(t, run1, DISK_ORDER)
    t.expect(all(e.get("status") != "failed" for e in run1), f"a step failed: {events.summary(run1)}")
    last = events.step_events(run1)[-1]
    t.expect(last["step"] == "ready" and last.get("phase") == "ready",
             f"the last step event is {last['step']}:{last.get('status')}, not ready")

    src = checks.data_disk_mounted(t, vm, "/data", "pvc-data")
    t.expect(src == "/dev/nvme0n1p1", f"/data is mounted from {src}, expected /dev/nvme0n1p1")
    expect_decoy_untouched_in_guest(t, vm)
    info = checks.inference_container(t, vm, "inference", "v1", EXPECTED_ENV)
    ours = sorted(e for e in info["Config"]["Env"] if not e.startswith(IMAGE_ENV))
    t.expect(ours == sorted(EXPECTED_ENV), f"container Env is not exactly ENVS: {ours}")
    t.expect(final["container"]["id"] == info["Id"],
             f"ready names container {final['container']['id'][:12]}, docker inspect says {info['Id'][:12]}")
    t.expect(vm.qga.exec(["test", "-e", "/tmp/pwned"]).exitcode == 1, "/tmp/pwned exists in the guest: ENVS ran")
    r = vm.qga.exec(["docker", "exec", "inference", "/bin/ls", "/tmp/pwned"])
    t.expect(r.exitcode != 0 and "No such file" in r.err + r.out, f"/tmp/pwned in the container: {r.out}{r.err}")

    rc, line = events.status_cmd(vm)
    t.expect(rc == 0 and line.startswith("ready "), f"`cosmicac-bootstrap status` exited {rc}: {line}")
    t.expect(f"id={info['Id'][:12]}" in line, f"status does not name the container: {line}")
    expect_bed_as_promised(t, vm)
    events.scan_for_secret(t, vm, reg.token, control="/dev/sr1")
    t.step("first boot: ENVS exact, nothing executed, events in graph order, token nowhere in the guest")

    # `cosmicac-vmi wait`, reading the same console through the
    # (stand-in) API: each step in order, the pull's activity, exit 0 at ready.
    rc = kube.finish(120)
    out = kube.output()
    t.expect(rc == 0, f"cosmicac-vmi wait exited {rc}, expected 0:\n{kube.transcript()}")
    t.expect("agent events: the serial console log of pod" in out, f"wait does not name its source:\n{out}")
    shown = [l.split("] ", 1)[1].split(" ")[0].rstrip(":") for _, l in kube.lines if l.startswith("agent [")]
    t.expect(shown[:1] == ["config"],
             f"wait's first agent step is not config: {shown}")
    for step in ("disk", "docker", "credentials", "login", "pull", "container"):
        t.expect(step in shown, f"wait did not show the {step} step: {shown}")
    t.expect("agent [6/8] pull: extracting" in out, f"wait did not show the pull extracting:\n{out}")
    t.expect(f"ready: container inference {info['Id'][:12]} (agent ready, VMI Ready)" in out,
             f"wait's last line does not name the container:\n{kube.transcript()}")
    t.expect(reg.token not in kube.transcript(), "the token appears in cosmicac-vmi wait's output")
    events.keep_capture(f"{t.name}-wait.txt", kube.transcript())
    t.step(f"cosmicac-vmi wait: exit 0 at ready, {len(kube.lines)} lines")

    # The serial console (what KubeVirt logs): the same run, in order, ending
    # ready; pull progress says downloading, then extracting.
    con1 = events.expect_console_mirror(t, vm, run1, secret=reg.token)
    events.expect_seq_increasing(t, con1)
    events.expect_order(t, con1, FIRST_BOOT_ORDER)
    events.expect_order(t, con1, DISK_ORDER)
    last_con = events.step_events(con1)[-1]
    t.expect(last_con["step"] == "ready" and last_con.get("phase") == "ready",
             f"the console's last step line is {last_con['step']}:{last_con.get('status')}, not ready")
    pulls = [e for e in con1 if e.get("step") == "pull" and e.get("status") == "progress"]
    activities = [e.get("activity") for e in pulls]
    t.expect(pulls and all(a in ("downloading", "extracting") for a in activities),
             f"console pull progress without an activity: {activities}")
    t.expect("extracting" in activities, f"no pull progress line while extracting: {activities}")
    t.metric("console_lines_first_boot", len(con1))
    t.metric("console_pull_progress_lines", len(pulls))
    t.step(f"console: {len(con1)} agent lines ending ready; pull activities {sorted(set(activities))}; "
           f"kept as {events.keep_console(t, vm)}")

    # Second boot, same disks: converges without the registry, same container.
    # This is what a VirtualMachine's restart is (issue 42: KubeVirt makes a new
    # VMI, a new QEMU, on the root disk of the VM's dataVolumeTemplates entry and
    # the same PVC): nothing imported, nothing asked of the registry.
    vm.qga.exec(["/bin/sh", "-c", "echo written-before-reboot > /data/marker && sync"], check=True)
    machine_id = vm.qga.read_file("/etc/machine-id").decode().strip()
    root_inode, reg_pos = vm.root.stat().st_ino, reg.log_size()
    since = len(vm.serial_lines)
    vm.reboot(timeout=900)
    final2 = events.expect_final(t, vm, since=since, metric="second_boot_to_ready_s", what="second boot")
    t.metric("second_boot_agent_ready_ms", final2["duration_ms"])
    run2 = events.this_boot(vm, since)
    t.expect(run2 and run2[0]["boot_id"] != run1[0]["boot_id"], "second boot reports the first boot's id")
    for step in ("credentials", "login", "pull"):
        t.expect(events.statuses(run2, step) == ["skipped"],
                 f"second boot: {step} was {events.statuses(run2, step)}, expected only skipped")
    info2 = t.docker_inspect(vm, "inference")
    t.expect(info2 is not None and info2["State"]["Running"], "container not running after the reboot")
    t.expect(info2["Id"] == info["Id"], f"container recreated: {info['Id'][:12]} -> {info2['Id'][:12]}")
    t.expect(final2["container"]["id"] == info["Id"], "second ready names another container")
    checks.data_disk_mounted(t, vm, "/data", "pvc-data")
    marker = vm.qga.exec(["cat", "/data/marker"]).out.strip()
    t.expect(marker == "written-before-reboot", f"/data/marker after reboot: {marker!r}")
    rc, line = events.status_cmd(vm)
    t.expect(rc == 0 and line.startswith("ready "), f"second boot: status exited {rc}: {line}")
    con2 = events.expect_console_mirror(t, vm, run2, secret=reg.token)
    t.expect([events.statuses(con2, s) for s in ("credentials", "login", "pull")] == [["skipped"]] * 3,
             f"second boot's console: {events.summary(con2)}")
    t.expect(events.step_events(con2)[-1].get("phase") == "ready", f"second boot's console: {events.summary(con2)}")
    events.keep_console(t, vm)
    contact = reg.requests(reg_pos)
    t.expect(contact == [], f"second boot (a VM restart) asked the registry: {contact[:5]}")
    t.expect(vm.root.stat().st_ino == root_inode and
             vm.qga.read_file("/etc/machine-id").decode().strip() == machine_id,
             "second boot: not on the first boot's root disk (another file or machine-id)")
    t.step(f"second boot (a VM restart): same root disk, same container {info['Id'][:12]}, "
           "no registry request at all, /data kept")

    expect_decoy_untouched_in_guest(t, vm)
    vm.shutdown()
    t.expect(allocated_bytes(decoy_disk) == 0,
             f"the decoy image has {allocated_bytes(decoy_disk)} allocated bytes: something wrote to it")
    t.expect(head_is_zero(decoy_disk), "the decoy's first MiB is not zero")
    t.step("two boots: NVMe disk chosen by serial; the larger decoy never written (0 allocated bytes)")
