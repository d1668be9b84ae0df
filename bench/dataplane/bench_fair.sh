#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The light principal's latency under the heavy one's flood (issue #35 item 5; docs/benchmarks.md
# "Fair admission under a flood"), as root: nlevel (release build) on net_af_packet over a veth
# pair into a private network namespace (nlfa<pid>), 2 nlevel-workers of 4 emulated machines
# each (sub-tasks of 20 ms at 100e6 instr/s, 10 ms at 200e6: ~600 tasks/s), principals `light`
# and `heavy` of weight 1, each with its own key; runs in alternation, REPS of each:
#   alone  light offers 50 tasks/s for SECONDS, nobody else (its baseline)
#   flood  light 50 tasks/s while heavy offers 2,000 tasks/s (3.3x the capacity)
# for the build under test and, given OLD_BUILD, for an older build (e.g. main before issue
# #35) with its defaults and with the same admission limit. Prints one line per run and
# SUMMARY p99_alone_ms=... p99_flood_ms=... ratio=... light_rejected=... (medians of the
# build under test; ratio = flood / alone, light_rejected = the light principal's REJECTs).
# Usage: bench/dataplane/bench_fair.sh BUILD [OLD_BUILD [SECONDS [REPS]]]   (repository root)
# NL_BENCH_APP_ARGS: more nlevel options (e.g. --inbox 16); NL_BENCH_ONLY_INI=FILE: only flood
# runs with that principals file (it must name light and heavy), this build and OLD_BUILD.
set -u
B=${1:?build dir}
OLD=${2:-}
S=${3:-20}
R=${4:-3}
[[ $(id -u) == 0 ]] || { echo "bench_fair.sh: run as root (network namespace)" >&2; exit 1; }
id=$$
NS=nlfa$id VA=nlfaa$id VB=nlfab$id PFX=nlfa$id
TMP=$(mktemp -d)
PIDS=() APPPID=
. tests/common/nl_veth.sh
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	[[ -n $APPPID ]] && kill -INT "$APPPID" 2>/dev/null && wait "$APPPID" 2>/dev/null
	nl_veth_down "$NS" "$VA"
	[[ -n ${NL_BENCH_KEEP:-} ]] && cp -r "$TMP" "$NL_BENCH_KEEP"
	rm -rf "$TMP" "/var/run/dpdk/$PFX"
}
trap cleanup EXIT
nl_veth_up "$NS" "$VA" "$VB" 10.96.0 || { echo "bench_fair.sh: $NL_VETH_ERR" >&2; exit 1; }
(umask 077 && head -c 32 /dev/urandom >"$TMP/site.key")
printf '[submitter light]\n[submitter heavy]\n' >"$TMP/pr.ini"
printf '[admission]\nmax_in_flight = 64\n[submitter light]\n[submitter heavy]\n' >"$TMP/pr64.ini"
printf '[admission]\nmax_in_flight = 16\n[submitter light]\n[submitter heavy]\n' >"$TMP/pr16.ini"
for p in light heavy; do
	"$B/tools/key/nlevel-key" --key "$TMP/site.key" --principal $p --out "$TMP/$p.key" \
		>/dev/null || exit 1
done
INNS=(ip netns exec "$NS")
lg() { # principal rate seconds seed log
	"${INNS[@]}" "$BLD/tools/loadgen/nlevel-loadgen" --appliance 10.96.0.1 --key "$TMP/$1.key" \
		--principal "$1" --tasks $(($2 * $3)) --rate "$2" --res 2 --split 1 --instr 2e9 \
		--data 0 --timeout 10 --seed "$4" --csv "$5.csv" >"$5" 2>&1
}
val() { grep '^SUMMARY' "$1" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"; }
run() { # build, label, principals file, mode
	BLD=$1
	"$BLD/dataplane/nlevel" --no-huge --no-pci --no-shconf --file-prefix "$PFX" -l 0-1 \
		--log-level=lib.*:error "--vdev=net_af_packet0,iface=$VA" -- \
		--config tests/dataplane/e2e.ini --scheme nlsc --ip 10.96.0.1 --work-scale 1e-3 \
		--idle-sleep-us 50 --key "$TMP/site.key" --principals "$3" ${NL_BENCH_APP_ARGS:-} \
		>"$TMP/app.log" 2>&1 &
	APPPID=$!
	sleep 1.5
	for w in 1 2; do
		"${INNS[@]}" "$BLD/tools/worker/nlevel-worker" --appliance 10.96.0.1 --scale 1e-3 \
			--allow-root --quiet --id "$w" --key "$TMP/site.key" --mach 100e6:00 \
			--mach 200e6:10 --mach 100e6:01 --mach 200e6:11 >/dev/null 2>&1 &
		PIDS+=($!)
	done
	sleep 1
	local h=
	if [[ $4 == flood ]]; then
		lg heavy 2000 "$S" 12 "$TMP/heavy.log" &
		h=$!
		sleep 1 # the flood first: the queues are full when light starts
	fi
	lg light 50 "$S" 11 "$TMP/light.log"
	[[ -n $h ]] && wait "$h"
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=()
	kill -INT "$APPPID" 2>/dev/null
	wait "$APPPID" 2>/dev/null
	APPPID=
	local p99 p50 rej hacc
	p99=$(val "$TMP/light.log" p99_us)
	p50=$(val "$TMP/light.log" p50_us)
	rej=$(val "$TMP/light.log" rejected)
	hacc=$([[ $4 == flood ]] && val "$TMP/heavy.log" accepted || echo 0)
	printf 'run %-12s %-5s light: p50 %8.1f ms p99 %8.1f ms, %s of %s rejected, %s lost; heavy accepted %s\n' \
		"$2" "$4" "$(python3 -c "print($p50 / 1000)")" "$(python3 -c "print($p99 / 1000)")" \
		"$rej" "$((50 * S))" "$(val "$TMP/light.log" lost)" "$hacc"
	echo "$2 $4 $p99 $rej" >>"$TMP/results"
}
if [[ -n ${NL_BENCH_ONLY_INI:-} ]]; then # one admission file, this build and OLD, flood only
	cp "$NL_BENCH_ONLY_INI" "$TMP/only.ini"
	for k in $(seq "$R"); do
		run "$B" new "$TMP/only.ini" flood
		[[ -n $OLD ]] && run "$OLD" old "$TMP/only.ini" flood
	done
	exit 0
fi
for k in $(seq "$R"); do
	run "$B" new "$TMP/pr.ini" alone
	run "$B" new "$TMP/pr.ini" flood
	run "$B" new-L16 "$TMP/pr16.ini" flood
	if [[ -n $OLD ]]; then
		run "$OLD" old "$TMP/pr.ini" flood
		run "$OLD" old-L64 "$TMP/pr64.ini" flood
	fi
done
python3 - "$TMP/results" <<'PY'
import statistics, sys
r = {}
for line in open(sys.argv[1]):
    b, m, p99, rej = line.split()
    r.setdefault((b, m), []).append((float(p99), int(rej)))
med = lambda k, i: statistics.median(x[i] for x in r[k]) if k in r else float("nan")
a, f = med(("new", "alone"), 0), med(("new", "flood"), 0)
out = "SUMMARY p99_alone_ms=%.1f p99_flood_ms=%.1f ratio=%.2f light_rejected=%d" % (
    a / 1000, f / 1000, f / a, med(("new", "flood"), 1))
for b in ("new-L16", "old", "old-L64"):
    if (b, "flood") in r:
        out += " %s_p99_flood_ms=%.1f %s_light_rejected=%d" % (
            b.replace("-", "_"), med((b, "flood"), 0) / 1000, b.replace("-", "_"),
            med((b, "flood"), 1))
print(out)
PY
