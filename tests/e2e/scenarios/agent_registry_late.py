"""The registry is down at boot and comes back 60 s after the agent's docker
step is done: the agent rides it out within its retry budget and becomes ready
in the same run (NRestarts 0). The readiness port's host end is read by the
project's own reader, `cosmicac-vmi wait --serial`, started late (30 s after
the agent's first event): it gets a `state` snapshot first and exits 0 on ready."""

import json
import time

from bed.delivery import SerialWaiter
from bed.catalog import scenario

STATE = "/run/cosmicac-bootstrap/state.json"
LATE_S = 30
DOWN_AFTER_DOCKER_S = 60


def guest_state(vm) -> dict | None:
    r = vm.qga.exec(["cat", STATE])
    if r.exitcode != 0 or not r.out.strip():
        return None
    try:
        return json.loads(r.out)
    except ValueError:
        return None


def step_status(state: dict | None, step: str) -> str | None:
    for s in (state or {}).get("steps", []):
        if s.get("step") == step:
            return s.get("status")
    return None


@scenario("agent-registry-late", timeout=2100)
def agent_registry_late(t):
    agent = t.agent
    reg = t.registry(tags=("v1",))
    reg.stop()  # same port and storage when it comes back
    vm = t.vm(registry=reg, serial_reader=False, cred_iso=t.cred_iso(reg),
              config=t.config(IMG=t.image_ref("v1"), NAME="inference"),
              agent_binary=agent, units=[t.agent_unit()])
    vm.boot()
    # Not wait_booted(): multi-user.target waits for the agent's READY=1 (Type=notify),
    # which cannot come while the registry is down. The guest agent starts early.
    vm.qga.wait_ready(600)
    t.metric("boot_to_qga_s", round(vm.elapsed(), 1))

    # Nobody reads the port yet. Watch the agent through its state file (QGA).
    deadline = time.monotonic() + 600
    first_seen = docker_done = None
    waiter = None
    try:
        while docker_done is None or waiter is None:
            t.expect(time.monotonic() < deadline, "agent did not start / finish its docker step within 600 s")
            st = guest_state(vm)
            now = time.monotonic()
            if st is not None and first_seen is None:
                first_seen = now
                t.step(f"agent running (state file: phase {st.get('phase')})")
            if docker_done is None and step_status(st, "docker") == "done":
                docker_done = now
                t.step("docker step done; the registry stays down for 60 s more")
            if st is not None and st.get("phase") in ("failed", "ready"):
                t.expect(False, f"agent reached {st.get('phase')} with the registry down: {st}")
            if waiter is None and first_seen is not None and now - first_seen >= LATE_S:
                t.step(f"starting cosmicac-vmi wait --serial {LATE_S} s after the agent's first event")
                waiter = SerialWaiter(vm.boot_sock, "15m", log=t.work / "vmi-wait.log")
            time.sleep(2)

        while time.monotonic() < docker_done + DOWN_AFTER_DOCKER_S:
            st = guest_state(vm)
            t.expect(st is not None and st.get("phase") == "running",
                     f"agent left running while the registry was down: {st}")
            time.sleep(5)
        t.expect(waiter.proc.poll() is None, f"the reader exited early: {waiter.stderr}")
        reg.start()
        back = time.monotonic()
        t.step("registry back")

        rc = waiter.wait_exit(900)
        t.metric("registry_back_to_ready_s", round(time.monotonic() - back, 1))
        events = waiter.snapshot()
        t.expect(rc == 0, f"cosmicac-vmi wait --serial exited {rc}: {waiter.stderr.strip()[-800:]}")
        t.expect(events, "the reader printed no event")
        t.expect(events[0].get("step") == "state",
                 f"the late reader's first event is not a state snapshot: {events[0]}")
        snap_steps = {s["step"]: s["status"] for s in events[0].get("steps", [])}
        t.expect(snap_steps.get("docker") == "done" and snap_steps.get("config") == "done",
                 f"the snapshot lacks what happened before the reader came: {events[0]}")
        t.expect(events[-1].get("phase") == "ready", f"last event is not ready: {events[-1]}")
        t.expect(not waiter.bad_lines, f"reader printed non-JSON lines: {waiter.bad_lines[:3]}")
        t.step("reader: " + waiter.stderr.strip().splitlines()[-1] if waiter.stderr.strip() else "reader: exit 0")
    finally:
        if waiter is not None:
            waiter.stop()

    q = vm.qga
    n = q.exec(["systemctl", "show", "-P", "NRestarts", "cosmicac-bootstrap"]).out.strip()
    t.expect(n == "0", f"the unit was restarted {n} times; the agent should have retried by itself")
    t.expect(q.exec(["systemctl", "is-active", "cosmicac-bootstrap"]).out.strip() == "active", "unit not active")
    journal = q.exec(["journalctl", "-b", "-u", "cosmicac-bootstrap", "--no-pager", "-o", "cat"]).out
    retries = [l for l in journal.splitlines() if "retrying in" in l]
    t.expect(retries, "no retry logged while the registry was down:\n" + journal[-2000:])
    t.metric("retries_logged", len(retries))
    info = t.docker_inspect(vm, "inference")
    t.expect(info is not None and info["State"]["Running"], "container inference not running")
    r = q.exec(["/usr/local/bin/cosmicac-bootstrap", "status"])
    t.expect(r.exitcode == 0 and r.out.startswith("ready"), f"status: {r.exitcode} {r.out.strip()}")
