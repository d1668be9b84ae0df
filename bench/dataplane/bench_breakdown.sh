#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Where a task's time goes in `nlevel --native` (issue "Dispatch at the physical limit", item 4:
# a cost breakdown per task): perf samples the manager lcore (a spinning thread, so its samples
# cover the whole run) and each function is put in one part of the path; a part's cost per task
# is its share of the samples times the wall time per task (1 / rate_tps of a run without perf,
# just before: sampling slows the run, not the shares).
#   route     entry, routing decisions and the passes between managers of the lcore
#   pick      the leaf's choice of L machines (scan, rank or pick index) and its index upkeep
#   dispatch  booking the sub-tasks in the view, the load table and its snapshots, completions
#   hop       hand-overs: the lcore's FIFO, the SP/SC rings between lcores, inboxes, the loop
#   ingress   the task generator (the model's source), the task pool, the entry hand-over
#   stats     latency samples, the clock
# Usage: bench/dataplane/bench_breakdown.sh BUILD [CONFIG] [SECS] [EAL lcores]
#   e.g. bench/dataplane/bench_breakdown.sh build config/paper-96.ini 2 0-1
# Needs perf (Debian package linux-perf) and root or perf_event_paranoid <= 1. Prints one
# markdown table: ns per task by part, for NLSC and 2LSC.
set -euo pipefail
B=${1:?usage: bench_breakdown.sh BUILD [CONFIG] [SECS] [LCORES]}
CFG=${2:-config/paper-96.ini}
SECS=${3:-2}
LC=${4:-0-1}
APP=$B/dataplane/nlevel
if ! command -v perf >/dev/null; then
	echo "bench_breakdown.sh: needs perf (apt-get install linux-perf)" >&2
	exit 1
fi
[[ -x $APP ]] || { echo "bench_breakdown.sh: no $APP (build first)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "| scheme | tasks/s | route | pick | dispatch | hop | ingress | stats | other |" \
	"total [ns/task] |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for s in nlsc 2lsc; do
	"$APP" --no-huge --no-pci --no-shconf -l "$LC" --log-level='lib.*:error' -- --config "$CFG" \
		--scheme "$s" --native "$SECS" >"$TMP/out.txt" 2>"$TMP/err.txt" ||
		{ cat "$TMP/err.txt" >&2; exit 1; }
	rate=$(grep '^SUMMARY' "$TMP/out.txt" | tr ' ' '\n' | sed -n 's/^rate_tps=//p')
	perf record -q -o "$TMP/perf.data" -- "$APP" --no-huge --no-pci --no-shconf -l "$LC" \
		--log-level='lib.*:error' -- --config "$CFG" --scheme "$s" --native "$SECS" \
		>"$TMP/perf.txt" 2>"$TMP/err.txt" || { cat "$TMP/err.txt" >&2; exit 1; }
	perf report -q -i "$TMP/perf.data" --stdio --sort comm,symbol 2>/dev/null |
		python3 -c '
import re, sys
rate, scheme = float(sys.argv[1]), sys.argv[2]
parts = [
    ("route", r"nlsc_|tlsc_|nl_2lsc|nl_nlsc|nl_tree_|eng_pass|decide_st|eng_forward"),
    ("pick", r"nl_pick|cls_settle|set_slow|run_|nl_busy_cnt|front_fix|idle_"),
    ("dispatch", r"eng_dispatch|nl_load|eng_load|nl_model_sub|native_done|nl_dp_book|eng_reject"),
    ("hop", r"hand_|xhop|mgr_poll|poll_pending|lcore_round|lcore_main|rte_ring|inbox"),
    ("ingress", r"gen_poll|src_draw|ingress|mempool|nl_rng|match_task|0x0000"),
    ("stats", r"lat_flush|now_vt|rdtsc"),
]
cost = {p: 0.0 for p, _ in parts}
cost["other"] = 0.0
tot = 0.0
for line in sys.stdin:
    m = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+\[[.k]\]\s+(\S+)", line)
    if not m or not m.group(2).startswith("rte-worker"):
        continue
    pct, sym = float(m.group(1)), m.group(3)
    tot += pct
    for p, rx in parts:
        if re.search(rx, sym):
            cost[p] += pct
            break
    else:
        cost["other"] += pct
ns = 1e9 / rate if rate > 0 else 0
f = lambda p: "%.1f" % (cost[p] / tot * ns) if tot else "-"
cols = ["route", "pick", "dispatch", "hop", "ingress", "stats", "other"]
print("| %s | %.2f M | %s | %.1f |" % (scheme, rate / 1e6, " | ".join(f(p) for p in cols), ns))
' "$rate" "$s"
done
