"""Readiness-port events as the host sees them (docs/events.md, "Event lines
(protocol v1)"): parse the raw lines, pick one boot's run, check the step
graph's order, and look inside the guest for leaked secrets. Additive helpers
for the agent scenarios."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

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
    of the events written before the host was seen; docs/events.md,
    "Reconnects and the port")."""
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


def expect_final(t: Ctx, vm: VM, step: str = "ready", *, reason: str | None = None, since: int = 0,
                 metric: str | None = "boot_to_ready_s", timeout: float = 900, what: str = "the run") -> dict:
    """Waits for this run's outcome (the first failed step or ready, from raw
    line `since` on), records the time since boot as `metric`, and checks the
    outcome: `step` done when step is "ready", else `step` failed with `reason`.
    Returns the final event."""
    final = wait_final(vm, timeout, since)
    if metric:
        t.metric(metric, round(vm.elapsed(), 1))
    wanted = "ready:done" if step == "ready" else f"{step}:failed {reason or ''}".rstrip()
    ok = final["step"] == step and (step == "ready" or (final["status"] == "failed" and final.get("reason") == reason))
    t.expect(ok, f"{what}: expected {wanted}, got {final['step']}:{final['status']} "
                 f"({final.get('reason')}: {final.get('message')})")
    return final


def boot_to_final(t: Ctx, vm: VM, step: str = "ready", **kw) -> dict:
    """The block the agent scenarios open with: boot, wait for multi-user
    (metric boot_to_multi_user_s), then expect_final(t, vm, step, **kw)."""
    vm.boot()
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    return expect_final(t, vm, step, **kw)


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


# ---- the serial console (docs/events.md, "The serial console") --------------
# The agent mirrors each event to ttyS0 as `cosmicac-bootstrap v1 <event JSON>`;
# the bed's QEMU writes ttyS0 to vm.console_log, among the kernel's, systemd's
# and getty's output. The reader below mirrors readiness/console_line.cpp:
# a line whose first bytes are the prefix (the kernel's lines start with their
# timestamp, whatever a process made it print), a trailing "\r" dropped, one
# v1 event; other lines are not ours.
CONSOLE_PREFIX = "cosmicac-bootstrap v1 "
CAPTURES = Path(__file__).resolve().parent.parent / "work" / "captures"


def console_events(text: str) -> tuple[list[dict], int]:
    """(agent events in console order, lines that had the prefix but did not parse)."""
    out, bad = [], 0
    for line in text.split("\n"):
        if not line.startswith(CONSOLE_PREFIX):
            continue
        body = line[len(CONSOLE_PREFIX):].rstrip("\r")
        try:
            ev = json.loads(body)
        except ValueError:
            bad += 1
            continue
        if not isinstance(ev, dict) or ev.get("v") != 1 or "seq" not in ev or "step" not in ev:
            bad += 1
            continue
        out.append(ev)
    return out, bad


def console_this_boot(vm: VM) -> tuple[list[dict], int]:
    """The console's agent events of the guest's current boot (by boot_id)."""
    bid = boot_id(vm)
    evs, bad = console_events(vm.console())
    return [e for e in evs if e.get("boot_id") == bid], bad


def wait_console_final(vm: VM, timeout: float = 60) -> list[dict]:
    """Until this boot's console shows a ready or failed line; its events then.
    The console trails the port a little (a 115200-baud UART, shared)."""
    deadline = time.monotonic() + timeout
    while True:
        evs, _ = console_this_boot(vm)
        if any(e.get("phase") in ("ready", "failed") and e.get("status") in ("done", "failed") for e in evs):
            return evs
        if time.monotonic() > deadline:
            return evs
        time.sleep(1)


def keep_capture(name: str, text: str) -> Path:
    """Text kept under work/captures (which a fresh clone does not have yet),
    outside the scenario's work dir that a passing run removes."""
    CAPTURES.mkdir(parents=True, exist_ok=True)
    dest = CAPTURES / name
    dest.write_text(text)
    return dest


def keep_console(t: Ctx, vm: VM) -> Path:
    """A copy of the console log outside the scenario's work dir (which a
    passing run removes), for readers of the console format (host side)."""
    CAPTURES.mkdir(parents=True, exist_ok=True)
    dest = CAPTURES / f"{t.name}-{vm.name}-console.log"
    shutil.copyfile(vm.console_log, dest)
    return dest


def expect_console_mirror(t: Ctx, vm: VM, port_events: list[dict], secret: str | None = None) -> list[dict]:
    """The console carries this boot's run: parseable lines, seq increasing
    per run, each line the same event the port carried under that seq,
    heartbeats at most one per 30 s, and no secret."""
    evs = wait_console_final(vm)
    _, bad = console_this_boot(vm)
    t.expect(evs, "no agent lines (prefix 'cosmicac-bootstrap v1 ') on the serial console of this boot")
    t.expect(bad == 0, f"{bad} console lines with the agent's prefix did not parse")
    by_seq = {e["seq"]: e for e in port_events}
    for e in evs:
        twin = by_seq.get(e["seq"])
        if twin is not None and e.get("mono_ms") == twin.get("mono_ms"):
            t.expect(e == twin, f"console and port differ for seq {e['seq']}: {e} vs {twin}")
    beats = [e["mono_ms"] for e in evs if e.get("step") == "heartbeat"]
    t.expect(all(b - a >= 29_900 for a, b in zip(beats, beats[1:])),
             f"console heartbeats closer than 30 s: {beats}")
    if secret:
        t.expect(secret not in vm.console(), "the registry token appears on the serial console")
    return evs
