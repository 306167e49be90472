"""A private test registry: Debian's docker-registry (distribution v2) on
127.0.0.1:<free port>, htpasswd bcrypt auth, plain HTTP, its own config and
storage in the scenario's work dir. Started and stopped by PID."""

from __future__ import annotations

import base64
import secrets
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from . import oci, proc

REPO = "cosmicac/inference"
GUEST_ADDR = "10.0.2.100:5000"  # what the guest sees (QEMU guestfwd)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Registry:
    def __init__(self, workdir: Path, username: str = "cosmicac-e2e", token: str | None = None):
        for tool in ("docker-registry", "htpasswd", "skopeo"):
            if shutil.which(tool) is None:
                raise SystemExit(f"e2e: {tool} missing; run packaging/install-deps as root")
        self.dir = workdir / "registry"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.username = username
        self.token = token or "tok-" + secrets.token_urlsafe(18)
        self.port = free_port()
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
    rootdirectory: {self.dir / 'storage'}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:{self.port}
  secret: {secrets.token_hex(16)}
auth:
  htpasswd:
    realm: cosmicac-e2e
    path: {htpasswd}
""")

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

    def status(self, path: str, auth: bool = False) -> int | None:
        req = urllib.request.Request(f"http://{self.addr}{path}")
        if auth:
            cred = base64.b64encode(f"{self.username}:{self.token}".encode()).decode()
            req.add_header("Authorization", "Basic " + cred)
        req.add_header("Accept", "application/vnd.docker.distribution.manifest.v2+json, "
                       "application/vnd.oci.image.manifest.v1+json")
        try:
            with urllib.request.urlopen(req, timeout=2) as r:
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
