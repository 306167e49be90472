"""DATA_DISK_SERIAL picks the NVMe data disk over a LARGER blank virtio decoy,
with a root disk that is itself over 100 GiB: the original script would have
taken the decoy (largest disk ≥ 100 GiB)."""

from bed import checks, events
from bed.disks import allocated_bytes, head_is_zero, sparse_disk
from bed.catalog import scenario


@scenario("agent-nvme-serial", timeout=1500)
def agent_nvme_serial(t):
    agent = t.agent
    reg = t.registry(tags=("v1",))
    decoy = sparse_disk(t.work / "decoy.raw", 200 << 30)
    vm = t.vm(extra_disks=[(decoy, "virtio", "pvc-decoy")], root_size_gib=110,
              data_disk=t.data_disk(120), data_bus="nvme", data_serial="pvc-data",
              cred_iso=t.cred_iso(reg),
              config=t.config(MNT="/data", IMG=t.image_ref("v1"), NAME="inference",
                              DATA_DISK_SERIAL="pvc-data"),
              agent_binary=agent, units=[t.agent_unit()])
    final = events.boot_to_final(t, vm)

    sizes = dict(line.split() for line in vm.qga.exec(
        ["lsblk", "-b", "-d", "-n", "-o", "SERIAL,SIZE"]).out.splitlines() if len(line.split()) == 2)
    root_src = vm.qga.exec(["findmnt", "-n", "-o", "SOURCE", "/"]).out.strip()
    t.step(f"disks by serial: {sizes}; / on {root_src}")
    t.expect(int(sizes.get("cosmicac-root", 0)) >= 100 << 30, f"root disk is not ≥ 100 GiB: {sizes}")
    t.expect(int(sizes.get("pvc-decoy", 0)) > int(sizes.get("pvc-data", 0)) > 0,
             f"the decoy is not larger than the data disk: {sizes}")

    src = checks.data_disk_mounted(t, vm, "/data", "pvc-data")
    t.expect(src == "/dev/nvme0n1p1", f"/data is mounted from {src}, expected /dev/nvme0n1p1")
    checks.inference_container(t, vm, "inference", "v1", [])
    decoy_dev = vm.qga.exec(["/bin/sh", "-c",
                             "lsblk -d -n -o NAME,SERIAL | awk '$2==\"pvc-decoy\"{print $1}'"]).out.strip()
    t.expect(decoy_dev.startswith("vd"), f"decoy disk not found in the guest ({decoy_dev!r})")
    kids = vm.qga.exec(["lsblk", "-n", "-o", "NAME", f"/dev/{decoy_dev}"]).out.split()
    t.expect(kids == [decoy_dev], f"the decoy /dev/{decoy_dev} got partitions: {kids}")
    sig = vm.qga.exec(["blkid", "-p", f"/dev/{decoy_dev}"])
    t.expect(sig.exitcode == 2 and not sig.out.strip(), f"the decoy carries a signature: {sig.out.strip()}")

    vm.shutdown()
    t.expect(allocated_bytes(decoy) == 0,
             f"the decoy image has {allocated_bytes(decoy)} allocated bytes: something wrote to it")
    t.expect(head_is_zero(decoy), "the decoy's first MiB is not zero")
    t.step("NVMe disk chosen by serial; the larger decoy never written (0 allocated bytes)")
