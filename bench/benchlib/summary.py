"""Medians, min-max and agent/script ratios over the runs, the targets, and
the markdown table written into bench/README.md."""

from __future__ import annotations

import statistics

MIB = 1 << 20


def stat(xs: list[float]) -> dict | None:
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"n": len(xs), "median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def collect(metrics: list[dict]) -> dict:
    """metrics: boot_metrics() of every boot of every run."""
    # summary key -> (the boot's metric, which boot): 1 cold, 2 second, 3 a
    # re-created VM (new root disk) with the data disk of boots 1-2
    keys = {
        "cold_unit_to_running_s": ("cold_unit_to_running_s", 1), "cold_qemu_to_running_s": ("cold_qemu_to_running_s", 1),
        "overhead_s": ("overhead_s", 1), "dockerd_pull_s": ("dockerd_pull_s", 1),
        "dockerd_create_start_s": ("dockerd_create_start_s", 1),
        "cold_unit_start_to_ready_s": ("unit_start_to_ready_s", 1), "cold_qemu_to_ready_s": ("qemu_to_ready_s", 1),
        "unit_start_to_ready_s": ("unit_start_to_ready_s", 2), "ready_after_dockerd_s": ("ready_after_dockerd_s", 2),
        "recreate_qemu_to_ready_s": ("qemu_to_ready_s", 3), "recreate_unit_to_ready_s": ("unit_start_to_ready_s", 3),
        "recreate_image_requests": ("image_requests", 3),
        # issue 41: ready when it is true, as soon as it is true
        "cold_ready_after_good_s": ("ready_after_good_answer_s", 1),
        "second_ready_after_good_s": ("ready_after_good_answer_s", 2),
        "recreate_ready_after_good_s": ("ready_after_good_answer_s", 3),
        "p2_s": ("ready_after_dockerd_and_good_s", 2),
        "recreate_unit_to_running_s": ("recreate_unit_to_running_s", 3),
        "recreate_create_start_s": ("recreate_create_start_s", 3),
        "recreate_running_over_create_start": ("recreate_running_over_create_start", 3),
        "overhead_share": ("overhead_share", 1),
        # issue 42: a VirtualMachine's restart is boot 2, the same root disk
        "second_qemu_to_ready_s": ("qemu_to_ready_s", 2),
        "second_registry_requests_all": ("registry_requests_all", 2),
    }
    out: dict = {}
    for key, (field, boot) in keys.items():
        for side in ("script", "agent"):
            vals = [m.get(field) for m in metrics if m["side"] == side and m["boot"] == boot]
            out.setdefault(key, {})[side] = stat(vals)
    # re-created / cold of the same side, pair by pair (same QEMU start -> ready measure)
    for side in ("script", "agent"):
        by_pair: dict = {}
        for m in metrics:
            if m["side"] == side and m["boot"] in (1, 3) and m.get("qemu_to_ready_s"):
                by_pair.setdefault(m.get("pair"), {})[m["boot"]] = m["qemu_to_ready_s"]
        vals = [b[3] / b[1] for b in by_pair.values() if 1 in b and 3 in b]
        out.setdefault("recreate_over_cold", {})[side] = stat(vals)
    # boot 2 on the root disk of boot 1 (same host file, same machine-id the
    # guest wrote at its first boot): 1 per pair where it was, 0 where not
    for side in ("script", "agent"):
        by_pair = {}
        for m in metrics:
            if m["side"] == side and m["boot"] in (1, 2, 3):
                by_pair.setdefault(m.get("pair"), {})[m["boot"]] = (m.get("root_disk_inode"), m.get("machine_id"))
        kept = [1.0 if b[1] == b[2] and None not in b[1] else 0.0 for b in by_pair.values() if 1 in b and 2 in b]
        new_root = [1.0 if b[1][0] != b[3][0] and b[1][1] != b[3][1] else 0.0
                    for b in by_pair.values() if 1 in b and 3 in b]
        out.setdefault("second_root_kept", {})[side] = stat(kept)
        out.setdefault("recreate_root_new", {})[side] = stat(new_root)
    return out


def ratio(s: dict | None, a: dict | None) -> float | None:
    if not s or not a or s["median"] == 0:
        return None
    return a["median"] / s["median"]


def fmt_s(d: dict | None, scale: float = 1.0, unit: str = "s", prec: int = 1) -> str:
    if not d:
        return "—"
    f = f"{{:.{prec}f}}"
    return (f"{f.format(d['median'] * scale)} {unit} ({f.format(d['min'] * scale)}–"
            f"{f.format(d['max'] * scale)}, n={d['n']})")


def verdict(value: float | None, limit: float, unit: str, prec: int = 2) -> str:
    if value is None:
        return "not measured"
    if value <= limit:
        return f"**met** (margin {limit - value:.{prec}f} {unit})"
    times = f" ({value / limit:.2f}× the target)" if limit else ""
    return f"**missed** by {value - limit:.{prec}f} {unit}{times}"


def table(res: dict) -> str:
    s = res.get("summary", {})
    rows = ["| measure | script (original) | agent | agent/script | target | verdict |",
            "|---|---|---|---|---|---|"]

    def pair(key: str, label: str, target: str = "—", v=None, scale: float = 1.0,
             unit: str = "s", prec: int = 1) -> None:
        d = s.get(key, {})
        r = ratio(d.get("script"), d.get("agent"))
        a = d.get("agent")
        text = v(a, r) if callable(v) else (v or "(no target)")
        rows.append(f"| {label} | {fmt_s(d.get('script'), scale, unit, prec)} | "
                    f"{fmt_s(a, scale, unit, prec)} | {'—' if r is None else f'{r:.2f}'} | "
                    f"{target} | {text} |")

    def half(_a, r):
        if r is None:
            return "not measured"
        return f"**met** (ratio {r:.2f})" if r <= 0.5 else f"**missed**: ratio {r:.2f} ({r / 0.5:.2f}× the target)"

    pair("cold_unit_to_running_s", "cold boot: unit start → container running", "agent ≤ 0.5 × script", half)
    pair("cold_qemu_to_running_s", "cold boot: QEMU start → container running")
    pair("cold_unit_start_to_ready_s", "cold boot: unit start → unit ready (Started/Finished)")
    pair("unit_start_to_ready_s", "second boot: unit start → ready")
    pair("ready_after_dockerd_s", "second boot: ready − dockerd answering (docker.service started; the model's load included)",
         prec=2)
    pair("p2_s", "P2, second boot: ready − the later of dockerd answering and the first good /health answer",
         "agent ≤ 0.5 s", lambda a, _r: verdict(a and a["median"], 0.5, "s"), prec=2)
    pair("cold_ready_after_good_s", "cold boot: ready − the container's first good /health answer "
         "(negative: said ready before it was)", "agent ≤ 0.5 s",
         lambda a, _r: verdict(a and a["median"], 0.5, "s"), prec=2)
    pair("second_ready_after_good_s", "second boot: ready − first good /health answer", "agent ≤ 0.5 s",
         lambda a, _r: verdict(a and a["median"], 0.5, "s"), prec=2)
    pair("recreate_ready_after_good_s", "re-created VM: ready − first good /health answer", "agent ≤ 0.5 s",
         lambda a, _r: verdict(a and a["median"], 0.5, "s"), prec=2)
    pair("overhead_s", "overhead: unit start → running − dockerd's pull − dockerd's create+start",
         "agent ≤ 150 ms", lambda a, _r: verdict(a and a["median"] * 1000, 150, "ms", 0),
         scale=1000, unit="ms", prec=0)
    pair("overhead_share", "overhead ÷ dockerd's work (pull + create+start)", "agent ≤ 5 %",
         lambda a, _r: verdict(a and a["median"] * 100, 5.0, "%", 1), scale=100, unit="%", prec=1)
    pair("dockerd_pull_s", "  (dockerd: pull, registry's first request → pull event)", v="", prec=2)
    pair("dockerd_create_start_s", "  (dockerd: create+start, Created → start event)", v="", prec=2)
    pair("cold_qemu_to_ready_s", "cold boot: QEMU start → unit ready")
    pair("recreate_qemu_to_ready_s", "re-created VM, same data disk: QEMU start → unit ready")
    pair("recreate_unit_to_ready_s", "re-created VM: unit start → ready")
    pair("recreate_image_requests", "re-created VM: registry requests for the image (manifests, blobs)",
         v="", prec=0, unit="")
    pair("recreate_unit_to_running_s", "re-created VM: unit start → container running", prec=2)
    pair("recreate_create_start_s", "  (dockerd: create+start of the new container, Created → start event)", v="",
         prec=2)
    pair("recreate_running_over_create_start", "re-created VM: unit start → running ÷ dockerd's create+start",
         "agent ≤ 1.2 ×", lambda a, _r: verdict(a and a["median"], 1.2, "×"), unit="×", prec=2)
    pair("second_qemu_to_ready_s", "second boot = a VirtualMachine's restart: QEMU start → unit ready")
    pair("second_registry_requests_all", "second boot (VM restart): registry requests, any (pings, login too)",
         "agent 0", lambda a, _r: verdict(a and a["median"], 0, "", 0), prec=0, unit="")
    pair("second_root_kept", "second boot (VM restart): root disk kept (same file, same machine-id), share of pairs",
         "agent 1", lambda a, _r: "not measured" if not a else ("**met**" if a["min"] == 1 else "**missed**"),
         prec=2, unit="")
    pair("recreate_root_new", "re-created VM: a new root disk (new file, new machine-id), share of pairs",
         v="", prec=2, unit="")
    pair("recreate_over_cold", "re-created ÷ cold, QEMU start → ready, per pair (same side)", v="", unit="×", prec=2)

    for where in ("mkfs_host", "mkfs_guest"):
        mk = res.get(where)
        if not mk:
            continue
        a, sc = mk["agent"], mk["script"]
        conv = lambda x: {"n": x["n"], "median": x["median_s"], "min": x["min_s"], "max": x["max_s"]}
        rr = a["median_s"] / sc["median_s"] if sc["median_s"] else None
        label = "mkfs.ext4, 1 TiB sparse: " + ("host loop device" if where == "mkfs_host" else "guest loop device (TCG)")
        rows.append(f"| {label} | {fmt_s(conv(sc), prec=2)} | {fmt_s(conv(a), prec=2)} | "
                    f"{'—' if rr is None else f'{rr:.2f}'} | agent ≤ 3 s | {verdict(a['median_s'], 3.0, 's')} |")
    fp = res.get("footprint")
    if fp:
        rows.append(f"| binary size, packed (dist/) | — | {fp['packed_bytes']:,} B ({fp['packed_bytes'] / MIB:.3f} MiB) "
                    f"| — | ≤ 1 MiB | {verdict(fp['packed_bytes'] / MIB, 1.0, 'MiB', 3)} |")
        rows.append(f"| binary size, raw (upx -d) | — | {fp['raw_bytes']:,} B ({fp['raw_bytes'] / MIB:.3f} MiB) "
                    f"| — | — | (no target) |")
    rss = res.get("rss")
    if rss:
        for key, label, tgt in (("vmhwm_kib", "peak RSS of `run` (cold boot): VmHWM of the main process, sampled at 10 Hz", True),
                                ("cgroup_peak_kib", "memory.peak of the unit's cgroup, sampled (incl. children, page cache)", False)):
            sd, ad = rss.get("script", {}).get(key), rss.get("agent", {}).get(key)
            rr = ratio(sd, ad)
            v = verdict(ad["median"] / 1024, 8.0, "MiB") if (tgt and ad) else ("(no target)" if not tgt else "not measured")
            rows.append(f"| {label} | {fmt_s(sd, 1 / 1024, 'MiB', 2)} | {fmt_s(ad, 1 / 1024, 'MiB', 2)} | "
                        f"{'—' if rr is None else f'{rr:.2f}'} | {'≤ 8 MiB' if tgt else '—'} | {v} |")
    lat = res.get("status_latency", {})
    for where, label in (("guest", "`status` latency, guest via QGA (TCG), median of 100"),
                         ("host_packed", "`status` latency, host, packed binary, median of 100"),
                         ("host_raw", "`status` latency, host, raw binary, median of 100")):
        d = lat.get(where)
        if not d:
            continue
        floor = d.get("floor_ms")
        rows.append(f"| {label} | — | {d['median_ms']:.1f} ms ({d['min_ms']:.1f}–{d['max_ms']:.1f}; "
                    f"/bin/true {floor:.1f} ms) | — | ≤ 20 ms | {verdict(d['median_ms'], 20, 'ms', 1)} |")
    return "\n".join(rows)
