#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue #33, the worker side, end to end with both cores kept busy (`yes` x 2): the real
# appliance (net_af_packet on a veth pair into a namespace), real nlevel-workers and
# nlevel-submit (tests/chaos/chaos_lib.sh), and ps / pgrep / cgroup files to check that
# nothing a task started is left:
#   - `setsid sleep &`, `sleep &`, a 300-process fork: each ends with its task, nothing left
#     10 s later, the slot cgroup empty;
#   - a memory hog (python3) over --max-mem: killed (state oom), nothing left;
#   - --max-procs 50: a 300-process fork is held to 50, nothing left;
#   - --max-time 2 on `nap 100`: ends (state timeout, its cgroup killed) within 10 s;
#   - kill -9 of a worker: none of its commands left running (the keeper);
#   - kill -9 of a worker and its keeper: a restarted worker of the same id removes the
#     cgroups left from its previous life, killing what ran in them.
# Usage: test_contain.sh NLEVEL WORKER SUBMIT. TAP; skips when not root / no netns / no EAL.
set -u
SRC=${NL_SRC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/chaos/chaos_lib.sh"
chaos_init ct "$1" "$2" "$3"
chaos_busy 2
chaos_invariant_start # #34 item 5

# the commands (scripts the test writes; sleep durations mark each scenario's processes)
cat >"$CT/bg_setsid.sh" <<'EOF'
#!/bin/sh
setsid sleep 3001 >/dev/null 2>&1 &
echo started
EOF
cat >"$CT/bg_plain.sh" <<'EOF'
#!/bin/sh
sleep 3002 >/dev/null 2>&1 &
echo started
EOF
cat >"$CT/forkn.sh" <<'EOF'
#!/bin/bash
# start $1 background sleeps of $2 seconds, then exit
n=0
for ((i = 0; i < $1; i++)); do sleep "$2" 2>/dev/null & n=$((n + 1)); done
echo "started $n"
EOF
cat >"$CT/forkw.sh" <<'EOF'
#!/bin/bash
# start $1 background sleeps of $2 seconds, then wait for them
for ((i = 0; i < $1; i++)); do sleep "$2" & done
wait
EOF
cat >"$CT/hog.py" <<'EOF'
import sys, time
b = []
for i in range(int(sys.argv[1])):
    b.append(bytearray(1 << 20))  # 1 MiB each, touched
time.sleep(60)
EOF
chmod 755 "$CT"/*.sh "$CT/hog.py"
conf() { # worker number
	chaos_commands "$1" <<EOF
command bg_setsid = $CT/bg_setsid.sh
command bg_plain = $CT/bg_plain.sh
command forkn = $CT/forkn.sh {1} {2}
command forkw = $CT/forkw.sh {1} {2}
command hog = /usr/bin/python3 $CT/hog.py {1}
command nap = /bin/sleep {1}
EOF
}
conf 1
conf 2
chaos_start_app
chaos_start_worker 1 --max-mem 512M
chaos_start_worker 2 --max-procs 50 --max-time 2
chaos_wait_joined 2 6
say "two workers join (cgroup containment announced)" \
	"$([[ $(chaos_tel_key /nlevel/stats workers_joined) -ge 2 ]] && grep -q "containment: cgroup" "$CT/w1.log"; echo $?)" \
	"$(cat "$CT"/w*.log)"
W1_REQ='Name == "w1.0" || Name == "w1.1" || Name == "w1.2" || Name == "w1.3"'
W2_REQ='Name == "w2.0" || Name == "w2.1" || Name == "w2.2" || Name == "w2.3"'

# --- escapes end with their task --------------------------------------------------------------
for c in "bg_setsid 3001" "bg_plain 3002" "forkn 3003"; do
	set -- $c
	args=()
	[[ $1 == forkn ]] && args=(300 3003)
	t0=$(date +%s)
	chaos_sub --wait --quiet --requirements "$W1_REQ" --joblog "$CT/$1.csv" --array 1-1 "$1" \
		"${args[@]}" >"$CT/$1.out" 2>&1
	rc=$?
	chaos_gone "sleep $2" 10
	left=$?
	n_left=$(grep -c . <<<"$CHAOS_LEFT")
	say "$1: the task ends (rc $rc) and nothing it started is left 10 s later" \
		"$([[ $rc == 0 && $left == 0 ]]; echo $?)" \
		"rc $rc after $(($(date +%s) - t0)) s, $(cat "$CT/$1.out"), $n_left left: $(head -c 300 <<<"$CHAOS_LEFT")"
done
busy=0 slots=0
for f in $(chaos_cg_left 1 | grep '/m[0-9]*$'); do
	slots=$((slots + 1))
	[[ -s $f/cgroup.procs ]] && busy=$((busy + 1))
done
say "worker 1's slot cgroups are empty between tasks" "$([[ $busy == 0 && $slots -ge 4 ]]; echo $?)" \
	"$busy of $slots busy"

# --- memory hog over --max-mem 512M ------------------------------------------------------------
chaos_sub --wait --quiet --requirements "$W1_REQ" --joblog "$CT/hog.csv" --array 1-1 hog 1500 \
	>"$CT/hog.out" 2>&1
rc=$?
chaos_gone "hog.py" 10
left=$?
say "a memory hog over --max-mem 512M is killed (oom), the task fails, nothing left" \
	"$([[ $rc == 1 && $left == 0 ]] && grep -q "memory limit (oom)" "$CT/w1.log"; echo $?)" \
	"rc $rc, $(cat "$CT/hog.out"); left: $CHAOS_LEFT; $(grep -i "oom\|hog" "$CT/w1.log" | tail -3)"

# --- --max-procs 50 ---------------------------------------------------------------------------
chaos_sub --wait --quiet --requirements "$W2_REQ" --joblog "$CT/fork50.csv" --array 1-1 forkn \
	300 3005 >"$CT/fork50.out" 2>&1
chaos_gone "sleep 3005" 10
left=$?
started=$(cat "$CT"/out2/*.out 2>/dev/null | grep -o 'started [0-9]*' | tail -1)
say "--max-procs 50 holds a 300-process fork (pids.max), nothing left" "$left" \
	"$started; left: $(grep -c . <<<"$CHAOS_LEFT")"

# --- --max-time 2 -----------------------------------------------------------------------------
t0=$(date +%s) l0=$(chaos_app_lines) w0=$(wc -l <"$CT/w2.log")
chaos_sub --wait --quiet --requirements "$W2_REQ" --joblog "$CT/nap.csv" --submit-id 705 \
	--array 1-1 nap 100.123 >"$CT/nap.out" 2>&1
rc=$? dt=$(($(date +%s) - t0))
# the batch's own time (nlevel-submit's clock, first FSUBMIT to last answer): the wall time
# adds the start-up and exit of an ASan build, once 22 s on two busy cores (the task: 2.0 s)
span=$(chaos_elapsed "$CT/nap.out")
chaos_gone "sleep 100.123" 5
left=$?
# the state from the appliance's per-task records when nlevel-submit has them (issue #33
# item 5, helper farm), else from the worker's stderr
if chaos_has_submit_opt --tasks; then
	state=$(chaos_task_state 705 1)
else
	state=$(grep -q "time limit (timeout)" "$CT/w2.log" && echo timeout)
fi
# 10 s, plus what the host held of the appliance's I/O lcore and of the worker meanwhile, as
# they measured it (test_contain_v2.sh: once 22 s in CI)
held=$(chaos_held_s "$l0") wheld=$(chaos_worker_held_s 2 "$w0")
say "--max-time 2: nap 100 ends within 10 s (+ the host's holds of appliance and worker), state timeout, nothing left" \
	"$([[ -n $span && $rc != 0 && $left == 0 && $state == timeout ]] &&
		python3 -c "import sys; sys.exit(0 if $span < 10 + $held + $wheld else 1)"; echo $?)" \
	"rc $rc after ${span:-?} s (wall ${dt} s; I/O lcore held $held s, worker held $wheld s), state '$state'; $(tail -n +$((w0 + 1)) "$CT/w2.log" | grep -e timeout -e 'starting the command' -e 'turn of the loop' -e 'killed it' | tail -5); $(tail -1 "$CT/nap.csv"); $(cat "$CT/nap.out")"

# --- kill -9 of a worker: the keeper kills its commands ---------------------------------------
chaos_sub --quiet --requirements "$W1_REQ" --submit-id 700 --array 1-4 forkw 5 3006 \
	>/dev/null 2>&1
for _ in $(seq 100); do
	[[ $(pgrep -fc "sleep 3006") -ge 5 ]] && break
	sleep 0.1
done
n_before=$(pgrep -fc "sleep 3006")
kill -9 "${CW_PID[1]}"
chaos_gone "sleep 3006" 10
left=$?
cgs=$(chaos_cg_left 1)
say "kill -9 of a worker leaves none of its commands running, nor its cgroups" \
	"$([[ $n_before -ge 5 && $left == 0 && -z $cgs ]]; echo $?)" \
	"$n_before before; left: $(grep -c . <<<"$CHAOS_LEFT"); cgroups: $cgs"

# --- kill -9 of worker and keeper: the next life cleans up ------------------------------------
# (worker 2 again, restarted without --max-time: worker 1's tasks of submit 700 wait for it)
kill "${CW_PID[2]}"
wait "${CW_PID[2]}" 2>/dev/null
chaos_start_worker 2
chaos_wait_log 2 "joined" 2
sleep 1.5 # its commands and machine records reach the appliance
chaos_sub --wait --quiet --requirements "$W2_REQ" --submit-id 702 --array 1-2 forkw 3 3008 \
	>"$CT/702.out" 2>&1 &
CHAOS_EXTRA_PIDS+=($!)
# (the wait for the tasks to start, not a bound of the product: 30 s, as two busy cores and
# another appliance's tests beside this one once kept them from starting within 10 s)
for _ in $(seq 300); do
	[[ $(pgrep -fc "sleep 3008") -ge 3 ]] && break
	sleep 0.1
done
keeper=$(pgrep -x nlevel-keeper -P "${CW_PID[2]}" | head -1)
n_before=$(pgrep -fc "sleep 3008")
# both stopped first, then killed: killed one after the other, the keeper could see the
# worker's pipe end between the two signals and kill the commands this check wants left
kill -STOP "${CW_PID[2]}" $keeper 2>/dev/null
kill -9 "${CW_PID[2]}" $keeper 2>/dev/null
sleep 1
n_mid=$(pgrep -fc "sleep 3008")
stale=$(chaos_cg_left 2 | grep -c .)
chaos_start_worker 2
chaos_gone "sleep 3008" 10
left=$?
say "worker + keeper killed: their sleeps survive in stale cgroups; the restarted worker removes them" \
	"$([[ $n_before -ge 3 && $n_mid -ge 3 && -n $keeper && $stale -ge 1 && $left == 0 ]] &&
		grep -q "[1-9][0-9]* stale removed" "$CT/w2.log"; echo $?)" \
	"before $n_before, after the kills $n_mid (keeper '$keeper'), $stale stale cgroups, left $(grep -c . <<<"$CHAOS_LEFT"); $(grep stale "$CT/w2.log" | tail -1); $(cat "$CT/702.out")"
chaos_invariant_check
nl_tap_done
