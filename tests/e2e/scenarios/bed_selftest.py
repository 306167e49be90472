"""Proves the mechanics the agent scenarios rely on, without the agent: the
readiness port's host end, NVMe data disk with its serial, the credential ISO
as sr1 behind another CD-ROM with the kubelet Secret layout, the registry
reachable (only) through guestfwd, the fake GPU nodes, a root disk >= 100 GiB,
cloud-init off without a seed, and a reboot keeping the disks."""

import json

from bed.catalog import scenario

# Test fixture: writes two JSON lines on the readiness port, as the agent will.
READY_SCRIPT = b"""#!/bin/sh
p=/dev/virtio-ports/org.cosmicac.bootstrap.0
printf '{"phase":"selftest","boot":"%s"}\\n' "$(cat /proc/sys/kernel/random/boot_id)" > $p
printf '{"phase":"ready"}\\n' > $p
"""
READY_UNIT = """[Unit]
Description=e2e self-test: write to the readiness port
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/e2e-selftest-ready
[Install]
WantedBy=multi-user.target
"""


@scenario("bed-selftest", timeout=1500, needs_agent=False)
def bed_selftest(t):
    reg = t.registry(tags=("v1",))
    other = t.iso("other.iso", "OTHERDISC", {"README": b"not the credentials\n"})
    vm = t.vm(root_size_gib=110, data_disk=t.data_disk(120), data_bus="nvme", data_serial="pvc-nvme",
              extra_cdroms=[other], cred_iso=t.cred_iso(reg), config=t.config(MNT="/data"))
    vm.files["usr/local/sbin/e2e-selftest-ready"] = (0o755, READY_SCRIPT)
    vm.add_unit("e2e-selftest-ready.service", READY_UNIT)
    vm.boot()
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    ready = vm.wait_serial(lambda l: '"phase":"ready"' in l, 300)
    t.expect(json.loads(ready) == {"phase": "ready"}, f"readiness line garbled: {ready!r}")
    first = json.loads(vm.serial_lines[0])
    t.expect(first.get("phase") == "selftest", f"first readiness line: {vm.serial_lines[0]!r}")

    q = vm.qga
    blk = json.loads(q.exec(["lsblk", "-J", "-b", "-d", "-o", "NAME,SIZE,SERIAL,TYPE,LABEL"]).out)
    devs = {d["name"]: d for d in blk["blockdevices"]}
    t.expect(devs.get("vda", {}).get("size", 0) >= 100 << 30, f"root disk not >= 100 GiB: {devs.get('vda')}")
    nvme = [d for d in devs.values() if d["name"].startswith("nvme")]
    t.expect(len(nvme) == 1 and nvme[0]["serial"] == "pvc-nvme" and nvme[0]["size"] == 120 << 30,
             f"NVMe data disk wrong: {nvme}")
    labels = {d["name"]: q.exec(["blkid", "-s", "LABEL", "-o", "value", f"/dev/{d['name']}"]).out.strip()
              for d in devs.values() if d["name"].startswith("sr")}
    t.expect(labels == {"sr0": "OTHERDISC", "sr1": "cfgdata"}, f"CD-ROM labels: {labels}")
    q.exec(["mkdir", "-p", "/mnt/cred"], check=True)
    q.exec(["mount", "-t", "iso9660", "-o", "ro", "/dev/sr1", "/mnt/cred"], check=True)
    names = q.exec(["ls", "-a", "/mnt/cred"]).out.split()
    t.expect("..data" in names and "DOCKER_TOKEN" in names, f"ISO layout: {names}")
    token = q.read_file("/mnt/cred/DOCKER_TOKEN").decode()
    t.expect(token == reg.token, "DOCKER_TOKEN on the ISO differs from the registry's token")
    q.exec(["umount", "/mnt/cred"], check=True)

    code = q.exec(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20",
                   "http://10.0.2.100:5000/v2/"]).out
    t.expect(code == "401", f"registry via guestfwd answered {code!r}, expected 401")
    out = q.exec(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5",
                  "http://10.0.2.2:1/"]).out
    t.expect(out == "000", f"guest reached the host outside guestfwd ({out!r})")
    nodes = q.exec(["stat", "-c", "%n %t:%T", "/dev/nvidiactl", "/dev/nvidia0"]).out.split("\n")
    t.expect(nodes[:2] == ["/dev/nvidiactl c3:ff", "/dev/nvidia0 c3:0"], f"fake NVIDIA nodes: {nodes}")
    ci = q.exec(["systemctl", "is-enabled", "cloud-init.target"]).out.strip()
    t.expect(q.exec(["test", "-e", "/run/cloud-init/disabled"]).exitcode == 0,
             f"cloud-init not disabled without a seed (cloud-init.target {ci})")
    q.exec(["sh", "-c", "echo persisted > /root/marker"], check=True)

    since = len(vm.serial_lines)
    t.metric("reboot_to_multi_user_s", round(vm.reboot(inject=False), 1))
    line = vm.wait_serial(lambda l: '"phase":"selftest"' in l, 300, since=since)
    t.expect(json.loads(line)["boot"] != first["boot"], "second boot reported the first boot's id")
    t.expect(vm.qga.read_file("/root/marker") == b"persisted\n", "root disk changes lost across reboot")
