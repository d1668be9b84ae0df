# SPDX-License-Identifier: BSD-3-Clause
# docs/img/swim_*.png from the CSVs of this folder only: cd docs/swim && gnuplot plots.gp
# (the CSVs: nlevel-swim-sim detect --nmax 1024 --trials 10 > detect.csv;
#  for s in 1 2; do nlevel-swim-sim loss --n 32 --seconds 3600 --seed $s; done > loss-n32.csv;
#  for s in 1 2 3; do nlevel-swim-sim pause --n 32 --seconds 1800 --paused 4 --pause-ms 3000 \
#      --every-ms 6000 --loss 0.05 --seed $s; done > pause-4of32.csv)
set datafile separator ","
set datafile commentschars "#"
set terminal pngcairo size 800,500
set output "../img/swim_detect.png"
set logscale x 2
set xlabel "members N"
set ylabel "seconds after the crash"
set key top left
set title "SWIM + Lifeguard: detection of one crash vs N (memberlist defaults, 10 trials)"
plot "< grep ^swim, detect.csv" using 2:4 with linespoints title "first suspicion", \
     "< grep ^swim, detect.csv" using 2:5 with linespoints title "first DEAD (SWIM)", \
     "< grep ^lifeguard, detect.csv" using 2:5 with points pt 6 ps 2 title "first DEAD (Lifeguard)", \
     "< grep ^swim, detect.csv" using 2:6 with linespoints title "every member knows (SWIM)", \
     "< grep ^swim, detect.csv" using 2:(4*(log10($2)>1?log10($2):1)) with lines dt 2 title "min suspicion timeout"
set output "../img/swim_loss.png"
unset logscale x
set logscale y
set xlabel "message loss"
set ylabel "false deaths per member-hour (N = 32; 0 drawn at 0.001)"
set title "False deaths vs loss: plain SWIM, SWIM + suspicion, + Lifeguard (seed 1)"
set key top left
plot "< grep ^swim-basic, loss-n32.csv | head -5" using 3:($11+1e-3) with linespoints title "swim-basic", \
     "< grep ^swim, loss-n32.csv | head -5" using 3:($11+1e-3) with linespoints title "swim (suspicion)", \
     "< grep ^lifeguard, loss-n32.csv | head -5" using 3:($11+1e-3) with linespoints title "lifeguard"
