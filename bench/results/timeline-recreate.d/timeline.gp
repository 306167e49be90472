
set terminal pngcairo size 1500,1050 font "DejaVu Sans,11" noenhanced
set output "/work/main/bench/results/timeline-recreate.png"
set style fill solid 0.85 border lc rgb "#333333"
set grid xtics lc rgb "#dddddd"
set xlabel "guest CLOCK_MONOTONIC (s since the kernel started)"
set lmargin 42
set tmargin 5
set multiplot layout 2,1 title "a re-created VM on the same data disk, pair 2 (QEMU TCG, 2026-11-23)" font ",13"

unset arrow; unset label
set title "original script (docker-bootstrap.sh): QEMU start -> unit ready 57.9 s" offset 0,1.6
set xrange [0:61.4]
set yrange [8.6:-0.6]
set ytics ("systemctl enable --now docker, find disk, parted" 0, "ISO mount + docker login" 1, "docker pull" 2, "logout, umount, docker ps" 3, "docker run (create+start)" 4, "done" 5, "dockerd starting" 6, "dockerd: pull" 7, "dockerd: create+start" 8)
set arrow from 29.126, graph 0 to 29.126, graph 1 nohead dt 2 lc rgb "#555555"
set label "unit start" at 29.126, graph 1.020 center font ",9"
set arrow from 56.817, graph 0 to 56.817, graph 1 nohead dt 2 lc rgb "#555555"
set label "container running" at 56.817, graph 1.065 center font ",9"
set arrow from 56.898, graph 0 to 56.898, graph 1 nohead dt 2 lc rgb "#555555"
set label "ready" at 56.898, graph 1.110 center font ",9"
plot "/work/main/bench/results/timeline-recreate.d/script.dat" using (($2+$3)/2):1:(($3-$2)/2):(0.35):4 with boxxyerror lc rgb variable notitle, \
     "/work/main/bench/results/timeline-recreate.d/script.dat" using 3:1:(sprintf(" %.1f s", $5)) with labels left font ",9" notitle


unset arrow; unset label
set title "agent (cosmicac-bootstrap): QEMU start -> unit ready 41.5 s" offset 0,1.6
set xrange [0:61.4]
set yrange [9.6:-0.6]
set ytics ("agent process" 0, "disk" 1, "credentials (skipped)" 2, "docker" 3, "login (skipped)" 4, "pull (skipped)" 5, "container" 6, "ready" 7, "disk unit (before dockerd)" 8, "dockerd starting" 9)
set arrow from 39.701, graph 0 to 39.701, graph 1 nohead dt 2 lc rgb "#555555"
set label "unit start" at 39.701, graph 1.020 center font ",9"
set arrow from 38.886, graph 0 to 38.886, graph 1 nohead dt 2 lc rgb "#555555"
set label "container running" at 38.886, graph 1.065 center font ",9"
set arrow from 40.457, graph 0 to 40.457, graph 1 nohead dt 2 lc rgb "#555555"
set label "ready" at 40.457, graph 1.110 center font ",9"
plot "/work/main/bench/results/timeline-recreate.d/agent.dat" using (($2+$3)/2):1:(($3-$2)/2):(0.35):4 with boxxyerror lc rgb variable notitle, \
     "/work/main/bench/results/timeline-recreate.d/agent.dat" using 3:1:(sprintf(" %.1f s", $5)) with labels left font ",9" notitle

unset multiplot
