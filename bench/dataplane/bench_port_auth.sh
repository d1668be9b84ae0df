#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Port-mode throughput of the live appliance with and without --key (docs/benchmarks.md "Frame
# authentication"), as root: nlevel on net_af_packet over a veth pair whose far end is in a
# private network namespace (nlq<pid>), 4 nlevel-workers of near-instant machines and one
# nlevel-loadgen offering RATE tasks/s of L = 2 for SECONDS; alternating runs without and with
# a site key, REPS of each. Prints one line per run and a SUMMARY with the medians:
#   SUMMARY plain_tps=... auth_tps=... ratio=...   (tasks COMPLETEd per second of offering:
#   completed / SECONDS; above capacity frames are lost in af_packet and the client)
# Usage: bench/dataplane/bench_port_auth.sh BUILD_DIR [RATE [SECONDS [REPS]]]   (repository root)
# NL_BENCH_PRINCIPALS=1 (issue #16): the keyed runs use --principals too: the loadgen as
# submitter "lg", each worker as worker principal "wN" with a key derived by nlevel-key, so the
# whole per-principal path (key lookup, rights, fair queue, per-principal sealing) is timed.
set -u
B=${1:?build dir}
RATE=${2:-20000}
S=${3:-3}
R=${4:-3}
[[ $(id -u) == 0 ]] || { echo "bench_port_auth.sh: run as root (network namespace)" >&2; exit 1; }
APP=$B/dataplane/nlevel WORKER=$B/tools/worker/nlevel-worker LOADGEN=$B/tools/loadgen/nlevel-loadgen
id=$$
NS=nlq$id VA=nlqa$id VB=nlqb$id PFX=nlq$id
TMP=$(mktemp -d)
PIDS=() APPPID=
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	[[ -n $APPPID ]] && kill -INT "$APPPID" 2>/dev/null && wait "$APPPID" 2>/dev/null
	ip link del "$VA" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP" "/var/run/dpdk/$PFX"
}
trap cleanup EXIT
ip netns add "$NS" && ip link add "$VA" type veth peer name "$VB" || exit 1
ip link set "$VB" netns "$NS"
ip link set "$VA" up
ip netns exec "$NS" ip addr add 10.96.0.2/24 dev "$VB"
ip netns exec "$NS" ip link set "$VB" up
ethtool -K "$VA" tx off rx off >/dev/null 2>&1
ip netns exec "$NS" ethtool -K "$VB" tx off rx off >/dev/null 2>&1
ip netns exec "$NS" ip neigh replace 10.96.0.1 lladdr "$(cat /sys/class/net/$VA/address)" \
	dev "$VB" nud permanent
(umask 077 && head -c 32 /dev/urandom >"$TMP/site.key")
PRINC=${NL_BENCH_PRINCIPALS:-0}
if [[ $PRINC == 1 ]]; then
	printf '[submitter lg]\n' >"$TMP/pr.ini"
	for p in lg w1 w2 w3 w4; do
		[[ $p == lg ]] || printf '[worker %s]\nslots = *\n' "$p" >>"$TMP/pr.ini"
		"$B/tools/key/nlevel-key" --key "$TMP/site.key" --principal "$p" --out "$TMP/$p.key" \
			>/dev/null || exit 1
	done
fi
INNS=(ip netns exec "$NS")
run() { # key args...
	local kargs=()
	local akargs=() wk lk
	[[ $1 == auth ]] && kargs=(--key "$TMP/site.key")
	[[ $1 == auth && $PRINC == 1 ]] && akargs=(--principals "$TMP/pr.ini")
	"$APP" --no-huge --no-pci --no-shconf --file-prefix "$PFX" -l 0-1 \
		--log-level=lib.*:error "--vdev=net_af_packet0,iface=$VA" -- \
		--config tests/dataplane/e2e.ini --ip 10.96.0.1 --work-scale 1e-6 \
		--pool 65535 "${kargs[@]}" "${akargs[@]}" >"$TMP/app.log" 2>&1 &
	APPPID=$!
	sleep 1.5
	for w in 1 2 3 4; do
		wk=("${kargs[@]}")
		[[ $1 == auth && $PRINC == 1 ]] && wk=(--key "$TMP/w$w.key" --principal "w$w")
		"${INNS[@]}" "$WORKER" --appliance 10.96.0.1 --scale 1e-6 --allow-root --quiet \
			--id "$w" --mach 100e6:00 --mach 100e6:10 --mach 200e6:01 --mach 200e6:11 \
			"${wk[@]}" >/dev/null 2>&1 &
		PIDS+=($!)
	done
	sleep 1
	lk=("${kargs[@]}")
	[[ $1 == auth && $PRINC == 1 ]] && lk=(--key "$TMP/lg.key" --principal lg)
	"${INNS[@]}" "$LOADGEN" --appliance 10.96.0.1 --tasks $((RATE * S)) --rate "$RATE" \
		--res 2 --split 2 --instr 1e6 --data 0 --timeout 2 --seed 7 "${lk[@]}" \
		>"$TMP/lg.log" 2>&1
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=()
	kill -INT "$APPPID"
	wait "$APPPID" 2>/dev/null
	APPPID=
	local c
	c=$(grep '^SUMMARY' "$TMP/lg.log" | tr ' ' '\n' | sed -n 's/^completed=//p')
	echo "$1: $(grep '^nlevel-loadgen' "$TMP/lg.log")" >&2
	python3 -c "print(round(${c:-0} / $S))"
}
plain=() auth=()
for _ in $(seq "$R"); do
	plain+=("$(run plain)")
	auth+=("$(run auth)")
done
python3 - "${plain[*]}" "${auth[*]}" <<'PY'
import statistics, sys
p = [float(x) for x in sys.argv[1].split()]
a = [float(x) for x in sys.argv[2].split()]
mp, ma = statistics.median(p), statistics.median(a)
print("runs plain_tps=%s auth_tps=%s" % (",".join("%d" % x for x in p), ",".join("%d" % x for x in a)))
print("SUMMARY plain_tps=%d auth_tps=%d ratio=%.3f" % (mp, ma, ma / mp if mp else 0))
PY
