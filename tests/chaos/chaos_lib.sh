# SPDX-License-Identifier: BSD-3-Clause
# Shared set-up of the tests/chaos/ scenarios (issue #33): the real appliance on net_af_packet
# over a veth pair into a private network namespace, real nlevel-workers and nlevel-submit in
# that namespace, both cores kept busy, and checks that nothing a task started is left.
# Sourced by tests/chaos/test_*.sh (helpers `contain` and `farm`). Needs root; a scenario
# that cannot run here prints a TAP skip plan (chaos_skip) instead of failing.
#
#   . "$SRC/tests/chaos/chaos_lib.sh"
#   chaos_init TAG NLEVEL WORKER SUBMIT   names by TAG and $$ (namespace, veth, file prefix,
#                                         subnet 10.TAG_NET.0), $CT = temporary folder,
#                                         cleanup trap; skips when not root / no netns
#   chaos_busy [N]                        N (default 2) `yes >/dev/null` beside the test,
#                                         stopped at exit (the acceptance's busy cores)
#   chaos_start_app [nlevel options]      the appliance (tests/taskfarm/farm.ini: 8 slots),
#                                         waits for its telemetry; skips if the EAL cannot start
#   chaos_commands N <<EOF ... EOF        write worker N's commands file (stdin), adding its
#                                         output_dir; $CT/wN.conf
#   chaos_start_worker N [worker options] worker N (--id N, 4 machines 1e9:*) in the
#                                         namespace, log $CT/wN.log, pid in CW_PID[N]
#   chaos_wait_joined K NCMD              until K workers joined and NCMD commands known
#   chaos_up [nlevel options]             (re)start the appliance (--worker-timeout 10; its
#                                         last log appended to $CT/app.all.log) and workers 1
#                                         and 2 when not running; 0 once both joined
#   chaos_wait_log N TEXT K               until worker N's log has K lines holding TEXT
#   chaos_sub [nlevel-submit args]        nlevel-submit in the namespace (--appliance set)
#   chaos_tel_key PATH KEY                a telemetry value (-1 when absent)
#   chaos_elapsed FILE                    the elapsed_s of the last SUMMARY line in FILE
#   chaos_held_s [LINE]                   seconds the host held the appliance's I/O lcore (or
#                                         its manager lcores at the stop), as its log says,
#                                         summed over the lines after LINE (0: all)
#   chaos_app_lines                       the appliance log's line count (a LINE for the above)
#                                         (nlevel-submit's own clock: first FSUBMIT to last
#                                         answer, without the start-up and exit of an ASan
#                                         build); empty when none
#   chaos_gone PATTERN SECONDS            0 when no process whose command line matches the
#                                         extended regex PATTERN is left within SECONDS
#                                         (pgrep -f); else 1 and CHAOS_LEFT = what is left
#   chaos_cg_left ID                      paths of cgroups of this test's worker ID
#                                         (worker-ID@APPLIANCE_IP:PORT) still present
#                                         (v1 and v2), one per line; empty when none
#   chaos_has_submit_opt OPT              0 when nlevel-submit's --help offers OPT
#   chaos_invariant_start / _check        #34: the accounting invariant on every telemetry
#                                         snapshot while the test runs (a TAP line)
#   chaos_task_state SUBMIT_ID INDEX      task INDEX's state from the appliance's records
#                                         (nlevel-submit --status ID --tasks: ok, failed,
#                                         timeout, cancelled, ...); empty when unknown
# TAP: tests/common/nl_tap.sh (say, t, nl_tap_done) is sourced too.

CHAOS_SRC=${NL_SRC_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$CHAOS_SRC/tests/common/nl_tap.sh"
. "$CHAOS_SRC/tests/common/nl_veth.sh"
. "$CHAOS_SRC/tests/common/nl_tmp.sh"

chaos_skip() { echo "1..0 # SKIP $*"; exit 0; }

CW_PID=() CHAOS_APP= CHAOS_BUSY=() CHAOS_EXTRA_PIDS=()
# wait for PIDs (already signalled) for at most S seconds each, then SIGKILL them, saying so on
# stderr (a worker or appliance that ignores SIGTERM/SIGINT is a defect to see, not a hang)
chaos_reap() { # S PID...
	local s=$1 p i
	shift
	for p in "$@"; do
		for ((i = 0; i < s * 10; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$p" 2>/dev/null; then
			echo "chaos: pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80)) did not exit within $s s of its signal: SIGKILL" >&2
			kill -9 "$p" 2>/dev/null
		fi
		wait "$p" 2>/dev/null
	done
}
chaos_cleanup() {
	local p
	for p in "${CW_PID[@]}" "${CHAOS_EXTRA_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	chaos_reap 15 "${CW_PID[@]}" "${CHAOS_EXTRA_PIDS[@]}"
	if [[ -n $CHAOS_APP ]]; then kill -INT "$CHAOS_APP" 2>/dev/null; chaos_reap 30 "$CHAOS_APP"; fi
	for p in "${CHAOS_BUSY[@]}"; do kill "$p" 2>/dev/null; done
	nl_veth_down "$CNS" "$CVA"
	[[ -n ${CT:-} && -z ${CHAOS_KEEP:-} ]] && rm -rf "$CT"
	rm -rf "/var/run/dpdk/$CPFX"
}

chaos_init() { # TAG NLEVEL WORKER SUBMIT
	local tag=$1
	CNLEVEL=$2 CWORKER=$3 CSUBMIT=$4
	[[ $(id -u) == 0 ]] || chaos_skip "not root"
	command -v ip >/dev/null || chaos_skip "no iproute2"
	CID=$$
	CNS=nlc$tag$CID CVA=nlca$CID CVB=nlcb$CID CPFX=nlc$tag$CID
	CNET=10.$((100 + CID % 100)).$((CID / 100 % 250))
	CAPP_IP=$CNET.1
	CT=$(nl_scratch nlchaos) # tmpfs: the journal fsyncs fast (nl_tmp.sh)
	trap chaos_cleanup EXIT
	nl_veth_up "$CNS" "$CVA" "$CVB" "$CNET" || chaos_skip "$NL_VETH_ERR"
	CINNS=(ip netns exec "$CNS")
}

chaos_busy() { # [N]
	local i
	for ((i = 0; i < ${1:-2}; i++)); do
		yes >/dev/null &
		CHAOS_BUSY+=($!)
	done
}

chaos_tel_key() { # path key
	python3 "$CHAOS_SRC/tests/dataplane/nl_tel.py" "$CPFX" "$1" 2>/dev/null |
		python3 -c "import json,sys; d=json.load(sys.stdin); print(list(d.values())[0]['$2'])" \
			2>/dev/null || echo -1
}

chaos_start_app() { # [nlevel options]
	"$CNLEVEL" --no-huge --no-pci --no-shconf --file-prefix "$CPFX" -l 0-1 \
		--vdev="net_af_packet0,iface=$CVA" -- --config "$CHAOS_SRC/tests/taskfarm/farm.ini" \
		--scheme nlsc --ip "$CAPP_IP" --work-scale 1e-3 --idle-sleep-us 50 \
		--worker-timeout 3 --state-dir "$CT/state" "$@" >"$CT/app.log" 2>&1 &
	CHAOS_APP=$!
	local i
	for i in $(seq 300); do
		[[ $(chaos_tel_key /nlevel/stats accepted) != -1 ]] && return 0
		kill -0 "$CHAOS_APP" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "EAL initialisation failed" "$CT/app.log" && chaos_skip "the DPDK EAL cannot start here"
	sed 's/^/# /' "$CT/app.log" | tail -n 20
	echo "not ok 1 - the appliance comes up"
	echo "1..1"
	exit 1
}

chaos_commands() { # N; the file's lines on stdin
	local w=$1
	mkdir -p -m 755 "$CT/out$w"
	{ cat; echo "output_dir = $CT/out$w"; } >"$CT/w$w.conf"
}

chaos_start_worker() { # N [worker options]
	local w=$1
	shift
	# a previous worker N still running (e.g. across a restart of the appliance) is reaped too
	[[ -n ${CW_PID[$w]:-} ]] && kill -0 "${CW_PID[$w]}" 2>/dev/null && CHAOS_EXTRA_PIDS+=("${CW_PID[$w]}")
	# nsenter --net, not `ip netns exec`: the latter mounts a new /sys, without the cgroup
	# hierarchies, so the worker would find no cgroups
	nsenter --net="/var/run/netns/$CNS" "$CWORKER" --appliance "$CAPP_IP" --id "$w" --allow-root \
		--mach 1e9:'*' --mach 1e9:'*' --mach 1e9:'*' --mach 1e9:'*' \
		--commands "$CT/w$w.conf" "$@" >>"$CT/w$w.log" 2>&1 &
	CW_PID[$w]=$!
}

chaos_wait_joined() { # K NCMD
	local i
	for i in $(seq 200); do
		[[ $(chaos_tel_key /nlevel/stats workers_joined) -ge $1 &&
			$(chaos_tel_key /nlevel/submits commands) -ge $2 ]] && return 0
		sleep 0.1
	done
	return 1
}

# the appliance and the two workers (a worker joins a restarted appliance by itself: HELLO
# every 2 s; it is started only when it is not running: a second worker of the same id would
# leave the cgroups to the first); up to 60 s to join (a loaded host)
chaos_up() { # [nlevel options]
	local i w
	[[ -f $CT/app.log ]] && cat "$CT/app.log" >>"$CT/app.all.log"
	chaos_start_app --worker-timeout 10 "$@"
	for w in 1 2; do [[ -n ${CW_PID[$w]:-} ]] && kill -0 "${CW_PID[$w]}" 2>/dev/null || chaos_start_worker $w; done
	for i in 1 2 3; do chaos_wait_joined 2 1 && return 0; done
	return 1
}

chaos_wait_log() { # N TEXT K
	local i
	for i in $(seq 200); do
		[[ $(grep -c -- "$2" "$CT/w$1.log") -ge $3 ]] && return 0
		sleep 0.1
	done
	return 1
}

# a hung nlevel-submit fails its check (exit 124) instead of the whole test at meson's limit
chaos_sub() { timeout -k 5 180 "${CINNS[@]}" "$CSUBMIT" --appliance "$CAPP_IP" "$@"; }

chaos_elapsed() { sed -n 's/.*elapsed_s=\([0-9.]*\).*/\1/p' "$1" | tail -n 1; }
# docs/dataplane.md "What holds the I/O lcore": on this VM the kernel held an appliance's I/O
# lcore (behind DAMON's kdamond) for up to 11.6 s; every deadline the lcore keeps, and every
# answer it owes, is late by that much, which is the host's doing, not the product's; at the
# stop, so is the wait for manager lcores the host held ("took S s to stop")
chaos_held_s() {
	tail -n +$((${1:-0} + 1)) "$CT/app.log" |
		sed -n -e 's/.*the I\/O lcore was held \([0-9.]*\) s.*/\1/p' \
			-e 's/.*the manager lcores took \([0-9.]*\) s to stop.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}
chaos_app_lines() { wc -l <"$CT/app.log"; }
# Seconds the host held worker W, from line L+1 of its log on, as the worker measured them: turns
# of its loop over 1 s (but the turn of its own kill, the "time limits" part: the next count has
# it), commands that ended over 1 s after their SIGKILL (the kernel held them meanwhile), and
# command starts on the starter thread over 0.5 s (the child's cgroup join, docs/taskfarm.md:
# a CI run's 12.5 s start made a 2 s task end 14.5 s after its submit; a start inline in the
# loop is a turn of the loop, counted there).
chaos_worker_held_s() { # W [L]
	tail -n +$((${2:-0} + 1)) "$CT/w$1.log" | awk '
		/a turn of the loop took/ && !/longest part: time limits/ {
			for (i = 1; i < NF; i++) if ($i == "took") s += $(i + 1) }
		/starting the command of slot .* took .* ms \(on the starter thread\)/ {
			for (i = 1; i < NF; i++) if ($i == "took") s += $(i + 1) }
		/ms after the worker killed it/ {
			for (i = 1; i < NF; i++) if ($(i + 1) == "ms" && $(i + 2) == "after") s += $i }
		END { printf "%.1f\n", s / 1000 }'
}

chaos_gone() { # PATTERN SECONDS
	local i lim=$(($2 * 10))
	for ((i = 0; i <= lim; i++)); do
		CHAOS_LEFT=$(pgrep -af -- "$1" | grep -v -e pgrep -e chaos_lib)
		[[ -z $CHAOS_LEFT ]] && return 0
		sleep 0.1
	done
	return 1
}

chaos_cg_left() { # worker id
	local d
	for d in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		find "$d" -maxdepth 7 -type d -path "*/nlevel/worker-$1@$CAPP_IP:*" 2>/dev/null
	done | sort -u
}

chaos_has_submit_opt() { "$CSUBMIT" --help 2>&1 | grep -q -- "$1"; }

# #34 item 5: the accounting invariant (accepted = completed + failed + in_flight) on every
# consistent telemetry snapshot, polled every 0.2 s across restarts of the appliance:
# chaos_invariant_start, then chaos_invariant_check (a TAP line; CHAOS_INV = its figures)
chaos_invariant_start() {
	python3 "$CHAOS_SRC/tests/chaos/nl_invariant.py" "$CPFX" 0.2 >"$CT/invariant.out" 2>&1 &
	CHAOS_INV_PID=$!
	CHAOS_EXTRA_PIDS+=("$CHAOS_INV_PID")
}
chaos_invariant_check() {
	kill "$CHAOS_INV_PID" 2>/dev/null
	wait "$CHAOS_INV_PID" 2>/dev/null
	CHAOS_INV=$(tr '\n' ';' <"$CT/invariant.out")
	say "the accounting invariant held at every telemetry snapshot (accepted = completed + failed + in_flight)" \
		"$(grep -q '^polls [0-9]* snapshots [1-9][0-9]* violations 0$' "$CT/invariant.out"; echo $?)" \
		"$CHAOS_INV"
}

chaos_task_state() { # submit id, task index
	chaos_sub --status "$1" --tasks 2>/dev/null | awk -v i="$2" '$1 == i { print $2 }'
}
