#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Task farms end to end, as root (issue #15): nlevel on net_af_packet over a veth pair into a
# private network namespace (10.91.0.0/24, names by PID), two nlevel-workers there with
# --commands files (named commands, machine ClassAd attributes, captured output), and
# nlevel-submit:
#   - malformed task files, over-long arguments and unknown command names are refused with
#     FILE:LINE before anything is sent (the appliance never hears of the submit id);
#   - 10,000 real commands exiting 0, 1 and 7: every one ends, the job log has each exit
#     status, stdout and stderr files are checked byte for byte, nlevel-submit exits 1 saying
#     how many failed, and --status (the appliance's per-submit counters) agrees;
#   - Requirements no machine meets: REJECT no_machine; Requirements some meet: only those;
#     Rank: every task on the machine of highest Rank;
#   - a worker killed (SIGKILL) mid-run: every task still ends (re-dispatch or --retries);
#   - nlevel-submit killed mid-run, then --resume: nothing logged ok runs again, all end;
#   - without --wait: the submit id is printed at once and --status follows it to the end.
#   - with --key --principals: FSUBMITs queued fairly (the site key's holder's queue);
#   - job log args holding a newline: --resume reads back what nlevel-submit wrote.
# Usage: test_taskfarm.sh NLEVEL WORKER SUBMIT. TAP; skips (a "1..0 # SKIP" plan) when not
# root, without netns/veth, or when the EAL cannot start.
set -u
NLEVEL=$1 WORKER=$2 SUBMIT=$3
SRC=${NL_SRC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
CFG=$SRC/tests/taskfarm/farm.ini
TEL=$SRC/tests/dataplane/nl_tel.py
. "$SRC/tests/common/nl_tap.sh"
. "$SRC/tests/common/nl_tmp.sh"
. "$SRC/tests/common/nl_veth.sh"
skip() { echo "1..0 # SKIP $*"; exit 0; }

[[ $(id -u) == 0 ]] || skip "not root"
command -v ip >/dev/null || skip "no iproute2"
id=$$
NS=nltf$id VA=nltfa$id VB=nltfb$id PFX=nltf$id
APP_IP=10.91.0.1 NS_IP=10.91.0.2 # a subnet of its own: it runs beside other tests
TMP=$(nl_scratch nltf) # tmpfs: the journal fsyncs fast (nl_tmp.sh)
WPIDS=() APP=
cleanup() {
	for p in "${WPIDS[@]}"; do kill "$p" 2>/dev/null; done
	if [[ -n $APP ]]; then kill -INT "$APP" 2>/dev/null; wait "$APP" 2>/dev/null; fi
	nl_veth_down "$NS" "$VA"
	rm -rf "$TMP" "/var/run/dpdk/$PFX"
}
trap cleanup EXIT
nl_veth_up "$NS" "$VA" "$VB" 10.91.0 || skip "$NL_VETH_ERR"
INNS=(ip netns exec "$NS")
tel() { python3 "$TEL" "$PFX" "$1" 2>/dev/null; }
tel_key() { # command, key
	tel "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print(list(d.values())[0]['$2'])" 2>/dev/null || echo -1
}
sub() { "${INNS[@]}" "$SUBMIT" --appliance "$APP_IP" "$@"; }

start_app() { # log file, [nlevel options]: the appliance in the background, $APP its pid
	local log=$1

	shift
	"$NLEVEL" --no-huge --no-pci --no-shconf --file-prefix "$PFX" -l 0-1 \
		--vdev="net_af_packet0,iface=$VA" -- --config "$CFG" --scheme nlsc --ip "$APP_IP" \
		--work-scale 1e-3 --idle-sleep-us 50 --worker-timeout 3 --state-dir "$TMP/state" \
		"$@" >"$log" 2>&1 &
	APP=$!
}
start_app "$TMP/app.log"
for _ in $(seq 150); do
	[[ $(tel_key /nlevel/stats accepted) != -1 ]] && break
	kill -0 "$APP" 2>/dev/null || break
	sleep 0.1
done
if [[ $(tel_key /nlevel/stats accepted) == -1 ]]; then
	grep -q "EAL initialisation failed" "$TMP/app.log" && skip "the DPDK EAL cannot start here"
	sed 's/^/# /' "$TMP/app.log" | tail -n 20
	echo "not ok 1 - the appliance comes up"
	echo "1..1"
	exit 1
fi

# the commands: emit prints its 1st argument to stdout, its 2nd to stderr, exits with its 3rd
cat >"$TMP/emit.sh" <<'EOF'
#!/bin/sh
printf '%s\n' "$1"
printf '%s\n' "$2" >&2
exit "$3"
EOF
chmod 755 "$TMP/emit.sh"
# tick appends its argument to a file: how many times a task's command ran
printf '#!/bin/sh\necho "$1" >>%s/ticks\n' "$TMP" >"$TMP/tick.sh"
chmod 755 "$TMP/tick.sh"
mkdir -m 755 "$TMP/out1" "$TMP/out2" # the workers run as root: group/others must not write
for w in 1 2; do
	cat >"$TMP/w$w.conf" <<EOF
# worker $w of the task-farm test
command emit = $TMP/emit.sh {1} {2} {3}
command nap = /bin/sleep {1}
command true = /bin/true
command tick = $TMP/tick.sh {1}
command zeros = /bin/dd if=/dev/zero bs=1024 count={1} status=none   # {1} inside a word
output_dir = $TMP/out$w
output_cap = 64k
machine HasBig = $([[ $w == 1 ]] && echo true || echo false)
machine Memory = $([[ $w == 1 ]] && echo 65536 || echo 1024)
EOF
done
echo "machine.0 Fast = 10" >>"$TMP/w1.conf"
start_worker() { # number, [worker options]
	local w=$1

	shift
	"${INNS[@]}" "$WORKER" --appliance "$APP_IP" --id "$w" --allow-root --quiet "$@" \
		--mach 1e9:'*' --mach 1e9:'*' --mach 1e9:'*' --mach 1e9:'*' \
		--commands "$TMP/w$w.conf" >>"$TMP/w$w.log" 2>&1 &
	WPIDS[$w]=$!
}
start_worker 1
start_worker 2
for _ in $(seq 100); do
	[[ $(tel_key /nlevel/submits commands) -ge 5 && $(tel_key /nlevel/stats workers_joined) -ge 2 ]] && break
	sleep 0.1
done
say "two workers join and announce their 5 commands" \
	"$([[ $(tel_key /nlevel/submits commands) == 5 ]]; echo $?)" "$(cat "$TMP"/w*.log)"

# --- a long task's resends back off ------------------------------------------------------------
# An accepted task without a final answer is sent again after 5, 10, 20 s... of no word of it;
# the appliance's answer to such a resend must not restart the back-off (it did: a 21 s task
# went out at 5, 10, 15 and 20 s; now at 5 and 15). Runs beside the checks below, on worker 1
# (HasBig), which is never killed; checked at the end.
sub --wait --quiet --submit-id 90 --requirements 'HasBig == true' --array 1-1 nap 21 \
	>"$TMP/long.out" 2>&1 &
LONGP=$!

# --- a resent FSUBMIT runs once ----------------------------------------------------------------
# A raw client: the same FSUBMIT (submitter, task id, attempt) sent 3 times at once, and again
# after its COMPLETE: ACCEPT / TASKINFO + COMPLETE answered each time, the command run once;
# attempt 2 of the same task id (a retry) runs again.
res=$("${INNS[@]}" python3 "$(dirname "$0")/resend.py" "$APP_IP" 2>&1)
runs=$(grep -c '^x1$' "$TMP/ticks" 2>/dev/null)
runs2=$(grep -c '^x2$' "$TMP/ticks" 2>/dev/null)
say "a resent FSUBMIT (in flight, then ended) is answered from its state, run once; a new attempt runs" \
	"$([[ $res == "OK"* && $runs == 1 && $runs2 == 1 && $(tel_key /nlevel/submits resent) -ge 3 ]]; echo $?)" \
	"$res; runs $runs / $runs2; resent $(tel_key /nlevel/submits resent)"

# --- refused before anything is sent -------------------------------------------------------
printf 'true\n@split 0\ntrue\n' >"$TMP/bad1.txt"
t "malformed directive: FILE:LINE, nothing sent" 2 "bad1.txt:2: @split" sub --wait --submit-id 11 "$TMP/bad1.txt"
printf 'emit "unterminated\n' >"$TMP/bad2.txt"
t "unterminated quote: FILE:LINE" 2 "bad2.txt:1: unterminated quote" sub --wait --submit-id 12 "$TMP/bad2.txt"
printf 'true\n# fine\nemit %s b 0\n' "$(printf 'x%.0s' $(seq 70))" >"$TMP/bad3.txt"
t "over-long arguments: FILE:LINE" 2 "bad3.txt:3: arguments of 'emit' are over 64 bytes" sub --wait --submit-id 13 "$TMP/bad3.txt"
printf '@requirements Memory >= \ntrue\n' >"$TMP/bad4.txt"
t "bad Requirements: FILE:LINE" 2 "bad4.txt:1: Requirements" sub --wait --submit-id 14 "$TMP/bad4.txt"
printf 'true\ntrue\nno_such_cmd 1\n' >"$TMP/bad5.txt"
t "unknown command name: FILE:LINE, nothing submitted" 2 "bad5.txt:3: unknown command 'no_such_cmd'" sub --wait --submit-id 15 "$TMP/bad5.txt"
t "the appliance never saw submits 11..15" 1 "unknown to the appliance" sub --status 15

# --- 10,000 real commands, exit statuses 0/1/7, outputs byte for byte ------------------------
N=${NL_TF_TASKS:-10000}
awk -v n=$N 'BEGIN { for (i = 1; i <= n; i++) { s = (i % 10 == 3) ? 1 : (i % 10 == 7) ? 7 : 0;
	printf "emit out-%d err-%d %d\n", i, i, s } }' >"$TMP/tasks.txt"
t0=$(date +%s.%N)
sub --wait --quiet --submit-id 100 --joblog "$TMP/log.csv" "$TMP/tasks.txt" >"$TMP/sub.out" 2>"$TMP/sub.err"
rc=$?
t1=$(date +%s.%N)
echo "# $(grep SUMMARY "$TMP/sub.out")"
echo "# $N tasks in $(python3 -c "print(round($t1 - $t0, 1))") s"
nfail=$((N / 10 * 2))
say "10,000 tasks: exit 1 and '$nfail of $N tasks failed'" \
	"$([[ $rc == 1 ]] && grep -q "$nfail of $N tasks failed" "$TMP/sub.err"; echo $?)" "rc $rc: $(cat "$TMP/sub.err")"
check=$(python3 - "$TMP/log.csv" "$TMP/out1" "$TMP/out2" $N <<'PY'
import csv, os, sys
log, o1, o2, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rows = {}
for r in csv.DictReader(open(log)):
    rows[int(r["index"])] = r
bad = []
for i in range(1, n + 1):
    want = 1 if i % 10 == 3 else 7 if i % 10 == 7 else 0
    r = rows.get(i)
    if r is None:
        bad.append("%d: not logged" % i); continue
    if int(r["status"]) != want or r["result"] != ("ok" if want == 0 else "failed_exit"):
        bad.append("%d: status %s result %s" % (i, r["status"], r["result"]))
    name = r["stdout"]
    d = o1 if os.path.exists(os.path.join(o1, name)) else o2
    try:
        out = open(os.path.join(d, name), "rb").read()
        err = open(os.path.join(d, name[:-4] + ".err"), "rb").read()
    except OSError as e:
        bad.append("%d: %s" % (i, e)); continue
    if out != b"out-%d\n" % i or err != b"err-%d\n" % i:
        bad.append("%d: output %r / %r" % (i, out[:40], err[:40]))
    if not r["machine"].startswith("w"):
        bad.append("%d: no machine" % i)
print(len(bad), "; ".join(bad[:5]))
PY
)
say "10,000 tasks: every exit status in the job log, every stdout/stderr file byte for byte" \
	"$([[ $check == "0 "* ]]; echo $?)" "$check"
st=$(sub --status 100 | grep SUMMARY)
# a SUBMIT resent after 2 s without an answer may run twice: the counters may exceed N
check=$(sed 's/.*submitted=\([0-9]*\) accepted=\([0-9]*\) running=\([0-9]*\) done_ok=\([0-9]*\) done_err=\([0-9]*\) rejected=\([0-9]*\) lost=\([0-9]*\).*/\1 \2 \3 \4 \5 \6 \7/' <<<"$st")
read -r c_sub c_acc c_run c_ok c_err c_rej c_lost <<<"$check"
say "--status: the appliance's counters of the submit agree ($((N - nfail)) ok, $nfail non-zero, 0 running)" \
	"$([[ $c_run == 0 && $c_rej == 0 && $c_lost == 0 && $c_ok -ge $((N - nfail)) && $c_err -ge $nfail &&
		$((c_ok + c_err)) == "$c_acc" && $((c_ok + c_err - N)) -le 20 ]]; echo $?)" "$st"
p50=$(sed -n 's/.*start_p50_ms=\([0-9.]*\).*/\1/p' "$TMP/sub.out")
echo "# submit-to-start p50 ${p50:-?} ms"

# --- output cap: 200 KiB written, 64 KiB kept (output_cap = 64k), SIGXFSZ past it (153) ---
sub --wait --quiet --submit-id 200 --joblog "$TMP/cap.csv" --array 1-1 zeros 200 >/dev/null 2>&1
capf=$(ls "$TMP"/out?/200_1.0.out 2>/dev/null | head -n1)
size=$(stat -c %s "$capf" 2>/dev/null)
say "output cap: a command writing 200 KiB leaves a 64 KiB stdout file and status 153 (SIGXFSZ)" \
	"$([[ $size == 65536 && $(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "status") c = i } NR == 2 { print $c }' "$TMP/cap.csv") == 153 ]]; echo $?)" "size ${size:-none}: $(cat "$TMP/cap.csv")"

# --- a job log whose args hold a newline and quotes: --resume reads what it wrote ----------------
sub --wait --quiet --submit-id 210 --joblog "$TMP/nl.csv" --array 1-3 emit $'a\nb' 'x,"y"' 0 >/dev/null 2>&1
out=$(sub --wait --quiet --resume --joblog "$TMP/nl.csv" --array 1-3 emit $'a\nb' 'x,"y"' 0 2>&1)
rc=$?
say "--resume reads back a job log with a newline in an args field: all 3 skipped" \
	"$([[ $rc == 0 && $out == *"skipped=3 "* ]]; echo $?)" "rc $rc: $out"

# --- Requirements and Rank ------------------------------------------------------------------
printf '@requirements Memory > 1000000000\ntrue\ntrue\n' >"$TMP/nomatch.txt"
sub --wait --quiet --joblog "$TMP/nomatch.csv" "$TMP/nomatch.txt" >/dev/null 2>"$TMP/nomatch.err"
rc=$?
say "Requirements no machine meets: REJECT no_machine, exit 1" \
	"$([[ $rc == 1 && $(grep -c rejected_no_machine "$TMP/nomatch.csv") == 2 ]]; echo $?)" "rc $rc: $(cat "$TMP/nomatch.csv" "$TMP/nomatch.err")"
awk 'BEGIN { print "@requirements HasBig && Memory >= 65536 && TARGET.Arch =!= undefined"; for (i = 0; i < 200; i++) print "true" }' >"$TMP/big.txt"
sub --wait --quiet --window 16 --joblog "$TMP/big.csv" "$TMP/big.txt" >/dev/null 2>&1
rc=$?
nw1=$(awk -F, 'NR > 1 && $6 ~ /^w1\./' "$TMP/big.csv" | wc -l)
say "Requirements (3 clauses): all 200 tasks on worker 1's machines only" \
	"$([[ $rc == 0 && $nw1 == 200 ]]; echo $?)" "rc $rc, $nw1 on worker 1"
awk 'BEGIN { print "@rank Fast"; for (i = 0; i < 100; i++) print "true" }' >"$TMP/rank.txt"
sub --wait --quiet --window 8 --joblog "$TMP/rank.csv" "$TMP/rank.txt" >/dev/null 2>&1
rc=$?
nfast=$(awk -F, 'NR > 1 && $6 == "w1.0"' "$TMP/rank.csv" | wc -l)
say "Rank: all 100 tasks on the machine of highest Rank (w1.0, Fast = 10)" \
	"$([[ $rc == 0 && $nfast == 100 ]]; echo $?)" "rc $rc, $nfast on w1.0: $(awk -F, 'NR > 1 { print $6 }' "$TMP/rank.csv" | sort | uniq -c | tr '\n' ' ')"

# --- a worker killed mid-run ------------------------------------------------------------------
awk 'BEGIN { for (i = 0; i < 400; i++) print "nap 0.05" }' >"$TMP/naps.txt"
sub --wait --quiet --retries 3 --joblog "$TMP/kill.csv" "$TMP/naps.txt" >"$TMP/kill.out" 2>&1 &
sp=$!
sleep 1.5
kill -9 "${WPIDS[2]}"
wait "${WPIDS[2]}" 2>/dev/null
wait "$sp"
rc=$?
say "worker killed mid-run: all 400 tasks end ok (re-dispatched or retried)" \
	"$([[ $rc == 0 ]] && grep -q "ok=400 " "$TMP/kill.out"; echo $?)" "rc $rc: $(tail -n 3 "$TMP/kill.out")"
start_worker 2
for _ in $(seq 50); do
	[[ $(tel_key /nlevel/stats workers_joined) -ge 3 ]] && break
	sleep 0.1
done

# --- nlevel-submit killed, then --resume -------------------------------------------------------
awk 'BEGIN { for (i = 0; i < 300; i++) print "nap 0.02" }' >"$TMP/res.txt"
# not through sub(): $! must be nlevel-submit itself (ip netns exec execs it), not a subshell
"${INNS[@]}" "$SUBMIT" --appliance "$APP_IP" --wait --quiet --window 16 --submit-id 300 \
	--joblog "$TMP/res.csv" "$TMP/res.txt" >/dev/null 2>&1 &
sp=$!
# killed once some tasks ended ok and before all did (a fixed sleep let a quiet host finish all
# 300 first): the joblog's rows, header included, polled
for _ in $(seq 300); do
	[[ $(wc -l <"$TMP/res.csv" 2>/dev/null || echo 0) -gt 30 ]] && break
	sleep 0.05
done
kill -9 "$sp"
wait "$sp" 2>/dev/null
sleep 0.2
cp "$TMP/res.csv" "$TMP/res-before.csv"
sub --wait --quiet --window 16 --resume --joblog "$TMP/res.csv" "$TMP/res.txt" >"$TMP/res.out" 2>&1
rc=$?
check=$(python3 - "$TMP/res-before.csv" "$TMP/res.csv" <<'PY'
import csv, sys
before = list(csv.DictReader(open(sys.argv[1])))
after = list(csv.DictReader(open(sys.argv[2])))
ok_before = {r["index"] for r in before if r["result"] == "ok"}
rerun = [r["index"] for r in after[len(before):] if r["index"] in ok_before]
ok_all = {r["index"] for r in after if r["result"] == "ok"}
print(len(ok_before), len(rerun), len(ok_all))
PY
)
read -r nb nr na <<<"$check"
say "--resume after nlevel-submit was killed: re-runs nothing that succeeded ($nb ok before), all 300 end ok" \
	"$([[ $rc == 0 && $nb -gt 0 && $nb -lt 300 && $nr == 0 && $na == 300 ]]; echo $?)" "rc $rc, ok before $nb, re-run $nr, ok at the end $na: $(tail -n 2 "$TMP/res.out")"

# --- without --wait: the submit id at once, --status follows -------------------------------------
out=$(sub --submit-id 400 --array 1-200 true 2>&1)
say "without --wait: 'Submitted batch 400' and back at once" "$([[ $out == "Submitted batch 400"* ]]; echo $?)" "$out"
for _ in $(seq 100); do
	st=$(sub --status 400 | grep SUMMARY)
	[[ $st == *"done_ok=200"* ]] && break
	sleep 0.2
done
say "--status follows the background submit to 200 done" "$([[ $st == *"done_ok=200"* && $st == *"running=0"* ]]; echo $?)" "$st"
acc=$(tel /nlevel/stats | python3 -c '
import json, sys
s = json.load(sys.stdin)["/nlevel/stats"]
print(int(s["accepted"] == s["completed"] + s["failed"] + s["in_flight"]))' 2>/dev/null)
say "the appliance's accounting holds (accepted = completed + failed + in flight)" "$([[ $acc == 1 ]]; echo $?)" "$(tel /nlevel/stats)"

# --- with --key and --principals: FSUBMITs wait in the fair queue and keep their match ------
# handle there (admitted later, by deficit round robin, and not with another frame's handle)
for p in "${WPIDS[@]}"; do kill "$p" 2>/dev/null; done
kill -INT "$APP" 2>/dev/null
wait "$APP" 2>/dev/null
APP=
head -c 32 /dev/urandom >"$TMP/site.key"
chmod 600 "$TMP/site.key"
printf '[admission]\nmax_in_flight = 4\nqueue = 256\n[submitter other]\n' >"$TMP/fair.ini"
start_app "$TMP/app2.log" --key "$TMP/site.key" --principals "$TMP/fair.ini"
for _ in $(seq 150); do
	[[ $(tel_key /nlevel/stats accepted) != -1 ]] && break
	sleep 0.1
done
start_worker 1 --key "$TMP/site.key"
start_worker 2 --key "$TMP/site.key"
for _ in $(seq 100); do
	[[ $(tel_key /nlevel/stats workers_joined) -ge 2 ]] && break
	sleep 0.1
done
sub --key "$TMP/site.key" --wait --quiet --window 32 --joblog "$TMP/kbig.csv" "$TMP/big.txt" >/dev/null 2>&1
rc=$?
nw1=$(awk -F, 'NR > 1 && $6 ~ /^w1\./' "$TMP/kbig.csv" | wc -l)
say "--key --principals: 200 queued FSUBMITs with Requirements, all on worker 1's machines" \
	"$([[ $rc == 0 && $nw1 == 200 ]]; echo $?)" "rc $rc, $nw1 on worker 1: $(tail -n 3 "$TMP/app2.log")"
wait "$LONGP"
rc=$?
long_resent=$(sed -n 's/.*SUMMARY.* resent=\([0-9]*\).*/\1/p' "$TMP/long.out")
# 2 expected; 3 leaves room for one answer delayed over 3 s by a loaded host
say "a 21 s task is resent with back-off (5, 15 s), not every 5 s" \
	"$([[ $rc == 0 && -n $long_resent && $long_resent -ge 1 && $long_resent -le 3 ]]; echo $?)" \
	"rc $rc, resent '${long_resent}': $(tail -n 2 "$TMP/long.out")"
nl_tap_done
