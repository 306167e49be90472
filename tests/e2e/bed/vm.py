"""One test VM: qemu-system-x86_64 with direct kernel boot from the cached
image, a pristine qcow2 overlay of its root disk, the data disk, CD-ROMs, the
readiness virtio-serial port and the guest agent. Files (config, agent binary,
units, the baseline script) reach the guest through a cpio archive appended to
the initrd; the image's init-bottom script copies it onto the root."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

from . import accel as accel_mod
from . import cpio, proc
from .image import Image
from .qga import Qga, Qmp
from .disks import make_data_disk, make_data_disk_with_fs  # noqa: F401 (their old home)
from .registry import GUEST_ADDR, MIRROR_GUEST_ADDR

READINESS_PORT = "org.cosmicac.bootstrap.0"
QGA_PORT = "org.qemu.guest_agent.0"
BOOT_MARKER = "COSMICAC-E2E-MULTI-USER"
# A kernel that prints nothing for this long before /init has hung (TCG);
# its slowest gap there, under CI's load, is a few seconds.
EARLY_STALL_S = 90.0
EARLY_BOOT_TRIES = 3
REFERENCE_DIR = Path(__file__).resolve().parents[3] / "tests" / "data" / "reference"
APT_LINE = ("apt-get update && apt-get install -y curl ca-certificates docker.io parted "
            "e2fsprogs util-linux")


def patched_reference_script(src: Path = REFERENCE_DIR / "docker-bootstrap.sh") -> bytes:
    """The original script with exactly its apt-get line neutralised (the guest
    has no mirror; the image already holds those packages). Never edits the source."""
    text = src.read_text()
    if text.count(APT_LINE) != 1:
        raise RuntimeError(f"{src}: the apt-get line to neutralise was not found exactly once")
    return text.replace(APT_LINE, ": # e2e bed: apt-get neutralised (packages are in the image)").encode()


def _unit_targets(unit_text: str) -> list[str]:
    targets = []
    section = None
    for line in unit_text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[Install]" and "=" in line:
            k, v = line.split("=", 1)
            if k.strip() in ("WantedBy", "RequiredBy"):
                targets += [(t, "wants" if k.strip() == "WantedBy" else "requires") for t in v.split()]
    return targets


def unit_exec_path(unit_text: str) -> str | None:
    m = re.search(r"^ExecStart=[-@+!:]*(\S+)", unit_text, re.M)
    return m.group(1) if m else None


class VM:
    def __init__(self, work: Path, image: Image, *,
                 name: str = "vm",
                 root_size_gib: int | None = None,
                 data_disk: Path | None = None,
                 data_bus: str = "virtio",
                 data_serial: str = "cosmicac-data",
                 extra_disks: list[tuple[Path, str, str]] = (),
                 extra_cdroms: list[Path] = (),
                 cred_iso: Path | None = None,
                 config: str | None = None,
                 agent_binary: Path | None = None,
                 units: list[Path] = (),
                 baseline_script: Path | None = None,
                 files: dict[str, tuple[int, bytes]] | None = None,
                 registry_port: int | None = None,
                 mirror_port: int | None = None,
                 serial_reader: bool = True,
                 vcpus: int = 2, mem_mib: int = 2048,
                 time_limit: float = 1200):
        if data_bus not in ("virtio", "nvme"):
            raise ValueError("data_bus must be 'virtio' or 'nvme'")
        for _, bus, _ in extra_disks:
            if bus not in ("virtio", "nvme"):
                raise ValueError(f"extra disk bus {bus!r}: virtio or nvme")
        self.work = work
        self.image = image
        self.name = name
        self.data_disk, self.data_bus, self.data_serial = data_disk, data_bus, data_serial
        # [(raw image, "virtio"|"nvme", serial), ...] after the data disk: virtio
        # ones become vdc, vdd, ... after root vda and a virtio data disk vdb.
        self.extra_disks = list(extra_disks)
        self.cdroms = list(extra_cdroms) + ([cred_iso] if cred_iso else [])
        self.registry_port = registry_port
        self.mirror_port = mirror_port  # a second registry (the mirror) at MIRROR_GUEST_ADDR
        # False leaves the readiness socket (one client at a time) to an external
        # reader, e.g. `cosmicac-vmi wait --serial <vm.boot_sock>`.
        self.serial_reader = serial_reader
        self.vcpus, self.mem_mib, self.time_limit = vcpus, mem_mib, time_limit
        self.console_log = work / f"{name}-console.log"
        self.serial_log = work / f"{name}-readiness.log"
        self.qga_sock = work / f"{name}-qga.sock"
        self.qmp_sock = work / f"{name}-qmp.sock"
        self.boot_sock = work / f"{name}-bootstrap.sock"
        self.root = work / f"{name}-root.qcow2"
        self.proc: subprocess.Popen | None = None
        self.qemu_log = None
        self.boots = 0
        self.serial_lines: list[str] = []
        self._serial_lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self._watchdog: threading.Timer | None = None
        self.boot_started = 0.0
        self.qga = Qga(str(self.qga_sock))
        self.qmp = Qmp(str(self.qmp_sock))

        # The per-boot file set (editable between boots for second-boot scenarios).
        self.files: dict[str, tuple[int, bytes]] = dict(files or {})
        self.symlinks: dict[str, str] = {}
        if config is not None:
            self.files["etc/default/docker-bootstrap"] = (0o644, config.encode())
        for u in units:
            self.add_unit(u.name, u.read_text())
        if agent_binary is not None:
            exec_path = "/usr/local/bin/cosmicac-bootstrap"
            for u in units:
                p = unit_exec_path(u.read_text())
                if p and "cosmicac-bootstrap" in p:
                    exec_path = p
            self.files[exec_path.lstrip("/")] = (0o755, Path(agent_binary).read_bytes())
        if baseline_script is not None:
            self.files["usr/local/bin/docker-bootstrap.sh"] = (0o755, patched_reference_script(baseline_script))
            self.add_unit("docker-bootstrap.service",
                          (REFERENCE_DIR / "docker-bootstrap.service").read_text())

        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw",
                        "-b", str(image.root), str(self.root)]
                       + ([f"{root_size_gib}G"] if root_size_gib else []),
                       check=True, capture_output=True)

    # ---- guest content -------------------------------------------------
    def add_unit(self, name: str, text: str, enable: bool = True) -> None:
        self.files[f"etc/systemd/system/{name}"] = (0o644, text.encode())
        if enable:
            for target, kind in _unit_targets(text):
                self.symlinks[f"etc/systemd/system/{target}.{kind}/{name}"] = f"/etc/systemd/system/{name}"

    def _initrd(self, inject: bool) -> Path:
        if not inject or (not self.files and not self.symlinks):
            return self.image.initrd
        out = self.work / f"{self.name}-initrd-boot{self.boots}.img"
        base = self.image.initrd.read_bytes()
        pad = b"\0" * ((-len(base)) % 512)
        archive = cpio.newc(cpio.tree(self.files, self.symlinks, "cosmicac-inject"))
        out.write_bytes(base + pad + archive)
        return out

    # ---- lifecycle -----------------------------------------------------
    def argv(self, initrd: Path, accel: str) -> list[str]:
        a = ["qemu-system-x86_64", "-name", self.name, "-nodefaults", "-nographic",
             "-machine", "q35", "-m", str(self.mem_mib), "-smp", str(self.vcpus),
             "-no-reboot", "-rtc", "base=utc",
             "-kernel", str(self.image.kernel), "-initrd", str(initrd),
             "-append", self.image.cmdline,
             "-chardev", f"file,id=con0,path={self.console_log},append=on",
             "-serial", "chardev:con0", "-monitor", "none",
             "-qmp", f"unix:{self.qmp_sock},server=on,wait=off"]
        if accel == "kvm":
            a += ["-accel", "kvm", "-cpu", "host"]
        else:
            a += ["-accel", "tcg,thread=multi", "-cpu", "qemu64,-svm"]
        a += ["-device", "virtio-rng-pci"]
        a += ["-drive", f"if=none,id=root,file={self.root},format=qcow2,cache=unsafe,discard=unmap",
              "-device", "virtio-blk-pci,drive=root,serial=cosmicac-root"]
        if self.data_disk is not None:
            a += ["-drive", f"if=none,id=data,file={self.data_disk},format=raw,cache=unsafe,discard=unmap"]
            dev = "nvme" if self.data_bus == "nvme" else "virtio-blk-pci"
            a += ["-device", f"{dev},drive=data,serial={self.data_serial}"]
        if self.cdroms:
            # The cloud kernel has no AHCI driver (KubeVirt's default sata bus), so
            # the CD-ROMs sit on virtio-scsi (KubeVirt's bus: scsi); scan order
            # (scsi-id) gives sr0, sr1, ... in list order.
            a += ["-device", "virtio-scsi-pci,id=scsi0"]
        for i, iso in enumerate(self.cdroms):
            a += ["-drive", f"if=none,id=cd{i},media=cdrom,readonly=on,file={iso}",
                  "-device", f"scsi-cd,bus=scsi0.0,channel=0,scsi-id={i},lun=0,drive=cd{i}"]
        # Before the NIC: PCI slots (and vdX names) follow the data disk.
        for i, (path, bus, serial) in enumerate(self.extra_disks):
            dev = "nvme" if bus == "nvme" else "virtio-blk-pci"
            a += ["-drive", f"if=none,id=extra{i},file={path},format=raw,cache=unsafe,discard=unmap",
                  "-device", f"{dev},drive=extra{i},serial={serial}"]
        netdev = "user,id=n0,restrict=on"
        if self.registry_port is not None:
            # One socat per guest connection (a tcp: chardev would carry only one).
            ip, port = GUEST_ADDR.split(":")
            netdev += f",guestfwd=tcp:{ip}:{port}-cmd:socat STDIO TCP:127.0.0.1:{self.registry_port}"
        if self.mirror_port is not None:
            # socat's log to /dev/null: QEMU hands the command the guest's connection as
            # stderr too, so a refused connect (the mirror stopped) would reach the guest as
            # socat's error text rather than as a closed connection.
            ip, port = MIRROR_GUEST_ADDR.split(":")
            netdev += f",guestfwd=tcp:{ip}:{port}-cmd:socat -lf /dev/null STDIO TCP:127.0.0.1:{self.mirror_port}"
        a += ["-netdev", netdev, "-device", "virtio-net-pci,netdev=n0"]
        a += ["-device", "virtio-serial-pci,id=vser0",
              "-chardev", f"socket,id=boot,path={self.boot_sock},server=on,wait=off",
              "-device", f"virtserialport,bus=vser0.0,chardev=boot,name={READINESS_PORT}",
              "-chardev", f"socket,id=qga0,path={self.qga_sock},server=on,wait=off",
              "-device", f"virtserialport,bus=vser0.0,chardev=qga0,name={QGA_PORT}"]
        return a

    def boot(self, inject: bool = True) -> "VM":
        if self.running():
            raise RuntimeError("VM already running")
        accel = accel_mod.choose(self.image)
        initrd = self._initrd(inject)
        argv = self.argv(initrd, accel)
        for attempt in range(1, EARLY_BOOT_TRIES + 1):
            self._spawn(argv, accel)
            if accel == "kvm" or self._kernel_reached_init():
                break
            note = (f"the guest kernel printed nothing for {EARLY_STALL_S:.0f}s before /init "
                    f"(a TCG hang; no disk is written before /init): QEMU killed")
            if attempt == EARLY_BOOT_TRIES:
                self._console_note(note + f"; no try left of {EARLY_BOOT_TRIES}")
                raise RuntimeError(f"{self.name}: {note}, {EARLY_BOOT_TRIES} times; see {self.console_log}")
            self._console_note(note + f"; booting again (try {attempt + 1} of {EARLY_BOOT_TRIES})")
            print(f"[e2e bed] WARNING {self.name}: {note}; booting again", flush=True)
        self._watchdog = threading.Timer(self.time_limit, self._time_up)
        self._watchdog.daemon = True
        self._watchdog.start()
        self._wait_socket(self.boot_sock)
        self.qga.close()
        self.qmp.close()
        if self.serial_reader:
            self._reader = threading.Thread(target=self._read_serial, args=(self.proc,), daemon=True)
            self._reader.start()
        return self

    def _spawn(self, argv: list[str], accel: str) -> None:
        for s in (self.qga_sock, self.qmp_sock, self.boot_sock):
            if s.exists():
                s.unlink()
        (self.work / f"{self.name}-qemu-boot{self.boots}.argv").write_text("\n".join(argv) + "\n")
        self._console_note(f"boot {self.boots} of {self.name} ({accel})")
        if self.qemu_log:
            self.qemu_log.close()
        self.qemu_log = open(self.work / f"{self.name}-qemu.log", "ab")
        self.boot_started = time.monotonic()
        self.proc = proc.spawn(argv, stdout=self.qemu_log, stderr=subprocess.STDOUT)
        self.boots += 1

    def _console_note(self, text: str) -> None:
        with open(self.console_log, "a") as c:
            c.write(f"\n===== e2e bed: {text} =====\n")

    def _kernel_reached_init(self) -> bool:
        """False when the console stays silent for EARLY_STALL_S before the kernel
        runs /init: QEMU's multi-threaded TCG has hung a 2-vCPU guest there (once in
        CI, at 0.97 s of kernel time, silent for 900 s). Before /init nothing mounts
        or writes a disk, so killing QEMU loses nothing. True once /init runs, and
        when QEMU exits on its own (the caller's wait reports that)."""
        start = self.console_log.stat().st_size
        seen, quiet_since = start, time.monotonic()
        while self.proc.poll() is None:
            with open(self.console_log, "rb") as c:
                c.seek(start)
                text = c.read()
            if b"Run /init as init process" in text:
                return True
            if start + len(text) != seen:
                seen, quiet_since = start + len(text), time.monotonic()
            elif time.monotonic() - quiet_since > EARLY_STALL_S:
                self.proc.kill()
                self.proc.wait()
                return False
            time.sleep(0.2)
        return True

    def _time_up(self) -> None:
        if self.running():
            with open(self.console_log, "a") as c:
                c.write(f"\n===== e2e bed: hard time limit {self.time_limit}s hit, killing QEMU =====\n")
            self.proc.kill()

    def _wait_socket(self, path: Path, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not path.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"QEMU exited {self.proc.returncode} at start; see {self.work}/{self.name}-qemu.log")
            if time.monotonic() > deadline:
                raise RuntimeError(f"QEMU did not create {path}")
            time.sleep(0.05)

    def _read_serial(self, p: subprocess.Popen) -> None:
        """Host end of the readiness port: every line, time-stamped, to memory and a log."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(str(self.boot_sock))
        except OSError:
            return
        buf = b""
        with s, open(self.serial_log, "a") as log:
            while True:
                try:
                    s.settimeout(1)
                    chunk = s.recv(65536)
                except socket.timeout:
                    if p.poll() is not None:
                        break
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    text = line.decode(errors="replace").rstrip("\r")
                    with self._serial_lock:
                        self.serial_lines.append(text)
                    log.write(f"{time.monotonic() - self.boot_started:8.2f} {text}\n")
                    log.flush()

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def elapsed(self) -> float:
        return time.monotonic() - self.boot_started

    def console(self) -> str:
        return self.console_log.read_text(errors="replace") if self.console_log.exists() else ""

    def wait_console(self, needle: str, timeout: float = 300) -> float:
        """Waits for `needle` on the console of the current boot; returns seconds since boot."""
        deadline = time.monotonic() + timeout
        marker = f"===== e2e bed: boot {self.boots - 1} of {self.name}"
        while time.monotonic() < deadline:
            text = self.console()
            if needle in text[text.rfind(marker):]:
                return self.elapsed()
            if not self.running():
                raise RuntimeError(f"QEMU exited ({self.proc.returncode}) before console showed {needle!r}")
            time.sleep(0.5)
        raise TimeoutError(f"console did not show {needle!r} within {timeout}s")

    def wait_booted(self, timeout: float = 300) -> float:
        """Multi-user reached (the image's marker unit) and the guest agent answers."""
        t = self.wait_console(BOOT_MARKER, timeout)
        self.qga.wait_ready(max(30, timeout - t))
        return t

    def wait_serial(self, pred, timeout: float = 300, since: int = 0):
        """Waits until a readiness-port line satisfies pred(line); returns it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._serial_lock:
                lines = self.serial_lines[since:]
            for line in lines:
                if pred(line):
                    return line
            if not self.running():
                raise RuntimeError(f"QEMU exited ({self.proc.returncode}) while waiting on the readiness port")
            time.sleep(0.2)
        raise TimeoutError(f"no matching readiness-port line within {timeout}s")

    def shutdown(self, timeout: float = 120) -> int:
        """Clean ACPI power-off; kills QEMU (by PID) if the guest does not stop in time."""
        if self.running():
            try:
                self.qmp.command("system_powerdown")
            except (OSError, TimeoutError, ConnectionError, RuntimeError):
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self._finish()

    def kill(self) -> int:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        return self._finish()

    def _finish(self) -> int:
        if self._watchdog:
            self._watchdog.cancel()
        if self._reader:
            self._reader.join(5)
        self.qga.close()
        self.qmp.close()
        return self.proc.returncode if self.proc else 0

    def reboot(self, inject: bool = True, timeout: float = 300) -> float:
        """Power off cleanly and boot again with the SAME disks."""
        self.shutdown()
        self.boot(inject=inject)
        return self.wait_booted(timeout)

    def tail_console(self, lines: int = 80) -> str:
        return "\n".join(self.console().splitlines()[-lines:])
