"""The benchmark's arithmetic on a hand-made boot (no VM): clocks are related
correctly and each number is the interval it claims to be.
Run: python3 -m unittest discover -s bench/tests"""

import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "e2e"))  # bed/, as bench/run does

from benchlib import analyze  # noqa: E402

BOOT_REAL_US = 1_800_000_000_000_000  # guest wall clock at guest mono 0
OFFSET_NS = 250_000_000               # guest wall clock runs 0.25 s ahead of the host's


def jentry(mono_s, **fields):
    mono_us = int(mono_s * 1e6)
    return json.dumps(dict(fields, __MONOTONIC_TIMESTAMP=str(mono_us),
                           __REALTIME_TIMESTAMP=str(BOOT_REAL_US + mono_us)))


def g_ns(mono_s):  # guest wall clock (ns) at a guest mono time
    return BOOT_REAL_US * 1000 + int(mono_s * 1e9)


def rfc(ns):
    from datetime import datetime, timezone
    s, frac = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(s, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:09d}Z"


_ids = iter(range(1000))


def reg_line(host_end_ns, uri, dur="10ms", status=200):
    rid = f"req-{next(_ids)}"
    if status == 401:  # the registry logs an unauthenticated ping only as an auth warning
        return (f'time="{rfc(host_end_ns)}" level=warning msg="error authorizing context: basic '
                f'authentication challenge" http.request.id={rid} http.request.method=GET '
                f'http.request.uri=/v2/')
    q = f'"{uri}"' if ":" in uri else uri
    return (f'time="{rfc(host_end_ns)}" level=info msg="response completed" go.version=go1.19.8 '
            f'http.request.id={rid} http.request.method=GET http.request.uri={q} '
            f'http.response.duration={dur} http.response.status={status}')


def host_ns(mono_s):  # host wall clock at a guest mono time
    return g_ns(mono_s) - OFFSET_NS


class AnalyzeTest(unittest.TestCase):
    def raw(self, side="agent"):
        unit = "cosmicac-bootstrap.service" if side == "agent" else "docker-bootstrap.service"
        j = [jentry(40.0, UNIT="docker.service", MESSAGE_ID=analyze.MSG_UNIT_STARTING),
             jentry(50.0, UNIT="docker.service", MESSAGE_ID=analyze.MSG_UNIT_STARTED),
             jentry(51.0, UNIT=unit, MESSAGE_ID=analyze.MSG_UNIT_STARTING),
             jentry(52.0, _TRANSPORT="kernel", MESSAGE="EXT4-fs (vdb1): mounted filesystem with ordered data mode"),
             jentry(53.0, _SYSTEMD_UNIT=unit, MESSAGE="Login Succeeded"),
             jentry(61.0, UNIT=unit, MESSAGE_ID=analyze.MSG_UNIT_STARTED)]
        ev = [{"Type": "image", "Action": "pull", "id": "x:v1", "timeNano": g_ns(58.0)},
              {"Type": "container", "Action": "create", "Actor": {"Attributes": {"name": "inference"}},
               "timeNano": g_ns(59.0)},
              {"Type": "container", "Action": "start", "Actor": {"Attributes": {"name": "inference"}},
               "timeNano": g_ns(60.0)}]
        inspect = [{"Created": rfc(g_ns(58.5)), "State": {"Running": True, "StartedAt": rfc(g_ns(60.0))}}]
        reg = "\n".join([
            reg_line(host_ns(53.0), "/v2/", "5ms", 401),                      # login's ping
            reg_line(host_ns(53.1), "/v2/", "5ms", 200),                      # login's authenticated ping
            reg_line(host_ns(54.0), "/v2/", "10ms", 401),                     # the pull's ping
            reg_line(host_ns(54.5), "/v2/cosmicac/inference/manifests/v1", "100ms"),
            reg_line(host_ns(57.5), "/v2/cosmicac/inference/blobs/sha256:aa", "2.5s"),
        ])
        readiness = [json.dumps({"v": 1, "seq": i, "boot_id": "b1", "ts": rfc(g_ns(51.2 + ms / 1000))[:23] + "Z",
                                 "mono_ms": ms, "phase": "running", "step": step, "status": st})
                     for i, (ms, step, st) in enumerate([(0, "config", "started"), (5, "config", "done"),
                                                         (10, "disk", "started"), (900, "disk", "done"),
                                                         (3000, "pull", "started"), (6800, "pull", "done")])]
        return {"side": side, "boot": 1, "unit": unit, "container": "inference", "repo": "cosmicac/inference",
                "tag": "v1", "qemu_start_host_ns": host_ns(-3.0), "clock_offset_ns": OFFSET_NS,
                "journal": "\n".join(j), "events": "\n".join(json.dumps(e) for e in ev),
                "inspect": json.dumps(inspect), "registry_log": reg, "readiness": readiness, "boot_id": "b1"}

    def test_cold_numbers(self):
        m = analyze.boot_metrics(self.raw(), "agent")
        self.assertAlmostEqual(m["cold_unit_to_running_s"], 9.0, places=3)
        self.assertAlmostEqual(m["cold_qemu_to_running_s"], 63.0, places=3)
        self.assertAlmostEqual(m["pull_start"], 54.0, places=3)          # the ping before the manifest
        self.assertAlmostEqual(m["dockerd_pull_s"], 4.0, places=3)       # 54.0 -> pull event 58.0
        self.assertAlmostEqual(m["dockerd_create_start_s"], 1.5, places=3)
        self.assertAlmostEqual(m["overhead_s"], 9.0 - 4.0 - 1.5, places=3)
        self.assertAlmostEqual(m["unit_start_to_ready_s"], 10.0, places=3)
        self.assertAlmostEqual(m["ready_after_dockerd_s"], 10.0, places=3)

    def test_agent_phases_on_guest_axis(self):
        m = analyze.boot_metrics(self.raw(), "agent")
        rows = {r["label"]: r for r in m["phases"]}
        self.assertAlmostEqual(rows["agent process"]["start"], 51.2, places=2)
        self.assertAlmostEqual(rows["disk"]["start"], 51.21, places=2)
        self.assertAlmostEqual(rows["disk"]["end"], 52.1, places=2)
        self.assertAlmostEqual(rows["pull"]["end"] - rows["pull"]["start"], 3.8, places=2)

    def test_script_phases_are_consecutive(self):
        m = analyze.boot_metrics(self.raw("script"), "script")
        labels = [r["label"] for r in m["phases"]]
        self.assertEqual(labels, ["systemctl enable --now docker, find disk, parted",
                                  "ISO mount + docker login", "docker pull", "logout, umount, docker ps",
                                  "docker run (create+start)", "done"])
        for a, b in zip(m["phases"], m["phases"][1:]):
            self.assertEqual(a["end"], b["start"])

    def test_recreated_vm(self):
        """Boot 3 (a new root disk, the kept data disk): the agent's disk unit ran
        before dockerd, the container was restarted by dockerd from the data disk's
        store before the unit started, and the registry saw nothing of the image."""
        raw = self.raw()
        raw["boot"] = 3
        unit = raw["unit"]
        raw["journal"] = "\n".join([
            jentry(30.0, UNIT=analyze.DISK_UNIT, MESSAGE_ID=analyze.MSG_UNIT_STARTING),
            jentry(31.5, UNIT=analyze.DISK_UNIT, MESSAGE_ID=analyze.MSG_UNIT_STARTED),
            jentry(40.0, UNIT="docker.service", MESSAGE_ID=analyze.MSG_UNIT_STARTING),
            jentry(50.0, UNIT="docker.service", MESSAGE_ID=analyze.MSG_UNIT_STARTED),
            jentry(51.0, UNIT=unit, MESSAGE_ID=analyze.MSG_UNIT_STARTING),
            jentry(52.0, UNIT=unit, MESSAGE_ID=analyze.MSG_UNIT_STARTED)])
        raw["events"] = json.dumps({"Type": "container", "Action": "start",
                                    "Actor": {"Attributes": {"name": "inference"}}, "timeNano": g_ns(49.5)})
        raw["registry_log"] = ""
        raw["inspect"] = json.dumps([{"Created": rfc(g_ns(-600.0)), "State": {"Running": True,
                                                                           "StartedAt": rfc(g_ns(49.5))}}])
        m = analyze.boot_metrics(raw, "agent")
        self.assertAlmostEqual(m["qemu_to_ready_s"], 55.0, places=3)  # QEMU at -3.0, ready at 52.0
        self.assertAlmostEqual(m["unit_start_to_ready_s"], 1.0, places=3)
        self.assertEqual(m["image_requests"], 0)
        self.assertNotIn("cold_unit_to_running_s", m)
        # the container is boot 1's (inspect's Created is from then): no create+start drawn for this boot
        self.assertIsNone(m["container_created"])
        self.assertEqual([r for r in m["dockerd_rows"] if "create" in r["label"]], [])
        disk = [r for r in m["dockerd_rows"] if r["label"].startswith("disk unit")]
        self.assertEqual(len(disk), 1)
        self.assertAlmostEqual(disk[0]["end"] - disk[0]["start"], 1.5, places=3)

    def test_recreate_over_cold_is_per_pair(self):
        from benchlib import summary
        ms = [{"side": "agent", "boot": 1, "pair": 1, "qemu_to_ready_s": 100.0},
              {"side": "agent", "boot": 3, "pair": 1, "qemu_to_ready_s": 40.0},
              {"side": "agent", "boot": 1, "pair": 2, "qemu_to_ready_s": 200.0},
              {"side": "agent", "boot": 3, "pair": 2, "qemu_to_ready_s": 60.0},
              {"side": "agent", "boot": 3, "pair": 3, "qemu_to_ready_s": 10.0},  # its cold boot was left out
              {"side": "script", "boot": 1, "pair": 1, "qemu_to_ready_s": 300.0, "image_requests": 5},
              {"side": "script", "boot": 3, "pair": 1, "qemu_to_ready_s": 270.0, "image_requests": 4}]
        out = summary.collect(ms)
        self.assertEqual(out["recreate_over_cold"]["agent"]["n"], 2)
        self.assertAlmostEqual(out["recreate_over_cold"]["agent"]["median"], (0.4 + 0.3) / 2)
        self.assertAlmostEqual(out["recreate_over_cold"]["script"]["median"], 0.9)
        self.assertEqual(out["recreate_qemu_to_ready_s"]["agent"]["n"], 3)
        self.assertEqual(out["recreate_image_requests"]["script"]["median"], 4)
        self.assertIn("re-created ÷ cold", summary.table({"summary": out}))

    def test_ready_against_first_good_answer(self):
        """Issue 41: ready is measured against the container's first `serving`
        line of this start (an earlier start's line is not it), and the
        overhead is also a share of dockerd's work."""
        raw = self.raw()
        raw["container_log"] = "\n".join([f"{rfc(g_ns(20.0))} serving",   # an earlier start's
                                          f"{rfc(g_ns(60.1))} started",
                                          f"{rfc(g_ns(60.8))} serving"])
        m = analyze.boot_metrics(raw, "agent")
        self.assertAlmostEqual(m["first_good_answer"], 60.8, places=3)
        self.assertAlmostEqual(m["ready_after_good_answer_s"], 61.0 - 60.8, places=3)
        self.assertAlmostEqual(m["overhead_share"], (9.0 - 4.0 - 1.5) / (4.0 + 1.5), places=3)
        self.assertNotIn("ready_after_dockerd_and_good_s", m)  # P2 is a second boot's
        raw["container_log"] = f"{rfc(g_ns(20.0))} serving"
        self.assertNotIn("ready_after_good_answer_s", analyze.boot_metrics(raw, "agent"))

    def test_second_boot_p2_and_root_disk(self):
        """P2: ready after the later of dockerd answering (50.0) and the first
        good answer; a restart of the same VM asks the registry nothing."""
        raw = self.raw()
        raw["boot"] = 2
        raw["events"] = ""
        raw["registry_log"] = ""
        raw["container_log"] = f"{rfc(g_ns(60.1))} started\n{rfc(g_ns(60.9))} serving"
        raw["root_disk"], raw["machine_id"] = {"path": "/x/agent-root.qcow2", "inode": 7}, "m1"
        m = analyze.boot_metrics(raw, "agent")
        self.assertAlmostEqual(m["ready_after_dockerd_and_good_s"], 61.0 - 60.9, places=3)
        self.assertEqual(m["registry_requests_all"], 0)
        from benchlib import summary
        base = {"side": "agent", "pair": 1}
        out = summary.collect([dict(base, boot=1, root_disk_inode=7, machine_id="m1"), dict(m, pair=1),
                               dict(base, boot=3, root_disk_inode=9, machine_id="m2")])
        self.assertEqual(out["second_root_kept"]["agent"]["min"], 1.0)
        self.assertEqual(out["recreate_root_new"]["agent"]["min"], 1.0)
        self.assertAlmostEqual(out["p2_s"]["agent"]["median"], 0.1, places=3)
        out = summary.collect([dict(base, boot=1, root_disk_inode=7, machine_id="m1"),
                               dict(m, pair=1, machine_id="m3")])
        self.assertEqual(out["second_root_kept"]["agent"]["min"], 0.0)

    def test_recreated_vm_against_create_start(self):
        """A re-created VM's unit start -> running over dockerd's create+start of its new container."""
        raw = self.raw()
        raw["boot"] = 3
        m = analyze.boot_metrics(raw, "agent")
        self.assertAlmostEqual(m["recreate_unit_to_running_s"], 9.0, places=3)   # 51.0 -> 60.0
        self.assertAlmostEqual(m["recreate_create_start_s"], 1.5, places=3)      # Created 58.5 -> 60.0
        self.assertAlmostEqual(m["recreate_running_over_create_start"], 6.0, places=3)

    def test_go_durations(self):
        self.assertEqual(analyze.go_duration_ns("64.25ms"), 64_250_000)
        self.assertEqual(analyze.go_duration_ns("1m2.5s"), 62_500_000_000)
        self.assertEqual(analyze.go_duration_ns("812µs"), 812_000)

    def test_rfc3339_offsets(self):
        self.assertEqual(analyze.rfc3339_to_ns("1970-01-01T00:00:01.5Z"), 1_500_000_000)
        self.assertEqual(analyze.rfc3339_to_ns("1970-01-01T01:00:01+01:00"), 1_000_000_000)


if __name__ == "__main__":
    unittest.main()
