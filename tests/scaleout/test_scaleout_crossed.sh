#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A client's resend at the standby when its task had crossed to another appliance (issue #36,
# docs/scale-out.md "A client's resend at the standby"), as root: the three appliances of
# tests/scaleout/scaleout.ini with `[appliance c] standby = a` and local entry (the default),
# c's workers and c's client knowing a (--standby), both cores kept busy. Under NLSC a owns the
# root, b the subtree M(1,0) (vectors 00, 01), c M(1,1) (10, 11). c's client sends 600 tasks of
# two sub-tasks, 60 a second: five in six of c's vectors (50 ms; they enter at c, run on c's
# workers), one in six of b's (500 ms; they cross: c hands them to the root at a, a on to b; b
# runs them for c). c is killed (SIGKILL) 3 s after its client's first task. c's client fails over to a and sends what c left unanswered
# again, flagged resend. c's workers fail over to a and tell it what became of the sub-tasks c
# DISPATCHed; b, when it declares c dead, tells a what became of c's clients' tasks that had
# crossed to it (HANDBACK reason client: running, or ended with their sub-tasks done). a holds
# each resend until they have told, runs those of which nothing ran, answers the others from
# the words.
# Checks:
#   1  every task of c's client is answered once (lost 0), and a held its resends
#   2  no task ran twice: the sub-tasks the six workers ran (their bye lines) are at least two
#      per task answered COMPLETE and at most two per task answered COMPLETE or failed; b told
#      a words on crossed tasks (crossed_told > 0) and a answered resends from the words
# Usage: test_scaleout_crossed.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or
# without network namespaces.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
. "$SRC/tests/scaleout/nl_so_net.sh"
CFG=$TMP/crossed.ini
awk '{ sub(/^entry = tree$/, "entry = local"); print } /^\[appliance c\]/ { print "standby = a" }' \
	"$SRC/tests/scaleout/scaleout.ini" >"$CFG"
T0=$SECONDS
busy2 # both cores busy, as issues #34 and #36 ask of live tests
# needs (bit k = resource k + 1): 1 and 3 are c's vectors 10 and 11, 0 and 2 b's 00 and 01.
# 600 tasks at 60/s, two sub-tasks each: of c's vectors 5e9 instructions (50 ms at 100e6/s,
# --scale 1e-3); one in six of b's, 5e10 (500 ms: about five of them run at b at any time,
# 10 of b's 12 slots busy)
awk 'BEGIN { for (i = 0; i < 600; i++)
	if (i % 6 == 0) printf "%.4f %d 1e11 0 2\n", i / 60, 2 * (i % 12 == 0)
	else printf "%.4f %d 1e10 0 2\n", i / 60, 1 + 2 * (i % 2) }' >"$TMP/c_tasks.txt"

r1=1 r2=1 d1= d2= up=0
WOPT_OF=([c]="--standby ${IP[a]}")
up_nlsc a b c || up=1
if [[ $up == 0 ]]; then
	replay_c a
	client_started c && sleep 3 # 3 s of its load
	kill_app c
	wait $LC
	echo "# client of c: $(summary "$TMP/lg_c.log" | cut -c1-600)"
	grep -h "silent for" "$TMP/lg_c.log" | sed 's/^/# /' | cut -c1-200
	echo "# c's workers: $(grep -h "re-homed" "$TMP"/w?c.log | cut -c1-300 | tr '\n' '|')"
	res=$(resend_at a "(p['b']['crossed_told'], p['b']['foreign'])" b)
	echo "# at a (client_words, resends_held, resend_holding, resends_run, resends_answered, adoptions), at b (crossed_told, foreign): $res"
	r1=0
	answered_once "$TMP/lg_c.log" 600 || { r1=1; d1="client of c: $(summary "$TMP/lg_c.log" | cut -c1-400)"; }
	held=$(nth "$res" 1)
	answered=$(nth "$res" 4)
	told=$(nth "$res" 6)
	[[ ${held:-0} -gt 0 ]] || { r1=1; d1+=" a held no resend ($res)"; }
fi
stop_all || r2=1
if [[ $up == 0 ]]; then
	if ran_c "$TMP/lg_c.log" && [[ ${answered:-0} -gt 0 && ${told:-0} -gt 0 ]]; then
		r2=0
	else
		d2="workers ran $N_RAN sub-tasks for $NC COMPLETE and $NF failed tasks; resends answered from the words at a: ${answered:-?}; words b told a: ${told:-?}"
	fi
fi
[[ $r1 == 0 && $r2 == 0 ]] || echo "# detail: $(so_why)" | tee /dev/stderr
echo "# crossed: $((SECONDS - T0)) s"
say "scaleout_crossed_every_task_of_the_killed_appliances_client_answered" $r1 "${d1:-not up}"
say "scaleout_crossed_no_task_ran_twice" $r2 "${d2:-not up}"
nl_tap_done
