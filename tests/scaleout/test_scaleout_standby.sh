#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A standby per subtree (issue #36, docs/scale-out.md "Standby"), as root: the three appliances
# of tests/scaleout/scaleout.ini (NLSC: a the root, b the subtree M(1,0), c M(1,1)) with
# `[appliance c] standby = b`; c's workers and c's client know both addresses (--standby);
# both cores kept busy with two busy loops.
#   1  c killed (SIGKILL) while the clients of a, b and c each send 2,400 tasks: b adopts c's
#      subtree (its managers decide at b, its summaries come from b), a hands c's part to b,
#      c's two workers re-home to b
#   2  every task of the three clients is answered (c's client sends what c left unanswered to
#      b: resent > 0, lost = 0), accepted = completed + failed at a and b, nothing in flight
#   3  after the adoption, 600 tasks of a's client over every vector (c's vectors 10 and 11
#      among them, which only c's machines have) all COMPLETE, decided at b's adopted managers,
#      and c's client's 600 tasks sent to b all COMPLETE
#   4  c restarted (its workers not): a and b give its subtree back, c's slots are held by its
#      workers again (they go home once they hold nothing of b's), and 600 tasks of a's client
#      and 600 of c's all COMPLETE
# NL_SO_SCHEME=2lsc runs it on the 2LSC split (c owns group2).
# Usage: test_scaleout_standby.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or
# without netns/veth/bridge.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
. "$SRC/tests/scaleout/nl_so_net.sh"
CFG=$TMP/standby.ini
awk '{ print } /^\[appliance c\]/ { print "standby = b" }' "$SRC/tests/scaleout/scaleout.ini" >"$CFG"
T0=$SECONDS
SCHEME=${NL_SO_SCHEME:-nlsc} # NL_SO_SCHEME=2lsc: the same on the 2LSC split (c owns group2)
busy2 # both cores busy, as issues #34 and #36 ask of live tests

# a's view of where c's subtree is, b's adoptions, b's tasks decided at adopted managers
AT="(p['a']['subtree_at'][2], p['b']['subtree_at'][2], p['b']['adoptions'], p['b']['adopted_returned'], p['b']['adopted_in'])"

r1=1 r2=1 r3=1 r4=1 d2= d3= d4=
up=0
for x in a b c; do launch_app "$x" "$SCHEME"; done
for x in a b c; do wait_app "$x" || up=1; done
if [[ $up == 0 ]]; then
	workers a
	workers b
	WOPT=(--quiet --standby "${IP[b]}")
	workers c
	WOPT=(--quiet)
	wait_joined a 2 && wait_joined b 2 && wait_joined c 2 &&
		so_wait 20 "all(live(o, q) for o in 'abc' for q in 'abc')" || up=1
fi
if [[ $up == 0 ]]; then
	echo "# up after $((SECONDS - T0)) s; where c's subtree is (at a, at b), b's adoptions, given back, decided there: $(so_eval "$AT")"
	rm -f "$TMP/lg_c.csv" # client_started(): this load's
	loadgen a 2400 300 61 --timeout 40 & la=$!
	loadgen b 2400 300 62 --timeout 40 & lb=$!
	loadgen c 2400 300 63 --timeout 40 --standby "${IP[b]}" & lc=$!
	client_started c && sleep 3 # 3 s of its client's load
	# c's workers that hold slots of c (NLSC: both, 6 each; 2LSC: c's group has 8 slots, which
	# the first worker to join takes): those must re-home, and come home
	NW=$(grep -c "joined with [1-9]" "$TMP/app_c.log")
	echo "# c's workers with slots at c: $NW"
	kill -KILL "${APP[c]}"
	ts=$SECONDS
	wait "${APP[c]}" 2>/dev/null
	APP[c]=
	# 1: b adopts, a knows, c's workers re-home
	if so_wait 30 "p['b']['adoptions'] >= 1 and p['a']['subtree_at'][2] == 'b' and p['b']['subtree_at'][2] == 'b'"; then
		echo "# c killed: b adopted its subtree, a hands it to b, after $((SECONDS - ts)) s"
		if [[ $NW -ge 1 ]] && wait_count "re-homed" "$NW" 30 "$TMP"/w?c.log; then
			r1=0
			echo "# c's workers: $(grep -h "re-homed" "$TMP"/w?c.log | cut -c1-200 | tr '\n' '|')"
		else
			echo "# c's workers did not re-home to b: $(tail -n 3 "$TMP"/w?c.log | tr '\n' '|')"
		fi
	else
		echo "# no adoption within 30 s: $(so_eval "$AT"); $(grep -h "standby\|adopt\|gone" "$TMP"/app_?.log | head -n 6 | tr '\n' '|')"
	fi
	wait $la
	wait $lb
	wait $lc
	# 2: every task answered once
	r2=0
	for x in a b c; do
		echo "# kill, client of $x: $(summary "$TMP/lg_$x.log")"
		[[ $(val "$TMP/lg_$x.log" lost) == 0 && $(val "$TMP/lg_$x.log" sent) == 2400 ]] ||
			{ r2=1; d2+="client of $x: $(summary "$TMP/lg_$x.log" | cut -c1-400) | "; }
	done
	[[ $(val "$TMP/lg_c.log" resent) -gt 0 && $(val "$TMP/lg_c.log" failovers) -ge 1 ]] ||
		{ r2=1; d2+="c's client: resent $(val "$TMP/lg_c.log" resent), failovers $(val "$TMP/lg_c.log" failovers) | "; }
	echo "# c's client: $(grep -h "silent for" "$TMP/lg_c.log" | cut -c1-160 | tr '\n' '|')"
	for x in a b c; do cp "$TMP/lg_$x.log" "$TMP/lg_${x}_kill.txt"; done
	$SO report a="${PFX[a]}" b="${PFX[b]}" || { r2=1; d2+="accounting at a and b (above) | "; }
	# 3: after the adoption, c's part of the tree answers from b
	if [[ $r1 == 0 ]]; then
		r3=0
		before=$(so_eval "p['b']['adopted_in']")
		loadgen a 600 300 64 --timeout 20 --expect-complete ||
			{ r3=1; d3+="client of a: $(summary "$TMP/lg_a.log" | cut -c1-400) | "; }
		echo "# after the adoption, client of a: $(summary "$TMP/lg_a.log")"
		# c's client, c being gone: the standby answers (it starts at c, fails over)
		loadgen c 600 300 65 --timeout 20 --standby "${IP[b]}" --expect-complete ||
			{ r3=1; d3+="client of c: $(summary "$TMP/lg_c.log" | cut -c1-400) | "; }
		echo "# after the adoption, client of c: $(summary "$TMP/lg_c.log")"
		after=$(so_eval "p['b']['adopted_in']")
		echo "# tasks decided at b's adopted managers: before $before after $after; $(so_eval "$AT")"
		[[ $before =~ ^[0-9]+$ && $after =~ ^[0-9]+$ && $after -gt $before ]] ||
			{ r3=1; d3+="decided at b's adopted managers: before $before after $after | "; }
	fi
	# 4: c back: its subtree given back, its workers home
	if launch_app c "$SCHEME" && wait_app c; then
		t4=$SECONDS
		if so_wait 30 "all(live(o, q) for o in 'abc' for q in 'abc') and p['a']['subtree_at'][2] == 'c' and p['b']['subtree_at'][2] == 'c' and p['b']['adopted_returned'] >= 1" &&
			wait_home 30 "$NW"; then
			# (2LSC: the worker without a slot at c before may take c's 8 slots first; the
			# one at b then stays there with none at c: c has its machines either way)
			echo "# c restarted: subtree back at c, its slots held by its workers again after $((SECONDS - t4)) s: $(grep -h "joined with [1-9]\|more of" "$TMP/app_c.log" | cut -c1-100 | tr '\n' '|') $(grep -h "back at" "$TMP"/w?c.log | cut -c1-160 | tr '\n' '|')"
			r4=0
			loadgen a 600 300 66 --timeout 20 --expect-complete ||
				{ r4=1; d4+="client of a: $(summary "$TMP/lg_a.log" | cut -c1-400) | "; }
			echo "# after c's return, client of a: $(summary "$TMP/lg_a.log")"
			loadgen c 600 300 67 --timeout 20 --standby "${IP[b]}" --expect-complete ||
				{ r4=1; d4+="client of c: $(summary "$TMP/lg_c.log" | cut -c1-400) | "; }
			echo "# after c's return, client of c: $(summary "$TMP/lg_c.log")"
			[[ $(val "$TMP/lg_c.log" failovers) == 0 ]] ||
				{ r4=1; d4+="c's client failed over $(val "$TMP/lg_c.log" failovers) times | "; }
			report a b c || { r4=1; d4+="accounting at a, b and c (above) | "; }
		else
			d4="c restarted: not given back, or its workers not home: $(so_eval "$AT"); workers: $(tail -n 2 "$TMP"/w?c.log | cut -c1-160 | tr '\n' '|')"
			echo "# $d4"
		fi
	fi
fi
[[ $r1 == 0 && $r2 == 0 && $r3 == 0 && $r4 == 0 ]] || echo "# detail: $(so_why)" | tee /dev/stderr
stop_all || r4=1
echo "# standby: $((SECONDS - T0)) s"
say "scaleout_standby_adopts_killed_appliances_subtree_and_its_workers" $r1 "see the log"
say "scaleout_standby_every_task_of_the_killed_appliances_client_answered" $r2 "${d2:-see the log}"
say "scaleout_standby_tasks_for_the_dead_subtree_complete_at_the_standby" $r3 "${d3:-see the log}"
say "scaleout_standby_returning_appliance_takes_its_subtree_and_workers_back" $r4 "${d4:-see the log}"
nl_tap_done
