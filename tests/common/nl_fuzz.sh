# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the libFuzzer scripts (tests/classad/fuzz.sh, tests/batch/fuzz.sh): build a fuzz
# target with clang and run it as one TAP test. A TAP skip (status 0) when clang or its
# libFuzzer runtime (libclang-rt-14-dev) is missing; meson counts 77 under TAP as an error.

# nl_fuzz_build BIN SOURCES-AND-FLAGS...: compile BIN with -fsanitize=fuzzer,address,undefined
# (log beside it in BIN.build.log). Prints the TAP plan; exits the script on a skip or failure.
nl_fuzz_build() {
	local bin=$1 cc
	shift
	echo "1..1"
	cc=$(command -v clang || command -v clang-14 || true)
	if [ -z "$cc" ]; then
		echo "ok 1 # SKIP clang not installed"
		exit 0
	fi
	mkdir -p "$(dirname "$bin")"
	if ! "$cc" -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined "$@" -o "$bin" 2>"$bin.build.log"; then
		if grep -q -i "fuzzer" "$bin.build.log" && ! grep -q "error:" "$bin.build.log"; then
			echo "ok 1 # SKIP clang's libFuzzer runtime missing (libclang-rt-14-dev)"
			exit 0
		fi
		sed 's/^/# /' "$bin.build.log" | tail -n 30
		echo "not ok 1 - fuzz target builds"
		exit 1
	fi
}

# nl_fuzz_run WHAT BIN OUT CORPUS RUNS SECS [LIBFUZZER-OPTIONS...]: run BIN in OUT over the
# folder CORPUS (a scratch copy: new inputs never land in the tree) for RUNS inputs (-1: no
# limit) or SECS seconds; crash-* files land in OUT, the log in OUT/fuzz.log. Prints the TAP
# result for WHAT and exits with it.
nl_fuzz_run() {
	local what=$1 bin=$2 out=$3 corpus=$4 runs=$5 secs=$6 start left t
	shift 6
	echo "# fuzz: runs=$runs max_total_time=${secs}s corpus=$(ls "$corpus" | wc -l) seeds" >&2
	start=$SECONDS
	left=$secs
	while :; do
		if (cd "$out" && "$bin" -runs="$runs" -max_total_time="$left" -timeout=10 \
			-rss_limit_mb=2048 -print_final_stats=1 "$@" "$corpus") >"$out/fuzz.log" 2>&1; then
			grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' \
				"$out/fuzz.log" | sed 's/^/# /'
			echo "ok 1 - fuzz $what (${secs}s max): no crash, hang, leak or broken check"
			exit 0
		fi
		# libFuzzer's -timeout is wall-clock: on a host whose cores are busy with other work a
		# unit of 0.1 s CPU has been seen to take 11 s. A timeout is a hang only if the unit
		# alone, bounded by 10 s of CPU time (ulimit -t, not the wall clock), does not end;
		# otherwise the run goes on from the grown corpus for the time left.
		t=$(ls -t "$out"/timeout-* 2>/dev/null | head -n 1)
		[ -n "$t" ] && grep -q 'libFuzzer: timeout' "$out/fuzz.log" || break
		(ulimit -t 10; "$bin" -runs=1 "$t") >"$out/timeout-rerun.log" 2>&1 || break
		echo "# $(basename "$t"): a wall-clock timeout under load; alone it ends (see" \
			"$out/timeout-rerun.log); fuzzing goes on" >&2
		rm -f "$t"
		left=$((secs - (SECONDS - start)))
		[ "$runs" = -1 ] && [ "$left" -le 5 ] && {
			echo "ok 1 - fuzz $what (${secs}s max): no crash, hang, leak or broken check"
			exit 0
		}
		[ "$runs" != -1 ] && [ "$left" -le 5 ] && left=5
	done
	tail -n 40 "$out/fuzz.log" | sed 's/^/# /'
	echo "not ok 1 - fuzz $what (see $out/fuzz.log; crash-* or timeout-* file in $out)"
	exit 1
}
