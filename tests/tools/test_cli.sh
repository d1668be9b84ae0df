#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Command lines of the plain-socket tools (TAP): --help lists every option with its default,
# argument errors say what is wrong, exit status 2 for a bad command line.
# Usage: test_cli.sh LOADGEN WORKER [NLEVEL]
LG=$1 WK=$2 NL=${3:-}
R=${NL_SRC_ROOT:-.}
. "$(dirname "$0")/../common/nl_tap.sh"
# every long option of the tool appears in its --help, with "default" on its line or the next
helpcheck() { # name, binary, source file
	local name=$1 bin=$2 src=$3 help missing=
	help=$("$bin" --help 2>&1)
	for o in $(sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", .*/\1/p' "$src"); do
		[[ $help == *"--$o"* ]] || missing="$missing --$o"
	done
	n=$((n + 1))
	if [[ -z $missing ]]; then echo "ok $n - $name --help lists every option"; else
		echo "not ok $n - $name --help lacks$missing"; fail=1; fi
}
helpcheck loadgen "$LG" "$R/tools/loadgen/nlevel_loadgen.c"
helpcheck worker "$WK" "$R/tools/worker/nlevel_worker.c"
t "loadgen help: defaults and units" 0 "--timeout S            give up S wall seconds after the last answer (default 10)" "$LG" --help
t "worker help: defaults and units" 0 "--load-ms MS           LOAD report period in milliseconds (default 100" "$WK" --help
t "loadgen --res 99" 2 "--res: resources N must be 1..64, got '99'" "$LG" --appliance 127.0.0.1 --rate 10 --res 99 --split 2
t "loadgen --split 0" 2 "--split: sub-tasks L must be 1..64" "$LG" --appliance 127.0.0.1 --rate 10 --res 2 --split 0
t "loadgen --rate abc" 2 "--rate: want a number >= 0, got 'abc'" "$LG" --appliance 127.0.0.1 --rate abc
t "loadgen no shape" 2 "give --config FILE (the appliance's configuration) or both --res N and --split L" \
	"$LG" --appliance 127.0.0.1 --rate 10
t "loadgen no appliance" 2 "--appliance IP[:PORT] is required" "$LG" --rate 10 --res 2 --split 2
t "loadgen --load without config" 2 "--load needs --config FILE" "$LG" --appliance 127.0.0.1 --load 10 --res 2 --split 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf '[system]\nmachnes = 8\n' >"$TMP/bad.ini"
t "loadgen bad config FILE:LINE" 2 "bad.ini:" "$LG" --appliance 127.0.0.1 --rate 10 --config "$TMP/bad.ini"
# the shape comes from --config: paper-96.ini has N = 4, L = 4; --split overrides it
t "loadgen shape from config" 1 "N = 4 resources, L = 4 sub-tasks" \
	"$LG" --appliance 127.0.0.1:9 --rate 1000 --tasks 1 --timeout 0.1 --config "$R/config/paper-96.ini"
t "loadgen --split overrides config" 1 "N = 4 resources, L = 2 sub-tasks" \
	"$LG" --appliance 127.0.0.1:9 --rate 1000 --tasks 1 --timeout 0.1 --split 2 --config "$R/config/paper-96.ini"
# every SUMMARY key of loadgen is defined in docs/output.md
sum=$("$LG" --appliance 127.0.0.1:9 --rate 1000 --tasks 1 --timeout 0.1 --res 2 --split 1 2>/dev/null | grep '^SUMMARY')
missing=
for k in $(tr ' ' '\n' <<<"$sum" | sed -n 's/=.*//p'); do
	grep -q "\`$k\`" "$R/docs/output.md" || missing="$missing $k"
done
n=$((n + 1))
if [[ -n $sum && -z $missing ]]; then echo "ok $n - loadgen SUMMARY keys defined in docs/output.md"; else
	echo "not ok $n - loadgen SUMMARY keys not in docs/output.md:$missing"; fail=1; fi
# REJECTs counted by reason, against a stand-in appliance with N = 2, L = 2
if command -v python3 >/dev/null; then
	exec 3< <(exec python3 "$R/tests/tools/fake_appliance.py" 2 2 20)
	fake=$!
	read -r -t 5 port <&3
	out=$("$LG" --appliance "127.0.0.1:$port" --rate 2000 --tasks 200 --res 4 --split 2 --timeout 1 2>&1)
	rej=$(grep '^SUMMARY' <<<"$out" | tr ' ' '\n' | sed -n 's/^rejected_no_machine=//p')
	comp=$(grep '^SUMMARY' <<<"$out" | tr ' ' '\n' | sed -n 's/^completed=//p')
	n=$((n + 1))
	if [[ $rej -gt 100 && $((rej + comp)) == 200 && $out == *"rejected: no_machine (no machine matches"* ]]; then
		echo "ok $n - --res 4 against an N = 2 appliance: $rej REJECTs counted as no_machine, and said why"
	else echo "not ok $n - REJECT reasons: ${out//$'\n'/ | }"; fail=1; fi
	out=$("$LG" --appliance "127.0.0.1:$port" --rate 2000 --tasks 200 --res 2 --split 3 --timeout 1 2>&1)
	t "--split 3 against L = 2: REJECTs counted as bad_task" 0 "200 rejected: bad_task" echo "$out"
	out=$("$LG" --appliance "127.0.0.1:$port" --rate 2000 --tasks 200 --config "$R/config/farm-demo.ini" --timeout 1 2>&1)
	t "--config gives the appliance's shape: every task COMPLETEs" 0 "completed=200 failed=0 lost=0" echo "$out"
	exec 3<&-
	kill "$fake" 2>/dev/null
fi
t "worker --mach 1e6:1x" 2 "--mach '1e6:1x': VECTOR entries must be 0, 1 or *" "$WK" --appliance 127.0.0.1 --mach 1e6:1x
t "worker --mach speed" 2 "SPEED_IPS (before the first ':') must be a number" "$WK" --appliance 127.0.0.1 --mach fast:01
t "worker --mach no colon" 2 "want SPEED_IPS:VECTOR[:LINK_BPS]" "$WK" --appliance 127.0.0.1 --mach 1e6
t "worker --mach link" 2 "LINK_BPS (after the second ':')" "$WK" --appliance 127.0.0.1 --mach 1e6:01:x
t "worker --scale" 2 "--scale: want a number 0..1e9, got '-1'" "$WK" --appliance 127.0.0.1 --mach 1e6:01 --scale -1
t "worker no machine" 2 "at least one --mach SPEED_IPS:VECTOR is required" "$WK" --appliance 127.0.0.1
t "worker --id" 2 "--id: want an integer" "$WK" --appliance 127.0.0.1 --mach 1e6:01 --id x
if [[ -n $NL ]]; then
	helpcheck nlevel "$NL" "$R/dataplane/nlevel.c"
	t "nlevel --help: the -- form and the exit status" 0 "Exit status: 0 done; 1 the run failed; 2 bad input" "$NL" --help
	# nlevel's own options before "--" never reach the EAL
	t "nlevel options before --" 2 "--config is an option of nlevel, not of DPDK's EAL: put nlevel's options after '--'" \
		"$NL" --config "$R/config/paper-96.ini" --emulate
	t "nlevel --opt=value before --" 2 "--scheme=nlsc is an option of nlevel" "$NL" -l 0 --scheme=nlsc -- --config x
	# without huge pages (and without --no-huge) the EAL fails; nlevel says why and what to do
	if [[ $(sed -n 's/^HugePages_Free: *//p' /proc/meminfo) == 0 ]]; then
		pfx=nlcli$$
		t "nlevel without huge pages suggests --no-huge" 2 "add --no-huge" \
			"$NL" --no-shconf --no-pci --file-prefix "$pfx" -l 0 -- --config "$R/config/paper-96.ini"
		rm -rf "/var/run/dpdk/$pfx" "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$pfx" 2>/dev/null
	fi
fi
nl_tap_done
