"""Pure functions from what one boot left behind (journal JSON, docker events,
docker inspect, the registry's log, readiness events) to numbers on ONE time
axis: the guest's CLOCK_MONOTONIC in seconds (journal __MONOTONIC_TIMESTAMP).

Wall-clock stamps from inside the guest (docker events' timeNano, inspect's
Created/StartedAt, readiness `ts`) are put on that axis with the boot's
realtime-minus-monotonic offset, read off the journal entries themselves (both
stamps of an entry are taken at the same instant). Host wall-clock stamps (the
registry log, QEMU's start) need the host-to-guest clock offset measured over
QGA (`clock_offset_ns`)."""

from __future__ import annotations

import json
import re
import statistics
from datetime import datetime, timezone

# The VM bed (tests/e2e, which bench/run puts on sys.path) reads the readiness events.
from bed import events as bed_events

# systemd catalog ids (sd-messages.h)
MSG_UNIT_STARTING = "7d4958e842da4a758f6c1cdc7b36dcc5"
MSG_UNIT_STARTED = "39f53479d3a045ac8e11786248231fbf"  # also "Finished" of a oneshot
MSG_UNIT_FAILED = "be02cf6855d2428ba40df7e9d022f03d"
MSG_UNIT_RESULT = "7ad2d189f7e94e70a38c781354912448"   # "Failed with result ..."

DISK_UNIT = "cosmicac-bootstrap-disk.service"  # the agent's disk step, before dockerd (docker's store on the data disk)
AGENT_STEPS = ["config", "disk", "credentials", "docker", "login", "pull", "container", "ready"]


# ---- parsing ------------------------------------------------------------------
def parse_journal(text: str) -> list[dict]:
    """`journalctl -o json` output: one object per line; stamps to int µs."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        e["mono_us"] = int(e["__MONOTONIC_TIMESTAMP"])
        e["real_us"] = int(e["__REALTIME_TIMESTAMP"])
        msg = e.get("MESSAGE")
        if isinstance(msg, list):  # journald gives non-UTF-8 messages as byte arrays
            e["MESSAGE"] = bytes(msg).decode(errors="replace")
        out.append(e)
    out.sort(key=lambda e: e["mono_us"])
    return out


def realtime_offset_us(journal: list[dict]) -> int:
    """realtime - monotonic of this boot (median over the entries: robust to
    the one-off entry whose two stamps straddle a scheduling gap)."""
    if not journal:
        raise ValueError("empty journal: cannot relate wall clock to the boot's monotonic clock")
    return int(statistics.median(e["real_us"] - e["mono_us"] for e in journal))


def parse_events(text: str) -> list[dict]:
    """`docker events --format '{{json .}}'`, one per line, sorted by time."""
    ev = [json.loads(l) for l in text.splitlines() if l.strip().startswith("{")]
    ev.sort(key=lambda e: int(e.get("timeNano", 0)))
    return ev


def rfc3339_to_ns(s: str) -> int:
    """Docker's and the registry's RFC 3339 with up to nanoseconds, 'Z' or +hh:mm."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", s.strip())
    if not m:
        raise ValueError(f"not an RFC 3339 time: {s!r}")
    base = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
    tz = timezone.utc if m.group(3) == "Z" else datetime.strptime(m.group(3).replace(":", ""), "%z").tzinfo
    secs = int(base.replace(tzinfo=tz).timestamp())
    frac = (m.group(2) or "0")[:9].ljust(9, "0")
    return secs * 1_000_000_000 + int(frac)


def _kv(line: str, key: str) -> str | None:
    """A logrus key=value field, quoted ("..." with escapes) or bare."""
    m = re.search(rf'(?:^| ){re.escape(key)}=("(?:[^"\\]|\\.)*"|\S+)', line)
    if not m:
        return None
    v = m.group(1)
    return json.loads(v) if v.startswith('"') else v


def go_duration_ns(s: str) -> int:
    """Go's time.Duration.String() for sub-hour values (1.5s, 64.25ms, 2m3.1s)."""
    units = {"ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9}
    parts = re.findall(r"([\d.]+)(ns|µs|us|ms|s|m)", s)
    if not parts or "".join(n + u for n, u in parts) != s:
        raise ValueError(f"not a Go duration: {s!r}")
    return int(sum(float(n) * units[u] for n, u in parts))


def parse_registry_log(text: str) -> list[dict]:
    """docker-registry's app log -> one request per http.request.id, with its
    start and end on the host's wall clock (ns). A request shows up as
    "authorized request" (at its start), "response completed" [with error]
    (at its end, with its duration), or, for an unauthenticated one (the 401
    ping), only "error authorizing context" (at its start and end)."""
    by_id: dict[str, dict] = {}
    for line in text.splitlines():
        if not line.startswith('time="'):
            continue
        rid, uri, method = _kv(line, "http.request.id"), _kv(line, "http.request.uri"), _kv(line, "http.request.method")
        if not (rid and uri and method):
            continue
        t = rfc3339_to_ns(_kv(line, "time"))
        r = by_id.setdefault(rid, {"method": method, "uri": uri, "start_ns": t, "end_ns": t, "status": None})
        msg = _kv(line, "msg") or ""
        if msg.startswith("response completed"):
            dur = _kv(line, "http.response.duration")
            if dur:
                r["start_ns"] = min(r["start_ns"], t - go_duration_ns(dur))
            st = _kv(line, "http.response.status")
            r["status"] = int(st) if st and st.isdigit() else r["status"]
            r["end_ns"] = max(r["end_ns"], t)
        elif msg.startswith("error authorizing context"):
            r["status"] = 401
        r["start_ns"] = min(r["start_ns"], t)
    return sorted(by_id.values(), key=lambda r: r["start_ns"])


def parse_readiness(lines: list[str]) -> list[dict]:
    """Readiness-port lines that are v1 events, read by the VM bed's own reader
    (tests/e2e/bed/events.py; others are skipped, as a reader must)."""
    return [e for e in bed_events.parse(lines) if "mono_ms" in e]


# ---- journal look-ups -----------------------------------------------------------
def unit_message(journal: list[dict], unit: str, msg_id: str, first: bool = True) -> dict | None:
    hits = [e for e in journal if e.get("UNIT") == unit and e.get("MESSAGE_ID") == msg_id
            and e.get("_TRANSPORT") != "kernel"]
    if not hits:
        return None
    return hits[0] if first else hits[-1]


def unit_span(journal: list[dict], unit: str) -> dict:
    """Starting -> Started/Finished (or failed) of `unit`, in guest-monotonic seconds."""
    start = unit_message(journal, unit, MSG_UNIT_STARTING)
    done = unit_message(journal, unit, MSG_UNIT_STARTED)
    failed = unit_message(journal, unit, MSG_UNIT_FAILED)
    return {
        "start": start["mono_us"] / 1e6 if start else None,
        "ready": done["mono_us"] / 1e6 if done else None,
        "failed": failed["mono_us"] / 1e6 if failed else None,
    }


def unit_output(journal: list[dict], unit: str) -> list[dict]:
    return [e for e in journal if e.get("_SYSTEMD_UNIT") == unit]


def first_line(entries: list[dict], pattern: str, last: bool = False) -> float | None:
    rx = re.compile(pattern)
    hits = [e for e in entries if rx.search(str(e.get("MESSAGE", "")))]
    if not hits:
        return None
    return (hits[-1] if last else hits[0])["mono_us"] / 1e6


def kernel_mount(journal: list[dict], dev_prefix: str = "vd[b-z]") -> float | None:
    """The kernel's 'EXT4-fs (vdb1): mounted filesystem' line for the data disk."""
    kern = [e for e in journal if e.get("_TRANSPORT") == "kernel"]
    return first_line(kern, rf"EXT4-fs \({dev_prefix}\d*\): mounted filesystem")


# ---- docker -----------------------------------------------------------------------
def event_time(events: list[dict], typ: str, action: str, name: str | None = None,
               last: bool = False) -> int | None:
    """timeNano (guest wall clock) of the first/last matching event."""
    hits = []
    for e in events:
        if e.get("Type") != typ or e.get("Action", e.get("status")) != action:
            continue
        if name is not None:
            attrs = (e.get("Actor") or {}).get("Attributes") or {}
            if attrs.get("name") != name and e.get("id") != name:
                continue
        hits.append(int(e["timeNano"]))
    if not hits:
        return None
    return hits[-1] if last else hits[0]


def pull_window_host_ns(reqs: list[dict], repo: str, tag: str, since_ns: int = 0) -> tuple[int, int] | None:
    """The pull as the registry saw it: from the /v2/ ping that opens it (or its
    first manifest request) to the end of its last request. Login pings /v2/ too,
    so the pull starts at the first MANIFEST request for the tag; the
    unauthenticated ping (401) right before it (< 1 s) belongs to the pull."""
    reqs = [r for r in reqs if r["start_ns"] >= since_ns]
    man = [i for i, r in enumerate(reqs)
           if r["uri"] == f"/v2/{repo}/manifests/{tag}" and r["method"] in ("GET", "HEAD")]
    if not man:
        return None
    i0 = man[0]
    start = reqs[i0]["start_ns"]
    if i0 > 0:
        r = reqs[i0 - 1]
        if r["uri"] == "/v2/" and r["status"] == 401 and start - r["start_ns"] < 1_000_000_000:
            start = r["start_ns"]
    end = max(r["end_ns"] for r in reqs[i0:] if r["uri"].startswith(f"/v2/{repo}/"))
    return start, end


# ---- one boot ------------------------------------------------------------------------
def boot_metrics(raw: dict, side: str) -> dict:
    """Everything we report for one boot. `raw` is what vmrun.collect() saved:
    journal, events, inspect, registry log slice, readiness lines, clock offset,
    QEMU start on the host's wall clock, unit name, container name, image tag."""
    unit, name = raw["unit"], raw["container"]
    journal = parse_journal(raw["journal"])
    off_us = realtime_offset_us(journal)

    def g_real_ns_to_mono(ns: int | None) -> float | None:  # guest wall clock -> guest mono s
        return None if ns is None else (ns / 1e3 - off_us) / 1e6

    def h_real_ns_to_mono(ns: int | None) -> float | None:  # host wall clock -> guest mono s
        return None if ns is None else g_real_ns_to_mono(ns + raw["clock_offset_ns"])

    span = unit_span(journal, unit)
    disk_unit = unit_span(journal, DISK_UNIT)
    docker = unit_span(journal, "docker.service")
    containerd = unit_span(journal, "containerd.service")
    multi_user = unit_message(journal, "multi-user.target", MSG_UNIT_STARTED)
    events = parse_events(raw["events"])
    c_create = g_real_ns_to_mono(event_time(events, "container", "create", name))
    c_start = g_real_ns_to_mono(event_time(events, "container", "start", name))
    pull_end = g_real_ns_to_mono(event_time(events, "image", "pull", last=True))
    inspect = json.loads(raw["inspect"])[0] if raw.get("inspect") else None
    created = started_at = None
    if inspect:
        # Created only counts when dockerd created the container in this boot: on a
        # second boot the container is an earlier boot's (dockerd restarted it: no
        # create event); so was a re-created VM's before its disk unit dropped the
        # earlier VM's containers.
        if c_create is not None:
            created = g_real_ns_to_mono(rfc3339_to_ns(inspect["Created"]))
        started_at = g_real_ns_to_mono(rfc3339_to_ns(inspect["State"]["StartedAt"]))
    reqs = parse_registry_log(raw.get("registry_log", ""))
    pw = pull_window_host_ns(reqs, raw["repo"], raw["tag"])
    pull_start = h_real_ns_to_mono(pw[0]) if pw else None
    reg_end = h_real_ns_to_mono(pw[1]) if pw else None
    qemu_start = h_real_ns_to_mono(raw["qemu_start_host_ns"])

    m: dict = {
        "side": side, "boot": raw["boot"], "unit_start": span["start"], "unit_ready": span["ready"],
        "unit_failed": span["failed"], "docker_start": docker["start"], "docker_ready": docker["ready"],
        "containerd_ready": containerd["ready"], "multi_user": multi_user["mono_us"] / 1e6 if multi_user else None,
        "container_create_event": c_create, "container_start_event": c_start,
        "container_created": created, "container_started_at": started_at,
        "pull_start": pull_start, "pull_registry_end": reg_end, "pull_event": pull_end,
        "qemu_start": qemu_start, "clock_offset_rtt_ms": raw.get("clock_offset_rtt_ms"),
        "memory": raw.get("memory", {}),
        "disk_unit_start": disk_unit["start"], "disk_unit_ready": disk_unit["ready"],
        # what this boot asked of the registry for the image (manifests and blobs; pings and login not counted)
        "image_requests": sum(1 for r in reqs if r["uri"].startswith(f"/v2/{raw['repo']}/")),
    }
    # The container's running moment: dockerd's own "start" event on a cold
    # boot; a second boot restarts it from dockerd's restart policy (also "start").
    running = c_start if c_start is not None else started_at
    m["container_running"] = running
    s = span["start"]
    if s is not None and running is not None and raw["boot"] == 1:
        m["cold_unit_to_running_s"] = running - s
    if qemu_start is not None and running is not None and raw["boot"] == 1:
        m["cold_qemu_to_running_s"] = running - qemu_start
    # The whole VM's time to ready, QEMU's start to the unit's ready: what a
    # re-created VM is compared on: the agent's disk unit ran before
    # docker.service, outside the span (and, before the disk unit dropped an
    # earlier VM's containers, dockerd restarted the kept one before the unit).
    if qemu_start is not None and span["ready"] is not None:
        m["qemu_to_ready_s"] = span["ready"] - qemu_start
    if s is not None and span["ready"] is not None:
        m["unit_start_to_ready_s"] = span["ready"] - s
        if docker["ready"] is not None:
            m["ready_after_dockerd_s"] = span["ready"] - max(docker["ready"], s)
    # dockerd's own work: the pull (registry's first request to dockerd's pull
    # event) plus create+start (inspect's Created, set as create begins, to the
    # start event). The rest of unit start -> running is what the caller added.
    if raw["boot"] == 1 and None not in (pull_start, pull_end, created, running, s):
        pull_s = max(0.0, pull_end - pull_start)
        cs_s = max(0.0, running - created)
        m["dockerd_pull_s"] = pull_s
        m["dockerd_create_start_s"] = cs_s
        m["overhead_s"] = (running - s) - pull_s - cs_s
    readiness_metrics(m, raw, reqs, started_at, g_real_ns_to_mono)
    m["phases"] = agent_phases(raw, off_us) if side == "agent" else script_phases(journal, unit, m)
    m["dockerd_rows"] = dockerd_rows(m)
    return m


def first_serving(log: str | None, since_mono: float | None, to_mono) -> float | None:
    """The container's first `serving` line (its /health first answering 200)
    at or after this boot's start of it, from dockerd's log timestamps; None
    when it never printed one in this boot."""
    for line in (log or "").splitlines():
        stamp, _, text = line.partition(" ")
        if text.strip() != "serving":
            continue
        t = to_mono(rfc3339_to_ns(stamp))
        if since_mono is None or t >= since_mono - 0.001:
            return t
    return None


def readiness_metrics(m: dict, raw: dict, reqs: list[dict], started_at: float | None, to_mono) -> None:
    """Issue 41's rows: ready against the first good answer, P2 against the
    later of dockerd and that answer, a re-created VM against dockerd's
    create+start alone, and the overhead as a share of dockerd's work. Also
    issue 42's: a restart of the same VM (boot 2, what a VirtualMachine's
    restart is) asks the registry nothing and keeps its root disk."""
    s, ready = m["unit_start"], m["unit_ready"]
    good = first_serving(raw.get("container_log"), started_at, to_mono)
    m["first_good_answer"] = good
    if ready is not None and good is not None:
        m["ready_after_good_answer_s"] = ready - good
        if m.get("docker_ready") is not None and raw["boot"] == 2:
            m["ready_after_dockerd_and_good_s"] = ready - max(m["docker_ready"], good, s or 0.0)
    created, running = m.get("container_created"), m.get("container_running")
    if raw["boot"] == 3 and None not in (s, created, running) and running > created:
        m["recreate_unit_to_running_s"] = running - s
        m["recreate_create_start_s"] = running - created
        m["recreate_running_over_create_start"] = (running - s) / (running - created)
    if m.get("overhead_s") is not None:
        work = m["dockerd_pull_s"] + m["dockerd_create_start_s"]
        m["overhead_share"] = m["overhead_s"] / work if work > 0 else None
    # every request of the boot, pings and logins included: "no registry contact"
    m["registry_requests_all"] = len(reqs)
    m["root_disk_inode"] = (raw.get("root_disk") or {}).get("inode")
    m["machine_id"] = raw.get("machine_id")


def agent_phases(raw: dict, off_us: int) -> list[dict]:
    """Each step as a bar, from the readiness events: started -> done/failed/
    skipped. Placed on the guest-monotonic axis with the events' `ts` (guest
    wall clock) minus `mono_ms`, i.e. the agent's own start."""
    ev = parse_readiness(raw.get("readiness", []))
    boot_ids = [e.get("boot_id") for e in ev if e.get("boot_id")]
    if raw.get("boot_id"):
        ev = [e for e in ev if e.get("boot_id") == raw["boot_id"]]
    elif boot_ids:
        ev = [e for e in ev if e.get("boot_id") == boot_ids[-1]]
    if not ev:
        return []
    starts = [rfc3339_to_ns(e["ts"]) / 1e3 - e["mono_ms"] * 1e3 for e in ev if "ts" in e]
    t0 = (statistics.median(starts) - off_us) / 1e6  # agent start, guest mono s
    rows, open_ = [], {}
    for e in ev:
        step, st = e.get("step"), e.get("status")
        if step not in AGENT_STEPS or st is None:
            continue
        t = t0 + e["mono_ms"] / 1e3
        if st == "started":
            open_[step] = t
        elif st in ("done", "failed", "skipped"):
            begin = open_.pop(step, None)
            if begin is None:
                begin = t - e.get("duration_ms", 0) / 1e3
            rows.append({"label": step, "start": begin, "end": t, "status": st})
    for step, begin in open_.items():
        rows.append({"label": step, "start": begin, "end": begin, "status": "unfinished"})
    rows.sort(key=lambda r: AGENT_STEPS.index(r["label"]))
    return [{"label": "agent process", "start": t0, "end": max((r["end"] for r in rows), default=t0),
             "status": "process"}] + rows


def script_phases(journal: list[dict], unit: str, m: dict) -> list[dict]:
    """The script writes no events: its phases are cut from the journal (its
    own output lines, the kernel's mount line) and dockerd's events. It runs
    strictly in order, so each phase ends where the next marker begins."""
    out = unit_output(journal, unit)
    marks = [
        ("systemctl enable --now docker, find disk, parted", m["unit_start"]),
        ("mkfs.ext4", first_line(out, r"^mke2fs|Discarding device blocks|Creating filesystem")),
        ("mount -a", first_line(out, r"Writing superblocks and filesystem accounting information", last=True)),
        ("ISO mount + docker login", kernel_mount(journal)),
        ("docker pull", first_line(out, r"Login Succeeded")),
        ("logout, umount, docker ps", m["pull_event"]),
        ("docker run (create+start)", m["container_created"]),
        ("done", m["container_start_event"]),
        (None, m["unit_ready"]),
    ]
    marks = [(l, t) for l, t in marks if t is not None]
    rows = []
    for (label, t), (_, t_next) in zip(marks, marks[1:]):
        if label is not None and t_next >= t:
            rows.append({"label": label, "start": t, "end": t_next, "status": "done"})
    return rows


def dockerd_rows(m: dict) -> list[dict]:
    rows = []
    if m.get("disk_unit_start") is not None and m.get("disk_unit_ready") is not None:
        rows.append({"label": "disk unit (before dockerd)", "start": m["disk_unit_start"],
                     "end": m["disk_unit_ready"], "status": "done"})
    if m.get("docker_start") is not None and m.get("docker_ready") is not None:
        rows.append({"label": "dockerd starting", "start": m["docker_start"], "end": m["docker_ready"],
                     "status": "dockerd"})
    if m.get("pull_start") is not None and m.get("pull_event") is not None:
        rows.append({"label": "dockerd: pull", "start": m["pull_start"], "end": m["pull_event"],
                     "status": "dockerd"})
    if m.get("container_created") is not None and m.get("container_running") is not None:
        rows.append({"label": "dockerd: create+start", "start": m["container_created"],
                     "end": m["container_running"], "status": "dockerd"})
    # the container's own start (its model loading) until /health first answers 200
    if m.get("container_running") is not None and m.get("first_good_answer") is not None:
        rows.append({"label": "container: running → /health 200", "start": m["container_running"],
                     "end": m["first_good_answer"], "status": "dockerd"})
    return rows
