#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer target of the SWF reader and the batch engine (fuzz_swf.c) with clang and
# run it over the seed corpus kept in the tree (tests/batch/fuzz-corpus/: hand-made traces with
# header continuations, CR-LF and tabs, checkpoint and cancelled records, over-wide jobs and
# overruns). A TAP skip (status 0) when clang or its libFuzzer runtime (libclang-rt-14-dev) is
# missing.
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
bin=$out/fuzz_swf
pcre_cflags=$(pkg-config --cflags libpcre2-8 2>/dev/null)
pcre_libs=$(pkg-config --libs libpcre2-8 2>/dev/null || echo -lpcre2-8)
# the reader, the engine and what the engine links: its event queue and the PluS manager
# of advance reservations (nl_batch_run_rsv(), not called here) with the ClassAd language
# shellcheck disable=SC2086
if ! "$cc" -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$src" -I"$src/bench/batch" -I"$src/managers" \
	-I"$src/managers/classad" -I"$src/tests/batch" -I"$src/tests/common" $pcre_cflags \
	"$src"/tests/batch/fuzz_swf.c "$src"/bench/batch/nl_swf.c "$src"/bench/batch/nl_batch.c \
	"$src"/managers/nl_evq.c "$src"/managers/classad/nl_cad_*.c "$src"/managers/classad/nl_plus.c \
	$pcre_libs -lz -lm -o "$bin" 2>"$out/fuzz_build.log"; then
	if grep -q -i "fuzzer" "$out/fuzz_build.log" && ! grep -q "error:" "$out/fuzz_build.log"; then
		echo "ok 1 # SKIP clang's libFuzzer runtime missing (libclang-rt-14-dev)"
		exit 0
	fi
	sed 's/^/# /' "$out/fuzz_build.log" | tail -n 30
	echo "not ok 1 - fuzz target builds"
	exit 1
fi
# the run's working corpus: the seeds in the tree plus what libFuzzer finds
mkdir -p "$out/corpus"
cp "$src"/tests/batch/fuzz-corpus/* "$out/corpus/"
seed=${NL_TEST_SEED:-1}
(cd "$out" && "$bin" -seed="$seed" -runs="$runs" -max_total_time="$secs" -max_len=4096 \
	-timeout=10 "$out/corpus") >"$out/fuzz.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	tail -n 40 "$out/fuzz.log" | sed 's/^/# /'
	echo "not ok 1 - fuzz_swf: no crash, no invariant broken (seed $seed; input in $out/crash-*)"
	exit 1
fi
echo "ok 1 - fuzz_swf: no crash, no invariant broken # $(grep -m1 -o 'Done [0-9]* runs in [0-9]* second' "$out/fuzz.log")"
