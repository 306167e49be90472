"""The .deb delivery path: a guest without the agent, an older package's
0644 conffile edited by the admin, then `dpkg -i` of
dist/cosmicac-bootstrap_*.deb (an upgrade), a reboot -> the enabled units run
and the VM becomes ready; then `dpkg -r` removes binary, units and drop-in
cleanly (the container, owned by dockerd, may keep running). The package
enables the units but does not start them on install (they format disks),
hence one reboot. A blank data disk and MNT: the .deb's disk unit and docker's
drop-in bind the data disk's docker/ over /var/lib/docker before dockerd
starts at that reboot, so the main unit's disk step finds the store
bound and never restarts dockerd. The readiness probe cosmicac-vmi renders runs
the bare name `cosmicac-bootstrap`, which qemu-ga must resolve to /usr/sbin here."""

import hashlib
import subprocess

from bed import checks, events
from bed.catalog import scenario
from bed.scenario import REPO_DIR

BIN = "/usr/sbin/cosmicac-bootstrap"
UNIT_FILE = "/lib/systemd/system/cosmicac-bootstrap.service"
DISK_UNIT = "cosmicac-bootstrap-disk.service"
DISK_UNIT_FILE = f"/lib/systemd/system/{DISK_UNIT}"
DROPIN_FILE = "/lib/systemd/system/docker.service.d/cosmicac-data-disk.conf"
GROW_UNIT = "cosmicac-bootstrap-grow.service"
GROW_RULES_FILE = "/lib/udev/rules.d/60-cosmicac-bootstrap-grow.rules"
# systemd names the drop-in by the path it found it at: /usr/lib on a merged-/usr guest.
DROPIN_SEEN = {DROPIN_FILE, "/usr" + DROPIN_FILE}
DATA_SERIAL = "pvc-data"
CONFIG = "/etc/default/docker-bootstrap"
PROBE = ["cosmicac-bootstrap", "status"]  # host/render/manifests.cpp's readinessProbe.exec.command


def old_package(t) -> bytes:
    """What packages before 0.1.0-1 left behind, reduced to the part that matters
    on upgrade: version 0.1.0, the same default config as a 0644 conffile."""
    stage = t.work / "old-deb"
    (stage / "DEBIAN").mkdir(parents=True)
    (stage / "etc/default").mkdir(parents=True)
    conf = stage / "etc/default/docker-bootstrap"
    conf.write_bytes((REPO_DIR / "packaging" / "docker-bootstrap.default").read_bytes())
    conf.chmod(0o644)
    (stage / "DEBIAN/control").write_text(
        "Package: cosmicac-bootstrap\nVersion: 0.1.0\nArchitecture: amd64\n"
        "Maintainer: e2e bed <e2e@cosmicac.invalid>\nDescription: older package (e2e bed)\n")
    (stage / "DEBIAN/conffiles").write_text(f"{CONFIG}\n")
    out = t.work / "old.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(stage), str(out)], check=True,
                   capture_output=True)
    return out.read_bytes()


@scenario("delivery-deb", timeout=1800, needs_agent=False)
def delivery_deb(t):
    debs = sorted((REPO_DIR / "dist").glob("cosmicac-bootstrap_*_amd64.deb"))
    t.expect(len(debs) == 1, f"expected one dist/cosmicac-bootstrap_*_amd64.deb, found {debs}: run packaging/build-release")
    reg = t.registry(tags=("v1",))
    config = t.config(MNT="/data", IMG=t.image_ref("v1"), NAME="inference", ENVS="MODEL_NAME=tiny-llm")
    vm = t.vm(cred_iso=t.cred_iso(reg), data_disk=t.data_disk(120), data_serial=DATA_SERIAL,
              files={"root/cosmicac-bootstrap.deb": (0o644, debs[0].read_bytes()),
                     "root/cosmicac-bootstrap-old.deb": (0o644, old_package(t)),
                     "root/docker-bootstrap": (0o644, config.encode())})
    vm.boot()
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    q = vm.qga
    t.expect(q.exec(["test", "-e", BIN]).exitcode != 0, "the guest already has the agent")
    t.expect(q.exec(["test", "-e", "/usr/local/bin/cosmicac-bootstrap"]).exitcode != 0,
             "the guest has /usr/local/bin/cosmicac-bootstrap: the probe would not test /usr/sbin")

    # An older package's conffile, 0644, edited by the admin (dpkg keeps it, mode and all).
    r = q.exec(["dpkg", "-i", "/root/cosmicac-bootstrap-old.deb"], timeout=180)
    t.expect(r.exitcode == 0, f"dpkg -i (old) exited {r.exitcode}: {r.err.strip()[-1500:]}")
    q.exec(["install", "-m", "0644", "/root/docker-bootstrap", CONFIG], check=True)

    r = q.exec(["dpkg", "-i", "/root/cosmicac-bootstrap.deb"], timeout=180)
    t.expect(r.exitcode == 0, f"dpkg -i exited {r.exitcode}: {r.err.strip()[-1500:]}")
    status = q.exec(["dpkg-query", "-W", "-f", "${Status} ${Version}", "cosmicac-bootstrap"]).out
    t.expect(status.startswith("install ok installed"), f"dpkg status: {status!r}")
    en = q.exec(["systemctl", "is-enabled", "cosmicac-bootstrap"]).out.strip()
    t.expect(en == "enabled", f"unit is {en!r} after install, expected enabled")
    t.expect(q.exec(["test", "-x", BIN]).exitcode == 0, f"{BIN} missing or not executable")
    frag = q.exec(["systemctl", "show", "-P", "FragmentPath", "cosmicac-bootstrap"]).out.strip()
    t.expect(frag == UNIT_FILE, f"systemd loads the unit from {frag!r}, expected {UNIT_FILE}")
    # The disk unit and docker's drop-in, as `install` writes them: enabled, not
    # started (dockerd keeps the root disk's store until the reboot), and loaded
    # (postinst's daemon-reload): docker.service is now ordered after the disk unit.
    en = q.exec(["systemctl", "is-enabled", DISK_UNIT]).out.strip()
    t.expect(en == "enabled", f"{DISK_UNIT} is {en!r} after install, expected enabled")
    frag = q.exec(["systemctl", "show", "-P", "FragmentPath", DISK_UNIT]).out.strip()
    t.expect(frag == DISK_UNIT_FILE, f"systemd loads the disk unit from {frag!r}, expected {DISK_UNIT_FILE}")
    active = q.exec(["systemctl", "show", "-P", "ActiveState", DISK_UNIT]).out.strip()
    t.expect(active == "inactive", f"{DISK_UNIT} is {active!r} right after install: dpkg -i started it")
    # The live growth: its unit loaded (not enabled: udev starts it), its rule where udevd reads it.
    frag = q.exec(["systemctl", "show", "-P", "FragmentPath", GROW_UNIT]).out.strip()
    t.expect(frag == f"/lib/systemd/system/{GROW_UNIT}", f"systemd loads the grow unit from {frag!r}")
    rules = q.exec(["cat", GROW_RULES_FILE]).out
    t.expect(f"--no-block start {GROW_UNIT}" in rules, f"{GROW_RULES_FILE} does not start the grow unit: {rules!r}")
    dropins = q.exec(["systemctl", "show", "-P", "DropInPaths", "docker.service"]).out.split()
    t.expect(DROPIN_SEEN & set(dropins), f"docker.service does not load {DROPIN_FILE}: {dropins}")
    after = q.exec(["systemctl", "show", "-p", "After", "docker.service"]).out
    t.expect(DISK_UNIT in after.split("=", 1)[-1].split(),
             f"docker.service is not ordered after the disk unit: {after.strip()}")
    # ENVS may hold keys: the upgrade made the admin's 0644 file root-only, content untouched.
    mode = q.exec(["stat", "-c", "%a %U:%G", CONFIG]).out.strip()
    t.expect(mode == "600 root:root", f"{CONFIG} is {mode!r} after the upgrade, expected '600 root:root'")
    t.expect(hashlib.sha256(q.read_file(CONFIG)).hexdigest() == hashlib.sha256(config.encode()).hexdigest(),
             f"the upgrade changed the admin's {CONFIG}")
    plan = q.exec([BIN, "plan"])
    t.expect(plan.exitcode == 0, f"cosmicac-bootstrap plan exited {plan.exitcode}: {plan.err.strip()[-800:]}")
    t.expect(f"chmod 600 {CONFIG}" not in plan.err, f"plan still warns about the config mode: {plan.err.strip()[-800:]}")

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
    # The .deb's disk unit ran before dockerd and bound the store: the main unit's
    # disk step found it bound (no dockerd restart, which is what happens without them).
    state = q.exec(["systemctl", "show", "-p", "ActiveState,Result", DISK_UNIT]).out
    t.expect("ActiveState=active" in state and "Result=success" in state, f"{DISK_UNIT}: {state.split()}")
    after = q.exec(["systemctl", "show", "-p", "After", "docker.service"]).out
    t.expect(DISK_UNIT in after.split("=", 1)[-1].split(),
             f"docker.service is not ordered after the disk unit: {after.strip()}")
    run = events.this_boot(vm, since)
    t.expect(events.statuses(run, "disk") and "done" in events.statuses(run, "disk"),
             f"the main unit's disk step did not finish: {events.summary(run)}")
    disk_msgs = [e.get("message", "") for e in run if e.get("step") == "disk"]
    t.expect(not any("restarted" in m for m in disk_msgs),
             f"dockerd started before the .deb's disk unit bound its store: {disk_msgs}")
    checks.data_disk_mounted(t, vm, "/data", DATA_SERIAL)
    checks.docker_store_on_data_disk(t, vm, "after the reboot")
    # The rendered VMI's readiness probe: a bare name, resolved by qemu-ga through its PATH.
    probe = q.exec(PROBE)
    t.expect(probe.exitcode == 0, f"probe {PROBE} through qemu-ga exited {probe.exitcode}: "
                                  f"{(probe.out + probe.err).strip()[-500:]}")
    path = q.exec(["systemctl", "show", "-P", "Environment", "qemu-guest-agent"]).out.strip()
    t.step(f"probe {PROBE} -> exit 0 via /usr/sbin (qemu-guest-agent Environment: {path or 'systemd default PATH'})")

    r = q.exec(["dpkg", "-r", "cosmicac-bootstrap"], timeout=180)
    t.expect(r.exitcode == 0, f"dpkg -r exited {r.exitcode}: {r.err.strip()[-1500:]}")
    t.expect(q.exec(["test", "-e", BIN]).exitcode != 0, f"{BIN} still there after dpkg -r")
    for path in (UNIT_FILE, DISK_UNIT_FILE, DROPIN_FILE):
        t.expect(q.exec(["test", "-e", path]).exitcode != 0, f"{path} still there after dpkg -r")
    dropins = q.exec(["systemctl", "show", "-P", "DropInPaths", "docker.service"]).out.split()
    t.expect(not DROPIN_SEEN & set(dropins), f"docker.service still loads {DROPIN_FILE} after dpkg -r: {dropins}")
    disk_show = dict(l.split("=", 1) for l in q.exec(
        ["systemctl", "show", "-p", "LoadState,ActiveState", DISK_UNIT]).out.split())
    t.expect(disk_show.get("ActiveState") == "inactive" and disk_show.get("LoadState") in ("not-found", "masked"),
             f"{DISK_UNIT} after dpkg -r: {disk_show}")
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
