#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nlevel-worker's start-up purge of an earlier life's cgroups (tools/worker/nl_cgroup.c) on
# the real cgroup v1 file systems, when a killed process cannot leave its cgroup at once.
# A SIGKILLed process leaves its cgroups only when it runs its exit; on a loaded host a
# cgroup write elsewhere once held that for 12 s, the purge gave up after about 2 s and the
# restarted worker said "0 stale removed" beside 20 stale folders (a CI run of
# tests/chaos/test_contain.sh). Here a v1 freezer cgroup of the test's own holds the stale
# process: SIGKILL does not end a frozen v1 task until it is thawed, which the test does
# 4 s after the worker started. The worker must wait for it, remove every stale folder and
# count them, and kill what it found; a process still held after 30 s is left and said. No
# appliance is needed: the purge runs before the worker's first HELLO (--appliance is an
# address where nothing listens).
# Usage: test_cgroup_purge.sh WORKER. TAP; skips when not root or without the v1 freezer.
set -u
SRC=${NL_SRC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/common/nl_tap.sh"
WORKER=$1
CGR=/sys/fs/cgroup
[[ $(id -u) == 0 ]] || { echo "1..0 # SKIP not root"; exit 0; }
[[ -w $CGR/freezer && -d $CGR/pids && -d $CGR/memory && -d $CGR/cpuacct ]] ||
	{ echo "1..0 # SKIP no cgroup v1 freezer, pids, memory and cpuacct hierarchies"; exit 0; }

ID=$((40000 + $$ % 20000))
APP=127.0.0.1:9
NAME=worker-$ID@$APP
HOLD=$CGR/freezer/nltest-hold-$$
T=$(mktemp -d /dev/shm/nlpurge.XXXXXX)
VICTIM= WPID=
cleanup() {
	[[ -d $HOLD ]] && echo THAWED >"$HOLD/freezer.state" 2>/dev/null
	[[ -n $VICTIM ]] && kill -9 "$VICTIM" 2>/dev/null
	[[ -n $WPID ]] && kill -9 "$WPID" 2>/dev/null
	sleep 0.5
	for c in freezer pids memory cpuacct; do
		rmdir "$CGR/$c/nlevel/$NAME"/m* "$CGR/$c/nlevel/$NAME" 2>/dev/null
	done
	rmdir "$HOLD" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# stale_slot SLOT: an earlier life's slot folder in the 4 hierarchies, a process (VICTIM) in
# it in pids, memory and cpuacct, frozen in the test's own freezer cgroup HOLD and SIGKILLed:
# it stays (state D) until thawed. Status 1 when a folder cannot be made.
stale_slot() {
	for c in freezer pids memory cpuacct; do
		mkdir -p "$CGR/$c/nlevel/$NAME/$1" || return 1
	done
	sleep 1000 &
	VICTIM=$!
	for c in pids memory cpuacct; do
		echo "$VICTIM" >"$CGR/$c/nlevel/$NAME/$1/cgroup.procs"
	done
	echo "$VICTIM" >"$HOLD/cgroup.procs"
	echo FROZEN >"$HOLD/freezer.state"
	for _ in $(seq 50); do
		[[ $(cat "$HOLD/freezer.state") == FROZEN ]] && break
		sleep 0.1
	done
	kill -9 "$VICTIM" 2>/dev/null
	sleep 0.3
}
# start_worker LOG [THAW_AFTER_S]: the worker with 2 slots (WPID), the test's hold thawed
# THAW_AFTER_S s later if given; then its start-up line (line; t = seconds to it), 60 s at most
start_worker() {
	local t0 t1
	t0=$(date +%s.%N)
	"$WORKER" --appliance "$APP" --id "$ID" --mach 1e9:'*' --mach 1e9:'*' \
		--cgroup v1:$CGR --allow-root >"$T/$1" 2>&1 &
	WPID=$!
	[[ -n ${2:-} ]] && sleep "$2" && echo THAWED >"$HOLD/freezer.state"
	line=
	for _ in $(seq 600); do # its purge waits 30 s at most
		line=$(grep -m1 "containment:" "$T/$1")
		[[ -n $line ]] && break
		sleep 0.1
	done
	t1=$(date +%s.%N)
	t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

mkdir "$HOLD" || { echo "1..0 # SKIP cannot make a freezer cgroup"; exit 0; }
# an earlier life's slot m5 (this life has 2 slots: m5 is a folder no new slot reuses)
stale_slot m5 || { echo "1..0 # SKIP cannot make cgroups"; exit 0; }
say "the stale process is frozen and SIGKILLed, still there" \
	"$([[ $(cat "$HOLD/freezer.state") == FROZEN && -d /proc/$VICTIM ]]; echo $?)" \
	"freezer.state $(cat "$HOLD/freezer.state"), $(grep State /proc/$VICTIM/status 2>/dev/null)"

start_worker w.log 4
left= # (before the worker ends: its own end removes its cgroups)
for c in freezer pids memory cpuacct; do
	[[ -d $CGR/$c/nlevel/$NAME/m5 ]] && left+=" $c"
done
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
WPID=
wait "$VICTIM" 2>/dev/null
say "the restarted worker waited for the thaw and removed the stale slot in all 4 hierarchies" \
	"$([[ -z $left ]] && grep -q "(4 stale removed)" <<<"$line"; echo $?)" \
	"line after $t s: '$line'; left in:${left:- none}"
say "the stale process is gone" "$([[ ! -d /proc/$VICTIM ]]; echo $?)" "pid $VICTIM"

# a stale process that stays frozen: the purge gives up after 30 s and says what it left
# (the freezer hierarchy's m6 holds nothing, the hold being the test's own freezer cgroup)
stale_slot m6
start_worker w2.log
echo THAWED >"$HOLD/freezer.state" # (else the worker's own end waits 30 s for m6 too)
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
WPID=
say "a stale process held past 30 s: the worker starts, says it removed 1 and left 3 not empty" \
	"$(grep -q "containment: cgroup v1, .*(1 stale removed, 3 still not empty after 30 s and left)" <<<"$line"; echo $?)" \
	"line after $t s: '$line'"
nl_tap_done
