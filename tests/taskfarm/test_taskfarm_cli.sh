#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nlevel-submit's and nlevel-worker's mistakes caught before anything is sent (no appliance:
# the address is a closed port). Each check names the wrong input and the exit status.
# Usage: test_taskfarm_cli.sh WORKER SUBMIT. TAP.
set -u
WORKER=$1 SUBMIT=$2
SRC=${NL_SRC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/common/nl_tap.sh"
TMP=$(mktemp -d /tmp/nltfcli.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
sub() { "$SUBMIT" --appliance 127.0.0.1:9 --timeout 0.3 "$@"; }
# the worker as root needs --allow-root; it exits 2 on these before any socket
wrk() { "$WORKER" --appliance 127.0.0.1:9 --mach 1e9:0 --allow-root --exit-after 0.01 --quiet "$@"; }

# --- nlevel-submit --array ---
args=()
for _ in $(seq 45); do args+=(""); done
t "--array with 45 arguments: 'too many arguments', exit 2 (no crash)" 2 "too many arguments" \
	sub --wait --array 1-1 hello "${args[@]}"
t "--array 5-10:-1: a negative STEP refused" 2 "--array: want A-B[:STEP]" sub --array 5-10:-1 x
t "--array 1-+5 / 1-5:0x2: signs and hex refused" 2 "--array: want A-B[:STEP]" sub --array 1-+5 x
t "--array 1-5:0: STEP 0 refused" 2 "STEP >= 1" sub --array 1-5:0 x
t "--array 1-60000000: the real limit named" 2 "at most 50000001 tasks" sub --array 1-60000000 x
t "--array 1-100000000:2 (2,000 values) passes the size check" 2 "no answer from the appliance" \
	sub --array 1-100000000:50000 x

# --- --status ---
t "--status with no appliance answering: exit 2, as --help says" 2 "no answer from the appliance" \
	sub --status 5
t "--status 5 extra: extra arguments refused" 2 "takes no TASKFILE" sub --status 5 extra
t "--help: exit status 2 for no answer" 0 "no answer from the appliance to REGISTER" sub --help

# --- task files ---
printf 'argv a\0 evil\n' >"$TMP/nul.txt"
t "a task file with a NUL byte: FILE:LINE" 2 "nul.txt:1: a NUL byte" sub "$TMP/nul.txt"

# --- --resume: the job log ---
printf 'index,task_id,attempt,command,args,machine,slot,start,end,runtime_s,status,result,stdout\n-1,1,1,x,"",,,1,1,1,0,ok,a\n' >"$TMP/neg.csv"
t "a job log line of index -1: FILE:LINE, no 4 GiB allocation" 2 "neg.csv:2: not a job log line" \
	sub --resume --joblog "$TMP/neg.csv" --array 1-2 x
printf 'index,task_id,attempt,command,args,machine,slot,start,end,runtime_s,status,result,stdout\n4294967296,1,1,x,"",,,1,1,1,0,ok,a\n' >"$TMP/big.csv"
t "a job log index over 2^32-1 refused" 2 "big.csv:2: not a job log line" \
	sub --resume --joblog "$TMP/big.csv" --array 1-2 x
# what nlevel-submit writes for argv $'a\nb' 'x,"y"' (submit 7): a quoted field with a newline
{
	echo 'index,task_id,attempt,command,args,machine,slot,start,end,runtime_s,status,result,stdout'
	for i in 1 2 3; do
		printf '%d,%d,1,argv,"a\nb x,""y""",w1.0,0,1.0,2.0,1.0,0,ok,7_%d.0.out\n' "$i" $((7 * 4294967296 + i)) "$i"
	done
} >"$TMP/nl.csv"
out=$(sub --resume --joblog "$TMP/nl.csv" --array 1-3 argv $'a\nb' 'x,"y"' 2>&1)
rc=$?
say "--resume reads a job log whose args field holds a newline (CSV quoting)" \
	"$([[ $rc == 2 && $out != *"not a job log line"* && $out == *"no answer from the appliance"* ]]; echo $?)" "rc $rc: $out"
ok=$(python3 -c "import csv,sys; print(sum(1 for r in csv.DictReader(open(sys.argv[1])) if r['result'] == 'ok'))" "$TMP/nl.csv")
say "that job log is CSV as Python reads it (3 records)" "$([[ $ok == 3 ]]; echo $?)" "$ok"

# --- nlevel-worker --cmd ---
t "--cmd 1=/nonexistent refused" 2 "No such file" wrk --cmd 1=/nonexistent
t "--cmd 1=/tmp (a folder) refused" 2 "not a regular file" wrk --cmd 1=/tmp
t "--cmd with a duplicate id refused" 2 "given twice" wrk --cmd 1=/bin/true --cmd 1=/bin/false
t "--cmd 1=/bin/true --cmd 2=/bin/false accepted" 0 "" wrk --cmd 1=/bin/true --cmd 2=/bin/false

# --- nlevel-worker --rlimit ---
for bad in cpu=1.5 cpu=1k cpu=1e3 '' cpu=1, cpu=1,cpu=2 ,cpu=1 mem=1.5M mem=-1 fsize=1T nofile=2k 'cpu= 1'; do
	t "--rlimit '$bad' refused" 2 "--rlimit: want" wrk --rlimit "$bad"
done
t "--rlimit cpu=2,mem=64M,nofile=32,fsize=1k accepted" 0 "" wrk --rlimit cpu=2,mem=64M,nofile=32,fsize=1k

# --- nlevel-worker --commands ---
mkdir -m 777 "$TMP/o777"
printf 'command hello = /bin/echo\noutput_dir = %s/o777\n' "$TMP" >"$TMP/c1.conf"
t "an output_dir of mode 0777 refused at start" 2 "without the sticky bit" wrk --commands "$TMP/c1.conf"
printf 'command hello = /tmp\noutput_dir = %s/o1\n' "$TMP" >"$TMP/c2.conf"
t "command NAME = /tmp refused" 2 "c2.conf:1: command 'hello': /tmp is not a regular file" wrk --commands "$TMP/c2.conf"
printf 'machine Foo = "a#b"\noutput_dir = %s/o1\n' "$TMP" >"$TMP/c3.conf"
t "machine Foo = \"a#b\" accepted ('#' in a string)" 0 "" wrk --commands "$TMP/c3.conf"
nl_tap_done
