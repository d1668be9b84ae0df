#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer target for nl_classad with clang (when clang and its libFuzzer runtime,
# libclang-rt-14-dev, are installed; otherwise a TAP skip with status 0) and run it briefly over the
# seed 004 policies as a corpus. Usage: fuzz.sh SRC_ROOT OUT_DIR [RUNS] [SECONDS]
set -u
src=$1
out=$2
runs=${3:-20000}
secs=${4:-20}
echo "1..1"
cc=$(command -v clang || command -v clang-14 || true)
if [ -z "$cc" ]; then
	echo "ok 1 # SKIP clang not installed"
	exit 0 # TAP skip: status 0 (meson counts 77 under TAP as an error)
fi
mkdir -p "$out"
bin=$out/fuzz_classad
if ! "$cc" -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$src" -I"$src/managers/classad" \
	"$src"/tests/classad/fuzz_classad.c "$src"/managers/classad/nl_cad_*.c \
	-lm -o "$bin" 2>"$out/fuzz_build.log"; then
	if grep -q -i "fuzzer" "$out/fuzz_build.log"; then
		echo "ok 1 # SKIP clang's libFuzzer runtime missing (libclang-rt-14-dev)"
		exit 0
	fi
	cat "$out/fuzz_build.log" | sed 's/^/# /'
	echo "not ok 1 - fuzz target builds"
	exit 1
fi
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp "$src"/config/policies/*.cad "$corpus"/
cd "$out" || exit 1
if "$bin" -runs="$runs" -max_total_time="$secs" -max_len=4096 -timeout=5 -rss_limit_mb=1024 \
	-print_final_stats=1 "$corpus" >"$out/fuzz.log" 2>&1; then
	tail -n 12 "$out/fuzz.log" | sed 's/^/# /'
	echo "ok 1 - fuzz parser+evaluator: no crash, hang or leak"
	exit 0
fi
tail -n 40 "$out/fuzz.log" | sed 's/^/# /'
echo "not ok 1 - fuzz parser+evaluator (see $out/fuzz.log; crash-* file in $out)"
exit 1
