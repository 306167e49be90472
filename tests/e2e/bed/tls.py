"""A test CA and one server certificate signed by it (openssl, on the host):
what an operator gives a mirror (the Secret's tls.crt/tls.key) and its VMs
(the profile's registryMirrorCA, which becomes dockerd's
/etc/docker/certs.d/<host:port>/ca.crt)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ServerCert:
    ca: Path    # PEM, the CA certificate
    cert: Path  # PEM, the server's certificate
    key: Path   # PEM, the server's key


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def server_cert(directory: Path, ips: tuple[str, ...], days: int = 2) -> ServerCert:
    """A fresh CA, and a certificate for `ips` (IP subjectAltNames) signed by it."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca = directory / "ca.key", directory / "ca.crt"
    key, csr, cert = directory / "tls.key", directory / "tls.csr", directory / "tls.crt"
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", str(ca_key), "-out", str(ca), "-days", str(days), "-subj", "/CN=cosmicac-e2e mirror CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", str(key), "-out", str(csr), "-subj", "/CN=cosmicac-e2e mirror")
    ext = directory / "ext.cnf"
    ext.write_text("subjectAltName=" + ",".join(f"IP:{ip}" for ip in ips) + "\n"
                   "extendedKeyUsage=serverAuth\n")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
             "-out", str(cert), "-days", str(days), "-extfile", str(ext))
    return ServerCert(ca=ca, cert=cert, key=key)
