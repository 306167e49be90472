"""The rollout benchmark's arithmetic (bench/host/rollout-requests): the tool's requests from
kube-apiserver's audit log, split into what `wait` does anyway (its watches, the lists that start
them, the console-log streams) and the rest; and the time the tool adds to each batch beyond its
VMs' own time to ready."""

import datetime
import json

# What `cosmicac-vmi wait` follows (host/verbs/wait/): a list, then a watch, of each of these (the
# VirtualMachines too, for VM jobs: a VMI that is gone may come back), and each job's console log
# (pods/log). The rollout's own look() lists VMs and VMIs too: counted here with wait's (two
# requests per rollout).
WAIT_KINDS = {"virtualmachines", "virtualmachineinstances", "datavolumes", "pods"}


def parse_time(s):
    """An audit timestamp (RFC 3339, microseconds, Z) as seconds since the epoch."""
    return datetime.datetime.strptime(s.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def requests(audit_lines, user):
    """`user`'s requests, once each by auditID (a watch or a followed log may still be open: its
    ResponseStarted event counts): [{verb, resource, name, received}] in the order first seen."""
    seen = {}
    for line in audit_lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if (ev.get("user") or {}).get("username") != user or ev.get("auditID") in seen:
            continue
        ref = ev.get("objectRef") or {}
        resource = ref.get("resource", "") + ("/" + ref["subresource"] if ref.get("subresource") else "")
        seen[ev.get("auditID")] = {"verb": ev.get("verb", ""), "resource": resource, "name": ref.get("name", ""),
                                   "received": parse_time(ev["requestReceivedTimestamp"])
                                   if ev.get("requestReceivedTimestamp") else None}
    return list(seen.values())


def is_waits(req):
    """True for a request `wait` makes whatever the rollout around it does."""
    if req["resource"] == "pods/log":
        return True
    return req["verb"] in ("list", "watch") and req["resource"] in WAIT_KINDS


def split(reqs):
    """(wait's, the rest, {"VERB resource": count} of the rest)."""
    waits = [r for r in reqs if is_waits(r)]
    rest = [r for r in reqs if not is_waits(r)]
    kinds = {}
    for r in rest:
        key = f"{r['verb']} {r['resource']}"
        kinds[key] = kinds.get(key, 0) + 1
    return waits, rest, kinds


def restarts(reqs):
    """{job: time its VMI was deleted by the tool} (the restart), the first delete of each."""
    out = {}
    for r in reqs:
        if r["verb"] == "delete" and r["resource"] == "virtualmachineinstances" and r["received"] is not None:
            out.setdefault(r["name"], r["received"])
    return out


def batches(events):
    """[(time, event)] of rollout -o json lines -> [{batch, jobs, started, done}] in batch order."""
    out = {}
    for t, ev in events:
        if ev.get("event") != "batch" or "batch" not in ev:
            continue
        b = out.setdefault(ev["batch"], {"batch": ev["batch"], "jobs": [], "started": None, "done": None})
        if ev.get("state") == "started":
            b["jobs"], b["started"] = list(ev.get("jobs") or []), t
        elif ev.get("state") == "done":
            b["done"] = t
    return [out[k] for k in sorted(out)]


def added_per_batch(bs, restarted_at, ready_at):
    """Per batch: (span, the VMs' own time, added). span: from the previous batch's end (the
    first: its start line) to this batch's end line; the VMs' own time: the longest of its jobs'
    restart (the tool's delete of the VMI) → that job's next VMI Ready (the simulator's write, the
    first after the restart); added = span − own. ready_at: {job: [times Ready was written]}.
    A batch with a job lacking either end is left out (None)."""
    out = []
    prev_done = None
    for b in bs:
        start = prev_done if prev_done is not None else b["started"]
        prev_done = b["done"]
        own = []
        for j in b["jobs"]:
            t0 = restarted_at.get(j)
            t1 = next((t for t in sorted(ready_at.get(j, [])) if t0 is not None and t >= t0), None)
            own.append(None if t0 is None or t1 is None else t1 - t0)
        if start is None or b["done"] is None or not own or None in own:
            out.append(None)
            continue
        span = b["done"] - start
        out.append((span, max(own), span - max(own)))
    return out
