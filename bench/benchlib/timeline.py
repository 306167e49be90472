"""The timeline of one cold boot as a PNG, drawn by gnuplot (Debian's
gnuplot-nox): one panel per side, one bar per phase on the guest's monotonic
clock (seconds since the kernel started), dockerd's own work under it, dashed
lines at the unit's start and at the container running."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

COLORS = {"done": "#4477aa", "skipped": "#bbbbbb", "failed": "#cc3311", "unfinished": "#ee7733",
          "process": "#99ccee", "dockerd": "#228833"}


def _panel(rows: list[dict], title: str, dat: Path, xmax: float, marks: list[tuple[float, str]]) -> str:
    lines, tics = [], []
    for i, r in enumerate(rows):
        color = COLORS.get(r["status"], "#777777").lstrip("#")
        lines.append(f"{i} {r['start']:.3f} {max(r['end'], r['start'] + 0.05):.3f} {int(color, 16)} "
                     f"{r['end'] - r['start']:.2f}")
        label = r["label"] + (f" ({r['status']})" if r["status"] in ("failed", "skipped", "unfinished") else "")
        tics.append(f'"{label}" {i}')
    dat.write_text("\n".join(lines) + "\n")
    arrows = "\n".join(
        f'set arrow from {x:.3f}, graph 0 to {x:.3f}, graph 1 nohead dt 2 lc rgb "#555555"\n'
        f'set label "{text}" at {x:.3f}, graph {1.02 + 0.045 * i:.3f} center font ",9"'
        for i, (x, text) in enumerate(marks) if x is not None)
    n = max(len(rows), 1)
    return f"""
unset arrow; unset label
set title "{title}" offset 0,1.6
set xrange [0:{xmax:.1f}]
set yrange [{n - 0.4}:-0.6]
set ytics ({", ".join(tics)})
{arrows}
plot "{dat}" using (($2+$3)/2):1:(($3-$2)/2):(0.35):4 with boxxyerror lc rgb variable notitle, \\
     "{dat}" using 3:1:(sprintf(" %.1f s", $5)) with labels left font ",9" notitle
"""


def draw(script: dict, agent: dict, out: Path, title: str,
         total: tuple[str, str] = ("cold_unit_to_running_s", "unit start -> container running"),
         from_qemu: bool = False) -> Path:
    """total: the metric named in each panel's title; from_qemu: a whole-VM measure, the unit's ready marked too."""
    if shutil.which("gnuplot") is None:
        raise RuntimeError("gnuplot missing: run packaging/install-deps (it installs gnuplot-nox)")
    panels = []
    ends = []
    for m in (script, agent):
        rows = m["phases"] + m["dockerd_rows"]
        ends += [r["end"] for r in rows] + [m.get("unit_ready") or 0]
    xmax = max(ends + [10]) * 1.08
    work = out.with_suffix(".d")
    work.mkdir(parents=True, exist_ok=True)
    for side, m in (("original script (docker-bootstrap.sh)", script), ("agent (cosmicac-bootstrap)", agent)):
        rows = m["phases"] + m["dockerd_rows"]
        value = m.get(total[0])
        sub = f"{side}: {total[1]} {value:.1f} s" if value is not None else side
        marks = [(m.get("unit_start"), "unit start"), (m.get("container_running"), "container running")]
        if from_qemu:
            marks += [(m.get("unit_ready"), "ready")]  # QEMU's start is before the axis' 0 (the kernel's start)
        panels.append(_panel(rows, sub, work / f"{'script' if 'script' in side else 'agent'}.dat", xmax, marks))
    gp = f"""
set terminal pngcairo size 1500,1050 font "DejaVu Sans,11" noenhanced
set output "{out}"
set style fill solid 0.85 border lc rgb "#333333"
set grid xtics lc rgb "#dddddd"
set xlabel "guest CLOCK_MONOTONIC (s since the kernel started)"
set lmargin 42
set tmargin 5
set multiplot layout 2,1 title "{title}" font ",13"
{panels[0]}
{panels[1]}
unset multiplot
"""
    (work / "timeline.gp").write_text(gp)
    r = subprocess.run(["gnuplot", str(work / "timeline.gp")], capture_output=True, text=True)
    if r.returncode != 0 or not out.exists():
        raise RuntimeError(f"gnuplot failed: {r.stderr.strip()[:1000]}")
    return out
