"""The disk named by DATA_DISK_SERIAL holds an LVM physical volume: the agent
refuses it (disk-has-foreign-content, naming the disk), creates no container,
and leaves every byte as it was. The original script would have partitioned
and formatted it."""

from bed import events
from bed.disks_extra import file_sha256, lvm_pv_disk
from bed.registry_of_scenarios import scenario

REASON = "disk-has-foreign-content"


@scenario("agent-foreign-disk", timeout=1500)
def agent_foreign_disk(t):
    agent = t.agent
    reg = t.registry(tags=("v1",))
    disk = lvm_pv_disk(t.work / "lvm.raw", 256)
    before = file_sha256(disk)
    vm = t.vm(data_disk=disk, data_serial="pvc-lvm", cred_iso=t.cred_iso(reg),
              config=t.config(MNT="/data", IMG=t.image_ref("v1"), NAME="inference",
                              DATA_DISK_SERIAL="pvc-lvm"),
              agent_binary=agent, units=[t.agent_unit()])
    vm.boot()
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    final = events.wait_final(vm, 900)
    t.metric("boot_to_failed_s", round(vm.elapsed(), 1))
    t.expect(final["step"] == "disk" and final["status"] == "failed" and final.get("reason") == REASON,
             f"expected disk:failed {REASON}, got {final['step']}:{final['status']} "
             f"({final.get('reason')}: {final.get('message')})")
    msg = final.get("message", "")
    t.expect("/dev/vdb" in msg, f"the refusal does not name the disk /dev/vdb: {msg!r}")
    t.expect("LVM2_member" in msg, f"the refusal does not say what it found: {msg!r}")
    t.expect(final.get("phase") == "failed", f"phase is {final.get('phase')} after the refusal")
    t.step(f"refused: {msg}")

    # Let the run end (the image branch may still be pulling), then ask the guest.
    state = events.wait_unit_substate(vm, "cosmicac-bootstrap.service", ("auto-restart", "failed", "dead"), 600)
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

    vm.shutdown()
    t.expect(file_sha256(disk) == before, "the refused disk's bytes changed")
    t.step("no container, no mount, disk bytes unchanged (sha256 of all 256 MiB)")
