
set terminal pngcairo size 1500,1050 font "DejaVu Sans,11" noenhanced
set output "/work/main/bench/results/timeline-recreate.png"
set style fill solid 0.85 border lc rgb "#333333"
set grid xtics lc rgb "#dddddd"
set xlabel "guest CLOCK_MONOTONIC (s since the kernel started)"
set lmargin 42
set tmargin 5
set multiplot layout 2,1 title "a re-created VM on the same data disk, pair 2 (QEMU TCG, 2026-11-27)" font ",13"

unset arrow; unset label
set title "original script (docker-bootstrap.sh): QEMU start -> unit ready 68.6 s" offset 0,1.6
set xrange [0:78.8]
set yrange [9.6:-0.6]
set ytics ("systemctl enable --now docker, find disk, parted" 0, "ISO mount + docker login" 1, "docker pull" 2, "logout, umount, docker ps" 3, "docker run (create+start)" 4, "done" 5, "dockerd starting" 6, "dockerd: pull" 7, "dockerd: create+start" 8, "container: running → /health 200" 9)
set arrow from 32.180, graph 0 to 32.180, graph 1 nohead dt 2 lc rgb "#555555"
set label "unit start" at 32.180, graph 1.020 center font ",9"
set arrow from 67.854, graph 0 to 67.854, graph 1 nohead dt 2 lc rgb "#555555"
set label "container running" at 67.854, graph 1.065 center font ",9"
set arrow from 67.933, graph 0 to 67.933, graph 1 nohead dt 2 lc rgb "#555555"
set label "ready" at 67.933, graph 1.110 center font ",9"
plot "/work/main/bench/results/timeline-recreate.d/script.dat" using (($2+$3)/2):1:(($3-$2)/2):(0.35):4 with boxxyerror lc rgb variable notitle, \
     "/work/main/bench/results/timeline-recreate.d/script.dat" using 3:1:(sprintf(" %.1f s", $5)) with labels left font ",9" notitle


unset arrow; unset label
set title "agent (cosmicac-bootstrap): QEMU start -> unit ready 46.1 s" offset 0,1.6
set xrange [0:78.8]
set yrange [12.6:-0.6]
set ytics ("agent process" 0, "config" 1, "disk" 2, "credentials (skipped)" 3, "docker" 4, "login (skipped)" 5, "pull (skipped)" 6, "container" 7, "ready" 8, "disk unit (before dockerd)" 9, "dockerd starting" 10, "dockerd: create+start" 11, "container: running → /health 200" 12)
set arrow from 31.230, graph 0 to 31.230, graph 1 nohead dt 2 lc rgb "#555555"
set label "unit start" at 31.230, graph 1.020 center font ",9"
set arrow from 39.996, graph 0 to 39.996, graph 1 nohead dt 2 lc rgb "#555555"
set label "container running" at 39.996, graph 1.065 center font ",9"
set arrow from 45.191, graph 0 to 45.191, graph 1 nohead dt 2 lc rgb "#555555"
set label "ready" at 45.191, graph 1.110 center font ",9"
plot "/work/main/bench/results/timeline-recreate.d/agent.dat" using (($2+$3)/2):1:(($3-$2)/2):(0.35):4 with boxxyerror lc rgb variable notitle, \
     "/work/main/bench/results/timeline-recreate.d/agent.dat" using 3:1:(sprintf(" %.1f s", $5)) with labels left font ",9" notitle

unset multiplot
