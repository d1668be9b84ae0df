#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# What a split costs, measured in one run (root; docs/benchmarks.md "Scale-out"):
#  1. the dispatch rate of a path that never crosses: `nlevel --native` (in-process instant
#     machines, config/paper-96.ini, NLSC) of this build beside BASE_NLEVEL (a build without
#     the scale-out code, when given), alternated REPS times; with the bare SP/SC rte_ring hop
#     nlevel measures in the same process;
#  2. the cost of one cross-appliance hop: the same tree (tests/scaleout/scaleout.ini), the
#     same 24 worker machines, the same client at low load, once on one appliance and once
#     split over three (every task crosses: a owns the root only); the difference of the
#     median responses divided by the datagrams a task's path crosses (hand-overs and
#     hand-backs, from /nlevel/appliances).
# Usage: sudo bench/scaleout/bench_hop.sh [BUILD_DIR [BASE_NLEVEL]]   (REPS=3 TASKS=1000 RATE=200)
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$SRC/build}
BASE=${2:-}
NLEVEL=$B/dataplane/nlevel WORKER=$B/tools/worker/nlevel-worker LOADGEN=$B/tools/loadgen/nlevel-loadgen
CFG=$SRC/tests/scaleout/scaleout.ini
REPS=${REPS:-3} TASKS=${TASKS:-1000} RATE=${RATE:-200}
. "$SRC/tests/scaleout/nl_so_net.sh"

echo "# 1. never-crossing path: nlevel --native 2 s, config/paper-96.ini, NLSC" >&2
for rep in $(seq "$REPS"); do
	for bin in ${BASE:+"$BASE"} "$NLEVEL"; do
		line=$("$bin" --no-huge --no-pci --no-shconf --file-prefix "nlsn$id" -l 0-1 -- \
			--config "$SRC/config/paper-96.ini" --scheme nlsc --native 2 2>/dev/null | grep '^SUMMARY')
		tag=this; [[ $bin == "$BASE" ]] && tag=base
		echo "native rep=$rep build=$tag $(tr ' ' '\n' <<<"$line" | grep -E '^(rate_tps|lat_mean_ns|lat_p99_ns|ring_hop_ns)=' | tr '\n' ' ')"
	done
done

echo "# 2. cross-appliance hop: $TASKS tasks at $RATE/s to a, single appliance vs split over 3" >&2
single_workers() { # 24 machines on appliance a (two workers of 12)
	local w
	for w in 1 2; do
		$INH "$WORKER" --appliance "${IP[a]}" --scale 1e-3 --allow-root --quiet --id "$w" \
			--mach 100e6:00 --mach 100e6:00 --mach 100e6:00 --mach 100e6:10 --mach 100e6:10 \
			--mach 100e6:10 --mach 100e6:01 --mach 100e6:01 --mach 100e6:01 --mach 100e6:11 \
			--mach 100e6:11 --mach 100e6:11 >"$TMP/w$w.log" 2>&1 &
		PIDS+=($!)
	done
}
for rep in $(seq "$REPS"); do
	if start_app a nlsc --single; then
		single_workers
		wait_joined a 2 && loadgen a "$TASKS" "$RATE" "$rep" --expect-complete &&
			echo "hop rep=$rep mode=single p50_us=$(val "$TMP/lg_a.log" p50_us) mean_us=$(val "$TMP/lg_a.log" mean_us) completed=$(val "$TMP/lg_a.log" completed)"
	fi
	stop_all
	if start_app a nlsc && start_app b nlsc && start_app c nlsc; then
		for x in a b c; do workers "$x"; done
		if wait_joined a 2 && wait_joined b 2 && wait_joined c 2 &&
			so_wait 20 "all(live(o, q) for o in 'abc' for q in 'abc')" &&
			loadgen a "$TASKS" "$RATE" "$rep" --expect-complete; then
			x=$(so_eval "(sum(sum(p[x]['tasks_out']) + sum(p[x]['handbacks_out']) - p[x]['moved'] for x in 'abc') / $TASKS)")
			echo "hop rep=$rep mode=split p50_us=$(val "$TMP/lg_a.log" p50_us) mean_us=$(val "$TMP/lg_a.log" mean_us) completed=$(val "$TMP/lg_a.log" completed) crossings_per_task=$x"
		fi
	fi
	stop_all
done
