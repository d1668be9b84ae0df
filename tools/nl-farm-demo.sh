#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The live appliance in one paste (as root): a task farm of real commands through `nlevel`.
#
#   sudo tools/nl-farm-demo.sh [--tasks N] [--rate TPS] [--build DIR]
#
# What it does, step by step (each step is printed):
#   1. a veth pair nlfdaPID <-> nlfdbPID; nlfdbPID goes into a private network namespace
#      nlfdPID with the address 10.97.0.2/24 (nothing touches the host's own interfaces);
#   2. `nlevel` (DPDK, no huge pages) on the host end through the net_af_packet PMD, in port
#      mode, as 10.97.0.1, NLSC on config/farm-demo.ini (8 machine slots, N = 2 resources,
#      L = 2 sub-tasks per task), with a fresh site key in the temp folder (--key: every
#      frame between nlevel, the workers and the client is authenticated, docs/protocol.md);
#   3. two `nlevel-worker`s in the namespace, 4 machines each (one per resource vector), with
#      two commands: 1 = /bin/true, 2 = a script exiting with its argument;
#   4. `nlevel-loadgen` in the namespace submits N tasks (default 2000, at 100 tasks/s): every
#      10th runs command 2 with argument 3, the others command 1; each task runs as 2
#      sub-tasks, i.e. 2 real processes;
#   5. prints the client's view (completions, exit statuses, response times), the
#      appliance's counters (rte_telemetry) and each worker's share, then stops everything
#      and removes the namespace and the veth pair (also on Ctrl-C or an error).
# Exit status 0 when every task COMPLETEd with the exit status its command gives.
# Builds build/ first (tools/install-deps.sh, meson, ninja) when it holds no nlevel.
#
# For meson (suite eal): nl-farm-demo.sh --tap NLEVEL WORKER LOADGEN prints TAP and skips
# (a "1..0 # SKIP" plan, status 0) when not root, without netns/veth, or when the EAL cannot
# start. Interface and namespace names differ from tests/dataplane/test_e2e.sh's (nlt/nla/nlb)
# and bench/peer's (nlp), so they can run side by side.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TAP=0 TASKS=2000 RATE=100 BUILD=$ROOT/build NLEVEL= WORKER= LOADGEN=
usage() {
	sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
while [[ $# -gt 0 ]]; do
	case $1 in
	--tap) TAP=1; NLEVEL=$2 WORKER=$3 LOADGEN=$4; shift 3 ;;
	--tasks) TASKS=$2; shift ;;
	--rate) RATE=$2; shift ;;
	--build) BUILD=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "nl-farm-demo.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
[[ $TASKS =~ ^[1-9][0-9]*$ && $RATE =~ ^[1-9][0-9]*$ ]] ||
	{ echo "nl-farm-demo.sh: --tasks and --rate want positive integers" >&2; exit 2; }

say() { if [[ $TAP == 1 ]]; then sed 's/^/# /' <<<"$*"; else echo "$*"; fi; }
skip() { echo "1..0 # SKIP $*"; exit 0; } # TAP skip plan: status 0
die() { # message: fail (TAP: "not ok")
	if [[ $TAP == 1 ]]; then echo "not ok 1 - farm demo: $*"; echo "1..1"; else echo "nl-farm-demo.sh: $*" >&2; fi
	exit 1
}
if [[ $(id -u) != 0 ]]; then
	[[ $TAP == 1 ]] && skip "not root"
	echo "nl-farm-demo.sh: run as root (it creates a network namespace and a veth pair): sudo $0" >&2
	exit 1
fi
command -v ip >/dev/null || { [[ $TAP == 1 ]] && skip "no iproute2"; die "needs iproute2 (apt-get install iproute2)"; }

if [[ $TAP == 0 ]]; then
	NLEVEL=$BUILD/dataplane/nlevel WORKER=$BUILD/tools/worker/nlevel-worker
	LOADGEN=$BUILD/tools/loadgen/nlevel-loadgen
	if [[ ! -x $NLEVEL || ! -x $WORKER || ! -x $LOADGEN ]]; then
		say "== building $BUILD (no nlevel there yet)"
		"$ROOT/tools/install-deps.sh" || die "tools/install-deps.sh failed"
		[[ -f $BUILD/build.ninja ]] || meson setup "$BUILD" "$ROOT" >/dev/null || die "meson setup failed"
		# only what the demo runs (tools/nl-main.sh builds the rest)
		ninja -C "$BUILD" dataplane/nlevel tools/worker/nlevel-worker \
			tools/loadgen/nlevel-loadgen >/dev/null || die "ninja -C $BUILD failed"
		[[ -x $NLEVEL ]] || die "no $NLEVEL after the build: is DPDK (libdpdk-dev) installed?"
	fi
fi
CFG=$ROOT/config/farm-demo.ini
TEL=$ROOT/tests/dataplane/nl_tel.py
APP_IP=10.97.0.1 NS_IP=10.97.0.2
id=$$
NS=nlfd$id VA=nlfda$id VB=nlfdb$id PFX=nlfd$id
TMP=$(mktemp -d /tmp/nl-farm-demo.XXXXXX)
chmod 755 "$TMP"
PIDS=() APP=
cleanup() {
	trap - EXIT INT TERM
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	if [[ -n $APP ]]; then kill -INT "$APP" 2>/dev/null; wait "$APP" 2>/dev/null; fi
	ip link del "$VA" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP" "/var/run/dpdk/$PFX"
	[[ $TAP == 0 ]] && echo "== cleaned up: namespace $NS and veth $VA/$VB removed"
}
trap cleanup EXIT
trap 'echo; say "interrupted"; exit 130' INT TERM

say "== 1. veth pair $VA <-> $VB, $VB in network namespace $NS as $NS_IP/24"
ip netns add "$NS" 2>/dev/null || { [[ $TAP == 1 ]] && skip "cannot create a network namespace"; die "cannot create network namespace $NS"; }
ip link add "$VA" type veth peer name "$VB" 2>/dev/null ||
	{ [[ $TAP == 1 ]] && skip "cannot create a veth pair"; die "cannot create veth pair $VA/$VB"; }
ip link set "$VB" netns "$NS"
ip link set "$VA" up
ip netns exec "$NS" ip addr add "$NS_IP/24" dev "$VB"
ip netns exec "$NS" ip link set "$VB" up
ip netns exec "$NS" ip link set lo up
if command -v ethtool >/dev/null; then # af_packet sees frames before checksum offload fills them
	ethtool -K "$VA" tx off rx off >/dev/null 2>&1
	ip netns exec "$NS" ethtool -K "$VB" tx off rx off >/dev/null 2>&1
fi
# nlevel answers ARP itself; a static entry spares the first frames the wait.
ip netns exec "$NS" ip neigh replace "$APP_IP" lladdr "$(cat "/sys/class/net/$VA/address")" \
	dev "$VB" nud permanent
INNS=(ip netns exec "$NS")

tel() { python3 "$TEL" "$PFX" "$1" 2>/dev/null; }
stat() { tel /nlevel/stats | python3 -c "import json,sys; print(json.load(sys.stdin)['/nlevel/stats']['$1'])" 2>/dev/null || echo -1; }

# The site key every frame is authenticated with (docs/protocol.md): owner-only, like MUNGE's.
KEY=$TMP/site.key
(umask 077 && head -c 32 /dev/urandom >"$KEY")
say "== 2. nlevel on $VA (net_af_packet, --no-huge), port mode, NLSC, $(basename "$CFG"),"
say "   frames authenticated with the site key $KEY (made with: head -c 32 /dev/urandom; mode 600)"
CMDLINE=("$NLEVEL" --no-huge --no-pci --no-shconf --file-prefix "$PFX" -l 0-1
	"--vdev=net_af_packet0,iface=$VA" -- --config "$CFG" --scheme nlsc --ip "$APP_IP"
	--work-scale 1e-3 --idle-sleep-us 50 --key "$KEY" --state-dir "$TMP")
say "   ${CMDLINE[*]#$ROOT/}"
"${CMDLINE[@]}" >"$TMP/nlevel.log" 2>&1 &
APP=$!
up=0
for _ in $(seq 150); do
	[[ $(stat accepted) != -1 ]] && { up=1; break; }
	kill -0 "$APP" 2>/dev/null || break
	sleep 0.1
done
if [[ $up == 0 ]]; then
	if [[ $TAP == 1 ]] && grep -q "EAL initialisation failed" "$TMP/nlevel.log"; then
		sed 's/^/# /' "$TMP/nlevel.log" | tail -n 5
		skip "the DPDK EAL cannot start here"
	fi
	say "$(tail -n 15 "$TMP/nlevel.log")"
	die "nlevel did not come up (its log is above)"
fi

printf '#!/bin/sh\n# a farm command: exits with its first argument\nexit "${1:-0}"\n' >"$TMP/exitwith"
chmod 755 "$TMP/exitwith"
say "== 3. two nlevel-workers in $NS, 4 machines each; commands 1=/bin/true 2=exitwith"
for w in 1 2; do
	# --allow-root: the demo runs as root; the commands are /bin/true and the script above
	"${INNS[@]}" "$WORKER" --appliance "$APP_IP" --key "$KEY" --id "$w" --scale 1e-3 --allow-root \
		--mach 100e6:00 --mach 100e6:10 --mach 200e6:01 --mach 200e6:11 \
		--cmd 1=/bin/true --cmd "2=$TMP/exitwith" >"$TMP/w$w.log" 2>&1 &
	PIDS+=($!)
done
for _ in $(seq 100); do
	[[ $(stat workers_joined) -ge 2 ]] && break
	sleep 0.1
done
[[ $(stat workers_joined) -ge 2 ]] || die "the workers did not join: $(cat "$TMP"/w*.log)"
say "   joined: $(stat workers_joined) workers"

# the task file: "t_s need instr data split [cmd [arg ...]]"; need cycles over 00 10 01 11
awk -v n="$TASKS" -v r="$RATE" 'BEGIN { for (i = 0; i < n; i++)
	printf "%.6f %x 1e6 0 2 %s\n", i / r, i % 4, (i % 10 == 9) ? "2 3" : "1" }' >"$TMP/tasks.txt"
say "== 4. nlevel-loadgen in $NS: $TASKS tasks at $RATE tasks/s, 2 sub-tasks (processes) each"
"${INNS[@]}" "$LOADGEN" --appliance "$APP_IP" --key "$KEY" --replay "$TMP/tasks.txt" --timeout 10 \
	--expect-complete --expect-status 2=3 --csv "$TMP/tasks.csv" >"$TMP/loadgen.log" 2>&1
lg_rc=$?

say "== 5. what happened"
say "   client:    $(grep '^nlevel-loadgen' "$TMP/loadgen.log" | sed 's/^nlevel-loadgen: //')"
say "   exit statuses by command (cmd status: tasks): $(awk -F, 'NR > 1 && $5 == "complete" { c[$3 " " $7]++ }
	END { for (k in c) printf "%s: %d  ", k, c[k] }' "$TMP/tasks.csv")"
stats=$(tel /nlevel/stats)
say "   appliance: $(python3 -c '
import json, sys
s = json.loads(sys.argv[1])["/nlevel/stats"]
print("accepted %(accepted)d, completed %(completed)d, failed %(failed)d, in flight %(in_flight)d, rejected at ingress %(rejected_ingress)d, frames rx %(rx_frames)d / tx %(tx_frames)d, dropped bad MAC %(drop_bad_mac)d / replayed %(drop_replay)d" % s)' "$stats" 2>/dev/null)"
kill -INT "$APP" 2>/dev/null
wait "$APP"
app_rc=$?
APP=
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
PIDS=()
for w in 1 2; do
	say "   worker $w:  $(grep -o 'bye after .*' "$TMP/w$w.log" | tail -n 1 || echo '(no bye)')"
done
completed=$(sed -n 's/^SUMMARY.* completed=\([0-9]*\).*/\1/p' "$TMP/loadgen.log")
accounting=$(python3 -c '
import json, sys
s = json.loads(sys.argv[1])["/nlevel/stats"]
print(int(s["accepted"] == s["completed"] + s["failed"] + s["in_flight"]))' "$stats" 2>/dev/null)
if [[ $lg_rc == 0 && $completed == "$TASKS" && $accounting == 1 && $app_rc == 0 ]]; then
	say "== all $TASKS tasks COMPLETE ($((2 * TASKS)) commands run), exit statuses as expected"
	say "   a farm that stays up for your own submits: nlevel-farm-up (README, docs/operations.md)"
	[[ $TAP == 1 ]] && { echo "ok 1 - farm demo: $TASKS tasks, every one COMPLETE"; echo "1..1"; }
	exit 0
fi
say "$(tail -n 5 "$TMP/loadgen.log")"
die "not every task COMPLETEd (loadgen status $lg_rc, completed ${completed:-?} of $TASKS, accounting ${accounting:-?}, nlevel status $app_rc)"
