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
# once fixed). NL_TEST_SEED sets libFuzzer's seed (default 1).
set -u
src=$1
out=$2
runs=${3:-20000}
secs=${4:-20}
. "$src/tests/common/nl_fuzz.sh"
pcre_cflags=$(pkg-config --cflags libpcre2-8 2>/dev/null)
pcre_libs=$(pkg-config --libs libpcre2-8 2>/dev/null || echo -lpcre2-8)
# the reader, the engine and what the engine links: its event queue and the PluS manager of
# advance reservations (nl_batch_run_rsv(), not called here) with the ClassAd language
# shellcheck disable=SC2086
nl_fuzz_build "$out/fuzz_swf" -I"$src" -I"$src/sim/batch" -I"$src/managers" \
	-I"$src/managers/classad" -I"$src/tests/batch" -I"$src/tests/common" $pcre_cflags \
	"$src"/tests/batch/fuzz_swf.c "$src"/sim/batch/nl_swf.c "$src"/sim/batch/nl_batch.c \
	"$src"/managers/nl_evq.c "$src"/managers/classad/nl_cad_*.c "$src"/managers/classad/nl_plus.c \
	$pcre_libs -lz -lm
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp "$src"/tests/batch/fuzz-corpus/* "$corpus"/
nl_fuzz_run "SWF reader, round trip and batch engine" "$out/fuzz_swf" "$out" "$corpus" "$runs" \
	"$secs" -seed="${NL_TEST_SEED:-1}" -max_len=4096
