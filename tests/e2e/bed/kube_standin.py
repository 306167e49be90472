"""`cosmicac-vmi wait NAME` against apiserver-standin (tests/unit/host/
apiserver_standin_main.cpp), which serves a VMI whose launcher pod's
`guest-console-log` log is THIS VM's serial console file as it grows (what
KubeVirt would stream from the same ttyS0). No kube-apiserver runs here; the
host tool, its log follower and its console reader are the real ones."""

import os
import subprocess
import threading
import time
from pathlib import Path

from bed.delivery import vmi_tool
from bed.scenario import REPO_DIR

TOKEN = "e2e-standin-token"


def standin_tool() -> Path:
    """$COSMICAC_APISERVER_STANDIN, else the newest build*/tests/unit/host/apiserver-standin.
    A missing tool FAILS the scenario."""
    env = os.environ.get("COSMICAC_APISERVER_STANDIN")
    if env:
        return Path(env)
    builds = sorted(REPO_DIR.glob("build*/tests/unit/host/apiserver-standin"), key=lambda p: p.stat().st_mtime,
                    reverse=True)
    if not builds:
        raise AssertionError("apiserver-standin not found: build it (cmake --build <dir> --target apiserver-standin) "
                             "or set COSMICAC_APISERVER_STANDIN")
    return builds[0]


class KubeWait:
    """Starts the stand-in and `cosmicac-vmi wait NAME` at once; records the
    tool's output lines, its exit, and when the console file first showed the
    agent's final phase (for the "within 10 s of failed" check)."""

    def __init__(self, t, vm, name: str = "inference", ns: str = "cosmic-ac", timeout: str = "20m"):
        self.console = Path(vm.console_log)
        self.standin = subprocess.Popen([str(standin_tool()), "--vmi", name, "--namespace", ns,
                                         "--console-log", str(self.console), "--token", TOKEN],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        url = self.standin.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise AssertionError(f"apiserver-standin did not start (said {url!r})")
        kc = t.work / "standin-kubeconfig"
        kc.write_text("current-context: t\ncontexts:\n- name: t\n  context: {cluster: c, user: u}\n"
                      f"clusters:\n- name: c\n  cluster: {{server: '{url}'}}\n"
                      f"users:\n- name: u\n  user: {{token: {TOKEN}}}\n")
        self.argv = [str(vmi_tool()), "wait", name, "-n", ns, "--kubeconfig", str(kc), "--timeout", timeout,
                     "--interval", "2s"]
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     errors="replace")
        self.lines: list[tuple[float, str]] = []
        self.stderr = ""
        self.exited_at: float | None = None
        self.console_final_at: float | None = None
        self._stop = False
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()
        threading.Thread(target=self._watch_console, daemon=True).start()
        t.cleanups.append(self.stop)

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append((time.monotonic() - self.started, line.rstrip("\n")))

    def _read_err(self) -> None:
        self.stderr = self.proc.stderr.read()
        self.proc.wait()
        self.exited_at = time.monotonic()

    def _watch_console(self) -> None:
        while not self._stop and self.console_final_at is None:
            try:
                text = self.console.read_bytes()
            except FileNotFoundError:
                text = b""
            for line in text.split(b"\n"):
                if line.startswith(b"cosmicac-bootstrap v1 ") and (b'"phase":"failed"' in line or b'"phase":"ready"' in line):
                    self.console_final_at = time.monotonic()
                    break
            time.sleep(0.2)

    def finish(self, timeout: float) -> int:
        """The tool's exit status (waits for it)."""
        rc = self.proc.wait(timeout)
        deadline = time.monotonic() + 5
        while self.exited_at is None and time.monotonic() < deadline:
            time.sleep(0.05)
        return rc

    def output(self) -> str:
        return "\n".join(l for _, l in self.lines)

    def transcript(self) -> str:
        """What an operator saw: stdout, then stderr (prefixed `cosmicac-vmi:`)."""
        return "$ cosmicac-vmi wait " + " ".join(self.argv[2:5]) + "\n" + self.output() + "\n" + self.stderr

    def stop(self) -> None:
        self._stop = True
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        if self.standin.poll() is None:
            self.standin.stdin.close()
            try:
                self.standin.wait(10)
            except subprocess.TimeoutExpired:
                self.standin.terminate()
                self.standin.wait(10)
