"""What KubeVirt's virt-controller and virt-handler, CDI and a kubelet would write, written
through the real API as the admin: a VirtualMachine's VMI and DataVolumes by KubeVirt's documented
run-strategy rules (`vm_sync`), VMI phase and conditions (the VMI CRD has no status
subresource: status goes with the object), DataVolume phase (its status subresource), the
virt-launcher pod (KubeVirt's labels and controller ownerReference, `pods/status`, its uid in the
VMI's `status.activePods`), and the
guest-console-log container's lines (served by the stand-in kubelet behind `pods/log`)."""

import json
import os
import random
import threading
import time

from cluster import NODE_NAME, ApiError, path_of, rfc3339_nano

LAUNCHER_IMAGE = "quay.io/kubevirt/virt-launcher:v1.7.0"
CONSOLE = "guest-console-log"


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def vmi_status(cp, ns, name, phase, ready, reason="", message=""):
    cond = {"type": "Ready", "status": "True" if ready else "False", "lastProbeTime": None,
            "lastTransitionTime": _now()}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    cp.admin.merge_patch(path_of("VirtualMachineInstance", name, ns),
                         {"status": {"phase": phase, "nodeName": NODE_NAME, "conditions": [cond]}})


def datavolume_status(cp, ns, name, phase, progress, conditions=None):
    status = {"phase": phase, "progress": progress}
    if conditions is not None:
        status["conditions"] = conditions
    cp.admin.merge_patch(path_of("DataVolume", name, ns, "status"), {"status": status})


class Launcher:
    """The virt-launcher pod of one VMI, on the stand-in node."""

    def __init__(self, cp, ns, vmi, console=True, node=NODE_NAME, active=True, name=None, pod_ip="10.244.0.10"):
        self.cp, self.ns = cp, ns
        md = vmi["metadata"]
        self.name = name or f"virt-launcher-{md['name']}-{os.urandom(3).hex()[:5]}"
        containers = [{"name": "compute", "image": LAUNCHER_IMAGE}]
        if console:
            containers.append({"name": CONSOLE, "image": LAUNCHER_IMAGE})
        # virt-controller's pod template: the VMI's labels, then its own keys over them.
        labels = dict(md.get("labels") or {})
        labels.update({"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": md["uid"],
                       "vm.kubevirt.io/name": md["name"]})
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": self.name, "namespace": ns, "labels": labels,
                            "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                                                 "name": md["name"], "uid": md["uid"], "controller": True,
                                                 "blockOwnerDeletion": True}]},
               "spec": {"nodeName": node, "automountServiceAccountToken": False, "containers": containers}}
        # The ServiceAccount admission wants the namespace's `default` ServiceAccount, which the
        # controller manager creates moments after the namespace.
        deadline = time.monotonic() + 30
        while True:
            try:
                self.uid = cp.admin.create(pod)["metadata"]["uid"]
                break
            except ApiError as e:
                if time.monotonic() > deadline or "serviceaccount" not in json.dumps(e.body):
                    raise
                time.sleep(0.2)
        if active:   # virt-controller lists the VMI's own launcher pods (pod uid: node) in its status
            cp.admin.merge_patch(path_of("VirtualMachineInstance", md["name"], ns),
                                 {"status": {"activePods": {self.uid: node}}})
        if console:
            cp.kubelet.add_container(ns, self.name, CONSOLE)
        now = _now()
        cp.admin.merge_patch(path_of("Pod", self.name, ns, "status"), {"status": {
            "phase": "Running", "hostIP": "127.0.0.1", "podIP": pod_ip, "startTime": now,
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                           for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
            "containerStatuses": [{"name": c["name"], "image": LAUNCHER_IMAGE, "imageID": "", "ready": True,
                                   "restartCount": 0, "started": True, "state": {"running": {"startedAt": now}}}
                                  for c in containers]}})


class Agent:
    """The agent's readiness events as it mirrors them on the serial console (protocol v1)."""

    def __init__(self, cp, ns, pod):
        self.cp, self.ns, self.pod = cp, ns, pod
        self.seq = 0
        self.boot_id = os.urandom(16).hex()
        self.t0 = time.monotonic()

    def event(self, phase, step, status=None, **extra):
        self.seq += 1
        ev = {"v": 1, "seq": self.seq, "boot_id": self.boot_id, "ts": rfc3339_nano()[:23] + "Z",
              "mono_ms": int((time.monotonic() - self.t0) * 1000), "phase": phase, "step": step}
        if status:
            ev["status"] = status
        ev.update(extra)
        self.cp.kubelet.write(self.ns, self.pod, CONSOLE,
                              "cosmicac-bootstrap v1 " + json.dumps(ev, separators=(",", ":")))

    def noise(self, text):
        self.cp.kubelet.write(self.ns, self.pod, CONSOLE, text)

    def boot_to_ready(self, image="ghcr.io/tetherto/cosmicac-wrk-agent-inference:latest",
                      digest="sha256:" + "9f" * 32):
        for step in ("config", "disk", "docker", "credentials", "login", "pull", "container"):
            self.event("running", step, "started")
            if step == "pull":   # what a rollout's batch line shows of a job still waiting
                self.event("running", "pull", "progress", bytes_done=620000000, bytes_total=1000000000,
                           activity="downloading")
            self.event("running", step, "done", duration_ms=5)
        self.event("ready", "ready", "done", duration_ms=40,
                   container={"name": "cosmicac-container", "id": "0123456789abcdef0123",
                              "image": image, "image_digest": digest})

    def fail_after_ready(self):
        """Ready, then the container stops answering its probe: `status` records the failure as
        the ready step's, once the threshold of failed looks is reached."""
        self.boot_to_ready()
        self.event("failed", "ready", "failed", reason="container-unready", duration_ms=0,
                   message="http://172.17.0.2:8000/health: HTTP 503 (3 looks in a row)")

    def fail_login(self):
        self.event("running", "config", "started")
        self.event("running", "config", "done", duration_ms=3)
        self.event("running", "login", "started")
        self.event("failed", "login", "failed", reason="auth", message="401 Unauthorized from ghcr.io",
                   duration_ms=812)


def _controller_ref(obj):
    md = obj["metadata"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": md["name"], "uid": md["uid"],
            "controller": True, "blockOwnerDeletion": True}


def vm_status(cp, ns, name, printable, **extra):
    status = {"printableStatus": printable}
    status.update(extra)
    cp.admin.merge_patch(path_of("VirtualMachine", name, ns, "status"), {"status": status})


def vm_datavolumes(cp, ns, vm):
    """KubeVirt's first step for a VM: each dataVolumeTemplates entry becomes a DataVolume the VM
    owns (its VMI comes only once they are imported or cloned)."""
    for t in vm["spec"].get("dataVolumeTemplates") or []:
        if cp.admin.exists(path_of("DataVolume", t["metadata"]["name"], ns)) is None:
            md = dict(t["metadata"], namespace=ns, ownerReferences=[_controller_ref(vm)])
            cp.admin.create({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": md,
                             "spec": t["spec"]})


def vm_sync(cp, ns, name):
    """One pass of KubeVirt's VM controller over VirtualMachine NS/NAME, by the rules its user guide
    documents (docs/compute/run_strategies.md, docs/storage/disks_and_volumes.md): each
    dataVolumeTemplates entry becomes a DataVolume the VM owns, kept while the VM lives; Always starts
    a VMI of the VM's name from its template (the template's labels, controlled by the VM) whenever
    there is none, and deletes one that ended so that the next pass starts another; RerunOnFailure
    does so after Failed only; Halted deletes the VMI and starts none. A VMI being deleted is waited
    for. Returns the VMI it left (None: none)."""
    vm = cp.admin.exists(path_of("VirtualMachine", name, ns))
    if vm is None:
        return None
    strategy = vm["spec"].get("runStrategy", "Always")
    vm_datavolumes(cp, ns, vm)
    vmi = cp.admin.exists(path_of("VirtualMachineInstance", name, ns))
    if vmi is not None and vmi["metadata"].get("deletionTimestamp"):
        return vmi
    phase = ((vmi or {}).get("status") or {}).get("phase", "")
    if vmi is not None and (strategy == "Halted" or (phase in ("Failed", "Succeeded") and (
            strategy == "Always" or (strategy == "RerunOnFailure" and phase == "Failed")))):
        cp.admin.delete(path_of("VirtualMachineInstance", name, ns))
        vm_status(cp, ns, name, "Stopped" if strategy == "Halted" else "Starting")
        return None
    if vmi is None and strategy in ("Always", "RerunOnFailure") and not (
            strategy == "RerunOnFailure" and (vm.get("status") or {}).get("printableStatus") == "Stopped"):
        tmpl = vm["spec"]["template"]
        md = {"name": name, "namespace": ns, "labels": dict((tmpl.get("metadata") or {}).get("labels") or {}),
              "ownerReferences": [_controller_ref(vm)]}
        if (tmpl.get("metadata") or {}).get("annotations"):  # as KubeVirt copies them (the job's revision)
            md["annotations"] = dict(tmpl["metadata"]["annotations"])
        vmi = cp.admin.create({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": md,
                               "spec": tmpl["spec"]})
        vm_status(cp, ns, name, "Starting", created=True)
    elif vmi is None:
        vm_status(cp, ns, name, "Stopped")
    return vmi


class Fleet:
    """KubeVirt's VM controller and the guests of a whole namespace, in a background thread, for
    `rollout`: every pass lists the VirtualMachines and runs vm_sync over each (so a VMI deleted by a
    restart comes back from the VM's current template under runStrategy Always), in a random order;
    each VMI not seen before boots in a thread of its own after a random delay — launcher pod,
    console, the agent's lines — so VMIs become ready in random order. The agent's ready event
    names the image of the VMI's template (its revision annotation tells which) with `digest`; a
    job in `fail`, or a VMI `fail_if(vmi)` says True for, gets a failing agent (login, reason auth)
    instead. `on_ready(name)` is called once a VMI is Ready (a tag moving right after the canary:
    it sets `digest`, which each VMI's agent reads when it boots). `booted` counts the VMIs
    started per job; `images` holds, per VMI uid, the revision it was started from. With `bare`,
    the namespace's bare VMIs (no ownerReference) boot the same way as they appear."""

    def __init__(self, cp, ns, digest="sha256:" + "9f" * 32, fail=(), seed=53, delay=(0.2, 1.5), bare=False):
        self.cp, self.ns, self.digest, self.delay = cp, ns, digest, delay
        self.fail = set(fail)
        self.fail_if = None
        self.bare = bare
        self.on_ready = None
        self.rand = random.Random(seed)
        self.seen = set()
        self.booted = {}
        self.revisions = {}
        self.errors = []
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(10)

    def _run(self):
        while not self._stop.is_set():
            try:
                items = self.cp.admin.get(path_of("VirtualMachine", None, self.ns))["items"]
                names = [vm["metadata"]["name"] for vm in items]
                self.rand.shuffle(names)
                for name in names:
                    self._start(vm_sync(self.cp, self.ns, name))
                if self.bare:   # bare VMIs (no VirtualMachine owns them): booted as they appear
                    for vmi in self.cp.admin.get(path_of("VirtualMachineInstance", None, self.ns))["items"]:
                        if not vmi["metadata"].get("ownerReferences"):
                            self._start(vmi)
            except Exception as e:   # reported by the case
                with self.lock:
                    self.errors.append(e)
            self._stop.wait(0.3)

    def _start(self, vmi):
        if vmi is None or vmi["metadata"].get("deletionTimestamp"):
            return
        name, uid = vmi["metadata"]["name"], vmi["metadata"]["uid"]
        with self.lock:
            if uid in self.seen:
                return
            self.seen.add(uid)
            self.booted[name] = self.booted.get(name, 0) + 1
        threading.Thread(target=self._boot, args=(vmi, self.rand.uniform(*self.delay)), daemon=True).start()

    def _boot(self, vmi, delay):
        try:
            ns, name = self.ns, vmi["metadata"]["name"]
            time.sleep(delay)
            vmi_status(self.cp, ns, name, "Scheduling", False, "GuestNotRunning", "Guest VM is not reported as running")
            pod = Launcher(self.cp, ns, vmi)
            vmi_status(self.cp, ns, name, "Running", False, "ContainersNotReady", "containers not ready")
            time.sleep(0.5)
            agent = Agent(self.cp, ns, pod.name)
            if name in self.fail or (self.fail_if and self.fail_if(vmi)):
                agent.fail_login()
                return
            agent.boot_to_ready(digest=self.digest)
            time.sleep(0.3)
            vmi_status(self.cp, ns, name, "Running", True)
            if self.on_ready:
                self.on_ready(name)
        except ApiError as e:
            if e.status != 404:   # a VMI deleted meanwhile (a restart) is not a failure
                with self.lock:
                    self.errors.append(e)
        except Exception as e:   # reported by the case
            with self.lock:
                self.errors.append(e)
