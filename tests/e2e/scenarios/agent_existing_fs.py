"""Existing data is adopted, never reformatted. Boot 1: the original script's
layout (GPT, one ext4 partition with files), found by size. Boot 2: a small
disk holding ext4 on the WHOLE disk (no partition table), named by
DATA_DISK_SERIAL, at another mount point. Every file intact; no table written."""

import hashlib
import os
import subprocess

from bed import checks, events
from bed.catalog import scenario
from bed.disks import make_data_disk_with_fs, partition_guid


def blkid_value(path, key):
    return subprocess.run(["blkid", "-p", "-o", "value", "-s", key, str(path)], capture_output=True,
                          text=True).stdout.strip()


def guest_hashes(vm, mnt):
    out = vm.qga.exec(["/bin/sh", "-c", f"cd {mnt} && find . -type f ! -path './lost+found/*' "
                                        "-exec sha256sum {} +"], timeout=120).out
    return {line.split(None, 1)[1].strip()[2:]: line.split()[0] for line in out.splitlines() if line.strip()}


def expect_files(t, vm, mnt, files):
    want = {k: hashlib.sha256(v).hexdigest() for k, v in files.items()}
    got = guest_hashes(vm, mnt)
    t.expect(got == want, f"files under {mnt} differ from what the disk held: got {sorted(got)}, "
                          f"changed {[k for k in want if got.get(k) != want[k]]}")


def wait_ready(t, vm, since, what):
    final = events.wait_final(vm, 900, since)
    t.expect(final["step"] == "ready", f"{what}: ended {final['step']}:{final['status']} "
                                       f"({final.get('reason')}: {final.get('message')})")
    return final


@scenario("agent-existing-fs", timeout=1800)
def agent_existing_fs(t):
    agent = t.agent
    reg = t.registry(tags=("v1",))
    gpt_files = {"model/weights.bin": os.urandom(300_000), "model/config.json": b'{"layers":2}\n',
                 "README": b"pre-existing data, GPT layout\n"}
    whole_files = {"cache/a.bin": os.urandom(200_000), "notes.txt": b"whole-disk ext4\n"}
    gpt = make_data_disk_with_fs(t.work / "gpt.raw", 120, gpt_files, partitioned=True)
    whole = make_data_disk_with_fs(t.work / "whole.raw", 2, whole_files, partitioned=False)
    gpt_guid, gpt_uuid = partition_guid(gpt), blkid_value(t.work / "gpt.raw", "PTUUID")
    gpt_fs = subprocess.run(["blkid", "-p", "-O", str(1 << 20), "-o", "value", "-s", "UUID", str(gpt)],
                            capture_output=True, text=True).stdout.strip()
    whole_uuid = blkid_value(whole, "UUID")
    t.expect(gpt_fs and whole_uuid and not blkid_value(whole, "PTTYPE"), "bed: disks not made as intended")

    vm = t.vm(extra_disks=[(whole, "virtio", "pvc-whole")],
              data_disk=gpt, data_serial="pvc-gpt", cred_iso=t.cred_iso(reg),
              config=t.config(MNT="/data", IMG=t.image_ref("v1"), NAME="inference"),
              agent_binary=agent, units=[t.agent_unit()])
    vm.boot()
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    wait_ready(t, vm, 0, "boot 1 (GPT)")
    t.metric("boot_to_ready_s", round(vm.elapsed(), 1))
    src = checks.data_disk_mounted(t, vm, "/data", "pvc-gpt")
    t.expect(src == "/dev/vdb1", f"/data from {src}, expected the existing partition /dev/vdb1")
    info = vm.qga.exec(["lsblk", "-n", "-o", "PARTUUID,UUID,PARTLABEL", src]).out.split(None, 2)
    t.expect(info[0].lower() == gpt_guid and info[1] == gpt_fs,
             f"{src} is not the original partition/filesystem: {info} vs {gpt_guid} {gpt_fs}")
    expect_files(t, vm, "/data", gpt_files)
    checks.inference_container(t, vm, "inference", "v1", [])
    t.step("boot 1: the existing GPT partition adopted as it is, files intact")

    # Boot 2: the whole-disk filesystem, by serial, at /models.
    vm.files["etc/default/docker-bootstrap"] = (0o644, t.config(
        MNT="/models", IMG=t.image_ref("v1"), NAME="inference", DATA_DISK_SERIAL="pvc-whole").encode())
    since = len(vm.serial_lines)
    vm.reboot(timeout=900)
    wait_ready(t, vm, since, "boot 2 (whole-disk ext4)")
    # checks.data_disk_mounted() expects a partition: here the source is the disk itself.
    dev = vm.qga.exec(["/bin/sh", "-c", "lsblk -d -n -o NAME,SERIAL | awk '$2==\"pvc-whole\"{print $1}'"]).out.strip()
    src2 = vm.qga.exec(["findmnt", "-n", "-o", "SOURCE,FSTYPE", "/models"]).out.split()
    t.expect(src2 == [f"/dev/{dev}", "ext4"], f"/models is {src2}, expected the whole disk /dev/{dev} (ext4)")
    t.expect(" /models " in vm.qga.read_file("/etc/fstab").decode(), "/models has no /etc/fstab entry")
    kids = vm.qga.exec(["lsblk", "-n", "-o", "NAME", f"/dev/{dev}"]).out.split()
    t.expect(kids == [dev], f"a partition appeared on /dev/{dev}: {kids}")
    expect_files(t, vm, "/models", whole_files)
    uuid_now = vm.qga.exec(["lsblk", "-n", "-d", "-o", "UUID", f"/dev/{dev}"]).out.strip()
    t.expect(uuid_now == whole_uuid, f"whole-disk filesystem UUID changed: {whole_uuid} -> {uuid_now}")
    checks.inference_container(t, vm, "inference", "v1", [], mnt="/models")
    t.step("boot 2: the whole-disk ext4 mounted as it is, files intact")

    vm.shutdown()
    t.expect(not blkid_value(whole, "PTTYPE") and blkid_value(whole, "UUID") == whole_uuid,
             "the whole-disk image got a partition table or a new filesystem")
    t.expect(partition_guid(gpt) == gpt_guid and blkid_value(gpt, "PTUUID") == gpt_uuid,
             "the GPT disk's table was rewritten")
