#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A newcomer's papercuts, held (TAP): nlevel-sim and nlevel-jobmix share one exit-status
# convention (2 = bad input, said in --help), truncated/corrupt .swf.gz are reported as such,
# --out creates its parents, plot.gp redraws from its own folder, no crossover where both
# curves are saturated, figures without a curve to draw, engine and end-to-end job rates, cpus vs the trace's MaxProcs
# (warning; cpus = auto), --help of nlevel-classad-timing and nlevel-bench, and every SUMMARY
# key printed is defined in docs/output.md.
# Usage: test_papercuts.sh NLEVEL_SIM NLEVEL_JOBMIX|none CLASSAD_TIMING|none NLEVEL_BENCH|none
SIM=$(realpath "$1")
JM=$2 CT=$3 BENCH=$4
[[ $JM != none ]] && JM=$(realpath "$JM")
R=$(realpath "${NL_SRC_ROOT:-.}")
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
. "$(dirname "$0")/../common/nl_tap.sh"
keys() { grep '^SUMMARY' | tr ' ' '\n' | sed -n 's/=.*//p'; }
ALLKEYS=

# --- a small SWF log (MaxProcs 32) and a batch configuration for it
awk 'BEGIN { srand(3); print "; MaxProcs: 32"; print "; UnixStartTime: 1700000000";
	t = 0; for (i = 1; i <= 2000; i++) { t += int(rand() * 60); p = 1 + int(rand() * 8);
	r = 1 + int(rand() * 900); e = r + int(rand() * 900);
	print i, t, -1, r, p, -1, -1, p, e, -1, 1, 1 + i % 5, 1, -1, 1, -1, -1, -1 } }' >"$D/t.swf"
gzip -c "$D/t.swf" >"$D/t.swf.gz"
size=$(stat -c %s "$D/t.swf.gz")
head -c $((size / 2)) "$D/t.swf.gz" >"$D/trunc.swf.gz"
head -c $((size - 8)) "$D/t.swf.gz" >"$D/notrailer.swf.gz"
batch_ini() { # cpus value
	cat <<EOT
[batch]
trace = t.swf.gz
cpus = $1
queues = q
scenarios = ff
[queue.q]
cpu_max = 32
thread_max = 1
[scenario.ff]
policy = firstfit
queue_select = q
EOT
}
batch_ini 32 >"$D/b.ini"
batch_ini 24 >"$D/b24.ini"
batch_ini auto >"$D/bauto.ini"

# --- exit status convention: 2 for bad input, in both tools, and said in --help
t "sim --help states the exit-status convention" 0 "2 bad
input: command line, configuration (FILE:LINE), trace" "$SIM" --help
t "sim: truncated .swf.gz is reported as truncated, exit 2" 2 \
	"truncated compressed file: the gzip stream ends early (zlib: unexpected end of file)" \
	"$SIM" -q -c "$D/b.ini" --trace "$D/trunc.swf.gz" -o "$D/o1"
t "sim: .swf.gz without its trailer is an error, exit 2" 2 "truncated compressed file" \
	"$SIM" -q -c "$D/b.ini" --trace "$D/notrailer.swf.gz" -o "$D/o1"
printf '1 0 -1 10 1\n' >"$D/short.swf"
t "sim: a bad SWF line exits 2 with FILE:LINE" 2 "short.swf:1:" \
	"$SIM" -q -c "$D/b.ini" --trace "$D/short.swf" -o "$D/o1"
t "sim: a missing trace exits 2" 2 "cannot open" "$SIM" -q -c "$D/b.ini" --trace "$D/nope.swf" -o "$D/o1"
if [[ $JM != none ]]; then
	t "jobmix --help states the exit-status convention" 0 "2 bad input" "$JM" --help
	for c in learn generate compare waits; do
		t "jobmix $c --help states the exit-status convention" 0 "Exit status: 0 done; 1 run-time failure" "$JM" "$c" --help
	done
	t "jobmix: truncated .swf.gz is reported as truncated, exit 2" 2 "truncated compressed file" \
		"$JM" learn "$D/trunc.swf.gz" --out "$D/m"
	t "jobmix: the same bad SWF line exits 2, as in nlevel-sim" 2 "short.swf:1:" \
		"$JM" learn "$D/short.swf" --out "$D/m"
	t "jobmix: --groups 0 blames the option, not the trace" 2 "--groups: '0' is not a group count in 1..16" \
		"$JM" learn "$D/t.swf" --groups 0 --out "$D/m"
	t "jobmix: a directory given as the trace says so" 2 "$D: cannot open: Is a directory" \
		"$JM" learn "$D" --out "$D/m"
	printf '1 0 -1 100 4 -1 -1 4 9000000000 -1 1 1 1 -1 1 1 -1 -1\n' >"$D/huge.swf"
	t "jobmix: a request beyond the map's cells points at --max-walltime" 2 "cap the map with --max-walltime" \
		"$JM" learn "$D/huge.swf" --out "$D/m"
	"$JM" learn "$D/t.swf" --out "$D/t.model" >/dev/null 2>&1
	t "jobmix: a --rate below the generator's floor is named as such" 2 "--rate: 0.0001 jobs/day is less than one job per 1,000 weeks" \
		"$JM" generate "$D/t.model" --rate 0.0001 --jobs 5 --out "$D/r.swf"
fi

# --- batch run: --out creates parents, rates, cpus vs MaxProcs, plot from its folder
out=$(cd "$D" && "$SIM" -c b.ini -o "$D/deep/er/out" 2>&1)
rc=$?
[[ $rc == 0 && -f $D/deep/er/out/batch.csv ]]
say "sim --out a/b/c creates the missing parents" $? "rc $rc: $out"
ALLKEYS+=" $(keys <<<"$out")"
sum=$(grep '^SUMMARY' <<<"$out")
eng=$(tr ' ' '\n' <<<"$sum" | sed -n 's/^engine_jobs_per_s=//p')
e2e=$(tr ' ' '\n' <<<"$sum" | sed -n 's/^e2e_jobs_per_s=//p')
[[ -n $eng && -n $e2e ]] && awk -v a="$eng" -v b="$e2e" 'BEGIN { exit !(b > 0 && b <= a) }'
say "batch SUMMARY has engine_jobs_per_s >= e2e_jobs_per_s > 0" $? "$sum"
[[ $out != *"warning"*"MaxProcs"* ]]
say "no MaxProcs warning when cpus equals the header's" $? "$out"
t "cpus different from the trace's MaxProcs warns, with FILE:LINE" 0 \
	"b24.ini:3: [batch] cpus = 24, but the trace's header says MaxProcs 32" \
	bash -c "cd '$D' && '$SIM' -c b24.ini -o '$D/o24'"
t "cpus = auto reads MaxProcs from the trace's header" 0 "cpus = auto: 32 processors" \
	bash -c "cd '$D' && '$SIM' -c bauto.ini -o '$D/oauto'"
cmp -s <(cut -d, -f1-8 "$D/oauto/batch.csv") <(cut -d, -f1-8 "$D/deep/er/out/batch.csv")
say "cpus = auto gives the run of cpus = 32" $?
printf '; no header\n1 0 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n' >"$D/nohdr.swf"
t "cpus = auto without a MaxProcs header is refused with FILE:LINE" 2 \
	"bauto.ini:3: [batch] cpus: auto: nohdr.swf has no MaxProcs header line" \
	bash -c "cd '$D' && '$SIM' -q -c bauto.ini --trace nohdr.swf -o '$D/o2'"
printf '; MaxNodes: 430 (batch partition)\n1 0 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n' >"$D/nodes.swf"
t "cpus = auto on a log with MaxNodes only names that line" 2 \
	"its MaxNodes line says '430 (batch partition)'" \
	bash -c "cd '$D' && '$SIM' -q -c bauto.ini --trace nodes.swf -o '$D/o2'"
printf '; MaxProcs: 0\n1 0 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n' >"$D/zero.swf"
t "cpus = auto on MaxProcs: 0 says what the header holds" 2 \
	"the MaxProcs header line of zero.swf says '0', not a processor count" \
	bash -c "cd '$D' && '$SIM' -q -c bauto.ini --trace zero.swf -o '$D/o2'"
sed 's/^cpus = auto/cpus = auto\ncpus_scale = 4/' "$D/bauto.ini" >"$D/bscale.ini"
t "cpus = auto is MaxProcs x cpus_scale" 0 "cpus = auto: 128 processors (MaxProcs of t.swf.gz x cpus_scale)" \
	bash -c "cd '$D' && '$SIM' -c bscale.ini -o '$D/oscale'"
printf '; MaxProcs: 32\n' >"$D/empty.swf"
t "sim: a trace without a record is refused, exit 2" 2 "empty.swf: no job records (empty trace" \
	bash -c "cd '$D' && '$SIM' -q -c b.ini --trace empty.swf -o '$D/o2'"
printf '; MaxProcs: 32\r1 0 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\r' >"$D/cr.swf"
t "sim: a file with CR-only line ends is refused with FILE:LINE" 2 "cr.swf:1: carriage return inside a line" \
	bash -c "cd '$D' && '$SIM' -q -c b.ini --trace cr.swf -o '$D/o2'"
printf '; MaxProcs: 32\n1 0 -1 -1 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n' >"$D/norun.swf"
t "sim: a trace of no usable record says why, exit 2" 2 "no usable job in 1 records (dropped: no_runtime 1)" \
	bash -c "cd '$D' && '$SIM' -q -c b.ini --trace norun.swf -o '$D/o2'"
sed 's/^cpus = 32/cpus = 32\nbsld_tau_s = 0/' "$D/b.ini" >"$D/btau.ini"
t "bsld_tau_s = 0 is refused with FILE:LINE (bounded slowdown would divide by 0)" 2 "btau.ini:4: [batch] bsld_tau_s" \
	bash -c "cd '$D' && '$SIM' -q -c btau.ini -o '$D/o2'"
t "jobmix waits takes cpus = auto as nlevel-sim does" 0 "(scenario ff, firstfit, 32 nodes)" \
	bash -c "cd '$D' && '$JM' waits t.swf.gz --config bauto.ini"

if command -v gnuplot >/dev/null; then
	o=$D/deep/er/out
	rm -f "$o"/*.png
	(cd "$o" && gnuplot plot_batch.gp) >"$D/gp.log" 2>&1
	[[ $? == 0 && -s $o/fig2_wait_median.png && -s $o/fig3_wait_max.png ]] && ! grep -q "$o" <(grep -v '^#' "$o/plot_batch.gp")
	say "plot_batch.gp redraws both PNGs from its own folder (no absolute paths)" $? "$(cat "$D/gp.log")"
fi

# --- dispatch model: crossover, plot.gp from its folder
out=$("$SIM" -q -c "$R/config/paper-96.ini" -o "$D/p" --seeds 1 --loads 5,150 2>&1)
ALLKEYS+=" $(keys <<<"$out")"
cross=$(grep '^SUMMARY' <<<"$out" | tr ' ' '\n' | sed -n 's/^crossover_pct=//p')
sat=$(awk -F, '$4 == 150 && $15 == 1' "$D/p/curves.csv" | wc -l)
[[ $sat -ge 4 && $cross == -1 ]]
say "no crossover_pct where both curves are saturated (--loads 5,150)" $? "crossover_pct=$cross, saturated rows at 150: $sat"
if command -v gnuplot >/dev/null; then
	rm -f "$D"/p/fig*.png
	(cd "$D/p" && gnuplot plot.gp) >"$D/gp.log" 2>&1
	[[ $? == 0 && -s $D/p/fig4.png && -s $D/p/fig5.png && -s $D/p/fig6.png ]]
	say "cd DIR && gnuplot plot.gp redraws fig4-6" $? "$(cat "$D/gp.log")"
	grep -v '^#' "$D/p/plot.gp" | grep -qi "seed 00"
	[[ $? != 0 ]]
	say "figure titles name the paper, not 'seed 00x'" $?
fi

# --- one high load only: the curves with nothing to draw are left out, not a gnuplot error
if command -v gnuplot >/dev/null; then
	"$SIM" -c "$R/config/paper-96.ini" -o "$D/h" --seeds 1 --horizon 2e4 --loads 100 \
		>"$D/h.out" 2>"$D/h.err"
	rc=$?
	[[ $rc == 0 && -s $D/h/fig4.png && -s $D/h/fig6.png && ! -e $D/h/fig5.png ]] &&
		grep -q "fig5.png not drawn" "$D/h.err" && ! grep -q "gnuplot failed" "$D/h.err"
	say "--loads 100: fig4 and fig6 drawn without the saturated 2LSC curves, fig5 (<= 25 %) not drawn, said on stderr" $? "rc=$rc $(tail -n 3 "$D/h.err")"
fi

# --- a configuration whose load offers ~10^13 tasks is named before it starts; no empty field
sed -e 's/^instr = .*/instr = 1/' -e 's/^data_bits = .*/data_bits = 0/' \
	"$R/config/paper-96.ini" >"$D/tiny.ini"
timeout 20 "$SIM" -q -c "$D/tiny.ini" -o "$D/tiny" --seeds 1 --horizon 1e3 --loads 5 \
	>"$D/tiny.out" 2>"$D/tiny.err" &
tp=$!
for _ in $(seq 50); do grep -q "tasks offered" "$D/tiny.err" 2>/dev/null && break; sleep 0.1; done
kill "$tp" 2>/dev/null; wait "$tp" 2>/dev/null
grep -q "warning: $D/tiny.ini: up to .* tasks offered in all" "$D/tiny.err"
say "a load offering ~10^13 tasks (instr = 1) gets a warning naming the file, even with -q" $? "$(cat "$D/tiny.err")"
"$SIM" -c "$R/config/paper-96.ini" -o "$D/full" >/dev/null 2>"$D/full.err" & # its whole run
tp=$!
# its first progress line: the 10 s line "[K/350 ...]" or the first curve's "[curve 1/5 ...]"
for _ in $(seq 300); do grep -qE '^\[(curve )?[0-9]+/' "$D/full.err" 2>/dev/null && break; sleep 0.1; done
kill "$tp" 2>/dev/null; wait "$tp" 2>/dev/null
grep -qE '^\[(curve )?[0-9]+/' "$D/full.err" && ! grep -q "tasks offered" "$D/full.err"
say "the shipped paper-96 configuration (5 seeds of 10^6 u.t.) gets no such warning" $? "$(head -n 3 "$D/full.err")"
sed -e 's/^static_known = .*/static_known = 1/' "$R/config/paper-96.ini" >"$D/nok0.ini"
"$SIM" -q -c "$D/nok0.ini" -o "$D/nok0" --seeds 1 --horizon 2e3 --loads 5 >"$D/nok0.out" 2>&1
grep -q '^SUMMARY wall_s=' "$D/nok0.out"
say "without a plain NLSC curve SUMMARY has no crossover keys and no empty field" $? "$(tail -n 1 "$D/nok0.out")"

# --- a bad --loads is named as the option the user typed, not as a made-up file:line
"$SIM" -q -c "$R/config/paper-96.ini" -o "$D/badl" --loads 5,,10 >/dev/null 2>"$D/badl.err"
rc=$?
[[ $rc == 2 ]] && grep -q "^nlevel-sim: --loads 5,,10: empty item in the list" "$D/badl.err"
say "--loads 5,,10 is refused (status 2) naming --loads and the empty item" $? "rc=$rc $(cat "$D/badl.err")"

# --- the K computer recipe of docs/jobmix.md and config/k-computer.ini loads the machine
T=${NL_TRACE_KTH:-$R/../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz}
if [[ $JM != none && -r $T ]]; then
	grep -q -- "--rate 7000 --out kmix.swf" "$R/docs/jobmix.md" && grep -q -- "--rate 7000 --out kmix.swf" "$R/config/k-computer.ini"
	say "the K recipe (learn --time-unit 600 --max-walltime 86400, generate --rate 7000) is in docs/jobmix.md and config/k-computer.ini" $?
	(cd "$D" && "$JM" learn "$T" --time-unit 600 --max-walltime 86400 --out kth24.model &&
		"$JM" generate kth24.model --jobs 100000 --seed 1 --rate 7000 --out kmix.swf) >/dev/null 2>&1
	out=$(cd "$R" && "$JM" waits "$D/kmix.swf" --config config/k-computer.ini 2>&1)
	mean=$(awk '$1 == "<=" && $2 == "384" { print $3; exit }' <<<"$out")
	awk -v m="$mean" 'BEGIN { exit !(m + 0 > 0.2) }'
	say "the K recipe loads the machine: jobs of <= 384 nodes wait (mean > 0.2 h: ${mean:-?} h)" $? "$(tail -n 8 <<<"$out")"
else
	n=$((n + 1)); echo "ok $n # SKIP no KTH trace or no nlevel-jobmix"
fi

# --- batch configuration and accounting edges (a prober's findings, 2026-11-27)
sed 's/^cpus = 32$/cpus = 32   # the machine/' "$D/b.ini" >"$D/bhash.ini"
t "a '#' comment after a value is a comment" 0 "SUMMARY scenario=ff" \
	bash -c "cd '$D' && '$SIM' -q -c bhash.ini -o '$D/oh'"
sed 's/^queues = q$/queues = q,/' "$D/b.ini" >"$D/bcomma.ini"
t "a trailing comma in a name list is refused with FILE:LINE" 2 "bcomma.ini:4: [batch] queues:" \
	bash -c "cd '$D' && '$SIM' -q -c bcomma.ini -o '$D/oc'"
sed '/^cpu_max = 32$/d; /^thread_max = 1$/d' "$D/b.ini" >"$D/bempty.ini"
t "a queue section without keys names its missing key at the header's line" 2 \
	"bempty.ini:6: [queue.q] cpu_max: required key missing" \
	bash -c "cd '$D' && '$SIM' -q -c bempty.ini -o '$D/oe'"
sed 's/^cpu_max = 32$/cpu_max = 4/' "$D/b.ini" >"$D/bq4.ini"
t "jobs a fixed queue's cpu_max refuses are warned about, not silently lost" 0 \
	"jobs never run: no queue of it accepts them" \
	bash -c "cd '$D' && '$SIM' -q -c bq4.ini -o '$D/oq'"
printf 'jobs_max = 100\n' | sed -e '/^\[batch\]$/r /dev/stdin' "$D/b.ini" >"$D/bmax.ini"
(cd "$D" && "$SIM" -q -c bmax.ini -o "$D/om" >/dev/null 2>&1)
awk -F= '{ v[$1] = $2 } /^dropped_/ { d += $2 } END { exit !(v["jobs"] == 100 &&
	v["records"] == v["jobs"] + v["beyond_jobs_max"] + d) }' "$D/om/batch.meta"
say "batch.meta accounts for every record: jobs + beyond_jobs_max + dropped_* (jobs_max = 100)" $? \
	"$(grep -E '^(records|jobs|beyond)' "$D/om/batch.meta" | tr '\n' ' ')"
printf '; MaxProcs: 32\n1 0 -1 10 1 -1 -1 1 99999999999999999999 -1 1 1 1 -1 1 -1 -1 -1\n' >"$D/big.swf"
t "an integer field beyond 9e18 is called out of range, not 'not an integer'" 2 \
	"field 9 (requested time): '99999999999999999999' is out of range" \
	bash -c "cd '$D' && '$SIM' -q -c b.ini --trace big.swf -o '$D/ob'"
mkdir -p "$D/q"
t "an --out folder named with a quote runs no command and keeps its plots" 0 "SUMMARY" \
	bash -c "cd '$D' && '$SIM' -q -c b.ini -o \"$D/q/a';touch $D/PWNED;'b\""
[[ ! -e $D/PWNED && -f "$D/q/a';touch $D/PWNED;'b/fig2_wait_median.png" ]]
say "... no file made by the folder's name; fig2_wait_median.png written" $? "$(ls "$D/q"/* 2>&1 | head -5)"

# --- every SUMMARY key printed is defined in docs/output.md
missing=
for k in $(tr ' ' '\n' <<<"$ALLKEYS" | sed 's/_g[0-9]*$/_gG/' | sort -u); do
	grep -q "\`$k\`" "$R/docs/output.md" || missing="$missing $k"
done
[[ -z $missing ]]
say "every SUMMARY key printed here is defined in docs/output.md" $? "undefined:$missing"

# --- --help of the timing program and of the benchmark harness
if [[ $CT != none ]]; then
	t "nlevel-classad-timing --help is help, not a file" 0 "usage: nlevel-classad-timing [POLICY] [REPS]" "$CT" --help
	t "nlevel-classad-timing refuses an unknown option" 2 "unknown option '--bogus'" "$CT" --bogus
	t "nlevel-classad-timing refuses a bad REPS" 2 "REPS must be an integer 1..1000" "$CT" "$R/config/policies/fig4-simple.cad" 0
fi
if [[ $BENCH != none ]]; then
	out=$(NL_BENCH_NO_EAL=1 "$BENCH" --help 2>&1)
	[[ $out == *"nlevel's micro-benchmarks"* && $out == *"EAL-ARGS -- "* && $out == *"benchmark_filter"* ]]
	say "nlevel-bench --help says what nlevel's benchmarks are, the EAL -- form, then Google Benchmark's options" $? "$(head -c 400 <<<"$out")"
fi
nl_tap_done
