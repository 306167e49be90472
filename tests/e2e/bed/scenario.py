"""The scenario context: a work dir, the image, registries, disks, ISOs, VMs,
assertions, and cleanup (everything stopped by PID; the work dir kept and the
console tail printed on failure)."""

from __future__ import annotations

import json
import shutil
import struct
import sys
import time
import traceback
from pathlib import Path

from . import image as image_mod
from .iso import make_cred_iso, make_iso
from .disks import make_data_disk, make_data_disk_with_fs
from .registry import GUEST_ADDR, REPO, Registry
from .vm import VM

E2E_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = E2E_DIR.parent.parent
WORK_ROOT = E2E_DIR / "work"
FALLBACK_AGENT_UNIT = E2E_DIR / "bed" / "cosmicac-bootstrap.fallback.service"


class ScenarioFailed(AssertionError):
    pass


def is_dynamic_elf(path: Path) -> bool:
    """True if the ELF has a PT_INTERP (needs a dynamic loader and the build host's libs)."""
    with open(path, "rb") as f:
        h = f.read(64)
        if h[:4] != b"\x7fELF" or h[4] != 2:
            raise ScenarioFailed(f"{path} is not an ELF64 executable")
        phoff, = struct.unpack_from("<Q", h, 32)
        phentsize, phnum = struct.unpack_from("<HH", h, 54)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            if struct.unpack("<I", f.read(4))[0] == 3:
                return True
    return False


def shell_quote_config(value: str) -> str:
    """A value both the original script (bash `source`) and the agent's config
    reader take literally."""
    if "'" not in value:
        return f"'{value}'"
    return '"' + "".join("\\" + c if c in '"\\$`' else c for c in value) + '"'


class Ctx:
    def __init__(self, name: str, agent: Path | None = None, keep: bool = False):
        self.name = name
        self.keep = keep
        self.agent_path = agent
        self.work = WORK_ROOT / name
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        self.t0 = time.monotonic()
        self.metrics: dict[str, float | str] = {}
        self.registries: list[Registry] = []
        self.vms: list[VM] = []
        self.cleanups: list = []  # callables run first by finish (e.g. host-side helper processes)
        self.image = image_mod.get_image()

    # ---- logging / assertions --------------------------------------------
    def step(self, msg: str) -> None:
        print(f"[{self.name} {time.monotonic() - self.t0:7.1f}s] {msg}", flush=True)

    def expect(self, cond, msg: str) -> None:
        if not cond:
            raise ScenarioFailed(msg)

    def metric(self, key: str, value) -> None:
        self.metrics[key] = value
        self.step(f"metric {key} = {value}")

    # ---- fixtures -------------------------------------------------------
    @property
    def agent(self) -> Path:
        if self.agent_path is None:
            raise ScenarioFailed("this scenario needs the agent: pass --agent PATH "
                                 "(the static release binary, dist/cosmicac-bootstrap)")
        p = Path(self.agent_path)
        if not p.is_file():
            raise ScenarioFailed(f"agent binary {p} does not exist; build it "
                                 "(packaging/build-release, or set COSMICAC_E2E_AGENT)")
        if is_dynamic_elf(p):
            raise ScenarioFailed(f"agent binary {p} is dynamically linked; the guest has not got "
                                 "the build host's libraries: use the static release build")
        return p

    def agent_unit(self) -> Path:
        unit = REPO_DIR / "units" / "cosmicac-bootstrap.service"
        return unit if unit.exists() else FALLBACK_AGENT_UNIT

    def registry(self, tags=("v1", "v2"), start: bool = True, **kw) -> Registry:
        reg = Registry(self.work, **kw)
        self.registries.append(reg)
        if start:
            reg.start()
            if tags:
                reg.push_test_images(tags)
        return reg

    def data_disk(self, gib: int = 120, name: str = "data.raw", files: dict[str, bytes] | None = None,
                  partitioned: bool = True) -> Path:
        p = self.work / name
        if files is None:
            return make_data_disk(p, gib)
        return make_data_disk_with_fs(p, gib, files, partitioned=partitioned)

    def cred_iso(self, reg: Registry, token: str | None = None, username: str | None = None,
                 registry: str = GUEST_ADDR, name: str = "cred.iso", label: str = "cfgdata") -> Path:
        return make_cred_iso(self.work / name, registry, username or reg.username,
                             reg.token if token is None else token, label=label)

    def iso(self, name: str, label: str, files: dict[str, bytes]) -> Path:
        return make_iso(self.work / name, label, files)

    @staticmethod
    def config(**keys: str) -> str:
        """/etc/default/docker-bootstrap text; keyword order is kept."""
        return "".join(f"{k}={shell_quote_config(str(v))}\n" for k, v in keys.items())

    @staticmethod
    def image_ref(tag: str = "v1") -> str:
        return f"{GUEST_ADDR}/{REPO}:{tag}"

    def vm(self, registry: Registry | None = None, **kw) -> VM:
        if registry is None and self.registries:
            registry = self.registries[-1]
        kw.setdefault("registry_port", registry.port if registry else None)
        vm = VM(self.work, self.image, name=kw.pop("name", f"vm{len(self.vms)}"), **kw)
        self.vms.append(vm)
        return vm

    # ---- guest inspection (tests only; the agent never uses the docker CLI) --
    def docker_inspect(self, vm: VM, name: str) -> dict | None:
        """`docker inspect NAME` as the Engine API answers it (the same object):
        curl on dockerd's socket costs the TCG guest a quarter of what the
        docker CLI does (0.27 against 0.97 CPU s a call, measured)."""
        r = vm.qga.exec(["curl", "-sf", "--unix-socket", "/run/docker.sock",
                         f"http://docker/containers/{name}/json"], timeout=60)
        if r.exitcode != 0:
            return None
        return json.loads(r.out)

    def wait_container_running(self, vm: VM, name: str, timeout: float = 600) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            info = self.docker_inspect(vm, name)
            if info and info["State"]["Running"]:
                return info
            if not vm.running():
                raise ScenarioFailed("VM stopped while waiting for the container")
            time.sleep(3)
        raise ScenarioFailed(f"container {name} not running within {timeout}s")

    def wait_ready(self, vm: VM, name: str, timeout: float = 900) -> str:
        """Until the readiness port shows "phase":"ready" or the container runs;
        says which came first."""
        deadline = time.monotonic() + timeout
        next_inspect = 0.0
        while time.monotonic() < deadline:
            for line in list(vm.serial_lines):
                if '"phase":"ready"' in line:
                    return "readiness port: " + line
            if time.monotonic() >= next_inspect:
                info = self.docker_inspect(vm, name)
                if info and info["State"]["Running"]:
                    return "container running (docker inspect)"
                next_inspect = time.monotonic() + 5
            if not vm.running():
                raise ScenarioFailed("VM stopped before the agent reported ready")
            time.sleep(0.5)
        raise ScenarioFailed(f"not ready within {timeout}s (no \"phase\":\"ready\" line, "
                             f"container {name} not running)")

    # ---- end --------------------------------------------------------------
    def finish(self, error: BaseException | None) -> int:
        for cleanup in self.cleanups:
            cleanup()
        for vm in self.vms:
            vm.kill()
        for reg in self.registries:
            reg.stop()
        self.metrics["wall_seconds"] = round(time.monotonic() - self.t0, 1)
        (self.work / "metrics.json").write_text(json.dumps(self.metrics, indent=2) + "\n")
        if error is None:
            self.step(f"PASS ({self.metrics['wall_seconds']} s)")
            if not self.keep:
                shutil.rmtree(self.work, ignore_errors=True)
            return 0
        print(f"\n[{self.name}] FAIL: {error}", flush=True)
        if not isinstance(error, ScenarioFailed):
            traceback.print_exception(error, file=sys.stdout)
        for vm in self.vms:
            print(f"\n----- {vm.name}: last console lines ({vm.console_log}) -----")
            print(vm.tail_console(60))
            if vm.serial_lines:
                print(f"----- {vm.name}: readiness port lines -----")
                print("\n".join(vm.serial_lines[-30:]))
        print(f"\n[{self.name}] work dir kept for debugging: {self.work}", flush=True)
        return 1
