"""QEMU guest agent (org.qemu.guest_agent.0) and QMP clients over unix sockets,
so tests can look inside the guest (docker inspect, lsblk, files, journal)."""

from __future__ import annotations

import base64
import json
import random
import socket
import time
from dataclasses import dataclass


class QgaError(RuntimeError):
    pass


@dataclass
class ExecResult:
    argv: list[str]
    exitcode: int
    out: str
    err: str

    def check(self) -> "ExecResult":
        if self.exitcode != 0:
            raise QgaError(f"guest command {self.argv} exited {self.exitcode}: {self.err.strip()[:2000]}")
        return self


class _JsonSocket:
    def __init__(self, path: str):
        self.path = path
        self.sock: socket.socket | None = None
        self.buf = b""

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock = None
        self.buf = b""

    def _connect(self, timeout: float) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(self.path)
        self.sock = s

    def send(self, obj: dict) -> None:
        assert self.sock is not None
        self.sock.sendall(json.dumps(obj).encode() + b"\n")

    def recv(self, deadline: float) -> dict:
        assert self.sock is not None
        while True:
            # 0xff is the guest-sync-delimited marker; drop it and anything before.
            if b"\xff" in self.buf:
                self.buf = self.buf[self.buf.rindex(b"\xff") + 1:]
            if b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if line.strip():
                    return json.loads(line)
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no reply on {self.path}")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"{self.path} closed")
            self.buf += chunk


class Qga(_JsonSocket):
    def _sync(self, timeout: float) -> None:
        self.close()
        self._connect(timeout)
        token = random.randrange(1, 2**31)
        self.send({"execute": "guest-sync-delimited", "arguments": {"id": token}})
        deadline = time.monotonic() + timeout
        while True:
            r = self.recv(deadline)
            if r.get("return") == token:
                return

    def command(self, name: str, args: dict | None = None, timeout: float = 30):
        if self.sock is None:
            self._sync(min(timeout, 10))
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        try:
            self.send(msg)
            r = self.recv(time.monotonic() + timeout)
        except (OSError, TimeoutError, ConnectionError):
            self.close()
            raise
        if "error" in r:
            raise QgaError(f"{name}: {r['error'].get('desc', r['error'])}")
        return r.get("return")

    def wait_ready(self, timeout: float) -> None:
        """Polls guest-ping until the agent in the guest answers."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                self._sync(5)
                self.command("guest-ping", timeout=5)
                return
            except (OSError, TimeoutError, ConnectionError, QgaError, ValueError) as e:
                last = e
                self.close()
                time.sleep(1)
        raise TimeoutError(f"guest agent not answering after {timeout}s ({last})")

    def exec(self, argv: list[str], timeout: float = 60, stdin: bytes | None = None,
             check: bool = False) -> ExecResult:
        args = {"path": argv[0], "arg": argv[1:], "capture-output": True}
        if stdin is not None:
            args["input-data"] = base64.b64encode(stdin).decode()
        pid = self.command("guest-exec", args)["pid"]
        deadline = time.monotonic() + timeout
        while True:
            st = self.command("guest-exec-status", {"pid": pid})
            if st.get("exited"):
                res = ExecResult(argv, st.get("exitcode", -1 if "signal" in st else 0),
                                 base64.b64decode(st.get("out-data", "")).decode(errors="replace"),
                                 base64.b64decode(st.get("err-data", "")).decode(errors="replace"))
                return res.check() if check else res
            if time.monotonic() > deadline:
                raise TimeoutError(f"guest command {argv} still running after {timeout}s")
            time.sleep(0.25)

    def sh(self, script: str, timeout: float = 60, check: bool = False) -> ExecResult:
        """Runs a shell snippet in the guest (test inspection only)."""
        return self.exec(["/bin/sh", "-c", script], timeout=timeout, check=check)

    def read_file(self, path: str, limit: int = 16 << 20) -> bytes:
        h = self.command("guest-file-open", {"path": path, "mode": "r"})
        try:
            data = b""
            while len(data) < limit:
                r = self.command("guest-file-read", {"handle": h, "count": 1 << 20})
                data += base64.b64decode(r.get("buf-b64", ""))
                if r.get("eof") or r.get("count", 0) == 0:
                    break
            return data
        finally:
            self.command("guest-file-close", {"handle": h})


class Qmp(_JsonSocket):
    def command(self, name: str, args: dict | None = None, timeout: float = 10):
        if self.sock is None:
            self._connect(timeout)
            deadline = time.monotonic() + timeout
            self.recv(deadline)  # greeting
            self.send({"execute": "qmp_capabilities"})
            self._reply(deadline)
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.send(msg)
        return self._reply(time.monotonic() + timeout)

    def _reply(self, deadline: float):
        while True:
            r = self.recv(deadline)
            if "event" in r:
                continue
            if "error" in r:
                raise QgaError(f"qmp: {r['error']}")
            return r.get("return")
