#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer target of the frame parser with clang and run it briefly (TAP).
# Skips (a TAP "1..0 # SKIP" plan, status 0) when clang or libFuzzer (libclang-rt-*-dev) is missing.
set -u
src=${NL_SRC_ROOT:?}
secs=${NL_FUZZ_SECS:-10}
cc=$(command -v clang || true)
[[ -n $cc ]] || { echo "1..0 # SKIP clang not installed"; exit 0; } # TAP skip: status 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the protocol's sources: the frame codec, task-farm and inter-appliance messages
srcs=("$src/dataplane/wire/nl_proto.c" "$src/dataplane/wire/nl_replay.c" "$src/dataplane/wire/nl_proto_farm.c" "$src/dataplane/wire/nl_xa_proto.c")
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
	>"$tmp/probe.c"
if ! "$cc" -fsanitize=fuzzer "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1; then
	echo "1..0 # SKIP clang cannot link -fsanitize=fuzzer (libclang-rt-dev missing?)"
	exit 0 # TAP skip: status 0 (meson counts 77 under TAP as an error)
fi
if ! "$cc" -g -O1 -fsanitize=fuzzer,address,undefined -I"$src/dataplane/wire" \
	"$src/tests/dataplane/fuzz_proto.c" "${srcs[@]}" $(pkg-config --cflags --libs libsodium 2>/dev/null || echo -lsodium) \
	-o "$tmp/fuzz" \
	>"$tmp/cc.log" 2>&1; then
	echo "1..1"
	sed 's/^/# /' "$tmp/cc.log" | tail -n 20
	echo "not ok 1 - the fuzz target builds (libFuzzer links, so this is the target's own error)"
	exit 1
fi
mkdir -p "$tmp/corpus"
# seeds: genuine version-1 and sealed (version-2) frames of every type
if "$cc" -O1 -DNL_FUZZ_SEEDS -I"$src/dataplane/wire" "$src/tests/dataplane/fuzz_proto.c" \
	"${srcs[@]}" $(pkg-config --cflags --libs libsodium 2>/dev/null || echo -lsodium) \
	-o "$tmp/seeds" >>"$tmp/cc.log" 2>&1 && "$tmp/seeds" "$tmp/corpus"; then
	echo "# $(ls "$tmp/corpus" | wc -l) seed frames (versions 1 and 2)"
else
	echo "# no seed frames (seed writer failed); fuzzing from an empty corpus"
fi
seed=${NL_TEST_SEED:-1}
echo "# seed $seed, $secs s"
if "$tmp/fuzz" -seed="$seed" -max_total_time="$secs" -max_len=1500 "$tmp/corpus" \
	>"$tmp/run.log" 2>&1; then
	echo "ok 1 - fuzz_frame_parser_${secs}s_no_crash # $(grep -m1 -o 'Done [0-9]* runs' "$tmp/run.log")"
	echo "1..1"
	exit 0
fi
tail -n 30 "$tmp/run.log" | sed 's/^/# /'
echo "not ok 1 - fuzz_frame_parser_${secs}s_no_crash"
echo "1..1"
exit 1
