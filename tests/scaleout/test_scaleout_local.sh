#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Local entry (issue #36: "a task enters the tree at the receiving appliance's own subtree
# when that subtree can take it, and crosses only when the policy's choice is elsewhere"), as
# root: the three appliances of tests/scaleout/scaleout.ini, once with `entry = tree` (the
# policy's entry over the whole tree: NLSC a random leaf, 2LSC a random group) and once with
# the default `entry = local`, both cores kept busy with two busy loops. Per scheme (NLSC,
# 2LSC) and entry, b's and c's clients send 2 x 1,200 tasks (random resource vectors):
#   - every task COMPLETEs; accepted = completed + failed, nothing in flight, per appliance
#   - local: b and c enter tasks at their own managers (entry_local > 0), and hand over fewer
#     than 3/4 as many tasks per accepted task as with entry = tree (the hand-overs per task,
#     and the response p50 / p99, are printed for docs/scale-out.md). In this tree about half
#     the tasks need a vector whose machines are all on another appliance, so under NLSC about
#     half must cross whatever the entry (measured: 0.995 -> 0.502); 2LSC's own group takes
#     nearly all (0.67 -> 0.004)
# Usage: test_scaleout_local.sh NLEVEL WORKER LOADGEN. TAP; a skip plan when not root or
# without netns/veth/bridge.
set -u
NLEVEL=$1 WORKER=$2 LOADGEN=$3
SRC=${NL_SRC_ROOT:?}
. "$SRC/tests/scaleout/nl_so_net.sh"
T0=$SECONDS

declare -A XPT # crossings per accepted task at b and c, by scheme and entry
for scheme in nlsc 2lsc; do
	for entry in tree local; do
		CFG=$TMP/$entry.ini
		sed "s/^entry = tree$/entry = $entry/" "$SRC/tests/scaleout/scaleout.ini" >"$CFG"
		busy2 # both cores busy, as issues #34 and #36 ask of live tests
		r=1
		up=1
		res="not up"
		up3 "$scheme" || up=0
		if [[ $up == 1 ]]; then
			r=0
			loadgen b 1200 400 51 --expect-complete & lb=$!
			loadgen c 1200 400 52 --expect-complete & lc=$!
			wait $lb || r=1
			wait $lc || r=1
			report a b c || r=1
			res=$(so_eval "([p[x]['entry_local'] for x in 'bc'], [p[x]['entry_policy'] for x in 'bc'], round(sum(sum(p[x]['tasks_out']) for x in 'bc') / max(1, sum(s[x]['accepted'] for x in 'bc')), 3))")
			XPT[$scheme.$entry]=$(python3 -c "import ast; print(ast.literal_eval('''$res''')[2])")
			for x in b c; do
				echo "# $scheme entry=$entry client of $x: $(summary "$TMP/lg_$x.log" | tr ' ' '\n' | grep -E '^(completed|rejected|lost|p50_us|p99_us)=' | tr '\n' ' ')"
			done
			echo "# $scheme entry=$entry: (entry_local at b, c; entry_policy at b, c; hand-overs by b and c per task they accepted) = $res"
			if [[ $entry == local ]]; then
				python3 - "$res" "${XPT[$scheme.tree]:-0}" <<'PY' || r=1
import ast, sys
(loc, pol, xpt), tree = ast.literal_eval(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if min(loc) > 0 and xpt < 0.75 * tree else 1)
PY
			fi
		fi
		stop_all || r=1
		[[ $r == 0 ]] || res+="; $(so_why)"
		say "$scheme entry=$entry: 2 x 1,200 tasks all COMPLETE$([[ $entry == local ]] && echo ", entered at own managers, under 3/4 of entry=tree's hand-overs per task")" \
			$r "(entry_local, entry_policy, hand-overs per task) = $res; entry=tree: ${XPT[$scheme.tree]:-?}"
	done
done
echo "# hand-overs per task (b and c): ${XPT[*]} (${!XPT[*]})"
echo "# $((SECONDS - T0)) s"
nl_tap_done
