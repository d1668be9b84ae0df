#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# README's task-farm section after `meson install` (TAP; root): the installed nlevel-farm-up
# (under another --name and address than the default, so a user's farm is left alone) starts
# the appliance and two workers, the installed nlevel-submit runs an --array of 200 hello
# commands from the namespace exactly as README shows, the output files say "hello task-42",
# /metrics counts the tasks, nlevel-farm-down removes the namespace, the veth pair and the
# state folder. Skips (a TAP skip plan) when not root, without netns/veth or curl, or when DPDK cannot start.
set -uo pipefail
B=${NL_BUILD_ROOT:?}
TMP=$(mktemp -d /tmp/nl-farmup.XXXXXX)
chmod 755 "$TMP"
id=$$
NAME=nlu$((id % 100000)) IP=10.93.0.1 MPORT=$((20000 + (id + 7) % 20000))
R=
cleanup() {
	[[ -n $R ]] && NLEVEL_FARM_DIR=$TMP/run "$R/bin/nlevel-farm-down" --name "$NAME" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
skip() { echo "1..0 # SKIP $*"; exit 0; } # TAP: a skip plan, status 0
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
[[ $(id -u) == 0 ]] || skip "not root"
command -v curl >/dev/null || skip "no curl"
[[ -x $B/dataplane/nlevel && -x $B/tools/submit/nlevel-submit ]] || skip "no appliance or nlevel-submit built"
prefix=$(meson introspect "$B" --buildoptions | python3 -c '
import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
meson install -C "$B" --destdir "$TMP/root" --no-rebuild --quiet >"$TMP/install.log" 2>&1 ||
	{ sed 's/^/# /' "$TMP/install.log" | tail; echo "not ok 1 - meson install"; echo "1..1"; exit 1; }
R=$TMP/root$prefix
export PATH=$R/bin:$PATH ASAN_OPTIONS=detect_leaks=0
NLEVEL_FARM_DIR=$TMP/run nlevel-farm-up --name "$NAME" --ip "$IP" --metrics "127.0.0.1:$MPORT" \
	>"$TMP/up.log" 2>&1
rc=$?
if [[ $rc != 0 ]] && grep -q "EAL initialisation failed\|cannot create network namespace\|cannot create veth" "$TMP/up.log"; then
	sed 's/^/# /' "$TMP/up.log" | tail -n 5
	skip "no namespace/veth or the DPDK EAL cannot start here"
fi
check "nlevel-farm-up --name $NAME: up, 8 machines${rc:+ (exit $rc)}" grep -q "up: 8 machines" "$TMP/up.log"
[[ $rc == 0 ]] || sed 's/^/# /' "$TMP/up.log" | tail -n 20
# README, "Task farms for users", with --name's namespace and address
ip netns exec "$NAME" nlevel-submit --appliance "$IP" --key "$TMP/run/site.key" \
	--array 1-200 --wait --quiet --joblog "$TMP/log.csv" hello task-{} >"$TMP/submit.log" 2>&1
check "nlevel-submit --array 1-200 --wait hello task-{}: exit 0" test $? == 0
check "the output of task 42 says 'hello task-42'" \
	grep -qx "hello task-42" $TMP/run/out/*_42.0.out
check "the job log has 200 rows" test "$(($(wc -l <"$TMP/log.csv") - 1))" == 200
done_n=$(curl -sf "http://127.0.0.1:$MPORT/metrics" | awk '$1 == "nlevel_tasks_completed_total" { print $2 }')
check "/metrics: 200 tasks completed ($done_n)" test "$done_n" == 200
ip netns exec "$NAME" nlevel-submit --appliance "$IP" --key "$TMP/run/site.key" --array 1-3 \
	--submit-id 77 nap 0.1 >"$TMP/bg.log" 2>&1
check "a batch in the background: 'Submitted batch 77'" grep -q "Submitted batch 77" "$TMP/bg.log"
check "the farm's records are in its own folder (--state-dir), not in /var/lib/nlevel" \
	test -n "$(ls "$TMP"/run/farm-*.sqlite 2>/dev/null)" -a ! -e "/var/lib/nlevel/farm-${IP}_7477.sqlite"
NLEVEL_FARM_DIR=$TMP/run nlevel-farm-down --name "$NAME" >"$TMP/down.log" 2>&1
check "nlevel-farm-down: exit 0" test $? == 0
check "the namespace and the veth pair are gone" \
	test -z "$(ip netns list | grep -w "$NAME")" -a ! -e "/sys/class/net/${NAME}a"
check "the state folder is removed" test ! -e "$TMP/run"
R=
echo "1..$n"
[[ $fails == 0 ]]
