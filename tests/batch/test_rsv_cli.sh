#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nlevel-sim with [reservations] (TAP): a small synthetic SWF trace replayed with and without
# a request stream; batch.csv rows, reservations.csv (one row per request), the SUMMARY keys,
# Fig. 8 never preempts where an accept-all policy does, errors with file:line(:col); and the
# shipped config/kth-rsv.ini on the KTH log when it is there.
SIM=$(realpath "$1")
R=${NL_SRC_ROOT:-.}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
n=0
fail=0
say() { # name, condition status, detail
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok $n - $1"; else echo "not ok $n - $1 ($3)"; fail=1; fi
}
# 600 jobs on 16 nodes, busy: arrivals every ~40 s, 1-16 nodes, runs up to ~30 min,
# estimates >= runs (SWF v2.2, 18 fields)
awk 'BEGIN { srand(7); print "; MaxProcs: 16"; print "; UnixStartTime: 1700000000";
	t = 0; for (i = 1; i <= 600; i++) { t += int(rand() * 80); u = rand();
	p = u < 0.5 ? 1 : (u < 0.9 ? 1 + int(rand() * 6) : 1 + int(rand() * 16));
	r = int(rand() * 1800); e = r + int(rand() * 1800) + 1;
	print i, t, -1, r, p, -1, -1, p, e, -1, 1, 1 + i % 5, 1, -1, 1, -1, -1, -1 } }' \
	>"$D/t.swf"
cat >"$D/r.ini" <<EOT
[batch]
trace = t.swf
cpus = 16
queues = q
scenarios = ff
[queue.q]
cpu_max = 16
thread_max = 1
[scenario.ff]
policy = firstfit
queue_select = q
[reservations]
policy_file = $R/config/policies/fig8-running-jobs.cad
rate_per_h = 6
lead_min_s = 600
lead_max_s = 7200
dur_min_s = 600
dur_max_s = 3600
nodes_min = 1
nodes_max = 6
owners = userA, userX, userZ
EOT
echo 'PLUS_NODE_RESERVABLE = true;' >"$D/all.cad"

out=$("$SIM" -q -c "$D/r.ini" -o "$D/o8" 2>&1)
rc=$?
sum=$(grep '^SUMMARY' <<<"$out")
req=$(sed -n 's/.* rsv_requests=\([0-9]*\).*/\1/p' <<<"$sum")
rows=$(($(wc -l <"$D/o8/reservations.csv") - 1))
say "fig8 run: exit 0, SUMMARY with rsv_requests, rsv_accepted_pct, rsv_wait_delta_s" \
	$([ $rc = 0 ] && [[ $sum == *rsv_accepted_pct=* && $sum == *rsv_wait_delta_s=* ]] &&
		[ "${req:-0}" -gt 20 ] && echo 0 || echo 1) "rc $rc: $out"
say "reservations.csv: one row per request ($rows rows, $req requests)" \
	$([ "$rows" = "$req" ] && echo 0 || echo 1) "$(head -3 "$D/o8/reservations.csv")"
say "batch.csv: rows for ff and ff+rsv" \
	$(grep -q '^ff,all,' "$D/o8/batch.csv" && grep -q '^ff+rsv,all,' "$D/o8/batch.csv" &&
		echo 0 || echo 1) "$(cat "$D/o8/batch.csv")"
acc=$(awk -F, 'NR > 1 && $8 == "accepted"' "$D/o8/reservations.csv" | wc -l)
ref=$(awk -F, 'NR > 1 && $8 ~ /^refused_/' "$D/o8/reservations.csv" | wc -l)
say "outcomes: accepted $acc + refused $ref == $req requests; some of each" \
	$([ $((acc + ref)) = "$req" ] && [ "$acc" -gt 0 ] && [ "$ref" -gt 0 ] && echo 0 || echo 1)
say "Fig. 8 preempts no running job" \
	$([[ $sum == *" rsv_preempted=0"* ]] && echo 0 || echo 1) "$sum"
p8=$(awk -F, 'NR > 1 && $8 == "refused_policy" && $10 ~ /finishTimes/' \
	"$D/o8/reservations.csv" | wc -l)
say "Fig. 8 refusals name the clause ($p8 rows)" $([ "$p8" -gt 0 ] && echo 0 || echo 1)

out=$("$SIM" -q -c "$D/r.ini" -o "$D/oa" --rsv-policy "$D/all.cad" 2>&1)
sa=$(grep '^SUMMARY' <<<"$out")
pa=$(sed -n 's/.* rsv_preempted=\([0-9]*\).*/\1/p' <<<"$sa")
np=$(awk -F, 'NR > 1 && $8 == "refused_policy"' "$D/oa/reservations.csv" | wc -l)
say "--rsv-policy accept-all: no policy refusal ($np), running jobs preempted ($pa)" \
	$([ "$np" = 0 ] && [ "${pa:-0}" -gt 0 ] && echo 0 || echo 1) "$out"

printf 'x = 1;\nPLUS_NODE_RESERVABLE = (x == ;\n' >"$D/bad.cad"
out=$("$SIM" -q -c "$D/r.ini" -o "$D/ob" --rsv-policy "$D/bad.cad" 2>&1)
rc=$?
say "bad policy: exit 2 with FILE:LINE:COL" \
	$([ $rc = 2 ] && [[ $out == *"bad.cad:2:"*"error"* ]] && echo 0 || echo 1) "rc $rc: $out"
sed 's/^policy = firstfit/policy = easy/' "$D/r.ini" >"$D/e.ini"
out=$("$SIM" -q -c "$D/e.ini" -o "$D/oe" 2>&1)
rc=$?
say "EASY with [reservations]: exit 2 at e.ini:10" \
	$([ $rc = 2 ] && [[ $out == *"e.ini:10: [scenario.ff] policy"* ]] && echo 0 || echo 1) \
	"rc $rc: $out"
sed '/^\[reservations\]/,$d' "$D/r.ini" >"$D/n.ini"
out=$("$SIM" -q -c "$D/n.ini" -o "$D/on" --rsv-policy "$D/all.cad" 2>&1)
rc=$?
say "--rsv-policy without [reservations]: exit 2" $([ $rc = 2 ] && echo 0 || echo 1) "$out"

# a request file instead of the generator: the fig8 run's stream, replayed, gives the same
# outcomes; malformed lines are refused with FILE:LINE
awk -F, 'NR == 1 { print "# from reservations.csv"; print "owner,nodes,at_s,start_s,end_s,note"; next }
	{ print $7 "," $6 "," $3 "," $4 "," $5 ",x" }' "$D/o8/reservations.csv" >"$D/req.csv"
sed -e '/^rate_per_h/,/^owners/d' -e "s#^\[reservations\]#[reservations]\nrequests = req.csv#" \
	"$D/r.ini" >"$D/f.ini"
out=$("$SIM" -q -c "$D/f.ini" -o "$D/of" 2>&1)
rc=$?
same=$(cmp -s <(cut -d, -f1-9 "$D/o8/reservations.csv") <(cut -d, -f1-9 "$D/of/reservations.csv") &&
	echo 0 || echo 1)
say "requests = FILE: the same stream read back gives the same outcomes" \
	$([ $rc = 0 ] && [ "$same" = 0 ] && echo 0 || echo 1) "rc $rc: $out"
printf 'at_s,start_s,end_s,nodes,owner\n0,600,1200,2,userA\n10,700,650,1,userX\n' >"$D/req.csv"
out=$("$SIM" -q -c "$D/f.ini" -o "$D/of2" 2>&1)
rc=$?
say "requests = FILE: end before start refused at req.csv:3" \
	$([ $rc = 2 ] && [[ $out == *"req.csv:3: end_s 650 is not after start_s 700"* ]] && echo 0 ||
		echo 1) "rc $rc: $out"
printf 'at_s,start_s,nodes,owner\n' >"$D/req.csv"
out=$("$SIM" -q -c "$D/f.ini" -o "$D/of3" 2>&1)
rc=$?
say "requests = FILE: a header without end_s refused at req.csv:1" \
	$([ $rc = 2 ] && [[ $out == *"req.csv:1: header has no column 'end_s'"* ]] && echo 0 ||
		echo 1) "rc $rc: $out"
out=$("$SIM" -q -c <(cat "$D/f.ini"; echo "seed = 3") -o "$D/of4" 2>&1)
rc=$?
say "requests and the generator's keys together are refused" \
	$([ $rc = 2 ] && [[ $out == *"seed: the generator's keys and requests exclude each other"* ]] &&
		echo 0 || echo 1) "rc $rc: $out"

# the shipped configuration on the real log
if [ -f "$R/../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz" ]; then
	out=$(cd "$R" && "$SIM" -q -c config/kth-rsv.ini -o "$D/kth" 2>&1)
	rc=$?
	s=$(grep '^SUMMARY' <<<"$out")
	pct=$(sed -n 's/.*rsv_accepted_pct=\([0-9]*\).*/\1/p' <<<"$s")
	say "config/kth-rsv.ini: Fig. 8 on KTH-SP2: accepted ${pct}% (> 80), none preempted" \
		$([ $rc = 0 ] && [ "${pct:-0}" -gt 80 ] && [[ $s == *" rsv_preempted=0"* ]] &&
			echo 0 || echo 1) "rc $rc: $out"
else
	n=$((n + 1))
	echo "ok $n - config/kth-rsv.ini # SKIP the KTH-SP2 trace is not in ../shared/traces"
fi
echo "1..$n"
exit $fail
