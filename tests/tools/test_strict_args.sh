#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nlevel-loadgen's numbers, --replay fields and --csv, and key files (nl_auth_key_load(),
# shared by every tool and the appliance) are checked before anything is sent (TAP): a bad
# value is refused with what was wanted and exit status 2; nothing wraps, hangs or allocates
# in proportion to a bad value.
# Usage: test_strict_args.sh LOADGEN KEY
LG=$1 KEY=$2
. "$(dirname "$0")/../common/nl_tap.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# an address where nobody answers (discard port): every task is lost, exit 1
lg() { timeout 20 "$LG" --appliance 127.0.0.1:9 "$@"; }
shape=(--rate 1000 --res 2 --split 1 --timeout 0.05)

# --tasks: an integer 1..10000000, never taken modulo 2^32
t "loadgen --tasks 2^32+1 refused, not 1 task" 2 "--tasks: want an integer 1..10000000, got '4294967297'" \
	lg "${shape[@]}" --tasks 4294967297
t "loadgen --tasks 2^32 refused with what is wanted" 2 "--tasks: want an integer 1..10000000, got '4294967296'" \
	lg "${shape[@]}" --tasks 4294967296
t "loadgen --tasks 1e10 refused before any allocation" 2 "--tasks: want an integer 1..10000000, got '1e10'" \
	lg "${shape[@]}" --tasks 1e10
t "loadgen --tasks 10000001 refused" 2 "--tasks: want an integer 1..10000000" lg "${shape[@]}" --tasks 10000001
t "loadgen --tasks 2.5 refused" 2 "--tasks: want an integer 1..10000000, got '2.5'" lg "${shape[@]}" --tasks 2.5
t "loadgen --tasks 0 refused" 2 "--tasks: want an integer 1..10000000, got '0'" lg "${shape[@]}" --tasks 0
t "loadgen --tasks 3 sends 3" 1 "SUMMARY sent=3 " lg "${shape[@]}" --tasks 3

# --timeout: seconds 0..1e6 (a huge value used to overflow into "give up at once")
t "loadgen --timeout 1e12 refused" 2 "--timeout: want seconds 0..1000000, got '1e12'" \
	lg --rate 100 --tasks 1 --res 2 --split 1 --timeout 1e12
t "loadgen --timeout -1 refused" 2 "--timeout: want seconds 0..1000000, got '-1'" \
	lg --rate 100 --tasks 1 --res 2 --split 1 --timeout -1
t "loadgen help states the --timeout range" 0 "0..1e6 s" "$LG" --help
t "loadgen help states the --tasks range" 0 "--tasks N              tasks to submit, 1..10000000" "$LG" --help

# the other numeric options: no trailing text, sign, space, nan, inf or precision loss
t "loadgen --rate -0 refused" 2 "--rate: want a number >= 0, got '-0'" lg --rate -0 --res 2 --split 1
t "loadgen --rate inf refused" 2 "--rate: want a number >= 0, got 'inf'" lg --rate inf --res 2 --split 1
t "loadgen --data ' 5' refused" 2 "--data: want a number >= 0, got ' 5'" lg "${shape[@]}" --data ' 5'
t "loadgen --instr 1e19 says the bound" 2 "--instr: want a number >= 0, got '1e19' (at most 1e18)" \
	lg "${shape[@]}" --instr 1e19
t "loadgen --scale 0 refused" 2 "--scale: want wall seconds per model second, a number > 0, got '0'" \
	lg "${shape[@]}" --scale 0
t "loadgen --seed 1.5 refused" 2 "--seed: want an integer 0..18446744073709551615, got '1.5'" \
	lg "${shape[@]}" --seed 1.5
t "loadgen --seed -1 refused" 2 "--seed: want an integer" lg "${shape[@]}" --seed -1
t "loadgen --seed 2^64 refused" 2 "--seed: want an integer" lg "${shape[@]}" --seed 18446744073709551616
t "loadgen --seed 2^64-1 taken" 1 "SUMMARY sent=1 " lg "${shape[@]}" --tasks 1 --seed 18446744073709551615
t "loadgen --expect-status 1=0x refused" 2 "--expect-status: want CMD=STATUS" \
	lg "${shape[@]}" --expect-status 1=0x
t "loadgen --expect-status CMD overflow refused" 2 "--expect-status: want CMD=STATUS" \
	lg "${shape[@]}" --expect-status 4294967297=0
t "loadgen --expect-status STATUS overflow refused" 2 "--expect-status: want CMD=STATUS" \
	lg "${shape[@]}" --expect-status 1=99999999999
t "loadgen --expect-status 1=-3 taken" 1 "SUMMARY sent=1 " lg "${shape[@]}" --tasks 1 --expect-status 1=-3
t "loadgen names an unexpected argument" 2 "unexpected argument 'extra'" lg "${shape[@]}" extra

# --replay: every field checked, FILE:LINE, exit 2, nothing sent
printf 'abc zz 1e6x foo 2junk 70000 a\n' >"$TMP/garbage.txt"
t "replay: garbage line refused at FILE:LINE" 2 "garbage.txt:1: t_s: want wall seconds" \
	lg --replay "$TMP/garbage.txt" --timeout 0.05
replay_bad() { # name, second line, expected message
	printf '# ok first\n0 1 1e6 0 1\n%s\n' "$2" >"$TMP/r.txt"
	t "replay: $1" 2 "r.txt:3: $3" lg --replay "$TMP/r.txt" --timeout 0.05
}
replay_bad "t_s nan refused (used to hang)" 'nan 1 1e6 0 1' "t_s: want wall seconds from the start, 0..1e6, got 'nan'"
replay_bad "t_s inf refused" 'inf 1 1e6 0 1' "t_s: want wall seconds from the start, 0..1e6, got 'inf'"
replay_bad "t_s negative refused" '-1 1 1e6 0 1' "t_s: want wall seconds from the start, 0..1e6, got '-1'"
replay_bad "t_s 1e300 refused" '1e300 1 1e6 0 1' "t_s: want wall seconds from the start, 0..1e6, got '1e300'"
replay_bad "need zz refused" '0 zz 1e6 0 1' "need: want a resource bit vector in hex, 1..16 digits, got 'zz'"
replay_bad "need of 17 digits refused" '0 10000000000000000 1e6 0 1' "need: want a resource bit vector in hex"
replay_bad "instr 1e6x refused" '0 1 1e6x 0 1' "instr: want instructions, a number 0..1e18, got '1e6x'"
replay_bad "data foo refused" '0 1 1e6 foo 1' "data: want bits, a number 0..1e18, got 'foo'"
replay_bad "split 2junk refused" '0 1 1e6 0 2junk' "split: want sub-tasks L, an integer 1..64, got '2junk'"
replay_bad "split 70000 refused, not truncated" '0 1 1e6 0 70000' "split: want sub-tasks L, an integer 1..64, got '70000'"
replay_bad "cmd 70000 refused, not truncated" '0 1 1e6 0 1 70000' "cmd: want a command id, an integer 0..65535, got '70000'"
replay_bad "cmd x refused" '0 1 1e6 0 1 x' "cmd: want a command id, an integer 0..65535, got 'x'"
replay_bad "arguments over 64 bytes refused" "0 1 1e6 0 1 1 $(printf 'a %.0s' {1..40})" "arguments longer than 64 bytes"
replay_bad "a line over 1023 bytes refused" "0 1 1e6 0 1 1 $(printf 'x%.0s' {1..1100})" "line longer than 1023 bytes"
printf '0 1 1e6 0 1\n\0 1 1 1 1\n' >"$TMP/nul.txt"
t "replay: a NUL byte refused" 2 "nul.txt:2: line holds a NUL byte" lg --replay "$TMP/nul.txt" --timeout 0.05
printf '# nothing\n\n' >"$TMP/empty.txt"
t "replay: a file without tasks refused" 2 "--replay $TMP/empty.txt: no task lines" \
	lg --replay "$TMP/empty.txt" --timeout 0.05
t "replay: a missing file names the error" 2 "--replay $TMP/none.txt: No such file or directory" \
	lg --replay "$TMP/none.txt" --timeout 0.05
printf '0 1 1e6 0 1\r\n0.001 0x3 1e6 0 2 7 a b\n# c\n0.002 ff 2.5e6 8 64' >"$TMP/ok.txt"
t "replay: a good file (CRLF, 0x, comment, no final newline) sends every line" 1 "SUMMARY sent=3 " \
	lg --replay "$TMP/ok.txt" --timeout 0.05 --csv "$TMP/ok.csv"
t "replay: CSV rows carry the file's need and cmd" 0 "1,3,7," cat "$TMP/ok.csv"

# --csv: a path that cannot be created is refused before the run
t "loadgen --csv in a missing directory refused" 2 "--csv $TMP/no/dir/x.csv: No such file or directory" \
	lg "${shape[@]}" --tasks 1 --csv "$TMP/no/dir/x.csv"
t "loadgen help gives the --csv exit status" 0 "or a --csv FILE that cannot be" "$LG" --help

# key files: a FIFO is refused at once (it used to block in open()), a symbolic link is refused
# by name, a directory is not a regular file
head -c 32 /dev/urandom >"$TMP/site.key"
chmod 600 "$TMP/site.key"
mkfifo "$TMP/fifo.key"
chmod 600 "$TMP/fifo.key"
ln -s site.key "$TMP/link.key"
mkdir -m 700 "$TMP/dir.key"
t "key: a FIFO site key refused, no hang" 2 "key file $TMP/fifo.key: is a FIFO, not a regular file" \
	timeout 20 "$KEY" --key "$TMP/fifo.key" --principal a --out "$TMP/a.key"
t "key: loadgen refuses a FIFO key too" 2 "key file $TMP/fifo.key: is a FIFO, not a regular file" \
	lg "${shape[@]}" --key "$TMP/fifo.key"
t "key: a symbolic link refused by name" 2 "key file $TMP/link.key: is a symbolic link; give the key file itself" \
	timeout 20 "$KEY" --key "$TMP/link.key" --principal a --out "$TMP/a.key"
t "key: a directory refused" 2 "key file $TMP/dir.key: is a directory, not a regular file" \
	timeout 20 "$KEY" --key "$TMP/dir.key" --principal a --out "$TMP/a.key"
t "key: a regular owner-only key works" 0 "key of principal a" \
	timeout 20 "$KEY" --key "$TMP/site.key" --principal a --out "$TMP/a.key"
t "key: the derived key file loads in loadgen" 1 "SUMMARY sent=1 " \
	lg "${shape[@]}" --tasks 1 --key "$TMP/a.key" --principal a

# nlevel-key: an extra argument is named, not reported as a missing option
t "key: an extra argument named" 2 "nlevel-key: unexpected argument 'extra'" \
	"$KEY" --key "$TMP/site.key" --principal b --out "$TMP/b.key" extra
t "key: a missing option still reported" 2 "--key, --principal and --out are required" \
	"$KEY" --key "$TMP/site.key" --principal b
nl_tap_done
