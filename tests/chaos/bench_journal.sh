#!/bin/bash
# tests/chaos/bench_journal.sh (issue #34, docs/benchmarks.md): farm throughput of `true` through
# two workers (4 machines each, --cgroup off) with the journal's three --journal-sync modes
# (full: fsync per pass and write-ahead DISPATCH; normal: write-ahead, no fsync; off: records
# only), alternated ROUNDS times in one run. As root, from the source tree:
#   NL_TEST_BUILD=build-x bash tests/chaos/bench_journal.sh [ROUNDS]
set -u
B=${NL_TEST_BUILD:-build}
R=${1:-2}
export NL_SRC_ROOT=${NL_SRC_ROOT:-$(pwd)}
. "$NL_SRC_ROOT/tests/chaos/chaos_lib.sh"
chaos_init bj $B/dataplane/nlevel $B/tools/worker/nlevel-worker $B/tools/submit/nlevel-submit
for w in 1 2; do chaos_commands $w <<X
command true = /bin/true
X
done
for r in $(seq "$R"); do
	for mode in full normal off; do
		rm -rf "$CT/state"
		chaos_start_app --journal-sync $mode
		for w in 1 2; do chaos_start_worker $w --cgroup off --quiet; done
		chaos_wait_joined 2 1
		chaos_sub --wait --quiet --window 64 --array 1-3000 true >"$CT/s" 2>&1
		echo "round $r journal-sync $mode: $(grep SUMMARY "$CT/s" | grep -o 'ok=[0-9]* .*rate_tps=[0-9.]*' | sed 's/failed.*elapsed/elapsed/')"
		for w in 1 2; do kill "${CW_PID[$w]}"; done
		chaos_reap 15 "${CW_PID[1]}" "${CW_PID[2]}"
		CW_PID=()
		kill -INT "$CHAOS_APP"; chaos_reap 30 "$CHAOS_APP"; CHAOS_APP=
	done
done
