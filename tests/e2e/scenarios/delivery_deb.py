"""The .deb delivery path: a guest without the agent, `dpkg -i` of
dist/cosmicac-bootstrap_*.deb, the config written, a reboot -> the enabled unit
runs and the VM becomes ready; then `dpkg -r` removes binary and unit cleanly
(the container, owned by dockerd, may keep running). The package enables the
unit but does not start it on install (it formats disks), hence one reboot."""

from bed.catalog import scenario
from bed.scenario import REPO_DIR

BIN = "/usr/local/bin/cosmicac-bootstrap"
UNIT_FILE = "/lib/systemd/system/cosmicac-bootstrap.service"
CONFIG = "/etc/default/docker-bootstrap"


@scenario("delivery-deb", timeout=1800, needs_agent=False)
def delivery_deb(t):
    debs = sorted((REPO_DIR / "dist").glob("cosmicac-bootstrap_*_amd64.deb"))
    t.expect(len(debs) == 1, f"expected one dist/cosmicac-bootstrap_*_amd64.deb, found {debs}: run packaging/build-release")
    reg = t.registry(tags=("v1",))
    config = t.config(IMG=t.image_ref("v1"), NAME="inference", ENVS="MODEL_NAME=tiny-llm")
    vm = t.vm(cred_iso=t.cred_iso(reg),
              files={"root/cosmicac-bootstrap.deb": (0o644, debs[0].read_bytes()),
                     "root/docker-bootstrap": (0o644, config.encode())})
    vm.boot()
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    q = vm.qga
    t.expect(q.exec(["test", "-e", BIN]).exitcode != 0, "the guest already has the agent")

    r = q.exec(["dpkg", "-i", "/root/cosmicac-bootstrap.deb"], timeout=180)
    t.expect(r.exitcode == 0, f"dpkg -i exited {r.exitcode}: {r.err.strip()[-1500:]}")
    status = q.exec(["dpkg-query", "-W", "-f", "${Status} ${Version}", "cosmicac-bootstrap"]).out
    t.expect(status.startswith("install ok installed"), f"dpkg status: {status!r}")
    en = q.exec(["systemctl", "is-enabled", "cosmicac-bootstrap"]).out.strip()
    t.expect(en == "enabled", f"unit is {en!r} after install, expected enabled")
    t.expect(q.exec(["test", "-x", BIN]).exitcode == 0, f"{BIN} missing or not executable")
    # ENVS may hold keys: the package ships its config 0600 root:root.
    mode = q.exec(["stat", "-c", "%a %U:%G", CONFIG]).out.strip()
    t.expect(mode == "600 root:root", f"{CONFIG} installed as {mode!r}, expected '600 root:root'")
    # The admin's config replaces the package's commented default, here too
    # widely readable: the agent warns (not fatal), naming the fix.
    q.exec(["install", "-m", "0644", "/root/docker-bootstrap", CONFIG], check=True)
    plan = q.exec([BIN, "plan"])
    t.expect(plan.exitcode == 0, f"cosmicac-bootstrap plan exited {plan.exitcode}: {plan.err.strip()[-800:]}")
    t.expect(f"chmod 600 {CONFIG}" in plan.err, f"plan did not warn about the 0644 config: {plan.err.strip()[-800:]}")

    since = len(vm.serial_lines)
    t.metric("reboot_to_multi_user_s", round(vm.reboot(inject=False, timeout=600), 1))
    line = vm.wait_serial(lambda l: '"phase":"ready"' in l or '"phase":"failed"' in l, 900, since=since)
    t.metric("reboot_to_ready_s", round(vm.elapsed(), 1))
    t.expect('"phase":"ready"' in line, f"agent did not become ready: {line}")
    q = vm.qga
    n = q.exec(["systemctl", "show", "-P", "NRestarts", "cosmicac-bootstrap"]).out.strip()
    t.expect(n == "0", f"unit restarted {n} times")
    info = t.docker_inspect(vm, "inference")
    t.expect(info is not None and info["State"]["Running"], "container inference not running")
    t.expect("MODEL_NAME=tiny-llm" in info["Config"]["Env"], "container env lacks MODEL_NAME")
    journal = q.exec(["journalctl", "-b", "-u", "cosmicac-bootstrap", "-o", "cat", "--no-pager"]).out
    t.expect(f"chmod 600 {CONFIG}" in journal, "no journal warning about the group/world-readable config")

    r = q.exec(["dpkg", "-r", "cosmicac-bootstrap"], timeout=180)
    t.expect(r.exitcode == 0, f"dpkg -r exited {r.exitcode}: {r.err.strip()[-1500:]}")
    t.expect(q.exec(["test", "-e", BIN]).exitcode != 0, f"{BIN} still there after dpkg -r")
    t.expect(q.exec(["test", "-e", UNIT_FILE]).exitcode != 0, f"{UNIT_FILE} still there after dpkg -r")
    show = dict(l.split("=", 1) for l in q.exec(
        ["systemctl", "show", "-p", "LoadState,ActiveState,UnitFileState", "cosmicac-bootstrap"]).out.split())
    t.expect(show.get("ActiveState") == "inactive", f"unit still {show.get('ActiveState')} after removal")
    t.expect(show.get("LoadState") in ("not-found", "masked"), f"systemd still loads the unit: {show}")
    failed = q.exec(["systemctl", "--failed", "--no-legend", "--plain"]).out.strip()
    t.expect("cosmicac" not in failed, f"failed units after removal: {failed}")
    status = q.exec(["dpkg-query", "-W", "-f", "${Status}", "cosmicac-bootstrap"]).out
    t.expect(status in ("deinstall ok config-files", "unknown ok not-installed"), f"dpkg status after -r: {status!r}")
    left = q.exec(["dpkg-query", "-L", "cosmicac-bootstrap"]).out.split()
    # dpkg keeps the conffile and the shared directories it could not remove (/usr, ...).
    kept = [p for p in left if p != "/etc/default/docker-bootstrap" and q.exec(["test", "-d", p]).exitcode != 0]
    t.expect(not kept, f"files still registered after dpkg -r (only the conffile may stay): {kept}")
    running = t.docker_inspect(vm, "inference")
    t.step(f"removed: {show}; container {'still running' if running and running['State']['Running'] else 'gone'}")
