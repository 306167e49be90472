"""Crash safety. (a) The data disk carries OUR GPT partition (cosmicac-data,
Linux filesystem type) and no filesystem, exactly what a crash between
partitioning and mkfs leaves: the agent formats that partition (same
partition, no new table) and mounts it. (b) The agent is SIGKILLed in the
middle of pulling a large image; after a reboot it converges: ready, with the
container running that image."""

from bed import checks, events
from bed.catalog import scenario
from bed.disks import our_partition_without_fs, partition_guid

UNIT = "cosmicac-bootstrap.service"


@scenario("agent-crash-resume", timeout=1800)
def agent_crash_resume(t):
    agent = t.agent
    reg = t.registry(tags=())
    reg.push_big_image("big", 64 << 20)
    disk = our_partition_without_fs(t.work / "data.raw", 120)
    guid = partition_guid(disk)
    vm = t.vm(data_disk=disk, data_serial="pvc-data", cred_iso=t.cred_iso(reg),
              config=t.config(MNT="/data", IMG=t.image_ref("big"), NAME="inference"),
              agent_binary=agent, units=[t.agent_unit()])
    vm.boot()
    # Not vm.wait_booted(): multi-user.target waits for the agent's READY=1
    # (Type=notify), i.e. after the pull we want to interrupt.

    # (a) the disk step resumes on our half-made partition.
    disk_end = events.wait_event(vm, lambda e: e.get("step") == "disk" and e.get("status") in ("done", "failed"), 900)
    t.expect(disk_end["status"] == "done", f"disk step failed: {disk_end.get('reason')}: {disk_end.get('message')}")
    t.metric("boot_to_disk_done_s", round(vm.elapsed(), 1))
    vm.qga.wait_ready(300)
    src = checks.data_disk_mounted(t, vm, "/data", "pvc-data")
    t.expect(src == "/dev/vdb1", f"/data is mounted from {src}, not our partition /dev/vdb1")
    got = vm.qga.exec(["lsblk", "-n", "-o", "PARTUUID,PARTLABEL,LABEL", src]).out.split()
    t.expect(got[0].lower() == guid, f"{src} has PARTUUID {got[0]}: the partition table was rewritten (was {guid})")
    t.expect(got[1:] == ["cosmicac-data", "cosmicac-data"], f"partition/filesystem labels: {got[1:]}")
    plan = vm.qga.exec(["journalctl", "-b", "-u", UNIT, "--no-pager", "-o", "cat"]).out
    t.expect("no filesystem yet" in plan, "the journal's disk plan does not say it resumes our partition")
    t.step("(a) our partition without a filesystem: formatted in place and mounted")

    # (b) SIGKILL during the pull.
    since_pull = len(vm.serial_lines)
    pull = events.wait_event(vm, lambda e: e.get("step") == "pull" and e.get("status") in ("started", "progress", "done"),
                             900)
    t.expect(pull["status"] != "done", "the pull finished before it could be interrupted")
    events.wait_event(vm, lambda e: e.get("step") == "pull" and e.get("status") == "progress", 120, since_pull)
    r = vm.qga.exec(["/bin/sh", "-c", f'p=$(systemctl show -P MainPID {UNIT}); [ "$p" -gt 0 ] && kill -9 "$p" '
                                      '&& echo "$p"'])
    t.expect(r.exitcode == 0, f"could not SIGKILL the agent: {r.out} {r.err}")
    t.step(f"SIGKILLed the agent (pid {r.out.strip()}) during the pull")
    run1 = events.this_boot(vm)
    t.expect("done" not in events.statuses(run1, "pull"), "the pull had already finished at the kill")
    t.expect(t.docker_inspect(vm, "inference") is None, "a container existed before the kill")

    since = len(vm.serial_lines)
    vm.reboot(timeout=900)
    final = events.expect_final(t, vm, since=since, metric="second_boot_to_ready_s", what="after the kill and reboot")
    run2 = events.this_boot(vm, since)
    t.step("second boot: " + events.summary(run2))
    info = checks.inference_container(t, vm, "inference", "big", [])
    t.expect(final["container"]["id"] == info["Id"], "ready names another container than docker inspect")
    size = vm.qga.exec(["docker", "exec", "inference", "/bin/ls", "-l", "/blob/random.bin"]).out.split()
    t.expect(len(size) > 4 and size[4] == str(64 << 20), f"the big layer is not complete in the container: {size}")
    checks.data_disk_mounted(t, vm, "/data", "pvc-data")
    rc, line = events.status_cmd(vm)
    t.expect(rc == 0 and line.startswith("ready "), f"status exited {rc}: {line}")
