#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A standby for the root's owner (issue #36's table: "the root/global owner killed: the whole
# tree is effectively down"), as root: the three appliances of tests/scaleout/scaleout.ini
# (NLSC: a owns the root and no machine slot, b the subtree M(1,0), c M(1,1)) with
# `[appliance a] standby = b` and local entry (the default), both cores kept busy. a's client
# knows b (--standby); b's and c's clients load their own appliances. Every client sends
# 1,200 tasks of two 50 ms sub-tasks, random vectors, 50 a second: all of a's cross (a has no
# machines), half of b's and c's cross through the root. a is killed (SIGKILL) 3 s after its client's first task.
# Checks:
#   1  b adopts a's subtree: the root decides at b (adopted_in > 0), c sees a's root at b;
#      every task of the three clients is answered once (lost 0), a's client's through b
#   2  no task ran twice: the sub-tasks the four workers ran (their bye lines) are at least two
#      per task answered COMPLETE and at most two per task answered COMPLETE or failed; a's
#      client's resends were held at b, and b and c told b what became of a's clients' tasks
#      that had crossed to them (crossed_told > 0)
# Usage: test_scaleout_rootsb.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or
# without network namespaces.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
. "$SRC/tests/scaleout/nl_so_net.sh"
CFG=$TMP/rootsb.ini
awk '{ sub(/^entry = tree$/, "entry = local"); print } /^\[appliance a\]/ { print "standby = b" }' \
	"$SRC/tests/scaleout/scaleout.ini" >"$CFG"
T0=$SECONDS
busy2 # both cores busy, as issues #34 and #36 ask of live tests

r1=1 r2=1 d1= d2= up=0 done_n=0 fail_n=0
up_nlsc b c || up=1 # a, the root's owner, has no machines
if [[ $up == 0 ]]; then
	loadgen a 1200 50 81 --instr 1e10 --timeout 40 --standby "${IP[b]}" & la=$!
	loadgen b 1200 50 82 --instr 1e10 --timeout 40 & lb=$!
	loadgen c 1200 50 83 --instr 1e10 --timeout 40 & lc=$!
	client_started a && sleep 3 # 3 s of its client's load
	kill_app a
	wait $la
	wait $lb
	wait $lc
	r1=0
	for x in a b c; do
		echo "# client of $x: $(summary "$TMP/lg_$x.log" | cut -c1-400)"
		answered_once "$TMP/lg_$x.log" 1200 ||
			{ r1=1; d1+="client of $x: $(summary "$TMP/lg_$x.log" | cut -c1-300) "; }
		done_n=$((done_n + $(val "$TMP/lg_$x.log" completed)))
		fail_n=$((fail_n + $(val "$TMP/lg_$x.log" failed)))
	done
	grep -h "silent for" "$TMP/lg_a.log" | sed 's/^/# /' | cut -c1-200
	res=$($SO eval "(p['b']['adoptions'], p['b']['adopted_in'], p['c']['subtree_at'][0], p['b']['resends_held'], p['b']['resends_run'], p['b']['resends_answered'], p['b']['crossed_told'] + p['c']['crossed_told'], p['b']['client_words'])" $(ALL b c))
	echo "# (b's adoptions, b's tasks decided at adopted managers, where c sees a's subtree, b's resends held, run, answered from the words, words told on crossed tasks at b and c, b's client words): $res"
	adopted=$(python3 -c "import sys; v = eval(sys.argv[1]); print(int(v[0] >= 1 and v[1] > 0 and v[2] == 'b'))" "$res" 2>/dev/null)
	[[ $adopted == 1 ]] || { r1=1; d1+="b did not take the root over ($res)"; }
	held=$(nth "$res" 3)
	told=$(nth "$res" 6)
fi
stop_all || r2=1
if [[ $up == 0 ]]; then
	n_ran=$(ran)
	echo "# sub-tasks the workers ran $n_ran; tasks COMPLETE $done_n, failed (ran in part) $fail_n"
	if ran_once "$n_ran" "$done_n" "$fail_n" && [[ ${held:-0} -gt 0 && ${told:-0} -gt 0 ]]; then
		r2=0
	else
		d2="workers ran $n_ran sub-tasks for $done_n COMPLETE and $fail_n failed tasks; resends held at b: ${held:-?}; words told on crossed tasks: ${told:-?}"
	fi
fi
[[ $r1 == 0 && $r2 == 0 ]] || echo "# detail: $(so_why)" | tee /dev/stderr
echo "# root standby: $((SECONDS - T0)) s"
say "scaleout_rootsb_root_owner_killed_its_standby_runs_the_root_every_task_answered" $r1 "${d1:-not up}"
say "scaleout_rootsb_no_task_ran_twice" $r2 "${d2:-not up}"
nl_tap_done
