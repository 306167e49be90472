
set terminal pngcairo size 1500,1050 font "DejaVu Sans,11" noenhanced
set output "/work/main/bench/results/timeline.png"
set style fill solid 0.85 border lc rgb "#333333"
set grid xtics lc rgb "#dddddd"
set xlabel "guest CLOCK_MONOTONIC (s since the kernel started)"
set lmargin 42
set tmargin 5
set multiplot layout 2,1 title "one cold first boot, pair 1 (QEMU TCG, 2026-11-27)" font ",13"

unset arrow; unset label
set title "original script (docker-bootstrap.sh): unit start -> container running 34.0 s" offset 0,1.6
set xrange [0:64.7]
set yrange [11.6:-0.6]
set ytics ("systemctl enable --now docker, find disk, parted" 0, "mkfs.ext4" 1, "mount -a" 2, "ISO mount + docker login" 3, "docker pull" 4, "logout, umount, docker ps" 5, "docker run (create+start)" 6, "done" 7, "dockerd starting" 8, "dockerd: pull" 9, "dockerd: create+start" 10, "container: running → /health 200" 11)
set arrow from 20.764, graph 0 to 20.764, graph 1 nohead dt 2 lc rgb "#555555"
set label "unit start" at 20.764, graph 1.020 center font ",9"
set arrow from 54.759, graph 0 to 54.759, graph 1 nohead dt 2 lc rgb "#555555"
set label "container running" at 54.759, graph 1.065 center font ",9"
plot "/work/main/bench/results/timeline.d/script.dat" using (($2+$3)/2):1:(($3-$2)/2):(0.35):4 with boxxyerror lc rgb variable notitle, \
     "/work/main/bench/results/timeline.d/script.dat" using 3:1:(sprintf(" %.1f s", $5)) with labels left font ",9" notitle


unset arrow; unset label
set title "agent (cosmicac-bootstrap): unit start -> container running 12.6 s" offset 0,1.6
set xrange [0:64.7]
set yrange [12.6:-0.6]
set ytics ("agent process" 0, "disk" 1, "credentials" 2, "docker" 3, "login" 4, "pull" 5, "container" 6, "ready" 7, "disk unit (before dockerd)" 8, "dockerd starting" 9, "dockerd: pull" 10, "dockerd: create+start" 11, "container: running → /health 200" 12)
set arrow from 18.181, graph 0 to 18.181, graph 1 nohead dt 2 lc rgb "#555555"
set label "unit start" at 18.181, graph 1.020 center font ",9"
set arrow from 30.760, graph 0 to 30.760, graph 1 nohead dt 2 lc rgb "#555555"
set label "container running" at 30.760, graph 1.065 center font ",9"
plot "/work/main/bench/results/timeline.d/agent.dat" using (($2+$3)/2):1:(($3-$2)/2):(0.35):4 with boxxyerror lc rgb variable notitle, \
     "/work/main/bench/results/timeline.d/agent.dat" using 3:1:(sprintf(" %.1f s", $5)) with labels left font ",9" notitle

unset multiplot
