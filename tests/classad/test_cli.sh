#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nlevel-classad command line (TAP): values with types, line:column errors, policy admission.
B=$1
R=${NL_SRC_ROOT:-.}
P=$R/config/policies
. "$(dirname "$0")/../common/nl_tap.sh"
t "help" 0 "usage: nlevel-classad" "$B" --help
t "int" 0 "7 (integer)" "$B" -e '1 + 2 * 3'
t "real" 0 "0.5 (real)" "$B" -e '1.0 / 2'
t "string" 0 '"AB" (string)' "$B" -e 'toUpper("ab")'
t "undefined" 0 "undefined (undefined)" "$B" -e 'nosuch'
t "reltime" 0 'relTime("01:30:00") (relTime)' "$B" -e 'relTime("1h") + relTime("30m")'
t "now" 0 "1704067200 (integer)" "$B" --now 2024-01-01T00:00:00Z -e 'time()'
t "records scope" 0 "2 (integer)" "$B" -r /dev/stdin -e 'b.g' <<<'[ a = 1; b = [ a = 2; g = a ] ]'
t "expr error position" 2 "1:5: error: expected an expression" "$B" -e '1 + )'
t "records error position" 2 "/dev/stdin:2:8: error: expected an expression" "$B" -r /dev/stdin -e 'a' <<<$'a = 1;\nb = 2 +;'
t "fig4 accepts" 0 "accepted 2 nodes: n001 n006" "$B" -p "$P/fig4-simple.cad" \
	-N "$P/nodes-example.cad" -o alice -s +1h -E +2h -n 2 --now 2024-01-01T01:00:00Z
t "fig4 refuses with clause" 1 "fig4-simple.cad:7:6: refused by this clause (value false)" \
	"$B" -p "$P/fig4-simple.cad" -N "$P/nodes-example.cad" -o alice -s +1h -E +2h -n 3 \
	--now 2024-01-01T01:00:00Z
t "fig8 running job" 1 "first refused n005" "$B" -p "$P/fig8-running-jobs.cad" \
	-N "$P/nodes-example.cad" -o alice -s +1h -E +2h -n 6 --now 2024-01-01T01:00:00Z
t "fig8 after the job" 0 "accepted 6 nodes" "$B" -p "$P/fig8-running-jobs.cad" \
	-N "$P/nodes-example.cad" -o alice -s 2024-01-01T03:00:00Z -E +4h -n 6 \
	--now 2024-01-01T01:00:00Z
t "eval reads a record of the caller" 0 "2 (integer)" "$B" -r /dev/stdin -e 'eval("r.b")' \
	<<<'r = [a = 1; b = a + 1]'
t "countMatches reads a record of the policy" 0 "accepted 1 node: n001" "$B" -p /dev/stdin \
	-N "$P/nodes-example.cad" -o a -s +1h -E +2h -n 1 --now 2024-01-01T01:00:00Z \
	<<<$'jobs = { [id = 1], [id = 2] };\nlimit = [max = 1];\nPLUS_NODE_RESERVABLE = countMatches(id <= limit.max, jobs) >= 1;'
for cnt in -1 1x 0 '' ' 1' 99999999999; do
	t "count '$cnt' is bad input" 2 "bad --count" "$B" -p "$P/fig4-simple.cad" \
		-N "$P/nodes-example.cad" -o alice -s +1h -E +2h -n "$cnt" --now 2024-01-01T01:00:00Z
done
# a node list longer than the 4096 values of a context's stack (it was error, then refused)
NODES=$(mktemp)
trap 'rm -f "$NODES"' EXIT
{
	printf '{'
	for ((i = 0; i < 5000; i++)); do
		printf '%s[ name = "n%d"; isAlive = true; loadavg = 0.%d; jobs = {} ]' \
			"$([[ $i == 0 ]] || echo ,)" "$i" "$((i % 10))"
	done
	printf '}\n'
} >"$NODES"
t "5000 nodes" 0 "accepted 5000 nodes" "$B" -p /dev/stdin -N "$NODES" -o a -s +1h -E +2h \
	-n 5000 --now 2024-01-01T01:00:00Z <<<'PLUS_NODE_RESERVABLE = PLUS_CANDIDATE_NODE.loadavg < 1;'
t "5000 nodes, count too high" 1 "5001 nodes requested, 5000 exist" "$B" -p /dev/stdin -N "$NODES" -o a -s +1h \
	-E +2h -n 5001 --now 2024-01-01T01:00:00Z <<<'PLUS_NODE_RESERVABLE = PLUS_CANDIDATE_NODE.loadavg < 1;'
t "check policy" 0 "PLUS_CANDIDATE_NODE external" "$B" --check "$P/fig4-simple.cad"
t "self is finite" 0 "[  ] (classad)" "$B" -e 'self'
t "self of a record" 0 "[ a = 1; b = a + 1 ] (classad)" "$B" -r /dev/stdin -e 'self' <<<'[ a = 1; b = a + 1 ]'
t "regexp" 0 "true (boolean)" "$B" -e 'regexp("^n0+1$", "n001")'
t "string list" 0 "3 (integer)" "$B" -e 'stringListSize("a, b, c")'
t "real -INF" 0 'real("-INF") (real)' "$B" -e 'real("-INF")'
t "trailing comma refused" 2 "expected an expression after ','" "$B" -e '{1,}'
t "missing file" 2 "No such file" "$B" -r /nonexistent -e 1
nl_tap_done
