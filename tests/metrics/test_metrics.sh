#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Prometheus endpoint of the real appliance (TAP; docs/operations.md): nlevel in port mode
# on a veth pair (net_af_packet, its far end in a private namespace) with --metrics on
# 127.0.0.1, two nlevel-workers and nlevel-submit in the namespace running 60 real commands;
# /metrics scraped with curl before and after, checked by `promtool check metrics` and against
# what the submitter saw (every task completed, 8 machine slots up, I1 of nl_dp.h in the
# scrape); a bad --metrics and --metrics outside port mode refused with exit status 2; the
# readiness protocol of systemd (sd_notify(3): READY=1 once the port is up, STOPPING=1 at the
# end) on a NOTIFY_SOCKET of our own (systemd is not PID 1 here).
#   test_metrics.sh NLEVEL WORKER SUBMIT
# Skips (a "1..0 # SKIP" plan) when not root, without netns/veth or curl, or when the EAL cannot start;
# without promtool (package prometheus) the format check alone is skipped, and says so.
set -uo pipefail
NLEVEL=$1 WORKER=$2 SUBMIT=$3
ROOT=${NL_SRC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
CFG=$ROOT/config/farm.ini
id=$$
NS=nlm$id VA=nlma$id VB=nlmb$id PFX=nlm$id APP_IP=10.95.0.1 NS_IP=10.95.0.2
MPORT=$((20000 + id % 20000))
TMP=$(mktemp -d /tmp/nl-metrics.XXXXXX)
chmod 755 "$TMP"
APP= PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	[[ -n $APP ]] && { kill -INT "$APP" 2>/dev/null; wait "$APP" 2>/dev/null; }
	ip link del "$VA" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP" "/var/run/dpdk/$PFX"
}
trap cleanup EXIT
skip() { echo "1..0 # SKIP $*"; exit 0; } # TAP: a skip plan, status 0
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }

[[ $(id -u) == 0 ]] || skip "not root (a network namespace and a veth pair)"
command -v curl >/dev/null || skip "no curl"
ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace"
ip link add "$VA" type veth peer name "$VB" 2>/dev/null || skip "cannot create a veth pair"
ip link set "$VB" netns "$NS"
ip link set "$VA" up
ip netns exec "$NS" ip addr add "$NS_IP/24" dev "$VB"
ip netns exec "$NS" ip link set "$VB" up
ip netns exec "$NS" ip link set lo up
if command -v ethtool >/dev/null; then
	ethtool -K "$VA" tx off rx off >/dev/null 2>&1
	ip netns exec "$NS" ethtool -K "$VB" tx off rx off >/dev/null 2>&1
fi
ip netns exec "$NS" ip neigh replace "$APP_IP" lladdr "$(cat "/sys/class/net/$VA/address")" \
	dev "$VB" nud permanent
EAL=(--no-huge --no-pci --no-shconf --file-prefix "$PFX" -l 0-1 "--vdev=net_af_packet0,iface=$VA")

# bad input first: exit status 2, a clear message
"$NLEVEL" "${EAL[@]}" -- --config "$CFG" --metrics 127.0.0.1:99999 >"$TMP/bad1.log" 2>&1
rc=$?
if [[ $rc == 2 ]] && grep -q -- "--metrics '127.0.0.1:99999'" "$TMP/bad1.log"; then
	ok "--metrics 127.0.0.1:99999 refused (exit 2)"
elif grep -q "EAL initialisation failed" "$TMP/bad1.log"; then
	skip "the DPDK EAL cannot start here"
else
	nok "--metrics 127.0.0.1:99999 refused (exit $rc: $(tail -n 2 "$TMP/bad1.log"))"
fi
"$NLEVEL" --no-huge --no-pci --no-shconf --file-prefix "${PFX}e" -l 0-1 -- --config "$CFG" \
	--emulate --curve "$TMP/c" --metrics 127.0.0.1:$MPORT >"$TMP/bad2.log" 2>&1
check "--metrics with --emulate refused (exit 2)" test $? == 2

# systemd's side of sd_notify: a datagram socket that logs what it is told
python3 - "$TMP/notify.sock" "$TMP/notify.txt" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(120)
with open(sys.argv[2], "a") as f:
    while True:
        try:
            m = s.recv(4096).decode()
        except socket.timeout:
            break
        f.write(m.replace("\n", " ") + "\n")
        f.flush()
        if "STOPPING=1" in m:
            break
PY
PIDS+=($!)
for _ in $(seq 50); do [[ -S $TMP/notify.sock ]] && break; sleep 0.1; done
NOTIFY_SOCKET=$TMP/notify.sock "$NLEVEL" "${EAL[@]}" -- --config "$CFG" --scheme nlsc \
	--ip "$APP_IP" --idle-sleep-us 50 --metrics "127.0.0.1:$MPORT" --state-dir "$TMP" \
	>"$TMP/nlevel.log" 2>&1 &
APP=$!
URL=http://127.0.0.1:$MPORT/metrics
scrape() { curl -sf --max-time 10 "$URL"; }
val() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print "missing" }' "$2"; }
up=0
for _ in $(seq 200); do
	scrape >"$TMP/m0.txt" 2>/dev/null && [[ $(val nlevel_up "$TMP/m0.txt") == 1 ]] && { up=1; break; }
	kill -0 "$APP" 2>/dev/null || break
	sleep 0.1
done
if [[ $up == 0 ]]; then
	sed 's/^/# /' "$TMP/nlevel.log" | tail -n 8
	nok "the appliance serves /metrics with nlevel_up 1"
	echo "1..$n"
	exit 1
fi
ok "the appliance serves /metrics with nlevel_up 1 before any worker"
for _ in $(seq 50); do grep -q "READY=1" "$TMP/notify.txt" 2>/dev/null && break; sleep 0.1; done
check "sd_notify: READY=1 with MAINPID $APP ($(head -n 1 "$TMP/notify.txt" 2>/dev/null))" \
	grep -q "READY=1.*MAINPID=$APP" "$TMP/notify.txt"
check "no machine up before the workers join" test "$(val nlevel_machines_up "$TMP/m0.txt")" == 0

cat >"$TMP/cmds.conf" <<EOC
command true = /bin/true
command fail = /bin/false
output_dir = $TMP/out
EOC
for w in 1 2; do
	ip netns exec "$NS" "$WORKER" --appliance "$APP_IP" --id "$w" --allow-root --quiet \
		--mach '1e9:*' --mach '1e9:*' --mach '1e9:*' --mach '1e9:*' \
		--commands "$TMP/cmds.conf" >"$TMP/w$w.log" 2>&1 &
	PIDS+=($!)
done
for _ in $(seq 100); do
	scrape >"$TMP/m1.txt" 2>/dev/null
	[[ $(val nlevel_machines_up "$TMP/m1.txt") == 8 ]] && break
	sleep 0.1
done
check "8 machine slots up after two workers of 4 machines joined" \
	test "$(val nlevel_machines_up "$TMP/m1.txt")" == 8
ip netns exec "$NS" "$SUBMIT" --appliance "$APP_IP" --array 1-60 --wait --quiet \
	--submit-id 4242 true >"$TMP/submit.log" 2>&1
check "nlevel-submit: 60 tasks ok" test $? == 0
ip netns exec "$NS" "$SUBMIT" --appliance "$APP_IP" --array 1-5 --wait --quiet \
	--submit-id 4343 fail >"$TMP/submit2.log" 2>&1
scrape >"$TMP/m2.txt"
check "scrape after the run" test -s "$TMP/m2.txt"
acc=$(val nlevel_tasks_accepted_total "$TMP/m2.txt")
com=$(val nlevel_tasks_completed_total "$TMP/m2.txt")
fai=$(val nlevel_tasks_failed_total "$TMP/m2.txt")
inf=$(val nlevel_tasks_in_flight "$TMP/m2.txt")
check "65 tasks accepted and completed (accepted $acc, completed $com)" \
	test "$acc" == 65 -a "$com" == 65
check "I1 in the scrape: accepted = completed + failed + in flight ($acc = $com + $fai + $inf)" \
	test "$acc" == "$((com + fai + inf))"
check "farm batches: 1 done, 1 failed" \
	grep -qx 'nlevel_farm_batches{state="done"} 1' "$TMP/m2.txt" -a \
	grep -qx 'nlevel_farm_batches{state="failed"} 1' "$TMP/m2.txt"
check "farm tasks: 60 ok, 5 with an error exit" \
	grep -qx 'nlevel_farm_tasks{state="ok"} 60' "$TMP/m2.txt"
grep -qx 'nlevel_farm_tasks{state="error"} 5' "$TMP/m2.txt" || nok "5 error exits (got: $(grep 'farm_tasks{state="error"}' "$TMP/m2.txt"))"
dec=$(val nlevel_decide_duration_seconds_count "$TMP/m2.txt")
dsum=$(awk '$1 ~ /^nlevel_manager_tasks_out_total\{/ { s += $2 } END { print s + 0 }' "$TMP/m2.txt")
check "the decide-time histogram sampled 1..$dsum decisions ($dec; one in 16 is timed)" \
	test "$dec" -ge 1 -a "$dec" -le "$dsum"
dl=$(val nlevel_dispatch_latency_seconds_count "$TMP/m2.txt")
dls=$(val nlevel_dispatch_latency_seconds_sum "$TMP/m2.txt")
dl1=$(grep '^nlevel_dispatch_latency_seconds_bucket{le="1.048576"}' "$TMP/m2.txt" | awk '{ print $2 }')
check "the dispatch latency histogram counts the 65 tasks' first DISPATCH (count $dl, sum $dls s, $dl1 within 1.05 s)" \
	test "$dl" == 65 -a -n "$dl1"
fsum=$(awk '$1 ~ /^nlevel_manager_dispatched_total\{/ { s += $2 } END { print s + 0 }' "$TMP/m2.txt")
check "the managers dispatched 65 tasks in all ($fsum)" test "$fsum" == 65
check "per-machine series for 8 machines" \
	test "$(grep -c '^nlevel_machine_up{' "$TMP/m2.txt")" == 8
check "drops by cause and messages by type are there" \
	grep -q '^nlevel_frames_dropped_total{cause="' "$TMP/m2.txt"
if command -v promtool >/dev/null; then
	out=$(promtool check metrics <"$TMP/m2.txt" 2>&1)
	check "promtool check metrics: no complaint${out:+ ($(head -n 3 <<<"$out" | tr '\n' ' '))}" test -z "$out"
else
	ok "promtool check metrics # SKIP promtool not installed (apt-get install prometheus)"
fi
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/nothing")
check "another path answers 404" test "$code" == 404
kill -INT "$APP"
wait "$APP"
rc=$?
APP=
check "the appliance exits 0 on SIGINT with the endpoint open" test $rc == 0
for _ in $(seq 20); do grep -q "STOPPING=1" "$TMP/notify.txt" && break; sleep 0.1; done
check "sd_notify: STOPPING=1 at the end" grep -q "STOPPING=1" "$TMP/notify.txt"
curl -sf --max-time 2 "$URL" >/dev/null 2>&1
check "the endpoint is closed after the appliance stopped" test $? != 0
echo "1..$n"
[[ $fails == 0 ]]
