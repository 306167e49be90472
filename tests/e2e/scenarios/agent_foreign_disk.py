"""The disk named by DATA_DISK_SERIAL holds an LVM physical volume: the agent
refuses it (disk-has-foreign-content, naming the disk), creates no container,
and leaves every byte as it was. The original script would have partitioned
and formatted it.

Same boot, second disk: DATA_DISK_SERIAL is switched to a disk whose primary
GPT was zeroed while its backup GPT and an ext4 with a file at 1 MiB remain
(blkid sees nothing on the whole disk). The restarted agent refuses it too,
says why on the readiness port, and leaves it byte-identical; before the fix
it took that disk for blank and wrote a GPT over it.

Growth (issue 44): the LVM disk has grown (256 → 512 MiB, its PV short of the
end) and is still refused untouched. A third run, same boot, is pointed at a
grown disk whose partition carries our name and our ext4 under another type
(swap): refused with disk-grow, naming the type, byte-identical."""

import json

from bed import events
from bed.disks import file_sha256, grown_disk_with_foreign_type, lvm_pv_disk, zapped_gpt_disk
from bed.catalog import scenario

REASON = "disk-has-foreign-content"
UNIT = "cosmicac-bootstrap.service"


@scenario("agent-foreign-disk", timeout=1800)
def agent_foreign_disk(t):
    agent = t.agent
    reg = t.registry(tags=("v1",))
    disk = lvm_pv_disk(t.work / "lvm.raw", 256)
    with open(disk, "r+b") as f:
        f.truncate(512 << 20)  # the PVC grew: the PV no longer reaches the end
    before = file_sha256(disk)
    typed = grown_disk_with_foreign_type(t.work / "typed.raw")
    typed_before = file_sha256(typed)
    zapped = zapped_gpt_disk(t.work / "zapped.raw", 1)
    zapped_before = file_sha256(zapped)
    config = dict(MNT="/data", IMG=t.image_ref("v1"), NAME="inference", DATA_DISK_SERIAL="pvc-lvm")
    vm = t.vm(extra_disks=[(zapped, "virtio", "pvc-zapped"), (typed, "virtio", "pvc-typed")],
              data_disk=disk, data_serial="pvc-lvm", cred_iso=t.cred_iso(reg),
              config=t.config(**config), agent_binary=agent, units=[t.agent_unit()])
    final = events.boot_to_final(t, vm, "disk", reason=REASON, metric="boot_to_failed_s")
    msg = final.get("message", "")
    t.expect("/dev/vdb" in msg, f"the refusal does not name the disk /dev/vdb: {msg!r}")
    t.expect("LVM2_member" in msg, f"the refusal does not say what it found: {msg!r}")
    t.expect(final.get("phase") == "failed", f"phase is {final.get('phase')} after the refusal")
    t.step(f"refused: {msg}")

    # Let the run end (the image branch may still be pulling), then ask the guest.
    state = events.wait_unit_substate(vm, UNIT, ("auto-restart", "failed", "dead"), 600)
    t.step(f"unit is {state} (Restart=on-failure may retry; each retry refuses again)")
    rc, line = events.status_cmd(vm)
    t.expect(rc == 1 and line.startswith("failed ") and f"reason={REASON}" in line and "step=disk" in line,
             f"`cosmicac-bootstrap status` exited {rc}: {line}")
    t.expect(vm.qga.exec(["docker", "inspect", "inference"]).exitcode != 0, "a container named inference exists")
    t.expect(vm.qga.exec(["docker", "ps", "-a", "-q"]).out.strip() == "", "some container was created")
    t.expect(vm.qga.exec(["findmnt", "/data"]).exitcode != 0, "/data is mounted")
    t.expect(vm.qga.exec(["lsblk", "-n", "-o", "NAME", "/dev/vdb"]).out.split() == ["vdb"],
             "a partition appeared on the refused disk")
    fstab = vm.qga.read_file("/etc/fstab").decode()
    t.expect(" /data " not in fstab, f"/etc/fstab got a /data line: {fstab}")

    # `plan` shows the zapped disk (vdc) as foreign, and why, though the serial excludes it now.
    r = vm.qga.exec([events.AGENT, "plan", "--json"], timeout=60)
    t.expect(r.exitcode in (0, 1), f"`cosmicac-bootstrap plan --json` exited {r.exitcode}: {r.err}")
    cands = {c["device"]: c for c in json.loads(r.out)["disk"]["candidates"]}
    zc = (cands.get("/dev/vdc") or {}).get("classification") or {}
    t.expect(zc.get("kind") == "foreign" and "primary header is missing or damaged" in zc.get("summary", ""),
             f"plan classifies /dev/vdc as {zc}")
    t.step(f"plan: /dev/vdc {zc.get('kind')}: {zc.get('summary')}")

    # Same boot: point the agent at the zapped disk and run it again, as a
    # restarted unit would.
    config["DATA_DISK_SERIAL"] = "pvc-zapped"
    vm.qga.exec(["tee", "/etc/default/docker-bootstrap"], stdin=t.config(**config).encode()).check()
    since = len(vm.serial_lines)
    vm.qga.exec(["systemctl", "reset-failed", UNIT]).check()
    vm.qga.exec(["systemctl", "restart", "--no-block", UNIT]).check()
    final = events.wait_event(vm, lambda e: "/dev/vdc" in e.get("message", "") and (
        (e.get("step") == "disk" and e.get("status") == "failed")
        or (e.get("step") == "state" and e.get("failed_step") == "disk")), 600, since)
    msg = final.get("message", "")
    t.expect(final.get("reason") == REASON, f"zapped disk: expected {REASON}, got {final.get('reason')}: {msg}")
    t.expect("primary header is missing or damaged" in msg, f"the refusal does not say what it found: {msg!r}")
    t.step(f"zapped GPT refused on the readiness port: {msg}")
    events.wait_unit_substate(vm, UNIT, ("auto-restart", "failed", "dead"), 600)
    rc, line = events.status_cmd(vm)
    t.expect(rc == 1 and line.startswith("failed ") and f"reason={REASON}" in line and "step=disk" in line,
             f"`cosmicac-bootstrap status` exited {rc} after the zapped disk's refusal: {line}")
    t.expect(vm.qga.exec(["findmnt", "/data"]).exitcode != 0, "/data is mounted after the zapped disk's refusal")
    t.expect(vm.qga.exec(["lsblk", "-n", "-o", "NAME", "/dev/vdc"]).out.split() == ["vdc"],
             "a partition appeared on the zapped disk")

    # Third run: our partition name and ext4 under a swap type, the disk grown: not ours to grow.
    config["DATA_DISK_SERIAL"] = "pvc-typed"
    vm.qga.exec(["tee", "/etc/default/docker-bootstrap"], stdin=t.config(**config).encode()).check()
    since = len(vm.serial_lines)
    vm.qga.exec(["systemctl", "reset-failed", UNIT]).check()
    vm.qga.exec(["systemctl", "restart", "--no-block", UNIT]).check()
    final = events.wait_event(vm, lambda e: "/dev/vdd" in e.get("message", "") and (
        (e.get("step") == "disk" and e.get("status") == "failed")
        or (e.get("step") == "state" and e.get("failed_step") == "disk")), 600, since)
    msg = final.get("message", "")
    t.expect(final.get("reason") == "disk-grow", f"typed disk: expected disk-grow, got {final.get('reason')}: {msg}")
    t.expect("has type 0657FD6D-A4AB-43C4-84E5-0933C84B4F4F" in msg and "nothing written" in msg,
             f"the refusal does not say why: {msg!r}")
    t.step(f"grown disk with our name under another type refused: {msg}")
    events.wait_unit_substate(vm, UNIT, ("auto-restart", "failed", "dead"), 600)
    t.expect(vm.qga.exec(["findmnt", "/data"]).exitcode != 0, "/data is mounted after the disk-grow refusal")

    vm.shutdown()
    t.expect(file_sha256(disk) == before, "the refused disk's bytes changed")
    t.expect(file_sha256(zapped) == zapped_before, "the zapped disk's bytes changed")
    t.expect(file_sha256(typed) == typed_before, "the typed disk's bytes changed")
    t.step("no container, no mount, the three disks' bytes unchanged (sha256 of all 512 MiB, 1 GiB and 2 GiB)")
