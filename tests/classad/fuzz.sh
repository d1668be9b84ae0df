#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer target for nl_classad with clang (when clang and its libFuzzer runtime,
# libclang-rt-14-dev, are installed; otherwise a TAP skip with status 0) and run it over the
# seed corpus kept in the tree (tests/classad/fuzz-corpus/: hand-made seeds, including the
# 65-clause && chain of issue #17) plus the seed 004 policies, with the token dictionary
# tests/classad/fuzz.dict.
# Usage: fuzz.sh SRC_ROOT OUT_DIR [RUNS] [SECONDS]
#   RUNS = -1: no run limit, the run lasts SECONDS (the `stress` suite's long run).
# Progress goes to OUT_DIR/fuzz.log; a crash leaves crash-* in OUT_DIR (add it to the corpus
# once fixed).
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
pcre_cflags=$(pkg-config --cflags libpcre2-8 2>/dev/null)
pcre_libs=$(pkg-config --libs libpcre2-8 2>/dev/null || echo -lpcre2-8)
# shellcheck disable=SC2086
if ! "$cc" -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$src" -I"$src/managers/classad" $pcre_cflags \
	"$src"/tests/classad/fuzz_classad.c "$src"/managers/classad/nl_cad_*.c \
	$pcre_libs -lm -o "$bin" 2>"$out/fuzz_build.log"; then
	if grep -q -i "fuzzer" "$out/fuzz_build.log"; then
		echo "ok 1 # SKIP clang's libFuzzer runtime missing (libclang-rt-14-dev)"
		exit 0
	fi
	sed 's/^/# /' "$out/fuzz_build.log"
	echo "not ok 1 - fuzz target builds"
	exit 1
fi
# the run's working corpus: the seeds in the tree plus the policies; new inputs libFuzzer finds
# stay in the scratch copy (the tree is never written by a test)
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp "$src"/tests/classad/fuzz-corpus/* "$src"/config/policies/*.cad "$corpus"/
cd "$out" || exit 1
echo "# fuzz: runs=$runs max_total_time=${secs}s corpus=$(ls "$corpus" | wc -l) seeds" >&2
if "$bin" -runs="$runs" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
	-dict="$src/tests/classad/fuzz.dict" -use_value_profile=1 -print_final_stats=1 \
	"$corpus" >"$out/fuzz.log" 2>&1; then
	grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added|#[0-9]+ *DONE)' \
		"$out/fuzz.log" | sed 's/^/# /'
	tail -n 4 "$out/fuzz.log" | sed 's/^/# /'
	echo "ok 1 - fuzz parser+evaluator (${secs}s max): no crash, hang or leak"
	exit 0
fi
tail -n 40 "$out/fuzz.log" | sed 's/^/# /'
echo "not ok 1 - fuzz parser+evaluator (see $out/fuzz.log; crash-* file in $out)"
exit 1
