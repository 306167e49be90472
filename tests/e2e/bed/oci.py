"""Test container images without a docker daemon: an OCI image layout written
from busybox-static (one layer: /bin/busybox, a few applet symlinks, and
/etc/cosmicac-version so every tag has distinct content)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

BUSYBOX = Path("/bin/busybox")
APPLETS = ["sh", "sleep", "cat", "ls", "echo", "env", "ps", "mount", "id", "true", "httpd", "mkdir"]
# An inference server's shape, chosen by the container's environment (ENVS):
# with HEALTH_AFTER=N it refuses connections on port 8000 for N seconds (a
# model loading), then answers GET /health 200 (and prints `serving`); with
# EXIT_AFTER=M as well it exits (code 3) M seconds after that. Without them it
# only sleeps, as before.
SERVER = ("echo started; "
          "if [ -n \"$HEALTH_AFTER\" ]; then sleep \"$HEALTH_AFTER\"; mkdir -p /tmp/www; echo ok > /tmp/www/health; "
          "httpd -p 8000 -h /tmp/www; echo serving; "
          "if [ -n \"$EXIT_AFTER\" ]; then sleep \"$EXIT_AFTER\"; echo exiting; exit 3; fi; fi; "
          "exec /bin/busybox sleep 2147483647")
DEFAULT_CMD = ["/bin/busybox", "sh", "-c", SERVER]


def _busybox() -> bytes:
    data = BUSYBOX.read_bytes()
    # busybox-static replaces /bin/busybox with a static binary; the dynamic one would not run in the container.
    if b"ld-linux" in data[:4096] or not data.startswith(b"\x7fELF"):
        raise SystemExit("e2e: /bin/busybox is not static; install busybox-static (packaging/install-deps)")
    return data


def _layer(tag: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add(name: str, kind: bytes, data: bytes = b"", mode: int = 0o755, link: str = ""):
            ti = tarfile.TarInfo(name)
            ti.type, ti.mode, ti.mtime, ti.linkname = kind, mode, 0, link
            ti.size = len(data) if kind == tarfile.REGTYPE else 0
            tar.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
        for d in ("bin", "etc", "tmp", "data"):
            add(d, tarfile.DIRTYPE, mode=0o1777 if d == "tmp" else 0o755)
        add("bin/busybox", tarfile.REGTYPE, _busybox())
        for a in APPLETS:
            add(f"bin/{a}", tarfile.SYMTYPE, link="busybox", mode=0o777)
        add("etc/cosmicac-version", tarfile.REGTYPE, f"{tag}\n".encode(), 0o644)
    return buf.getvalue()


def _blob(layout: Path, data: bytes) -> tuple[str, int]:
    digest = hashlib.sha256(data).hexdigest()
    (layout / "blobs/sha256" / digest).write_bytes(data)
    return "sha256:" + digest, len(data)


def write_layout(layout: Path, tags: list[str], cmd: list[str] | None = None) -> None:
    """One OCI layout holding every tag (index annotations name the refs)."""
    shutil.rmtree(layout, ignore_errors=True)
    (layout / "blobs/sha256").mkdir(parents=True)
    (layout / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    manifests = []
    for tag in tags:
        raw = _layer(tag)
        diff_id = "sha256:" + hashlib.sha256(raw).hexdigest()
        layer_digest, layer_size = _blob(layout, gzip.compress(raw, mtime=0))
        config = {
            "architecture": "amd64", "os": "linux",
            "config": {"Cmd": cmd or DEFAULT_CMD, "Env": ["PATH=/bin", f"COSMICAC_IMAGE_TAG={tag}"],
                       "Labels": {"org.cosmicac.e2e.tag": tag}},
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
            "history": [{"created_by": f"cosmicac e2e bed, tag {tag}"}],
        }
        cfg_digest, cfg_size = _blob(layout, json.dumps(config, sort_keys=True).encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": cfg_digest, "size": cfg_size},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                        "digest": layer_digest, "size": layer_size}],
        }
        m_digest, m_size = _blob(layout, json.dumps(manifest, sort_keys=True).encode())
        manifests.append({"mediaType": "application/vnd.oci.image.manifest.v1+json",
                          "digest": m_digest, "size": m_size,
                          "annotations": {"org.opencontainers.image.ref.name": tag}})
    (layout / "index.json").write_text(json.dumps(
        {"schemaVersion": 2, "manifests": manifests}, indent=1))


# A larger image: the usual busybox layer for `tag` plus a layer of `size`
# random, incompressible bytes, so that a pull takes long enough to interrupt.
def _random_layer(size: int) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        d = tarfile.TarInfo("blob")
        d.type, d.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(d)
        f = tarfile.TarInfo("blob/random.bin")
        f.size, f.mode = size, 0o644
        tar.addfile(f, io.BytesIO(os.urandom(size)))
    return buf.getvalue()


def write_big_layout(layout: Path, tag: str, size: int) -> None:
    shutil.rmtree(layout, ignore_errors=True)
    (layout / "blobs/sha256").mkdir(parents=True)
    (layout / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    layers, diff_ids = [], []
    for raw in (_layer(tag), _random_layer(size)):
        diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
        digest, n = _blob(layout, gzip.compress(raw, compresslevel=1, mtime=0))
        layers.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest, "size": n})
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {"Cmd": DEFAULT_CMD, "Env": ["PATH=/bin", f"COSMICAC_IMAGE_TAG={tag}"],
                   "Labels": {"org.cosmicac.e2e.tag": tag}},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [{"created_by": f"cosmicac e2e bed, tag {tag}"}, {"created_by": f"{size} random bytes"}],
    }
    cfg_digest, cfg_size = _blob(layout, json.dumps(config, sort_keys=True).encode())
    manifest = {
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfg_digest, "size": cfg_size},
        "layers": layers,
    }
    m_digest, m_size = _blob(layout, json.dumps(manifest, sort_keys=True).encode())
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": m_digest, "size": m_size,
         "annotations": {"org.opencontainers.image.ref.name": tag}}]}))
