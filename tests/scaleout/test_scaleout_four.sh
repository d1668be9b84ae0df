#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A tree split four ways (issue #36: "splits not in the tree"), as root: tests/scaleout/
# scaleout.ini with a fourth appliance d (NLSC: a owns the root and no machine slot, b the
# subtree M(1,0), c the leaf manager M(2,10), d the leaf manager M(2,11)), standbys a <-> b
# and c <-> d, local entry, both cores kept busy. b's, c's and d's clients know their
# appliance's standby (--standby) and send 600 tasks each of two 50 ms sub-tasks, random
# vectors, 50 a second: most cross (every appliance holds a quarter of the machines, a none).
# The workers of c and d know the other (--standby). c is killed (SIGKILL) 3 s after its client's first task and started
# again once the clients are done (NL_FOUR_FAULT=pause: c is stopped 3 s instead;
# NL_FOUR_FAULT=root: a, the root's owner, is killed instead of c, a client of its own loading
# it, and b adopts the root; NL_FOUR_FAULT=skew: no fault, the four wall clocks apart, a 3 s
# behind, b 1.5 s ahead, c 3 s ahead, d 1.5 s behind: the config's test hook
# test_clock_skew_ms).
# Checks:
#   1  the standby adopts the subtree of the killed appliance (nobody adopts after a pause,
#      nor under the skew); every task of the three clients is answered once (lost 0); (skew)
#      every one COMPLETE
#   2  no task ran twice: the sub-tasks the six workers ran (their bye lines) are at least
#      two per task answered COMPLETE and at most two per task answered COMPLETE or failed
#   3  (kill) the appliance started again rejoins: all four see each other live, its subtree
#      is back at it and its workers home (failback), and its client's next 200 tasks complete
# Usage: test_scaleout_four.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or
# without network namespaces.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
SO_APPS="a b c d"
. "$SRC/tests/scaleout/nl_so_net.sh"
CFG=$TMP/four.ini
awk '{ sub(/^entry = tree$/, "entry = local"); sub(/^owns = M\(1,1\), group2$/, "owns = M(2,10), group2") }
	{ print }
	/^\[appliance a\]/ { print "standby = b" } /^\[appliance b\]/ { print "standby = a" }
	/^\[appliance c\]/ { print "standby = d" }
	END { print "\n[appliance d]\nip = 10.98.0.4\nowns = M(2,11)\nstandby = c" }' \
	"$SRC/tests/scaleout/scaleout.ini" >"$CFG"
grep -q "owns = M(2,10)" "$CFG" || { echo "1..0 # SKIP scaleout.ini changed: c's owns line"; exit 0; }
FAULT=${NL_FOUR_FAULT:-kill}
if [[ $FAULT == skew ]]; then # 6 s between the farthest clocks (dates of records and seals)
	sed -i -e '/^\[appliance a\]/a test_clock_skew_ms = -3000' \
		-e '/^\[appliance b\]/a test_clock_skew_ms = 1500' \
		-e '/^\[appliance c\]/a test_clock_skew_ms = 3000' \
		-e '/^\[appliance d\]/a test_clock_skew_ms = -1500' "$CFG"
fi
K=c SB=d
[[ $FAULT == root ]] && K=a SB=b
declare -A STBY=([a]=b [b]=a [c]=d [d]=c)
T0=$SECONDS
busy2 # both cores busy, as issues #34 and #36 ask of live tests
LIVE4="all(live(o, q) for o in 'abcd' for q in 'abcd')"

r1=1 r2=1 r3=1 d1= d2= d3= up=0 DONE_N=0 FAIL_N=0 WHY=
for x in $SO_APPS; do launch_app "$x" nlsc; done
for x in $SO_APPS; do wait_app "$x" || up=1; done
if [[ $up == 0 ]]; then
	for x in b c d; do
		WOPT=(--standby "${IP[${STBY[$x]}]}")
		workers "$x"
	done
	WOPT=()
	for x in b c d; do wait_joined "$x" 2 || up=1; done
	[[ $up == 0 ]] && so_wait 20 "$LIVE4" || up=1
fi
CL="b c d"
[[ $FAULT == root ]] && CL="a b c d"
if [[ $up == 0 ]]; then
	declare -A LGP
	for x in $CL; do
		loadgen "$x" 600 50 "$((100 + WID[$x]))" --instr 1e10 --timeout 40 --standby "${IP[${STBY[$x]}]}" &
		LGP[$x]=$!
	done
	client_started "$K" && sleep 3 # 3 s of its client's load
	# K's workers that hold slots of K (a has none): after K's restart they must come home
	# before its client's next tasks, or those meet K's subtree without machines and are
	# answered REJECT no_machine (docs/scale-out.md; seen in a run: 3 of 200)
	NW=$(grep -c "joined with [1-9]" "$TMP/app_$K.log")
	if [[ $FAULT == pause ]]; then
		kill -STOP "${APP[$K]}"
		sleep 3
		kill -CONT "${APP[$K]}"
	elif [[ $FAULT == skew ]]; then
		: # the clocks were skewed from the start: no fault
	else
		kill_app "$K"
	fi
	for x in $CL; do wait "${LGP[$x]}"; done
	r1=0
	clients_answered 600 $CL || r1=1
	d1+=$WHY
	res=$($SO eval "(p['$SB']['adoptions'], p['$SB']['adopted_in'], p['$SB']['resends_held'], p['$SB']['resends_run'], p['$SB']['resends_answered'], p['$SB']['client_words'])" $(ALL "$SB"))
	echo "# at $SB (adoptions, tasks decided at adopted managers, resends held, run, answered from the words, client words): $res"
	if [[ $FAULT == pause ]]; then
		[[ $(nth "$res" 0) == 0 ]] || { r1=1; d1+="$SB adopted $K's subtree after a 3 s pause ($res)"; }
	elif [[ $FAULT == skew ]]; then
		ad=$($SO eval "[p[x]['adoptions'] for x in 'abcd']" $(ALL a b c d))
		echo "# adoptions at a, b, c, d under the skew: $ad"
		[[ $ad == "[0, 0, 0, 0]" ]] || { r1=1; d1+="adoptions under the skew: $ad "; }
		for x in $CL; do
			[[ $(val "$TMP/lg_$x.log" completed) == 600 ]] ||
				{ r1=1; d1+="client of $x: not every task COMPLETE under the skew "; }
		done
	else
		[[ $(nth "$res" 0) -ge 1 ]] || { r1=1; d1+="$SB did not adopt $K's subtree ($res)"; }
		launch_app "$K" nlsc
		t3=$SECONDS
		if wait_app "$K" && home_again "$K" "$NW"; then
			echo "# $K restarted: live, its subtree back and its $NW workers home after $((SECONDS - t3)) s"
			loadgen "$K" 200 50 109 --instr 1e10 --timeout 40 --standby "${IP[$SB]}" --expect-complete &&
				r3=0 || d3="$K's client after the restart: $(summary "$TMP/lg_$K.log" | cut -c1-300)"
			add_done "$K" # whatever the verdict: its COMPLETE tasks ran, its REJECTs did not
		else
			d3="the four did not all see each other live again, or $K's subtree and $NW workers did not come back: $(home_why "$K")"
		fi
	fi
fi
stop_all || r2=1
if [[ $up == 0 ]]; then
	ran_tasks "$DONE_N" "$FAIL_N" && r2=0 ||
		d2="workers ran $N_RAN sub-tasks for $DONE_N COMPLETE and $FAIL_N failed tasks"
fi
[[ $r1 == 0 && $r2 == 0 ]] || echo "# detail: $(so_why)" | tee /dev/stderr
echo "# four-way split, $FAULT: $((SECONDS - T0)) s"
say "scaleout_four_${FAULT}_every_task_answered_once" $r1 "${d1:-not up}"
say "scaleout_four_${FAULT}_no_task_ran_twice" $r2 "${d2:-not up}"
[[ $FAULT != pause && $FAULT != skew ]] && say "scaleout_four_${FAULT}_restarted_rejoins_and_serves" $r3 "${d3:-not up}"
nl_tap_done
