#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Scale-out membership by SWIM + Lifeguard (issue #36), as root: the three appliances of
# tests/scaleout/scaleout.ini (NLSC: a the root, b and c one subtree each), each in its own
# network namespace, clients of a and b loading the tree (their tasks cross to c).
#   1  c paused with SIGSTOP for 3 s mid-load, then SIGCONT: a and b may suspect it, but it
#      refutes: nobody declares it (or, once resumed, it anybody) gone; no task answered
#      REJECT machine_lost; no stale hand-back (a task answered elsewhere that ran anyway);
#      and (a second check) every task of a's and b's clients COMPLETEs, accepted = completed
#      + failed + in flight, nothing in flight
#   2  CPU contention: 12 busy loops beside the three appliances (load ~18 on 2 cores) while
#      a's and b's clients load the tree (2 x 900 tasks): suspicions may come and go, nobody
#      is declared gone; and (a second check) every task COMPLETEs, nothing more left in
#      flight
#   3  c killed (SIGKILL): a and b declare it gone within the detection bound (SWIM: a probe
#      period to suspect it, then the suspicion timeout, docs/scale-out.md "Membership")
#   4  c restarted, its workers not: they join it again by themselves (c answers their LOADs
#      with "join again"), a and b take c back, and a's client's tasks all COMPLETE
# (A paused appliance does not count its own workers' silence while it was held: the port's
# --worker-timeout already excuses a held I/O lcore.)
# Usage: test_scaleout_pause.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or
# without netns/veth/bridge.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
CFG=$SRC/tests/scaleout/scaleout.ini
. "$SRC/tests/scaleout/nl_so_net.sh"

# Both "every task answered" checks were TAP comments (known gaps) until the workers resent a
# DONE until its DONE_ACK (issue #34) and tasks held at a dead peer stayed held (issue #36):
# they then held in every run, also at 3,000 tasks per client under contention (2026-12-03),
# so they are asserted.
# 1: a 3 s SIGSTOP of c while a's and b's clients load the tree
r=1 t0=$SECONDS a1=1
if up3 nlsc; then
	r=0 a1=0
	g0=$(so_eval "(p['a']['gone'][2], p['b']['gone'][2], p['c']['gone'][0], p['c']['gone'][1])")
	loadgen a 2400 600 31 --expect-complete & la=$!
	loadgen b 2400 600 32 --expect-complete & lb=$!
	sleep 1
	kill -STOP "${APP[c]}"
	sleep 3
	kill -CONT "${APP[c]}"
	wait $la || { a1=1; echo "# a's client: not every task COMPLETE"; }
	wait $lb || { a1=1; echo "# b's client: not every task COMPLETE"; }
	for x in a b; do
		echo "# pause, client of $x: $(summary "$TMP/lg_$x.log")"
		[[ $(val "$TMP/lg_$x.log" rejected_machine_lost) == 0 &&
			$(val "$TMP/lg_$x.log" failed_machine_lost) == 0 ]] || r=1
		[[ $(val "$TMP/lg_$x.log" completed) == 2400 && $(val "$TMP/lg_$x.log" lost) == 0 ]] ||
			a1=1
	done
	if [[ -n ${NL_SO_DIAG:-} ]]; then
		for i in 1 2 3 4; do
			echo "# diag: $(so_eval "(p['a']['retransmitted'][2], p['a']['acked'][2], p['a']['unacked_overflow'][2], s['c']['rx_frames'], s['c']['rx_appliance'], p['c']['duplicates_in'][0], p['c']['datagrams_in'][0], p['c']['datagrams_out'][0], s['c']['tx_frames'], p['a']['datagrams_in'][2])")"
			ip netns exec "${NS[c]}" ip -s link show "nsc$id" | sed -n '3,6p' | tr '\n' ' '; echo
			sleep 2
		done
	fi
	report a b c || a1=1
	so_wait 5 "all(live(o, q) for o in 'abc' for q in 'abc')" || { r=1; echo "# not all live"; }
	# one python start for all of it (slow on a loaded box)
	all=$(so_eval "'%s;%s;%s' % ((p['a']['gone'][2], p['b']['gone'][2], p['c']['gone'][0], p['c']['gone'][1]), (sum(s[x]['accepted'] for x in 'abc'), sum(p[x]['stale_handback'] + p[x]['lost_tasks_total'] for x in 'abc')), ((p['a']['suspected'][2], p['b']['suspected'][2]), (p['a']['refuted'][2], p['b']['refuted'][2]), p['c']['swim_refuted_self'], p['c']['swim_stalls'], p['c']['swim_incarnation'], tuple(p[x]['swim_lhm'] for x in 'abc')))")
	IFS=';' read -r g1 res sw <<<"$all"
	echo "# gone counts (a of c, b of c, c of a, c of b) before $g0 after $g1; (accepted by the three, stale hand-backs + tasks lost) = $res"
	echo "# SWIM: (suspected c by a, b), (refuted by a, b), c refuted itself, its clock held, incarnations, LHM (a, b, c) = $sw"
	[[ $g1 == "$g0" && $g1 == "(0, 0, 0, 0)" && $res == "(4800, 0)" ]] || r=1
fi
echo "# pause: $((SECONDS - t0)) s"
say "scaleout_paused_3s_appliance_not_declared_gone_no_machine_lost" $r "$(so_why)"
say "scaleout_paused_3s_every_accepted_task_answered_once" $a1 \
	"a task unanswered, or accounting off (a worker DONE lost while the appliance was stopped?)"

# 2: CPU contention (issue #36: load 12-28 on 2 cores declared live appliances gone)
r=1 a2=1
if [[ -n ${APP[c]} ]]; then
	r=0 a2=0
	# in flight (what case 1 left, if it failed), times declared gone, suspicions
	CST="'%s;%s;%s' % (tuple(s[x]['in_flight'] for x in 'abc'), tuple(sum(p[x]['gone']) for x in 'abc'), tuple(sum(p[x]['suspected']) for x in 'abc'))"
	IFS=';' read -r f0 g0 s0 <<<"$(so_eval "$CST")"
	busy=()
	for _ in $(seq 12); do
		(while :; do :; done) &
		busy+=($!)
		PIDS+=($!)
	done
	loadgen a 900 300 41 --expect-complete & la=$!
	loadgen b 900 300 42 --expect-complete & lb=$!
	wait $la || a2=1
	wait $lb || a2=1
	echo "# contention: load average $(cut -d' ' -f1-3 /proc/loadavg)"
	kill "${busy[@]}" 2>/dev/null
	wait "${busy[@]}" 2>/dev/null
	for x in a b; do
		echo "# contention, client of $x: $(summary "$TMP/lg_$x.log")"
		[[ $(val "$TMP/lg_$x.log" completed) == 900 ]] || a2=1
	done
	IFS=';' read -r f1 g1 s1 <<<"$(so_eval "$CST")"
	echo "# contention: in flight (a, b, c) before $f0 after $f1"
	[[ $f1 == "$f0" ]] || a2=1
	echo "# contention: times a peer was declared gone (a, b, c) before $g0 after $g1; suspicions before $s0 after $s1"
	[[ $g1 == "$g0" ]] || r=1
fi
say "scaleout_cpu_contention_no_appliance_declared_gone" $r "$(so_why)"
say "scaleout_cpu_contention_every_accepted_task_answered_once" $a2 \
	"tasks left unanswered under contention, or in flight afterwards"

# 3: c killed: a and b declare it gone (SWIM DEAD) within the bound
r=1
if [[ -n ${APP[c]} ]]; then
	kill -KILL "${APP[c]}"
	ts=$(date +%s.%N)
	wait "${APP[c]}" 2>/dev/null
	APP[c]=
	if so_wait 15 "not live('a', 'c') and not live('b', 'c')"; then
		dt=$(echo "$(date +%s.%N) - $ts" | bc)
		echo "# c killed: declared gone by a and b after $dt s (SWIM: a and b's swim_state of c $(so_eval "(p['a']['swim_state'][2], p['b']['swim_state'][2])"))"
		# period 0.4 s, suspicion 9 x 0.4 s: 4.0 .. 4.8 s at LHM 1, more when a host is slow
		[[ $(echo "$dt < 9" | bc) == 1 ]] && r=0
	else
		echo "# c killed: still live after 15 s"
	fi
fi
say "scaleout_killed_appliance_declared_dead_by_swim_within_seconds" $r "$(so_why)"

# 4: c restarted, its workers not (issue #36: they never re-HELLOed, so c never got its machines
# back): c answers their LOADs "join again", they join, a and b take c back, and a's client's
# tasks (some placed in c's subtree) all COMPLETE
r=1
if [[ $r == 1 && -z ${APP[c]} ]] && launch_app c nlsc && wait_app c; then
	t4=$SECONDS
	if wait_joined c 2 && so_wait 20 "all(live(o, q) for o in 'abc' for q in 'abc')"; then
		echo "# c restarted: its 2 workers joined again after $((SECONDS - t4)) s; rejoin_asked at c $(so_eval "s['c']['rejoin_asked']"); $(grep -h "joining again" "$TMP"/w?c.log | head -n 1)"
		loadgen a 600 300 51 --expect-complete && r=0
		echo "# after c's restart, client of a: $(summary "$TMP/lg_a.log")"
		echo "# c: $(so_eval "(s['c']['completed'], p['a']['datagrams_out'][2])") (tasks completed at c, datagrams a sent to c)"
	else
		echo "# c restarted: its workers did not join again, or a and b did not take it back: $(grep -h "joined with\|join" "$TMP/app_c.log" | tail -n 3 | tr '\n' ' ')"
	fi
fi
stop_all || r=1
say "scaleout_restarted_appliance_gets_its_workers_back_without_their_restart" $r "$(so_why)"
nl_tap_done
