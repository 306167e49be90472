"""A private test registry: Debian's docker-registry (distribution v2) on
127.0.0.1:<free port>, htpasswd bcrypt auth, plain HTTP (or TLS with `tls`),
its own config and storage in the scenario's work dir. Started and stopped by
PID."""

from __future__ import annotations

import base64
import json
import re
import secrets
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from . import oci, proc
from .tls import ServerCert

REPO = "cosmicac/inference"
GUEST_ADDR = "10.0.2.100:5000"  # what the guest sees (QEMU guestfwd)
MIRROR_GUEST_ADDR = "10.0.2.101:5000"  # a registry mirror, when a VM is given one (VM(mirror_port=...))


def daemon_json_with_mirror() -> bytes:
    """The guest image's /etc/docker/daemon.json with the mirror's guest address as an
    insecure (http) registry too, as an operator's root image would list its mirror."""
    path = Path(__file__).parent / "guest" / "root" / "etc" / "docker" / "daemon.json"
    conf = json.loads(path.read_text())
    conf["insecure-registries"] = sorted(set(conf.get("insecure-registries", [])) | {MIRROR_GUEST_ADDR})
    return json.dumps(conf, indent=2).encode() + b"\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Registry:
    """`proxy_of`: Distribution's pull-through cache (proxy mode) of that
    registry, logging in to it with its credentials; a proxy is read-only.
    `storage_of`: an anonymous second front (no auth) on that registry's
    storage: Distribution's proxy logs in upstream only by the token flow (its
    credential store is keyed by the token realm, so a Basic challenge such as
    the bed's htpasswd one never gets the password), and the bed's registries
    use Basic; a mirror's upstream is this front, on loopback only.
    `name`: its directory under workdir (several registries in one scenario).
    `port`: a fixed port (another registry taking over a stopped one's address).
    `tls`: serve HTTPS with that certificate (its CA is what clients trust)."""

    def __init__(self, workdir: Path, username: str = "cosmicac-e2e", token: str | None = None, *,
                 name: str = "registry", proxy_of: "Registry | None" = None,
                 storage_of: "Registry | None" = None, port: int | None = None, tls: ServerCert | None = None):
        for tool in ("docker-registry", "htpasswd", "skopeo"):
            if shutil.which(tool) is None:
                raise SystemExit(f"e2e: {tool} missing; run packaging/install-deps as root")
        self.dir = workdir / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.username = username
        self.token = token or "tok-" + secrets.token_urlsafe(18)
        self.port = port or free_port()
        self.anonymous = storage_of is not None
        self.storage = storage_of.storage if storage_of is not None else self.dir / "storage"
        proxy = "" if proxy_of is None else f"""proxy:
  remoteurl: http://{proxy_of.addr}
""" + ("" if proxy_of.anonymous else f"""  username: {proxy_of.username}
  password: {proxy_of.token}
""")
        auth = "" if self.anonymous else f"""auth:
  htpasswd:
    realm: cosmicac-e2e
    path: {self.dir / "htpasswd"}
"""
        self.tls = tls
        self.scheme = "https" if tls else "http"
        tls_conf = "" if tls is None else f"""  tls:
    certificate: {tls.cert}
    key: {tls.key}
"""
        self.proc: subprocess.Popen | None = None
        htpasswd = self.dir / "htpasswd"
        subprocess.run(["htpasswd", "-iBc", str(htpasswd), username], input=self.token.encode(),
                       check=True, capture_output=True)
        self.config = self.dir / "config.yml"
        self.config.write_text(f"""version: 0.1
log:
  level: info
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: {self.storage}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:{self.port}
  secret: {secrets.token_hex(16)}
{tls_conf}{auth}{proxy}""")

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 20) -> "Registry":
        log = open(self.dir / "registry.log", "ab")
        self.proc = proc.spawn(["docker-registry", "serve", str(self.config)], stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"docker-registry exited {self.proc.returncode}; see {self.dir}/registry.log")
            if self.status("/v2/") in (200, 401):
                return self
            time.sleep(0.1)
        raise RuntimeError(f"docker-registry not answering on {self.addr} after {timeout}s")

    def stop(self) -> None:
        if self.proc is not None:
            proc.stop(self.proc)
            self.proc = None

    @property
    def log(self) -> Path:
        return self.dir / "registry.log"

    def blobs_served(self, since: int = 0, repo: str = REPO) -> list[tuple[str, int]]:
        """(digest, bytes) of each blob GET this registry answered 200 (its
        access log, from byte offset `since`): what it served of image content."""
        try:
            text = self.log.read_bytes()[since:].decode(errors="replace")
        except FileNotFoundError:
            return []
        pat = re.compile(r'"GET /v2/' + re.escape(repo) + r'/blobs/(sha256:[0-9a-f]{64}) HTTP/[0-9.]+" 200 (\d+)')
        return [(m.group(1), int(m.group(2))) for m in pat.finditer(text)]

    def blob_gets(self, since: int = 0, repo: str = REPO) -> list[int]:
        """The byte counts of blobs_served."""
        return [n for _, n in self.blobs_served(since, repo)]

    def requests(self, since: int = 0) -> list[str]:
        """The request lines ("GET /v2/… HTTP/1.1") of its access log from byte offset `since`."""
        try:
            text = self.log.read_bytes()[since:].decode(errors="replace")
        except FileNotFoundError:
            return []
        return re.findall(r'"((?:GET|HEAD|POST|PUT|PATCH|DELETE) /v2/[^"]*)"', text)

    def log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def manifest(self, tag: str, repo: str = REPO) -> tuple[str, dict]:
        """(manifest digest, manifest) of repo:tag, asked with this registry's credentials."""
        req = urllib.request.Request(f"{self.scheme}://{self.addr}/v2/{repo}/manifests/{tag}")
        cred = base64.b64encode(f"{self.username}:{self.token}".encode()).decode()
        req.add_header("Authorization", "Basic " + cred)
        req.add_header("Accept", "application/vnd.docker.distribution.manifest.v2+json, "
                       "application/vnd.oci.image.manifest.v1+json")
        with urllib.request.urlopen(req, timeout=10, context=self._client_tls()) as r:
            return r.headers["Docker-Content-Digest"], json.loads(r.read())

    def _client_tls(self) -> ssl.SSLContext | None:
        """This host's client trusts the registry's CA and nothing else."""
        return ssl.create_default_context(cafile=str(self.tls.ca)) if self.tls else None

    def status(self, path: str, auth: bool = False) -> int | None:
        req = urllib.request.Request(f"{self.scheme}://{self.addr}{path}")
        if auth:
            cred = base64.b64encode(f"{self.username}:{self.token}".encode()).decode()
            req.add_header("Authorization", "Basic " + cred)
        req.add_header("Accept", "application/vnd.docker.distribution.manifest.v2+json, "
                       "application/vnd.oci.image.manifest.v1+json")
        try:
            with urllib.request.urlopen(req, timeout=2, context=self._client_tls()) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return None

    def push_test_images(self, tags=("v1", "v2"), cmd: list[str] | None = None,
                         repo: str = REPO) -> None:
        """Builds an OCI layout (no docker daemon) and pushes each tag with skopeo."""
        layout = self.dir / "oci-layout"
        oci.write_layout(layout, list(tags), cmd)
        for tag in tags:
            r = subprocess.run([
                "skopeo", "copy", "--quiet", "--dest-tls-verify=false", "--format", "v2s2",
                "--dest-creds", f"{self.username}:{self.token}",
                f"oci:{layout}:{tag}", f"docker://{self.addr}/{repo}:{tag}",
            ], capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                raise RuntimeError(f"skopeo push of {repo}:{tag} failed: {r.stderr.strip()}")
            if self.status(f"/v2/{repo}/manifests/{tag}", auth=True) != 200:
                raise RuntimeError(f"{repo}:{tag} not in the registry after push")

    def push_big_image(self, tag: str = "big", size: int = 64 << 20, repo: str = REPO) -> None:
        """The busybox layer for `tag` plus `size` random bytes (a pull slow
        enough to interrupt), pushed with skopeo like the others."""
        layout = self.dir / f"oci-layout-{tag}"
        oci.write_big_layout(layout, tag, size)
        r = subprocess.run(["skopeo", "copy", "--quiet", "--dest-tls-verify=false", "--format", "v2s2",
                            "--dest-creds", f"{self.username}:{self.token}",
                            f"oci:{layout}:{tag}", f"docker://{self.addr}/{repo}:{tag}"],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"skopeo push of {repo}:{tag} failed: {r.stderr.strip()}")
        if self.status(f"/v2/{repo}/manifests/{tag}", auth=True) != 200:
            raise RuntimeError(f"{repo}:{tag} not in the registry after push")
        shutil.rmtree(layout, ignore_errors=True)
