#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Appliances as principals (issue #36), as root: the three appliances of
# tests/scaleout/scaleout.ini, each with its own key (nlevel-key --appliance) and the
# configuration's public_key lines, sealing what they send each other under the pair's key
# (--appliance-key), both cores kept busy with two busy loops:
#   1  bad starts are refused with the file and line: public keys configured but no
#      --appliance-key; --appliance-key without --key; b's key given to a
#   2  the paired tree works: a's and b's clients (the site key) send 2 x 1,500 tasks that
#      cross appliances (NLSC); all COMPLETE; every appliance says paired and refused nothing
#   3  issue #36's forged-peer attack: c killed, then from c's own address (its namespace)
#      a SWIM "c is alive", a SUMMARY dated now and one dated an hour ahead, as appliance c,
#      sealed with the site key, 10 rounds a second for 12 s to a and to b: each datagram is
#      refused at the MAC and counted (pair_refused of c, at a and at b), none reaches the
#      gossip (summaries_future_refused unchanged: the future one is never decoded), and a
#      and b declare c gone
# Usage: test_scaleout_keys.sh NLEVEL WORKER LOADGEN KEYTOOL FORGE. TAP; a skip plan when not
# root or without netns/veth/bridge.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3 KEYTOOL=$4 FORGE=$5
SRC=${NL_SRC_ROOT:?}
. "$SRC/tests/scaleout/nl_so_net.sh"
CFG=$TMP/keys.ini
T0=$SECONDS

busy2 # both cores busy, as issues #34 and #36 ask of live tests

# keys: the site key (clients, workers) and one per appliance; public keys into the config
site_key
KEYARGS=() # until the paired tree (clients and workers then use the site key)
declare -A PUB FP
r=0
for x in a b c; do
	"$KEYTOOL" --appliance "$x" --out "$TMP/$x.key" >"$TMP/$x.pub" || r=1
	PUB[$x]=$(sed -n 's/^public_key = //p' "$TMP/$x.pub")
done
awk -v a="${PUB[a]}" -v b="${PUB[b]}" -v c="${PUB[c]}" '
	{ print }
	/^\[appliance a\]/ { print "public_key = " a }
	/^\[appliance b\]/ { print "public_key = " b }
	/^\[appliance c\]/ { print "public_key = " c }' "$SRC/tests/scaleout/scaleout.ini" >"$CFG"
[[ $(grep -c '^public_key = [0-9a-f]\{64\}$' "$CFG") == 3 ]] || r=1
say "nlevel-key --appliance writes three keys (mode 0600) and their public_key lines" $r \
	"$(cat "$TMP"/?.pub; stat -c '%a %n' "$TMP"/?.key)"

# 1: bad starts, refused with the file and line
bad_start() { # app, nlevel options: its exit status in $brc, its stderr in $out
	local x=$1
	shift
	ip netns exec "${NS[$x]}" timeout 60 "$NLEVEL" --no-huge --no-pci --no-shconf \
		--file-prefix "${PFX[$x]}x" -l 0-1 --vdev="net_af_packet0,iface=ns$x$id,framecnt=4096" -- \
		--config "$CFG" --scheme nlsc --appliance "$x" "$@" >/dev/null 2>"$TMP/bad.err"
	brc=$?
	out=$(grep -v '^EAL\|^TELEMETRY' "$TMP/bad.err")
}
line_a=$(grep -n "^public_key = ${PUB[a]}" "$CFG" | cut -d: -f1)
bad_start a --key "$KEY"
r=0
[[ $brc == 2 && $out == *"keys.ini:$line_a: [appliance a] has a public_key"*"--appliance-key"* ]] || r=1
d1="rc $brc: $out"
bad_start a --appliance-key "$TMP/a.key"
[[ $brc == 2 && $out == *"needs --key"* ]] || r=1
d1="$d1 | rc $brc: $out"
bad_start a --key "$KEY" --appliance-key "$TMP/b.key"
[[ $brc == 2 && $out == *"keys.ini:$line_a: --appliance-key $TMP/b.key is not appliance a's key"* ]] || r=1
d1="$d1 | rc $brc: $out"
echo "# $d1"
say "bad starts refused with file:line (no --appliance-key; no --key; another appliance's key)" $r "$d1"

# 2: the paired tree works
KEYARGS=(--key "$KEY") # clients and workers: the site key
for x in a b c; do APPOPT[$x]="--appliance-key $TMP/$x.key"; done
up=1
up3 nlsc || up=0
r=1
if [[ $up == 1 ]]; then
	r=0
	loadgen a 1500 500 21 --expect-complete & la=$!
	loadgen b 1500 500 22 --expect-complete & lb=$!
	wait $la || r=1
	wait $lb || r=1
	for x in a b; do echo "# $x: $(summary "$TMP/lg_$x.log")"; done
	report a b c || r=1
	res=$(so_eval "([p[x]['paired'] for x in 'abc'], [sum(p[x]['pair_refused']) for x in 'abc'], [sum(p[x]['tasks_out']) for x in 'abc'])")
	echo "# (paired, pair_refused, tasks out) per appliance: $res"
	[[ $res == "([1, 1, 1], [0, 0, 0], "* && $res != *"[0, 0, 0])" ]] || r=1
fi
say "paired tree: 2 x 1,500 crossing tasks all COMPLETE, every appliance paired, nothing refused" \
	$r "$(tail -n 3 "$TMP"/app_*.log)"

# 3: the forged-peer attack from the dead c's own address, sealed with the site key
r=1
if [[ $up == 1 ]]; then
	r=0
	fut0=$(so_eval "[p[x]['summaries_future_refused'] for x in 'ab']")
	kill -KILL "${APP[c]}"
	wait "${APP[c]}" 2>/dev/null
	APP[c]=
	ip -n "${NS[c]}" addr add "${IP[c]}/24" dev "nsc$id"
	t_kill=$SECONDS
	for x in a b; do
		ip netns exec "${NS[c]}" "$FORGE" "$KEY" 2 "${IP[c]}" 7477 "${IP[$x]}" 7477 120 100 \
			>"$TMP/forge_$x.log" 2>&1 &
		FP[$x]=$!
	done
	gone=1
	so_wait 30 "not live('a', 'c') and not live('b', 'c')" && gone=0
	t_gone=$((SECONDS - t_kill))
	wait "${FP[a]}" || r=1
	wait "${FP[b]}" || r=1
	res=$(so_eval "([p[x]['pair_refused'][2] for x in 'ab'], [p[x]['summaries_future_refused'] for x in 'ab'], [live(x, 'c') for x in 'ab'])")
	echo "# forged: $(cat "$TMP"/forge_?.log | tr '\n' ' '); c gone at a and b after ${t_gone} s: $gone (0 = yes)"
	echo "# (pair_refused of c, summaries_future_refused, c live) at a, b: $res (future refused before: $fut0)"
	[[ $gone == 0 ]] || r=1
	python3 - "$res" "$fut0" <<'PY' || r=1
import ast, sys
(ref, fut, live), fut0 = ast.literal_eval(sys.argv[1]), ast.literal_eval(sys.argv[2])
sys.exit(0 if min(ref) >= 300 and fut == fut0 and live == [False, False] else 1)
PY
fi
say "forged SWIM alive + future SUMMARY from the dead c's address under the site key: refused and counted at a and b, c declared gone" \
	$r "$(so_why)"

stop_all
say "the appliances stop cleanly" $? "$(so_why)"
echo "# $((SECONDS - T0)) s"
nl_tap_done
