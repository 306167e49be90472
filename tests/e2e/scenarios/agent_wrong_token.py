"""The credential ISO carries a wrong token: the agent fails fast with reason
`auth` (no retrying a refusal), `cosmicac-bootstrap status` says so and exits
1, no container is created, and the token is nowhere in the guest's journal."""

import json
import time

from bed import events as ev_mod
from bed.kube_standin import KubeWait
from bed.catalog import scenario

WRONG_TOKEN = "wrong-tok-5b7d1c9e3a"
LOGIN_LIMIT_MS = 60_000


@scenario("agent-wrong-token", timeout=1500)
def agent_wrong_token(t):
    agent = t.agent
    reg = t.registry(tags=("v1",))
    vm = t.vm(cred_iso=t.cred_iso(reg, token=WRONG_TOKEN),
              config=t.config(IMG=t.image_ref("v1"), NAME="inference"),
              agent_binary=agent, units=[t.agent_unit()])
    vm.boot()
    kube = KubeWait(t, vm)  # `cosmicac-vmi wait inference` follows this boot's console through the stand-in
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    line = vm.wait_serial(lambda l: '"phase":"failed"' in l or '"phase":"ready"' in l, 900)
    t.metric("boot_to_failed_s", round(vm.elapsed(), 1))
    ev = json.loads(line)
    t.expect(ev["phase"] == "failed", f"expected failed, got {line}")
    t.expect(ev.get("reason") == "auth", f"failed with reason {ev.get('reason')!r}, expected auth: {line}")

    # The login step: started -> failed(auth) within the limit, by the agent's own clock.
    events = [json.loads(l) for l in vm.serial_lines if l.startswith("{")]
    login = [e for e in events if e.get("step") == "login"]
    started = [e for e in login if e.get("status") == "started"]
    failed = [e for e in login if e.get("status") == "failed"]
    t.expect(started and failed, f"login step events missing: {login}")
    t.expect(failed[0].get("reason") == "auth", f"login failed with {failed[0].get('reason')!r}")
    took = failed[0]["mono_ms"] - started[0]["mono_ms"]
    t.metric("login_started_to_failed_ms", took)
    t.expect(0 <= took <= LOGIN_LIMIT_MS, f"login took {took} ms to fail (limit {LOGIN_LIMIT_MS}): it retried a refusal")
    for e in events:
        t.expect(e.get("step") != "pull" or e.get("status") == "skipped",
                 f"a pull was attempted with refused credentials: {e}")

    # Restart=on-failure may start a new run 20 s later (exit 1); while that run is
    # still before its own login step, status says running: ask again.
    deadline = time.monotonic() + 90
    while True:
        r = vm.qga.exec(["/usr/local/bin/cosmicac-bootstrap", "status"])
        if r.out.startswith("failed") or time.monotonic() > deadline:
            break
        time.sleep(1)
    t.expect(r.exitcode == 1, f"status exited {r.exitcode}, expected 1: {r.out.strip()}")
    t.expect(r.out.startswith("failed reason=auth"), f"status printed {r.out.strip()!r}")
    t.step("status: " + r.out.strip())

    names = vm.qga.exec(["docker", "ps", "-a", "--format", "{{.Names}}"], check=True).out.split()
    t.expect(names == [], f"containers exist after an auth failure: {names}")
    t.metric("unit_restarts", vm.qga.exec(["systemctl", "show", "-P", "NRestarts", "cosmicac-bootstrap"]).out.strip())

    everything = vm.qga.exec(["journalctl", "--no-pager", "-o", "export"], timeout=120).out
    t.expect(len(everything) > 10000, "journal export suspiciously short")
    t.expect("401" in everything or "auth" in everything, "the journal says nothing about the refusal")
    t.expect(WRONG_TOKEN not in everything, "the wrong token appears in the guest's journal")
    state = vm.qga.read_file("/run/cosmicac-bootstrap/state.json").decode()
    t.expect(WRONG_TOKEN not in state, "the token appears in the state file")

    # The serial console (what KubeVirt logs) says the same: login failed, auth.
    bid = ev_mod.boot_id(vm)
    port = [e for e in ev_mod.parse(vm.serial_lines) if e.get("boot_id") == bid]
    con = ev_mod.expect_console_mirror(t, vm, port, secret=WRONG_TOKEN)
    failed_lines = [e for e in con if e.get("status") == "failed"]
    t.expect(failed_lines and failed_lines[0].get("step") == "login" and failed_lines[0].get("reason") == "auth"
             and failed_lines[0].get("phase") == "failed",
             f"the console's first failed line is not login/auth: {failed_lines[:1]}; saw {ev_mod.summary(con)}")
    t.expect(all(e.get("step") != "pull" or e.get("status") == "skipped" for e in con),
             f"the console shows a pull: {ev_mod.summary(con)}")
    t.step(f"console: {failed_lines[0]['step']} failed ({failed_lines[0]['reason']}): "
           f"{failed_lines[0].get('message', '')[:80]}; kept as {ev_mod.keep_console(t, vm)}")

    # `cosmicac-vmi wait`: the same failure, read from the console
    # log through the (stand-in) API, exits 1 with reason auth within 10 s of
    # the console showing it — not at its 20-minute timeout.
    rc = kube.finish(120)
    t.expect(rc == 1, f"cosmicac-vmi wait exited {rc}, expected 1:\n{kube.transcript()}")
    t.expect("bootstrap failed: reason=auth step=login message=" in kube.stderr,
             f"cosmicac-vmi wait did not name reason auth:\n{kube.transcript()}")
    t.expect("agent [5/8] login failed: reason=auth" in kube.output(), f"no login failure line:\n{kube.transcript()}")
    t.expect(WRONG_TOKEN not in kube.transcript(), "the token appears in cosmicac-vmi wait's output")
    t.expect(kube.console_final_at is not None, "the console never showed the failed line to the watcher")
    lag = kube.exited_at - kube.console_final_at
    t.metric("console_failed_to_wait_exit_s", round(lag, 2))
    t.expect(lag <= 10, f"cosmicac-vmi wait exited {lag:.1f} s after the console showed the failure (limit 10 s)")
    ev_mod.keep_capture(f"{t.name}-wait.txt", kube.transcript())
    t.step(f"cosmicac-vmi wait: exit 1, {lag:.1f} s after the console's failed line")
