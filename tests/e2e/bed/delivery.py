"""The KubeVirt delivery path reproduced in QEMU: the host tool cosmicac-vmi,
a ConfigMap turned into a CD-ROM the way kubelet + KubeVirt do it, the NoCloud
seed ISO (label cidata), and a follower of the readiness socket run by
`cosmicac-vmi wait --serial`."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from .iso import make_iso
from .vm import VM

REPO_DIR = Path(__file__).resolve().parent.parent.parent.parent


def vmi_tool() -> Path:
    """cosmicac-vmi: $COSMICAC_VMI (ctest sets it), else on PATH, else the newest
    build*/host/cli/cosmicac-vmi of the repo. A missing tool FAILS the scenario."""
    env = os.environ.get("COSMICAC_VMI")
    if env:
        if not os.access(env, os.X_OK):
            raise AssertionError(f"COSMICAC_VMI={env} is not an executable")
        return Path(env)
    found = shutil.which("cosmicac-vmi")
    if found:
        return Path(found)
    builds = sorted(REPO_DIR.glob("build*/host/cli/cosmicac-vmi"), key=lambda p: p.stat().st_mtime, reverse=True)
    if builds:
        return builds[0]
    raise AssertionError("cosmicac-vmi not found: build it (cmake --build <dir> --target cosmicac-vmi) "
                         "or set COSMICAC_VMI")


def vmi_run(args: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(vmi_tool())] + args, capture_output=True, text=True, timeout=timeout)


def configmap_files(cm_yaml: Path) -> dict[str, bytes]:
    """What kubelet projects from a ConfigMap: each `data` key a file holding
    the UTF-8 value, each `binaryData` key a file holding the decoded bytes."""
    import yaml  # python3-yaml (Debian), only needed here
    cm = yaml.safe_load(cm_yaml.read_text())
    if cm.get("kind") != "ConfigMap":
        raise AssertionError(f"{cm_yaml} is not a ConfigMap (kind {cm.get('kind')!r})")
    files = {k: v.encode() for k, v in (cm.get("data") or {}).items()}
    for k, v in (cm.get("binaryData") or {}).items():
        if k in files:
            raise AssertionError(f"{cm_yaml}: key {k} in both data and binaryData")
        files[k] = base64.b64decode(v, validate=True)
    return files


def configmap_iso(out: Path, cm_yaml: Path, label: str) -> Path:
    """The ConfigMap volume as KubeVirt's CD-ROM: kubelet's atomic-writer layout
    (..<timestamp>/ with the files at mode 0644, ..data -> it, one symlink per
    key) turned into an ISO by `xorrisofs -follow-links -joliet -rock -V label`."""
    return make_iso(out, label, configmap_files(cm_yaml), secret_layout=True)


def nocloud_seed(out: Path, user_data: str, instance_id: str, hostname: str) -> Path:
    """KubeVirt's cloudInitNoCloud disk: user-data and meta-data on an ISO labelled cidata."""
    meta = f"instance-id: {instance_id}\nlocal-hostname: {hostname}\n"
    return make_iso(out, "cidata", {"user-data": user_data.encode(), "meta-data": meta.encode()})


class SerialWaiter:
    """`cosmicac-vmi wait --serial SOCK --json --timeout T` in the background:
    every event line it prints is parsed and kept with its arrival time."""

    def __init__(self, sock: Path, timeout: str = "15m", log: Path | None = None):
        self.argv = [str(vmi_tool()), "wait", "--serial", str(sock), "--json", "--timeout", timeout]
        self.events: list[dict] = []
        self.arrivals: list[float] = []
        self.bad_lines: list[str] = []
        self.log = log
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._lock = threading.Lock()
        self._out = threading.Thread(target=self._read, daemon=True)
        self._out.start()
        self.stderr = ""
        self._err = threading.Thread(target=self._read_err, daemon=True)
        self._err.start()

    def _read(self) -> None:
        logf = open(self.log, "a") if self.log else None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            if logf:
                logf.write(f"{time.monotonic() - self.started:8.2f} {line}\n")
                logf.flush()
            try:
                ev = json.loads(line)
            except ValueError:
                with self._lock:
                    self.bad_lines.append(line)
                continue
            with self._lock:
                self.events.append(ev)
                self.arrivals.append(time.monotonic())
        if logf:
            logf.close()

    def _read_err(self) -> None:
        self.stderr = self.proc.stderr.read()

    def snapshot(self) -> list[dict]:
        with self._lock:
            return list(self.events)

    def wait_event(self, pred, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ev in self.snapshot():
                if pred(ev):
                    return ev
            if self.proc.poll() is not None:
                self._out.join(5)
                for ev in self.snapshot():
                    if pred(ev):
                        return ev
                raise AssertionError(f"cosmicac-vmi wait --serial exited {self.proc.returncode} before the "
                                     f"expected event: {self.stderr.strip()[-800:]}")
            time.sleep(0.3)
        raise AssertionError(f"no matching event from cosmicac-vmi wait --serial within {timeout}s")

    def wait_exit(self, timeout: float) -> int:
        rc = self.proc.wait(timeout)
        self._out.join(5)
        self._err.join(5)
        return rc

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class DeliveryVM(VM):
    """A bed VM with extra virtio-blk disks after the data disk, e.g. the NoCloud
    seed, which KubeVirt attaches as a virtio disk (bus: virtio). It must be a
    disk, not a CD-ROM here: cloud-init's ds-identify runs as a systemd generator,
    before udev has loaded virtio-scsi/sr_mod, so a seed on a CD-ROM is not seen
    and cloud-init disables itself; virtio_blk is in the initramfs (root disk)."""

    def __init__(self, *args, readonly_disks: list[tuple[Path, str]] = (), **kw):
        super().__init__(*args, **kw)
        # (raw image, serial); not VM.extra_disks, which are writable disks (path, bus, serial)
        self.readonly_disks = list(readonly_disks)

    def argv(self, initrd: Path, accel: str) -> list[str]:
        a = super().argv(initrd, accel)
        for i, (img, serial) in enumerate(self.readonly_disks):
            a += ["-drive", f"if=none,id=xd{i},file={img},format=raw,readonly=on",
                  "-device", f"virtio-blk-pci,drive=xd{i},serial={serial}"]
        return a


def delivery_vm(t, extra_disks: list[tuple[Path, str]], **kw) -> DeliveryVM:
    """Like Ctx.vm(), for a DeliveryVM (registered with the context for cleanup)."""
    registry = t.registries[-1] if t.registries else None
    kw.setdefault("registry_port", registry.port if registry else None)
    vm = DeliveryVM(t.work, t.image, name=kw.pop("name", f"vm{len(t.vms)}"), readonly_disks=extra_disks, **kw)
    t.vms.append(vm)
    return vm
