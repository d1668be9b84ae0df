#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue #33 item 1, placement by real occupancy, with both cores kept busy (two `yes`):
#   - nlevel-submit --array 1-64 --wait nap 1 on 8 slots: at most 1.3 x the ideal 8 s, no slot
#     above 10 tasks (the job log's machine column);
#   - the same with --window 8 (a new task only when one ended: it must go to the idle slot).
# Usage: chaos_farm_place.sh NLEVEL WORKER SUBMIT. TAP; skips when not root or without netns.
NLEVEL=$1 WORKER=$2 SUBMIT=$3
SRC=${NL_SRC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/common/nl_tap.sh"
. "$SRC/tests/chaos/chaos_farm_env.sh"
NAP=${NL_CHAOS_NAP:-1}
cf_up 10.97.$(($$ % 200 + 20))
cf_app "$CF_TMP/app.log"
cf_worker 1
cf_worker 2
cf_wait_workers 2 || { echo "not ok 1 - two workers join"; echo 1..1; exit 1; }
cf_busy 2

place() { # name, extra nlevel-submit options
	local name=$1 t0 t1 el worst

	shift
	t0=$(date +%s.%N)
	cf_sub --wait --quiet --submit-id "$((RANDOM + 1000))" --joblog "$CF_TMP/$name.csv" "$@" \
		--array 1-64 nap "$NAP" >"$CF_TMP/$name.out" 2>&1
	local rc=$?
	t1=$(date +%s.%N)
	el=$(python3 -c "print(round($t1 - $t0, 2))")
	worst=$(python3 - "$CF_TMP/$name.csv" <<'PY'
import csv, sys, collections
c = collections.Counter(r["machine"] for r in csv.DictReader(open(sys.argv[1])) if r["result"] == "ok")
print(max(c.values()) if c else 99, sum(c.values()), " ".join("%s:%d" % kv for kv in sorted(c.items())))
PY
)
	read -r most n_ok spread <<<"$worst"
	# the batch's makespan (first FSUBMIT to last answer): the wall time adds the start-up
	# and exit of an ASan build on two busy cores (seconds); docs/benchmarks.md has both
	span=$(sed -n 's/.*elapsed_s=\([0-9.]*\).*/\1/p' "$CF_TMP/$name.out")
	echo "# $name: makespan ${span:-?} s, wall $el s (ideal $((8 * NAP)) s), per slot: $spread"
	say "64 x nap $NAP on 8 slots $*: all ok, makespan <= 1.3 x ideal, no slot above 10 tasks" \
		"$([[ $rc == 0 && $n_ok == 64 && $most -le 10 && -n $span ]] &&
			python3 -c "import sys; sys.exit(0 if $span <= 1.3 * 8 * $NAP else 1)"; echo $?)" \
		"rc $rc, $el s, most $most: $(tail -n 3 "$CF_TMP/$name.out")"
}
place burst
place window --window 8
say "the appliance still serves" "$(kill -0 "$CF_APP"; echo $?)" "$(tail -n 5 "$CF_TMP/app.log")"
nl_tap_done
