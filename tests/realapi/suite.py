#!/usr/bin/python3
"""`cosmicac-vmi` against a real kube-apiserver (tests/realapi/README.md).

One control plane for the whole run; every case gets its own namespace with host/rbac/role.yaml
applied and bound to a plain user (client certificate CN=cosmicac-tester), and every
`cosmicac-vmi` command runs as that user (doctor: as the role's ServiceAccount, by a bound
token). Prints `PASS case` / `FAIL case: why` per case and closes with `N passed, N failed`.
Exit: 0 all passed, 1 a case failed or the control plane did not come up, 77 NOT RUN (no
binaries; only outside CI: with CI=true their absence is a failure)."""

import argparse
import copy
import datetime
import json
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import yaml  # noqa: E402

import cluster  # noqa: E402
import kube_bin  # noqa: E402
import simulate  # noqa: E402
from cluster import TESTER_USER, path_of, rfc3339_nano  # noqa: E402

SKIP = 77
GPU_TYPE = "GH100_H100_SXM5_80GB"


class Failure(AssertionError):
    pass


def check(cond, why):
    if not cond:
        raise Failure(why)


class Run:
    """One cosmicac-vmi invocation's result."""

    def __init__(self, argv, rc, out, err):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err

    def text(self):
        return self.out + self.err

    def show(self):
        return (f"$ cosmicac-vmi {' '.join(self.argv)}\n(exit {self.rc})\n--- stdout\n{self.out}--- stderr\n{self.err}")


class Suite:
    def __init__(self, cp, vmi, workdir):
        self.cp, self.vmi, self.work = cp, vmi, workdir
        self.role_docs = self._docs("host/rbac/role.yaml")
        self.doctor_docs = self._docs("host/rbac/clusterrole-doctor.yaml")
        self.transcript = []
        self.lease_probe = None  # tests/realapi/lease_probe.cpp's binary (--lease-probe)

    @staticmethod
    def _docs(rel):
        with open(os.path.join(REPO, rel)) as fh:
            return [d for d in yaml.safe_load_all(fh) if d]

    # --- namespaces, identities, specs -----------------------------------------------------
    @staticmethod
    def _in_namespace(doc, ns):
        doc = copy.deepcopy(doc)
        if "namespace" in doc["metadata"]:
            doc["metadata"]["namespace"] = ns
        for s in doc.get("subjects", []):
            if "namespace" in s:
                s["namespace"] = ns
        return doc

    def namespace(self, case, labels=None):
        """A fresh namespace with host/rbac/role.yaml in it (its ServiceAccount, Role and
        RoleBinding) and a second RoleBinding of the same Role to the plain user."""
        ns = "rt-" + case.replace("_", "-")
        self.cp.admin.apply({"apiVersion": "v1", "kind": "Namespace",
                             "metadata": {"name": ns, "labels": labels or {}}})
        for d in self.role_docs:
            self.cp.admin.apply(self._in_namespace(d, ns))
        self.cp.admin.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                             "metadata": {"name": "cosmicac-vmi-tester", "namespace": ns},
                             "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io",
                                           "name": TESTER_USER}],
                             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                         "name": "cosmicac-vmi"}})
        # RBAC is in force once the authorizer's cache has the binding: wait for the user's
        # first allowed request rather than racing it.
        self.until(f"RBAC for {TESTER_USER} in {ns}", lambda: self.cp.tester.request(
            "GET", path_of("VirtualMachineInstance", None, ns), ok=None)[0] == 200, 20)
        return ns

    def tester_kubeconfig(self, ns):
        return self.cp.kubeconfig("tester", ns, cert=self.cp.tester_client)

    def spec(self, name, ns, **fields):
        """A tenant's job spec: none of the operator's fields (image, secrets, ConfigMap,
        storage class, network), so the defaults apply."""
        doc = {"name": name, "namespace": ns, "cpu": 4, "memory": "16Gi",
               "gpu": {"type": GPU_TYPE, "count": 1},
               "dataDisk": {"size": "100Gi", "mountPoint": "/data"},
               "container": {"env": {"MODEL_ID": "tiny", "API_KEY": "s3cr3t-realapi-value"}}}
        doc.update(fields)
        path = os.path.join(self.work, f"{ns}-{name}-{len(os.listdir(self.work))}.json")
        with open(path, "w") as fh:
            json.dump(doc, fh)
        return path

    @staticmethod
    def _operator_namespace(args):
        """The namespace is the operator's (-n or the profile's): a command with -f SPEC and neither
        gets -n of the namespace the case wrote into its spec, as the operator would pass it."""
        args = list(args)
        if "-f" not in args or {"-n", "--namespace", "--profile"} & set(args):
            return args
        with open(args[args.index("-f") + 1], encoding="utf-8") as fh:
            return args + ["-n", json.load(fh)["namespace"]]

    def run(self, *args, kubeconfig, timeout=180, expect=None):
        args = self._operator_namespace(args)
        argv = list(args) + (["--kubeconfig", kubeconfig] if kubeconfig else [])  # None: a command without the cluster
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LANG", "LC_ALL")}
        env["HOME"] = self.work
        p = subprocess.run([self.vmi] + argv, capture_output=True, text=True, errors="replace",
                           timeout=timeout, env=env, stdin=subprocess.DEVNULL)
        r = Run(argv, p.returncode, p.stdout, p.stderr)
        self.transcript.append(r.show())
        if expect is not None:
            check(r.rc == expect, f"exit {r.rc}, expected {expect}:\n{r.show()}")
        return r

    def start(self, *args, kubeconfig):
        argv = self._operator_namespace(args) + ["--kubeconfig", kubeconfig]
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LANG", "LC_ALL")}
        env["HOME"] = self.work
        p = subprocess.Popen([self.vmi] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace", env=env, stdin=subprocess.DEVNULL)
        p.argv = argv
        return p

    def finish(self, p, timeout=120):
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            r = Run(p.argv, "killed", out, err)
            raise Failure(f"did not finish within {timeout} s:\n{r.show()}")
        r = Run(p.argv, p.returncode, out, err)
        self.transcript.append(r.show())
        return r

    def until(self, what, fn, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            v = fn()
            if v:
                return v
            if time.monotonic() > deadline:
                raise Failure(f"timed out after {timeout} s waiting for {what}")
            time.sleep(0.2)

    # --- reading the cluster as the admin --------------------------------------------------
    def obj(self, kind, name, ns):
        return self.cp.admin.exists(path_of(kind, name, ns))

    def objects(self, name, ns):
        """The four objects of one VM, None where absent."""
        return {"vmi": self.obj("VirtualMachineInstance", name, ns),
                "dv": self.root_dv(name, ns),
                "pvc": self.obj("PersistentVolumeClaim", name + "-data", ns),
                "secret": self.userdata(name, ns)}

    def root_dvs(self, name, ns):
        """The job's root DataVolumes (<job>-root-<digest of its source>), by the job's label, as the
        admin reads them."""
        _, body = self.cp.admin.request("GET", path_of("DataVolume", None, ns),
                                        query={"labelSelector": f"cosmicac.io/job={name}"})
        return [d for d in body.get("items", []) if d["metadata"]["name"].startswith(name + "-root")]

    def root_name(self, name, ns):
        """The root DataVolume the job's VMI (else its VM's template) boots from."""
        for kind, at in (("VirtualMachineInstance", ("spec",)), ("VirtualMachine", ("spec", "template", "spec"))):
            o = self.obj(kind, name, ns)
            for key in at:
                o = (o or {}).get(key)
            for v in (o or {}).get("volumes", []):
                if v.get("name") == "rootdisk":
                    return v["dataVolume"]["name"]
        return None

    def root_dv(self, name, ns):
        """The root DataVolume the job boots from; without a VMI or VM, the job's only one."""
        n = self.root_name(name, ns)
        if n:
            return self.obj("DataVolume", n, ns)
        found = self.root_dvs(name, ns)
        return found[0] if len(found) == 1 else None

    def root_gone(self, name, ns, timeout=30):
        self.until(f"the root DataVolumes of {ns}/{name} to be gone", lambda: not self.root_dvs(name, ns), timeout)

    def userdata_secrets(self, name, ns):
        """The job's user-data Secrets (<job>-userdata-<digest of the user-data>: a VM job keeps
        the ones its kept revisions name), by the job's label, as the admin reads them."""
        _, body = self.cp.admin.request("GET", path_of("Secret", None, ns), query={"labelSelector": f"cosmicac.io/job={name}"})
        return [s for s in body.get("items", []) if s["metadata"]["name"].startswith(name + "-userdata-")]

    def userdata(self, name, ns):
        """The user-data Secret the job's VMI (else its VM's template) names; without either, the
        job's only one; None when there is none."""
        for kind, at in (("VirtualMachineInstance", ("spec",)), ("VirtualMachine", ("spec", "template", "spec"))):
            o = self.obj(kind, name, ns)
            for key in at:
                o = (o or {}).get(key)
            for v in (o or {}).get("volumes", []):
                ref = (v.get("cloudInitNoCloud") or {}).get("secretRef") or {}
                if ref.get("name"):
                    return self.obj("Secret", ref["name"], ns)
        found = self.userdata_secrets(name, ns)
        return found[0] if len(found) == 1 else None

    def userdata_gone(self, name, ns, timeout=30):
        self.until(f"the user-data Secrets of {ns}/{name} to be gone", lambda: not self.userdata_secrets(name, ns), timeout)

    def gone(self, kind, name, ns, timeout=30):
        self.until(f"{kind} {ns}/{name} to be gone", lambda: self.obj(kind, name, ns) is None, timeout)

    def uids(self, objs):
        return {k: (v["metadata"]["uid"] if v else None) for k, v in objs.items()}

    def apply_ok(self, name, ns, kc, **fields):
        self.run("apply", "-f", self.spec(name, ns, **fields), kubeconfig=kc, expect=0)
        objs = self.objects(name, ns)
        check(all(objs.values()), f"after apply, missing: {[k for k, v in objs.items() if not v]}")
        return objs

    # --- cases ------------------------------------------------------------------------------
    def case_apply_creates(self, ns):
        """First apply: all four objects, written by the restricted user's cosmicac-vmi, owned
        by the VMI as docs/host-tool.md says ("Cluster access", apply's ownership); the user
        cannot read Secrets."""
        kc = self.tester_kubeconfig(ns)
        status, _ = self.cp.tester.request("GET", path_of("Secret", "x-userdata", ns), ok=None)
        check(status == 403, f"the restricted user can read Secrets (GET answered {status})")
        objs = self.apply_ok("vm", ns, kc)
        vmi_uid = objs["vmi"]["metadata"]["uid"]
        for k in ("dv", "secret"):
            refs = objs[k]["metadata"].get("ownerReferences", [])
            check(any(r.get("uid") == vmi_uid and r.get("kind") == "VirtualMachineInstance"
                      and r.get("apiVersion") == "kubevirt.io/v1" for r in refs),
                  f"{k} is not owned by the VMI: {refs}")
        check(not objs["pvc"]["metadata"].get("ownerReferences"), "the data PVC has an owner")
        for k, o in objs.items():
            managers = {m.get("manager") for m in o["metadata"].get("managedFields", [])}
            check("cosmicac-vmi" in managers, f"{k}: field managers {managers}, no cosmicac-vmi")
        check(objs["vmi"]["spec"]["domain"]["cpu"]["cores"] == 4, "VMI cores")
        check(objs["secret"]["data"].get("userdata"), "the user-data Secret has no userdata")

    def case_apply_unchanged(self, ns):
        kc = self.tester_kubeconfig(ns)
        before = self.uids(self.apply_ok("vm", ns, kc))
        r = self.run("apply", "-f", self.spec("vm", ns), kubeconfig=kc, expect=0)
        after = self.uids(self.objects("vm", ns))
        check(before["vmi"] == after["vmi"] and before["dv"] == after["dv"] and before["pvc"] == after["pvc"],
              f"an unchanged re-apply replaced objects: {before} -> {after}\n{r.show()}")
        check("differs" not in r.text(), f"an unchanged re-apply reports a difference:\n{r.show()}")

    def case_apply_differs(self, ns):
        kc = self.tester_kubeconfig(ns)
        before = self.uids(self.apply_ok("vm", ns, kc))
        r = self.run("apply", "-f", self.spec("vm", ns, cpu=8, memory="32Gi"), kubeconfig=kc, expect=1)
        for field in ("spec.domain.cpu.cores", "spec.domain.resources.requests.memory"):
            check(f"differs: VirtualMachineInstance {ns}/vm {field}" in r.text(),
                  f"the difference in {field} is not listed:\n{r.show()}")
        after = self.objects("vm", ns)
        check(self.uids(after) == before, "a differing apply changed objects")
        check(after["vmi"]["spec"]["domain"]["cpu"]["cores"] == 4, "the VMI changed")

    def case_apply_while_terminating(self, ns):
        """apply while the VMI is being deleted (`delete --wait=false` moments ago; a finalizer, as
        KubeVirt's own, holds it) neither says "unchanged" nor hangs new objects on the dying VMI:
        with a --timeout the finalizer outlasts, it refuses, naming the VMI and what holds it, and
        creates nothing; given time, it waits until the VMI is gone and creates the job anew."""
        kc = self.tester_kubeconfig(ns)
        old = self.uids(self.apply_ok("vm", ns, kc))
        hold = "realapi.cosmicac.org/hold"
        vmi_path = path_of("VirtualMachineInstance", "vm", ns)
        self.cp.admin.merge_patch(vmi_path, {"metadata": {"finalizers": [hold]}})
        self.run("delete", "--wait=false", "-f", self.spec("vm", ns), kubeconfig=kc, expect=0)
        self.until("the VMI to be terminating",
                   lambda: (self.obj("VirtualMachineInstance", "vm", ns) or {}).get("metadata", {})
                   .get("deletionTimestamp"))
        r = self.run("apply", "--timeout", "3s", "-f", self.spec("vm", ns), kubeconfig=kc, expect=1)
        check(f"VirtualMachineInstance {ns}/vm is being deleted" in r.err and hold in r.err,
              f"the refusal does not name the terminating VMI and its finalizer:\n{r.show()}")
        check("unchanged" not in r.out, f"a terminating VMI was reported unchanged:\n{r.show()}")
        self.root_gone("vm", ns, 60)
        self.userdata_gone("vm", ns, 60)
        time.sleep(1)
        check(not self.root_dvs("vm", ns) and not self.userdata_secrets("vm", ns),
              "a refused apply created objects")
        p = self.start("apply", "--timeout", "90s", "-f", self.spec("vm", ns), kubeconfig=kc)
        time.sleep(3)
        check(p.poll() is None, "apply did not wait for the terminating VMI")
        self.cp.admin.merge_patch(vmi_path, {"metadata": {"finalizers": None}})
        r = self.finish(p, 120)
        check(r.rc == 0, f"apply after the VMI was gone failed:\n{r.show()}")
        time.sleep(2)   # what the garbage collector would take of a dying owner's, it has taken by now
        new = self.objects("vm", ns)
        check(all(new.values()), f"after the wait, missing: {[k for k, v in new.items() if not v]}\n{r.show()}")
        check(new["vmi"]["metadata"]["uid"] != old["vmi"], "the VMI is the terminating one")
        for k in ("dv", "secret"):
            check(new[k]["metadata"]["ownerReferences"][0]["uid"] == new["vmi"]["metadata"]["uid"],
                  f"{k} is not owned by the new VMI")

    def case_data_disk_growth(self, ns):
        """Growing the data disk is said before anything is written: a Pending claim cannot grow
        yet, a claim never shrinks, a StorageClass without allowVolumeExpansion refuses it (read
        by an identity that may read classes; the Role alone leaves it to the server, whose
        admission refusal is not blamed on RBAC); with expansion allowed the claim grows."""
        a = self.cp.admin
        cls = f"realapi-{ns}"
        a.apply({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": cls},
                 "provisioner": "realapi.cosmicac.org/none", "volumeBindingMode": "Immediate"})
        profile = os.path.join(self.work, f"{ns}-profile.yaml")
        with open(profile, "w") as fh:
            fh.write(f"namespace: {ns}\nstorageClass: {cls}\n")
        kc = self.tester_kubeconfig(ns)

        def apply(size, expect):
            disk = {"size": size, "mountPoint": "/data"}
            return self.run("apply", "--profile", profile, "-f", self.spec("vm", ns, dataDisk=disk),
                            kubeconfig=kc, expect=expect)

        def pvc_size():
            return self.obj("PersistentVolumeClaim", "vm-data", ns)["spec"]["resources"]["requests"]["storage"]

        apply("150Gi", 0)
        r = apply("200Gi", 1)
        check("it is Pending: a claim can grow only once it is bound" in r.err, f"Pending not said:\n{r.show()}")
        check(pvc_size() == "150Gi", "a refused growth changed the claim")
        a.apply({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": cls},
                 "spec": {"capacity": {"storage": "300Gi"}, "accessModes": ["ReadWriteOnce"],
                          "volumeMode": "Filesystem", "storageClassName": cls,
                          "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": "/nonexistent"},
                          "claimRef": {"namespace": ns, "name": "vm-data"}}})
        self.until("the claim to be Bound", lambda: (self.obj("PersistentVolumeClaim", "vm-data", ns) or {})
                   .get("status", {}).get("phase") == "Bound", 60)
        r = apply("100Gi", 1)
        check("a claim never shrinks" in r.err, f"shrinking not refused by name:\n{r.show()}")
        # The Role alone cannot read the class: the server's admission refuses, and says why.
        r = apply("200Gi", 1)
        check("must support resize" in r.err and "lacks this permission" not in r.err,
              f"the admission refusal is not shown as such:\n{r.show()}")
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": f"realapi-{ns}-classes"},
                   "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": TESTER_USER}],
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                               "name": f"realapi-{ns}-classes"}}
        a.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                 "metadata": {"name": f"realapi-{ns}-classes"},
                 "rules": [{"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["get"]}]})
        a.apply(binding)
        try:
            self.until("the tester reading StorageClasses", lambda: self.cp.tester.request(
                "GET", path_of("StorageClass", cls), ok=None)[0] == 200, 20)
            r = apply("200Gi", 1)
            check(f"its StorageClass {cls} does not set allowVolumeExpansion" in r.err,
                  f"the class's missing expansion is not said:\n{r.show()}")
            check(pvc_size() == "150Gi", "a refused growth changed the claim")
            a.merge_patch(path_of("StorageClass", cls), {"allowVolumeExpansion": True})
            apply("200Gi", 0)
            check(pvc_size() == "200Gi", f"the claim did not grow: {pvc_size()}")
        finally:
            a.delete(path_of("ClusterRoleBinding", binding["metadata"]["name"]))

    def case_apply_recreate(self, ns):
        kc = self.tester_kubeconfig(ns)
        objs = self.apply_ok("vm", ns, kc)
        simulate.Launcher(self.cp, ns, objs["vmi"])   # a running VM: its pod goes with the VMI
        before = self.uids(objs)
        self.run("apply", "--recreate", "-f", self.spec("vm", ns, cpu=8), kubeconfig=kc, expect=0)
        after = self.objects("vm", ns)
        check(all(after.values()), f"after --recreate, missing: {[k for k, v in after.items() if not v]}")
        check(after["vmi"]["metadata"]["uid"] != before["vmi"], "--recreate kept the old VMI")
        check(after["vmi"]["spec"]["domain"]["cpu"]["cores"] == 8, "the new VMI has the old spec")
        check(after["pvc"]["metadata"]["uid"] == before["pvc"], "--recreate replaced the data PVC")
        check(after["dv"]["metadata"]["uid"] != before["dv"], "--recreate kept the old root DataVolume")
        for k in ("dv", "secret"):
            check(after[k]["metadata"]["ownerReferences"][0]["uid"] == after["vmi"]["metadata"]["uid"],
                  f"{k} is not owned by the new VMI")

    def _refuse_vmis(self, ns_label):
        """An admission policy (CEL, in the API server) refusing VMI creation in namespaces
        labelled `ns_label`: a later object of apply fails after the PVC was created."""
        a = self.cp.admin
        a.apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                 "metadata": {"name": "realapi-refuse-vmis"},
                 "spec": {"failurePolicy": "Fail",
                          "matchConstraints": {"resourceRules": [{"apiGroups": ["kubevirt.io"], "apiVersions": ["*"],
                                                                  "operations": ["CREATE"],
                                                                  "resources": ["virtualmachineinstances"]}]},
                          "validations": [{"expression": "false", "reason": "Forbidden",
                                           "message": "realapi: VMIs are refused in this namespace"}]}})
        a.apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                 "metadata": {"name": "realapi-refuse-vmis"},
                 "spec": {"policyName": "realapi-refuse-vmis", "validationActions": ["Deny"],
                          "matchResources": {"namespaceSelector": {"matchLabels": {ns_label: "true"}}}}})

    def _policy_in_force(self, ns):
        probe = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                 "metadata": {"name": "probe", "namespace": ns}, "spec": {"domain": {"devices": {}}}}
        status, body = self.cp.admin.request("POST", path_of("VirtualMachineInstance", None, ns), body=probe,
                                             query={"dryRun": "All"}, ok=None)
        return status == 403 and "realapi: VMIs are refused" in json.dumps(body)

    def case_rollback(self, ns):
        """The VMI is refused after the PVC was created: the PVC this run created is deleted,
        the error names what was rolled back and the API's reason."""
        kc = self.tester_kubeconfig(ns)
        self._refuse_vmis("realapi-refuse-vmis")
        self.cp.admin.merge_patch(path_of("Namespace", ns), {"metadata": {"labels": {"realapi-refuse-vmis": "true"}}})
        self.until("the admission policy in force", lambda: self._policy_in_force(ns), 30)
        r = self.run("apply", "-f", self.spec("vm", ns), kubeconfig=kc, expect=1)
        check("realapi: VMIs are refused" in r.text(), f"the API's reason is not shown:\n{r.show()}")
        check("vm-data" in r.err, f"the rolled-back PVC is not named:\n{r.show()}")
        self.gone("PersistentVolumeClaim", "vm-data", ns)
        objs = self.objects("vm", ns)
        check(not any(objs.values()), f"left behind after the roll-back: {[k for k, v in objs.items() if v]}")

    def case_rollback_keeps_existing(self, ns):
        """--recreate whose new VMI is refused: the data PVC, which existed before this run,
        stays."""
        kc = self.tester_kubeconfig(ns)
        pvc_uid = self.apply_ok("vm", ns, kc)["pvc"]["metadata"]["uid"]
        self._refuse_vmis("realapi-refuse-vmis")
        self.cp.admin.merge_patch(path_of("Namespace", ns), {"metadata": {"labels": {"realapi-refuse-vmis": "true"}}})
        self.until("the admission policy in force", lambda: self._policy_in_force(ns), 30)
        r = self.run("apply", "--recreate", "-f", self.spec("vm", ns, cpu=8), kubeconfig=kc, expect=1)
        check("realapi: VMIs are refused" in r.text(), f"the API's reason is not shown:\n{r.show()}")
        time.sleep(2)   # a wrongful delete of the PVC would be visible by now
        pvc = self.obj("PersistentVolumeClaim", "vm-data", ns)
        check(pvc and pvc["metadata"]["uid"] == pvc_uid and not pvc["metadata"].get("deletionTimestamp"),
              f"the pre-existing data PVC did not survive the roll-back:\n{r.show()}")

    def case_delete(self, ns):
        kc = self.tester_kubeconfig(ns)
        objs = self.apply_ok("vm", ns, kc)
        pod = simulate.Launcher(self.cp, ns, objs["vmi"])
        pvc_uid = objs["pvc"]["metadata"]["uid"]
        self.run("delete", "-f", self.spec("vm", ns), kubeconfig=kc, expect=0)
        after = self.objects("vm", ns)
        left = [k for k in ("vmi", "dv", "secret") if after[k]]
        check(not left, f"delete returned with {left} still there")
        check(self.obj("Pod", pod.name, ns) is None, "delete returned with the launcher pod still there")
        check(after["pvc"] and after["pvc"]["metadata"]["uid"] == pvc_uid
              and not after["pvc"]["metadata"].get("deletionTimestamp"), "delete without --delete-data took the PVC")

    def case_delete_data(self, ns):
        kc = self.tester_kubeconfig(ns)
        self.apply_ok("vm", ns, kc)
        self.run("delete", "--delete-data", "-f", self.spec("vm", ns), kubeconfig=kc, expect=0)
        after = self.objects("vm", ns)
        check(not any(after.values()), f"delete --delete-data left {[k for k, v in after.items() if v]}")

    def case_garbage_collector(self, ns):
        """The ownerReferences apply wrote are ones the real garbage collector follows: deleting
        the VMI alone (as kubectl would, background) takes the DataVolume and the Secret."""
        kc = self.tester_kubeconfig(ns)
        self.apply_ok("vm", ns, kc)
        self.cp.admin.delete(path_of("VirtualMachineInstance", "vm", ns),
                             body={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"})
        self.root_gone("vm", ns, 60)
        self.userdata_gone("vm", ns, 60)
        check(self.obj("PersistentVolumeClaim", "vm-data", ns), "the garbage collector took the unowned PVC")

    def _unchanged(self, before, r, what):
        time.sleep(1)   # a DELETE the server did perform would show by now (no finalizers here)
        after = self.objects("vm", ns=r.ns)
        deleting = [k for k, o in after.items() if o and o["metadata"].get("deletionTimestamp")]
        check(self.uids(after) == before and not deleting,
              f"{what} deleted: {before} -> {self.uids(after)}, terminating: {deleting}\n{r.show()}")
        check(after["vmi"]["spec"]["domain"]["cpu"]["cores"] == 4, f"{what} changed the VMI")
        check(r.rc == 0, f"{what} failed:\n{r.show()}")

    def case_dry_run_server_delete(self, ns):
        """delete --delete-data --dry-run=server leaves every object as it was."""
        kc = self.tester_kubeconfig(ns)
        before = self.uids(self.apply_ok("vm", ns, kc))
        r = self.run("delete", "--delete-data", "--dry-run=server", "-f", self.spec("vm", ns), kubeconfig=kc)
        r.ns = ns
        self._unchanged(before, r, "delete --dry-run=server")

    def case_dry_run_server_recreate(self, ns):
        """apply --recreate --dry-run=server of a differing spec leaves every object as it was."""
        kc = self.tester_kubeconfig(ns)
        before = self.uids(self.apply_ok("vm", ns, kc))
        r = self.run("apply", "--recreate", "--dry-run=server", "-f", self.spec("vm", ns, cpu=8), kubeconfig=kc)
        r.ns = ns
        self._unchanged(before, r, "apply --recreate --dry-run=server")

    def _boot(self, ns, name, console=True, agent="ready", node=simulate.NODE_NAME):
        """The cluster's side of a boot, in a thread: scheduled, root disk imported, launcher
        pod running, the agent's lines on the console, then the VMI Ready."""
        errors = []

        def go():
            try:
                vmi = self.obj("VirtualMachineInstance", name, ns)
                simulate.vmi_status(self.cp, ns, name, "Scheduling", False, "GuestNotRunning", "Guest VM is not reported as running")
                simulate.datavolume_status(self.cp, ns, self.root_name(name, ns), "ImportInProgress", "45.20%")
                pod = simulate.Launcher(self.cp, ns, vmi, console=console, node=node)
                time.sleep(1)
                simulate.datavolume_status(self.cp, ns, self.root_name(name, ns), "Succeeded", "100.0%")
                simulate.vmi_status(self.cp, ns, name, "Running", False, "ContainersNotReady",
                                    "containers with unready status: [compute]")
                time.sleep(1.5)
                if console and node == simulate.NODE_NAME:
                    a = simulate.Agent(self.cp, ns, pod.name)
                    a.noise("[    2.104] systemd[1]: Started getty@ttyS0.service.")
                    if agent == "ready":
                        a.boot_to_ready()
                    else:
                        a.fail_login()
                        return
                time.sleep(1)
                simulate.vmi_status(self.cp, ns, name, "Running", True)
            except Exception as e:   # reported by the case
                errors.append(e)
        t = threading.Thread(target=go, daemon=True)
        t.start()
        return t, errors

    def case_wait_console_ready(self, ns):
        kc = self.tester_kubeconfig(ns)
        self.apply_ok("vm", ns, kc)
        before = len(self.cp.kubelet.requests)
        p = self.start("wait", "vm", "-n", ns, "--interval", "1s", "--timeout", "90s", kubeconfig=kc)
        t, errors = self._boot(ns, "vm")
        r = self.finish(p, 120)
        t.join(10)
        check(not errors, f"the simulator failed: {errors}")
        check(r.rc == 0, f"wait did not succeed:\n{r.show()}")
        check("agent [8/8] ready" in r.text(), f"the agent's ready event did not come through the log:\n{r.show()}")
        check("(agent ready, VMI Ready)" in r.text(), f"no agent+VMI ready summary:\n{r.show()}")
        check("ImportInProgress" in r.text() or "Succeeded" in r.text(), f"no DataVolume line:\n{r.show()}")
        served = self.cp.kubelet.requests[before:]
        check(any(f"/containerLogs/{ns}/" in s and "guest-console-log" in s for s in served),
              f"the kubelet endpoint was not asked for the console log (served: {served})")

    def case_wait_agent_failed(self, ns):
        kc = self.tester_kubeconfig(ns)
        self.apply_ok("vm", ns, kc)
        p = self.start("wait", "vm", "-n", ns, "--interval", "1s", "--timeout", "90s", kubeconfig=kc)
        t, errors = self._boot(ns, "vm", agent="failed")
        r = self.finish(p, 120)
        t.join(10)
        check(not errors, f"the simulator failed: {errors}")
        check(r.rc == 1, f"wait did not fail:\n{r.show()}")
        check("reason=auth step=login" in r.err, f"the agent's failure is not named:\n{r.show()}")

    def case_wait_ready_fallback(self, ns):
        """No guest-console-log container: wait says so and ends on the VMI's Ready."""
        kc = self.tester_kubeconfig(ns)
        self.apply_ok("vm", ns, kc)
        p = self.start("wait", "vm", "-n", ns, "--interval", "1s", "--timeout", "90s", kubeconfig=kc)
        t, errors = self._boot(ns, "vm", console=False)
        r = self.finish(p, 120)
        t.join(10)
        check(not errors, f"the simulator failed: {errors}")
        check(r.rc == 0, f"wait did not succeed:\n{r.show()}")
        check("has no guest-console-log container" in r.text(), f"the fallback is not explained:\n{r.show()}")
        check("(Ready condition only)" in r.text(), f"no Ready-only summary:\n{r.show()}")

    def case_wait_log_unreachable(self, ns):
        """The launcher pod's node cannot be reached for its log (pods/log: 500 connection
        refused): wait says so once, naming the pod, and ends on the Ready condition."""
        kc = self.tester_kubeconfig(ns)
        self.apply_ok("vm", ns, kc)
        p = self.start("wait", "vm", "-n", ns, "--interval", "1s", "--timeout", "90s", kubeconfig=kc)
        t, errors = self._boot(ns, "vm", node=cluster.UNREACHABLE_NODE)
        r = self.finish(p, 120)
        t.join(10)
        check(not errors, f"the simulator failed: {errors}")
        check(r.rc == 0, f"wait did not succeed:\n{r.show()}")
        said = [l for l in r.text().splitlines() if "cannot be read" in l]
        check(len(said) == 1, f"the unreadable log is not said exactly once:\n{r.show()}")
        check(f"log of pod {ns}/virt-launcher-vm-" in said[0] and "connection refused" in said[0],
              f"the line does not name the pod and the cause:\n{r.show()}")
        check("(Ready condition only)" in r.text(), f"no Ready-only summary:\n{r.show()}")

    def _bare_vmis(self, ns, names):
        """VMIs with the tool's labels, POSTed directly (no DataVolume, no pod: cheap), each
        Running and not Ready."""
        for n in names:
            self.cp.admin.create({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                                  "metadata": {"name": n, "namespace": ns,
                                               "labels": {"app.kubernetes.io/managed-by": "cosmicac-vmi",
                                                          "cosmicac.io/job": n}},
                                  "spec": {"domain": {"devices": {}}}})
            simulate.vmi_status(self.cp, ns, n, "Running", False, "ContainersNotReady",
                                "containers with unready status: [compute]")

    def case_wait_many(self, ns):
        """50 jobs in one command, made Ready in a random order by status writes, one of them
        Failed: exit 1, the summary names the failure, each job's lines carry its name."""
        kc = self.tester_kubeconfig(ns)
        names = [f"vm-{i:02d}" for i in range(50)]
        self._bare_vmis(ns, names)
        failed = random.choice(names)
        p = self.start("wait", *names, "-n", ns, "--timeout", "90s", kubeconfig=kc)
        time.sleep(1)
        for n in random.sample(names, len(names)):
            if n == failed:
                simulate.vmi_status(self.cp, ns, n, "Failed", False, "GuestCrashed", "the guest kernel panicked")
            else:
                simulate.vmi_status(self.cp, ns, n, "Running", True)
        r = self.finish(p, 120)
        check(r.rc == 1, f"one job failed: exit 1 expected:\n{r.show()}")
        check("summary: 50 jobs: 49 ready, 1 failed, 0 timed out" in r.err, f"no summary:\n{r.show()}")
        check(f"  {failed}: VirtualMachineInstance {ns}/{failed} reached phase Failed" in r.err
              and "GuestCrashed: the guest kernel panicked" in r.err, f"the failure's reason is not in the summary:\n{r.show()}")
        lines = r.text().splitlines()
        for n in names:
            mine = [l for l in lines if l.startswith(n + ": ")]
            want = "Ready=False (GuestCrashed" if n == failed else "phase=Running Ready=True"
            check(any(want in l for l in mine), f"{n}: no line with {want}:\n{r.show()}")
            check(len(mine) == len(set(mine)), f"{n}: a line repeated:\n{r.show()}")
            end = f"{n}: failed: " if n == failed else f"{n}: ready: VirtualMachineInstance {ns}/{n} is Ready"
            check(sum(1 for l in mine if l.startswith(end)) == 1, f"{n}: no single end line {end!r}:\n{r.show()}")

    def case_wait_apiserver_restart(self, ns):
        """kube-apiserver restarts while `wait` watches: the watch resumes from the
        resourceVersion it held, gets 410 Gone (the new watch cache starts later) and re-lists;
        once it follows again (a probe state written until `wait` shows it), every change is
        shown once and in order, none is missed or repeated."""
        kc = self.tester_kubeconfig(ns)
        self._bare_vmis(ns, ["vm", "vm-b"])
        p = self.start("wait", "vm", "vm-b", "-n", ns, "--timeout", "90s", kubeconfig=kc)
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(iter(p.stdout.readline, "")), daemon=True)
        reader.start()

        def shown(word):
            return any(word in l for l in list(lines))
        simulate.vmi_status(self.cp, ns, "vm", "Running", False, "Step1", "before the restart")
        self.until("Step1 shown", lambda: shown("Step1"), 20)
        # A write elsewhere moves the store's resourceVersion past the one `wait` holds.
        self.cp.admin.apply({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "bump", "namespace": ns}, "data": {"x": "1"}})
        self.cp.restart_apiserver()
        # Its metrics start at zero: a VMI LIST now is `wait`'s re-list after 410 Gone.
        self.until("the VMIs re-listed after the restart", lambda: self.cp.metric(
            "apiserver_request_total", verb="LIST", resource="virtualmachineinstances", code="200") >= 1, 40)
        probes = []

        def probe():
            probes.append(f"Probe{len(probes)}")
            simulate.vmi_status(self.cp, ns, "vm-b", "Running", False, probes[-1], "is it watched again?")
            time.sleep(0.5)
            return shown(probes[-1])
        self.until("wait following again", probe, 40)
        for step in ("Step2", "Step3"):
            simulate.vmi_status(self.cp, ns, "vm", "Running", False, step, "after the restart")
            time.sleep(0.3)
        simulate.vmi_status(self.cp, ns, "vm", "Running", True)
        simulate.vmi_status(self.cp, ns, "vm-b", "Running", True)
        try:
            rc = p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "killed"
        reader.join(5)
        r = Run(p.argv, rc, "".join(lines), p.stderr.read())
        self.transcript.append(r.show())
        check(r.rc == 0, f"wait did not succeed:\n{r.show()}")
        mine = [l for l in r.out.splitlines() if l.startswith(f"vm: VirtualMachineInstance {ns}/vm: ")]
        steps = [s for l in mine for s in ("Step1", "Step2", "Step3", "Ready=True") if s in l]
        check(steps == ["Step1", "Step2", "Step3", "Ready=True"],
              f"changes missed, repeated or out of order ({steps}):\n{r.show()}")

    def case_list_get(self, ns):
        """list and get: the rows; a VMI whose agent failed after ready says so in STATUS, read
        from its console's tail through the real pods/log (tailLines); vm-b carries a spec
        `readiness`, so the API server's strict validation takes the VMI's probe built from it."""
        kc = self.tester_kubeconfig(ns)
        objs = self.apply_ok("vm-a", ns, kc)
        self.apply_ok("vm-b", ns, kc, cpu=2, gpu={"type": GPU_TYPE, "count": 2},
                      readiness={"httpGet": {"port": 8000, "path": "/health"}, "periodSeconds": 15,
                                 "timeoutSeconds": 2, "failureThreshold": 4})
        probe = self.obj("VirtualMachineInstance", "vm-b", ns)["spec"]["readinessProbe"]
        check((probe["periodSeconds"], probe["timeoutSeconds"], probe["failureThreshold"]) == (15, 12, 4),
              f"vm-b's readinessProbe as stored: {probe}")
        pod = simulate.Launcher(self.cp, ns, objs["vmi"])
        simulate.Agent(self.cp, ns, pod.name).fail_after_ready()
        simulate.vmi_status(self.cp, ns, "vm-a", "Running", False, "ContainersNotReady",
                            "containers with unready status: [compute]")
        simulate.vmi_status(self.cp, ns, "vm-b", "Running", True)
        r = self.run("list", "-n", ns, kubeconfig=kc, expect=0)
        lines = r.out.splitlines()
        check(lines and lines[0].split()[:3] == ["NAME", "PHASE", "READY"], f"no header:\n{r.show()}")
        rows = {ln.split()[0]: ln.split() for ln in lines[1:] if ln.strip()}
        check(set(rows) == {"vm-a", "vm-b"}, f"list shows {sorted(rows)}:\n{r.show()}")
        check(rows["vm-b"][1] == "Running" and rows["vm-b"][2] == "True", f"vm-b's row:\n{r.show()}")
        said = "failed after ready: reason=container-unready step=ready message="
        check(rows["vm-a"][2] == "False" and said in r.out, f"vm-a's failure is not in STATUS:\n{r.show()}")
        r = self.run("get", "vm-a", "-n", ns, kubeconfig=kc, expect=0)
        check(said in r.out, f"get does not say vm-a's failure:\n{r.show()}")
        check(any("tailLines=" in q and pod.name in q for q in self.cp.kubelet.requests),
              f"the console's tail was not read through pods/log: {self.cp.kubelet.requests}")
        r = self.run("list", "-n", ns, "-o", "json", kubeconfig=kc, expect=0)
        names = sorted(i["metadata"]["name"] for i in json.loads(r.out)["items"])
        check(names == ["vm-a", "vm-b"], f"list -o json: {names}")
        r = self.run("get", "vm-b", "-n", ns, "-o", "json", kubeconfig=kc, expect=0)
        vmi = json.loads(r.out)
        check(len(vmi["spec"]["domain"]["devices"]["gpus"]) == 2, "get -o json: not vm-b's spec")
        r = self.run("get", "no-such-vm", "-n", ns, kubeconfig=kc, expect=1)
        check("no-such-vm" in r.err, f"get of a missing VMI does not name it:\n{r.show()}")

    def _doctor_cluster(self, ns):
        """A cluster doctor passes on (KubeVirt, CDI, the StorageClass, the Secret, bootstrap-cm) and
        the kubeconfig of the role's ServiceAccount with clusterrole-doctor.yaml bound to it."""
        a = self.cp.admin
        for d in self.doctor_docs:
            a.apply(self._in_namespace(d, ns))
        a.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubevirt"}})
        a.apply({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                      "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
                      "spec": {"configuration": {
                          "developerConfiguration": {"featureGates": ["HostDevices"]},
                          "permittedHostDevices": {"pciHostDevices": [
                              {"pciVendorSelector": "10DE:2330", "resourceName": cluster.GPU_RESOURCE}]}}}})
        a.merge_patch(path_of("KubeVirt", "kubevirt", "kubevirt", "status"), {"status": {
            "phase": "Deployed", "observedKubeVirtVersion": "v1.7.0",
            "conditions": [{"type": "Available", "status": "True", "reason": "AllComponentsReady",
                            "message": "All components are ready."}]}})
        a.apply({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "CDI", "metadata": {"name": "cdi"}, "spec": {}})
        a.merge_patch(path_of("CDI", "cdi"), {"status": {
            "phase": "Deployed", "observedVersion": "v1.62.0",
            "conditions": [{"type": "Available", "status": "True", "reason": "", "message": ""}]}})
        a.apply({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local-path"},
                 "provisioner": "rancher.io/local-path", "volumeBindingMode": "WaitForFirstConsumer"})
        a.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ghcr-pull-cred", "namespace": ns},
                 "stringData": {k: "x" for k in ("accessKeyId", "secretKey", "DOCKER_REGISTRY", "DOCKER_USERNAME",
                                                  "DOCKER_TOKEN")}})
        version = subprocess.run([self.vmi, "--version"], capture_output=True, text=True).stdout.split()[1]  # "cosmicac-vmi V"
        a.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bootstrap-cm", "namespace": ns},
                 "data": {"agent-version": version}, "binaryData": {"docker-bootstrap.sh": "f0VMRg=="}})
        token = a.request("POST", path_of("ServiceAccount", "cosmicac-vmi", ns, "token"),
                          body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                "spec": {"expirationSeconds": 3600}})[1]["status"]["token"]
        kc = self.cp.kubeconfig("sa", ns, token=token)
        self.until("RBAC for the ServiceAccount", lambda: cluster.Api(self.cp.port, self.cp.ca, token=token).request(
            "GET", "/apis/storage.k8s.io/v1/storageclasses/local-path", ok=None)[0] == 200, 20)
        return kc

    def case_doctor(self, ns):
        """doctor as the role's ServiceAccount (a bound token) with clusterrole-doctor.yaml,
        in a cluster whose KubeVirt, CDI, StorageClass, Secret and ConfigMap are as they should
        be: every check passes, the RBAC ones through real SelfSubjectAccessReviews."""
        kc = self._doctor_cluster(ns)
        # With an allowedImages list (without one, "images" is a warning: any image may run).
        profile = os.path.join(self.work, f"{ns}-doctor-profile.yaml")
        with open(profile, "w") as fh:
            fh.write(f"namespace: {ns}\nallowedImages: [ghcr.io/tetherto/cosmicac-wrk-agent-inference]\n")
        r = self.run("doctor", "--profile", profile, "-f", self.spec("vm", ns), "--json", kubeconfig=kc)
        doc = json.loads(r.out)
        bad = [(c["name"], c["state"], c.get("detail")) for c in doc["checks"] if c["state"] != "pass"]
        check(r.rc == 0 and doc["ok"] and not bad, f"doctor: not every check passed: {bad}\n{r.show()}")
        names = {c["name"] for c in doc["checks"]}
        for n in ("nodes", "capacity", "kubevirt", "cdi", "storageclass"):
            check(n in names, f"doctor has no {n} check: {sorted(names)}")
        check(any(n.startswith("rbac ") for n in names), f"doctor has no rbac checks: {sorted(names)}")
        # The same doctor as the plain user, without the doctor grants: what it cannot read is
        # "!" (unknown), not a failure.
        r = self.run("doctor", "-f", self.spec("vm", ns), "--json", kubeconfig=self.tester_kubeconfig(ns))
        doc = json.loads(r.out)
        states = {c["name"]: c["state"] for c in doc["checks"]}
        check(states.get("kubevirt") == "unknown" and states.get("nodes") == "unknown",
              f"doctor without the doctor grants: {states}\n{r.show()}")
        check(all(s == "pass" for n, s in states.items() if n.startswith("rbac ")),
              f"the role's own grants are not all confirmed: {states}")

    def case_mirror_objects(self, ns):
        """render --mirror: each object passes the real API server's validation (a server-side
        dry run that refuses unknown fields); the registry reads its upstream login from the
        operator's credential Secret and its htpasswd from its own; the NetworkPolicy admits
        only the VMs' launcher pods; the dry run created nothing."""
        r = self.run("render", "--mirror", "-n", ns, "-o", "json", kubeconfig=None, expect=0)
        items = json.loads(r.out)["items"]
        kinds = [o["kind"] for o in items]
        check(kinds == ["PersistentVolumeClaim", "Deployment", "Service", "NetworkPolicy"],
              f"render --mirror gave {kinds}")
        for o in items:
            status, body = self.cp.admin.request("POST", path_of(o["kind"], None, ns), body=o,
                                                 query={"dryRun": "All", "fieldValidation": "Strict"}, ok=None)
            check(status == 201, f"the API server refused the mirror's {o['kind']}: HTTP {status}: "
                                 f"{json.dumps(body)[:800]}")
            check(body.get("metadata", {}).get("namespace") == ns, f"{o['kind']} not in {ns}: {body.get('metadata')}")
            check(self.obj(o["kind"], o["metadata"]["name"], ns) is None, f"the dry run created the {o['kind']}")
        pod = items[1]["spec"]["template"]["spec"]
        env = {e["name"]: e for e in pod["containers"][0]["env"]}
        for var, key in (("UPSTREAM_REGISTRY", "DOCKER_REGISTRY"), ("REGISTRY_PROXY_USERNAME", "DOCKER_USERNAME"),
                         ("REGISTRY_PROXY_PASSWORD", "DOCKER_TOKEN")):
            ref = env.get(var, {}).get("valueFrom", {}).get("secretKeyRef", {})
            check(ref == {"name": "ghcr-pull-cred", "key": key}, f"{var} is not the credential Secret's {key}: {ref}")
        check(env.get("REGISTRY_AUTH", {}).get("value") == "htpasswd", f"the mirror has no login of its own: {env}")
        vols = {v["name"]: v for v in pod["volumes"]}
        check(vols.get("htpasswd", {}).get("secret", {}).get("secretName") == "cosmicac-registry-mirror-htpasswd",
              f"htpasswd volume: {vols.get('htpasswd')}")
        policy = items[3]["spec"]
        check(policy["policyTypes"] == ["Ingress"] and len(policy["ingress"]) == 1
              and policy["ingress"][0]["from"] == [{"podSelector": {"matchLabels": {"kubevirt.io": "virt-launcher"}}}],
              f"the NetworkPolicy admits more than this namespace's launcher pods: {policy}")
        container = pod["containers"][0]
        check(re.fullmatch(r"docker\.io/library/registry:3\.[0-9.]+@sha256:[0-9a-f]{64}", container["image"]),
              f"the mirror's image is not Distribution v3 pinned by digest: {container['image']}")
        check(vols.get("tls", {}).get("secret", {}).get("secretName") == "cosmicac-registry-mirror-tls"
              and env.get("REGISTRY_HTTP_TLS_CERTIFICATE", {}).get("value") == "/tls/tls.crt"
              and env.get("REGISTRY_HTTP_TLS_KEY", {}).get("value") == "/tls/tls.key",
              f"the mirror does not serve TLS from its Secret: {vols.get('tls')}, {env}")
        self.mirror_service_takes_only_its_pods(ns, items)

    def mirror_service_takes_only_its_pods(self, ns, items):
        """The real EndpointSlice controller fills the mirror's Service: with a running pod of
        the mirror's Deployment and the launcher pod of a VMI that carries every label of the
        mirror's pods (anyone who may create a VMI chooses its labels; the launcher pod copies
        them, then KubeVirt sets its own keys over them), the Service's endpoints are the
        mirror's pod alone."""
        deployment, service = items[1], items[2]
        a = self.cp.admin
        a.create(service)
        template = deployment["spec"]["template"]
        mirror_pod = {"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "cosmicac-registry-mirror-7d9f-abcde", "namespace": ns,
                                   "labels": template["metadata"]["labels"]},
                      "spec": {"nodeName": simulate.NODE_NAME, "automountServiceAccountToken": False,
                               "containers": [{"name": "registry", "image": template["spec"]["containers"][0]["image"],
                                               "ports": [{"containerPort": 5000, "name": "registry"}]}]}}
        self.until("the namespace's default ServiceAccount", lambda: self.obj("ServiceAccount", "default", ns))
        a.create(mirror_pod)
        now = rfc3339_nano()
        a.merge_patch(path_of("Pod", mirror_pod["metadata"]["name"], ns, "status"), {"status": {
            "phase": "Running", "hostIP": "127.0.0.1", "podIP": "10.244.0.11", "startTime": now,
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                           for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]}})
        hostile = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                   "metadata": {"name": "looks-like-the-mirror", "namespace": ns,
                                "labels": dict(template["metadata"]["labels"])},
                   "spec": {"domain": {"devices": {}, "resources": {"requests": {"memory": "1Gi"}}}}}
        vmi = a.create(hostile)
        launcher = simulate.Launcher(self.cp, ns, vmi, console=False, pod_ip="10.244.0.12")
        got = a.exists(path_of("Pod", launcher.name, ns))["metadata"]["labels"]
        check(got.get("app.kubernetes.io/name") == "cosmicac-registry-mirror"
              and got.get("kubevirt.io/created-by") == vmi["metadata"]["uid"],
              f"the launcher pod does not carry the VMI's labels under KubeVirt's own: {got}")

        def addresses():
            _, slices = a.request("GET", path_of("EndpointSlice", None, ns),
                                  query={"labelSelector": "kubernetes.io/service-name=cosmicac-registry-mirror"})
            found = sorted(addr for sl in slices.get("items", []) for ep in sl.get("endpoints") or []
                           for addr in ep.get("addresses", []))
            return found or None
        check(self.until("the mirror Service's endpoints", addresses) == ["10.244.0.11"],
              f"the mirror's Service takes pods other than the mirror's: {addresses()}")
        time.sleep(1)   # the controller batches pod changes: the launcher pod had its chance
        check(addresses() == ["10.244.0.11"], f"the mirror's Service took the launcher pod: {addresses()}")

    def case_golden_image_cron(self, ns):
        """render --golden-image: the DataImportCron passes the real API server's strict field
        validation against CDI v1.62.0's CRD (a server-side dry run); the same object with what
        v1.62.0 does not know (labels in template.metadata, serviceAccountName) is refused, so the
        acceptance is not the server's leniency."""
        r = self.run("render", "--golden-image", "--data-source", f"{ns}/ubuntu", "--import",
                     "ghcr.io/tetherto/kubevirt-image:24.04", "--schedule", "30 4 * * *", "--imports-to-keep", "4",
                     "-o", "json", kubeconfig=None, expect=0)
        items = json.loads(r.out)["items"]
        check([o["kind"] for o in items] == ["DataImportCron"], f"render --golden-image gave {items}")
        cron = items[0]

        def dry_run(o):
            return self.cp.admin.request("POST", path_of("DataImportCron", None, ns), body=o,
                                         query={"dryRun": "All", "fieldValidation": "Strict"}, ok=None)
        status, body = dry_run(cron)
        check(status == 201, f"the API server refused the DataImportCron: HTTP {status}: {json.dumps(body)[:800]}")
        check(body["spec"]["managedDataSource"] == "ubuntu" and body["spec"]["importsToKeep"] == 4,
              f"the server kept another spec: {body['spec']}")
        check(self.obj("DataImportCron", cron["metadata"]["name"], ns) is None, "the dry run created the cron")
        for what, change in (("template.metadata.labels", lambda o: o["spec"]["template"].update(
                                 {"metadata": {"labels": {"a": "b"}}})),
                             ("serviceAccountName", lambda o: o["spec"].update({"serviceAccountName": "x"}))):
            bad = copy.deepcopy(cron)
            change(bad)
            status, body = dry_run(bad)
            check(status // 100 == 4, f"v1.62.0's CRD accepted {what} under strict validation: HTTP {status}")

    def case_doctor_golden(self, ns):
        """doctor with a profile's goldenImage, as the role's ServiceAccount: the DataSource missing,
        then not Ready, then Ready with its cron's digest but in a namespace the identity may not
        clone from (a real SelfSubjectAccessReview of create datavolumes/source), then clonable:
        each a ✗ naming it, then every check passes; the StorageProfile's strategy is said."""
        a = self.cp.admin
        kc = self._doctor_cluster(ns)
        golden = ns + "-os"
        a.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": golden}})
        for d in self.doctor_docs:
            if d["metadata"].get("name") == "cosmicac-vmi-doctor-golden":
                d = self._in_namespace(d, ns)
                d["metadata"]["namespace"] = golden
                a.apply(d)
        # CDI's CRDs v1.62.0 give DataSource, DataImportCron and StorageProfile no status
        # subresource: the status is written with the object, as CDI's controllers do.
        a.apply({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "StorageProfile", "metadata": {"name": "local-path"},
                 "spec": {}})
        a.merge_patch(path_of("StorageProfile", "local-path"), {"status": {
            "provisioner": "rancher.io/local-path", "storageClass": "local-path", "cloneStrategy": "copy"}})
        profile = os.path.join(self.work, f"{ns}-golden-profile.yaml")
        with open(profile, "w") as fh:
            fh.write(f"namespace: {ns}\ngoldenImage: {golden}/ubuntu\n"
                     "allowedImages: [ghcr.io/tetherto/cosmicac-wrk-agent-inference]\n")

        def doctor(expect_ok):
            r = self.run("doctor", "--profile", profile, "--json", kubeconfig=kc)
            doc = json.loads(r.out)
            check(doc["ok"] == expect_ok and r.rc == (0 if expect_ok else 1), f"doctor ok={doc['ok']}:\n{r.show()}")
            return {c["name"]: c for c in doc["checks"]}, r

        checks, r = doctor(False)
        g = checks.get("golden image", {})
        check(g.get("state") == "fail" and "does not exist" in g.get("detail", ""), f"missing DataSource:\n{r.show()}")
        digest = "sha256:" + "9f" * 32
        a.create({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataSource",
                  "metadata": {"name": "ubuntu", "namespace": golden,
                               "labels": {"cdi.kubevirt.io/dataImportCron": "ubuntu-cron"}},
                  "spec": {"source": {"pvc": {"name": "ubuntu-9f9f9f9f9f9f", "namespace": golden}}}})
        a.merge_patch(path_of("DataSource", "ubuntu", golden), {"status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "NotFound", "message": "source PVC not found",
             "lastHeartbeatTime": None, "lastTransitionTime": cluster.rfc3339_nano()}]}})
        checks, r = doctor(False)
        g = checks.get("golden image", {})
        check(g.get("state") == "fail" and "is not Ready (NotFound" in g.get("detail", ""), f"not Ready:\n{r.show()}")
        a.create({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataImportCron",
                  "metadata": {"name": "ubuntu-cron", "namespace": golden},
                  "spec": {"schedule": "0 */12 * * *", "managedDataSource": "ubuntu",
                           "template": {"spec": {"source": {"registry": {"url": "docker://ghcr.io/x/y:1"}}}}}})
        a.merge_patch(path_of("DataImportCron", "ubuntu-cron", golden), {"status": {
            "currentImports": [{"DataVolumeName": "ubuntu-9f9f9f9f9f9f", "Digest": digest}]}})
        a.merge_patch(path_of("DataSource", "ubuntu", golden), {"status": {"conditions": [
            {"type": "Ready", "status": "True", "reason": "Ready", "message": "",
             "lastHeartbeatTime": None, "lastTransitionTime": cluster.rfc3339_nano()}]}})
        checks, r = doctor(False)
        g, p, s = (checks.get(n, {}) for n in ("golden image", "clone permission", "clone strategy"))
        check(g.get("state") == "pass" and digest in g.get("detail", ""), f"Ready, its digest:\n{r.show()}")
        check(p.get("state") == "fail" and f"may not clone from namespace {golden}" in p.get("detail", ""),
              f"the clone permission is not refused:\n{r.show()}")
        check(s.get("state") == "warn" and "host-assisted" in s.get("detail", ""), f"the strategy:\n{r.show()}")
        a.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                 "metadata": {"name": "clone-source", "namespace": golden},
                 "rules": [{"apiGroups": ["cdi.kubevirt.io"], "resources": ["datavolumes/source"],
                            "verbs": ["create"]}]})
        a.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                 "metadata": {"name": "clone-source", "namespace": golden},
                 "subjects": [{"kind": "ServiceAccount", "name": "cosmicac-vmi", "namespace": ns}],
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "clone-source"}})
        checks = self.until("the clone grant to reach doctor",
                            lambda: (lambda c: c if c.get("clone permission", {}).get("state") == "pass" else None)(
                                {c["name"]: c for c in json.loads(self.run(
                                    "doctor", "--profile", profile, "--json", kubeconfig=kc).out)["checks"]}), 20)
        bad = [(n, c["state"]) for n, c in checks.items() if c["state"] not in ("pass", "warn")]
        check(not bad, f"doctor with a clonable golden image: {bad}")

    def case_wait_clone(self, ns):
        """wait on a VirtualMachine job whose root disk is a clone, the simulator as KubeVirt and CDI:
        the DataVolume's clone phases and progress are shown before the VMI exists, then the boot to
        ready; a clone whose source vanished (CloneWithoutSource: CDI waits forever) fails with that
        reason after --schedule-timeout; so does a VM whose printableStatus says it cannot start."""
        kc = self.tester_kubeconfig(ns)
        prof = self._vm_profile(ns)
        for name in ("vm", "vm-gone", "vm-stuck"):
            self.run("apply", "--profile", prof, "-f", self.spec(name, ns), kubeconfig=kc, expect=0)
            simulate.vm_datavolumes(self.cp, ns, self.obj("VirtualMachine", name, ns))
            simulate.vm_status(self.cp, ns, name, "Provisioning")
        vm_root, gone_root = self.root_name("vm", ns), self.root_name("vm-gone", ns)  # <job>-root-<digest>
        simulate.datavolume_status(self.cp, ns, vm_root, "CloneScheduled", "N/A")
        p = self.start("wait", "vm", "-n", ns, "--interval", "1s", "--timeout", "90s", kubeconfig=kc)
        errors = []

        def cdi():
            try:
                for phase, progress in (("CloneScheduled", "N/A"), ("CSICloneInProgress", "45.00%"),
                                        ("CloneInProgress", "80.00%"), ("Succeeded", "100.0%")):
                    simulate.datavolume_status(self.cp, ns, vm_root, phase, progress)
                    time.sleep(1.2)
                simulate.vm_sync(self.cp, ns, "vm")
            except Exception as e:   # reported by the case
                errors.append(e)
        t = threading.Thread(target=cdi, daemon=True)
        t.start()
        t.join(30)
        boot, boot_errors = self._boot(ns, "vm", console=False)
        r = self.finish(p, 120)
        boot.join(10)
        check(not errors and not boot_errors, f"the simulator failed: {errors} {boot_errors}")
        check(r.rc == 0, f"wait did not succeed:\n{r.show()}")
        for line in ("phase=CSICloneInProgress (clone: CSI volume clone) 45.00%",
                     "phase=CloneInProgress (clone: host-assisted copy) 80.00%"):
            check(line in r.text(), f"wait did not show {line!r}:\n{r.show()}")

        simulate.datavolume_status(self.cp, ns, gone_root, "CloneScheduled", "N/A", conditions=[
            {"type": "Bound", "status": "Unknown", "reason": "CloneWithoutSource",
             "message": "The source pvc ubuntu-9f9f9f9f9f9f doesn't exist"},
            {"type": "Ready", "status": "False"}])
        r = self.run("wait", "vm-gone", "-n", ns, "--interval", "1s", "--timeout", "60s", "--schedule-timeout", "2s",
                     kubeconfig=kc, expect=1)
        check("has been stuck for 2s: its clone source is gone" in r.err and "CloneWithoutSource" in r.err,
              f"the vanished clone source is not named:\n{r.show()}")
        simulate.vm_status(self.cp, ns, "vm-stuck", "ErrorUnschedulable")
        r = self.run("wait", "vm-stuck", "-n", ns, "--interval", "1s", "--timeout", "60s", "--schedule-timeout", "2s",
                     kubeconfig=kc, expect=1)
        check("VirtualMachine " + ns + "/vm-stuck cannot start for 2s: printableStatus=ErrorUnschedulable" in r.err,
              f"the printableStatus is not the failure:\n{r.show()}")

    def case_namespace_deletion(self, ns):
        """Deleting the namespace of a running VM: the namespace controller takes the VMI (and
        its launcher pod, DataVolume, Secret, PVC); apply into the terminating namespace is
        refused; the namespace goes; get afterwards fails."""
        kc = self.tester_kubeconfig(ns)
        objs = self.apply_ok("vm", ns, kc)
        simulate.Launcher(self.cp, ns, objs["vmi"])
        self.cp.admin.delete(path_of("Namespace", ns))
        r = self.run("apply", "-f", self.spec("vm2", ns), kubeconfig=kc)
        # The namespace may be gone already (then the user's RBAC went with it: 403 or 404).
        check(r.rc == 1, f"apply into a terminating namespace did not fail:\n{r.show()}")
        check(not any(self.objects("vm2", ns).values()), "apply into a terminating namespace left objects")
        self.until(f"namespace {ns} to be gone", lambda: self.cp.admin.exists(path_of("Namespace", ns)) is None, 90)
        self.run("get", "vm", "-n", ns, kubeconfig=kc, expect=1)


    def case_rbac_denial_named(self, ns):
        """A 403 from RBAC (the user has no binding in `default`; `list` asks for VMs first) sends the operator to
        host/rbac/role.yaml, and the server's message reads as text: its quotes plain, not
        JSON-escaped."""
        r = self.run("list", "-n", "default", kubeconfig=self.tester_kubeconfig(ns), expect=1)
        check("lacks this permission" in r.err, f"an RBAC denial is not named as one:\n{r.show()}")
        check(f'User "{TESTER_USER}" cannot list resource "virtualmachines"' in r.err,
              f"the server's message is not shown as text:\n{r.show()}")

    def case_admission_refusal_not_blamed_on_rbac(self, ns):
        """A 403 from admission (a ValidatingAdmissionPolicy, a terminating namespace) is not a
        missing RBAC grant: the error must not send the operator to host/rbac/role.yaml."""
        kc = self.tester_kubeconfig(ns)
        self._refuse_vmis("realapi-refuse-vmis")
        self.cp.admin.merge_patch(path_of("Namespace", ns), {"metadata": {"labels": {"realapi-refuse-vmis": "true"}}})
        self.until("the admission policy in force", lambda: self._policy_in_force(ns), 30)
        r = self.run("apply", "-f", self.spec("vm", ns), kubeconfig=kc, expect=1)
        check("realapi: VMIs are refused" in r.err, f"the policy's message is not shown:\n{r.show()}")
        check("lacks this permission" not in r.err,
              f"an admission policy's refusal is reported as a missing permission:\n{r.show()}")


    def case_userdata_size_limit(self, ns):
        """The user-data Secret may hold what the API server accepts: its data up to 1 MiB, counted
        decoded (not the base64 of the JSON body, which refused ~780 KB). The server's own limit is
        checked beside ours with Secrets written as the admin."""
        import base64
        limit = 1 << 20
        for size, accepted in ((limit, True), (limit + 1, False)):
            secret = {"apiVersion": "v1", "kind": "Secret",
                      "metadata": {"name": f"size-{size}", "namespace": ns},
                      "data": {"userdata": base64.b64encode(b"u" * size).decode()}}
            status, body = self.cp.admin.request("POST", path_of("Secret", None, ns), body=secret, ok=None)
            check((status == 201) == accepted, f"the server's Secret limit is not {limit} bytes of data: "
                                               f"{size} bytes -> HTTP {status} {str(body)[:300]}")
        kc = self.tester_kubeconfig(ns)
        env = {"MODEL_ID": "tiny", "WEIGHTS_INLINE": "w" * 1_000_000}
        self.apply_ok("big", ns, kc, container={"env": env})
        data = self.userdata("big", ns)["data"]["userdata"]
        check(len(base64.b64decode(data)) > 1_000_000, "the stored user-data is not the whole env")
        # Over the limit, from a spec file under its own 1 MiB cap: "é" is 2 bytes in the file and
        # longer in the 7-bit user-data.
        env["WEIGHTS_INLINE"] = "\u00e9" * 300_000
        with open(self.spec("too-big", ns), encoding="utf-8") as fh:
            doc = json.load(fh)
        doc["container"] = {"env": env}
        path = os.path.join(self.work, f"{ns}-too-big-utf8.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, ensure_ascii=False)
        r = self.run("apply", "-f", path, kubeconfig=kc, expect=2)
        check("container.env: makes the user-data Secret's data" in r.err, f"not named:\n{r.show()}")
        check(not any(self.objects("too-big", ns).values()), "a refused spec left objects")

    def case_namespace_is_operators(self, ns):
        """A spec naming another namespace (where the same user may write too, with a pull Secret
        of the default name): exit 2 naming both, before any request, nothing created in either;
        a spec without a namespace lands in the operator's (-n, or the profile's)."""
        other = self.namespace("namespace_is_operators_b")
        self.cp.admin.apply({"apiVersion": "v1", "kind": "Secret",
                             "metadata": {"name": "ghcr-pull-cred", "namespace": other},
                             "stringData": {"DOCKER_TOKEN": "tenant-b-token"}})
        kc = self.tester_kubeconfig(ns)
        attack = self.spec("vm", other)
        for how in (["-n", ns], ["--profile", self._profile(ns)]):
            r = self.run("apply", "-f", attack, *how, kubeconfig=kc, expect=2)
            check(f"namespace: '{other}' is not the operator's namespace '{ns}'" in r.err, f"not named:\n{r.show()}")
        for n in (ns, other):
            check(not any(self.objects("vm", n).values()), f"a refused spec left objects in {n}")
        with open(attack) as fh:
            doc = json.load(fh)
        del doc["namespace"]
        quiet = os.path.join(self.work, f"{ns}-no-namespace.json")
        with open(quiet, "w") as fh:
            json.dump(doc, fh)
        self.run("apply", "-f", quiet, "--profile", self._profile(ns), kubeconfig=kc, expect=0)
        check(all(self.objects("vm", ns).values()), "the spec without a namespace is not in the operator's")
        check(not any(self.objects("vm", other).values()), "objects in the namespace the spec did not name")

    def _profile(self, ns):
        path = os.path.join(self.work, f"{ns}-profile.yaml")
        with open(path, "w") as fh:
            fh.write(f"namespace: {ns}\n")
        return path

    def _vm_profile(self, ns, extra=""):
        path = os.path.join(self.work, f"{ns}-vm-profile-{len(os.listdir(self.work))}.yaml")
        with open(path, "w") as fh:
            fh.write(f"namespace: {ns}\nworkloadKind: VirtualMachine\nrunStrategy: Always\n{extra}")
        return path

    def _vmi_uid(self, ns, name):
        return ((self.obj("VirtualMachineInstance", name, ns) or {}).get("metadata") or {}).get("uid")

    def _evict(self, ns, name):
        """What a drain does to a VMI with evictionStrategy None, as far as the VM controller sees
        it: the VMI goes (its launcher pod evicted). Then KubeVirt's VM controller's pass."""
        old = self._vmi_uid(ns, name)
        self.cp.admin.delete(path_of("VirtualMachineInstance", name, ns))
        self.until("the evicted VMI to be gone", lambda: self._vmi_uid(ns, name) != old, 60)
        return simulate.vm_sync(self.cp, ns, name)

    def case_vm_lifecycle(self, ns):
        """workloadKind VirtualMachine on the real API server, as the restricted identity of
        host/rbac/role.yaml: apply server-side applies a VirtualMachine (strict validation against
        KubeVirt v1.7.0's CRD) whose template is the VMI's spec and whose dataVolumeTemplates hold
        the root disk; the user-data Secret is owned by the VM. The simulator then acts as KubeVirt's
        VM controller (simulate.vm_sync): `wait` follows the VM to its VMI and the agent, and across
        an eviction to the next VMI; an unchanged apply writes nothing; a template change is applied
        and says a restart is needed; --restart deletes the VMI and the VM's next one runs the new
        template; Halted: no new VMI, and wait says so; list shows the VM; delete keeps the data PVC."""
        kc = self.tester_kubeconfig(ns)
        prof = self._vm_profile(ns)
        r = self.run("doctor", "--profile", prof, "--json", kubeconfig=kc)
        checks = {c["name"]: c for c in json.loads(r.out)["checks"]}
        check(checks.get("virtualmachines", {}).get("state") == "pass", f"doctor's VM check:\n{r.show()}")
        check(checks.get("rbac virtualmachines.kubevirt.io", {}).get("state") == "pass", f"doctor's RBAC:\n{r.show()}")
        check("restarts" in checks, f"doctor says nothing of restarts:\n{r.show()}")
        self.run("apply", "--profile", prof, "-f", self.spec("vm", ns), kubeconfig=kc, expect=0)
        vm = self.obj("VirtualMachine", "vm", ns)
        check(vm is not None, "no VirtualMachine")
        check(self.obj("VirtualMachineInstance", "vm", ns) is None, "apply made a VMI of its own")
        check(not self.root_dvs("vm", ns), "apply made the root DataVolume (KubeVirt's job)")
        check(vm["spec"]["runStrategy"] == "Always", f"runStrategy {vm['spec'].get('runStrategy')}")
        check(vm["spec"]["dataVolumeTemplates"][0]["metadata"]["name"].startswith("vm-root-"), "no root disk template")
        check(vm["spec"]["template"]["spec"]["evictionStrategy"] == "None", "evictionStrategy")
        check("cosmicac-vmi" in {m.get("manager") for m in vm["metadata"].get("managedFields", [])},
              "the VM's fields are not cosmicac-vmi's")
        secret = self.userdata("vm", ns)
        check(any(r.get("uid") == vm["metadata"]["uid"] and r.get("kind") == "VirtualMachine"
                  for r in secret["metadata"].get("ownerReferences", [])), "the Secret is not owned by the VM")
        pvc = self.obj("PersistentVolumeClaim", "vm-data", ns)
        check(not pvc["metadata"].get("ownerReferences"), "the data PVC has an owner")
        # KubeVirt's VM controller: the root DataVolume (owned by the VM) and VMI #1, which starts booting.
        first = simulate.vm_sync(self.cp, ns, "vm")
        dv = self.root_dv("vm", ns)
        check(dv["metadata"]["ownerReferences"][0]["uid"] == vm["metadata"]["uid"], "the root disk is not the VM's")
        simulate.vmi_status(self.cp, ns, "vm", "Running", False, "ContainersNotReady", "containers not ready")
        p = self.start("wait", "vm", "-n", ns, "--interval", "1s", "--timeout", "90s", kubeconfig=kc)
        time.sleep(2)
        second = self._evict(ns, "vm")  # wait is following VMI #1: now it is gone, and #2 is made
        check(second and second["metadata"]["uid"] != first["metadata"]["uid"], "the VM made no new VMI")
        t, errors = self._boot(ns, "vm")
        r = self.finish(p, 120)
        t.join(10)
        check(not errors, f"the simulator failed: {errors}")
        check(r.rc == 0, f"wait across the eviction failed:\n{r.show()}")
        check("is a new one" in r.text() and "(agent ready, VMI Ready)" in r.text(),
              f"wait did not follow the new VMI to the agent's ready:\n{r.show()}")
        check(self.root_dv("vm", ns)["metadata"]["uid"] == dv["metadata"]["uid"],
              "the root disk was not kept across the restart")
        # Unchanged: no write at all.
        rv = self.obj("VirtualMachine", "vm", ns)["metadata"]["resourceVersion"]
        r = self.run("apply", "--profile", prof, "-f", self.spec("vm", ns), kubeconfig=kc, expect=0)
        check(f"VirtualMachine {ns}/vm unchanged" in r.text(), f"not said unchanged:\n{r.show()}")
        check(self.obj("VirtualMachine", "vm", ns)["metadata"]["resourceVersion"] == rv, "an unchanged VM was written")
        # A template change: applied, the running VMI kept, a restart said to be needed.
        r = self.run("apply", "--profile", prof, "-f", self.spec("vm", ns, cpu=8), kubeconfig=kc, expect=0)
        check(f"differs: VirtualMachine {ns}/vm spec.template.spec.domain.cpu.cores" in r.text()
              and "restart needed" in r.text(), f"the change and the restart are not said:\n{r.show()}")
        check(self.obj("VirtualMachine", "vm", ns)["spec"]["template"]["spec"]["domain"]["cpu"]["cores"] == 8,
              "the template was not applied")
        check(self._vmi_uid(ns, "vm") == second["metadata"]["uid"], "apply without --restart restarted the VM")
        # KubeVirt (rollout strategy Stage) marks it RestartRequired; --restart performs it.
        simulate.vm_status(self.cp, ns, "vm", "Running", conditions=[
            {"type": "RestartRequired", "status": "True", "message": "a non-live-updatable field was changed"}])
        r = self.run("apply", "--restart", "--profile", prof, "-f", self.spec("vm", ns, cpu=8), kubeconfig=kc,
                     expect=0)
        check("deleted: restarting" in r.text(), f"--restart did not restart:\n{r.show()}")
        self.until("the restarted VMI to be gone", lambda: self._vmi_uid(ns, "vm") != second["metadata"]["uid"], 60)
        third = simulate.vm_sync(self.cp, ns, "vm")
        check(third["spec"]["domain"]["cpu"]["cores"] == 8, "the VM's next VMI does not run the new template")
        # Halted (virtctl stop): the VMI goes and none comes back; wait says so.
        self.cp.admin.merge_patch(path_of("VirtualMachine", "vm", ns), {"spec": {"runStrategy": "Halted"}})
        check(simulate.vm_sync(self.cp, ns, "vm") is None, "a Halted VM kept its VMI")
        self.gone("VirtualMachineInstance", "vm", ns)
        check(simulate.vm_sync(self.cp, ns, "vm") is None, "a Halted VM made a VMI")
        r = self.run("wait", "vm", "-n", ns, "--interval", "1s", "--timeout", "30s", kubeconfig=kc, expect=1)
        check("starts no other" in r.text(), f"wait did not say the Halted VM starts no VMI:\n{r.show()}")
        r = self.run("list", "-n", ns, kubeconfig=kc, expect=0)
        check(re.search(r"^vm +- +False +<none> +\S+ +1 +Stopped", r.out, re.M), f"list:\n{r.show()}")
        r = self.run("delete", "--profile", prof, "-f", self.spec("vm", ns), kubeconfig=kc, expect=0)
        self.gone("VirtualMachine", "vm", ns, 60)
        self.root_gone("vm", ns, 60)
        self.userdata_gone("vm", ns, 60)
        check(self.obj("PersistentVolumeClaim", "vm-data", ns)["metadata"]["uid"] == pvc["metadata"]["uid"],
              "delete did not keep the data disk")

    # --- rollout ------------------------------------------------------------------------------
    def _fleet_dir(self, ns, names, **fields):
        """A fleet directory: one spec per job (rollout -f DIR reads them sorted by name)."""
        d = os.path.join(self.work, f"{ns}-fleet-{len(os.listdir(self.work))}")
        os.mkdir(d)
        for n in names:
            doc = {"name": n, "namespace": ns, "cpu": 4, "memory": "16Gi",
                   "gpu": {"type": GPU_TYPE, "count": 1},
                   "dataDisk": {"size": "100Gi", "mountPoint": "/data"},
                   "container": {"image": "ghcr.io/tetherto/cosmicac-wrk-agent-inference:latest",
                                 "env": {"MODEL_ID": "tiny", "API_KEY": "s3cr3t-realapi-value"}}}
            doc.update(fields)
            with open(os.path.join(d, f"{n}.json"), "w") as fh:
                json.dump(doc, fh)
        return d

    def _record(self, ns):
        cm = self.obj("ConfigMap", "cosmicac-rollout", ns)
        check(cm is not None, "no rollout record (ConfigMap cosmicac-rollout)")
        return cm, json.loads(cm["data"]["record.json"])

    @staticmethod
    def _events(r):
        return [json.loads(line) for line in r.out.splitlines() if line.strip()]

    def case_rollout_fleet(self, ns):
        """`rollout` of five VirtualMachine jobs on the real API server, as the restricted identity,
        with simulate.Fleet as KubeVirt's VM controller and the guests (VMIs ready in random order):
        the first rollout creates them (a canary, then --max-unavailable 2 at a time), each VM
        carrying its revision; a change rolls them again: each VM restarted once (a new VMI), the
        canary's digest pinned for the later batches and said, the record Complete; `rollout
        status` reads it; --dry-run then lists the next change and writes nothing; a rerun with
        nothing to change restarts nothing."""
        kc = self.tester_kubeconfig(ns)
        prof = self._vm_profile(ns)
        names = [f"roll-{i}" for i in range(1, 6)]
        digest = "sha256:" + "5e" * 32
        with simulate.Fleet(self.cp, ns, digest=digest) as fleet:
            r = self.run("rollout", "--profile", prof, "-f", self._fleet_dir(ns, names), "--max-unavailable", "2",
                         "--timeout", "90s", "--interval", "1s", "-o", "json", kubeconfig=kc, timeout=300)
            check(r.rc == 0, f"the first rollout failed:\n{r.show()}")
            # Jobs with no VM yet are down already: after the canary they go in one batch.
            batches = [e for e in self._events(r) if e["event"] == "batch" and e.get("state") == "started"]
            check([len(b["jobs"]) for b in batches] == [1, 4], f"batches {batches}:\n{r.show()}")
            # While a batch waits, its line shows the pull progress of its jobs still waiting.
            check(any(e["event"] == "batch" and e.get("state") == "waiting" and 62 in e.get("pull", {}).values()
                      for e in self._events(r)), f"no batch line with the pull progress:\n{r.show()}")
            _, rec = self._record(ns)
            check(rec["state"] == "Complete", f"record {rec}")
            for n in names:
                vm = self.obj("VirtualMachine", n, ns)
                rev = vm["metadata"]["annotations"]["cosmicac.io/revision"]
                check(rev == vm["spec"]["template"]["metadata"]["annotations"]["cosmicac.io/revision"],
                      f"{n}: the template does not carry the VM's revision")
            before = {n: self._vmi_uid(ns, n) for n in names}
            booted = dict(fleet.booted)
            # A change to every job: rolled again, each restarted once, 2 at a time after the canary.
            fleet_dir = self._fleet_dir(ns, names, cpu=8)
            r = self.run("rollout", "--profile", prof, "-f", fleet_dir, "--max-unavailable", "2",
                         "--timeout", "90s", "--interval", "1s", "-o", "json", kubeconfig=kc, timeout=300)
            check(r.rc == 0, f"the second rollout failed:\n{r.show()}")
            events = self._events(r)
            batches = [e for e in events if e["event"] == "batch" and e.get("state") == "started"]
            check([len(b["jobs"]) for b in batches] == [1, 2, 2], f"batches {batches}:\n{r.show()}")
            check([e["pinned"] for e in events if e["event"] == "pin"] ==
                  [f"ghcr.io/tetherto/cosmicac-wrk-agent-inference@{digest}"], f"the pin is not said:\n{r.show()}")
            check("s3cr3t-realapi-value" not in r.text(), "an env value in the output")
            for n in names:
                check(self._vmi_uid(ns, n) not in (None, before[n]), f"{n} runs no new VMI")
                check(fleet.booted[n] == booted[n] + 1, f"{n} was started {fleet.booted[n] - booted[n]} times")
                vmi = self.obj("VirtualMachineInstance", n, ns)
                check(vmi["spec"]["domain"]["cpu"]["cores"] == 8, f"{n}'s VMI does not run the new template")
            cm, rec = self._record(ns)
            check(rec["state"] == "Complete" and all(j["state"] == "ready" for j in rec["jobs"]), f"record {rec}")
            check(list(rec["pins"].values()) == [f"ghcr.io/tetherto/cosmicac-wrk-agent-inference@{digest}"],
                  f"pins {rec['pins']}")
            check("s3cr3t-realapi-value" not in json.dumps(cm), "an env value in the record")
            r = self.run("rollout", "status", "-n", ns, kubeconfig=kc, expect=0)
            check("rollout Complete" in r.out and "roll-5" in r.out, f"status:\n{r.show()}")
            # The dry run of a next change: listed, nothing written.
            rv = cm["metadata"]["resourceVersion"]
            uids = {n: self._vmi_uid(ns, n) for n in names}
            r = self.run("rollout", "--profile", prof, "-f", self._fleet_dir(ns, names, cpu=6), "--dry-run",
                         kubeconfig=kc, expect=0)
            check("spec.template.spec.domain.cpu.cores" in r.out and "dry run: nothing was changed" in r.out,
                  f"the plan:\n{r.show()}")
            check(self._record(ns)[0]["metadata"]["resourceVersion"] == rv, "the dry run wrote the record")
            check({n: self._vmi_uid(ns, n) for n in names} == uids, "the dry run restarted a VM")
            check(all(self.obj("VirtualMachine", n, ns)["spec"]["template"]["spec"]["domain"]["cpu"]["cores"] == 8
                      for n in names), "the dry run changed a VM")
            # Nothing to change: nothing restarted.
            r = self.run("rollout", "--profile", prof, "-f", fleet_dir, kubeconfig=kc, expect=0)
            check("nothing to roll" in r.out, f"not said:\n{r.show()}")
            check({n: self._vmi_uid(ns, n) for n in names} == uids, "an unchanged job was restarted")
            check(not fleet.errors, f"the simulator failed: {fleet.errors}")

    def case_rollout_stops(self, ns):
        """A failing canary stops the rollout (exit 1, the job and the agent's reason named), and
        nothing after it is restarted; a failure in a later batch stops it past --max-failed 0, and
        with --max-failed 1 the rest still roll (exit 1: not every job is ready). --no-rollback: the
        restore reads kept revisions, which w-revision provides."""
        kc = self.tester_kubeconfig(ns)
        prof = self._vm_profile(ns)
        names = ["stop-1", "stop-2", "stop-3", "stop-4"]
        with simulate.Fleet(self.cp, ns) as fleet:
            self.run("rollout", "--profile", prof, "-f", self._fleet_dir(ns, names), "--max-unavailable", "3",
                     "--timeout", "90s", "--interval", "1s", kubeconfig=kc, timeout=300, expect=0)
            uids = {n: self._vmi_uid(ns, n) for n in names}
            fleet.fail = {"stop-1"}
            r = self.run("rollout", "--profile", prof, "-f", self._fleet_dir(ns, names, cpu=8), "--no-rollback",
                         "--timeout", "60s", "--interval", "1s", kubeconfig=kc, timeout=300, expect=1)
            check("stop-1 failed" in r.out and "reason=auth" in r.out and "the canary failed" in r.out,
                  f"the failed canary is not said:\n{r.show()}")
            check(all(self._vmi_uid(ns, n) == uids[n] for n in names[1:]), "a job after the canary was restarted")
            _, rec = self._record(ns)
            check(rec["state"] == "Stopped", f"record {rec}")
            # A failure in a later batch: stop-3 fails (stop-1, failed and at the target, is left alone
            # and counts as down: --max-unavailable 2 leaves one more).
            fleet.fail = {"stop-3"}
            r = self.run("rollout", "--profile", prof, "-f", self._fleet_dir(ns, names, cpu=8), "--no-rollback",
                         "--max-unavailable", "2", "--timeout", "60s", "--interval", "1s", kubeconfig=kc,
                         timeout=300, expect=1)
            check("more than --max-failed 0" in r.out, f"not stopped past --max-failed:\n{r.show()}")
            check(self._vmi_uid(ns, "stop-4") == uids["stop-4"], "stop-4 was restarted after the failure")
            # --max-failed 1: the failure is borne and the later batches still roll; exit 1 all the same.
            r = self.run("rollout", "--profile", prof, "-f", self._fleet_dir(ns, names, cpu=6), "--no-rollback",
                         "--max-failed", "1", "--timeout", "60s", "--interval", "1s", kubeconfig=kc, timeout=300,
                         expect=1)
            check(self._vmi_uid(ns, "stop-4") != uids["stop-4"], f"--max-failed 1 did not go on:\n{r.show()}")
            _, rec = self._record(ns)
            states = {j["name"]: j["state"] for j in rec["jobs"]}
            check(states.get("stop-3") == "failed" and states.get("stop-4") == "ready", f"record {rec}")

    def _vm_rev(self, ns, name):
        return self.obj("VirtualMachine", name, ns)["metadata"]["annotations"]["cosmicac.io/revision"]

    def _all_ready(self, ns, names):
        def ready(n):
            vmi = self.obj("VirtualMachineInstance", n, ns)
            conds = ((vmi or {}).get("status") or {}).get("conditions") or []
            return not (vmi or {}).get("metadata", {}).get("deletionTimestamp") and any(
                c["type"] == "Ready" and c["status"] == "True" for c in conds)
        return all(ready(n) for n in names)

    def _roll(self, ns, prof, kc, names, expect=0, extra=(), **fields):
        return self.run("rollout", "--profile", prof, "-f", self._fleet_dir(ns, names, **fields), *extra,
                        "--timeout", "90s", "--interval", "1s", kubeconfig=kc, timeout=300, expect=expect)

    def case_rollout_undo(self, ns):
        """`rollout history` and `rollout undo` on the real API server, as the restricted identity:
        after two rollouts, history lists each job's two kept revisions (the VM's and its VMI's
        the newest, the rollout record's image and state beside it); bad input is refused with exit
        2 naming the job and why, with nothing changed (no VMI restarted, the record not written, no
        Lease left): a job that does not exist, a bare VMI job, a job with no previous revision, a
        --to-revision not kept, a selector matching nothing, a kept revision that cannot be read;
        `undo -l SELECTOR` then rolls the fleet back (a canary, then --max-unavailable 2): every VM
        at its previous revision on a new VMI, the record an undo, Complete."""
        kc = self.tester_kubeconfig(ns)
        prof = self._vm_profile(ns)
        names = ["undo-1", "undo-2", "undo-3"]
        with simulate.Fleet(self.cp, ns) as fleet:
            self._roll(ns, prof, kc, names, extra=("--max-unavailable", "3"))
            first = {n: self._vm_rev(ns, n) for n in names}
            self._roll(ns, prof, kc, names, extra=("--max-unavailable", "2"), cpu=8)
            second = {n: self._vm_rev(ns, n) for n in names}
            r = self.run("rollout", "history", "undo-1", "-n", ns, "-o", "json", kubeconfig=kc, expect=0)
            h = json.loads(r.out)
            check([(x["revision"], x["current"], x["running"]) for x in h["revisions"]] ==
                  [(second["undo-1"], True, True), (first["undo-1"], False, False)], f"history:\n{r.show()}")
            check("its target, ready" in h["revisions"][0].get("rollout", "") and
                  h["revisions"][0].get("image", "").endswith("@" + fleet.digest), f"history:\n{r.show()}")
            r = self.run("rollout", "history", "undo-1", "-n", ns, kubeconfig=kc, expect=0)
            check("REVISION" in r.out and "current,running" in r.out, f"history table:\n{r.show()}")
            # Bad input: refused, named, nothing changed.
            self.apply_ok("bare", ns, kc)  # no workloadKind: a bare VMI job
            self.run("apply", "--profile", prof, "-f", self.spec("lone", ns), kubeconfig=kc, expect=0)
            rv = self._record(ns)[0]["metadata"]["resourceVersion"]
            uids = {n: self._vmi_uid(ns, n) for n in names}
            prev = f"undo-3-rev-{first['undo-3']}"
            cr_path = f"/apis/apps/v1/namespaces/{ns}/controllerrevisions/{prev}"
            self.cp.admin.merge_patch(cr_path, {"metadata": {"labels": {"cosmicac.io/revision": "not-this-one"}}})
            for args, why in ((["nope"], "job nope has no VirtualMachine"),
                              (["bare"], "job bare is a bare VMI"),
                              (["lone"], "job lone has no previous revision"),
                              (["undo-1", "--to-revision", "000000000000"], "job undo-1 keeps no revision 000000000000"),
                              (["-l", "cosmicac.io/job=none"], "matches no job"),
                              (["undo-1", "undo-3"], prev)):
                r = self.run("rollout", "undo", *args, "-n", ns, "--interval", "1s", kubeconfig=kc, expect=2)
                check(why in r.err, f"the refusal does not say {why!r}:\n{r.show()}")
            self.cp.admin.merge_patch(cr_path, {"metadata": {"labels": {"cosmicac.io/revision": first["undo-3"]}}})
            check(self._record(ns)[0]["metadata"]["resourceVersion"] == rv, "a refused undo wrote the record")
            check({n: self._vmi_uid(ns, n) for n in names} == uids, "a refused undo restarted a VM")
            check(self._lease(ns) is None, "a refused undo left its Lease")
            # The undo of the fleet, by a selector.
            r = self.run("rollout", "undo", "-l", "cosmicac.io/job in (undo-1,undo-2,undo-3)", "-n", ns,
                         "--max-unavailable", "2", "--timeout", "90s", "--interval", "1s", "-o", "json",
                         kubeconfig=kc, timeout=300, expect=0)
            batches = [e for e in self._events(r) if e["event"] == "batch" and e.get("state") == "started"]
            check([len(b["jobs"]) for b in batches] == [1, 2], f"batches {batches}:\n{r.show()}")
            for n in names:
                check(self._vm_rev(ns, n) == first[n], f"{n} is not back on its previous revision")
                check(self._vmi_uid(ns, n) not in (None, uids[n]), f"{n} runs no new VMI")
                vmi = self.obj("VirtualMachineInstance", n, ns)
                check(vmi["spec"]["domain"]["cpu"]["cores"] == 4, f"{n}'s VMI does not run the previous template")
            _, rec = self._record(ns)
            check(rec.get("undoOf") == "previous" and rec["state"] == "Complete" and
                  {j["name"]: (j["from"], j["to"], j["state"]) for j in rec["jobs"]} ==
                  {n: (second[n], first[n], "ready") for n in names}, f"record {rec}")
            h = json.loads(self.run("rollout", "history", "undo-2", "-n", ns, "-o", "json", kubeconfig=kc,
                                    expect=0).out)
            check([x["revision"] for x in h["revisions"]] == [first["undo-2"], second["undo-2"]] and
                  h["current"] == first["undo-2"], f"history after the undo: {h}")
            check(self._lease(ns) is None, "the undo did not release its Lease")
            check(not fleet.errors, f"the simulator failed: {fleet.errors}")

    def case_rollout_rollback_and_pin(self, ns):
        """A canary that fails on the new revision is put back on what it ran before (no
        --no-rollback) and waited for: its VM at the previous revision, a new VMI of the previous
        template Ready, the record `rolled-back`, exit 1, nothing after it restarted. Then a tag that
        moves right after the canary is ready (the agents of later VMIs report another digest):
        every later batch runs the canary's digest, pinned in its user-data."""
        import base64
        kc = self.tester_kubeconfig(ns)
        prof = self._vm_profile(ns)
        names = ["rb-1", "rb-2", "rb-3"]
        first_digest, moved = "sha256:" + "a1" * 32, "sha256:" + "b2" * 32
        with simulate.Fleet(self.cp, ns, digest=first_digest) as fleet:
            self._roll(ns, prof, kc, names, extra=("--max-unavailable", "3"))
            first = {n: self._vm_rev(ns, n) for n in names}
            uids = {n: self._vmi_uid(ns, n) for n in names}
            fleet.fail_if = lambda vmi: vmi["spec"]["domain"]["cpu"]["cores"] == 8
            r = self._roll(ns, prof, kc, names, expect=1, extra=("--timeout", "60s"), cpu=8)
            check("the canary failed" in r.out and f"rb-1 rolled back to revision {first['rb-1']} and ready" in r.out,
                  f"the rollback is not said:\n{r.show()}")
            check(self._vm_rev(ns, "rb-1") == first["rb-1"], "rb-1's VM is not back on its previous revision")
            vmi = self.obj("VirtualMachineInstance", "rb-1", ns)
            check(vmi["metadata"]["uid"] != uids["rb-1"] and vmi["spec"]["domain"]["cpu"]["cores"] == 4 and
                  self._all_ready(ns, ["rb-1"]), f"rb-1 does not run the previous template, Ready: {vmi}")
            check(all(self._vmi_uid(ns, n) == uids[n] for n in names[1:]), "a job after the canary was restarted")
            _, rec = self._record(ns)
            check(rec["state"] == "Stopped" and rec["jobs"][0]["state"] == "rolled-back", f"record {rec}")
            # The tag moves right after the canary is ready: later VMIs' agents would report `moved`.
            fleet.fail_if = None
            fleet.on_ready = lambda name: setattr(fleet, "digest", moved)
            r = self._roll(ns, prof, kc, names, extra=("--max-unavailable", "1", "-o", "json"), cpu=6)
            pinned = f"ghcr.io/tetherto/cosmicac-wrk-agent-inference@{first_digest}"
            check([e["pinned"] for e in self._events(r) if e["event"] == "pin"] == [pinned],
                  f"the canary's digest is not pinned:\n{r.show()}")
            check(fleet.digest == moved, "the tag did not move")
            for n in names[1:]:
                data = base64.b64decode(self.userdata(n, ns)["data"]["userdata"]).decode("utf-8", "replace")
                check(pinned in data and moved[7:] not in data, f"{n} does not run the canary's digest")
            check(not fleet.errors, f"the simulator failed: {fleet.errors}")

    def case_rollout_interrupt_resume(self, ns):
        """SIGINT to the real binary while a later batch is in flight: exit 1, nothing further
        restarted, the record `Interrupted`, the Lease released; the same rollout run again
        continues: the jobs already at the new revision (the canary, the one in flight) are not
        restarted again, the rest are, the record Complete."""
        kc = self.tester_kubeconfig(ns)
        prof = self._vm_profile(ns)
        names = ["int-1", "int-2", "int-3", "int-4"]
        with simulate.Fleet(self.cp, ns) as fleet:
            self._roll(ns, prof, kc, names, extra=("--max-unavailable", "4"))
            uids = {n: self._vmi_uid(ns, n) for n in names}
            fleet.delay = (2.0, 2.5)  # a batch in flight long enough to be interrupted
            fleet_dir = self._fleet_dir(ns, names, cpu=8)
            p = self.start("rollout", "--profile", prof, "-f", fleet_dir, "--timeout", "90s", "--interval", "1s",
                           kubeconfig=kc)
            self.until("the second batch's restart", lambda: self._vmi_uid(ns, "int-2") != uids["int-2"], 90)
            p.send_signal(signal.SIGINT)
            r = self.finish(p, 60)
            check(r.rc == 1 and "interrupted" in r.out, f"the interrupt is not said:\n{r.show()}")
            _, rec = self._record(ns)
            states = {j["name"]: j["state"] for j in rec["jobs"]}
            check(rec["state"] == "Interrupted" and states["int-1"] == "ready" and states["int-4"] == "pending",
                  f"record {rec}")
            check(self._lease(ns) is None, "the interrupted rollout did not release its Lease")
            check(all(self._vmi_uid(ns, n) == uids[n] for n in names[2:]), "a job after the interrupt restarted")
            self.until("the VMs to be ready", lambda: self._all_ready(ns, names), 60)
            booted = dict(fleet.booted)
            fleet.delay = (0.2, 1.0)
            r = self.run("rollout", "--profile", prof, "-f", fleet_dir, "--timeout", "90s", "--interval", "1s",
                         kubeconfig=kc, timeout=300, expect=0)
            check(all(fleet.booted[n] == booted[n] for n in names[:2]), f"a job at the target restarted:\n{r.show()}")
            check(all(fleet.booted[n] == booted[n] + 1 for n in names[2:]), f"a job was not rolled:\n{r.show()}")
            check(self._record(ns)[1]["state"] == "Complete", "the resumed rollout is not Complete")
            check(not fleet.errors, f"the simulator failed: {fleet.errors}")

    def case_rollout_bare_vmi(self, ns):
        """Bare VMI jobs (a profile without workloadKind) rolled: the first rollout creates them; a
        change rolls them again, a canary then one at a time, each deleted (its VMI, root disk and
        user-data) and applied: a new VMI of the new spec carrying its revision, the same data
        claim; the record Complete; the same specs again recreate nothing; `rollout undo` of a bare
        VMI job is refused (exit 2), named."""
        kc = self.tester_kubeconfig(ns)
        prof = self._profile(ns)
        names = ["bare-1", "bare-2"]
        with simulate.Fleet(self.cp, ns, bare=True) as fleet:
            self._roll(ns, prof, kc, names, extra=("--max-unavailable", "2"))
            pvcs = {n: self.obj("PersistentVolumeClaim", f"{n}-data", ns)["metadata"]["uid"] for n in names}
            uids = {n: self._vmi_uid(ns, n) for n in names}
            fleet_dir = self._fleet_dir(ns, names, cpu=8)
            r = self.run("rollout", "--profile", prof, "-f", fleet_dir, "--timeout", "90s", "--interval", "1s",
                         "-o", "json", kubeconfig=kc, timeout=300, expect=0)
            batches = [e for e in self._events(r) if e["event"] == "batch" and e.get("state") == "started"]
            check([b["jobs"] for b in batches] == [["bare-1"], ["bare-2"]], f"batches {batches}:\n{r.show()}")
            _, rec = self._record(ns)
            check(rec["state"] == "Complete", f"record {rec}")
            to = {j["name"]: j["to"] for j in rec["jobs"]}
            for n in names:
                vmi = self.obj("VirtualMachineInstance", n, ns)
                check(vmi["metadata"]["uid"] != uids[n] and vmi["spec"]["domain"]["cpu"]["cores"] == 8,
                      f"{n} does not run a new VMI of the new spec")
                check(vmi["metadata"]["annotations"]["cosmicac.io/revision"] == to[n], f"{n}'s VMI: no revision")
                check(self.obj("PersistentVolumeClaim", f"{n}-data", ns)["metadata"]["uid"] == pvcs[n],
                      f"{n}'s data claim is not the one it had")
                check(fleet.booted[n] == 2, f"{n} was started {fleet.booted[n]} times")
            uids = {n: self._vmi_uid(ns, n) for n in names}
            r = self.run("rollout", "--profile", prof, "-f", fleet_dir, kubeconfig=kc, expect=0)
            check("nothing to roll" in r.out and {n: self._vmi_uid(ns, n) for n in names} == uids,
                  f"an unchanged bare VMI was recreated:\n{r.show()}")
            r = self.run("rollout", "undo", "bare-1", "-n", ns, kubeconfig=kc, expect=2)
            check("job bare-1 is a bare VMI" in r.err, f"the refusal does not say why:\n{r.show()}")
            check(not fleet.errors, f"the simulator failed: {fleet.errors}")

    def _revisions(self, ns, job):
        """The job's kept revisions (ControllerRevisions), newest first, as the admin reads them."""
        _, body = self.cp.admin.request("GET", "/apis/apps/v1/namespaces/" + ns + "/controllerrevisions",
                                        query={"labelSelector": f"cosmicac.io/job={job}"})
        return sorted(body.get("items", []), key=lambda r: -r["revision"])

    def case_vm_revisions(self, ns):
        """A change reaches a VirtualMachine job (issue 53, item 0), as the restricted identity (no
        grant on reading Secrets): a new image is a new user-data Secret, named by the digest of its
        content and owned by the VM, which the VM's template names; apply says a restart is needed
        and exits 0 saying so, the running VMI untouched; --restart deletes the VMI and the VM's
        next one names the new Secret; the previous revision is kept (a ControllerRevision owned by
        the VM) with its Secret; an unchanged apply writes nothing; a third change prunes the oldest
        revision and its Secret."""
        kc = self.tester_kubeconfig(ns)
        prof = self._vm_profile(ns)
        env = {"MODEL_ID": "tiny", "API_KEY": "s3cr3t-realapi-value"}

        def spec(tag):
            return self.spec("vm", ns, container={"image": f"ghcr.io/acme/infer:{tag}", "env": env})

        def template_secret():
            vols = self.obj("VirtualMachine", "vm", ns)["spec"]["template"]["spec"]["volumes"]
            return next(v["cloudInitNoCloud"]["secretRef"]["name"] for v in vols if "cloudInitNoCloud" in v)

        def owned_by_vm(obj, vm):
            return any(r.get("uid") == vm["metadata"]["uid"] and r.get("kind") == "VirtualMachine"
                       for r in obj["metadata"].get("ownerReferences", []))

        self.run("apply", "--profile", prof, "-f", spec("1"), kubeconfig=kc, expect=0)
        vm = self.obj("VirtualMachine", "vm", ns)
        first = template_secret()
        check(re.fullmatch(r"vm-userdata-[0-9a-f]{12}", first), f"the user-data Secret's name: {first}")
        revision = vm["metadata"]["annotations"]["cosmicac.io/revision"]
        check(vm["spec"]["template"]["metadata"]["annotations"]["cosmicac.io/revision"] == revision,
              "the template does not carry the VM's revision")
        vmi = simulate.vm_sync(self.cp, ns, "vm")
        check(vmi["metadata"]["annotations"]["cosmicac.io/revision"] == revision, "the VMI shows no revision")
        # Unchanged: nothing written.
        rv = self.obj("VirtualMachine", "vm", ns)["metadata"]["resourceVersion"]
        r = self.run("apply", "--profile", prof, "-f", spec("1"), kubeconfig=kc, expect=0)
        check(self.obj("VirtualMachine", "vm", ns)["metadata"]["resourceVersion"] == rv
              and len(self._revisions(ns, "vm")) == 1, f"an unchanged apply wrote:\n{r.show()}")
        # A new image: applied, a restart needed, exit 0 saying so; the VMI keeps running.
        r = self.run("apply", "--profile", prof, "-f", spec("2"), kubeconfig=kc, expect=0)
        check("restart needed" in r.text(), f"the restart needed is not said:\n{r.show()}")
        second = template_secret()
        check(second != first, f"a changed image did not change the template's Secret ({first}):\n{r.show()}")
        check(self._vmi_uid(ns, "vm") == vmi["metadata"]["uid"], "apply without --restart restarted the VM")
        for name in (first, second):
            check(owned_by_vm(self.obj("Secret", name, ns), vm), f"Secret {name} is missing or not owned by the VM")
        revs = self._revisions(ns, "vm")
        check(len(revs) == 2 and all(owned_by_vm(x, vm) for x in revs), f"kept revisions: {revs}")
        check(revs[1]["metadata"]["name"] == f"vm-rev-{revision}", f"the previous revision: {revs[1]['metadata']}")
        check("s3cr3t-realapi-value" not in json.dumps(revs), "an env value is in a kept revision")
        # --restart: the VMI goes; the VM's next one reads the new Secret.
        r = self.run("apply", "--restart", "--profile", prof, "-f", spec("2"), kubeconfig=kc, expect=0)
        check("deleted: restarting" in r.text(), f"--restart did not restart:\n{r.show()}")
        self.until("the restarted VMI to be gone", lambda: self._vmi_uid(ns, "vm") != vmi["metadata"]["uid"], 60)
        nxt = simulate.vm_sync(self.cp, ns, "vm")
        names = [v["cloudInitNoCloud"]["secretRef"]["name"] for v in nxt["spec"]["volumes"] if "cloudInitNoCloud" in v]
        check(names == [second], f"the new VMI reads {names}, not {second}")
        check(self.obj("Secret", first, ns) is not None, "the previous revision's Secret went")
        # A third change: the oldest revision and its Secret are pruned; the kept ones stay.
        r = self.run("apply", "--restart", "--profile", prof, "-f", spec("3"), kubeconfig=kc, expect=0)
        third = template_secret()
        self.gone("Secret", first, ns, 30)
        check(self.obj("Secret", second, ns) is not None and self.obj("Secret", third, ns) is not None,
              f"a kept revision's Secret went:\n{r.show()}")
        revs = self._revisions(ns, "vm")
        check([x["metadata"]["name"] for x in revs] ==
              [f"vm-rev-{self.obj('VirtualMachine', 'vm', ns)['metadata']['annotations']['cosmicac.io/revision']}",
               f"vm-rev-{nxt['metadata']['annotations']['cosmicac.io/revision']}"], f"kept revisions: {revs}")

    def case_vm_move_keeps_data(self, ns):
        """Moving a job from a bare VMI to a VirtualMachine (docs/host-tool.md, "Moving a job to a
        VirtualMachine"): apply with the new profile refuses while the VMI exists, writing nothing;
        delete with the old profile keeps the data PVC; apply with the new profile makes the VM
        on that same claim."""
        kc = self.tester_kubeconfig(ns)
        old = self.apply_ok("vm", ns, kc)  # no workloadKind: a bare VMI, as before
        prof = self._vm_profile(ns)
        r = self.run("apply", "--profile", prof, "-f", self.spec("vm", ns), kubeconfig=kc, expect=1)
        check("exists without a VirtualMachine" in r.err, f"the refusal does not say why:\n{r.show()}")
        check(self.obj("VirtualMachine", "vm", ns) is None, "a refused apply made a VM")
        self.run("delete", "-f", self.spec("vm", ns), kubeconfig=kc, expect=0)
        self.run("apply", "--profile", prof, "-f", self.spec("vm", ns), kubeconfig=kc, expect=0)
        check(self.obj("VirtualMachine", "vm", ns) is not None, "no VM after the move")
        pvc = self.obj("PersistentVolumeClaim", "vm-data", ns)
        check(pvc["metadata"]["uid"] == old["pvc"]["metadata"]["uid"], "the data disk is not the one it had")
        vm = self.obj("VirtualMachine", "vm", ns)
        claims = [v["persistentVolumeClaim"]["claimName"] for v in vm["spec"]["template"]["spec"]["volumes"]
                  if "persistentVolumeClaim" in v]
        check(claims == ["vm-data"], f"the VM's data volume: {claims}")

    def case_vm_restart_only_its_vmi(self, ns):
        """apply --restart deletes only the VMI its VirtualMachine controls (ownerReferences: controller,
        the VM's uid) and that carries the job's labels: a VMI of the job's name without the job's label,
        or controlled by another VirtualMachine, is refused, named, and not deleted; the VM's own VMI
        then restarts as before."""
        kc = self.tester_kubeconfig(ns)
        prof = self._vm_profile(ns)
        self.run("apply", "--profile", prof, "-f", self.spec("vm", ns), kubeconfig=kc, expect=0)
        vm = self.obj("VirtualMachine", "vm", ns)
        own = simulate.vm_sync(self.cp, ns, "vm")
        vmi_path = path_of("VirtualMachineInstance", "vm", ns)
        # The VM's own VMI, relabelled by someone: no longer the job's.
        self.cp.admin.merge_patch(vmi_path, {"metadata": {"labels": {"cosmicac.io/job": None}}})
        r = self.run("apply", "--restart", "--profile", prof, "-f", self.spec("vm", ns, cpu=8), kubeconfig=kc,
                     expect=1)
        check(f"VirtualMachineInstance {ns}/vm is not this VirtualMachine's: it lacks the label cosmicac.io/job=vm"
              in r.err and "it was not deleted" in r.err, f"the refusal does not name it and why:\n{r.show()}")
        check(self._vmi_uid(ns, "vm") == own["metadata"]["uid"], "a VMI without the job's label was deleted")
        # A VMI of the job's name that another VirtualMachine controls (the job's labels even).
        self.cp.admin.delete(vmi_path)
        self.gone("VirtualMachineInstance", "vm", ns, 60)
        other = self.cp.admin.create({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                                      "metadata": {"name": "other", "namespace": ns},
                                      "spec": {"runStrategy": "Halted", "template": vm["spec"]["template"]}})
        foreign = self.cp.admin.create({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": "vm", "namespace": ns, "labels": vm["spec"]["template"]["metadata"]["labels"],
                         "ownerReferences": [simulate._controller_ref(other)]},
            "spec": vm["spec"]["template"]["spec"]})
        r = self.run("apply", "--restart", "--profile", prof, "-f", self.spec("vm", ns, cpu=6), kubeconfig=kc,
                     expect=1)
        check(f"VirtualMachineInstance {ns}/vm is not this VirtualMachine's: its controller is VirtualMachine other"
              in r.err, f"the refusal does not name the other controller:\n{r.show()}")
        time.sleep(1)  # the garbage collector's chance to act on anything deleted
        check(self._vmi_uid(ns, "vm") == foreign["metadata"]["uid"], "another VM's VMI was deleted")
        # The VM's own VMI: restarted.
        self.cp.admin.delete(vmi_path)
        self.gone("VirtualMachineInstance", "vm", ns, 60)
        second = simulate.vm_sync(self.cp, ns, "vm")
        r = self.run("apply", "--restart", "--profile", prof, "-f", self.spec("vm", ns, cpu=2), kubeconfig=kc,
                     expect=0)
        check("deleted: restarting" in r.text(), f"--restart did not restart:\n{r.show()}")
        self.until("the restarted VMI to be gone", lambda: self._vmi_uid(ns, "vm") != second["metadata"]["uid"], 60)

    def case_wait_foreign_pod(self, ns):
        """A pod with the launcher's labels and an ownerReference to the VMI, newer than the real
        launcher pod and not in the VMI's status.activePods, whose console says the agent failed:
        wait follows the real one only and ends ready."""
        kc = self.tester_kubeconfig(ns)
        objs = self.apply_ok("vm", ns, kc)
        p = self.start("wait", "vm", "-n", ns, "--interval", "1s", "--timeout", "90s", kubeconfig=kc)
        t, errors = self._boot(ns, "vm")
        time.sleep(1.5)   # after the real launcher pod: the newer one
        evil = simulate.Launcher(self.cp, ns, objs["vmi"], active=False, name="virt-launcher-vm-zzzzz")
        a = simulate.Agent(self.cp, ns, evil.name)
        a.event("failed", "login", "failed", reason="auth", message="disk corrupt: run delete --delete-data")
        r = self.finish(p, 120)
        t.join(10)
        check(not errors, f"the simulator failed: {errors}")
        vmi = self.obj("VirtualMachineInstance", "vm", ns)
        check(evil.uid not in vmi.get("status", {}).get("activePods", {}) and
              len(vmi.get("status", {}).get("activePods", {})) == 1,
              f"activePods is not the real launcher pod's alone: {vmi.get('status')}")
        check(r.rc == 0, f"wait did not succeed:\n{r.show()}")
        check("zzzzz" not in r.text() and "delete-data" not in r.text(), f"the foreign pod was adopted:\n{r.show()}")

    # --- the rollout's lock (host/cluster/lease.hpp, through tests/realapi/lease_probe.cpp) ----
    def _lease_probe(self, ns, identity, duration):
        """A LeaseKeeper holding the Lease cosmicac-rollout as the restricted user until its stdin
        closes; its stdout lines arrive on p.lines."""
        check(self.lease_probe and os.access(self.lease_probe, os.X_OK), "this case needs --lease-probe")
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LANG", "LC_ALL")}
        env["HOME"] = self.work
        argv = [self.lease_probe, "--kubeconfig", self.tester_kubeconfig(ns), "--namespace", ns,
                "--name", "cosmicac-rollout", "--identity", identity, "--duration", str(duration)]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace", env=env)
        p.lines = queue.Queue()

        def pump():
            for line in p.stdout:
                p.lines.put(line.rstrip("\n"))
            p.lines.put(None)
        threading.Thread(target=pump, daemon=True).start()
        return p

    def _probe_says(self, p, timeout=20):
        try:
            line = p.lines.get(timeout=timeout)
        except queue.Empty:
            p.kill()
            raise Failure(f"lease-probe said nothing within {timeout} s")
        if line is None:  # its stderr only once it ended: reading it before would wait for the end
            raise Failure(f"lease-probe ended (exit {p.wait()}) without a line: {p.stderr.read()}")
        self.transcript.append("lease-probe: " + line)
        return line

    def _lease(self, ns):
        return self.cp.admin.exists(f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/cosmicac-rollout")

    def case_lease_one_holder(self, ns):
        """The rollout's lock on the real API server, as the restricted identity of role.yaml: a
        second taker is refused at once naming the first and since when; the first renews it; once
        the first dies (SIGKILL: no release) and its Lease expires, the second takes it over (never
        before); released, it is gone and the next taker gets it at once."""
        a = self._lease_probe(ns, "rollout-a", 6)
        said = self._probe_says(a)
        check(said.startswith("acquired "), f"first taker: {said}")
        since = said.split(" ", 1)[1]
        lease = self._lease(ns)
        check(lease and lease["spec"]["holderIdentity"] == "rollout-a" and lease["spec"]["acquireTime"] == since
              and lease["spec"]["leaseDurationSeconds"] == 6, f"the Lease after the first take: {lease}")

        t0 = time.monotonic()
        b = self._lease_probe(ns, "rollout-b", 6)
        said = self._probe_says(b)
        check(said.startswith(f"refused holder=rollout-a since={since}: Lease {ns}/cosmicac-rollout is held by "
                              f"\"rollout-a\" since {since}"), f"second taker: {said}")
        check(b.wait(10) == 3 and time.monotonic() - t0 < 10, "the refusal is at once, exit 3")

        self.until("the holder's renewal", lambda: self._lease(ns)["spec"]["renewTime"] != since, 10)
        a.kill()  # dies holding it: no release
        a.wait()
        renewed = self._lease(ns)["spec"]["renewTime"]
        killed = time.monotonic()
        taken = None
        while taken is None:
            check(time.monotonic() - killed < 30, "the dead holder's Lease was never taken over")
            p = self._lease_probe(ns, "rollout-b", 6)
            said = self._probe_says(p)
            if said.startswith("acquired "):
                taken = p
            else:
                check(said.startswith("refused holder=rollout-a"), f"taker after the holder died: {said}")
                p.wait(10)
                time.sleep(0.5)
        # Not before it expired: 6 s after its last renewal (this host's clock is the server's).
        expiry = datetime.datetime.fromisoformat(renewed.replace("Z", "+00:00")) + datetime.timedelta(seconds=6)
        taken_at = datetime.datetime.fromisoformat(said.split(" ", 1)[1].replace("Z", "+00:00"))
        check(taken_at >= expiry, f"taken over at {taken_at}, before its expiry {expiry}")
        lease = self._lease(ns)
        check(lease["spec"]["holderIdentity"] == "rollout-b" and lease["spec"]["leaseTransitions"] == 1,
              f"the Lease after the takeover: {lease}")

        taken.stdin.close()
        said = self._probe_says(taken)
        check(said == "released" and taken.wait(10) == 0, f"release: {said}")
        check(self._lease(ns) is None, "the released Lease is gone")
        c = self._lease_probe(ns, "rollout-c", 6)
        said = self._probe_says(c)
        check(said.startswith("acquired "), f"after the release: {said}")
        c.stdin.close()
        check(self._probe_says(c) == "released" and c.wait(10) == 0, "the third taker releases")

    # --- root disks: named by their source; golden images (issues 53 item 2, 54) ------------
    def _golden_namespace(self, ns):
        """The golden images' namespace of a case: host/rbac/role-golden-image.yaml in it (its
        namespaces made the case's), the tool's Role bound to the plain user too, and a Ready
        DataSource `os` pointing at the PVC `img-1` (10Gi), as a DataImportCron leaves them."""
        gns = ns + "-golden"
        self.cp.admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": gns}})
        for d in self._docs("host/rbac/role-golden-image.yaml"):
            d = json.loads(json.dumps(d).replace('"golden-images"', json.dumps(gns)).replace('"cosmic-ac"',
                                                                                            json.dumps(ns)))
            self.cp.admin.apply(d)
        for role in ("cosmicac-vmi-golden-image", "cosmicac-vmi-clone-source"):
            self.cp.admin.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                                 "metadata": {"name": role + "-tester", "namespace": gns},
                                 "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io",
                                               "name": TESTER_USER}],
                                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}})
        for img in ("img-1", "img-2", "img-3"):
            self.cp.admin.apply({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                 "metadata": {"name": img, "namespace": gns},
                                 "spec": {"accessModes": ["ReadWriteOnce"],
                                          "resources": {"requests": {"storage": "10Gi"}}}})
        self._point(gns, "img-1")
        self.until(f"RBAC for {TESTER_USER} in {gns}", lambda: self.cp.tester.request(
            "GET", path_of("DataSource", "os", gns), ok=None)[0] == 200, 20)
        return gns

    def _point(self, gns, pvc):
        """The DataSource repointed, as its cron does after an import (no status subresource in
        CDI v1.62.0's CRD: the status goes with the object)."""
        self.cp.admin.apply({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataSource",
                             "metadata": {"name": "os", "namespace": gns},
                             "spec": {"source": {"pvc": {"name": pvc, "namespace": gns}}},
                             "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
                                                        "message": "", "lastHeartbeatTime": rfc3339_nano(),
                                                        "lastTransitionTime": rfc3339_nano()}]}})

    def _clones(self, ns, names):
        """Which golden PVC each job's VM clones (its root disk's source.pvc name)."""
        return {n: self.obj("VirtualMachine", n, ns)["spec"]["dataVolumeTemplates"][0]["spec"]["source"]["pvc"]["name"]
                for n in names}

    def case_golden_root(self, ns):
        """Root disks from a golden image on the real API server (issue 54), as the restricted
        identity with host/rbac/role-golden-image.yaml in the golden namespace: `apply` of a job with
        a golden root resolves the DataSource once and clones its PVC (source.pvc, strict field
        validation), recorded on the VM; a bare VMI job's own DataVolume too; `render` offline names
        the DataSource; a rollout during which the DataSource moves (between the canary and the next
        batch) clones the volume it resolved for every job — a root image change: a new root disk per
        job, the data PVC kept, the old root disk kept for rollback; the cron's garbage collection
        deleting the resolved volume mid-rollout stops it before the next batch, naming it; a root
        disk smaller than the source is refused before any write."""
        kc = self.tester_kubeconfig(ns)
        gns = self._golden_namespace(ns)
        prof = self._vm_profile(ns, f"goldenImage: {gns}/os\n")
        # Offline: render names the DataSource (resolved when applied).
        r = self.run("render", "--profile", prof, "-f", self.spec("g-0", ns), kubeconfig=None, expect=0)
        check("sourceRef" in r.out and "resolved when applied" in r.out, f"render:\n{r.show()}")
        # apply: resolved to img-1, cloned by name; strictly valid (the server's Strict field validation).
        r = self.run("apply", "--profile", prof, "-f", self.spec("g-0", ns), kubeconfig=kc, expect=0)
        check(f"golden image DataSource {gns}/os: PersistentVolumeClaim {gns}/img-1" in r.text(), f"apply:\n{r.show()}")
        vm = self.obj("VirtualMachine", "g-0", ns)
        root = vm["spec"]["dataVolumeTemplates"][0]
        check(root["spec"]["source"] == {"pvc": {"namespace": gns, "name": "img-1"}}, f"root {root}")
        check("sourceRef" not in root["spec"] and root["metadata"]["name"].startswith("g-0-root-"), f"root {root}")
        check(vm["metadata"]["annotations"]["cosmicac.io/root-source"] == f"DataSource {gns}/os: pvc {gns}/img-1",
              f"annotations {vm['metadata']['annotations']}")
        simulate.vm_sync(self.cp, ns, "g-0")  # KubeVirt's DataVolume from the template: accepted by CDI's CRD
        check(self.root_dv("g-0", ns) is not None, "no root DataVolume from the template")
        # A bare VMI job: the tool's own DataVolume, created strictly by the restricted identity.
        bare = self._vm_profile(ns, f"goldenImage: {gns}/os\n").replace(".yaml", "-bare.yaml")
        with open(bare, "w") as fh:
            fh.write(f"namespace: {ns}\ngoldenImage: {gns}/os\n")
        self.run("apply", "--profile", bare, "-f", self.spec("g-bare", ns), kubeconfig=kc, expect=0)
        dv = self.root_dv("g-bare", ns)
        check(dv and dv["spec"]["source"] == {"pvc": {"namespace": gns, "name": "img-1"}}, f"bare root {dv}")
        # Too small a root disk for the source: refused (exit 2) before any write.
        r = self.run("apply", "--profile", prof, "-f", self.spec("g-small", ns, rootDisk={"size": "5Gi"}),
                     kubeconfig=kc, expect=2)
        check("rootDisk.size: 5Gi is smaller than the golden image" in r.err, f"not refused:\n{r.show()}")
        check(self.obj("VirtualMachine", "g-small", ns) is None, "a refused apply wrote the VM")

        names = ["gr-1", "gr-2", "gr-3"]
        with simulate.Fleet(self.cp, ns) as fleet:
            self.run("rollout", "--profile", prof, "-f", self._fleet_dir(ns, names), "--max-unavailable", "3",
                     "--timeout", "90s", "--interval", "1s", kubeconfig=kc, timeout=300, expect=0)
            check(set(self._clones(ns, names).values()) == {"img-1"}, f"clones {self._clones(ns, names)}")
            data = {n: self.obj("PersistentVolumeClaim", n + "-data", ns)["metadata"]["uid"] for n in names}
            old_roots = {n: self.root_name(n, ns) for n in names}
            # The cron imports img-2; the rollout resolves it; once the canary's VM names it, the cron
            # moves the DataSource again (img-3): the later batches still clone img-2.
            self._point(gns, "img-2")
            moved = threading.Event()

            def move():
                self.until("the canary to clone img-2", lambda: self._clones(ns, ["gr-1"])["gr-1"] == "img-2", 120)
                self._point(gns, "img-3")
                moved.set()
            t = threading.Thread(target=move, daemon=True)
            t.start()
            r = self.run("rollout", "--profile", prof, "-f", self._fleet_dir(ns, names), "--max-unavailable", "1",
                         "--timeout", "90s", "--interval", "1s", kubeconfig=kc, timeout=300, expect=0)
            t.join(5)
            check(moved.is_set(), f"the DataSource was not moved during the rollout:\n{r.show()}")
            check(self._clones(ns, names) == {n: "img-2" for n in names},
                  f"the fleet split: {self._clones(ns, names)}\n{r.show()}")
            for n in names:
                check(self.root_name(n, ns) != old_roots[n], f"{n} boots its old root disk")
                check(self.obj("DataVolume", old_roots[n], ns) is not None, f"{n}'s previous root disk is gone")
                check(self.obj("PersistentVolumeClaim", n + "-data", ns)["metadata"]["uid"] == data[n],
                      f"{n}'s data PVC was replaced")
            # The cron's garbage collection deletes the volume a rollout resolved (img-3), after the
            # canary: the rollout stops before the next batch, naming it.
            self._point(gns, "img-3")

            def collect():
                self.until("the canary to clone img-3", lambda: self._clones(ns, ["gr-1"])["gr-1"] == "img-3", 120)
                self.cp.admin.delete(path_of("PersistentVolumeClaim", "img-3", gns))
            t = threading.Thread(target=collect, daemon=True)
            t.start()
            r = self.run("rollout", "--profile", prof, "-f", self._fleet_dir(ns, names), "--max-unavailable", "1",
                         "--timeout", "90s", "--interval", "1s", kubeconfig=kc, timeout=300, expect=1)
            t.join(5)
            check("batch 2 was not started" in r.out and
                  f"PersistentVolumeClaim {gns}/img-3" in r.out, f"not stopped naming the source:\n{r.show()}")
            check(self._clones(ns, ["gr-2", "gr-3"]) == {"gr-2": "img-2", "gr-3": "img-2"},
                  "a job after the source was deleted was changed")
            check(not fleet.errors, f"the simulator failed: {fleet.errors}")

    def case_rollout_one_at_a_time(self, ns):
        """A rollout while another holds the namespace's Lease (a lease-probe standing in for a
        rollout in another terminal): refused at once, exit 1, naming the holder, with nothing
        written (no record, no VirtualMachine); --dry-run still plans; once the holder releases it,
        the same rollout runs and leaves no Lease behind."""
        kc = self.tester_kubeconfig(ns)
        prof = self._vm_profile(ns)
        names = ["one-1", "one-2"]
        fleet_dir = self._fleet_dir(ns, names)
        holder = self._lease_probe(ns, "alice@ws1 pid 7", 30)
        said = self._probe_says(holder)
        check(said.startswith("acquired "), f"the holder: {said}")
        t0 = time.monotonic()
        r = self.run("rollout", "--profile", prof, "-f", fleet_dir, "--timeout", "60s", "--interval", "1s",
                     kubeconfig=kc, timeout=60, expect=1)
        check(time.monotonic() - t0 < 30, "the refusal was not at once")
        check("alice@ws1 pid 7" in r.err + r.out, f"the refusal does not name the holder:\n{r.show()}")
        check(self.obj("ConfigMap", "cosmicac-rollout", ns) is None, "a refused rollout wrote its record")
        check(all(self.obj("VirtualMachine", n, ns) is None for n in names), "a refused rollout made a VM")
        self.run("rollout", "--profile", prof, "-f", fleet_dir, "--dry-run", kubeconfig=kc, timeout=60, expect=0)
        holder.stdin.close()
        check(self._probe_says(holder) == "released" and holder.wait(10) == 0, "the holder releases")
        with simulate.Fleet(self.cp, ns, digest="sha256:" + "6f" * 32):
            r = self.run("rollout", "--profile", prof, "-f", fleet_dir, "--timeout", "90s", "--interval", "1s",
                         kubeconfig=kc, timeout=300)
            check(r.rc == 0, f"the rollout after the release failed:\n{r.show()}")
        check(self._lease(ns) is None, "the rollout left its Lease behind")

    def case_completion_job_names(self, ns):
        """`__complete` (what the completion scripts call) offers the managed VMIs' names for
        wait and get, and offers nothing, quickly and quietly, when the server does not answer."""
        import socket
        kc = self.tester_kubeconfig(ns)
        self._bare_vmis(ns, ["job-a", "job-b"])
        for verb in ("wait", "get"):
            r = self.run("__complete", verb, "--kubeconfig", kc, "-n", ns, "job-", kubeconfig=None, expect=0)
            check(r.out.split() == ["job-a", "job-b"], f"{verb} NAME completes to {r.out.split()}:\n{r.show()}")
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections are accepted by the kernel and never answered
        with open(kc) as fh:
            doc = json.load(fh)
        doc["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{silent.getsockname()[1]}"
        mute_kc = os.path.join(self.work, "kubeconfig-silent")
        with open(mute_kc, "w") as fh:
            json.dump(doc, fh)
        t0 = time.monotonic()
        r = self.run("__complete", "wait", "--kubeconfig", mute_kc, "-n", ns, "", kubeconfig=None)
        took = time.monotonic() - t0
        silent.close()
        check(r.rc == 0 and r.out == "" and r.err == "", f"a silent server is not quiet:\n{r.show()}")
        check(took < 4.5, f"a silent server held the completion {took:.1f} s (bound: 2 s, killed at 3 s)")

    # --- the static release binary in an older Debian root (run alone: --case static_old_root) --
    def _old_root_kubeconfig(self, root, name, server, user, ns, ca=True):
        import base64
        cluster_entry = {"server": server}
        if ca:
            with open(self.cp.ca, "rb") as fh:
                cluster_entry["certificate-authority-data"] = base64.b64encode(fh.read()).decode()
        doc = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
               "clusters": [{"name": "c", "cluster": cluster_entry}], "users": [{"name": "u", "user": user}],
               "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": ns}}]}
        with open(os.path.join(root, "etc/cosmicac", name), "w") as fh:
            json.dump(doc, fh)
        return "/etc/cosmicac/" + name

    def _in_root(self, root, *args, expect=None):
        env = {"PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
        p = subprocess.run([shutil.which("chroot"), root, "/usr/local/bin/cosmicac-vmi", *args], capture_output=True, text=True,
                           errors="replace", timeout=120, env=env, stdin=subprocess.DEVNULL)
        r = Run(["(chroot)"] + list(args), p.returncode, p.stdout, p.stderr)
        self.transcript.append(r.show())
        if expect is not None:
            check(r.rc == expect, f"exit {r.rc}, expected {expect}:\n{r.show()}")
        return r

    def case_static_old_root(self, ns):
        """The static release binary (--vmi dist/cosmicac-vmi) chrooted into Debian bullseye
        (old_root.py): get and apply --dry-run=server reach the API server by host name, once
        through /etc/hosts with a client certificate, once through DNS with an exec plugin's
        credential and the root's own trust store; the root's nsswitch.conf names myhostname."""
        import base64
        import tempfile
        import old_root
        tar = old_root.cached_tar(log=lambda m: print(m, flush=True))
        root = tempfile.mkdtemp(prefix="old-root-", dir=self.work)
        old_root.unpack(tar, root)
        check(open(os.path.join(root, "etc/debian_version")).read().startswith("11."), "the root is not bullseye")
        shutil.copy2(self.vmi, os.path.join(root, "usr/local/bin/cosmicac-vmi"))
        os.makedirs(os.path.join(root, "etc/cosmicac"))
        with open(os.path.join(root, "etc/hosts"), "w") as fh:
            fh.write("127.0.0.1 localhost\n127.0.0.1 kubernetes\n")  # the serving certificate's SANs
        with open(os.path.join(root, "etc/resolv.conf"), "w") as fh:
            fh.write(f"nameserver {old_root.DNS_ADDRESS}\noptions timeout:2 attempts:2\n")
        with open(os.path.join(root, "etc/nsswitch.conf")) as fh:
            check("myhostname" in fh.read(), "the root's nsswitch.conf does not name myhostname")
        cert, key = (open(p, "rb").read() for p in self.cp.tester_client)
        b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
        files_kc = self._old_root_kubeconfig(root, "by-hosts", f"https://kubernetes:{self.cp.port}",
                                             {"client-certificate-data": b64(cert), "client-key-data": b64(key)}, ns)
        cred = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                "status": {"clientCertificateData": cert.decode(), "clientKeyData": key.decode()}}
        with open(os.path.join(root, "etc/cosmicac/credential.json"), "w") as fh:
            json.dump(cred, fh)
        plugin = os.path.join(root, "usr/local/bin/cred-plugin")
        with open(plugin, "w") as fh:
            fh.write("#!/bin/sh\nexec cat /etc/cosmicac/credential.json\n")
        os.chmod(plugin, 0o755)
        exec_user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "/usr/local/bin/cred-plugin",
                              "interactiveMode": "Never"}}
        dns_kc = self._old_root_kubeconfig(root, "by-dns", f"https://kubernetes.default.svc:{self.cp.port}",
                                           exec_user, ns, ca=False)
        self._bare_vmis(ns, ["vm-old"])
        spec = self.spec("vm-new", ns)
        shutil.copy2(spec, os.path.join(root, "etc/cosmicac/spec.json"))
        dns_log = os.path.join(self.work, "dnsmasq.log")
        dns = old_root.Dns({"kubernetes.default.svc": "127.0.0.1"}, dns_log)
        try:
            for kc in (files_kc, dns_kc):
                if kc == dns_kc:
                    # Not trusted until the root's trust store holds the cluster's CA.
                    r = self._in_root(root, "get", "vm-old", "-n", ns, "--kubeconfig", kc, expect=1)
                    check("certificate" in r.err.lower(), f"an untrusted server, not said:\n{r.show()}")
                    shutil.copy2(self.cp.ca, os.path.join(root, "usr/local/share/ca-certificates/realapi.crt"))
                    u = subprocess.run([shutil.which("chroot"), root, "update-ca-certificates"],
                                       capture_output=True, text=True, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
                    check(u.returncode == 0 and "1 added" in u.stdout, f"update-ca-certificates: {u.stdout}{u.stderr}")
                r = self._in_root(root, "get", "vm-old", "-n", ns, "--kubeconfig", kc, expect=0)
                check(r.out.split()[:1] == ["NAME"] and "vm-old" in r.out, f"get shows no vm-old:\n{r.show()}")
                r = self._in_root(root, "apply", "--dry-run=server", "-f", "/etc/cosmicac/spec.json", "-n", ns,
                                  "--kubeconfig", kc, expect=0)
                check(self.obj("VirtualMachineInstance", "vm-new", ns) is None, "a server dry run created the VMI")
        finally:
            dns.stop()
        with open(dns_log, errors="replace") as fh:
            check("query[A] kubernetes.default.svc" in fh.read(), "the DNS server was never asked")
        print(f"old-root: glibc {old_root.glibc_version(root)} (this build's: {os.confstr('CS_GNU_LIBC_VERSION')})",
              flush=True)
        shutil.rmtree(root, ignore_errors=True)


# Cases run only when named (--case): what they need is not the build's cosmicac-vmi.
ALONE = {"static_old_root"}
CASES = [n[len("case_"):] for n in vars(Suite) if n.startswith("case_")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vmi", help="the cosmicac-vmi to test")
    ap.add_argument("--kube-bin", default=os.environ.get(kube_bin.ENV_VAR) or os.path.join(REPO, "..", "shared", "kube-bin"))
    ap.add_argument("--crds", default=os.environ.get("COSMICAC_KUBE_CRDS"))
    ap.add_argument("--lease-probe", help="the lease-probe of this build (tests/realapi/lease_probe.cpp)")
    ap.add_argument("--case", action="append", default=[], help="run only this case (repeatable)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="print every cosmicac-vmi run of every case")
    ap.add_argument("--check", action="store_true",
                    help="only find, unpack and verify the binaries (tests/run does it first): exit 0, 77 or 1")
    args = ap.parse_args()
    if args.list:
        for c in CASES:
            print(c)
        return 0
    if not args.check and (not args.vmi or not os.access(args.vmi, os.X_OK)):
        print(f"realapi: FAIL: no executable cosmicac-vmi at {args.vmi}", file=sys.stderr)
        return 1
    crds = args.crds or os.path.join(os.path.dirname(os.path.abspath(args.kube_bin)), "kube-crds")
    try:
        bins = kube_bin.locate(args.kube_bin)
        if not os.path.isdir(crds):
            raise kube_bin.Unavailable(f"no CRD directory at {crds}")
    except kube_bin.Unavailable as e:
        how = (f"to enable it: {kube_bin.ENV_VAR}=/path/to/kube-bin (kube-apiserver.xz, kube-controller-manager.xz, "
               f"SHA256SUMS; ../shared/kube-bin by default) and COSMICAC_KUBE_CRDS=/path/to/kube-crds "
               f"(default: kube-crds beside kube-bin)")
        if os.environ.get("CI") == "true":
            print(f"realapi: FAIL (CI=true): the real-API suite cannot run: {e}; {how}")
            return 1
        print(f"realapi: NOT RUN: {e}; {how}")
        return SKIP
    if args.check:
        print(f"realapi: control-plane binaries verified: {', '.join(sorted(bins.values()))}")
        return 0

    if args.case:
        unknown = [c for c in args.case if c not in CASES]
        if unknown:
            print(f"realapi: no such case {unknown} (--list)", file=sys.stderr)
            return 2
        selected = args.case
    else:
        selected = [c for c in CASES if c not in ALONE]

    t0 = time.monotonic()
    cp = cluster.ControlPlane(bins, crds)
    results = []
    try:
        try:
            cp.start()
        except Exception as e:
            print(f"realapi: FAIL: the control plane did not come up: {e}")
            for name in ("etcd", "kube-apiserver", "kube-controller-manager"):
                print(f"--- {name} log (tail)\n{cp.tail(name)}")
            return 1
        work = os.path.join(cp.dir, "work")
        os.makedirs(work)
        suite = Suite(cp, os.path.abspath(args.vmi), work)
        suite.lease_probe = os.path.abspath(args.lease_probe) if args.lease_probe else None
        for case in selected:
            start = time.monotonic()
            suite.transcript = []
            try:
                ns = suite.namespace(case)
                getattr(suite, "case_" + case)(ns)
                results.append((case, None))
                print(f"PASS {case} ({time.monotonic() - start:.1f} s)", flush=True)
                if args.verbose:
                    print("\n".join(suite.transcript), flush=True)
            except Exception as e:
                why = str(e) if isinstance(e, Failure) else "".join(traceback.format_exception(e))
                results.append((case, why))
                print(f"FAIL {case} ({time.monotonic() - start:.1f} s): {why}", flush=True)
                if not isinstance(e, Failure):
                    print("--- this case's cosmicac-vmi runs:\n" + "\n".join(suite.transcript), flush=True)
    finally:
        cp.stop()
    failed = [c for c, why in results if why]
    print(f"realapi: {len(results) - len(failed)} passed, {len(failed)} failed"
          + (f" ({', '.join(failed)})" if failed else "") + f" in {time.monotonic() - t0:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
