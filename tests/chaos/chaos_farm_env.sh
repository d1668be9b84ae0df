# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the chaos_farm_* scenarios (issue #33): one appliance on net_af_packet over a veth
# pair into a private network namespace (names by NAME and PID), workers with a commands file,
# nlevel-submit run inside the namespace. The caller sets NLEVEL WORKER SUBMIT and sources
# tests/common/nl_tap.sh first.
#   cf_up NET            namespace + veth (NET: three octets, e.g. 10.97.3); skips when impossible
#   cf_app LOG [OPTS]    the appliance (8 slots of tests/taskfarm/farm.ini), waits until it serves
#   cf_worker N [OPTS]   worker N with 4 machines and $CF_TMP/cmds.conf; cf_wait_workers N
#   cf_sub ARGS          nlevel-submit --appliance ... ARGS inside the namespace
#   cf_tel CMD KEY       a key of a telemetry reply (-1 when there is none)
#   cf_busy N            N `yes` loops beside the test (both cores busy), killed at exit
set -u
SRC=${NL_SRC_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$SRC/tests/common/nl_veth.sh"
CF_ID=cf$$
CF_NS=nlcf$$ CF_VA=nlcfa$$ CF_VB=nlcfb$$ CF_PFX=nlcf$$
CF_TMP=$(mktemp -d /tmp/nlcf.XXXXXX)
chmod 755 "$CF_TMP"
CF_WPIDS=() CF_APP= CF_BUSY=()
cf_skip() { echo "1..0 # SKIP $*"; exit 0; }
cf_cleanup() {
	for p in "${CF_BUSY[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${CF_WPIDS[@]}"; do kill "$p" 2>/dev/null; done
	if [[ -n $CF_APP ]]; then kill -INT "$CF_APP" 2>/dev/null; wait "$CF_APP" 2>/dev/null; fi
	nl_veth_down "$CF_NS" "$CF_VA"
	[[ -n ${CF_KEEP:-} ]] || rm -rf "$CF_TMP"
	rm -rf "/var/run/dpdk/$CF_PFX"
}
trap cf_cleanup EXIT
cf_up() {
	[[ $(id -u) == 0 ]] || cf_skip "not root"
	command -v ip >/dev/null || cf_skip "no iproute2"
	CF_NET=$1
	CF_APP_IP=$1.1
	nl_veth_up "$CF_NS" "$CF_VA" "$CF_VB" "$1" || cf_skip "$NL_VETH_ERR"
	CF_INNS=(ip netns exec "$CF_NS")
	cat >"$CF_TMP/cmds.conf" <<EOC
command nap = /bin/sleep {1}
command true = /bin/true
command tick = /bin/sh -c "echo \$0 >>$CF_TMP/ticks" {1}
output_dir = $CF_TMP/out
EOC
	mkdir -m 755 "$CF_TMP/out"
}
cf_tel() {
	python3 "$SRC/tests/dataplane/nl_tel.py" "$CF_PFX" "$1" 2>/dev/null |
		python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps(list(d.values())[0]['$2']))" 2>/dev/null || echo -1
}
cf_app() {
	local log=$1

	shift
	"$NLEVEL" --no-huge --no-pci --no-shconf --file-prefix "$CF_PFX" -l 0-1 \
		--vdev="net_af_packet0,iface=$CF_VA" -- --config "$SRC/tests/taskfarm/farm.ini" \
		--scheme nlsc --ip "$CF_APP_IP" --work-scale 1e-3 --idle-sleep-us 50 \
		--worker-timeout 3 --state-dir "$CF_TMP/state" "$@" >"$log" 2>&1 &
	CF_APP=$!
	for _ in $(seq 300); do
		[[ $(cf_tel /nlevel/stats accepted) != -1 ]] && return 0
		kill -0 "$CF_APP" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "EAL initialisation failed" "$log" && cf_skip "the DPDK EAL cannot start here"
	sed 's/^/# /' "$log" | tail -n 20
	echo "not ok 1 - the appliance comes up"
	echo "1..1"
	exit 1
}
cf_worker() {
	local w=$1

	shift
	"${CF_INNS[@]}" "$WORKER" --appliance "$CF_APP_IP" --id "$w" --allow-root --quiet "$@" \
		--mach 1e9:'*' --mach 1e9:'*' --mach 1e9:'*' --mach 1e9:'*' \
		--commands "$CF_TMP/cmds.conf" >>"$CF_TMP/w$w.log" 2>&1 &
	CF_WPIDS[$w]=$!
}
cf_wait_workers() {
	for _ in $(seq 200); do
		[[ $(cf_tel /nlevel/stats workers_joined) -ge $1 && $(cf_tel /nlevel/submits commands) -ge 3 ]] && return 0
		sleep 0.1
	done
	return 1
}
cf_sub() { "${CF_INNS[@]}" "$SUBMIT" --appliance "$CF_APP_IP" "$@"; }
cf_busy() {
	for _ in $(seq "$1"); do
		yes >/dev/null &
		CF_BUSY+=($!)
	done
}
