#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Scale-out, as root: one N-level tree split over three nlevel appliances (a, b, c;
# tests/scaleout/scaleout.ini), each on net_af_packet in its own network namespace; a bridge
# in a fourth namespace joins them and a fifth holding the workers and the clients.
#   1-2  10,000 tasks whose paths cross appliances, under NLSC and 2LSC, submitted to all
#        three: every task COMPLETEs; per appliance accepted = completed + failed + in
#        flight; the three appliances together accepted what the clients sent; tasks and
#        hand-backs crossed between every pair that the placement connects
#   3    appliance c killed (SIGKILL) mid-run: every task accepted by a or b ends in exactly
#        one COMPLETE or REJECT (none lost), a and b keep dispatching, c is declared gone
#        by gossip; c restarts, rejoins (its summaries reach a) and gets traffic again
#   4    forged and malformed inter-appliance datagrams (a client claiming to be appliance
#        b, a truncated hand-back, a bad type) are counted and dropped, nothing acts on them
# Usage: test_scaleout.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or without
# netns/veth/bridge. Names: namespaces nls{w,h,a,b,c}PID, veths nsX/nsYPID, 10.98.0.0/24.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
CFG=$SRC/tests/scaleout/scaleout.ini
TEL=$SRC/tests/dataplane/nl_tel.py
. "$SRC/tests/common/nl_tap.sh"
skip() { echo "1..0 # SKIP $*"; exit 0; }

[[ $(id -u) == 0 ]] || skip "not root"
command -v ip >/dev/null || skip "no iproute2"
id=$$
SW=nlsw$id HOSTNS=nlsh$id
declare -A NS IP PFX APP
for x in a b c; do NS[$x]=nls$x$id; PFX[$x]=nls$x$id; APP[$x]=; done
IP[a]=10.98.0.1 IP[b]=10.98.0.2 IP[c]=10.98.0.3
declare -A WID=([a]=1 [b]=2 [c]=3)
TMP=${NL_SO_KEEP:-$(mktemp -d)} # NL_SO_KEEP=DIR keeps the logs (debugging)
mkdir -p "$TMP"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for x in a b c; do
		[[ -n ${APP[$x]} ]] && kill -INT "${APP[$x]}" 2>/dev/null && wait "${APP[$x]}" 2>/dev/null
	done
	for x in a b c h; do ip netns del "nls$x$id" 2>/dev/null; done
	ip netns del "$SW" 2>/dev/null
	[[ -z ${NL_SO_KEEP:-} ]] && rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add "$SW" 2>/dev/null || skip "cannot create a network namespace"
ip -n "$SW" link add nsbr type bridge 2>/dev/null || skip "cannot create a bridge"
ip -n "$SW" link set nsbr up
for x in a b c h; do # one veth per namespace, its peer on the bridge
	ns=nls$x$id
	ip netns add "$ns" || skip "cannot create a network namespace"
	ip link add "ns$x$id" netns "$ns" type veth peer name "nsp$x$id" netns "$SW" ||
		skip "cannot create a veth pair"
	ip -n "$SW" link set "nsp$x$id" master nsbr up
	ip -n "$ns" link set "ns$x$id" up
	ip -n "$ns" link set lo up
	if command -v ethtool >/dev/null; then
		ip netns exec "$ns" ethtool -K "ns$x$id" tx off rx off >/dev/null 2>&1
		ip netns exec "$SW" ethtool -K "nsp$x$id" tx off rx off >/dev/null 2>&1
	fi
done
ip -n "$HOSTNS" addr add 10.98.0.10/24 dev "nsh$id"
INH="ip netns exec $HOSTNS"

SO="python3 $SRC/tests/scaleout/nl_so.py"
ALL() { for x in "$@"; do echo "$x=${PFX[$x]}"; done; }
so_wait() { $SO wait "$@" $(ALL a b c); }   # SECS EXPR (see nl_so.py)
so_eval() { $SO eval "$1" $(ALL a b c); }
report() { $SO report $(ALL "$@"); }        # accounting per appliance, crossings
start_app() { # app, scheme
	local x=$1 scheme=$2
	ip netns exec "${NS[$x]}" "$NLEVEL" --no-huge --no-pci --no-shconf --file-prefix "${PFX[$x]}" \
		-l 0-1 --vdev="net_af_packet0,iface=ns$x$id" -- --config "$CFG" --scheme "$scheme" \
		--appliance "$x" --work-scale 1e-3 --idle-sleep-us 50 --worker-timeout 1 \
		>"$TMP/app_$x.log" 2>&1 &
	APP[$x]=$!
	for _ in $(seq 300); do
		[[ -S /var/run/dpdk/${PFX[$x]}/dpdk_telemetry.v2 ]] &&
			grep -q "serving on port" "$TMP/app_$x.log" && return 0
		sleep 0.1
	done
	echo "# appliance $x did not come up:"; sed 's/^/#   /' "$TMP/app_$x.log" | tail -n 20
	return 1
}
stop_app() { # app; returns nlevel's exit status
	local x=$1 rc
	kill -INT "${APP[$x]}" 2>/dev/null
	wait "${APP[$x]}"
	rc=$?
	APP[$x]=
	return $rc
}
stop_all() {
	local rc=0
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=()
	for x in a b c; do
		if [[ -n ${APP[$x]} ]]; then
			stop_app "$x" || { echo "# nlevel $x exit status $?"; rc=1; }
		fi
	done
	return $rc
}
workers() { # app: two workers offering every vector; the appliance claims its own slots
	local x=$1 w
	for w in 1 2; do
		$INH "$WORKER" --appliance "${IP[$x]}" --scale 1e-3 --allow-root --quiet --id "$w${WID[$x]}" \
			--mach 100e6:00 --mach 100e6:00 --mach 100e6:00 --mach 100e6:10 --mach 100e6:10 \
			--mach 100e6:10 --mach 100e6:01 --mach 100e6:01 --mach 100e6:01 --mach 100e6:11 \
			--mach 100e6:11 --mach 100e6:11 >"$TMP/w$w$x.log" 2>&1 &
		PIDS+=($!)
	done
}
wait_joined() { # app, workers
	for _ in $(seq 200); do
		[[ $(grep -c "joined with" "$TMP/app_$1.log") -ge $2 ]] && return 0
		sleep 0.1
	done
	return 1
}
summary() { grep '^SUMMARY' "$1" | tail -n 1; }
val() { summary "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
loadgen() { # app, tasks, rate, seed, extra args
	local x=$1 n=$2 r=$3 s=$4
	shift 4
	$INH "$LOADGEN" --appliance "${IP[$x]}" --tasks "$n" --rate "$r" --res 2 --split 2 \
		--instr 1e8 --data 0 --timeout 5 --seed "$s" "$@" >"$TMP/lg_$x.log" 2>&1
}

# 1-2: 10,000 tasks under each scheme, submitted to all three appliances
up3() { # scheme: three appliances, two workers each, every one seeing the others live
	start_app a "$1" && start_app b "$1" && start_app c "$1" || return 1
	for x in a b c; do workers "$x"; done
	wait_joined a 2 && wait_joined b 2 && wait_joined c 2 &&
		so_wait 20 "all(live(o, q) for o in 'abc' for q in 'abc')"
}
for scheme in ${NL_SO_SCHEMES:-nlsc 2lsc}; do # NL_SO_SCHEMES: a subset (debugging)
	t0=$SECONDS
	r=1
	if up3 "$scheme"; then
		r=0
		loadgen a 4000 1000 1 --expect-complete & la=$!
		loadgen b 3000 750 2 --expect-complete & lb=$!
		loadgen c 3000 750 3 --expect-complete & lc=$!
		wait $la || r=1
		wait $lb || r=1
		wait $lc || r=1
		total=0
		for x in a b c; do
			echo "# $scheme $x: $(summary "$TMP/lg_$x.log")"
			total=$((total + $(val "$TMP/lg_$x.log" completed)))
		done
		report a b c || r=1
		# the three accepted what the clients sent; tasks crossed from a to b and c and
		# came back (hand-backs), and between b and c
		acc=$(so_eval "sum(s[x]['accepted'] for x in 'abc')")
		cross=$(so_eval "p['a']['tasks_out'][1] > 0 and p['a']['tasks_out'][2] > 0 and p['a']['handbacks_in'][1] + p['a']['handbacks_in'][2] > 0 and p['b']['handbacks_in'][0] + p['b']['handbacks_in'][2] > 0")
		echo "# $scheme: completed $total of 10000, appliances accepted $acc, crossed: $cross"
		[[ $total == 10000 && $acc == 10000 && $cross == True ]] || r=1
	fi
	stop_all || r=1
	echo "# $scheme: $((SECONDS - t0)) s"
	say "scaleout_${scheme}_10000_tasks_cross_appliances_all_complete" $r "see the log"
done
[[ -n ${NL_SO_SCHEMES:-} ]] && nl_tap_done

# 3: c killed mid-run, then restarted
r=1
t0=$SECONDS
if up3 nlsc; then
	r=0
	loadgen a 3000 1000 11 & la=$!
	loadgen b 3000 1000 12 & lb=$!
	sleep 1.2
	kill -KILL "${APP[c]}"
	wait "${APP[c]}" 2>/dev/null
	APP[c]=
	wait $la || r=1
	wait $lb || r=1
	for x in a b; do
		echo "# kill $x: $(summary "$TMP/lg_$x.log")"
		# every accepted task got a final answer (none lost); none got two: the appliance
		# answers only when it counts a task completed or failed, and report checks
		# accepted = completed + failed with nothing in flight
		[[ $(val "$TMP/lg_$x.log" lost) == 0 ]] || r=1
		[[ $(val "$TMP/lg_$x.log" completed) -gt 1000 ]] || r=1
	done
	report a b || r=1
	so_wait 10 "not live('a', 'c') and not live('b', 'c')" || r=1
	echo "# gone: $(so_eval "(p['a']['gone'][2], p['b']['gone'][2], p['a']['lost_tasks_total'], p['b']['lost_tasks_total'])") (a, b: times c was declared gone; tasks answered machine_lost)"
	# restart c: it rejoins (gossip) and gets traffic again
	if start_app c nlsc; then
		workers c
		if wait_joined c 2 && so_wait 20 "live('a', 'c') and live('b', 'c') and live('c', 'a')"; then
			loadgen a 1000 500 13 --expect-complete || r=1
			echo "# after rejoin a: $(summary "$TMP/lg_a.log")"
			took=$(so_eval "p['c']['tasks_in'][0] + p['c']['tasks_in'][1]")
			age=$(so_eval "m['a']['age_ms'][m['a']['appliance'].index('c')]")
			echo "# the new c took $took tasks from a and b; a's summary of c's root is $age ms old"
			[[ $took -gt 0 && $age -ge 0 && $age -lt 1000 ]] || r=1
			report a c || r=1
		else
			r=1
		fi
	else
		r=1
	fi
fi
stop_all || r=1
echo "# kill and rejoin: $((SECONDS - t0)) s"
say "scaleout_kill_one_appliance_every_task_answered_once_then_rejoin" $r "see the log"

# 4: forged and malformed inter-appliance datagrams are counted and dropped
r=1
if start_app a nlsc; then
	DROPS="s['a']['drop_truncated'] + s['a']['drop_bad_type'] + s['a']['drop_bad_field']"
	d0=$(so_eval "$DROPS")
	$INH python3 - "${IP[a]}" <<'EOF'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst = (sys.argv[1], 7477)
def hdr(t, n): return struct.pack(">HBBHH", 0x4e4c, 1, t, n, 0)
# a well-formed HANDBACK claiming to come from appliance b (index 1), from a client's address
body = struct.pack(">HHIQ", 1, 1, 0, 12345) + struct.pack(">QIIHHiHH4x", 7, 0, 1, 0, 2, 0, 1, 0)
s.sendto(hdr(17, 8 + len(body)) + body, dst)
# a HANDOVER claiming b with a well-formed task record
task = struct.pack(">QQQQQIIHHHHHB5x", 9, 1, 10**8, 0, 0, 1, 0, 3, 1, 2, 0, 0, 0)
body = struct.pack(">HHIQ", 1, 1, 0, 12345) + task
s.sendto(hdr(16, 8 + len(body)) + body, dst)
# truncated (length says more than was sent), bad type 20, bad field (n = 0)
s.sendto(hdr(17, 64) + b"\0" * 8, dst)
body = struct.pack(">HHIQ", 1, 1, 0, 12345)
s.sendto(hdr(20, 8 + len(body)) + body, dst)
s.sendto(hdr(18, 8 + len(body)) + struct.pack(">HHIQ", 1, 0, 0, 12345), dst)
EOF
	so_wait 5 "p['a']['bad_peer'] >= 2 and $DROPS >= $d0 + 3"
	res=$(so_eval "(p['a']['bad_peer'], $DROPS - $d0, p['a']['stale_handback'], s['a']['accepted'], p['a']['foreign'])")
	echo "# a: (bad_peer, new drops, stale_handback, accepted, foreign) = $res"
	[[ $res == "(2, 3, 0, 0, 0)" ]] && r=0
fi
stop_all || r=1
say "scaleout_forged_and_malformed_datagrams_counted_and_dropped" $r "see the log"
nl_tap_done
