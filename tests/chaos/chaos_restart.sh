#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue #34 items 1 and 2, the journal and idempotent resends, with both cores kept busy. Every
# run of a command is counted by the command itself (a line in $CT/runs/INDEX):
#   - the appliance SIGKILLed once 24 tasks of `--array 1-400 --wait mark {} 0.1` ran, and
#     restarted 5 s later with the same options (same --state-dir), its workers not restarted: nlevel-submit
#     ends with 400 ok, each index ran exactly once;
#   - the appliance and nlevel-submit SIGKILLed together mid-batch: the restarted appliance
#     admits the journal's tasks by itself (no resend), each index runs exactly once, and
#     `--wait ID` finds every task ok;
#   - split tasks (3 sub-tasks each) with the appliance SIGKILLed and restarted: each sub-task
#     runs exactly once (journal table fdisp sends each back to its worker);
#   - nlevel-submit SIGKILLed and --resume'd: no index twice;
#   - a worker SIGKILLed and restarted: every task answered ok or failed, none twice.
# Usage: chaos_restart.sh NLEVEL WORKER SUBMIT. TAP; skips when not root or without netns.
. "${NL_SRC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/chaos/chaos_lib.sh"
chaos_init rs "$@"
field() { sed -n "s/.*[ ^]$2=\([0-9.]*\).*/\1/p" <<<"$1" | tail -n 1; }
mkdir -m 1777 "$CT/runs"
cat >"$CT/mark.sh" <<EOS
#!/bin/sh
# one line per run of task \$1, written by the command itself; then sleep \$2 seconds
echo "\$\$" >>"$CT/runs/\$1"
exec /bin/sleep "\$2"
EOS
chmod 755 "$CT/mark.sh"
for w in 1 2; do
	printf 'command mark = %s {1} {2}\n' "$CT/mark.sh" | chaos_commands $w
done
# indexes LO..HI that ran (at least once; twice)
n_ran() { local i n=0; for ((i = ${1:-1}; i <= ${2:-400}; i++)); do [[ -f $CT/runs/$i ]] && n=$((n + 1)); done; echo $n; }
n_twice() { local i n=0; for ((i = ${1:-1}; i <= ${2:-400}; i++)); do [[ -f $CT/runs/$i ]] && (($(wc -l <"$CT/runs/$i") > 1)) && n=$((n + 1)); done; echo $n; }
wait_ran() { local i; for i in $(seq 600); do (($(n_ran "$1" "$2") >= $3)) && return 0; sleep 0.1; done; return 1; }
chaos_busy 2
chaos_invariant_start
echo "# two workers of 4 machines each; 400 tasks of 0.1 s; the appliance SIGKILLed mid-batch"
chaos_up
say "the appliance and two workers up" $?
chaos_sub --wait --quiet --submit-id 7001 --joblog "$CT/7001.csv" --array 1-400 mark {} 0.1 \
	>"$CT/7001.out" 2>&1 &
sp=$!
# SIGKILL mid-batch: once 24 indexes ran (2-3 s near idle; not a fixed sleep, so a loaded host
# cannot kill it before the batch started)
wait_ran 1 400 24
kill -9 "$CHAOS_APP"; wait "$CHAOS_APP" 2>/dev/null; CHAOS_APP=
ran_at_kill=$(n_ran)
echo "# killed with $ran_at_kill indexes run; restart in 5 s"
sleep 5
chaos_up
say "the appliance restarted (same --state-dir), the workers rejoined" $?
wait $sp
rc=$?
out=$(cat "$CT/7001.out")
sed 's/^/# /' "$CT/7001.out" | tail -n 5
say "nlevel-submit exits 0" "$([[ $rc == 0 ]]; echo $?)" "got $rc"
say "400 ok" "$([[ $(field "$out" ok) == 400 ]]; echo $?)" "got ok=$(field "$out" ok)"
say "every index ran" "$([[ $(n_ran) == 400 ]]; echo $?)" "got $(n_ran)"
say "no index ran twice" "$([[ $(n_twice) == 0 ]]; echo $?)" "got $(n_twice) twice"

echo "# the appliance and nlevel-submit SIGKILLed together mid-batch (120 tasks of 0.2 s); no resend"
nsenter --net="/var/run/netns/$CNS" "$CSUBMIT" --appliance "$CAPP_IP" --wait --quiet \
	--submit-id 7004 --array 3001-3120 mark {} 0.2 >/dev/null 2>&1 &
sp=$!
wait_ran 3001 3120 24
kill -9 "$sp" "$CHAOS_APP"
wait "$sp" "$CHAOS_APP" 2>/dev/null
CHAOS_APP=
ran_at_kill=$(n_ran 3001 3120)
chaos_up
say "the appliance restarted with the submitter gone, the workers rejoined" $?
# the restarted appliance admits the journal's queued and running tasks by itself; --wait ID
# follows the batch from its records until every task ended (exit 0: all ok)
# (chaos_sub's 180 s bound: without the journal's tasks the batch would wait for ever)
out=$(chaos_sub --wait 7004 2>&1)
rc=$?
echo "# $ran_at_kill ran at the kill; $(grep -o '[0-9]* admitted again' "$CT/app.log")"
say "without a resend the restarted appliance runs the rest: --wait 7004 ends, every task ok" \
	"$([[ $rc == 0 ]]; echo $?)" "rc $rc: $(tail -n 3 <<<"$out")"
say "... every index ran, none twice" \
	"$([[ $(n_ran 3001 3120) == 120 && $(n_twice 3001 3120) == 0 ]]; echo $?)" \
	"ran $(n_ran 3001 3120), twice $(n_twice 3001 3120)"

echo "# split tasks (60 tasks of 3 sub-tasks of 0.3 s): the appliance SIGKILLed mid-batch, restarted"
# runs of indexes LO..HI (lines); indexes whose runs are not exactly K
n_runs() { local i n=0; for ((i = $1; i <= $2; i++)); do [[ -f $CT/runs/$i ]] && n=$((n + $(wc -l <"$CT/runs/$i"))); done; echo $n; }
n_not() { local i n=0; for ((i = $1; i <= $2; i++)); do (($( [[ -f $CT/runs/$i ]] && wc -l <"$CT/runs/$i" || echo 0) != $3)) && n=$((n + 1)); done; echo $n; }
chaos_sub --wait --quiet --submit-id 7005 --joblog "$CT/7005.csv" --split 3 --array 4001-4060 \
	mark {} 0.3 >"$CT/7005.out" 2>&1 &
sp=$!
for _ in $(seq 600); do (($(n_runs 4001 4060) >= 30)) && break; sleep 0.1; done
kill -9 "$CHAOS_APP"; wait "$CHAOS_APP" 2>/dev/null; CHAOS_APP=
runs_at_kill=$(n_runs 4001 4060)
sleep 2
chaos_up
say "split tasks: the appliance restarted, the workers rejoined" $?
wait $sp
rc=$?
out=$(cat "$CT/7005.out")
echo "# $runs_at_kill sub-task runs at the kill; $(grep -o 'journal read back.*' "$CT/app.log" | tail -n 1 | cut -c1-200)"
sed 's/^/# /' "$CT/7005.out" | tail -n 2
say "split tasks across a restart: all 60 ok, each sub-task ran exactly once (3 runs per index)" \
	"$([[ $rc == 0 && $(field "$out" ok) == 60 && $(n_not 4001 4060 3) == 0 ]]; echo $?)" \
	"rc $rc ok=$(field "$out" ok); $(n_not 4001 4060 3) indexes without exactly 3 runs ($(for i in $(seq 4001 4060); do n=$(wc -l <"$CT/runs/$i" 2>/dev/null || echo 0); ((n != 3)) && echo -n "$i:$n "; done))"

echo "# nlevel-submit SIGKILLed mid-batch (200 tasks of 0.2 s), then --resume --joblog"
rows() { python3 -c "import csv,sys; print(' '.join(r['index'] for r in csv.DictReader(open(sys.argv[1])) if r['result'] == 'ok'))" "$1"; }
# not through chaos_sub: $! must be nlevel-submit itself
nsenter --net="/var/run/netns/$CNS" "$CSUBMIT" --appliance "$CAPP_IP" --wait --quiet \
	--submit-id 7002 --joblog "$CT/7002.csv" --array 1001-1200 mark {} 0.2 >/dev/null 2>&1 &
sp=$!
wait_ran 1001 1200 24
kill -9 "$sp"
wait "$sp" 2>/dev/null
before=$(rows "$CT/7002.csv" | wc -w)
chaos_sub --wait --quiet --resume --joblog "$CT/7002.csv" --array 1001-1200 mark {} 0.2 \
	>"$CT/7002.out" 2>&1
rc=$?
out=$(cat "$CT/7002.out")
sed 's/^/# /' "$CT/7002.out" | tail -n 2
say "--resume after nlevel-submit was killed: exit 0, every index ends ok" \
	"$([[ $rc == 0 && $(rows "$CT/7002.csv" | tr ' ' '\n' | sort -u | grep -c .) == 200 ]]; echo $?)" \
	"rc $rc, $before ok before the kill, $(rows "$CT/7002.csv" | tr ' ' '\n' | sort -u | grep -c .) ok at the end"
say "--resume: every index ran, none twice (tasks still running at the kill are answered, not run again)" \
	"$([[ $(n_ran 1001 1200) == 200 && $(n_twice 1001 1200) == 0 ]]; echo $?)" \
	"ran $(n_ran 1001 1200), twice $(n_twice 1001 1200)"

echo "# worker 2 SIGKILLed mid-batch (200 tasks of 0.2 s, no --retries) and restarted"
chaos_sub --wait --quiet --submit-id 7003 --joblog "$CT/7003.csv" --array 2001-2200 mark {} 0.2 \
	>"$CT/7003.out" 2>&1 &
sp=$!
wait_ran 2001 2200 24
kill -9 "${CW_PID[2]}"
wait "${CW_PID[2]}" 2>/dev/null
CW_PID[2]=
chaos_start_worker 2
wait $sp
rc=$?
out=$(cat "$CT/7003.out")
sed 's/^/# /' "$CT/7003.out" | tail -n 2
ok=$(field "$out" ok) failed=$(field "$out" failed)
say "worker SIGKILLed: every task answered, ok or failed (machine_lost), none lost" \
	"$([[ -n $ok && $((ok + failed)) == 200 && $ok -gt 0 ]]; echo $?)" "ok=$ok failed=$failed rc $rc"
say "worker SIGKILLed: no index ran twice; every ok one ran" \
	"$([[ $(n_twice 2001 2200) == 0 && $(n_ran 2001 2200) -ge $ok ]]; echo $?)" \
	"twice $(n_twice 2001 2200), ran $(n_ran 2001 2200), ok $ok"
chaos_invariant_check
nl_tap_done
