"""Assertions shared by the script and agent scenarios: what "the job is done"
means inside the guest, checked through the guest agent."""

from __future__ import annotations

import time

from .scenario import Ctx, ScenarioFailed
from .vm import VM

HOOK_LOG = "/var/log/fake-nvidia-hook.log"


def data_disk_mounted(t: Ctx, vm: VM, mnt: str, disk_serial: str) -> str:
    """`mnt` is mounted from a partition of the disk whose serial is `disk_serial`; returns the source."""
    src = vm.qga.exec(["findmnt", "-n", "-o", "SOURCE,FSTYPE", mnt]).out.split()
    t.expect(len(src) == 2, f"{mnt} is not a mount point in the guest")
    t.expect(src[1] == "ext4", f"{mnt} is {src[1]}, expected ext4")
    src[0] = src[0].split("[", 1)[0]  # a bind of the data disk's mnt/ shows as /dev/vdb1[/mnt]
    disk = vm.qga.exec(["lsblk", "-n", "-d", "-o", "PKNAME", src[0]]).out.strip()
    serial = vm.qga.exec(["lsblk", "-n", "-d", "-o", "SERIAL", f"/dev/{disk}"]).out.strip()
    t.expect(serial == disk_serial, f"{mnt} comes from {src[0]} on {disk} (serial {serial!r}), "
                                    f"not the data disk (serial {disk_serial!r})")
    fstab = vm.qga.read_file("/etc/fstab").decode()
    t.expect(f" {mnt} " in fstab, f"{mnt} has no /etc/fstab entry (it would not survive a reboot)")
    return src[0]


def docker_store_on_data_disk(t: Ctx, vm: VM, label: str) -> None:
    """/var/lib/docker is the data disk's docker/, /data its mnt/; the container sees no store."""
    src = vm.qga.exec(["findmnt", "-n", "-o", "SOURCE", "/var/lib/docker"]).out.strip()
    t.expect(src.endswith("[/docker]"), f"{label}: /var/lib/docker is {src!r}, not the data disk's docker/")
    data = vm.qga.exec(["findmnt", "-n", "-o", "SOURCE", "/data"]).out.strip()
    t.expect(data.endswith("[/mnt]"), f"{label}: /data is {data!r}, not the data disk's mnt/")
    t.expect(src.split("[")[0] == data.split("[")[0], f"{label}: store {src} and /data {data} differ")
    root = vm.qga.exec(["docker", "info", "-f", "{{.DockerRootDir}}"]).out.strip()
    t.expect(root == "/var/lib/docker", f"{label}: docker's root dir is {root!r}")
    seen = vm.qga.exec(["docker", "exec", "inference", "/bin/ls", "-a", "/data"]).out.split()
    t.expect("docker" not in seen and "image" not in seen and "overlay2" not in seen,
             f"{label}: the container sees docker's store under /data: {seen}")
    for target in ("/var/lib/cosmicac/data", "/data", "/var/lib/docker"):
        opts = vm.qga.exec(["findmnt", "-n", "-o", "OPTIONS", target]).out.strip().split(",")
        t.expect("nosuid" in opts and "nodev" in opts, f"{label}: {target} is mounted {opts}, not nosuid,nodev")
    mountinfo = vm.qga.exec(["docker", "exec", "inference", "/bin/cat", "/proc/self/mountinfo"]).out.splitlines()
    inside = [line for line in mountinfo if line.split(" ")[4:5] == ["/data"]]
    t.expect(len(inside) == 1 and all(f in inside[0].split(" ")[5].split(",") for f in ("nosuid", "nodev")),
             f"{label}: the container's /data is not nosuid,nodev: {inside}")


def inference_container(t: Ctx, vm: VM, name: str, image_tag: str, env: list[str],
                        mnt: str | None = "/data", gpu: bool = True, tun: bool = False) -> dict:
    """The container runs the expected image with the script's docker-run semantics."""
    info = t.docker_inspect(vm, name)
    t.expect(info is not None, f"no container named {name}")
    t.expect(info["State"]["Running"], f"container {name} is not running: {info['State']}")
    hc = info["HostConfig"]
    t.expect(info["Config"]["Labels"].get("org.cosmicac.e2e.tag") == image_tag,
             f"container image is {info['Config']['Image']}, expected tag {image_tag}")
    version = vm.qga.exec(["docker", "exec", name, "/bin/cat", "/etc/cosmicac-version"]).out.strip()
    t.expect(version == image_tag, f"/etc/cosmicac-version in the container is {version!r}, expected {image_tag}")
    cenv = info["Config"]["Env"]
    for e in env:
        t.expect(e in cenv, f"container env lacks {e.split('=', 1)[0]} (or its value differs)")
    t.expect(hc.get("IpcMode") == "host", f"IpcMode is {hc.get('IpcMode')!r}, expected host")
    t.expect(hc.get("Init") is True, "container was not started with --init")
    rp = hc.get("RestartPolicy", {}).get("Name")
    t.expect(rp == "unless-stopped", f"restart policy is {rp!r}, expected unless-stopped")
    if mnt:
        binds = hc.get("Binds") or []
        mounts = [(m.get("Source"), m.get("Destination")) for m in info.get("Mounts", [])]
        t.expect(f"{mnt}:{mnt}" in binds or (mnt, mnt) in mounts,
                 f"{mnt} is not bind-mounted into the container (binds {binds}, mounts {mounts})")
    if gpu:
        reqs = hc.get("DeviceRequests") or []
        t.expect(any(["gpu"] in (r.get("Capabilities") or []) and r.get("Count") == -1 for r in reqs),
                 f"container has no 'all GPUs' device request: {reqs}")
        hook_called(t, vm, info["Id"])
    if tun:
        t.expect("NET_ADMIN" in (hc.get("CapAdd") or []), "NET_ADMIN not added")
        devs = [d.get("PathOnHost") for d in hc.get("Devices") or []]
        t.expect("/dev/net/tun" in devs, f"/dev/net/tun not passed through: {devs}")
    return info


def hook_called(t: Ctx, vm: VM, container_id: str) -> None:
    """The fake nvidia-container-runtime-hook ran as a prestart hook for this container."""
    r = vm.qga.exec(["cat", HOOK_LOG])
    t.expect(r.exitcode == 0, f"{HOOK_LOG} missing: the GPU request never reached the runtime")
    t.expect(any(f"id={container_id}" in line and "prestart" in line for line in r.out.splitlines()),
             f"the nvidia hook never ran for container {container_id[:12]}: {r.out.strip()[-500:]}")


def wait_unit_done(t: Ctx, vm: VM, unit: str, timeout: float = 600) -> str:
    """Waits for a oneshot unit to finish; returns its final ActiveState."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = vm.qga.exec(["systemctl", "show", "-P", "ActiveState", unit]).out.strip()
        if state in ("active", "failed"):
            return state
        time.sleep(3)
    raise ScenarioFailed(f"{unit} still {state} after {timeout}s")
