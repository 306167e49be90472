#!/usr/bin/python3
"""The stand-in agrees with kube-apiserver: the contract test (tests/realapi/README.md, "The contract test").

The same HTTP requests — the ones cosmicac-vmi sends, on the objects it renders — go to the
unit tests' stand-in (`apiserver-standin`, the same code as in host_tests) and to a real
kube-apiserver 1.32 (tests/realapi/cluster.py), and what the tool reads of each answer (the
status code, a Status's reason and details, an object's name, uid, finalizers and
deletionTimestamp, a list's names) must be the same. Timestamps, uids, resourceVersions and
messages' wording are not compared. Prints `AGREE case` / `DIFFER case` per case and closes
with `contract: N agree, N differ`. Exit: 0 all agree, 1 a difference or a server did not come
up, 77 NOT RUN (no control-plane binaries; with CI=true their absence is a failure)."""

import argparse
import copy
import http.client
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import cluster  # noqa: E402
import kube_bin  # noqa: E402

SKIP = 77
NS = "contract"
MANAGER = "cosmicac-vmi"
# What cosmicac-vmi puts on every write (host/verbs/request.cpp, write_query).
WRITE = {"fieldManager": MANAGER, "fieldValidation": "Strict"}
DRY_WRITE = dict(WRITE, dryRun="All")
APPLY = "application/apply-patch+yaml"
HOLD = "contract.cosmicac.io/hold"     # a finalizer nobody removes: the object stays terminating


# --- the two servers: one request interface ---------------------------------------------------
class RealServer:
    """kube-apiserver as its admin (RBAC is the real-API suite's concern, not the contract's)."""

    name = "kube-apiserver"

    def __init__(self, cp):
        self.api = cp.admin
        self.kubeconfig = cp.kubeconfig("contract-admin", NS, token=cp.admin_token)

    def request(self, method, path, body=None, content_type="application/json", query=None):
        return self.api.request(method, path, body=body, content_type=content_type, query=query, ok=None)


class StandInServer:
    """apiserver-standin: plain HTTP on loopback, a bearer token."""

    name = "stand-in"

    def __init__(self, exe, schemas):
        self.token = os.urandom(12).hex()
        self.proc = subprocess.Popen([exe, "--token", self.token, "--schemas", schemas], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        url = self.proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"apiserver-standin printed {url!r}, not its URL")
        self.port = int(url.rsplit(":", 1)[1])
        self.kubeconfig = None

    def write_kubeconfig(self, path):
        doc = {"apiVersion": "v1", "kind": "Config", "current-context": "standin",
               "clusters": [{"name": "standin", "cluster": {"server": f"http://127.0.0.1:{self.port}"}}],
               "users": [{"name": "standin", "user": {"token": self.token}}],
               "contexts": [{"name": "standin", "context": {"cluster": "standin", "user": "standin",
                                                           "namespace": NS}}]}
        with open(path, "w") as fh:
            json.dump(doc, fh)
        os.chmod(path, 0o600)
        self.kubeconfig = path

    def request(self, method, path, body=None, content_type="application/json", query=None):
        if query:
            path += "?" + urllib.parse.urlencode(query)
        headers = {"Accept": "application/json", "Authorization": "Bearer " + self.token}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        try:
            return resp.status, (json.loads(raw) if raw else None)
        except ValueError:
            return resp.status, raw.decode("utf-8", "replace")

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(10)


# --- what the tool reads of an answer ---------------------------------------------------------
def view(status, body):
    """The parts of an answer cosmicac-vmi relies on (host/verbs/request.cpp's api_error and
    its readers of objects and lists), nothing the server makes up (uids, times, versions)."""
    out = {"code": status}
    if not isinstance(body, dict):
        return out
    kind = body.get("kind")
    if kind == "Status":
        details = body.get("details") or {}
        out["reason"] = body.get("reason")
        out["details"] = {k: details.get(k) for k in ("name", "kind") if details.get(k)}
        causes = details.get("causes") or []
        out["causes"] = sorted((c.get("type") or c.get("reason"), c.get("field")) for c in causes)
        out["message"] = body.get("message")   # shown when a case differs, never compared
        return out
    if isinstance(body.get("items"), list):
        out["items"] = sorted(i["metadata"]["name"] for i in body["items"])
        return out
    md = body.get("metadata") or {}
    out["object"] = {"kind": kind, "name": md.get("name"), "uid": bool(md.get("uid")),
                     "terminating": bool(md.get("deletionTimestamp")),
                     "finalizers": sorted(md.get("finalizers") or [])}
    return out


class Context:
    """One server's run of the cases: it remembers uids the cases refer to."""

    def __init__(self, server):
        self.server = server
        self.uids = {}

    def send(self, method, path, body=None, content_type="application/json", query=None):
        status, reply = self.server.request(method, path, body=body, content_type=content_type, query=query)
        md = reply.get("metadata") or {} if isinstance(reply, dict) else {}
        if md.get("uid") and md.get("name") and reply.get("kind") != "Status" and not (query or {}).get("dryRun"):
            key = path if path.endswith("/" + md["name"]) else path + "/" + md["name"]
            self.uids[key] = md["uid"]
        return status, reply

    def step(self, label, *args, **kw):
        return label, view(*self.send(*args, **kw))

    def settle(self, label, path, timeout=15):
        """GET until the object is gone (the real garbage collector works in the background;
        the stand-in collects one step per request): the end state, not the race."""
        deadline = time.monotonic() + timeout
        while True:
            status, reply = self.send("GET", path)
            if status == 404 or time.monotonic() > deadline:
                return label, view(status, reply)
            time.sleep(0.2)


# --- objects -----------------------------------------------------------------------------------
def coll(kind, ns=NS):
    return cluster.path_of(kind, None, ns)


def obj_path(kind, name, ns=NS):
    return cluster.path_of(kind, name, ns)


def secret(name, **meta):
    md = {"name": name, "namespace": NS}
    md.update(meta)
    return {"apiVersion": "v1", "kind": "Secret", "metadata": md, "type": "Opaque",
            "data": {"userdata": "I2Nsb3VkLWNvbmZpZw=="}}


def delete_options(propagation="Foreground", dry=False, uid=None):
    """As cosmicac-vmi writes them (host/verbs/deletion.cpp, delete_options): dryRun in the body."""
    body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
    if dry:
        body["dryRun"] = ["All"]
    if uid is not None:
        body["preconditions"] = {"uid": uid}
    return body


class Rendered:
    """The objects `cosmicac-vmi render` makes of a tenant's spec (the ones apply sends), and
    cosmicac-vmi itself, run against one server."""

    def __init__(self, vmi_exe, workdir):
        self.vmi_exe, self.work = vmi_exe, workdir

    def objects(self, name, **fields):
        path = self.spec(name, **fields)
        out = subprocess.run([self.vmi_exe, "render", "-f", path, "-n", NS, "-o", "json"], check=True,
                             capture_output=True, text=True).stdout
        return {o["kind"]: o for o in json.loads(out)["items"]}

    def run(self, server, *argv):
        """cosmicac-vmi ARGV against server: (exit status, stdout + stderr with the server's
        address and the uids it made up replaced)."""
        env = {"PATH": "/usr/bin:/bin", "HOME": self.work}
        for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
            if k in os.environ:
                env[k] = os.environ[k]
        p = subprocess.run([self.vmi_exe, *argv, "--kubeconfig", server.kubeconfig], capture_output=True, text=True,
                           env=env, stdin=subprocess.DEVNULL, timeout=120)
        text = re.sub(r"https?://127\.0\.0\.1:[0-9]+", "<server>", p.stdout + p.stderr)
        text = re.sub(r"\b(uid-[0-9]+-[a-z0-9-]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
                      "<uid>", text)
        return p.returncode, text

    def spec(self, name, **fields):
        spec = {"name": name, "namespace": NS, "cpu": 4, "memory": "16Gi",
                "gpu": {"type": "GH100_H100_SXM5_80GB", "count": 1},
                "dataDisk": {"size": "100Gi", "mountPoint": "/data"},
                "container": {"env": {"MODEL_ID": "tiny"}}}
        spec.update(fields)
        path = os.path.join(self.work, f"spec-{name}.json")
        with open(path, "w") as fh:
            json.dump(spec, fh)
        return path


# --- the cases: each a function of (context, rendered) returning [(label, view)] ---------------
def case_create_and_already_exists(c, r):
    s = secret("create-a")
    return [c.step("POST", "POST", coll("Secret"), s, query=WRITE),
            c.step("POST again", "POST", coll("Secret"), s, query=WRITE),
            c.step("GET", "GET", obj_path("Secret", "create-a"))]


def case_create_without_name(c, r):
    s = secret("")
    del s["metadata"]["name"]
    return [c.step("POST", "POST", coll("Secret"), s, query=WRITE)]


def case_secret_probe(c, r):
    """apply's and delete's Secret probe: a dry-run create (the identity cannot GET Secrets)."""
    return [c.step("probe absent", "POST", coll("Secret"), secret("probe-a"), query=DRY_WRITE),
            c.step("GET after probe", "GET", obj_path("Secret", "probe-a")),
            c.step("create", "POST", coll("Secret"), secret("probe-a"), query=WRITE),
            c.step("probe present", "POST", coll("Secret"), secret("probe-a"), query=DRY_WRITE)]


def case_get_missing(c, r):
    return [c.step("VMI", "GET", obj_path("VirtualMachineInstance", "no-such-vm")),
            c.step("Secret", "GET", obj_path("Secret", "no-such-secret")),
            c.step("DataVolume", "GET", obj_path("DataVolume", "no-such-dv")),
            c.step("PVC", "GET", obj_path("PersistentVolumeClaim", "no-such-pvc"))]


def _apply(c, o, query=WRITE, label=None):
    md = o["metadata"]
    return c.step(label or f"apply {o['kind']}", "PATCH", obj_path(o["kind"], md["name"]), o, APPLY, query)


def case_apply_first_then_unchanged(c, r):
    objs = r.objects("apply-a")
    out = []
    for kind in ("PersistentVolumeClaim", "VirtualMachineInstance", "DataVolume"):
        out.append(_apply(c, objs[kind], label=f"first {kind}"))
    first_uid = c.uids.get(obj_path("VirtualMachineInstance", "apply-a"))
    for kind in ("PersistentVolumeClaim", "VirtualMachineInstance", "DataVolume"):
        out.append(_apply(c, objs[kind], label=f"unchanged {kind}"))
    status, vmi = c.send("GET", obj_path("VirtualMachineInstance", "apply-a"))
    out.append(("VMI keeps its uid", status == 200 and vmi["metadata"]["uid"] == first_uid))
    managers = sorted({m.get("manager") for m in vmi["metadata"].get("managedFields", [])}) if status == 200 else []
    out.append(("VMI field managers", managers))
    return out


def case_apply_dry_run(c, r):
    o = r.objects("dry-a")["VirtualMachineInstance"]
    return [_apply(c, o, DRY_WRITE, "dry-run apply of an absent VMI"),
            c.step("GET after", "GET", obj_path("VirtualMachineInstance", "dry-a"))]


def case_apply_conflict_and_force(c, r):
    """Another field manager owns a field the tool applies differently: 409 Conflict with
    FieldManagerConflict causes; force=true takes it (--force-conflicts)."""
    o = r.objects("conflict-a")["VirtualMachineInstance"]
    other = copy.deepcopy(o)
    other["spec"]["domain"]["cpu"]["cores"] = 8
    return [_apply(c, o, label="tool applies"),
            _apply(c, other, dict(WRITE, fieldManager="someone-else", force="true"), "another manager forces cores"),
            _apply(c, o, label="tool applies again: conflict"),
            _apply(c, o, dict(WRITE, force="true"), "tool forces")]


def case_apply_without_field_manager(c, r):
    o = r.objects("nofm-a")["VirtualMachineInstance"]
    return [_apply(c, o, {"fieldValidation": "Strict"}, "apply without fieldManager")]


def case_apply_strict_unknown_field(c, r):
    o = r.objects("strict-a")["VirtualMachineInstance"]
    o["spec"]["domain"]["bogusField"] = 1
    return [_apply(c, o, label="apply with an unknown field"),
            c.step("GET after", "GET", obj_path("VirtualMachineInstance", "strict-a"))]


def case_create_strict_unknown_field(c, r):
    o = r.objects("strict-b")["VirtualMachineInstance"]
    o["spec"]["domain"]["bogusField"] = 1
    return [c.step("POST with an unknown field", "POST", coll("VirtualMachineInstance"), o, query=WRITE),
            c.step("GET after", "GET", obj_path("VirtualMachineInstance", "strict-b"))]


def case_pvc_growth_and_shrink(c, r):
    """The data PVC resized by a re-apply: kube-apiserver lets a *bound* claim grow only."""
    pvc = r.objects("pvc-a")["PersistentVolumeClaim"]
    grown, shrunk, other = copy.deepcopy(pvc), copy.deepcopy(pvc), copy.deepcopy(pvc)
    grown["spec"]["resources"]["requests"]["storage"] = "200Gi"
    shrunk["spec"]["resources"]["requests"]["storage"] = "50Gi"
    other["spec"]["accessModes"] = ["ReadWriteMany"]
    return [_apply(c, pvc, label="create 100Gi"),
            _apply(c, grown, label="grow an unbound claim"),
            _apply(c, shrunk, label="shrink"),
            _apply(c, other, label="change accessModes")]


def case_delete_dry_run_in_body(c, r):
    """delete --dry-run=server as the tool sends it: dryRun in the DeleteOptions body."""
    path = obj_path("Secret", "dryrun-a")
    return [c.step("create", "POST", coll("Secret"), secret("dryrun-a"), query=WRITE),
            c.step("DELETE dryRun in the body", "DELETE", path, delete_options(dry=True)),
            c.step("GET after", "GET", path)]


def case_delete_dry_run_in_query_beside_body(c, r):
    """`?dryRun=All` beside a DeleteOptions body: kube-apiserver takes the options from the body
    and ignores the query — this deletes for real (how the tool's D1 went unseen)."""
    path = obj_path("Secret", "dryrun-b")
    return [c.step("create", "POST", coll("Secret"), secret("dryrun-b"), query=WRITE),
            c.step("DELETE ?dryRun=All with a body", "DELETE", path, delete_options("Background"),
                   query={"dryRun": "All"}),
            c.settle("GET after", path)]


def case_delete_dry_run_in_query_without_body(c, r):
    path = obj_path("Secret", "dryrun-c")
    return [c.step("create", "POST", coll("Secret"), secret("dryrun-c"), query=WRITE),
            c.step("DELETE ?dryRun=All, no body", "DELETE", path, query={"dryRun": "All"}),
            c.step("GET after", "GET", path)]


def case_delete_missing(c, r):
    return [c.step("DELETE", "DELETE", obj_path("VirtualMachineInstance", "no-such-vm"), delete_options())]


def case_delete_custom_resource(c, r):
    """A VMI without finalizers deleted in the background goes at once."""
    o = r.objects("gone-a")["VirtualMachineInstance"]
    path = obj_path("VirtualMachineInstance", "gone-a")
    return [_apply(c, o, label="apply"),
            c.step("DELETE dry run", "DELETE", path, delete_options("Background", dry=True)),
            c.step("DELETE", "DELETE", path, delete_options("Background")),
            c.settle("GET after", path)]


def case_delete_precondition(c, r):
    path = obj_path("Secret", "precond-a")
    out = [c.step("create", "POST", coll("Secret"), secret("precond-a"), query=WRITE),
           c.step("DELETE with another uid", "DELETE", path,
                  delete_options(uid="00000000-0000-4000-8000-000000000000")),
           c.step("GET after", "GET", path)]
    out.append(c.step("DELETE with its uid", "DELETE", path, delete_options("Background", uid=c.uids[path])))
    out.append(c.settle("GET after", path))
    return out


def case_lease_update_and_release(c, r):
    """The rollout's Lease (host/cluster/lease.hpp): an update naming the resourceVersion read
    wins, one naming a stale version is 409 Conflict (of two takers, one wins); a DELETE whose
    resourceVersion precondition is stale is 409 and deletes nothing; with the current one it goes."""
    path = obj_path("Lease", "cosmicac-rollout")
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "cosmicac-rollout", "namespace": NS},
             "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0,
                      "acquireTime": "2026-11-28T09:00:00.000000Z", "renewTime": "2026-11-28T09:00:00.000000Z"}}
    status, created = c.send("POST", coll("Lease"), lease, query=WRITE)
    out = [("create", view(status, created))]
    first = created["metadata"]["resourceVersion"]
    taken = json.loads(json.dumps(created))
    taken["spec"]["holderIdentity"] = "b"
    status, renewed = c.send("PUT", path, taken, query=WRITE)
    out.append(("update with the version read", view(status, renewed)))
    stale = json.loads(json.dumps(created))
    stale["spec"]["holderIdentity"] = "c"
    out.append(c.step("update with a stale version", "PUT", path, stale, query=WRITE))
    out.append(("holder after", (c.send("GET", path)[1].get("spec") or {}).get("holderIdentity")))
    stale_delete = {"kind": "DeleteOptions", "apiVersion": "v1",
                    "preconditions": {"uid": created["metadata"]["uid"], "resourceVersion": first}}
    out.append(c.step("DELETE with a stale version", "DELETE", path, stale_delete))
    out.append(c.step("GET after", "GET", path))
    current = {"kind": "DeleteOptions", "apiVersion": "v1",
               "preconditions": {"uid": created["metadata"]["uid"],
                                 "resourceVersion": renewed["metadata"]["resourceVersion"]}}
    out.append(c.step("DELETE with the current version", "DELETE", path, current))
    out.append(c.settle("GET after release", path))
    return out


def case_delete_foreground_with_dependent(c, r):
    """Foreground: the owner is terminating (foregroundDeletion) until its dependents are gone;
    then it goes. Background: the owner goes, then its dependents."""
    out = []
    for policy in ("Foreground", "Background"):
        owner = f"owner-{policy.lower()}"
        out.append(c.step(f"{policy}: create owner", "POST", coll("Secret"), secret(owner), query=WRITE))
        uid = c.uids[obj_path("Secret", owner)]
        dep = secret(owner + "-dep", ownerReferences=[{"apiVersion": "v1", "kind": "Secret", "name": owner,
                                                        "uid": uid, "blockOwnerDeletion": True}])
        out.append(c.step(f"{policy}: create dependent", "POST", coll("Secret"), dep, query=WRITE))
        out.append(c.step(f"{policy}: DELETE owner", "DELETE", obj_path("Secret", owner), delete_options(policy)))
        out.append(c.settle(f"{policy}: owner at the end", obj_path("Secret", owner)))
        out.append(c.settle(f"{policy}: dependent at the end", obj_path("Secret", owner + "-dep")))
    return out


def case_terminating(c, r):
    """An object held by a finalizer after its DELETE: still readable, terminating; a create of
    its name is 409 AlreadyExists; a second DELETE answers the object."""
    path = obj_path("Secret", "held-a")
    return [c.step("create with a finalizer", "POST", coll("Secret"), secret("held-a", finalizers=[HOLD]),
                   query=WRITE),
            c.step("DELETE", "DELETE", path, delete_options("Background")),
            c.step("GET", "GET", path),
            c.step("POST of its name", "POST", coll("Secret"), secret("held-a"), query=WRITE),
            c.step("DELETE again", "DELETE", path, delete_options("Background"))]


def case_apply_to_terminating(c, r):
    """Server-side apply of an object that is being deleted."""
    o = r.objects("held-b")["VirtualMachineInstance"]
    o["metadata"]["finalizers"] = [HOLD]
    path = obj_path("VirtualMachineInstance", "held-b")
    return [_apply(c, o, label="apply with a finalizer"),
            c.step("DELETE", "DELETE", path, delete_options("Background")),
            _apply(c, o, label="apply again while terminating")]


def case_list_by_label(c, r):
    """list: VMIs by the managed-by label (host/verbs/list.cpp's list_vmis)."""
    out = [_apply(c, r.objects("list-a")["VirtualMachineInstance"], label="apply list-a"),
           _apply(c, r.objects("list-b")["VirtualMachineInstance"], label="apply list-b")]
    stray = r.objects("list-c")["VirtualMachineInstance"]
    stray["metadata"]["labels"] = {"app": "other"}
    out.append(_apply(c, stray, label="apply list-c (not the tool's)"))
    out.append(c.step("list managed-by", "GET", coll("VirtualMachineInstance"),
                      query={"labelSelector": "app.kubernetes.io/managed-by=cosmicac-vmi"}))
    return out


def _vmi_state(c, name):
    """The four objects of one job as the tool leaves them."""
    # The user-data Secret's name ends in the digest of its content: found by the job's label.
    return [c.step(f"{kind} {n}", "GET", obj_path(kind, n))
            for kind, n in (("VirtualMachineInstance", name), ("PersistentVolumeClaim", name + "-data"))] + [
        # The root DataVolume's name ends in the digest of its source, the user-data Secret's in the
        # digest of its content: both found by the job's label.
        c.step("DataVolume of the job", "GET", coll("DataVolume"), query={"labelSelector": f"cosmicac.io/job={name}"}),
        c.step("Secret of the job", "GET", coll("Secret"), query={"labelSelector": f"cosmicac.io/job={name}"})]


def case_vmi_apply_unchanged_delete_dry_run(c, r):
    """cosmicac-vmi itself: apply, apply again, delete --delete-data --dry-run=server, get of a
    missing VMI — the same exit status and output from both servers, and the same objects."""
    spec = r.spec("tool-a")

    def run(label, expect, *argv):
        rc, text = r.run(c.server, *argv)
        if rc != expect:   # both servers failing alike is no agreement
            raise RuntimeError(f"{label}: exit {rc}, expected {expect}:\n{text}")
        return label, (rc, text)

    out = [run("apply", 0, "apply", "-f", spec, "-n", NS)]
    out += _vmi_state(c, "tool-a")
    out.append(run("apply again", 0, "apply", "-f", spec, "-n", NS))
    out.append(run("delete --dry-run=server", 0, "delete", "-f", spec, "-n", NS, "--delete-data", "--dry-run=server"))
    out += _vmi_state(c, "tool-a")
    out.append(run("get missing", 1, "get", "no-such-vm", "-n", NS))
    label, (rc, text) = run("list", 0, "list", "-n", NS)
    out.append((label, (rc, [row.split()[:3] for row in text.splitlines()])))   # not AGE, made of times
    return out


CASES = {n[len("case_"):]: f for n, f in list(globals().items()) if n.startswith("case_")}


def compare(a, b):
    """The steps on which two runs of one case differ: [(label, view a, view b)]."""
    def compared(v):
        return {k: x for k, x in v.items() if k != "message"} if isinstance(v, dict) else v

    diffs = []
    for (label, va), (_, vb) in zip(a, b):
        if compared(va) != compared(vb):
            diffs.append((label, va, vb))
    if len(a) != len(b):
        diffs.append(("number of steps", len(a), len(b)))
    return diffs


def run_cases(names, real, standin, rendered):
    results = []
    for name in names:
        runs = []
        for server in (real, standin):
            try:
                runs.append(CASES[name](Context(server), rendered))
            except Exception as e:     # a case that cannot even run on a server: its error is the view
                runs.append([("error", f"{type(e).__name__}: {e}")])
        diffs = compare(*runs)
        for server, steps in zip((real, standin), runs):   # a case that could not run is a failure
            diffs += [(f"{label} ({server.name})", view, None) for label, view in steps if label == "error"]
        results.append((name, diffs))
        if diffs:
            print(f"DIFFER {name}", flush=True)
            for label, va, vb in diffs:
                print(f"  {label}:\n    {real.name}: {json.dumps(va)}\n    {standin.name}: {json.dumps(vb)}")
        else:
            print(f"AGREE {name}", flush=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vmi", help="cosmicac-vmi (renders the objects the cases send)")
    ap.add_argument("--standin", help="the apiserver-standin executable")
    ap.add_argument("--kube-bin", default=kube_bin.default_dir(REPO))
    ap.add_argument("--crds", default=os.environ.get("COSMICAC_KUBE_CRDS"))
    ap.add_argument("--case", action="append", default=[], help="run only this case (repeatable)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    for what, exe in (("cosmicac-vmi", args.vmi), ("apiserver-standin", args.standin)):
        if not exe or not os.access(exe, os.X_OK):
            print(f"contract: FAIL: no executable {what} at {exe}", file=sys.stderr)
            return 1
    unknown = [c for c in args.case if c not in CASES]
    if unknown:
        print(f"contract: no such case {unknown} (--list)", file=sys.stderr)
        return 2
    crds = args.crds or os.path.join(os.path.dirname(os.path.abspath(args.kube_bin)), "kube-crds")
    try:
        bins = kube_bin.locate(args.kube_bin)
        if not os.path.isdir(crds):
            raise kube_bin.Unavailable(f"no CRD directory at {crds}")
    except kube_bin.Unavailable as e:
        how = (f"to enable it: {kube_bin.ENV_VAR}=/path/to/kube-bin and COSMICAC_KUBE_CRDS=/path/to/kube-crds "
               f"(tests/realapi/README.md)")
        if os.environ.get("CI") == "true":
            print(f"contract: FAIL (CI=true): the contract test cannot run: {e}; {how}")
            return 1
        print(f"contract: NOT RUN: {e}; {how}")
        return SKIP

    t0 = time.monotonic()
    cp = cluster.ControlPlane(bins, crds)
    standin = None
    try:
        try:
            cp.start()
        except Exception as e:
            print(f"contract: FAIL: the control plane did not come up: {e}")
            for name in ("etcd", "kube-apiserver", "kube-controller-manager"):
                print(f"--- {name} log (tail)\n{cp.tail(name)}")
            return 1
        cp.admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        standin = StandInServer(os.path.abspath(args.standin), os.path.join(REPO, "tests", "data",
                                                                            "kubevirt-schemas"))
        work = os.path.join(cp.dir, "work")
        os.makedirs(work)
        standin.write_kubeconfig(os.path.join(work, "kubeconfig-standin"))
        results = run_cases(args.case or list(CASES), RealServer(cp), standin,
                            Rendered(os.path.abspath(args.vmi), work))
    finally:
        if standin:
            standin.stop()
        cp.stop()
    differ = [n for n, d in results if d]
    print(f"contract: {len(results) - len(differ)} agree, {len(differ)} differ"
          + (f" ({', '.join(differ)})" if differ else "") + f" in {time.monotonic() - t0:.0f} s")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
