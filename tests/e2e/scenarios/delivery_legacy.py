"""The existing worker's VMI with today's bootstrap-cm (dist/bootstrap-cm.yaml):
a guest WITHOUT the agent gets what the worker gives it -- the registry Secret
on sr0 and the bootstrap-cm on sr1, both CD-ROMs with KubeVirt's default label
cfgdata -- and a NoCloud user-data that installs the two legacy keys the way
the seed's unit expects them: docker-bootstrap.sh as
/usr/local/bin/docker-bootstrap.sh (0755, run by ExecStart= with no arguments)
and docker-bootstrap.service in /etc/systemd/system, enabled and started. The
key now carries the agent: it must reach ready with the same events as any
agent boot, with the worker's /etc/default/docker-bootstrap (the original
script's keys, written 0644 as the worker writes it).

The seed (tests/data/reference, cluster-requirements.txt) shows the ConfigMap
and the unit, not the worker's cloud-init: the user-data below is the minimal
one that does what the seed says (mount the bootstrap-cm CD-ROM, install the
two keys so that the unit's ExecStart=/usr/local/bin/docker-bootstrap.sh runs,
enable the unit). The CD-ROMs sit on virtio-scsi (the bed's kernel has no AHCI);
the NoCloud seed is a virtio disk, as in KubeVirt."""

import hashlib
import json

from bed import checks, events
from bed.delivery import configmap_iso, delivery_vm, nocloud_seed
from bed.catalog import scenario
from bed.scenario import REPO_DIR

CM = REPO_DIR / "dist" / "bootstrap-cm.yaml"
AGENT = REPO_DIR / "dist" / "cosmicac-bootstrap"
LEGACY_BIN = "/usr/local/bin/docker-bootstrap.sh"
LEGACY_UNIT = "/etc/systemd/system/docker-bootstrap.service"
ENVS = "MODEL_ID=tiny-llm;LIMITS={rps:5,burst:[1,2]}"
# The agent's step graph on a first boot, as agent-fresh-boot checks it (the
# disk step runs beside docker/credentials/pull, so it is a chain of its own).
FIRST_BOOT_ORDER = [("config", "done"), ("docker", "started"), ("docker", "done"),
                    ("credentials", "started"), ("credentials", "done"), ("login", "started"),
                    ("login", "done"), ("pull", "started"), ("pull", "done"), ("container", "started"),
                    ("container", "done"), ("ready", "done")]
DISK_ORDER = [("config", "done"), ("disk", "started"), ("disk", "done"), ("container", "started")]


def worker_user_data(config: str) -> str:
    """The legacy install as cloud-config. JSON is YAML: every string is quoted."""
    doc = {
        "write_files": [{"path": "/etc/default/docker-bootstrap", "owner": "root:root",
                         "permissions": "0644", "content": config}],
        "runcmd": [
            ["mkdir", "-p", "/mnt/bootstrap"],
            ["mount", "-t", "iso9660", "-o", "ro", "/dev/sr1", "/mnt/bootstrap"],
            ["cp", "/mnt/bootstrap/docker-bootstrap.sh", LEGACY_BIN],
            ["chmod", "0755", LEGACY_BIN],
            ["cp", "/mnt/bootstrap/docker-bootstrap.service", LEGACY_UNIT],
            ["umount", "/mnt/bootstrap"],
            ["systemctl", "daemon-reload"],
            ["systemctl", "enable", "--now", "docker-bootstrap.service"],
        ],
    }
    return "#cloud-config\n" + json.dumps(doc, indent=1) + "\n"


@scenario("delivery-legacy", timeout=1800, needs_agent=False)
def delivery_legacy(t):
    t.expect(CM.is_file() and AGENT.is_file(), f"{CM} / {AGENT} missing: run packaging/build-release")
    reg = t.registry(tags=("v1",))
    config = t.config(MNT="/data", IMG=t.image_ref("v1"), NAME="inference", JOB_TYPE="GPU_CONTAINER", ENVS=ENVS)
    cred = t.cred_iso(reg)                                    # sr0, label cfgdata (KubeVirt's default)
    boot = configmap_iso(t.work / "bootstrap.iso", CM, "cfgdata")  # sr1, label cfgdata
    seed = nocloud_seed(t.work / "seed.iso", worker_user_data(config), "e2e-legacy.cosmic-ac", "e2e-legacy")
    vm = delivery_vm(t, extra_disks=[(seed, "cloudinit")], data_disk=t.data_disk(120), data_serial="pvc-legacy",
                     extra_cdroms=[cred, boot])
    vm.boot()
    final = events.wait_final(vm, 1200)
    t.metric("boot_to_ready_s", round(vm.elapsed(), 1))
    t.expect(final["step"] == "ready", f"legacy boot ended {final['step']}:{final['status']} "
                                       f"({final.get('reason')}: {final.get('message')})")

    q = vm.qga
    q.wait_ready(300)
    sr = q.exec(["lsblk", "-n", "-o", "NAME,LABEL", "/dev/sr0", "/dev/sr1"]).out.split()
    t.expect(sr == ["sr0", "cfgdata", "sr1", "cfgdata"], f"CD-ROMs are not two cfgdata ISOs: {sr}")
    # runcmd's `systemctl enable --now` returns once the agent is ready (Type=notify):
    # cloud-init finishes just after the ready event.
    q.exec(["cloud-init", "status", "--wait"], timeout=300)
    result = json.loads(q.read_file("/run/cloud-init/result.json"))["v1"]
    ours = [e for e in result.get("errors", []) if "locale" not in e]  # the bed image has no locales
    t.expect(result.get("datasource", "").startswith("DataSourceNoCloud") and not ours,
             f"cloud-init: datasource {result.get('datasource')!r}, errors {ours}")

    # What the worker installed is the agent itself, run under its legacy name.
    mode = q.exec(["stat", "-c", "%a %U", LEGACY_BIN]).out.strip()
    t.expect(mode == "755 root", f"{LEGACY_BIN} mode/owner {mode!r}")
    guest_sum = q.exec(["sha256sum", LEGACY_BIN], check=True).out.split()[0]
    t.expect(guest_sum == hashlib.sha256(AGENT.read_bytes()).hexdigest(),
             f"{LEGACY_BIN} differs from dist/cosmicac-bootstrap")
    t.expect(q.exec(["test", "-e", "/usr/local/bin/cosmicac-bootstrap"]).exitcode != 0,
             "the legacy path installed /usr/local/bin/cosmicac-bootstrap too")
    show = dict(l.split("=", 1) for l in q.exec(
        ["systemctl", "show", "-p", "ActiveState,SubState,Result,NRestarts,UnitFileState,Type,ExecMainStatus",
         "docker-bootstrap.service"]).out.split())
    t.expect(show.get("ActiveState") == "active" and show.get("Result") == "success"
             and show.get("UnitFileState") == "enabled" and show.get("Type") == "notify"
             and show.get("NRestarts") == "0", f"docker-bootstrap.service: {show}")
    cmdline = q.exec(["systemctl", "show", "-P", "ExecStart", "docker-bootstrap.service"]).out
    t.expect(f"argv[]={LEGACY_BIN} ;" in cmdline, f"the unit does not run {LEGACY_BIN} without arguments: {cmdline}")
    t.expect(q.exec(["systemctl", "is-active", "cosmicac-bootstrap.service"]).out.strip() != "active",
             "cosmicac-bootstrap.service ran too: two agents on one VM")

    # Same events as any agent boot: the step graph in order on the port, mirrored on the console.
    run1 = events.this_boot(vm)
    events.expect_seq_increasing(t, run1)
    events.expect_order(t, run1, FIRST_BOOT_ORDER)
    events.expect_order(t, run1, DISK_ORDER)
    t.expect(not [e for e in events.step_events(run1) if e.get("status") == "failed"],
             f"failed steps: {events.summary(run1)}")
    events.expect_console_mirror(t, vm, run1, secret=reg.token)
    # With a command, the legacy name means what the agent's name means.
    st = q.exec([LEGACY_BIN, "status"])
    t.expect(st.exitcode == 0, f"docker-bootstrap.sh status exited {st.exitcode}: {st.out.strip()}")

    checks.data_disk_mounted(t, vm, "/data", "pvc-legacy")
    info = checks.inference_container(t, vm, "inference", "v1", ["MODEL_ID=tiny-llm"], mnt="/data",
                                      gpu=True, tun=True)
    limits = [e.split("=", 1)[1] for e in info["Config"]["Env"] if e.startswith("LIMITS=")]
    t.expect(len(limits) == 1 and json.loads(limits[0]) == {"rps": 5, "burst": [1, 2]},
             f"LIMITS did not reach the container as that JSON object: {limits}")
    journal = q.exec(["journalctl", "-b", "-u", "docker-bootstrap", "-o", "cat", "--no-pager"]).out
    t.expect("chmod 600 /etc/default/docker-bootstrap" in journal,
             "no journal warning about the worker's 0644 config")
    t.step(f"legacy install ready: {show}")
