"""The KubeVirt delivery path in QEMU: a guest WITHOUT the agent gets what
`cosmicac-vmi render` says its VMI gets -- the data disk with the rendered
serial, the credential Secret and the bootstrap ConfigMap (dist/bootstrap-cm.yaml)
as CD-ROMs with the rendered volume labels, built as kubelet + KubeVirt build
them, and the NoCloud seed from `cosmicac-vmi render-userdata`. cloud-init
installs the agent off the CD-ROM; `cosmicac-vmi wait --serial` sees it ready.

Deviation from the VMI, forced by the bed: the CD-ROMs sit on virtio-scsi, not
sata (the image's kernel has no AHCI driver); the guest finds them by label.
The NoCloud seed is a virtio disk, as in KubeVirt."""

import hashlib
import json

import yaml

from bed import checks, gpu_standin
from bed.delivery import SerialWaiter, configmap_iso, delivery_vm, nocloud_seed, vmi_run
from bed.iso import make_cred_iso
from bed.registry import GUEST_ADDR
from bed.catalog import scenario
from bed.scenario import REPO_DIR

SPEC = """# delivery-cloudinit: a job spec as the worker would write it
name: e2e-deliv
namespace: cosmic-ac
cpu: 2
memory: 2Gi
gpu: {{type: GH100_H100_SXM5_80GB, count: 1}}
dataDisk:
  size: 120Gi
  mountPoint: /data
  serial: pvc-e2e-deliv
container:
  image: {image}
  name: inference
  jobType: GPU_CONTAINER
  env:
    MODEL_ID: tiny-llm
    LIMITS: {{rps: 5, burst: [1, 2]}}
"""
CM = REPO_DIR / "dist" / "bootstrap-cm.yaml"
AGENT = REPO_DIR / "dist" / "cosmicac-bootstrap"


def by_name(items: list[dict], name: str, what: str, t) -> dict:
    found = [i for i in items if i.get("name") == name]
    t.expect(len(found) == 1, f"rendered VMI has no single {what} named {name}: {items}")
    return found[0]


@scenario("delivery-cloudinit", timeout=1800, needs_agent=False)
def delivery_cloudinit(t):
    t.expect(CM.is_file() and AGENT.is_file(), f"{CM} / {AGENT} missing: run packaging/build-release")
    reg = t.registry(tags=("v1",))
    spec = t.work / "job.yaml"
    spec.write_text(SPEC.format(image=t.image_ref("v1")))

    # The namespace is the operator's (-n or the profile), the spec only repeats it.
    r = vmi_run(["render", "-n", "cosmic-ac", "-f", str(spec), "-o", "json"])
    t.expect(r.returncode == 0, f"cosmicac-vmi render exited {r.returncode}: {r.stderr.strip()}")
    objects = json.loads(r.stdout)["items"]
    vmi = [o for o in objects if o["kind"] == "VirtualMachineInstance"]
    t.expect(len(vmi) == 1, f"render gave {len(vmi)} VMIs")
    vspec = vmi[0]["spec"]
    disks, volumes = vspec["domain"]["devices"]["disks"], vspec["volumes"]

    data_vol = [v for v in volumes if "persistentVolumeClaim" in v]
    t.expect(len(data_vol) == 1, f"rendered VMI has no single PVC volume: {volumes}")
    serial = by_name(disks, data_vol[0]["name"], "disk", t).get("serial")
    t.expect(serial == "pvc-e2e-deliv", f"rendered data disk serial {serial!r}")
    secret_vol = [v for v in volumes if "secret" in v]
    cm_vol = [v for v in volumes if "configMap" in v]
    seed_vol = [v for v in volumes if "cloudInitNoCloud" in v]
    t.expect(len(secret_vol) == 1 and len(cm_vol) == 1 and len(seed_vol) == 1, f"volumes: {volumes}")
    for v in secret_vol + cm_vol:
        t.expect("cdrom" in by_name(disks, v["name"], "disk", t), f"volume {v['name']} is not a CD-ROM")
    cred_label = secret_vol[0]["secret"]["volumeLabel"]
    boot_label = cm_vol[0]["configMap"]["volumeLabel"]
    t.expect(cm_vol[0]["configMap"]["name"] == "bootstrap-cm", f"ConfigMap volume: {cm_vol[0]}")
    t.expect(cred_label != boot_label, "the two CD-ROM labels are equal")

    r = vmi_run(["render-userdata", "-n", "cosmic-ac", "-f", str(spec)])
    t.expect(r.returncode == 0, f"cosmicac-vmi render-userdata exited {r.returncode}: {r.stderr.strip()}")
    user_data = r.stdout
    # The user-data lives only in the Secret the seed volume names (never inline: it holds ENVS).
    t.expect("userData" not in seed_vol[0]["cloudInitNoCloud"], "the VMI carries the user-data inline")
    ref = seed_vol[0]["cloudInitNoCloud"].get("secretRef", {}).get("name")
    ud_secret = [o for o in objects if o["kind"] == "Secret" and o["metadata"]["name"] == ref]
    t.expect(len(ud_secret) == 1 and ud_secret[0]["stringData"]["userdata"] == user_data,
             f"render-userdata differs from the user-data Secret {ref!r}")
    t.step(f"rendered: data serial {serial}, cred label {cred_label}, boot label {boot_label}, "
           f"user-data {len(user_data)} bytes")

    # The Secret (like ghcr-pull-cred: CDI's keys plus the agent's) and the ConfigMap, as CD-ROMs.
    cred = make_cred_iso(t.work / "cred.iso", GUEST_ADDR, reg.username, reg.token, label=cred_label,
                         extra={"accessKeyId": reg.username.encode(), "secretKey": reg.token.encode()})
    boot = configmap_iso(t.work / "bootstrap.iso", CM, boot_label)
    seed = nocloud_seed(t.work / "seed.iso", user_data, "e2e-deliv.cosmic-ac", "e2e-deliv")

    order = {v["name"]: i for i, v in enumerate(volumes)}
    cds = sorted([(order[secret_vol[0]["name"]], cred), (order[cm_vol[0]["name"]], boot)])
    seed_disk = by_name(disks, seed_vol[0]["name"], "disk", t)
    t.expect(seed_disk.get("disk", {}).get("bus") == "virtio", f"cloud-init disk: {seed_disk}")
    # The rendered config asks for the spec's one GPU (GPU_COUNT=1), so the
    # guest gets what a GPU image has: nvidia-smi (the stand-in, 8 healthy H100s).
    cfg = [f["content"] for f in yaml.safe_load(user_data)["write_files"]
           if f["path"] == "/etc/default/docker-bootstrap"]
    t.expect(len(cfg) == 1 and "GPU_COUNT=1" in cfg[0].splitlines(),
             f"the rendered config does not carry GPU_COUNT=1 for the spec's one GPU: {cfg}")
    # No agent_binary, no units, no config: cloud-init brings them.
    vm = delivery_vm(t, extra_disks=[(seed, "cloudinit")], data_disk=t.data_disk(120), data_serial=serial,
                     extra_cdroms=[p for _, p in cds], serial_reader=False,
                     files=gpu_standin.files_as_installed("healthy"))
    vm.boot()
    waiter = SerialWaiter(vm.boot_sock, "20m", log=t.work / "vmi-wait.log")
    try:
        # Readiness first: whether multi-user.target waits for the agent depends on
        # when cloud-init's runcmd enqueues the install (not this test's business).
        rc = waiter.wait_exit(1200)
        t.metric("boot_to_ready_s", round(vm.elapsed(), 1))
        t.expect(rc == 0, f"cosmicac-vmi wait --serial exited {rc}: {waiter.stderr.strip()[-1500:]}")
        t.expect(waiter.snapshot() and waiter.snapshot()[-1].get("phase") == "ready", "last event not ready")
    finally:
        waiter.stop()

    q = vm.qga
    q.wait_ready(300)
    # cloud-init ran the rendered user-data: its modules raised no error. The bed's
    # minimal image has no locales, so cloud-init's own default `locale` module
    # fails there (update-locale LANG=en_US.UTF-8); that one is not ours.
    ci = q.exec(["cloud-init", "status", "--long"]).out
    result = json.loads(q.read_file("/run/cloud-init/result.json"))["v1"]
    ours = [e for e in result.get("errors", []) if "locale" not in e]
    t.expect(result.get("datasource", "").startswith("DataSourceNoCloud") and not ours,
             f"cloud-init: datasource {result.get('datasource')!r}, errors {ours}:\n{ci}")
    t.expect(q.exec(["test", "-s", "/var/lib/cloud/instance/scripts/runcmd"]).exitcode == 0,
             "cloud-init did not write the runcmd script")
    mode = q.exec(["stat", "-c", "%a %U", "/usr/local/bin/cosmicac-bootstrap"]).out.strip()
    t.expect(mode == "755 root", f"/usr/local/bin/cosmicac-bootstrap mode/owner {mode!r}, expected '755 root'")
    guest_sum = q.exec(["sha256sum", "/usr/local/bin/cosmicac-bootstrap"], check=True).out.split()[0]
    t.expect(guest_sum == hashlib.sha256(AGENT.read_bytes()).hexdigest(),
             "the installed agent differs from dist/cosmicac-bootstrap")
    # The rendered readinessProbe, run as KubeVirt runs it: guest-exec of its
    # command, a bare name qemu-ga resolves through its PATH (/usr/local/bin here).
    probe = vmi[0]["spec"]["readinessProbe"]["exec"]["command"]
    t.expect(probe == ["cosmicac-bootstrap", "status"], f"rendered probe command {probe}")
    pr = q.exec(probe)
    t.expect(pr.exitcode == 0, f"probe {probe} through qemu-ga exited {pr.exitcode}: {(pr.out + pr.err).strip()[-500:]}")
    en = q.exec(["systemctl", "is-enabled", "cosmicac-bootstrap"]).out.strip()
    t.expect(en == "enabled", f"cosmicac-bootstrap.service is {en!r}, not enabled")
    inst = q.exec(["systemctl", "show", "-P", "Result", "cosmicac-install.service"]).out.strip()
    t.expect(inst == "success", f"cosmicac-install.service result {inst!r}")
    cfg_mode = q.exec(["stat", "-c", "%a", "/etc/default/docker-bootstrap"]).out.strip()
    t.expect(cfg_mode == "600", f"/etc/default/docker-bootstrap mode {cfg_mode}, expected 600")
    t.expect(q.exec(["findmnt", "/run/cosmicac-cd"]).exitcode != 0, "the bootstrap ISO is still mounted")
    # The GPU health check ran, with nvidia-smi found where the driver installs it.
    st = q.exec(["/usr/local/bin/cosmicac-bootstrap", "status", "--json"])
    try:
        health = json.loads(st.out).get("gpu_health") or {}
    except ValueError:
        health = {"unparsed": st.out[:400]}
    t.expect(health.get("verdict") == "healthy" and len(health.get("gpus", [])) == 8,
             f"status --json gpu_health: {health}")
    checks.data_disk_mounted(t, vm, "/data", serial)
    info = checks.inference_container(t, vm, "inference", "v1", ["MODEL_ID=tiny-llm"], mnt="/data", gpu=True, tun=True)
    limits = [e.split("=", 1)[1] for e in info["Config"]["Env"] if e.startswith("LIMITS=")]
    t.expect(len(limits) == 1 and json.loads(limits[0]) == {"rps": 5, "burst": [1, 2]},
             f"LIMITS did not reach the container as that JSON object: {limits}")
    t.expect(" " not in limits[0], f"LIMITS is not compact JSON: {limits[0]}")
