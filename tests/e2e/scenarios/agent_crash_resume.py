"""Crash safety. (a) The data disk carries OUR GPT partition (cosmicac-data,
Linux filesystem type) and no filesystem, exactly what a crash between
partitioning and mkfs leaves: the agent formats that partition (same
partition, no new table) and mounts it. (b) The agent is SIGKILLed in the
middle of pulling a large image; after a reboot it converges: ready, with the
container running that image.

Growth (issue 44), folded into the same boots. (c) Between the two boots the
data disk grows 120 → 150 GiB and is left as a grow killed before resize2fs
leaves it (backup GPT at the end, partition extended, ext4 not grown): the
second boot's disk unit grows the ext4 only, the main run says "grew /data
from … to …", the file written before is intact. (d) Live, in the second boot:
QMP block_resize to 200 GiB (the guest's virtio capacity change, as KubeVirt's
online expansion gives it); the kernel's resize uevent makes udev start the
grow unit (units/60-cosmicac-bootstrap-grow.rules), whose plan shows the
growth from → to and which grows GPT, partition and ext4 by itself with the
container running, says "grew /data from … to …" on the readiness port and
leaves `status` ready. After shutdown, e2fsck -fn on the host finds the
filesystem clean."""

import json
import time

from bed import checks, events
from bed.catalog import scenario
from bed.scenario import REPO_DIR
from bed.disks import (e2fsck_partition, grow_disk, grow_partition_only, our_partition_without_fs,
                       partition_guid)

UNIT = "cosmicac-bootstrap.service"
GROW_UNIT = "cosmicac-bootstrap-grow.service"
GROW_RULES = "60-cosmicac-bootstrap-grow.rules"


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
    # The live growth's unit and udev rule, where `install` puts them.
    vm.add_unit(GROW_UNIT, (REPO_DIR / "units" / GROW_UNIT).read_text(), enable=False)
    vm.files[f"etc/udev/rules.d/{GROW_RULES}"] = (0o644, (REPO_DIR / "units" / GROW_RULES).read_bytes())
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

    kept = vm.qga.exec(["/bin/sh", "-c", "head -c 1048576 /dev/urandom > /data/kept.bin && sync && "
                                         "sha256sum /data/kept.bin"], check=True).out.split()[0]

    since = len(vm.serial_lines)
    vm.shutdown()
    # (c) The disk grew while the VM was off, and a grow was killed before resize2fs.
    grow_disk(disk, 150)
    grow_partition_only(disk)
    vm.boot()
    vm.wait_booted(900)
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
    expect_grown(t, vm, since, kept)

    # (d) Live: the disk grows under the running VM; the disk unit, run again, follows.
    live_growth(t, vm)
    vm.shutdown()
    fsck = e2fsck_partition(disk)
    t.expect(fsck.returncode == 0, f"e2fsck -fn after the growth exited {fsck.returncode}: {fsck.stdout}{fsck.stderr}")
    t.expect(partition_guid(disk) == guid, "the partition's GUID changed: the table was rewritten, not grown")
    t.step("host: e2fsck -fn clean on the grown filesystem, the same partition")


def df_bytes(vm, path: str) -> int:
    return int(vm.qga.exec(["df", "-B1", "--output=size", path], check=True).out.split()[-1])


def unit_log(vm) -> str:
    return vm.qga.exec(["journalctl", "-b", "-u", UNIT, "--no-pager", "-o", "cat"]).out


def expect_grown(t, vm, since: int, kept: str) -> None:
    """(c): the ext4 grown to the partition, nothing else redone, said to the host."""
    size = df_bytes(vm, "/data")
    t.expect(size > 145 << 30, f"/data is {size} bytes after the disk grew to 150 GiB")
    log = unit_log(vm)
    t.expect("growing the ext4 on /dev/vdb1" in log and "growing the GPT" not in log,
             f"the disk step did not resume at resize2fs alone:\n{log}")
    said = [e.get("message", "") for e in events.this_boot(vm, since)
            if e.get("step") == "disk" and e.get("status") == "progress"]
    grew = [m for m in said if m.startswith("grew /data from ")]
    t.expect(grew and grew[0].endswith(" to 150.0 GiB"), f"no growth progress event (from → to): {said}")
    now = vm.qga.exec(["sha256sum", "/data/kept.bin"]).out.split()
    t.expect(now and now[0] == kept, f"/data/kept.bin changed across the growth: {now}")
    t.step(f"(c) interrupted grow finished at boot: {grew[0]}; df {size >> 30} GiB; file intact")


def live_growth(t, vm) -> None:
    """(d): QMP block_resize; udev starts the grow unit, which grows /data while the container runs."""
    since = len(vm.serial_lines)
    started = time.monotonic()
    vm.qmp.command("block_resize", {"device": "data", "size": 200 << 30})
    grew = events.wait_event(vm, lambda e: e.get("step") == "disk" and e.get("status") == "progress"
                             and e.get("message", "").startswith(("grew /data ", "growth refused")), 600, since)
    took = time.monotonic() - started
    t.expect(grew["message"] == "grew /data from 150.0 GiB to 200.0 GiB", f"the live growth said: {grew['message']}")
    t.metric("live_grow_150_to_200_gib_s", round(took, 1))
    state = events.wait_unit_substate(vm, GROW_UNIT, ("dead", "failed"), 120)
    result = vm.qga.exec(["systemctl", "show", "-P", "Result", GROW_UNIT]).out.strip()
    t.expect(state == "dead" and result == "success", f"the grow unit ended {state}, result {result}")
    log = vm.qga.exec(["journalctl", "-b", "-u", GROW_UNIT, "--no-pager", "-o", "cat"]).out
    t.expect("the disk has grown: 150.0 GiB → " in log and "growing the GPT of /dev/vdb" in log,
             f"the grow unit's journal does not show the plan's growth and the GPT's:\n{log}")
    size = df_bytes(vm, "/data")
    t.expect(size > 195 << 30, f"/data is {size} bytes after the live growth to 200 GiB")
    info = t.docker_inspect(vm, "inference")
    t.expect(info is not None and info["State"]["Running"], "the container stopped during the live growth")
    rc, line = events.status_cmd(vm)
    t.expect(rc == 0 and line.startswith("ready "), f"status after the live growth exited {rc}: {line}")
    live = events.this_boot(vm, since)
    t.expect(not [e for e in live if e.get("status") == "failed"], "the live growth published a failure")
    said = [e.get("message") for e in live if e.get("step") == "disk"]
    t.expect(said == [grew["message"]], f"the live growth said more or less than its outcome: {said}")
    # The console (what a cluster's host reads) shows it too, after ready, in the same boot.
    deadline = time.monotonic() + 30
    while not [e for e in events.console_this_boot(vm)[0] if e.get("message") == grew["message"]]:
        t.expect(time.monotonic() < deadline, "the console never showed the live growth")
        time.sleep(1)
    t.step(f"(d) live: block_resize → udev → {GROW_UNIT}: {grew['message']} in {took:.1f} s "
           f"(df {size >> 30} GiB), container running, status ready")
