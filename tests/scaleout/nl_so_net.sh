# SPDX-License-Identifier: BSD-3-Clause
# Sourced by tests/scaleout/test_scaleout.sh and bench/scaleout/bench_hop.sh: the network of
# a split tree (namespaces nls{w,h}PID, a bridge and a host for workers and clients, and
# nlsXPID per appliance X of SO_APPS, a b c unless set; veths nsX/nspXPID; 10.98.0.0/24) and helpers to start appliances, workers
# and clients and read their telemetry. Needs NLEVEL WORKER LOADGEN SRC CFG set; a TAP skip
# plan when not root or without netns/veth/bridge.
. "$SRC/tests/common/nl_tap.sh"
. "$SRC/tests/common/nl_tmp.sh"
skip() { echo "1..0 # SKIP $*"; exit 0; }

[[ $(id -u) == 0 ]] || skip "not root"
command -v ip >/dev/null || skip "no iproute2"
id=$$
SW=nlsw$id HOSTNS=nlsh$id
# the appliances' names (set before sourcing: a fourth, d, for a split four ways)
SO_APPS=${SO_APPS:-a b c}
declare -A NS IP PFX APP
for x in $SO_APPS; do NS[$x]=nls$x$id; PFX[$x]=nls$x$id; APP[$x]=; done
IP[a]=10.98.0.1 IP[b]=10.98.0.2 IP[c]=10.98.0.3 IP[d]=10.98.0.4
declare -A WID=([a]=1 [b]=2 [c]=3 [d]=4)
# NL_SO_KEEP=DIR keeps the logs (debugging), one folder per test script: tests run one after
# another would otherwise read each other's worker logs
if [[ -n ${NL_SO_KEEP:-} ]]; then
	TMP=$NL_SO_KEEP/$(basename "$0" .sh)
	rm -rf "$TMP"
else
	TMP=$(nl_scratch nlso)
fi
mkdir -p "$TMP"
PIDS=()
KEYARGS=() # (--key FILE): the authenticated protocol (version 2) for appliances, workers, clients
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for x in $SO_APPS; do
		[[ -n ${APP[$x]} ]] && kill -INT "${APP[$x]}" 2>/dev/null && wait "${APP[$x]}" 2>/dev/null
	done
	for x in $SO_APPS h; do ip netns del "nls$x$id" 2>/dev/null; done
	ip netns del "$SW" 2>/dev/null
	[[ -z ${NL_SO_KEEP:-} ]] && rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add "$SW" 2>/dev/null || skip "cannot create a network namespace"
ip -n "$SW" link add nsbr type bridge 2>/dev/null || skip "cannot create a bridge"
ip -n "$SW" link set nsbr up
for x in $SO_APPS h; do # one veth per namespace, its peer on the bridge
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
so_wait() { $SO wait "$@" $(ALL $SO_APPS); }   # SECS EXPR (see nl_so.py)
so_eval() { $SO eval "$1" $(ALL $SO_APPS); }
report() { $SO report $(ALL "$@"); }        # accounting per appliance, crossings
start_app() { # app, scheme [--single: the whole tree, no --appliance] [nlevel options]
	launch_app "$@" && wait_app "$1"
}
launch_app() { # as start_app, without waiting for it to serve
	local x=$1 scheme=$2 part
	shift 2
	part=(--appliance "$x")
	[[ ${1:-} == --single ]] && { part=(--ip "${IP[$x]}"); shift; }
	# framecnt=4096: the kernel ring of the shipped nlevel.env (docs/dataplane.md "The
	# af_packet ring"); with the PMD's 512 a stalled appliance drops, uncounted, SUBMITs of
	# clients that never send them again (seen: scaleout_standby, b's own client, 4 of 2,400)
	ip netns exec "${NS[$x]}" "$NLEVEL" --no-huge --no-pci --no-shconf --file-prefix "${PFX[$x]}" \
		-l 0-1 --vdev="net_af_packet0,iface=ns$x$id,framecnt=4096" -- \
		--config "$CFG" --scheme "$scheme" \
		"${part[@]}" --work-scale 1e-3 --idle-sleep-us 50 --worker-timeout 1 "${KEYARGS[@]}" "$@" \
		>"$TMP/app_$x.log" 2>&1 &
	APP[$x]=$!
}
wait_app() { # app: until it serves (telemetry socket and its log line), 30 s at most
	local x=$1
	for _ in $(seq 300); do
		[[ -S /var/run/dpdk/${PFX[$x]}/dpdk_telemetry.v2 ]] &&
			grep -q "serving on port" "$TMP/app_$x.log" && return 0
		sleep 0.1
	done
	{ # to stderr too (CI's log shows only that)
		echo "# appliance $x did not serve in 30 s:"
		sed 's/^/#   /' "$TMP/app_$x.log" | tail -n 20
	} | tee /dev/stderr
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
	for x in $SO_APPS; do
		if [[ -n ${APP[$x]} ]]; then
			stop_app "$x" || { echo "# nlevel $x exit status $?"; rc=1; }
		fi
	done
	return $rc
}
declare -A APPOPT # nlevel options of one appliance for up3 (words, e.g. "--metrics A:P")
up3() { # scheme: the three appliances (each with APPOPT[x]), two workers each, every one
	# seeing the others live; 0 when all that holds
	local x
	for x in a b c; do launch_app "$x" "$1" ${APPOPT[$x]:-} || return 1; done
	for x in a b c; do wait_app "$x" || return 1; done
	for x in a b c; do workers "$x"; done
	wait_joined a 2 && wait_joined b 2 && wait_joined c 2 &&
		so_wait 20 "all(live(o, q) for o in 'abc' for q in 'abc')"
}
busy2() { # both cores kept busy (issues #34, #36): two busy loops, ended with PIDS (stop_all)
	for _ in 1 2; do
		(while :; do :; done) &
		PIDS+=($!)
	done
}
site_key() { # a fresh site key in $KEY (owner-only) and KEYARGS=(--key $KEY)
	KEY=$TMP/site.key
	head -c 32 /dev/urandom >"$KEY"
	chmod 600 "$KEY"
	KEYARGS=(--key "$KEY")
}
WOPT=(--quiet) # nlevel-worker options of workers (WOPT=() keeps their bye line: sub-tasks run)
# the machines of each worker (workers()): three of each vector by default
MACH=(--mach 100e6:00 --mach 100e6:00 --mach 100e6:00 --mach 100e6:10 --mach 100e6:10
	--mach 100e6:10 --mach 100e6:01 --mach 100e6:01 --mach 100e6:01 --mach 100e6:11
	--mach 100e6:11 --mach 100e6:11)
workers() { # app: two workers offering MACH; the appliance claims its own slots
	local x=$1 w
	for w in 1 2; do
		$INH "$WORKER" --appliance "${IP[$x]}" --scale 1e-3 --allow-root "${WOPT[@]}" --id "$w${WID[$x]}" "${KEYARGS[@]}" \
			--runs "$TMP/runs_w$w$x.csv" \
			"${MACH[@]}" >"$TMP/w$w$x.log" 2>&1 &
		PIDS+=($!)
	done
}
HOME_RE="joined with [1-9]\|more of" # an app's log line: a worker holds slots of it (again)
wait_home() { # seconds, workers [, app (c)]: the app (restarted) has that many workers with
	# slots again
	wait_count "$HOME_RE" "$2" "$1" "$TMP/app_${3:-c}.log"
}
home_again() { # app, workers: after the app's restart, every appliance of SO_APPS sees every
	# other live and runs the app's subtree at the app again (failback), and that many of its
	# workers are home (wait_home); 30 s each. A task sent to it before then may meet its
	# subtree without machines: REJECT no_machine (docs/scale-out.md)
	local x=$1 i apps=${SO_APPS// /}
	i=$(($(printf '%d' "'$x") - 97)) # its index in subtree_at (the configuration's a, b, ...)
	so_wait 30 "all(live(o, q) for o in '$apps' for q in '$apps') and all(p[o]['subtree_at'][$i] == '$x' for o in '$apps')" &&
		wait_home 30 "$2" "$x"
}
home_why() { # app: why home_again() failed (who runs which subtree; workers home)
	echo "subtree_at $(so_eval "[p[o]['subtree_at'] for o in '${SO_APPS// /}']"); $(count "$HOME_RE" "$TMP/app_$1.log") workers home"
}
add_done() { # app: its client's COMPLETE tasks (lg_APP.log) added to DONE_N: they ran
	local n
	n=$(val "$TMP/lg_$1.log" completed)
	DONE_N=$((DONE_N + ${n:-0}))
}
ran() { # sub-tasks the workers ran (their bye lines; WOPT=() keeps them)
	sed -n 's/.*bye after \([0-9]*\) sub-tasks.*/\1/p' "$TMP"/w??.log | awk '{ n += $1 } END { print n + 0 }'
}
ran_rejected() { # TAG:START_S...: the tasks answered REJECT that ran (workers' --runs rows
	# joined with the clients' lg_CLIENT_TAG.csv; a load TAG's rows are those from its START_S
	# to the next one's): one line "TAG client C task ID (reason R): ran sub S at X (KIND)..."
	# each, then "N" their count
	python3 - "$TMP" "${IP[a]}" "${IP[b]}" "${IP[c]}" "$@" <<'PY'
import csv, glob, os, sys
tmp, ips, phases = sys.argv[1], sys.argv[2:5], [a.split(':') for a in sys.argv[5:]]
name = {ip: 'abc'[i] for i, ip in enumerate(ips)}
runs = []
for f in glob.glob(os.path.join(tmp, 'runs_w*.csv')):
    for r in csv.DictReader(open(f)):
        app = name.get(r['appliance'], '?')
        org = app if r['origin_kind'] == 'own' else 'abc'[int(r['origin_app'])]
        runs.append((float(r['wall_s']), org, int(r['task_id']), r, os.path.basename(f)[6:8]))
n = 0
for i, (tag, t0) in enumerate(phases):
    t0 = float(t0)
    t1 = float(phases[i + 1][1]) if i + 1 < len(phases) else 1e18
    for f in sorted(glob.glob(os.path.join(tmp, 'lg_?_%s.csv' % tag))):
        c = os.path.basename(f)[3]
        for r in csv.DictReader(open(f)):
            if r['outcome'] != 'reject':
                continue
            hit = [x for x in runs if x[1] == c and x[2] == int(r['task_id']) and t0 <= x[0] < t1]
            if hit:
                n += 1
                print('%s client %s task %s (reason %s, answered %.3f s in): ran %s' % (
                    tag, c, r['task_id'], r['reason'],
                    float(r['submit_s']) + float(r['resp_us']) / 1e6,
                    '; '.join('sub %s at %.3f s on %s (by %s, %s)' % (
                        x[3]['sub'], x[0] - t0, x[4], x[3]['appliance'], x[3]['origin_kind'])
                        for x in hit)))
print(n)
PY
}
ran_once() { # ran, COMPLETE, failed (ran in part), for tasks of two sub-tasks: no task ran
	# twice, none answered REJECT ran: two sub-tasks per task answered COMPLETE at least, two
	# per task answered COMPLETE or failed at most
	[[ $1 -ge $((2 * $2)) && $1 -le $((2 * ($2 + $3))) ]]
}
wait_joined() { # app, workers: until that many joined it, 20 s at most (why not: stderr)
	for _ in $(seq 200); do
		[[ $(grep -c "joined with" "$TMP/app_$1.log") -ge $2 ]] && return 0
		sleep 0.1
	done
	{
		echo "# appliance $1: $(grep -c "joined with" "$TMP/app_$1.log") of $2 workers joined in 20 s; its workers said:"
		tail -q -n 3 "$TMP"/w?"$1".log 2>/dev/null | sed 's/^/#   /' | cut -c1-200
	} | tee /dev/stderr
	return 1
}
summary() { grep '^SUMMARY' "$1" | tail -n 1; }
count() { # pattern, files...: lines matching in all of them
	local p=$1
	shift
	cat "$@" 2>/dev/null | grep -c "$p"
}
wait_count() { # pattern, count, seconds, files...: until count() reaches count
	local p=$1 n=$2 s=$3
	shift 3
	for _ in $(seq $((s * 10))); do
		[[ $(count "$p" "$@") -ge $n ]] && return 0
		sleep 0.1
	done
	return 1
}
so_why() { # for a failure's detail: the clients' counts and what the appliances' logs said
	local f out=
	for f in "$TMP"/lg_?.log; do
		[[ -f $f ]] && out+="client of ${f: -5:1}: $(summary "$f" | tr ' ' '\n' |
			grep -E '^(sent|accepted|completed|rejected|lost|failed|rejected_machine_lost|rejected_overload)=' |
			tr '\n' ' ')| "
	done
	out+=$(grep -h "suspected\|gone (\|was held\|refuted\|ERROR\|exit status" "$TMP"/app_?.log 2>/dev/null |
		head -n 8 | cut -c1-220 | tr '\n' '|')
	echo "$out $(so_net_drops)"
}
# what the network itself dropped (a datagram lost outside the appliances): the host
# namespace's UDP receive errors (clients' and workers' sockets) and every veth's drops
so_net_drops() {
	local x u d=
	u=$(ip netns exec "$HOSTNS" awk '/^Udp:/ { n++ } n == 2 && /^Udp:/ { print "in_errors=" $4 " rcvbuf_errors=" $6; exit }' /proc/net/snmp 2>/dev/null)
	for x in $SO_APPS h; do
		d+=" ns$x:$(ip -n "nls$x$id" -s link show "ns$x$id" 2>/dev/null |
			awk '/RX:/ { getline; r = $4 } /TX:/ { getline; t = $4 } END { print "rx_drop=" r ",tx_drop=" t }')"
	done
	echo "net: host udp ${u:-?};$d"
}
# the longest time the host held an appliance's own I/O lcore, as their logs say ("the I/O
# lcore was held S s"; docs/dataplane.md "What holds the I/O lcore") [s]; 0 when none
so_held_max() {
	grep -ho "I/O lcore was held [0-9.]*" "$TMP"/app_?.log 2>/dev/null |
		awk '$5 > m { m = $5 } END { print m + 0 }'
}
val() { summary "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
loadgen() { # app, tasks, rate, seed, extra args
	local x=$1 n=$2 r=$3 s=$4
	shift 4
	$INH "$LOADGEN" --appliance "${IP[$x]}" --tasks "$n" --rate "$r" --res 2 --split 2 \
		--instr 1e8 --data 0 --timeout 5 --seed "$s" --csv "$TMP/lg_$x.csv" "${KEYARGS[@]}" "$@" \
		>"$TMP/lg_$x.log" 2>&1
}

# ---- the killed-appliance tests (resend, crossed, reborn, rootsb): shared steps
declare -A WOPT_OF # nlevel-worker options of the workers of one appliance for up_nlsc (words)
up_nlsc() { # app...: the three appliances (NLSC), two workers for each app named (options
	# WOPT_OF[app]; bye lines kept: ran()); 0 when they joined and all see each other live
	local x rc=0
	for x in a b c; do launch_app "$x" nlsc; done
	for x in a b c; do wait_app "$x" || rc=1; done
	[[ $rc == 0 ]] || return 1
	for x in "$@"; do
		read -ra WOPT <<<"${WOPT_OF[$x]:-}"
		workers "$x"
	done
	WOPT=()
	for x in "$@"; do wait_joined "$x" 2 || return 1; done
	so_wait 20 "all(live(o, q) for o in 'abc' for q in 'abc')"
}
client_started() { # app: until its client's run began (loadgen(), replay_c(): --csv
	# $TMP/lg_APP.csv is created just before the first task is sent; a client started under
	# load can take seconds to get there, and a fault timed from its start would then come
	# before its load); 30 s at most, then 1
	local _
	for _ in $(seq 300); do
		[[ -f $TMP/lg_$1.csv ]] && return 0
		sleep 0.1
	done
	echo "# the client of $1 did not start in 30 s"
	return 1
}
udp_port() { # pid: the port of its UDP socket, once it sent (its fds' socket inodes in its
	# own namespace's /proc/PID/net/udp; no `ip netns exec`, no scan of every process as
	# `ss -p` makes: on a loaded host those took seconds)
	local ino hex
	ino=$(ls -l "/proc/$1/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p' | tr '\n' ' ')
	[[ -n $ino ]] || return 0
	hex=$(awk -v ino=" $ino" 'NR > 1 && index(ino, " " $10 " ") {
		n = split($2, a, ":"); print a[n]; exit }' "/proc/$1/net/udp" 2>/dev/null)
	[[ -n $hex ]] && echo $((16#$hex))
}
kill_app() { # app: SIGKILL, reaped, forgotten
	kill -KILL "${APP[$1]}"
	wait "${APP[$1]}" 2>/dev/null
	APP[$1]=
}
c_tasks() { # file: 600 tasks at 60/s for c's machines only, two sub-tasks of 5e9 instructions
	# (50 ms at 100e6/s, --scale 1e-3). c's machines are the vectors of its subtree M(1,1),
	# 10 and 11 (resource 1 first): needs 1 and 3 (bit k = resource k + 1)
	awk 'BEGIN { for (i = 0; i < 600; i++) printf "%.4f %d 1e10 0 2\n", i / 60, 1 + 2 * (i % 2) }' >"$1"
}
replay_c() { # standby: c's client replays $TMP/c_tasks.txt (--standby that appliance) into
	# lg_c.log, in the background: its pid in LC
	$INH "$LOADGEN" --appliance "${IP[c]}" --standby "${IP[$1]}" --replay "$TMP/c_tasks.txt" \
		--res 2 --timeout 40 --csv "$TMP/lg_c.csv" "${KEYARGS[@]}" >"$TMP/lg_c.log" 2>&1 &
	LC=$!
}
answered_once() { # client log, tasks: 0 when the client sent them all and lost none
	[[ $(val "$1" lost) == 0 && $(val "$1" sent) == "$2" ]]
}
# the resend counters of a standby, for resend_at: (client_words, resends_held, resend_holding,
# resends_run, resends_answered, adoptions)
RESEND_KEYS="('client_words', 'resends_held', 'resend_holding', 'resends_run', 'resends_answered', 'adoptions')"
resend_at() { # standby, [python tuple to append, apps it reads]: RESEND_KEYS at the standby
	local sb=$1 more=${2:-()}
	shift
	[[ $# -gt 0 ]] && shift
	$SO eval "tuple(p['$sb'][k] for k in $RESEND_KEYS) + $more" $(ALL "$sb" "$@")
}
nth() { python3 -c "import sys; print(eval(sys.argv[1])[int(sys.argv[2])])" "$1" "$2" 2>/dev/null; } # tuple, index
clients_answered() { # tasks, apps...: each app's client (lg_APP.log) sent that many and lost
	# none (answered_once); adds their COMPLETE and failed to DONE_N and FAIL_N, the failing
	# ones' summaries to WHY; 0 when all hold
	local n=$1 x rc=0
	shift
	for x in "$@"; do
		echo "# client of $x: $(summary "$TMP/lg_$x.log" | cut -c1-500)"
		answered_once "$TMP/lg_$x.log" "$n" ||
			{ rc=1; WHY+="client of $x: $(summary "$TMP/lg_$x.log" | cut -c1-300) "; }
		DONE_N=$((DONE_N + $(val "$TMP/lg_$x.log" completed)))
		FAIL_N=$((FAIL_N + $(val "$TMP/lg_$x.log" failed)))
	done
	return $rc
}
ran_tasks() { # COMPLETE, failed (ran in part): N_RAN (ran()) said; 0 when ran_once holds
	N_RAN=$(ran)
	echo "# sub-tasks the workers ran $N_RAN; tasks COMPLETE $1, failed (ran in part) $2"
	ran_once "$N_RAN" "$1" "$2"
}
ran_c() { # client log: N_RAN (ran()), NC and NF (its COMPLETE and failed), told; 0 when
	# ran_once holds (no task ran twice, none answered REJECT ran)
	NC=$(val "$1" completed)
	NF=$(val "$1" failed)
	ran_tasks "$NC" "$NF"
}
htb_prep() { # x: tc batch lines (tc -batch) for the bridge's port to appliance x's namespace
	# (h: the host's): an HTB whose class 1:20 ends in a pfifo of limit 0 (drops all), 1:10
	# the rest (the default); u32 filters into 1:20 then cut (no tc action module needed)
	echo "qdisc add dev nsp$1$id root handle 1: htb default 10"
	echo "class add dev nsp$1$id parent 1: classid 1:10 htb rate 10gbit quantum 60000"
	echo "class add dev nsp$1$id parent 1: classid 1:20 htb rate 10gbit quantum 60000"
	echo "qdisc add dev nsp$1$id parent 1:20 handle 20: pfifo limit 0"
}
