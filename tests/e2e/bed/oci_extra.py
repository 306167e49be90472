"""A larger test image (additive to oci.py): the usual busybox layer for `tag`
plus a layer holding `size` bytes of random, incompressible data, so a pull
takes long enough to interrupt. Pushed with skopeo like the others."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from . import oci
from .registry import REPO, Registry


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
    for raw in (oci._layer(tag), _random_layer(size)):
        diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
        digest, n = oci._blob(layout, gzip.compress(raw, compresslevel=1, mtime=0))
        layers.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest, "size": n})
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {"Cmd": oci.DEFAULT_CMD, "Env": ["PATH=/bin", f"COSMICAC_IMAGE_TAG={tag}"],
                   "Labels": {"org.cosmicac.e2e.tag": tag}},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [{"created_by": f"cosmicac e2e bed, tag {tag}"}, {"created_by": f"{size} random bytes"}],
    }
    cfg_digest, cfg_size = oci._blob(layout, json.dumps(config, sort_keys=True).encode())
    manifest = {
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfg_digest, "size": cfg_size},
        "layers": layers,
    }
    m_digest, m_size = oci._blob(layout, json.dumps(manifest, sort_keys=True).encode())
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": m_digest, "size": m_size,
         "annotations": {"org.opencontainers.image.ref.name": tag}}]}))


def push_big_image(reg: Registry, tag: str = "big", size: int = 64 << 20, repo: str = REPO) -> None:
    layout = reg.dir / f"oci-layout-{tag}"
    write_big_layout(layout, tag, size)
    r = subprocess.run(["skopeo", "copy", "--quiet", "--dest-tls-verify=false", "--format", "v2s2",
                        "--dest-creds", f"{reg.username}:{reg.token}",
                        f"oci:{layout}:{tag}", f"docker://{reg.addr}/{repo}:{tag}"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"skopeo push of {repo}:{tag} failed: {r.stderr.strip()}")
    if reg.status(f"/v2/{repo}/manifests/{tag}", auth=True) != 200:
        raise RuntimeError(f"{repo}:{tag} not in the registry after push")
    shutil.rmtree(layout, ignore_errors=True)
