"""Docker's image store on the data disk: a re-created VM keeps its images.
Boot 1, cold, blank data disk, the main unit only (as when the agent is
installed after docker came up): dockerd has started on the root disk's store with no container, so the
disk step restarts it on the data disk's store; ready. Then a NEW VM (a fresh
overlay of the guest image as root disk) with the same data disk, all three
units (the disk unit before docker.service), and the registry stopped: ready
with the same image digest, no pull, no registry contact. The store keeps the
image and never the earlier VM's container: the disk unit drops it before
dockerd starts, so the new VM's dockerd never knows it (no event of it, not in
`docker ps -a`) and the agent creates the container fresh. Both VMs mount the
data disk and its binds nosuid,nodev. Between the two the data disk grows
from 120 to 130 GiB (issue 44): the disk unit grows our partition and ext4
before dockerd, and the main run says so ("grew /data from … to …"), the one
path where the disk unit's note reaches the host.

Readiness (issue 41), folded into these two boots: the image refuses
connections for HEALTH_AFTER seconds (a model loading), then answers
GET /health; READY_PROBE makes that ready. Boot 1 says it waits ("waiting for
http://…/health: Connection refused"); the re-created VM is ready within
half a second of the first good answer (no settle period). Then, on the
re-created VM: `status` passes while it holds, and its cost is measured
against /bin/true; the server is killed, `status` counts its failed looks and
records the failure once (a `ready` `failed` event, port and console); and a
run whose probe never passes (a port nothing serves) fails `container-unready`
within HEALTH_TIMEOUT, naming the URL."""

import calendar
import time

from bed import checks, events
from bed.disks import grow_disk
from bed.catalog import scenario
from bed.scenario import REPO_DIR

DISK_UNIT = REPO_DIR / "units" / "cosmicac-bootstrap-disk.service"
HEALTH_AFTER = 6  # seconds the image refuses connections before /health answers 200
DROPIN = REPO_DIR / "units" / "docker.service.d" / "cosmicac-data-disk.conf"


@scenario("agent-recreate", timeout=2400)
def agent_recreate(t):
    agent = t.agent
    reg = t.registry()
    data = t.data_disk(120)
    config = t.config(MNT="/data", IMG=t.image_ref("v1"), NAME="inference", ENVS=f"HEALTH_AFTER={HEALTH_AFTER}",
                      READY_PROBE="http:8000/health")

    vm = t.vm(name="vm0", data_disk=data, data_serial="pvc-data", cred_iso=t.cred_iso(reg),
              config=config, agent_binary=agent, units=[t.agent_unit()])
    vm.boot()
    vm.wait_booted(600)
    final = events.wait_final(vm, 900)
    t.metric("cold_boot_to_ready_s", round(vm.elapsed(), 1))
    t.expect(final["step"] == "ready", f"boot 1 ended {final['step']}:{final['status']} "
                                       f"({final.get('reason')}: {final.get('message')})")
    run1 = events.this_boot(vm)
    t.expect("done" in events.statuses(run1, "pull"),
             f"boot 1 did not pull: {events.summary(run1)}")
    disk_msgs = [e.get("message", "") for e in run1 if e.get("step") == "disk"]
    t.expect(any("dockerd restarted" in m for m in disk_msgs),
             f"boot 1: dockerd had started on the root store, the disk step did not restart it: {disk_msgs}")
    events.expect_order(t, run1, [("disk", "done"), ("docker", "started")])
    checks.data_disk_mounted(t, vm, "/data", "pvc-data")
    checks.docker_store_on_data_disk(t, vm, "boot 1")
    waited = [e.get("message", "") for e in run1 if e.get("step") == "container" and e.get("status") == "progress"]
    t.expect(any(m.startswith("waiting for http://") and "/health: " in m for m in waited),
             f"boot 1: no progress event said what the probe waits for: {waited}")
    digest = final["container"]["image_digest"]
    cid1 = final["container"]["id"]
    vm.qga.exec(["/bin/sh", "-c", "echo kept > /data/marker && sync"], check=True)
    t.step(f"boot 1: ready, pulled {digest[:19]}…, store on the data disk")
    vm.shutdown()

    reg.stop()
    # The PVC grown while no VM ran (issue 44): the re-created VM's disk unit,
    # before dockerd, grows our partition and ext4; the main run says so.
    grow_disk(data, 130)
    vm2 = t.vm(name="vm1", data_disk=data, data_serial="pvc-data", cred_iso=t.cred_iso(reg, name="cred2.iso"),
               config=config, agent_binary=agent, units=[t.agent_unit(), DISK_UNIT],
               files={"etc/systemd/system/docker.service.d/cosmicac-data-disk.conf": (0o644, DROPIN.read_bytes())})
    vm2.boot()
    vm2.wait_booted(600)
    final2 = events.wait_final(vm2, 900)
    t.metric("recreate_boot_to_ready_s", round(vm2.elapsed(), 1))
    t.metric("recreate_agent_ready_ms", final2.get("duration_ms"))
    t.expect(final2["step"] == "ready", f"re-created VM ended {final2['step']}:{final2['status']} "
                                        f"({final2.get('reason')}: {final2.get('message')})")
    run2 = events.this_boot(vm2)
    for step in ("credentials", "login", "pull"):
        t.expect(events.statuses(run2, step) == ["skipped"],
                 f"re-created VM: {step} was {events.statuses(run2, step)}, expected only skipped (no pull)")
    t.expect(final2["container"]["image_digest"] == digest,
             f"re-created VM runs {final2['container']['image_digest']}, boot 1 pulled {digest}")
    disk_msgs2 = [e.get("message", "") for e in run2 if e.get("step") == "disk"]
    grew = [m for m in disk_msgs2 if m.startswith("grew /data from ")]
    t.expect(len(grew) == 1, f"re-created VM: the disk unit's growth (120 → 130 GiB) was not said once: {disk_msgs2}")
    size = vm2.qga.exec(["df", "--output=size", "-B1", "/data"]).out.split()
    t.expect(size[-1].isdigit() and int(size[-1]) > (125 << 30),
             f"re-created VM: /data is {size[-1:]} bytes after its disk grew to 130 GiB")
    grown_in = vm2.qga.exec(["journalctl", "-b", "-o", "cat", "-u", "cosmicac-bootstrap-disk.service"]).out
    t.expect("grew /data from " in grown_in, "re-created VM: the disk unit's journal does not say it grew /data")
    t.step(f"re-created VM: the disk unit grew the data disk before dockerd; the main run said {grew[:1]}")
    t.expect(not any("restarted" in m for m in disk_msgs2),
             f"re-created VM: dockerd started before the disk unit bound its store: {disk_msgs2}")
    state = vm2.qga.exec(["systemctl", "show", "-p", "ActiveState,Result", "cosmicac-bootstrap-disk.service"]).out
    t.expect("ActiveState=active" in state and "Result=success" in state, f"disk unit: {state}")
    after = vm2.qga.exec(["systemctl", "show", "-p", "After", "docker.service"]).out
    t.expect("cosmicac-bootstrap-disk.service" in after, f"docker.service is not ordered after the disk unit: {after}")
    checks.data_disk_mounted(t, vm2, "/data", "pvc-data")
    checks.docker_store_on_data_disk(t, vm2, "re-created VM")
    marker = vm2.qga.exec(["cat", "/data/marker"]).out.strip()
    t.expect(marker == "kept", f"/data/marker on the re-created VM: {marker!r}")

    # The earlier VM's container: dropped by the disk unit before dockerd
    # started, so this dockerd never had it; the container is a new one.
    cid2 = final2["container"]["id"]
    t.expect(cid2 != cid1, f"the re-created VM runs the earlier VM's container {cid1[:12]}")
    listed = vm2.qga.exec(["docker", "ps", "-a", "-q", "--no-trunc"]).out.split()
    t.expect(listed == [cid2], f"re-created VM: docker ps -a lists {[c[:12] for c in listed]}, expected only {cid2[:12]}")
    seen = vm2.qga.exec(["/bin/sh", "-c", "docker events --since 1 --until \"$(date +%s)\" --filter type=container "
                                          "--format '{{.ID}} {{.Action}}'"]).out.split("\n")
    t.expect(not any(line.startswith(cid1) for line in seen),
             f"re-created VM: dockerd had the earlier VM's container {cid1[:12]}: {seen}")
    t.expect(any(line == f"{cid2} create" for line in seen), f"re-created VM: no create event for {cid2[:12]}: {seen}")
    journal = vm2.qga.exec(["journalctl", "-b", "-o", "cat", "-u", "cosmicac-bootstrap-disk.service"]).out
    t.expect("dropped 1 container(s)" in journal,
             f"re-created VM: the disk unit did not say it dropped the earlier VM's container:\n{journal}")
    t.step(f"re-created VM: ready in {final2.get('duration_ms')} ms, same digest, registry steps skipped, "
           f"earlier container {cid1[:12]} dropped before dockerd, new {cid2[:12]}")

    readiness_after_recreate(t, vm2, final2)


def rfc3339(ts: str) -> float:
    """Seconds since the epoch of dockerd's or the agent's UTC timestamp (fractions kept)."""
    whole, _, frac = ts.rstrip("Z").partition(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + float("0." + (frac or "0"))


def serving_time(vm, name: str) -> float:
    """When the container printed `serving` (its /health answering), by dockerd's log timestamp; 0 if never."""
    out = vm.qga.exec(["docker", "logs", "--timestamps", name]).out
    stamp = next((line.split()[0] for line in out.splitlines() if line.endswith(" serving")), "")
    return rfc3339(stamp) if stamp else 0.0


def readiness_after_recreate(t, vm, final):
    # Ready as soon as it is true: the ready event against the server's first good answer.
    served = serving_time(vm, "inference")
    t.expect(served > 0, "re-created VM: the container never printed `serving`")
    late = rfc3339(final["ts"]) - served
    t.metric("ready_after_health_good_s", round(late, 2))
    t.expect(-1 < late <= 1.5, f"re-created VM: ready {late:.2f} s after /health first answered (target 0.5 s)")

    # Only while it is true: status looks again, and what it costs.
    code, line = events.status_cmd(vm)
    t.expect(code == 0 and line.startswith("ready "), f"status after ready: {code} {line}")
    cost = vm.qga.sh(f"t0=$(date +%s%N); for i in 1 2 3 4 5 6 7 8 9 10; do {events.AGENT} status >/dev/null; done; "
                     "t1=$(date +%s%N); for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done; t2=$(date +%s%N); "
                     "echo $(( (t1 - t0) / 10000000 )) $(( (t2 - t1) / 10000000 ))").out.split()
    t.metric("status_ms", int(cost[0]))
    t.metric("true_ms", int(cost[1]))
    t.step(f"status after ready: {line[:60]}…; one status {cost[0]} ms, one /bin/true {cost[1]} ms (TCG)")

    since = len(vm.serial_lines)
    vm.qga.exec(["docker", "exec", "inference", "/bin/busybox", "sh", "-c", "kill $(/bin/busybox pidof httpd)"],
                check=True)
    looks = [events.status_cmd(vm) for _ in range(3)]
    t.expect([c for c, _ in looks] == [1, 1, 1], f"status after the server died: {looks}")
    t.expect(looks[0][1].startswith("unready reason=container-unready look=1/3 ") and "Connection refused" in looks[0][1],
             f"first failed look: {looks[0][1]}")
    t.expect(looks[2][1].startswith("failed reason=container-unready step=ready "), f"third failed look: {looks[2][1]}")
    # The event itself, or (a host that connects after it) the snapshot that carries it.
    recorded = events.wait_event(vm, lambda e: (e.get("step") == "ready" and e.get("status") == "failed")
                                 or (e.get("step") == "state" and e.get("failed_step") == "ready"), 30, since)
    t.expect(recorded.get("reason") == "container-unready" and recorded.get("phase") == "failed",
             f"the recorded failure: {recorded}")
    code, again = events.status_cmd(vm)
    t.expect(code == 1 and again == looks[2][1], f"status after the failure was recorded: {code} {again}")
    time.sleep(2)
    said = [e for e in events.console_this_boot(vm)[0] if e.get("step") == "ready" and e.get("status") == "failed"]
    t.expect(len(said) == 1, f"the serial console said the failure {len(said)} times")
    t.step("server killed after ready: unready 1/3, 2/3, then recorded once (port and console): "
           + recorded.get("message", ""))

    # A probe that never passes: the run fails container-unready within HEALTH_TIMEOUT.
    since = len(vm.serial_lines)
    vm.qga.sh("printf 'READY_PROBE=tcp:9\\nHEALTH_TIMEOUT=12\\n' >> /etc/default/docker-bootstrap", check=True)
    vm.qga.exec(["systemctl", "restart", "--no-block", "cosmicac-bootstrap.service"], check=True)
    final = events.expect_final(t, vm, "container", reason="container-unready", since=since, metric=None,
                                timeout=300, what="a run whose probe never passes")
    t.expect("tcp://" in final.get("message", "") and ":9: " in final.get("message", ""),
             f"container-unready does not name the probe: {final.get('message')}")
    t.step("probe never passing: " + final.get("message", ""))
