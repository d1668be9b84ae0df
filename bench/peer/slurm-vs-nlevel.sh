#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# slurm-vs-nlevel.sh: side-by-side run of a real peer (Slurm) and nlevel on this machine:
# N trivial tasks (default 10,000), tasks/s end to end and median submit-to-start latency for
# each, printed side by side. Not part of CI (minutes of wall time); run it by hand:
#
#   bench/peer/slurm-vs-nlevel.sh [--tasks N] [--build DIR] [--farm-rate TPS] [--no-slurm] [--keep]
#   (the build defaults to $NL_BUILD, then build/ at the repository root)
#
# Slurm: Debian's slurm-wlm + munge (installed here with apt-get when missing; they are not in
# tools/install-deps.sh), one slurmctld + one slurmd (CPUs=2) and their own munged, all under a
# temporary folder and stopped on exit (nothing of the system's munge or Slurm set-up is
# touched). The workload is one job array of `true` (--array=0-(N-1)). Epilog=/bin/true makes a
# finished job trigger scheduling at once (without it a core frees only on the next 1 s tick);
# completions are counted with sdiag, and submit/start times come from scontrol (1 s
# resolution: that is all Slurm records).
#
# nlevel: in task-farm mode: the appliance on net_af_packet over a veth pair into a private
# network namespace, four nlevel-workers there running `/bin/true` (8 machines), nlevel-loadgen
# submitting the same N tasks (needs root, iproute2, and nlevel, nlevel-worker, nlevel-loadgen
# in the build). Beside it, for no-op tasks: the live appliance in --native mode (machines
# in-process finishing at once) and nlevel-sim's event rate. As the fork/exec bound of any farm
# of `true` on this machine, the script also times N `true` spawned two at a time by xargs.
#
# Exit status: 0; 1 when a side failed (the other side's figures are still printed).
set -uo pipefail

N=10000
FARM_RATE=2000
SLURM=1
BUILD=
KEEP=0
while [ $# -gt 0 ]; do
	case "$1" in
	--tasks) N=$2; shift 2 ;;
	--build) BUILD=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--farm-rate) FARM_RATE=$2; shift 2 ;;
	--no-slurm) SLURM=0; shift ;;
	-h|--help) sed -n '2,25p' "$0"; exit 0 ;;
	*) echo "slurm-vs-nlevel: unknown argument $1" >&2; exit 2 ;;
	esac
done
case "$N" in ''|*[!0-9]*) echo "slurm-vs-nlevel: --tasks: '$N' is not a count" >&2; exit 2 ;; esac
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/tests/common/nl_veth.sh"
if [ -z "$BUILD" ]; then
	for d in "${NL_BUILD:-}" "$SRC/build"; do
		[ -x "$d/dataplane/nlevel" ] && { BUILD=$d; break; }
	done
fi
now() { date +%s.%N; }
log() { echo "[slurm-vs-nlevel] $*" >&2; }

# --- Slurm -------------------------------------------------------------------------------------
slurm_ok=$SLURM
if [ "$SLURM" -eq 1 ] && { ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; }; then
	log "installing slurm-wlm and munge from Debian's archive"
	SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
		slurm-wlm munge >&2 || slurm_ok=0
fi
TMP=$(mktemp -d /tmp/nl-slurm.XXXXXX)
PIDS=()
cleanup() {
	declare -F farm_stop >/dev/null && farm_stop
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	[ "$KEEP" -eq 1 ] && log "kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

s_rate=NA; s_p50=NA; s_p50_idle=NA; s_note=
if [ "$slurm_ok" -eq 1 ]; then
	mkdir -p "$TMP/etc" "$TMP/key" "$TMP/run" "$TMP/log" "$TMP/state" "$TMP/spool"
	chmod 0700 "$TMP/key"; chmod 0755 "$TMP/run"
	dd if=/dev/urandom of="$TMP/key/munge.key" bs=1024 count=1 status=none
	chmod 0400 "$TMP/key/munge.key"
	munged -F --force --key-file="$TMP/key/munge.key" --socket="$TMP/run/munge.socket" \
		--pid-file="$TMP/run/munged.pid" --log-file="$TMP/log/munged.log" \
		--seed-file="$TMP/run/munged.seed" 2>>"$TMP/log/munged.err" &
	PIDS+=($!)
	for _ in $(seq 50); do [ -S "$TMP/run/munge.socket" ] && break; sleep 0.1; done
	HOST=$(hostname -s)
	CPORT=$(free_port); DPORT=$(free_port)
	while [ "$DPORT" = "$CPORT" ]; do DPORT=$(free_port); done
	cat >"$TMP/etc/slurm.conf" <<CONF
ClusterName=nlpeer
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CPORT
SlurmdPort=$DPORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$TMP/run/munge.socket
CredType=cred/munge
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/run/slurmctld.pid
SlurmdPidFile=$TMP/run/slurmd.pid
SlurmctldLogFile=$TMP/log/slurmctld.log
SlurmdLogFile=$TMP/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
Epilog=/bin/true
ReturnToService=2
MaxArraySize=$((N + 1))
MaxJobCount=$((N * 2 + 100))
MinJobAge=3600
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=peer Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$TMP/etc/slurm.conf
	slurmctld -D -i >"$TMP/log/slurmctld.out" 2>&1 &
	PIDS+=($!)
	sleep 1
	slurmd -D >"$TMP/log/slurmd.out" 2>&1 &
	PIDS+=($!)
	up=0
	for _ in $(seq 100); do
		st=$(sinfo -h -o %T 2>/dev/null | head -n1)
		[ "$st" = idle ] && { up=1; break; }
		sleep 0.2
	done
	if [ "$up" -ne 1 ]; then
		log "Slurm did not come up (node state '${st:-?}'); logs in $TMP/log"
		KEEP=1; slurm_ok=0; s_note="did not start"
	fi
fi

completed() { sdiag 2>/dev/null | awk -F: '/Jobs completed/ {gsub(/ /,"",$2); print $2; exit}'; }

# median of (StartTime - SubmitTime) [s] over jobs matching a name, from scontrol.
start_lat_p50() {
	scontrol -o show job 2>/dev/null | python3 -c '
import sys, datetime, statistics
f = "%Y-%m-%dT%H:%M:%S"
lat = []
for line in sys.stdin:
    kv = dict(x.split("=", 1) for x in line.split() if "=" in x)
    if kv.get("JobName") != sys.argv[1] or "StartTime" not in kv:
        continue
    try:
        s = datetime.datetime.strptime(kv["SubmitTime"], f)
        t = datetime.datetime.strptime(kv["StartTime"], f)
    except ValueError:
        continue
    lat.append((t - s).total_seconds())
print(f"{statistics.median(lat):.1f}" if lat else "NA")
' "$1"
}

if [ "$slurm_ok" -eq 1 ]; then
	# Warm-up (the first job after a controller start takes about 2 s), then an idle-latency
	# probe: five single jobs, one at a time.
	c0=$(completed)
	sbatch -Q -J nl-warm -o /dev/null --wrap=true >/dev/null
	for _ in $(seq 100); do [ $(( $(completed) - c0 )) -ge 1 ] && break; sleep 0.2; done
	c0=$(completed)
	for i in $(seq 5); do sbatch -Q -J nl-idle -o /dev/null --wrap=true >/dev/null; sleep 1.2; done
	for _ in $(seq 100); do [ $(( $(completed) - c0 )) -ge 5 ] && break; sleep 0.2; done
	s_p50_idle=$(start_lat_p50 nl-idle)
	c0=$(completed)
	log "Slurm: submitting a job array of $N x true"
	t0=$(now)
	if sbatch -Q -J nl-array -o /dev/null --array=0-$((N - 1)) --wrap=true >/dev/null; then
		last=$c0; stall=0
		while :; do
			c=$(completed)
			[ $((c - c0)) -ge "$N" ] && break
			if [ "$c" = "$last" ]; then stall=$((stall + 1)); else stall=0; last=$c; fi
			[ "$stall" -ge 300 ] && { log "Slurm stalled at $((c - c0)) of $N"; s_note="stalled"; break; }
			sleep 0.2
		done
		t1=$(now)
		done_n=$(( $(completed) - c0 ))
		s_rate=$(python3 -c "print(f'{$done_n / ($t1 - $t0):.1f}')")
		s_p50=$(start_lat_p50 nl-array)
		log "Slurm: $done_n tasks in $(python3 -c "print(f'{$t1 - $t0:.1f}')") s"
	else
		s_note="sbatch failed"; slurm_ok=0
	fi
fi

# --- fork/exec bound ---------------------------------------------------------------------------
t0=$(now)
seq "$N" | xargs -P 2 -n 64 sh -c 'for _ in "$@"; do /bin/true; done' _
t1=$(now)
fe_rate=$(python3 -c "print(f'{$N / ($t1 - $t0):.0f}')")

# --- nlevel ------------------------------------------------------------------------------------
n_rate=NA; n_p50=NA; n_mode="task farm (failed, see log)"; n_ok=1; sim_rate=NA
# Task farm: nlevel on net_af_packet over a veth pair whose peer sits in a private network
# namespace (as tests/dataplane/test_e2e.sh does), 4 nlevel-workers there with 2 machines each
# running `/bin/true` (--cmd 1=/bin/true), nlevel-loadgen submitting N tasks (L = 1, command 1)
# at --farm-rate tasks/s. tasks/s = completed / loadgen wall time; latency = loadgen's
# SUBMIT-to-COMPLETE p50 (an upper bound of submit-to-start: `true` runs in about 1 ms).
farm() {
	local NLEVEL=$BUILD/dataplane/nlevel WORKER LOADGEN NS=nlp$$ VA=nlpa$$ VB=nlpb$$ w v
	WORKER=$(find "$BUILD" -type f -name nlevel-worker -perm -u+x 2>/dev/null | head -n1)
	LOADGEN=$(find "$BUILD" -type f -name nlevel-loadgen -perm -u+x 2>/dev/null | head -n1)
	[ -x "$NLEVEL" ] && [ -n "$WORKER" ] && [ -n "$LOADGEN" ] || { log "no nlevel/worker/loadgen in $BUILD"; return 1; }
	[ "$(id -u)" -eq 0 ] && command -v ip >/dev/null || { log "task farm needs root and iproute2"; return 1; }
	FARM_NS=$NS FARM_VA=$VA
	nl_veth_up "$NS" "$VA" "$VB" 10.98.0 || { log "$NL_VETH_ERR"; return 1; }
	"$NLEVEL" --no-huge --no-pci --no-shconf --file-prefix "nlp$$" -l 0-1 \
		--vdev="net_af_packet0,iface=$VA" --log-level=lib.*:error -- \
		--config "$SRC/tests/dataplane/e2e.ini" --scheme nlsc --ip 10.98.0.1 \
		--work-scale 1e-3 --idle-sleep-us 50 >"$TMP/app.log" 2>&1 &
	FARM_APP=$!
	sleep 2
	kill -0 "$FARM_APP" 2>/dev/null || { log "nlevel did not start: $(tail -n 3 "$TMP/app.log")"; return 1; }
	local vecs=(00 10 01 11)
	for w in 1 2 3 4; do
		ip netns exec "$NS" "$WORKER" --appliance 10.98.0.1 --scale 1e-3 --allow-root --quiet \
			--id "$w" --mach "100e6:${vecs[$(((2 * w - 2) % 4))]}" \
			--mach "200e6:${vecs[$(((2 * w - 1) % 4))]}" --cmd 1=/bin/true \
			>"$TMP/w$w.log" 2>&1 &
		FARM_PIDS+=($!)
	done
	sleep 2
	ip netns exec "$NS" "$LOADGEN" --appliance 10.98.0.1 --tasks "$N" --rate "$FARM_RATE" \
		--res 2 --split 1 --instr 0 --data 0 --cmd 1 --timeout 10 --seed 1 \
		>"$TMP/lg.log" 2>&1
	grep '^nlevel-loadgen' "$TMP/lg.log" >&2
	local sum
	sum=$(grep '^SUMMARY' "$TMP/lg.log" | tail -n1)
	[ -n "$sum" ] || { log "loadgen failed: $(tail -n 3 "$TMP/lg.log")"; return 1; }
	local comp wall
	comp=$(tr ' ' '\n' <<<"$sum" | sed -n 's/^completed=//p')
	wall=$(tr ' ' '\n' <<<"$sum" | sed -n 's/^wall_s=//p')
	n_rej=$(tr ' ' '\n' <<<"$sum" | sed -n 's/^rejected=//p')
	n_rate=$(python3 -c "print(f'{$comp / $wall:.0f}')")
	n_p50="$(python3 -c "print(f'{$(tr ' ' '\n' <<<"$sum" | sed -n 's/^p50_us=//p') / 1e6:.4f}')") (submit-to-complete)"
	return 0
}
farm_stop() {
	for p in "${FARM_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "$FARM_APP" ] && kill -INT "$FARM_APP" 2>/dev/null && wait "$FARM_APP" 2>/dev/null
	[ -n "$FARM_NS" ] && nl_veth_down "$FARM_NS" "$FARM_VA"
	FARM_APP= FARM_VA= FARM_NS=
}
FARM_PIDS=(); FARM_APP=; FARM_VA=; FARM_NS=; n_rej=0
if [ -n "$BUILD" ] && farm; then
	n_mode="task farm: appliance + 4 nlevel-workers (8 machines) running true"
else
	n_ok=0
fi
farm_stop

# Task farm through nlevel-submit (issue #15): the same set-up (appliance, 4 workers, 8
# machines) with a --commands file naming `true`, and `nlevel-submit --array 1-N true --wait`
# (window 256): what a user runs. tasks/s = N / nlevel-submit's elapsed time; submit-to-start
# p50 = nlevel-submit's start_p50_ms (half the SUBMIT->ACCEPT round trip plus the appliance's
# ingress-to-DISPATCH time, docs/taskfarm.md).
sub_rate=NA; sub_p50=NA
farm_submit() {
	local NLEVEL=$BUILD/dataplane/nlevel WORKER SUBMIT NS=nlq$$ VA=nlqa$$ VB=nlqb$$ w
	WORKER=$(find "$BUILD" -type f -name nlevel-worker -perm -u+x 2>/dev/null | head -n1)
	SUBMIT=$(find "$BUILD" -type f -name nlevel-submit -perm -u+x 2>/dev/null | head -n1)
	[ -x "$NLEVEL" ] && [ -n "$WORKER" ] && [ -n "$SUBMIT" ] || { log "no nlevel/worker/submit in $BUILD"; return 1; }
	[ "$(id -u)" -eq 0 ] && command -v ip >/dev/null || return 1
	FARM_NS=$NS FARM_VA=$VA
	nl_veth_up "$NS" "$VA" "$VB" 10.94.0 || return 1
	"$NLEVEL" --no-huge --no-pci --no-shconf --file-prefix "nlq$$" -l 0-1 \
		--vdev="net_af_packet0,iface=$VA" --log-level=lib.*:error -- \
		--config "$SRC/tests/taskfarm/farm.ini" --scheme nlsc --ip 10.94.0.1 \
		--work-scale 1e-3 --idle-sleep-us 50 --worker-timeout 5 >"$TMP/app-submit.log" 2>&1 &
	FARM_APP=$!
	sleep 2
	kill -0 "$FARM_APP" 2>/dev/null || return 1
	printf 'command true = /bin/true\noutput_dir = %s/out\n' "$TMP" >"$TMP/cmds.conf"
	for w in 1 2 3 4; do
		ip netns exec "$NS" "$WORKER" --appliance 10.94.0.1 --allow-root --quiet --id "$w" \
			--mach '1e9:*' --mach '1e9:*' --commands "$TMP/cmds.conf" >"$TMP/ws$w.log" 2>&1 &
		FARM_PIDS+=($!)
	done
	sleep 3
	ip netns exec "$NS" "$SUBMIT" --appliance 10.94.0.1 --array "1-$N" --wait --quiet \
		--timeout 60 true >"$TMP/submit.log" 2>&1
	local sum
	sum=$(grep '^SUMMARY' "$TMP/submit.log" | tail -n1)
	[ -n "$sum" ] || { log "nlevel-submit failed: $(tail -n 3 "$TMP/submit.log")"; return 1; }
	log "nlevel-submit: $sum"
	sub_rate=$(tr ' ' '\n' <<<"$sum" | sed -n 's/^rate_tps=//p')
	sub_p50=$(tr ' ' '\n' <<<"$sum" | sed -n 's/^start_p50_ms=//p')
	return 0
}
FARM_PIDS=()
if [ -n "$BUILD" ]; then
	farm_submit || log "nlevel-submit farm failed"
fi
farm_stop

# No-op tasks: the live appliance in --native mode (the same tree of managers on DPDK lcores,
# machines in-process finishing at once: no fork/exec), and nlevel-sim's event rate.
nat_rate=NA; nat_lat=NA
if [ -n "$BUILD" ] && [ -x "$BUILD/dataplane/nlevel" ]; then
	out=$("$BUILD/dataplane/nlevel" --no-huge --no-pci --no-shconf --file-prefix=nlpn$$ \
		-l 0-1 --log-level=lib.*:error -- --config "$SRC/config/paper-96.ini" \
		--native 5 --native-instant 2>"$TMP/nlevel.err" | grep '^SUMMARY')
	if [ -n "$out" ]; then
		nat_rate=$(sed -n 's/.* rate_tps=\([0-9.]*\).*/\1/p' <<<"$out")
		nat_lat="mean $(python3 -c "print(f'{$(sed -n 's/.* lat_mean_ns=\([0-9.]*\).*/\1/p' <<<"$out") / 1e6:.3f}')") ms"
	else
		log "nlevel --native failed: $(tail -n 2 "$TMP/nlevel.err")"
	fi
fi
if [ -n "$BUILD" ] && [ -x "$BUILD/sim/nlevel-sim" ]; then
	out=$("$BUILD/sim/nlevel-sim" --config "$SRC/config/paper-96.ini" --quiet --seeds 1 \
		--loads 50 --horizon 1e5 --threads 1 --out "$TMP/sim" 2>/dev/null | grep '^SUMMARY')
	sim_rate=$(sed -n 's/.* events_per_s_thread=\([0-9.]*\).*/\1/p' <<<"$out")
fi

# --- side by side ------------------------------------------------------------------------------
ratio=NA
if [ "$s_rate" != NA ] && [ "$n_rate" != NA ]; then
	ratio=$(python3 -c "print(f'{$n_rate / $s_rate:.0f}')")
fi
printf '\n%-34s %-22s %s\n' "" "Slurm 22.05 (1 node)" "nlevel"
printf '%-34s %-22s %s\n' "tasks" "$N x true (job array)" "${n_mode:-?}"
printf '%-34s %-22s %s\n' "tasks/s end to end" "$s_rate" "$n_rate"
printf '%-34s %-22s %s\n' "submit-to-start p50, burst [s]" "$s_p50" "$n_p50"
printf '%-34s %-22s %s\n' "submit-to-start p50, idle [s]" "$s_p50_idle" "-"
printf '%-34s %-22s %s\n' "rejected" "0" "$n_rej (offered $FARM_RATE tasks/s)"
printf '%-34s %-22s %s\n' "nlevel-submit --array: tasks/s" "$s_rate" "$sub_rate (submit-to-start p50 $sub_p50 ms)"
printf '%-34s %-22s %s\n' "fork/exec bound (xargs -P2 true)" "$fe_rate tasks/s" "$fe_rate tasks/s"
printf '%-34s %-22s %s\n' "no-op tasks: nlevel --native" "-" "$nat_rate tasks/s ($nat_lat)"
printf '%-34s %-22s %s\n' "nlevel-sim events/s (1 thread)" "-" "$sim_rate"
echo "SUMMARY tasks=$N slurm_tps=$s_rate slurm_start_p50_s=$s_p50 slurm_idle_start_p50_s=$s_p50_idle nlevel_farm_tps=$n_rate nlevel_farm_rejected=$n_rej nlevel_over_slurm=$ratio nlevel_submit_tps=$sub_rate nlevel_submit_start_p50_ms=$sub_p50 submit_over_slurm=$(python3 -c "print(f'{$sub_rate / $s_rate:.1f}')" 2>/dev/null || echo NA) forkexec_tps=$fe_rate native_noop_tps=$nat_rate sim_events_per_s=$sim_rate${s_note:+ slurm_note=$s_note}"
[ "$slurm_ok" -eq 1 ] && [ "$n_ok" -eq 1 ]
