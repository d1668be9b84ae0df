#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Asked before machine_lost (issue #36, docs/scale-out.md "Asked before machine_lost"), as
# root: the three appliances of tests/scaleout/scaleout.ini with `[appliance c] standby = b`,
# c's workers knowing b (--standby), both cores kept busy. The clients of a and b send 1,200
# tasks each of two 20 ms sub-tasks (entry = tree: most cross appliances, many run on c's
# workers).
#   kill     c killed (SIGKILL) 3 s in: tasks handed to c are held (dead_hold_s), then
#            answered; c's workers fail over to b and tell it what c had DISPATCHed for a
#            and b (ended, running, withdrawn), and b tells a and b
#   restart  c back (its workers home), then killed 3 s into a second load and started again
#            at once (before any verdict): a and b see its new incarnation; c's workers rejoin
#            the new c and tell it, and it tells a and b, within their 3 s wait
#   no standby  b (no standby configured; its workers without --standby) killed 3 s into a
#            load of a's and c's clients (900 tasks each of two 100 ms sub-tasks): b's
#            workers, b silent for 3 s while they hold its sub-tasks or DONEs, tell a and c
#            straight
# Checks:
#   1  every task of the loading clients is answered once (lost 0), in each load
#   2  no task answered REJECT ran: the sub-tasks the six workers ran (their bye lines) are at
#      least two per task answered COMPLETE and at most two per task answered COMPLETE or
#      failed (a task that ran in part is answered COMPLETE with reason machine_lost), over
#      the three loads, and, task by task, none answered REJECT has a row in the workers'
#      --runs files (ran_rejected(): the detail names each); the workers' words reached the
#      origins (worker_words + late_words > 0 after the kill and the restart, told_direct > 0
#      after the kill without a standby)
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
. "$SRC/tests/scaleout/nl_so_net.sh"
CFG=$TMP/asked.ini
awk '{ print } /^\[appliance c\]/ { print "standby = b" }' "$SRC/tests/scaleout/scaleout.ini" >"$CFG"
T0=$SECONDS
busy2 # both cores busy, as issues #34 and #36 ask of live tests
WORDS="tuple((p[x]['relayed'], p[x]['worker_words'], p[x]['late_words'], p[x]['asked_ran'], p[x]['awaiting'], p[x]['moved_dead']) for x in 'ab')"

# Two clients' loads, the victim killed 3 s in (and, with `restart`, started again at once);
# each client's tasks all answered (r1, d1); their summaries kept as lg_CLIENT_TAG.txt.
# Usage: load_kill TAG TASKS INSTR SEED CLIENT CLIENT VICTIM [restart]
load_kill() {
	local tag=$1 n=$2 instr=$3 seed=$4 x=$5 y=$6 v=$7 restart=${8:-} p1 p2 c
	rm -f "$TMP/lg_$x.csv" # client_started(): this load's
	PHASES+=("$tag:$(date +%s.%N)") # ran_rejected(): this load's runs from here
	loadgen "$x" "$n" 150 "$seed" --timeout 40 --instr "$instr" & p1=$!
	loadgen "$y" "$n" 150 $((seed + 1)) --timeout 40 --instr "$instr" & p2=$!
	client_started "$x" && sleep 3 # 3 s of its load
	kill -KILL "${APP[$v]}"
	wait "${APP[$v]}" 2>/dev/null
	APP[$v]=
	if [[ -n $restart ]]; then
		sleep "${NL_SO_RESTART_DELAY:-0}" # a slow start (CI: a verdict came before it)
		launch_app "$v" nlsc
		wait_app "$v" || r1=1
	fi
	wait $p1
	wait $p2
	for c in "$x" "$y"; do
		echo "# $tag, client of $c: $(summary "$TMP/lg_$c.log")"
		[[ $(val "$TMP/lg_$c.log" lost) == 0 && $(val "$TMP/lg_$c.log" sent) == "$n" ]] ||
			{ r1=1; d1+="$tag, client of $c: $(summary "$TMP/lg_$c.log" | cut -c1-400) | "; }
		cp "$TMP/lg_$c.log" "$TMP/lg_${c}_$tag.txt"
		cp "$TMP/lg_$c.csv" "$TMP/lg_${c}_$tag.csv" 2>/dev/null
	done
}

r1=1 r2=1 d1= d2= n_ran=0 words= direct=
PHASES=()
up=0
WOPT=() # the workers' bye lines count the sub-tasks they ran
for x in a b c; do launch_app "$x" nlsc; done
for x in a b c; do wait_app "$x" || up=1; done
if [[ $up == 0 ]]; then
	workers a
	workers b
	WOPT=(--standby "${IP[b]}")
	workers c
	WOPT=()
	wait_joined a 2 && wait_joined b 2 && wait_joined c 2 &&
		so_wait 20 "all(live(o, q) for o in 'abc' for q in 'abc')" || up=1
fi
if [[ $up == 0 ]]; then
	# 20 ms sub-tasks (2e9 instructions at 100e6/s, --work-scale 1e-3): at the kill, c's
	# workers hold sub-tasks of a's and b's tasks that run on or ended unanswered
	r1=0
	load_kill kill 1200 2e9 71 a b c
	# the origins settle c's tasks after the verdict and the hold: wait until none awaits
	so_wait 30 "p['a']['parked'] == 0 and p['b']['parked'] == 0" >/dev/null
	words=$(so_eval "$WORDS")
	echo "# (relayed, worker_words, late_words, asked_ran, awaiting, moved_dead) at a and b: $words"
	echo "# c's workers: $(grep -h "re-homed" "$TMP"/w?c.log | cut -c1-300 | tr '\n' '|')"
	# restart: c back first (its subtree given back, its workers home), then a quick restart
	if launch_app c nlsc && wait_app c &&
		so_wait 30 "all(live(o, q) for o in 'abc' for q in 'abc') and p['a']['subtree_at'][2] == 'c' and p['b']['subtree_at'][2] == 'c'" >/dev/null &&
		wait_home 30 2; then
		load_kill restart 1200 2e9 73 a b c restart
		echo "# c's workers: $(grep -h "rejoined" "$TMP"/w?c.log | cut -c1-300 | tr '\n' '|')"
		grep -h "wait for its workers" "$TMP"/app_[ab].log | sed 's/^/# /' | cut -c1-200
		so_wait 30 "p['a']['parked'] == 0 and p['b']['parked'] == 0" >/dev/null
		words=$(so_eval "$WORDS")
		echo "# after the restart (relayed, worker_words, late_words, asked_ran, awaiting, moved_dead) at a and b: $words"
		# no standby: b (which has none; a, the root, has no machines) killed under the load
		# of a's and c's clients; its workers (no --standby) tell the tasks' origins
		# straight after 3 s of silence (100 ms sub-tasks: b's machines are running some
		# when b dies)
		load_kill nostandby 900 1e10 75 a c b
		echo "# b's workers: $(grep -h "told the origins" "$TMP"/w?b.log | cut -c1-200 | tr '\n' '|')"
		$SO wait 30 "p['a']['parked'] == 0 and p['c']['parked'] == 0" $(ALL a c) >/dev/null
		direct=$($SO eval "tuple((p[x]['told_direct'], p[x]['worker_words'], p[x]['asked_ran']) for x in 'ac')" $(ALL a c))
		echo "# no standby (told_direct, worker_words, asked_ran) at a and c: $direct"
	else
		r1=1
		d1+="c restarted: not back with its workers home: $(tail -n 2 "$TMP"/w?c.log | cut -c1-160 | tr '\n' '|') | "
	fi
fi
stop_all || r2=1
if [[ $up == 0 ]]; then
	n_ran=$(ran)
	nc=0 nf=0 nr=0
	for f in "$TMP"/lg_?_kill.txt "$TMP"/lg_?_restart.txt "$TMP"/lg_?_nostandby.txt; do
		[[ -f $f ]] || continue
		nc=$((nc + $(val "$f" completed)))
		nf=$((nf + $(val "$f" failed)))
		nr=$((nr + $(val "$f" rejected_machine_lost)))
	done
	echo "# sub-tasks the workers ran $n_ran; tasks COMPLETE $nc, failed (ran in part) $nf, REJECT machine_lost $nr"
	# words that reached the origins: applied to a task held there (worker_words) or for one
	# answered already (late_words). Which of the two depends on what was in flight at the
	# kill instant (a few 20 ms sub-tasks, at times none: CI saw worker_words 0 at a and b)
	ww=$(python3 -c "import sys; w = eval(sys.argv[1]); print(sum(w[i][1] + w[i][2] for i in (0, 1)))" "$words" 2>/dev/null)
	td=$(python3 -c "import sys; w = eval(sys.argv[1]); print(w[0][0] + w[1][0])" "${direct:-}" 2>/dev/null)
	# which tasks answered REJECT ran (the workers' --runs rows): for a failure's detail
	rej_ran=$(ran_rejected "${PHASES[@]}")
	sed '$d' <<<"$rej_ran" | head -n 20 | sed 's/^/# answered REJECT, ran: /'
	if ran_once "$n_ran" "$nc" "$nf" && [[ ${ww:-0} -gt 0 && ${td:-0} -gt 0 &&
		$(tail -n 1 <<<"$rej_ran") == 0 ]]; then
		r2=0
	else
		d2="workers ran $n_ran sub-tasks for $nc COMPLETE and $nf failed tasks ($nr REJECT machine_lost; of those answered REJECT, $(tail -n 1 <<<"$rej_ran") ran: $(sed '$d' <<<"$rej_ran" | head -n 4 | cut -c1-300 | tr '\n' '|')); words that reached a and b ${ww:-?} (standby, restart: $words), told straight ${td:-?} (no standby: ${direct:-})"
	fi
fi
[[ $r1 == 0 && $r2 == 0 ]] || echo "# detail: $(so_why)" | tee /dev/stderr
echo "# asked: $((SECONDS - T0)) s"
say "scaleout_asked_every_task_of_a_and_b_answered" $r1 "${d1:-not up}"
say "scaleout_asked_no_task_answered_reject_ran" $r2 "${d2:-not up}"
nl_tap_done
