#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nlevel's command line and configuration checks, and what its runs report (root, EAL with
# --no-huge --no-pci --no-shconf, a distinct --file-prefix per run; no port traffic):
#   * every numeric option is parsed strictly (nan, inf, wrap-around, fractions, ranges):
#     exit 2 with the option named; --map, --groups, --static-known checked up front (exit 2)
#   * a split tree outside port mode, too many owns roots: exit 2, never a crash
#   * [appliance] mac and owns are refused with FILE:LINE (garbage, names no curve has,
#     empty items)
#   * native SUMMARY: rate over the measured wall time (a SIGINT-shortened run), ingress
#     refusals apart from failed and unfinished tasks, mgr_lcores counts lcores with managers
#   * emulated live.csv: a point without a measured task is saturated, response columns empty
#   * --loads longer than an INI line; port mode ends with a SUMMARY line
# Usage: test_nlevel_cli.sh NLEVEL. Skips (TAP "1..0 # SKIP", status 0) when not root or
# when the EAL cannot start.
set -u
NL=$1
SRC=${NL_SRC_ROOT:?}
. "$SRC/tests/common/nl_tap.sh"
[[ $(id -u) == 0 ]] || { echo "1..0 # SKIP not root"; exit 0; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP" /var/run/dpdk/nlcli$$_* 2>/dev/null' EXIT
k=0
# nlevel with its own file prefix; extra EAL arguments before "--" in EALX
run() {
	k=$((k + 1))
	timeout 60 "$NL" --no-huge --no-pci --no-shconf --file-prefix "nlcli$$_$k" \
		--log-level='lib.*:error' ${EALX:--l 0-1} -- "$@"
}
P96=$SRC/config/paper-96.ini
FARM=$SRC/config/farm-demo.ini
out=$(run --config "$P96" --help 2>&1) || { echo "1..0 # SKIP nlevel cannot start"; exit 0; }

# --- 2, 3: strict numbers, up front checks (exit 2, option named) ---
t "--native nan" 2 "--native: 'nan' is not a number" run --config "$P96" --native nan
t "--native inf" 2 "--native: 'inf' is not a number" run --config "$P96" --native inf --rate 1000
t "--native 0 (not port mode)" 2 "--native: 0 is out of range" run --config "$P96" --native 0
t "--rate nan" 2 "--rate: 'nan' is not a number" run --config "$P96" --native 0.1 --rate nan
t "--work-scale inf" 2 "--work-scale: 'inf' is not a number" run --config "$P96" --native 0.1 --work-scale inf
t "--ns-per-vt nan" 2 "--ns-per-vt: 'nan' is not a number" run --config "$P96" --emulate --curve "$TMP/c" --ns-per-vt nan
t "--horizon nan" 2 "--horizon: 'nan' is not a number" run --config "$P96" --emulate --curve "$TMP/c" --horizon nan
t "--inbox 2^32+64 does not wrap" 2 "--inbox: 4294967360 is out of range" run --config "$P96" --inbox 4294967360
t "--inbox not a power of two" 2 "--inbox: 100 is not a power of two" run --config "$P96" --inbox 100
t "--pool 2^32+1024 does not wrap" 2 "--pool: 4294968320 is out of range" run --config "$P96" --pool 4294968320
t "--pool 1000000 names the limit" 2 "--pool: 1000000 is out of range [1024, 262143]" run --config "$P96" --pool 1000000
t "--groups 1e30" 2 "--groups: '1e30' is not a non-negative integer" run --config "$P96" --scheme 2lsc --groups 1e30
t "--groups 2.7" 2 "--groups: '2.7' is not a non-negative integer" run --config "$P96" --scheme 2lsc --groups 2.7
t "--groups above M" 2 "--groups: 200 is out of range [1, 96]" run --config "$P96" --scheme 2lsc --groups 200 --native 0.1
t "--groups without 2lsc" 2 "--groups: 2LSC only" run --config "$P96" --groups 4 --native 0.1
t "--static-known above N" 2 "--static-known: 5 is out of range [0, 4]" run --config "$P96" --static-known 5 --native 0.1
t "--static-known 100 (not silently 0)" 2 "--static-known: 100 is out of range [0, 20]" run --config "$P96" --static-known 100 --native 0.1
t "--static-known with --emulate" 2 "not with --emulate" run --config "$P96" --emulate --curve "$TMP/c" --static-known 2
t "--udp-port 70000" 2 "--udp-port: 70000 is out of range" run --config "$P96" --udp-port 70000
t "--worker-timeout -1" 2 "--worker-timeout: -1 is out of range" run --config "$P96" --worker-timeout -1
t "--map bogus" 2 "--map 'bogus': bad map" run --config "$P96" --map bogus --native 0.1
t "--map to a disabled lcore" 2 "--map '0-30@5': bad map" run --config "$P96" --map 0-30@5 --native 0.1

# --- 1: a split tree outside port mode; more roots than a tree has (exit 2, no crash) ---
{
	cat "$FARM"
	printf '[appliance a]\nip = 10.0.0.1\nowns = M(0,root)\n[appliance b]\nip = 10.0.0.2\nowns = M(1,0)\n'
} >"$TMP/split.ini"
t "--appliance with --native" 2 "port mode only" run --config "$TMP/split.ini" --native 0.3 --appliance b
t "--appliance with --emulate" 2 "port mode only" run --config "$TMP/split.ini" --emulate --curve "$TMP/c" --appliance b
sed -e 's/^machines = .*/machines = 256/' -e 's/^resources = .*/resources = 8/' \
	-e 's/^vectors = .*/vectors = balanced/' "$P96" >"$TMP/n8.ini"
names=() # 300 NLSC names of levels 1..8
for K in 1 2 3 4 5 6 7 8; do
	for ((b = 0; b < (1 << K) && ${#names[@]} < 300; b++)); do
		bits=""
		for ((j = K - 1; j >= 0; j--)); do bits+=$(((b >> j) & 1)); done
		names+=("M($K,$bits)")
	done
done
cp "$TMP/n8.ini" "$TMP/manyroots.ini"
for ((a = 0; a < 25; a++)); do
	list=$(IFS=,; echo "${names[*]:$((a * 12)):12}")
	printf '[appliance a%d]\nip = 10.0.%d.1\nowns = %s\n' "$a" "$a" "$list" >>"$TMP/manyroots.ini"
done
EALX="-l 0-1 --vdev=net_null0" t "300 owns roots refused with FILE:LINE" 2 \
	"manyroots.ini:" run --config "$TMP/manyroots.ini" --appliance a3
EALX="-l 0-1 --vdev=net_null0" t "... naming the limit" 2 "more than 255 owns names" \
	run --config "$TMP/manyroots.ini" --appliance a3

# --- 7, 8, 9: [appliance] mac and owns ---
app() { # file, owns, [mac]
	{
		cat "$FARM"
		printf '[appliance a]\nip = 10.0.0.1\nowns = %s\n' "$2"
		[[ -n ${3:-} ]] && printf 'mac = %s\n' "$3"
		printf '[appliance b]\nip = 10.0.0.2\nowns = M(1,1)\n'
	} >"$TMP/$1.ini"
}
for bad in group1x group-1 "group 1" group+1 "M( 1,0)" "M(01,0)" group99 "M(5,00000)"; do
	app owns "$bad"
	t "owns '$bad' refused with FILE:LINE" 2 "owns.ini:" run --config "$TMP/owns.ini" --native 0.1
done
app owns "M(1,0),,M(0,root),"
t "owns with an empty item" 2 "empty item in the list" run --config "$TMP/owns.ini" --native 0.1
for bad in 02:00:00:00:00:0g 02:00:00:00:00:01:ff 2:0:0:0:0:1x; do
	app mac "M(1,0)" "$bad"
	t "mac '$bad' refused with FILE:LINE" 2 "is not a MAC address" run --config "$TMP/mac.ini" --native 0.1
done
app good "M(0,root), group0" "02:00:00:00:00:01"
t "a good [appliance] section is accepted" 0 "SUMMARY mode=native" run --config "$TMP/good.ini" --native 0.1

# --- 4, 5, 10: native SUMMARY ---
val() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
"$NL" --no-huge --no-pci --no-shconf --file-prefix "nlcli$$_int" --log-level='lib.*:error' -l 0-1 \
	-- --config "$P96" --native 20 --rate 100000 >"$TMP/int.out" 2>&1 &
pid=$!
sleep 3
kill -INT "$pid"
wait "$pid"
rc=$?
s=$(grep '^SUMMARY' "$TMP/int.out")
w=$(val "$s" wall_s) r=$(val "$s" rate_tps)
awk -v w="${w:-0}" -v r="${r:-0}" 'BEGIN { exit !(w > 0.5 && w < 10 && r > 20000) }'
say "native stopped early: rate over the wall time (wall_s=$w rate_tps=$r)" $? "rc $rc: $s"
acc=$(val "$s" accepted) tk=$(val "$s" tasks) fl=$(val "$s" failed) un=$(val "$s" unfinished)
[[ -n $acc && $acc == $((tk + fl + un)) ]]
say "native: accepted = tasks + failed + unfinished" $? "$s"
s=$(EALX="--lcores 0@0,1@1,2@1" run --config "$P96" --native 0.2 --map 0-30@1 2>/dev/null | grep '^SUMMARY')
[[ $(val "$s" mgr_lcores) == 1 ]]
say "mgr_lcores counts lcores that run managers" $? "$s"
s=$(run --config "$FARM" --native 0.2 2>/dev/null | grep '^SUMMARY')
[[ -n $(val "$s" rejected) && -n $(val "$s" failed) && -n $(val "$s" unfinished) ]]
say "native SUMMARY has rejected, failed, unfinished" $? "$s"

# --- 6: a point without a measured task, as nlevel-sim writes it ---
run --config "$P96" --emulate --curve "$TMP/h1" --horizon 1 --loads 10 --scheme nlsc >/dev/null 2>&1
row=$(sed -n 2p "$TMP/h1/live.csv")
[[ $row == nlsc,0,0,10,,,,,,*,1 ]]
say "emulated: no measured task = saturated, response empty" $? "$row"

# --- 10: --loads beyond an INI line; port mode's SUMMARY ---
long=$(seq -s, -f '%.6f' 1 1 40) # 40 points, over 198 characters
t "--loads of ${#long} characters" 0 "SUMMARY mode=emulated" \
	run --config "$P96" --emulate --curve "$TMP/long" --horizon 1 --loads "$long" --scheme nlsc
t "--loads empty item named" 2 "--loads 5,,10: empty item" run --config "$P96" --emulate --curve "$TMP/c" --loads 5,,10
timeout -s INT 3 "$NL" --no-huge --no-pci --no-shconf --file-prefix "nlcli$$_port" \
	--log-level='lib.*:error' -l 0-1 --vdev=net_null0 -- --config "$FARM" >"$TMP/port.out" 2>&1
grep -q '^SUMMARY mode=port .*accepted=0 ' "$TMP/port.out"
say "port mode ends with a SUMMARY line" $? "$(tail -n 3 "$TMP/port.out")"
nl_tap_done
