#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Clock skew between appliances (issue #36's table: "one appliance's clock 3 s behind, no
# fault: 213 gone/rejoin flaps; 528 REJECTed tasks completed anyway"), as root: the three
# appliances of tests/scaleout/scaleout.ini (NLSC; --key, so every datagram between them is
# sealed with a sequence taken from the sender's wall clock), c's wall clock 3 s behind, then
# 3 s ahead (test hook `[appliance c] test_clock_skew_ms`: the dates of its gossip records and
# its seals), both cores kept busy with two busy loops. For each skew, a's and b's clients send
# 2 x 1,200 tasks that cross to c:
#   - every task COMPLETEs (none REJECTed, none lost); accepted = completed + failed, nothing
#     in flight, per appliance
#   - nobody declares anybody gone (SWIM: no clock compared between hosts), no machine_lost
#   - c's summaries are installed at a and b, and a's and b's at c (newer-wins compares one
#     host's dates with each other only; the age is the receiver's)
# A run in which every task COMPLETEd but the host held an appliance's own I/O lcore longer than
# SWIM's suspicion (its log says "the I/O lcore was held S s", S >= 3), and a verdict or a
# missing telemetry reading followed, is a TAP SKIP: SWIM must declare an appliance that
# answers nothing for that long, whatever the clocks say.
# Usage: test_scaleout_skew.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or
# without netns/veth/bridge.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
. "$SRC/tests/scaleout/nl_so_net.sh"
CFG=$TMP/skew.ini
T0=$SECONDS

busy2 # both cores busy, as issues #34 and #36 ask of live tests
site_key

# installed summaries: of c's roots at a and b, of a's and b's roots at c
INST="(sum(n for n, x in zip(m['a']['installed'], m['a']['appliance']) if x == 'c'), sum(n for n, x in zip(m['b']['installed'], m['b']['appliance']) if x == 'c'), sum(n for n, x in zip(m['c']['installed'], m['c']['appliance']) if x != 'c'))"
GONE="[sum(p[x]['gone']) + sum(p[x]['swim_dead']) for x in 'abc']"
for skew in -3000 3000; do
	awk -v s="$skew" '{ print } /^\[appliance c\]/ { print "test_clock_skew_ms = " s }' \
		"$SRC/tests/scaleout/scaleout.ini" >"$CFG"
	r=1 # the tasks: every one COMPLETE, the accounting per appliance
	rmem=0 # membership and summaries: nobody declared gone, summaries installed both ways
	up=1
	res=
	up3 nlsc || up=0
	if [[ $up == 1 ]]; then
		r=0
		inst0=$(so_eval "$INST")
		# a reading missing here (a telemetry thread the loaded host did not run for 10 s,
		# seen once in CI) is asked again once; still missing, the check below compares with
		# zero: summaries must still have been installed both ways, all under the skew
		[[ $inst0 == None || -z $inst0 ]] && inst0=$(so_eval "$INST")
		[[ $inst0 == None || -z $inst0 ]] && inst0="(0, 0, 0)"
		loadgen a 1200 400 $((31 + skew / 1000)) --expect-complete & la=$!
		loadgen b 1200 400 $((41 + skew / 1000)) & lb=$!
		wait $la || r=1
		wait $lb
		for x in a b; do
			echo "# skew $skew ms, client of $x: $(summary "$TMP/lg_$x.log")"
			[[ $(val "$TMP/lg_$x.log" completed) == 1200 && $(val "$TMP/lg_$x.log" rejected) == 0 &&
				$(val "$TMP/lg_$x.log" lost) == 0 ]] || r=1
		done
		report a b c || r=1
		res=$(so_eval "($GONE, $INST, [sum(p[x]['tasks_out']) for x in 'abc'])")
		echo "# skew $skew ms: (gone + swim_dead per appliance, summaries installed (c at a, c at b, a+b at c), tasks out) = $res; installed before the load $inst0"
		python3 - "$res" "$inst0" <<'PY' || rmem=1
import ast, sys
try:
    (gone, inst, out), inst0 = ast.literal_eval(sys.argv[1]), ast.literal_eval(sys.argv[2])
    ok = gone == [0, 0, 0] and all(i > j for i, j in zip(inst, inst0)) and out[0] + out[1] > 0
except (TypeError, ValueError, SyntaxError):
    sys.exit(1) # a reading is missing (None): an appliance's telemetry did not answer
sys.exit(0 if ok else 1)
PY
	fi
	# on a failure, what membership said (suspicions, verdicts) and whether an I/O lcore was
	# held (its log: "the I/O lcore was held S s") go into the detail (CI's log)
	why=$(grep -h "suspected\|gone\|refuted\|alive again\|was held" "$TMP"/app_?.log 2>/dev/null | head -n 8)
	held=$(so_held_max)
	stop_all || r=1
	busy2 # stop_all ended the busy loops too
	what="c's clock ${skew} ms off: 2 x 1,200 crossing tasks all COMPLETE, nobody declared gone, summaries installed both ways"
	if [[ $r == 0 && $rmem == 1 && -n $held && $(echo "$held >= 3" | bc) == 1 ]]; then
		# every task COMPLETE, but an appliance whose own I/O lcore the host held longer than
		# SWIM's suspicion (3.6 s) answered neither probes nor telemetry: a verdict is what
		# SWIM must give then, whatever the clocks, and the run says nothing about skew
		echo "ok $((n + 1)) - $what # SKIP the host held an appliance's I/O lcore ${held} s (${res:-a reading missing}; membership: ${why//$'\n'/ | })"
		n=$((n + 1))
	else
		say "$what" $((r | rmem)) "${res:-not up}; membership: ${why:-quiet}"
	fi
done
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
echo "# $((SECONDS - T0)) s"
nl_tap_done
