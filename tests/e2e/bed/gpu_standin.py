"""Test fixture, not product: a stand-in `nvidia-smi` and InfiniBand sysfs for
the agent's GPU health check, injected with the config (no image rebuild).

The stand-in answers with the recorded outputs of an 8 x H100 SXM VM
(tests/unit/gpu/recorded), chosen by the word in MODE_FILE, which a scenario
rewrites through QGA:
  healthy       every GPU listed, fabric Completed/Success
  fabric-wait   fabric In Progress on the first look of the boot, Completed after
  fabric-failed fabric Completed with a failure status on GPU 6
  one-missing   nvidia-smi lists 7 GPUs
The agent finds it through the operator keys GPU_CHECK_NVIDIA_SMI and
GPU_CHECK_SYSFS (docs/configuration.md)."""

from bed.scenario import REPO_DIR

ROOT = "/opt/cosmicac-e2e-gpu"
SMI = f"{ROOT}/nvidia-smi"
SYSFS = f"{ROOT}/sys"
MODE_FILE = f"{ROOT}/mode"
IB_STATE = f"{SYSFS}/class/infiniband/mlx5_0/ports/1/state"
RECORDED = REPO_DIR / "tests" / "unit" / "gpu" / "recorded"

SCRIPT = f"""#!/bin/sh
# e2e stand-in for nvidia-smi (tests/e2e/bed/gpu_standin.py)
d={ROOT}
mode=$(cat $d/mode 2>/dev/null)
case "$1" in
  --query-gpu=*)
    if [ "$mode" = one-missing ]; then cat $d/query-gpu-one-missing.csv; else cat $d/query-gpu-healthy.csv; fi ;;
  -q)
    case "$mode" in
      fabric-failed) cat $d/smi-q-fabric-failure.txt ;;
      fabric-wait)
        mkdir -p /run/cosmicac-e2e-gpu
        if [ -e /run/cosmicac-e2e-gpu/looked ]; then cat $d/smi-q-fabric-completed.txt
        else : > /run/cosmicac-e2e-gpu/looked; cat $d/smi-q-fabric-in-progress.txt; fi ;;
      *) cat $d/smi-q-fabric-completed.txt ;;
    esac ;;
  *) echo "stand-in nvidia-smi: unexpected arguments: $*"; exit 2 ;;
esac
"""


def files(mode: str) -> dict[str, tuple[int, bytes]]:
    """What to add to vm.files: the stand-in, its recorded outputs, one IB port Active."""
    out = {SMI.lstrip("/"): (0o755, SCRIPT.encode()),
           MODE_FILE.lstrip("/"): (0o644, mode.encode() + b"\n"),
           IB_STATE.lstrip("/"): (0o644, b"4: ACTIVE\n")}
    for name in ("query-gpu-healthy.csv", "query-gpu-one-missing.csv", "smi-q-fabric-completed.txt",
                 "smi-q-fabric-in-progress.txt", "smi-q-fabric-failure.txt"):
        out[f"{ROOT}/{name}".lstrip("/")] = (0o644, (RECORDED / name).read_bytes())
    return out


def files_as_installed(mode: str) -> dict[str, tuple[int, bytes]]:
    """files(mode), with the stand-in also where the NVIDIA driver installs
    nvidia-smi (/usr/bin), for a guest whose config the host renders and so
    carries no operator key pointing elsewhere: the agent finds it by its own
    default lookup."""
    out = files(mode)
    out["usr/bin/nvidia-smi"] = (0o755, SCRIPT.encode())
    return out


def config_keys() -> dict[str, str]:
    """The config keys that point the check at the stand-in (8 GPUs, 1 IB device)."""
    return dict(GPU_COUNT="8", IB_COUNT="1", GPU_CHECK_NVIDIA_SMI=SMI, GPU_CHECK_SYSFS=SYSFS)


def write(vm, path: str, text: str) -> None:
    r = vm.qga.exec(["/usr/bin/tee", path], stdin=text.encode())
    if r.exitcode != 0:
        raise AssertionError(f"cannot write {path} in the guest: {r.err.strip()}")


def set_mode(vm, mode: str) -> None:
    write(vm, MODE_FILE, mode + "\n")


def set_ib_state(vm, state: str) -> None:
    write(vm, IB_STATE, state + "\n")


# The older drivers' spelling (no "PCI:"), to fit iptables' 29-byte --log-prefix.
XID_79_PREFIX = "NVRM: Xid (0000:0f:00): 79, "


def inject_xid(vm) -> None:
    """A kernel-facility record that begins with the driver's Xid 79, as only the
    kernel can write one (a line written to /dev/kmsg is facility `user`, never
    an Xid: gpu/xid.hpp): a netfilter LOG rule's prefix, added by root in the
    guest's own network namespace, logged for one UDP packet to 127.0.0.1:9.
    The record sticks until the next boot."""
    rule = ["OUTPUT", "-o", "lo", "-p", "udp", "--dport", "9", "-j", "LOG", "--log-level", "4",
            "--log-prefix", XID_79_PREFIX]
    r = vm.qga.exec(["/usr/sbin/iptables", "-I", *rule])
    if r.exitcode != 0:
        raise AssertionError(f"iptables -I (the Xid's LOG rule) in the guest: {r.err.strip()}")
    try:
        r = vm.qga.exec(["/bin/bash", "-c", "echo xid > /dev/udp/127.0.0.1/9"])
        if r.exitcode != 0:
            raise AssertionError(f"no packet for the Xid's LOG rule: {r.err.strip()}")
    finally:
        vm.qga.exec(["/usr/sbin/iptables", "-D", *rule])
