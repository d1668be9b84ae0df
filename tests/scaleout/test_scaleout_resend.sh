#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A client's resend at the standby (issue #36, docs/scale-out.md "A client's resend at the
# standby"), as root: the three appliances of tests/scaleout/scaleout.ini with
# mutual standbys (`[appliance c] standby = b`, `[appliance b] standby = c`) and local entry
# (the default), c's workers and c's client knowing b (--standby), b's workers knowing c, both
# cores kept busy. Every worker offers every vector: b's own workers, which HELLO b every
# second (--standby), could fill the slots b adopts from c; those go to c's failing-over
# workers first (NL_HELLO_F_FAILOVER), else c's workers would find none and tell b nothing. c's client sends 600 tasks of two 50 ms
# sub-tasks that only c's machines hold (they enter at c and never cross), 60 a second; c is
# killed (SIGKILL) 3 s after its client's first task. c's client fails over to b and sends what c left unanswered again,
# flagged resend; c's workers fail over to b and tell it what became of each sub-task of c's
# own clients' tasks (the client-origin block of c's DISPATCHes); b holds each resend until
# they have told, runs those of which nothing ran, and answers the others from the words.
# Checks:
#   1  every task of c's client is answered once (lost 0), and b held its resends
#   2  no task ran twice: the sub-tasks the six workers ran (their bye lines) are at least two
#      per task answered COMPLETE and at most two per task answered COMPLETE or failed (a
#      task answered from the words with reason machine_lost ran in part); some resends were
#      answered from the words (b's resends_answered > 0: they had run at c)
# Usage: test_scaleout_resend.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or
# without network namespaces.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
. "$SRC/tests/scaleout/nl_so_net.sh"
CFG=$TMP/resend.ini
awk '{ sub(/^entry = tree$/, "entry = local"); print }
	/^\[appliance c\]/ { print "standby = b" } /^\[appliance b\]/ { print "standby = c" }' \
	"$SRC/tests/scaleout/scaleout.ini" >"$CFG"
T0=$SECONDS
busy2 # both cores busy, as issues #34 and #36 ask of live tests
c_tasks "$TMP/c_tasks.txt"

r1=1 r2=1 d1= d2= up=0
WOPT_OF=([b]="--standby ${IP[c]}" [c]="--standby ${IP[b]}")
up_nlsc a b c || up=1
if [[ $up == 0 ]]; then
	replay_c b
	client_started c && sleep 3 # 3 s of its load
	kill_app c
	wait $LC
	echo "# client of c: $(summary "$TMP/lg_c.log" | cut -c1-600)"
	grep -h "silent for" "$TMP/lg_c.log" | sed 's/^/# /' | cut -c1-200
	echo "# c's workers: $(grep -h "re-homed" "$TMP"/w?c.log | cut -c1-300 | tr '\n' '|')"
	res=$(resend_at b "(p['b']['entry_local'],)")
	echo "# at b (client_words, resends_held, resend_holding, resends_run, resends_answered, adoptions, entry_local): $res"
	r1=0
	answered_once "$TMP/lg_c.log" 600 || { r1=1; d1="client of c: $(summary "$TMP/lg_c.log" | cut -c1-400)"; }
	held=$(nth "$res" 1)
	answered=$(nth "$res" 4)
	[[ ${held:-0} -gt 0 ]] || { r1=1; d1+=" b held no resend ($res)"; }
fi
stop_all || r2=1
if [[ $up == 0 ]]; then
	if ran_c "$TMP/lg_c.log" && [[ ${answered:-0} -gt 0 ]]; then
		r2=0
	else
		d2="workers ran $N_RAN sub-tasks for $NC COMPLETE and $NF failed tasks; resends answered from the words at b: ${answered:-?}"
	fi
fi
[[ $r1 == 0 && $r2 == 0 ]] || echo "# detail: $(so_why)" | tee /dev/stderr
echo "# resend: $((SECONDS - T0)) s"
say "scaleout_resend_every_task_of_the_killed_appliances_client_answered" $r1 "${d1:-not up}"
say "scaleout_resend_no_task_ran_twice" $r2 "${d2:-not up}"
nl_tap_done
