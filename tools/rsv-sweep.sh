#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Advance reservations on a trace (seed 004, docs/batch.md "Advance reservations"): run
# nlevel-sim on a [reservations] configuration for several request rates and admission
# policies, and write DIR/rsv_sweep.csv with DIR/rsv_accept.png (acceptance rate) and
# DIR/rsv_wait.png (normal jobs' mean wait) against the request rate, one curve per policy
# and scenario. Run from the repository root after a build (tools/nl-main.sh builds build/).
set -euo pipefail
usage() {
	cat <<'EOT'
usage: tools/rsv-sweep.sh [--config FILE] [--out DIR] [--rates "R ..."] [--policies "P ..."]
                          [--sim PATH]
  --config    batch configuration with [reservations] (default config/kth-rsv.ini)
  --out       output folder (default out/rsv-sweep)
  --rates     requests per hour (default "0.1 0.25 0.5 1")
  --policies  files in config/policies/ or paths (default: fig4-simple fig5-ratio fig7-usage
              fig8-running-jobs)
  --sim       nlevel-sim (default build/sim/nlevel-sim)
EOT
}
cfg=config/kth-rsv.ini out=out/rsv-sweep rates="0.1 0.25 0.5 1" sim=build/sim/nlevel-sim
pols="fig4-simple fig5-ratio fig7-usage fig8-running-jobs"
while [ $# -gt 0 ]; do
	case $1 in
	--config) cfg=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--rates) rates=$2; shift 2 ;;
	--policies) pols=$2; shift 2 ;;
	--sim) sim=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[ -x "$sim" ] || { echo "rsv-sweep: $sim missing: build first (meson setup build && ninja -C build)" >&2; exit 2; }
grep -q '^\[reservations\]' "$cfg" || { echo "rsv-sweep: $cfg has no [reservations] section" >&2; exit 2; }
mkdir -p "$out"
csv=$out/rsv_sweep.csv
echo "policy,rate_per_h,scenario,requests,accepted,accepted_pct,refused_policy,refused_space,preempted,rsv_node_s,wait_mean_s,wait_mean_base_s,wait_delta_s,utilization,utilization_base" >"$csv"
cdir=$(dirname "$cfg")
for p in $pols; do
	pf=$p
	[ -f "$pf" ] || pf=config/policies/$p.cad
	[ -f "$pf" ] || { echo "rsv-sweep: no policy $p" >&2; exit 2; }
	pn=$(basename "$pf" .cad)
	for r in $rates; do
		d=$out/$pn-$r
		mkdir -p "$d"
		# the configuration with its rate replaced; kept beside the original so that its
		# relative paths still resolve
		tmp=$cdir/.rsv-sweep-$$.ini
		sed "s/^rate_per_h *=.*/rate_per_h = $r/" "$cfg" >"$tmp"
		echo "rsv-sweep: $pn at $r/h" >&2
		if ! "$sim" -q -c "$tmp" -o "$d" --rsv-policy "$pf" >"$d/stdout"; then
			rm -f "$tmp"
			echo "rsv-sweep: nlevel-sim failed for $pn at $r/h" >&2
			exit 1
		fi
		rm -f "$tmp"
		awk -F, -v pol="$pn" -v rate="$r" '
			FNR == 1 { f++ }
			f == 1 && FNR > 1 && $2 == "all" { w[$1] = $4; u[$1] = $8 }
			f == 2 && /^scenario\./ && /rsv_requests:/ {
				split($0, a, "="); name = substr(a[1], 10); sc = name; sub(/\+rsv$/, "", sc)
				for (k = 1; k <= split(a[2], kv, " "); k++) { split(kv[k], x, ":"); v[x[1]] = x[2] }
				printf "%s,%s,%s,%d,%d,%.1f,%d,%d,%d,%.0f,%.1f,%.1f,%.1f,%.4f,%.4f\n", pol, rate, sc,
					v["rsv_requests"], v["rsv_accepted"],
					v["rsv_requests"] ? 100 * v["rsv_accepted"] / v["rsv_requests"] : 0,
					v["rsv_refused_policy"], v["rsv_refused_space"], v["preempted"],
					v["rsv_node_s"], w[name], w[sc], w[name] - w[sc], u[name], u[sc]
			}' "$d/batch.csv" FS=' ' "$d/batch.meta" >>"$csv"
	done
done
# one block per (policy, scenario), sorted by rate, for gnuplot's `index`
dat=$out/rsv_sweep.dat
awk -F, 'NR > 1 { print $1 "," $3 "," $2 "," $6 "," $11 }' "$csv" | sort -t, -k1,1 -k2,2 -k3,3g |
	awk -F, '{ k = $1 " " $2; if (k != last) { if (NR > 1) printf "\n\n"; last = k; t = t (t ? " " : "") k }
		print $3, $4, $5 } END { print t > "/dev/stderr" }' >"$dat" 2>"$out/rsv_sweep.titles"
gp=$out/rsv_sweep.gp
cat >"$gp" <<EOT
# Made by tools/rsv-sweep.sh from rsv_sweep.csv (blocks in rsv_sweep.dat): gnuplot $gp
set terminal pngcairo size 900,560 noenhanced
titles = '$(cat "$out/rsv_sweep.titles")'
N = words(titles) / 2
t(i) = word(titles, 2 * i + 1) . ' ' . word(titles, 2 * i + 2)
set key outside right; set grid; set logscale x; set xlabel 'reservation requests per hour'
set output '$out/rsv_accept.png'; set title 'ClassAd reservation policies (Nakada et al.): requests accepted ($(basename "$cfg"))'
set ylabel 'accepted [%]'; set yrange [0:105]
plot for [i=0:N-1] '$dat' index i using 1:2 with linespoints title t(i)
set output '$out/rsv_wait.png'
set title 'ClassAd reservation policies (Nakada et al.): normal jobs, mean wait ($(basename "$cfg"))'
set ylabel 'mean wait [min]'; set logscale y; set yrange [*:*]
plot for [i=0:N-1] '$dat' index i using 1:(\$3 / 60) with linespoints title t(i)
EOT
gnuplot "$gp" 2>"$out/rsv_sweep.log" || echo "rsv-sweep: gnuplot failed (see $out/rsv_sweep.log); $csv is complete" >&2
column -s, -t "$csv"
echo "rsv-sweep: $csv, $out/rsv_accept.png, $out/rsv_wait.png" >&2
