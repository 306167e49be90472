"""The host benchmark's arithmetic (bench/host/run): requests counted from kube-apiserver's
audit log, medians, the ratio of the tool to kubectl, and the table."""

import json
import statistics


def count_requests(audit_lines, user):
    """Requests `user` made, one audit event per request: the ResponseComplete stage (a
    request that panicked has a Panic event instead and no ResponseComplete). Lines that are not
    JSON (a partial last line) are skipped."""
    n = 0
    for line in audit_lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if (ev.get("user") or {}).get("username") != user:
            continue
        if ev.get("stage") in ("ResponseComplete", "Panic"):
            n += 1
    return n


def verbs(audit_lines, user):
    """`VERB path` of each of user's requests, in order (for --verbose)."""
    out = []
    for line in audit_lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if (ev.get("user") or {}).get("username") == user and ev.get("stage") in ("ResponseComplete", "Panic"):
            out.append(f"{ev.get('verb', '?').upper()} {ev.get('requestURI', '?')} -> "
                       f"{(ev.get('responseStatus') or {}).get('code', '?')}")
    return out


def median(values):
    return statistics.median(values) if values else None


def ratio(ours, theirs):
    """ours / theirs, None when either is missing or theirs is 0."""
    if ours is None or theirs in (None, 0):
        return None
    return ours / theirs


def summarize(runs):
    """runs: {(tool, phase): [(requests, seconds), ...]} -> {(tool, phase): (median requests, median s, n)}."""
    return {key: (median([r for r, _ in samples]), median([s for _, s in samples]), len(samples))
            for key, samples in runs.items()}


def _fmt_n(v):
    if v is None:
        return "—"
    return str(int(v)) if float(v).is_integer() else f"{v:.1f}"


def _fmt_ratio(v):
    return "—" if v is None else f"{v:.2f}"


def table(summary, tools, phases, baseline):
    """A Markdown table: a row per phase and tool, with the tool's requests and wall time and
    their ratios to `baseline`'s in the same phase."""
    rows = ["| phase | tool | requests (median) | wall time, ms (median) | requests ÷ baseline | time ÷ baseline | runs |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for phase in phases:
        base = summary.get((baseline, phase))
        for tool in tools:
            got = summary.get((tool, phase))
            if not got:
                continue
            req, sec, n = got
            r_req = ratio(req, base[0]) if base else None
            r_sec = ratio(sec, base[1]) if base else None
            rows.append(f"| {phase} | {tool} | {_fmt_n(req)} | {_fmt_n(round(sec * 1000))} | {_fmt_ratio(r_req)} | "
                        f"{_fmt_ratio(r_sec)} | {n} |")
    return "\n".join(rows)


def replace_section(readme, title, body):
    """readme with the `## title` section's body replaced by body (appended when absent); the
    section ends at the next `## ` heading."""
    lines = readme.split("\n")
    head = f"## {title}"
    try:
        start = lines.index(head)
    except ValueError:
        return readme.rstrip("\n") + f"\n\n{head}\n\n{body.strip()}\n"
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    new = lines[:start + 1] + [""] + body.strip().split("\n") + [""] + lines[end:]
    return "\n".join(new).rstrip("\n") + "\n"
