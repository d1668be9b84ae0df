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
. "$src/tests/common/nl_fuzz.sh"
pcre_cflags=$(pkg-config --cflags libpcre2-8 2>/dev/null)
pcre_libs=$(pkg-config --libs libpcre2-8 2>/dev/null || echo -lpcre2-8)
# shellcheck disable=SC2086
nl_fuzz_build "$out/fuzz_classad" -I"$src" -I"$src/managers/classad" $pcre_cflags \
	"$src"/tests/classad/fuzz_classad.c "$src"/managers/classad/nl_cad_*.c $pcre_libs -lm
# the run's working corpus: the seeds in the tree plus the policies
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp "$src"/tests/classad/fuzz-corpus/* "$src"/config/policies/*.cad "$corpus"/
nl_fuzz_run "parser+evaluator" "$out/fuzz_classad" "$out" "$corpus" "$runs" "$secs" \
	-max_len=8192 -dict="$src/tests/classad/fuzz.dict" -use_value_profile=1
