#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A network partition between appliances (issue #36's table: "5 s partition: both sides
# declare the other gone at 1.96 s; ~14 tasks answered REJECT machine_lost ran anyway"), as
# root: the three appliances of tests/scaleout/scaleout.ini (NLSC, entry = tree so tasks
# cross; --key), both cores kept busy with two busy loops. While a's, b's and c's clients each
# send 1,200 tasks, c is cut off from a and b for PART_S seconds (default 5; tc on the bridge's ports
# drops every IPv4 frame between c and a or b; workers and clients keep
# their links). SWIM declares c dead at a and b and a and b dead at c within the partition;
# what was parked across it is held ([scaleout] dead_hold_s, default 10 s) and the partition
# ends before the hold does:
#   - every task of the three clients is answered, COMPLETE or REJECT machine_lost, none lost;
#     accepted = completed + failed, nothing in flight, per appliance
#   - no task answered REJECT ran: the sub-tasks the workers ran (their bye lines) are exactly
#     those of the tasks answered COMPLETE (a REJECT machine_lost is then only for tasks routed
#     to c's subtree after the verdict, which never left)
#   - the partition was seen (gone >= 1 at a, b and c) and the tasks held across it were kept
#     (hold_kept > 0 somewhere), so the hold is what this tests
# HOLDS="10 0" runs it again with dead_hold_s = 0 (the behaviour before: what was parked across
# the partition answered REJECT machine_lost at the verdict), reported, not asserted
# (docs/scale-out.md "Partitions").
# Usage: test_scaleout_partition.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or
# without netns/veth/bridge/tc.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
PART_S=${PART_S:-5}
. "$SRC/tests/scaleout/nl_so_net.sh"
command -v tc >/dev/null || skip "no tc (iproute2)"
ip netns exec "$SW" tc qdisc add dev "nspa$id" root handle 1: htb default 10 2>/dev/null || skip "no HTB qdisc"
ip netns exec "$SW" tc qdisc del dev "nspa$id" root
CFG=$TMP/part.ini
T0=$SECONDS

cut_c() { # prep|add|del: the partition between c and {a, b}. prep (before the load): on the
	# bridge's ports an HTB whose class 1:20 ends in a pfifo of limit 0 (drops all), 1:10 the
	# rest; add: u32 filters (no tc action module needed) classify frames to c from a or b and
	# to a or b from c into 1:20; del: the filters go. One tc process each (tc -netns -batch,
	# no `ip netns exec`), so the cut and the heal are quick on a loaded host.
	local p
	for p in a b c; do
		case $1 in
		prep)
			htb_prep "$p" ;;
		add)
			[[ $p == c ]] && continue
			echo "filter add dev nspc$id parent 1: protocol ip prio 1 u32 match ip src ${IP[$p]}/32 flowid 1:20"
			echo "filter add dev nsp$p$id parent 1: protocol ip prio 1 u32 match ip src ${IP[c]}/32 flowid 1:20" ;;
		del)
			echo "filter del dev nsp$p$id parent 1: prio 1" ;;
		unprep)
			echo "qdisc del dev nsp$p$id root" ;;
		esac
	done >"$TMP/tc.$1"
	tc -netns "$SW" -batch "$TMP/tc.$1"
}

busy2
site_key
WOPT=() # the workers' bye lines count the sub-tasks they ran
answered() { # tasks, clients...: each client's tasks answered once (COMPLETE or REJECT
	# machine_lost), none lost; adds their COMPLETEs to done_n; 0 when all hold
	local n=$1 x rc=0
	shift
	for x in "$@"; do
		echo "# $CASE, client of $x: $(summary "$TMP/lg_$x.log")"
		[[ $(val "$TMP/lg_$x.log" accepted) == "$n" && $(val "$TMP/lg_$x.log" lost) == 0 &&
			$(( $(val "$TMP/lg_$x.log" completed) + $(val "$TMP/lg_$x.log" rejected_machine_lost) )) == "$n" ]] || rc=1
		done_n=$((done_n + $(val "$TMP/lg_$x.log" completed)))
	done
	return $rc
}
GONE="[sum(p[x]['gone']) for x in 'abc']"
KEPT="[sum(p[x]['hold_kept']) for x in 'abc']"
for hold in ${HOLDS:-10}; do
	awk -v h="$hold" '{ print } /^\[scaleout\]/ { print "dead_hold_s = " h }' \
		"$SRC/tests/scaleout/scaleout.ini" >"$CFG"
	r=1 rh=0 part_len= fail_why=
	res=
	if up3 nlsc; then
		r=0
		cut_c prep || { echo "# tc refused the HTB"; r=1; }
		tl=$(date +%s.%N)
		loadgen a 1200 250 51 --timeout 30 & la=$!
		loadgen b 1200 250 52 --timeout 30 & lb=$!
		loadgen c 1200 250 53 --timeout 30 & lc=$!
		sleep 1.5
		t_add=$(date +%s.%N)
		cut_c add || { echo "# tc refused the partition"; r=1; }
		t0=$(date +%s.%N)
		t_cut=$SECONDS
		# the heal on time whatever the polling below costs on a loaded host: its own timer
		(sleep "$PART_S"; date +%s.%N >"$TMP/t_heal"; cut_c del; date +%s.%N >"$TMP/t_healed") &
		healer=$!
		echo "# cut $(echo "$t_add - $tl" | bc) s after the clients started (tc took $(echo "$t0 - $t_add" | bc) s)"
		so_wait "$PART_S" "not live('a', 'c') and not live('c', 'a')" &&
			verdict=$(echo "$(date +%s.%N) - $t0" | bc) || verdict="none within the partition"
		wait $healer
		t1=$(cat "$TMP/t_healed")
		# from the start of the cut's tc (a stalled tc has cut some links long before it
		# returns: seen, 30 s) to the end of the heal's
		part_len=$(echo "$t1 - $t_add" | bc)
		so_wait 30 "all(live(o, q) for o in 'abc' for q in 'abc')" &&
			back=$(echo "$(date +%s.%N) - $t1" | bc) || back=none
		echo "# dead_hold_s $hold: partition of c $(echo "$(cat "$TMP/t_heal") - $t0" | bc) s (heal: tc took $(echo "$t1 - $(cat "$TMP/t_heal")" | bc) s more); verdicts (a on c and c on a) seen ${verdict} s after the cut, all live again ${back} s after it ended"
		wait $la
		wait $lb
		wait $lc
		done_n=0
		CASE="dead_hold_s $hold"
		answered 1200 a b c || { r=1; fail_why+="clients: $(so_why | cut -d'|' -f1-3); "; }
		rep=$(report a b c) || { r=1; fail_why+="accounting: $(grep -E '^# [abc](:| peers)' <<<"$rep" | tr '\n' ' '); "; }
		echo "$rep"
		res=$(so_eval "($GONE, $KEPT, [sum(p[x]['lost_tasks']) for x in 'abc'])")
		echo "# dead_hold_s $hold: (gone per appliance, hold_kept, REJECTed machine_lost (not run) per appliance) = $res, $((SECONDS - t_cut)) s after the cut"
		python3 - "$res" <<'PY' || rh=1
import ast, sys
gone, kept, lost = ast.literal_eval(sys.argv[1])
sys.exit(0 if all(g >= 1 for g in gone) and sum(kept) > 0 else 1)
PY
	fi
	cut_c unprep 2>/dev/null
	why=$(grep -h "gone\|rejoined\|held\|not back" "$TMP"/app_?.log 2>/dev/null | head -n 12)
	stop_all || r=1
	# NL_SO_KEEP: this case's logs kept apart from the next case's (which reuses the names)
	[[ -n ${NL_SO_KEEP:-} ]] && for f in "$TMP"/app_?.log "$TMP"/w?[abc].log "$TMP"/lg_?.*; do
		cp "$f" "$f.hold$hold"; done
	busy2
	# what the workers ran against what was answered COMPLETE (2 sub-tasks a task): more
	# means a task answered REJECT ran (or one ran twice)
	n_ran=$(ran)
	echo "# dead_hold_s $hold: sub-tasks the workers ran $n_ran, sub-tasks of the tasks answered COMPLETE $((2 * ${done_n:-0}))"
	[[ $n_ran == $((2 * ${done_n:-0})) ]] || rh=1
	if [[ $hold != 0 ]]; then
		say "a ${PART_S} s partition of c: 3 x 1,200 tasks each answered once (COMPLETE or REJECT machine_lost), nothing lost or in flight" \
			$r "${fail_why}${res:-not up}; membership: ${why:-quiet}"
		# the hold's promise is for a partition shorter than the verdict plus the hold: when
		# this host stalled so long that the cut lasted far longer than PART_S (seen once: the
		# heal's own 5 s timer woke 18.8 s late), that run says nothing about it
		if [[ -n $part_len && $(echo "$part_len > $PART_S + 3" | bc) == 1 ]]; then
			echo "ok $((n + 1)) - hold ${hold} s: none REJECTed that ran, held tasks kept # SKIP the partition lasted ${part_len} s, not ${PART_S} (the host stalled the test's timer)"
			n=$((n + 1))
		else
			say "hold ${hold} s: none REJECTed that ran (workers' runs = COMPLETEs), verdicts made and the held tasks kept" \
				$((r | rh)) "${res:-not up}; workers ran $n_ran sub-tasks for $((2 * ${done_n:-0})) of COMPLETEs; membership: ${why:-quiet}"
		fi
	else
		echo "# dead_hold_s 0 (the behaviour before, not asserted): $([[ $r == 0 ]] && echo "no REJECTed task ran" || echo "REJECTed tasks ran, or a check failed")"
	fi
done

# 1b: holds that differ (a's dead_hold_s 1 s, b's and c's 30 s), c cut off for PART2_S s
# (default 8): a's verdict on c and its hold end within the partition, b's hold does not. a
# had passed tasks of b's client on to c (entry = tree: b -> a -> c) whose HANDOVERs c never
# acknowledged; a forgets them at the end of its hold, while b, back with c within its own
# hold, waits for c to answer them. Before 2026-12-06 no one did: they were lost (seen as
# 1 of 3,600 when the host stretched case 1's partition to 16-19 s, so that the verdicts'
# holds ended on either side of the heal). a now tells b (HANDBACK reason unsent) and b
# settles them. Asserted: every task answered once, nothing lost or in flight, and b settled
# some so (`unsent` > 0; a clean run in which the cut caught no task of b's in a's
# unacknowledged hand-overs to c, seen once in CI, is a SKIP: the path was not taken); what
# ran of the tasks settled so is reported (a HANDOVER cut with its acknowledgement in flight
# did arrive: the documented bound of a partition longer than the verdict plus the hold).
PART2_S=${PART2_S:-8}
awk '{ print } /^\[scaleout\]/ { print "dead_hold_s = 30" }' "$SRC/tests/scaleout/scaleout.ini" >"$CFG"
awk '{ print } /^\[scaleout\]/ { print "dead_hold_s = 1" }' "$SRC/tests/scaleout/scaleout.ini" >"$TMP/part_a.ini"
APPOPT[a]="--config $TMP/part_a.ini"
r=1
res=
if up3 nlsc; then
	r=0
	cut_c prep || { echo "# tc refused the HTB"; r=1; }
	loadgen a 1200 250 71 --timeout 60 & la=$!
	loadgen b 1200 250 72 --timeout 60 & lb=$!
	loadgen c 1200 250 73 --timeout 60 & lc=$!
	sleep 1.5
	cut_c add || { echo "# tc refused the partition"; r=1; }
	t0=$(date +%s.%N)
	(sleep "$PART2_S"; cut_c del) &
	healer=$!
	so_wait "$PART2_S" "not live('a', 'c')" &&
		verdict=$(echo "$(date +%s.%N) - $t0" | bc) || verdict="none within the partition"
	wait $healer
	echo "# holds that differ: partition of c $(echo "$(date +%s.%N) - $t0" | bc) s, a's verdict on c ${verdict} s after the cut"
	so_wait 40 "all(live(o, q) for o in 'abc' for q in 'abc')" || echo "# not all live again within 40 s of the heal"
	wait $la
	wait $lb
	wait $lc
	done_n=0
	CASE="holds that differ"
	answered 1200 a b c || { r=1; fail_why="clients: $(so_why | cut -d'|' -f1-3)"; }
	report a b c || r=1
	res=$(so_eval "([sum(p[x]['gone']) for x in 'abc'], [p[x]['unsent'] for x in 'abc'], [p[x]['late_moved'] for x in 'abc'])")
	echo "# holds that differ: (gone per appliance, settled as unsent, late notes) = $res"
	# 0: a's verdict on c made and b settled some as unsent; 2: a's verdict made, every task
	# answered once, but no task of b's was among a's unacknowledged hand-overs to c when a
	# forgot them (the cut caught none in flight): the path was not taken this run, which
	# says nothing of it (a loss on it fails `answered` above, as 200 of 1,200 did before)
	python3 - "$res" <<'PY'
import ast, sys
gone, unsent, late = ast.literal_eval(sys.argv[1])
sys.exit(1 if gone[0] < 1 else 0 if unsent[1] > 0 else 2)
PY
	case $? in
	0) ;;
	2) [[ $r == 0 ]] && unsent_none=1 || fail_why+=" no task settled as unsent at b" ;;
	*) r=1; fail_why+=" no verdict of a on c" ;;
	esac
fi
cut_c unprep 2>/dev/null
APPOPT[a]=
stop_all || r=1
busy2
n_ran=$(ran)
echo "# holds that differ: sub-tasks the workers ran $n_ran, sub-tasks of the tasks answered COMPLETE $((2 * ${done_n:-0})) (more: tasks settled lost whose hand-over did arrive)"
if [[ $r == 0 && -n ${unsent_none:-} ]]; then
	n=$((n + 1))
	echo "ok $n - holds that differ: 3 x 1,200 tasks each answered once, nothing lost # SKIP b settled none as unsent: no task of b's was among a's unacknowledged hand-overs to c when a forgot them ($res)"
else
	say "holds that differ (a 1 s, b and c 30 s), a ${PART2_S} s partition of c: 3 x 1,200 tasks each answered once, nothing lost, b settled the tasks a forgot it had passed to c" \
		$r "${fail_why:-}${res:-not up}"
fi

# 2: the root owner a killed (the issue's "root/global owner killed: the whole tree is
# effectively down"), NLSC, entry = local: b's and c's clients keep loading them. Tasks whose
# route leads up to a's root after its verdict never got there: they enter anew at a live
# subtree root that can take them (detour); those handed to a before the verdict are answered
# after the hold (REJECT machine_lost: a has no machines, they ran nowhere). Every task
# answered once, no REJECTed task ran, some detoured.
sed 's/^entry = tree/entry = local/' "$SRC/tests/scaleout/scaleout.ini" >"$CFG"
r=1
res=
if up3 nlsc; then
	r=0
	loadgen b 3000 300 61 --timeout 30 & lb=$!
	loadgen c 3000 300 62 --timeout 30 & lc=$!
	sleep 1.5
	kill -KILL "${APP[a]}"
	wait "${APP[a]}" 2>/dev/null
	APP[a]=
	wait $lb
	wait $lc
	done_n=0
	CASE="root owner killed"
	answered 3000 b c || r=1
	report b c || r=1
	res=$(so_eval "[p[x]['detoured'] for x in 'bc']")
	echo "# root owner killed: tasks detoured past it at b and c $res"
	[[ -n $res && $res != "None" && $res != "[0, 0]" ]] || r=1
fi
stop_all || r=1
n_ran=$(ran)
echo "# root owner killed: sub-tasks the workers ran $n_ran, sub-tasks of the tasks answered COMPLETE $((2 * ${done_n:-0}))"
[[ $n_ran == $((2 * ${done_n:-0})) ]] || r=1
say "the root owner killed (NLSC, entry = local): b's and c's 2 x 3,000 tasks answered once, some detoured past a's root, none REJECTed that ran" \
	$r "${res:-not up}"
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
echo "# $((SECONDS - T0)) s"
nl_tap_done
