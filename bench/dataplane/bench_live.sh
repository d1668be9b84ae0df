#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Native-mode capacity of the live appliance against depth and size (docs/benchmarks.md, "Live
# appliance: capacity against N and machines"): config/paper-96.ini with
#   - N = 2..10 resources and 6 machines per leaf (M = 6 x 2^N), and
#   - N = 4 with M = 64..65,536 machines,
# NLSC and 2LSC, booked machines (nlevel --native's default): the saturated rate (best of REPS
# runs of SECONDS) and the mean / p99 dispatch latency at half that rate. The physical limits
# beside them, measured in the same run: a bare SP/SC rte_ring hop (ring_hop_ns, printed by
# every nlevel run) and DPDK's own ring_perf_autotest (dpdk-test, when installed).
# Writes OUT/capacity.csv, OUT/capacity.md (a markdown table) and OUT/capacity.png (gnuplot).
# Usage: bench/dataplane/bench_live.sh BUILD_DIR [SECONDS [REPS [OUT]]]   (from the repository root)
set -eu
B=${1:?usage: bench/dataplane/bench_live.sh BUILD_DIR [SECONDS [REPS [OUT]]]}
S=${2:-1}
R=${3:-1}
OUT=${4:-bench-live}
APP=$B/dataplane/nlevel
EAL=(--no-huge --no-pci --no-shconf -l 0-1 -m 2048 --log-level=lib.*:error) # deep trees: one inbox ring per manager
[[ -x $APP ]] || { echo "bench_live.sh: $APP not built (ninja -C $B)" >&2; exit 2; }
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv=$OUT/capacity.csv
echo "sweep,n_res,machines,scheme,rate_tps,lat_mean_ns,lat_p99_ns,half_rate_tps,ring_hop_ns" >"$csv"

field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

point() { # sweep N M
	local sweep=$1 n=$2 m=$3 ini=$tmp/n$2m$3.ini
	sed -e "s/^resources = 4 .*/resources = $n/" -e "s/^machines = 96 .*/machines = $m/" \
		config/paper-96.ini >"$ini"
	for s in nlsc 2lsc; do
		local best=0 hop=0 line r half lat
		for _ in $(seq "$R"); do
			line=$("$APP" "${EAL[@]}" -- --config "$ini" --scheme "$s" --native "$S" 2>/dev/null |
				grep '^SUMMARY' || true)
			r=$(field "$line" rate_tps)
			[[ -n $r ]] || continue
			hop=$(field "$line" ring_hop_ns)
			awk -v r="$r" -v b="$best" 'BEGIN{exit !(r > b)}' && best=$r
		done
		half=$(awk -v r="$best" 'BEGIN{printf "%d", r / 2}')
		lat="0 0"
		if [[ $half -gt 0 ]]; then
			line=$("$APP" "${EAL[@]}" -- --config "$ini" --scheme "$s" --native "$S" \
				--rate "$half" 2>/dev/null | grep '^SUMMARY' || true)
			lat="$(field "$line" lat_mean_ns) $(field "$line" lat_p99_ns)"
		fi
		read -r lm lp <<<"$lat"
		echo "$sweep,$n,$m,$s,$best,${lm:-0},${lp:-0},$half,$hop" | tee -a "$csv"
	done
}

for n in ${NL_BENCH_N:-2 3 4 5 6 7 8 9 10}; do point depth "$n" $((6 << n)); done
for m in ${NL_BENCH_M:-64 256 1024 4096 16384 65536}; do point size 4 "$m"; done

ring=""
if command -v dpdk-test >/dev/null; then
	# DPDK's own figure for the same operation (package dpdk-dev): single producer, single
	# consumer, one element enqueued and dequeued on one lcore, in TSC cycles.
	ring=$(DPDK_TEST=ring_perf_autotest dpdk-test --no-huge --no-pci --no-shconf -l 0 \
		--log-level=lib.*:error 2>/dev/null | grep -m1 'legacy APIs: SP/SC: single:' || true)
	[[ -z $ring ]] || ring="$ring cycles per enqueue + dequeue (TSC $(awk '/MHz/{print $4; exit}' /proc/cpuinfo) MHz)"
fi

{
	echo "| sweep | N | machines | NLSC tasks/s | NLSC p99 at half [µs] | 2LSC tasks/s | 2LSC p99 at half [µs] | bare ring hop [ns] |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault((r['sweep'], int(r['n_res']), int(r['machines'])), {})[r['scheme']] = r
for (sw, n, m), d in by.items():
    f = lambda s, k: d.get(s, {}).get(k, '0')
    print(f"| {sw} | {n} | {m:,} | {float(f('nlsc','rate_tps'))/1e6:.2f} M | "
          f"{float(f('nlsc','lat_p99_ns'))/1e3:.1f} | {float(f('2lsc','rate_tps'))/1e6:.2f} M | "
          f"{float(f('2lsc','lat_p99_ns'))/1e3:.1f} | {f('nlsc','ring_hop_ns')} |")
PY
	if [[ -n $ring ]]; then echo; echo "DPDK ring_perf_autotest, same run: $ring"; fi
} >"$OUT/capacity.md"
cat "$OUT/capacity.md"

if command -v gnuplot >/dev/null; then
	grep -E '^depth' "$csv" >"$tmp/depth.csv" || true
	grep -E '^size' "$csv" >"$tmp/size.csv" || true
	gnuplot <<EOF
set terminal pngcairo size 1200,500 font ",10"
set output "$OUT/capacity.png"
set datafile separator ","
set multiplot layout 1,2 title "nlevel --native capacity (booked machines), config/paper-96.ini"
set ylabel "tasks/s (saturated, best of $R)"
set logscale y
set grid
set xlabel "N (resources), 6 machines per leaf"
plot "< grep ',nlsc,' $tmp/depth.csv" using 2:5 with linespoints title "NLSC", \
     "< grep ',2lsc,' $tmp/depth.csv" using 2:5 with linespoints title "2LSC"
set logscale x 2
set xlabel "machines (N = 4)"
plot "< grep ',nlsc,' $tmp/size.csv" using 3:5 with linespoints title "NLSC", \
     "< grep ',2lsc,' $tmp/size.csv" using 3:5 with linespoints title "2LSC"
unset multiplot
EOF
	echo "wrote $OUT/capacity.png"
fi
