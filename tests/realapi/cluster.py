"""A real Kubernetes control plane on loopback for the real-API suite: etcd, kube-apiserver
(RBAC, client certificates and static tokens, all generated here with openssl) and
kube-controller-manager (garbage collector, namespace, service-account, EndpointSlice and other controllers), plus
a stand-in kubelet: an HTTPS endpoint that serves `containerLogs` to the API server's real
`pods/log` proxy, and force-deletes terminating pods as a kubelet would after their containers
stopped. Every process runs in its own process group and is killed on stop(), at exit and on
SIGTERM/SIGINT/SIGHUP, whatever failed, and by the kernel if the suite itself is SIGKILLed."""

import atexit
import ctypes
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

ADMIN_TOKEN_USER = "realapi-admin"
TESTER_USER = "cosmicac-tester"     # the restricted identity: a client certificate, no group
NODE_NAME = "gpu-node-1"
# A second node whose kubelet port nothing listens on: the API server's pods/log proxy cannot
# dial it and answers 500 "dial tcp 127.0.0.1:PORT: connect: connection refused".
UNREACHABLE_NODE = "gpu-node-2"
GPU_RESOURCE = "nvidia.com/GH100_H100_SXM5_80GB"

# kind -> (API path prefix, plural, namespaced) for the objects the harness writes.
KINDS = {
    "Namespace": ("/api/v1", "namespaces", False),
    "Node": ("/api/v1", "nodes", False),
    "ServiceAccount": ("/api/v1", "serviceaccounts", True),
    "Secret": ("/api/v1", "secrets", True),
    "ConfigMap": ("/api/v1", "configmaps", True),
    "Pod": ("/api/v1", "pods", True),
    "PersistentVolumeClaim": ("/api/v1", "persistentvolumeclaims", True),
    "PersistentVolume": ("/api/v1", "persistentvolumes", False),
    "Role": ("/apis/rbac.authorization.k8s.io/v1", "roles", True),
    "RoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "rolebindings", True),
    "ClusterRole": ("/apis/rbac.authorization.k8s.io/v1", "clusterroles", False),
    "ClusterRoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    "CustomResourceDefinition": ("/apis/apiextensions.k8s.io/v1", "customresourcedefinitions", False),
    "StorageClass": ("/apis/storage.k8s.io/v1", "storageclasses", False),
    "Service": ("/api/v1", "services", True),
    "Deployment": ("/apis/apps/v1", "deployments", True),
    "NetworkPolicy": ("/apis/networking.k8s.io/v1", "networkpolicies", True),
    "EndpointSlice": ("/apis/discovery.k8s.io/v1", "endpointslices", True),
    "ValidatingAdmissionPolicy": ("/apis/admissionregistration.k8s.io/v1", "validatingadmissionpolicies", False),
    "ValidatingAdmissionPolicyBinding": ("/apis/admissionregistration.k8s.io/v1",
                                         "validatingadmissionpolicybindings", False),
    "VirtualMachineInstance": ("/apis/kubevirt.io/v1", "virtualmachineinstances", True),
    "VirtualMachine": ("/apis/kubevirt.io/v1", "virtualmachines", True),
    "KubeVirt": ("/apis/kubevirt.io/v1", "kubevirts", True),
    "DataVolume": ("/apis/cdi.kubevirt.io/v1beta1", "datavolumes", True),
    "DataSource": ("/apis/cdi.kubevirt.io/v1beta1", "datasources", True),
    "CDI": ("/apis/cdi.kubevirt.io/v1beta1", "cdis", False),
    "DataSource": ("/apis/cdi.kubevirt.io/v1beta1", "datasources", True),
    "DataImportCron": ("/apis/cdi.kubevirt.io/v1beta1", "dataimportcrons", True),
    "StorageProfile": ("/apis/cdi.kubevirt.io/v1beta1", "storageprofiles", False),
    "Lease": ("/apis/coordination.k8s.io/v1", "leases", True),
}


def path_of(kind, name=None, namespace=None, sub=None):
    prefix, plural, namespaced = KINDS[kind]
    p = prefix
    if namespaced:
        p += f"/namespaces/{namespace}"
    p += f"/{plural}"
    if name:
        p += f"/{name}"
    if sub:
        p += f"/{sub}"
    return p


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rfc3339_nano(t=None):
    t = time.time() if t is None else t
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int((t % 1) * 1e9):09d}Z"


class ApiError(Exception):
    def __init__(self, status, body, what):
        self.status, self.body = status, body
        super().__init__(f"{what}: HTTP {status}: {body if isinstance(body, str) else json.dumps(body)[:600]}")


class Api:
    """A small client of the real API server (stdlib http.client + ssl): one connection per
    request, so the simulator's threads and the tests never share one."""

    def __init__(self, port, ca_file, token=None, cert=None):
        self.port = port
        self.ctx = ssl.create_default_context(cafile=ca_file)
        if cert:
            self.ctx.load_cert_chain(*cert)
        self.token = token

    def request(self, method, path, body=None, content_type="application/json", query=None, ok=(200, 201)):
        if query:
            path += "?" + urllib.parse.urlencode(query)
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=30)
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        if ok is not None and resp.status not in ok:
            raise ApiError(resp.status, parsed, f"{method} {path}")
        return resp.status, parsed

    def get(self, path, **kw):
        return self.request("GET", path, **kw)[1]

    def exists(self, path):
        status, body = self.request("GET", path, ok=(200, 404))
        return body if status == 200 else None

    def apply(self, obj, manager="realapi-harness", force=True):
        """Server-side apply of one object (created when absent)."""
        md = obj["metadata"]
        path = path_of(obj["kind"], md["name"], md.get("namespace"))
        return self.request("PATCH", path, body=obj, content_type="application/apply-patch+yaml",
                            query={"fieldManager": manager, "force": "true" if force else "false"})[1]

    def create(self, obj):
        md = obj["metadata"]
        return self.request("POST", path_of(obj["kind"], None, md.get("namespace")), body=obj)[1]

    def merge_patch(self, path, patch):
        return self.request("PATCH", path, body=patch, content_type="application/merge-patch+json")[1]

    def delete(self, path, body=None, ok=(200, 202, 404)):
        return self.request("DELETE", path, body=body, ok=ok)


class Kubelet:
    """The kubelet's `containerLogs` endpoint (HTTPS, client certificates from our CA only, as
    the API server's --kubelet-client-certificate presents one), serving what the tests write
    as a container's log, with `follow`, `timestamps`, `sinceTime` and `tailLines` as the kubelet
    reads them."""

    def __init__(self, cert, key, ca):
        self.logs = {}            # (ns, pod, container) -> [(unix time, text)]
        self.closed = set()       # logs whose container "exited": a follow ends after them
        self.cond = threading.Condition()
        self.stopping = False
        self.requests = []        # paths served, for tests that check the proxy was used
        kubelet = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                q = urllib.parse.parse_qs(url.query)
                parts = url.path.split("/")
                kubelet.requests.append(self.path)
                if len(parts) != 5 or parts[1] != "containerLogs":
                    self.send_error(404)
                    return
                key = (parts[2], parts[3], parts[4])
                with kubelet.cond:
                    known = key in kubelet.logs
                if not known:
                    self.send_error(404, "container not found")
                    return
                follow = q.get("follow", ["false"])[0] == "true"
                stamps = q.get("timestamps", ["false"])[0] == "true"
                since = None
                if "sinceTime" in q:
                    since = _parse_rfc3339(q["sinceTime"][0])
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                sent = 0
                if "tailLines" in q:
                    with kubelet.cond:
                        sent = max(0, len(kubelet.logs[key]) - int(q["tailLines"][0]))
                while True:
                    with kubelet.cond:
                        lines = kubelet.logs[key][sent:]
                        done = key in kubelet.closed or kubelet.stopping
                        if not lines and follow and not done:
                            kubelet.cond.wait(0.5)
                            continue
                    for t, text in lines:
                        sent += 1
                        if since is not None and t < since:
                            continue
                        out = (rfc3339_nano(t) + " " if stamps else "") + text + "\n"
                        try:
                            self.wfile.write(out.encode())
                            self.wfile.flush()
                        except OSError:
                            return
                    if not follow or done:
                        return

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        ctx.load_verify_locations(ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add_container(self, ns, pod, container):
        with self.cond:
            self.logs.setdefault((ns, pod, container), [])

    def write(self, ns, pod, container, text):
        with self.cond:
            self.logs.setdefault((ns, pod, container), []).append((time.time(), text))
            self.cond.notify_all()

    def stop(self):
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        self.server.shutdown()
        self.server.server_close()


def _parse_rfc3339(s):
    base, _, frac = s.rstrip("Z").partition(".")
    t = time.mktime(time.strptime(base, "%Y-%m-%dT%H:%M:%S")) - time.timezone
    return t + (float("0." + frac) if frac else 0.0)


class ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager + the kubelet stand-in, in a temp dir."""

    CONTROLLERS = ("garbage-collector-controller,namespace-controller,serviceaccount-controller,"
                   "serviceaccount-token-controller,persistentvolumeclaim-protection-controller,"
                   "persistentvolume-binder-controller,root-ca-certificate-publisher-controller,"
                   "endpointslice-controller")

    def __init__(self, binaries, crd_dir, log=print, apiserver_args=()):
        self.bins = binaries
        self.apiserver_args = list(apiserver_args)   # more kube-apiserver flags (bench/host: the audit log)
        self.crd_dir = crd_dir
        self.log = log
        base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None   # etcd's fsyncs on tmpfs
        self._remove_orphans(base or tempfile.gettempdir())
        self.dir = tempfile.mkdtemp(prefix="cosmicac-realapi-", dir=base)
        with open(self.f("owner.pid"), "w") as fh:
            fh.write(str(os.getpid()))
        self.procs = []
        self.kubelet = None
        self._reaper_stop = threading.Event()
        self._stopped = False
        atexit.register(self.stop)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    @staticmethod
    def _remove_orphans(base):
        """Temp dirs of earlier runs that were SIGKILLed (their processes died with them)."""
        for d in os.listdir(base):
            path = os.path.join(base, d)
            if not d.startswith("cosmicac-realapi-"):
                continue
            try:
                with open(os.path.join(path, "owner.pid")) as fh:
                    os.kill(int(fh.read()), 0)
            except ProcessLookupError:
                shutil.rmtree(path, ignore_errors=True)
            except (OSError, ValueError):
                pass

    def _on_signal(self, signum, _frame):
        self.stop()
        raise SystemExit(128 + signum)

    def f(self, name):
        return os.path.join(self.dir, name)

    # --- certificates and credentials -------------------------------------------------------
    def _openssl(self, *args):
        subprocess.run(["openssl", *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def _key(self, name):
        self._openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                      "-out", self.f(name + ".key"))

    def _cert(self, name, subject, server=False, client=False):
        self._key(name)
        self._openssl("req", "-new", "-key", self.f(name + ".key"), "-subj", subject, "-out", self.f(name + ".csr"))
        usages = ",".join(u for u, on in (("serverAuth", server), ("clientAuth", client)) if on)
        ext = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
               "extendedKeyUsage=" + usages]
        if server:
            ext.append("subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,"
                       "DNS:kubernetes.default.svc,IP:10.96.0.1")
        with open(self.f(name + ".ext"), "w") as fh:
            fh.write("\n".join(ext) + "\n")
        self._openssl("x509", "-req", "-in", self.f(name + ".csr"), "-CA", self.f("ca.crt"),
                      "-CAkey", self.f("ca.key"), "-set_serial", str(int.from_bytes(os.urandom(8), "big")),
                      "-days", "2", "-sha256", "-extfile", self.f(name + ".ext"), "-out", self.f(name + ".crt"))
        return self.f(name + ".crt"), self.f(name + ".key")

    def _credentials(self):
        self._key("ca")
        self._openssl("req", "-x509", "-new", "-key", self.f("ca.key"), "-subj", "/CN=cosmicac-realapi-ca",
                      "-days", "2", "-sha256", "-addext", "basicConstraints=critical,CA:TRUE",
                      "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-out", self.f("ca.crt"))
        self.ca = self.f("ca.crt")
        self.serving = self._cert("apiserver", "/CN=kube-apiserver", server=True)
        self.kubelet_client = self._cert("apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client",
                                         client=True)
        self.kubelet_serving = self._cert("kubelet", "/CN=system:node:" + NODE_NAME, server=True)
        self.kcm_client = self._cert("kcm", "/CN=system:kube-controller-manager", client=True)
        self.tester_client = self._cert("tester", "/CN=" + TESTER_USER, client=True)
        # The service-account signing key in SEC1 form, and its public half for verifying.
        self._key("sa-pkcs8")
        self._openssl("ec", "-in", self.f("sa-pkcs8.key"), "-out", self.f("sa.key"))
        self._openssl("pkey", "-in", self.f("sa.key"), "-pubout", "-out", self.f("sa.pub"))
        self.admin_token = os.urandom(24).hex()
        with open(self.f("tokens.csv"), "w") as fh:
            fh.write(f'{self.admin_token},{ADMIN_TOKEN_USER},{ADMIN_TOKEN_USER},"system:masters"\n')
        os.chmod(self.f("tokens.csv"), 0o600)

    def kubeconfig(self, name, namespace, token=None, cert=None):
        """A kubeconfig file for cosmicac-vmi: this server, our CA, and either a bearer token or
        a client certificate (files), with `namespace` as the context's."""
        user = {"token": token} if token else {"client-certificate": cert[0], "client-key": cert[1]}
        doc = {"apiVersion": "v1", "kind": "Config", "current-context": "realapi",
               "clusters": [{"name": "realapi", "cluster": {"server": f"https://127.0.0.1:{self.port}",
                                                           "certificate-authority": self.ca}}],
               "users": [{"name": name, "user": user}],
               "contexts": [{"name": "realapi", "context": {"cluster": "realapi", "user": name,
                                                           "namespace": namespace}}]}
        path = self.f(f"kubeconfig-{name}-{namespace}")
        with open(path, "w") as fh:
            json.dump(doc, fh)
        os.chmod(path, 0o600)
        return path

    # --- processes --------------------------------------------------------------------------
    @staticmethod
    def _die_with_parent():
        # PR_SET_PDEATHSIG: SIGKILL when the suite dies without running stop() (ctest's timeout
        # kills it with SIGKILL; atexit and signal handlers do not run then).
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)

    def _spawn(self, name, argv):
        logf = open(self.f(name + ".log"), "wb")
        p = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, cwd=self.dir, preexec_fn=self._die_with_parent)
        logf.close()
        self.procs.append((name, p))
        return p

    def _check_alive(self):
        for name, p in self.procs:
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited with {p.returncode}: " + self.tail(name))

    def tail(self, name, n=25):
        try:
            with open(self.f(name + ".log"), errors="replace") as fh:
                return "".join(fh.readlines()[-n:])
        except OSError:
            return "(no log)"

    def _until(self, what, fn, timeout):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                if fn():
                    return
            except (OSError, ApiError, http.client.HTTPException) as e:
                last = e
            time.sleep(0.2)
        raise RuntimeError(f"timed out waiting for {what}" + (f" (last: {last})" if last else ""))

    def start(self):
        t0 = time.monotonic()
        self._credentials()
        etcd_port, peer_port = free_port(), free_port()
        self._spawn("etcd", [self.bins["etcd"], "--name", "realapi", "--data-dir", self.f("etcd"),
                             "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
                             "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
                             "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                             "--initial-cluster", f"realapi=http://127.0.0.1:{peer_port}",
                             "--log-level", "warn", "--logger", "zap"])
        self.kubelet = Kubelet(*self.kubelet_serving, self.ca)
        self.port = free_port()
        self._apiserver_argv = [
            self.bins["kube-apiserver"], "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={self.port}", f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            f"--tls-cert-file={self.serving[0]}", f"--tls-private-key-file={self.serving[1]}",
            f"--client-ca-file={self.ca}", f"--token-auth-file={self.f('tokens.csv')}",
            "--authorization-mode=RBAC", "--anonymous-auth=false",
            f"--service-account-key-file={self.f('sa.pub')}",
            f"--service-account-signing-key-file={self.f('sa.key')}",
            "--service-account-issuer=https://kubernetes.default.svc",
            "--service-cluster-ip-range=10.96.0.0/16", "--endpoint-reconciler-type=none",
            f"--kubelet-client-certificate={self.kubelet_client[0]}",
            f"--kubelet-client-key={self.kubelet_client[1]}",
            f"--kubelet-certificate-authority={self.ca}",
            "--kubelet-preferred-address-types=InternalIP", "--profiling=false", *self.apiserver_args]
        self._spawn("kube-apiserver", self._apiserver_argv)
        self.admin = Api(self.port, self.ca, token=self.admin_token)
        self.tester = Api(self.port, self.ca, cert=self.tester_client)
        self._until("kube-apiserver /readyz", lambda: self.admin.request("GET", "/readyz", ok=None)[0] == 200, 90)
        self.log(f"realapi: kube-apiserver ready on 127.0.0.1:{self.port} after {time.monotonic() - t0:.1f} s")
        self._install_crds()
        self.log(f"realapi: CRDs established after {time.monotonic() - t0:.1f} s")
        kcm_kc = self.kubeconfig("kcm", "kube-system", cert=self.kcm_client)
        self._spawn("kube-controller-manager", [
            self.bins["kube-controller-manager"], f"--kubeconfig={kcm_kc}",
            f"--authentication-kubeconfig={kcm_kc}", f"--authorization-kubeconfig={kcm_kc}",
            f"--controllers={self.CONTROLLERS}", "--use-service-account-credentials=true",
            f"--service-account-private-key-file={self.f('sa.key')}", f"--root-ca-file={self.ca}",
            "--leader-elect=false", "--bind-address=127.0.0.1", f"--secure-port={free_port()}",
            "--profiling=false"])
        self._register_node()
        # The garbage collector is synced once it has built its graph; `default` gets its
        # ServiceAccount from the serviceaccount controller: both prove the manager runs.
        self._until("kube-controller-manager (ServiceAccount default/default)",
                    lambda: self.admin.exists(path_of("ServiceAccount", "default", "default")), 60)
        threading.Thread(target=self._reap_pods, daemon=True).start()
        self.log(f"realapi: control plane up in {time.monotonic() - t0:.1f} s (dir {self.dir})")

    def restart_apiserver(self):
        """Stops kube-apiserver (its clients' streams drop) and starts it again on the
        same port over the same etcd; returns once it is ready and serves the CRDs again."""
        t0 = time.monotonic()
        for i, (name, p) in enumerate(self.procs):
            if name == "kube-apiserver" and p.poll() is None:
                # SIGTERM starts a graceful shutdown that waits for open watches and log
                # streams (a minute); after 2 s it is a crash: SIGKILL, connections reset.
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(2)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(10)
                del self.procs[i]
                break
        self._spawn("kube-apiserver", self._apiserver_argv)
        self._until("kube-apiserver /readyz after a restart",
                    lambda: self.admin.request("GET", "/readyz", ok=None)[0] == 200, 90)
        self._until("kubevirt.io served after a restart",
                    lambda: self.admin.request("GET", "/apis/kubevirt.io/v1", ok=None)[0] == 200, 30)
        self.log(f"realapi: kube-apiserver restarted in {time.monotonic() - t0:.1f} s")

    def metric(self, name, **labels):
        """The sum of a counter of kube-apiserver's /metrics over the series with these labels."""
        status, body = self.admin.request("GET", "/metrics", ok=None)
        total = 0.0
        for line in body.splitlines():
            if not line.startswith(name + "{"):
                continue
            series, _, value = line.rpartition(" ")
            if all(f'{k}="{v}"' in series for k, v in labels.items()):
                total += float(value)
        return total

    def _install_crds(self):
        names = []
        for fn in sorted(os.listdir(self.crd_dir)):
            if not fn.endswith(".yaml"):
                continue
            with open(os.path.join(self.crd_dir, fn)) as fh:
                for doc in yaml.safe_load_all(fh):
                    if doc and doc.get("kind") == "CustomResourceDefinition":
                        self.admin.apply(doc)
                        names.append(doc["metadata"]["name"])

        def established():
            for n in names:
                crd = self.admin.get(path_of("CustomResourceDefinition", n))
                conds = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
                if conds.get("Established") != "True":
                    return False
            return True
        self._until("CRDs Established", established, 60)
        # Discovery must serve the new groups before the controller manager starts, so its
        # garbage collector and namespace controller know them from their first sync.
        self._until("discovery of kubevirt.io and cdi.kubevirt.io", lambda: all(
            self.admin.request("GET", p, ok=None)[0] == 200 for p in ("/apis/kubevirt.io/v1", "/apis/cdi.kubevirt.io/v1beta1")), 30)

    def _register_node(self):
        for name, port in ((NODE_NAME, self.kubelet.port), (UNREACHABLE_NODE, free_port())):
            self._register_one_node(name, port)

    def _register_one_node(self, name, kubelet_port):
        self.admin.apply({"apiVersion": "v1", "kind": "Node",
                          "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}})
        cap = {"cpu": "128", "memory": "1056Gi", "pods": "110", "hugepages-1Gi": "512Gi", "hugepages-2Mi": "0",
               GPU_RESOURCE: "8", "mellanox.com/cx7_ib": "8"}
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.admin.merge_patch(path_of("Node", name, sub="status"), {"status": {
            "capacity": cap, "allocatable": cap,
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet_port}},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "stand-in",
                            "lastHeartbeatTime": now, "lastTransitionTime": now}]}})

    def _reap_pods(self):
        """A kubelet confirms a pod's deletion once its containers stopped; none runs here,
        so terminating pods on our nodes are force-deleted (grace period 0)."""
        while not self._reaper_stop.wait(0.3):
            try:
                items = [p for node in (NODE_NAME, UNREACHABLE_NODE)
                         for p in self.admin.get("/api/v1/pods", query={"fieldSelector": f"spec.nodeName={node}"})
                         .get("items", [])]
                for p in items:
                    md = p["metadata"]
                    if md.get("deletionTimestamp"):
                        self.admin.delete(path_of("Pod", md["name"], md["namespace"]),
                                          body={"kind": "DeleteOptions", "apiVersion": "v1",
                                                "gracePeriodSeconds": 0,
                                                "preconditions": {"uid": md["uid"]}}, ok=None)
            except Exception:   # the API server stopping at the end, a transient error: next round
                pass

    def stop(self):
        if self._stopped:
            return
        self._stopped = True
        self._reaper_stop.set()
        for name, p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for name, p in reversed(self.procs):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(5)
        if self.kubelet:
            self.kubelet.stop()
        if os.environ.get("COSMICAC_REALAPI_KEEP"):
            self.log(f"realapi: kept {self.dir} (COSMICAC_REALAPI_KEEP)")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
