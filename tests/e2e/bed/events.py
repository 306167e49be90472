"""Readiness-port events as the host sees them (README, "Readiness", protocol
v1): parse the raw lines, pick one boot's run, check the step graph's order,
and look inside the guest for leaked secrets. Additive helpers for the agent
scenarios."""

from __future__ import annotations

import json
import time

from .scenario import Ctx, ScenarioFailed
from .vm import VM

STEPS = ("config", "disk", "docker", "credentials", "login", "pull", "container", "ready")
AGENT = "/usr/local/bin/cosmicac-bootstrap"


def parse(lines: list[str]) -> list[dict]:
    """Every v1 JSON event line, in arrival order (anything else skipped)."""
    out = []
    for line in lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict) and ev.get("v") == 1:
            out.append(ev)
    return out


def step_events(events: list[dict]) -> list[dict]:
    """Step events in arrival order, with every `state` snapshot expanded into
    the step events it stands for (the agent sends one on each connect instead
    of the events written before the host was seen; README, "Readiness")."""
    out = []
    for e in events:
        if e.get("step") in STEPS:
            out.append(e)
        elif e.get("step") == "state":
            seen = {(x.get("step"), x.get("status")) for x in out}
            for s in e.get("steps", []):
                implied = {"started": ["started"], "progress": ["started"], "done": ["started", "done"],
                           "failed": ["started", "failed"], "skipped": ["skipped"]}.get(s.get("status"), [])
                for st in implied:
                    if (s["step"], st) not in seen:
                        out.append({**s, "status": st, "from_snapshot": e["seq"]})
    return out


def boot_id(vm: VM) -> str:
    return vm.qga.read_file("/proc/sys/kernel/random/boot_id").decode().strip()


def this_boot(vm: VM, since: int = 0) -> list[dict]:
    """Events written during the guest's current boot, from raw line `since` on."""
    bid = boot_id(vm)
    return [e for e in parse(vm.serial_lines[since:]) if e.get("boot_id") == bid]


def wait_event(vm: VM, pred, timeout: float, since: int = 0) -> dict:
    """Waits for a parsed event matching pred(ev); returns it."""
    def line_pred(line: str) -> bool:
        evs = parse([line])
        return bool(evs) and pred(evs[0])
    return parse([vm.wait_serial(line_pred, timeout, since)])[0]


def wait_final(vm: VM, timeout: float, since: int = 0) -> dict:
    """The first failed step event or the ready event."""
    return wait_event(vm, lambda e: (e.get("step") in STEPS and e.get("status") == "failed")
                      or (e.get("step") == "ready" and e.get("status") == "done"), timeout, since)


def index_of(events: list[dict], step: str, status: str) -> int:
    for i, e in enumerate(step_events(events)):
        if e.get("step") == step and e.get("status") == status:
            return i
    return -1


def statuses(events: list[dict], step: str) -> list[str]:
    return [e["status"] for e in step_events(events) if e.get("step") == step]


def summary(events: list[dict]) -> str:
    return " ".join(f"{e['step']}:{e.get('status')}" for e in step_events(events))


def expect_order(t: Ctx, events: list[dict], chain: list[tuple[str, str]]) -> None:
    """Each (step, status) is present and comes after the previous one."""
    prev, prev_i = None, -1
    for step, status in chain:
        i = index_of(events, step, status)
        t.expect(i >= 0, f"no {step}:{status} event on the readiness port; saw: {summary(events)}")
        if i <= prev_i:
            t.expect(False, f"{step}:{status} came before {prev[0]}:{prev[1]}; saw: {summary(events)}")
        prev, prev_i = (step, status), i


def expect_seq_increasing(t: Ctx, events: list[dict]) -> None:
    seqs = [e["seq"] for e in events]
    t.expect(all(a < b for a, b in zip(seqs, seqs[1:])),
             f"seq not strictly increasing within one run: {seqs}")


def status_cmd(vm: VM):
    """`cosmicac-bootstrap status` in the guest: (exit code, its line)."""
    r = vm.qga.exec([AGENT, "status"], timeout=30)
    return r.exitcode, r.out.strip()


def scan_for_secret(t: Ctx, vm: VM, secret: str, control: str | None = None) -> None:
    """The secret appears nowhere in the journal, /etc, /var (docker's layer
    store aside; its config and json files included), /root, /run or /tmp.
    The secret travels on stdin, so no file in the guest ever holds it.
    `control`: a path that must hold it (e.g. the credential CD-ROM's device),
    proving the scan can find it at all."""
    script = (
        'read -r T; rc=0; '
        + (f'grep -q -a -F -- "$T" {control} || {{ echo "CONTROL: not found in {control}"; exit 3; }}; '
           if control else '') +
        'hits=$(grep -r -l -F -D skip --exclude-dir=overlay2 -- "$T" /etc /var /root /run /tmp 2>/dev/null); '
        '[ -n "$hits" ] && { echo "FILES:"; echo "$hits"; rc=1; }; '
        'n=$(journalctl --no-pager -o verbose 2>/dev/null | grep -c -F -- "$T"); '
        '[ "$n" != 0 ] && { echo "JOURNAL: $n lines"; rc=1; }; '
        'ls /var/lib/docker >/dev/null 2>&1 || { echo "NO /var/lib/docker"; rc=2; }; '
        'exit $rc')
    r = vm.qga.exec(["/bin/sh", "-c", script], timeout=300, stdin=(secret + "\n").encode())
    t.expect(r.exitcode not in (2, 3), f"secret scan would prove nothing: {r.out.strip()}")
    t.expect(r.exitcode == 0, f"the registry token was found in the guest: {r.out.strip()[:2000]}")


def wait_unit_substate(vm: VM, unit: str, states: tuple[str, ...], timeout: float) -> str:
    """Until the unit's SubState is one of `states` (e.g. the run has ended:
    auto-restart, failed, dead); returns it."""
    deadline = time.monotonic() + timeout
    state = "?"
    while time.monotonic() < deadline:
        state = vm.qga.exec(["systemctl", "show", "-P", "SubState", unit]).out.strip()
        if state in states:
            return state
        time.sleep(2)
    raise ScenarioFailed(f"{unit} still {state} after {timeout}s (wanted {states})")
