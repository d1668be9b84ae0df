#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Failback or not (issue #36, docs/scale-out.md "Failback or not"), as root: the three
# appliances of tests/scaleout/scaleout.ini (NLSC: a the root, b the subtree M(1,0), c
# M(1,1)) with `[appliance c] standby = b` and `failback = no`, and `[appliance b] standby =
# c`; c's workers know b, b's workers know c (--standby), each with its appliance's machines
# only; both cores kept busy.
#   1  c killed: b adopts c's subtree, c's workers re-home to b
#   2  c restarted: it rejoins as the standby of its own subtree: a, b and c all have c's
#      subtree at b, c gives its workers no slot (they stay at b), and 600 tasks of a's client
#      and 600 of c's client (sent to c, entering at c's own managers: handed to b) all
#      COMPLETE
#   3  b killed: c takes its own subtree back and adopts b's (b's standby), c's and b's
#      workers all join c, and 600 tasks of a's client over every vector all COMPLETE
#   4  accounting at a and c (accepted = completed + failed, nothing in flight)
#   0  (first) c started with its workers beside it, without --standby: those that joined
#      while c settled (no slot) are asked again and hold slots
# Usage: test_scaleout_failback.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or
# without netns/veth/bridge.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
. "$SRC/tests/scaleout/nl_so_net.sh"
CFG=$TMP/failback.ini
awk '{ print }
	/^\[appliance c\]/ { print "standby = b"; print "failback = no" }
	/^\[appliance b\]/ { print "standby = c" }' "$SRC/tests/scaleout/scaleout.ini" >"$CFG"
T0=$SECONDS
busy2 # both cores busy, as issues #34 and #36 ask of live tests

# where b's and c's subtrees are, as a, b and c see them; c's failback counters
AT="(p['a']['subtree_at'][1:], p['c']['subtree_at'][1:], p['c']['settling'], p['c']['left_at_standby'], p['c']['taken_back'], p['c']['entry_taken'])"

r1=1 r2=1 r3=1 r4=1 d1= d2= d3= d4=
up=0 r0=1 d0=
# each appliance's workers have its own machines only (b: vectors 00 and 01; c: 10 and 11):
# else a standby's own workers, which HELLO every second (--standby), take the adopted slots
# first and the dead appliance's workers find none
ALLM=("${MACH[@]}")
BM=(--mach 100e6:00 --mach 100e6:00 --mach 100e6:00 --mach 100e6:01 --mach 100e6:01 --mach 100e6:01)
CM=(--mach 100e6:10 --mach 100e6:10 --mach 100e6:10 --mach 100e6:11 --mach 100e6:11 --mach 100e6:11)
# 0: c's workers, without --standby (they HELLO again only when asked), started with c: those
# that join while c settles get no slot, and must be asked again once c runs its subtree. The
# three start together: an appliance that comes up after its standby's suspicion timeout has
# been declared dead, adopted, and (failback = no) leaves its subtree there
for x in a b c; do launch_app "$x" nlsc; done
MACH=("${CM[@]}")
workers c
MACH=("${ALLM[@]}")
for x in a b c; do wait_app "$x" || up=1; done
if [[ $up == 0 ]]; then
	if wait_count "joined with [1-9]\|more of" 2 20 "$TMP/app_c.log"; then
		r0=0
	else
		d0="c's workers without --standby hold no slot: $(grep -h "joined\|settled\|asked" "$TMP/app_c.log" | cut -c1-120 | tr '\n' '|')"
	fi
	echo "# c's workers started with it: $(grep -h "joined with\|settled\|asked to join" "$TMP/app_c.log" | cut -c1-110 | tr '\n' '|')"
	kill "${PIDS[@]: -2}" 2>/dev/null # they leave (bye); the scenario's workers follow
	wait "${PIDS[@]: -2}" 2>/dev/null
	PIDS=("${PIDS[@]:0:${#PIDS[@]}-2}")
	workers a
	MACH=("${BM[@]}")
	WOPT=(--quiet --standby "${IP[c]}")
	workers b
	MACH=("${CM[@]}")
	WOPT=(--quiet --standby "${IP[b]}")
	workers c
	WOPT=(--quiet)
	MACH=("${ALLM[@]}")
	wait_joined a 2 && wait_joined b 2 && wait_count "joined with [1-9]\|more of" 4 20 "$TMP/app_c.log" &&
		so_wait 20 "all(live(o, q) for o in 'abc' for q in 'abc') and p['c']['settling'] == 0" || up=1
	echo "# up after $((SECONDS - T0)) s: $(grep -h "settled" "$TMP/app_c.log" | cut -c1-160)"
fi
if [[ $up == 0 ]]; then
	NW=$(($(grep -c "joined with [1-9]\|more of" "$TMP/app_c.log") - 2)) # the scenario's workers
	kill -KILL "${APP[c]}"
	wait "${APP[c]}" 2>/dev/null
	APP[c]=
	ts=$SECONDS
	# 1: b adopts, c's workers re-home
	if so_wait 30 "p['b']['adoptions'] >= 1 and p['a']['subtree_at'][2] == 'b'" &&
		wait_count "re-homed to" "$NW" 30 "$TMP"/w?c.log; then
		r1=0
		echo "# c killed: b adopted its subtree, c's $NW workers re-homed to b after $((SECONDS - ts)) s"
	else
		d1="c killed: $(so_eval "p['b']['adoptions'], p['a']['subtree_at']") workers: $(tail -n 2 "$TMP"/w?c.log | cut -c1-160 | tr '\n' '|')"
	fi
	# 2: c restarted rejoins as the standby of its own subtree
	if [[ $r1 == 0 ]] && launch_app c nlsc && wait_app c; then
		t2=$SECONDS
		if so_wait 30 "all(live(o, q) for o in 'abc' for q in 'abc') and p['c']['settling'] == 0 and p['c']['left_at_standby'] >= 1 and all(p[x]['subtree_at'][2] == 'b' for x in 'abc')"; then
			sleep 3 # c's workers HELLO c every second: none may go home
			echo "# c restarted: $(grep -h "settled\|stays at its standby" "$TMP/app_c.log" | cut -c1-200 | tr '\n' '|') after $((SECONDS - t2)) s: $(so_eval "$AT")"
			r2=0
			[[ $(count "back at" "$TMP"/w?c.log) == 0 && $(count "joined with [1-9]" "$TMP/app_c.log") == 0 ]] ||
				{ r2=1; d2+="c's workers went home: $(grep -h "back at" "$TMP"/w?c.log | cut -c1-120 | tr '\n' '|') $(grep -h "joined with [1-9]" "$TMP/app_c.log" | cut -c1-120 | tr '\n' '|') | "; }
			before=$(so_eval "p['b']['adopted_in']")
			loadgen a 600 300 71 --timeout 20 --expect-complete ||
				{ r2=1; d2+="client of a: $(summary "$TMP/lg_a.log" | cut -c1-400) | "; }
			echo "# c the standby, client of a: $(summary "$TMP/lg_a.log")"
			loadgen c 600 300 72 --timeout 20 --expect-complete ||
				{ r2=1; d2+="client of c: $(summary "$TMP/lg_c.log" | cut -c1-400) | "; }
			echo "# c the standby, client of c: $(summary "$TMP/lg_c.log")"
			after=$(so_eval "p['b']['adopted_in']")
			taken=$(so_eval "p['c']['entry_taken']")
			echo "# decided at b's adopted managers: before $before after $after; entered at c's own managers, handed to b: $taken; $(so_eval "$AT")"
			[[ $before =~ ^[0-9]+$ && $after =~ ^[0-9]+$ && $after -gt $before && $taken =~ ^[0-9]+$ && $taken -gt 0 ]] ||
				{ r2=1; d2+="adopted_in at b before $before after $after, entry_taken at c $taken | "; }
			[[ $(so_eval "all(p[x]['subtree_at'][2] == 'b' for x in 'abc')") == True ]] ||
				{ r2=1; d2+="c's subtree moved during the loads: $(so_eval "$AT") | "; }
		else
			d2="c restarted: its subtree not left at b: $(so_eval "$AT"); $(grep -h "settled\|standby\|subtree" "$TMP"/app_?.log | cut -c1-160 | tail -n 6 | tr '\n' '|')"
		fi
	fi
	# 3: b killed: c takes its own subtree back and adopts b's
	if [[ $r2 == 0 ]]; then
		kill -KILL "${APP[b]}"
		wait "${APP[b]}" 2>/dev/null
		APP[b]=
		ts=$SECONDS
		if so_wait 30 "p['c']['taken_back'] >= 1 and p['c']['adoptions'] >= 1 and p['a']['subtree_at'][1:] == ['c', 'c'] and p['c']['subtree_at'][1:] == ['c', 'c']" &&
			wait_home 30 $((NW + 2)) && wait_count "re-homed to" 2 30 "$TMP"/w?b.log &&
			wait_count "re-homed to" $((2 * NW)) 30 "$TMP"/w?c.log; then
			r3=0
			echo "# b killed: c runs its own subtree again and b's, its workers and b's joined it after $((SECONDS - ts)) s: $(so_eval "$AT")"
			loadgen a 600 300 73 --timeout 20 --expect-complete ||
				{ r3=1; d3+="client of a: $(summary "$TMP/lg_a.log" | cut -c1-400) | "; }
			echo "# after b's death, client of a: $(summary "$TMP/lg_a.log")"
		else
			d3="b killed: $(so_eval "$AT"); workers of c: $(tail -n 1 "$TMP"/w?c.log | cut -c1-160 | tr '\n' '|') of b: $(tail -n 1 "$TMP"/w?b.log | cut -c1-160 | tr '\n' '|')"
		fi
		r4=0
		report a c || { r4=1; d4="accounting at a and c (above)"; }
	fi
fi
for d in "$d0" "$d1" "$d2" "$d3"; do [[ -n $d ]] && echo "# $d"; done
[[ $r0 == 0 && $r1 == 0 && $r2 == 0 && $r3 == 0 && $r4 == 0 ]] || echo "# detail: $(so_why)" | tee /dev/stderr
stop_all || r4=1
echo "# failback: $((SECONDS - T0)) s"
say "scaleout_failback_no_workers_joined_while_settling_get_slots" $r0 "${d0:-see the log}"
say "scaleout_failback_standby_adopts_killed_appliances_subtree" $r1 "${d1:-see the log}"
say "scaleout_failback_no_restarted_appliance_rejoins_as_standby" $r2 "${d2:-see the log}"
say "scaleout_failback_no_takes_its_subtree_back_when_standby_dies" $r3 "${d3:-see the log}"
say "scaleout_failback_accounting_exact" $r4 "${d4:-see the log}"
nl_tap_done
