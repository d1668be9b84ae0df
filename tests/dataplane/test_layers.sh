#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The dataplane's layers, read from the source (TAP): a file of a layer includes headers of the
# layers below it only (dataplane/README.md: wire/ and engine/ at the bottom, port/ on both,
# xa/ on port/); the two engines (dataplane/engine/, sim/dispatch/) name no policy or scheme
# (the policies reach them as ops tables only); no source file of dataplane/ is over 800 lines.
set -u
src=${NL_SRC_ROOT:?}
cd "$src" || exit 1
declare -A allowed=(
	[wire]="wire"
	[engine]="engine"
	[port]="port engine wire"
	[xa]="xa port engine wire"
	[metrics]="metrics" # a telemetry client: no header of the layers below
)
declare -A layer_of # header name -> its layer
for l in wire engine port xa metrics; do
	for h in dataplane/$l/*.h; do
		layer_of[$(basename "$h")]=$l
	done
done
echo "1..7"
n=0
for l in wire engine port xa metrics; do
	bad=()
	for f in dataplane/$l/*.c dataplane/$l/*.h; do
		while IFS= read -r inc; do
			hl=${layer_of[$inc]:-}
			[[ -z $hl ]] && continue # not a dataplane header (managers/, system)
			[[ " ${allowed[$l]} " == *" $hl "* ]] || bad+=("$f includes $inc ($hl/)")
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	done
	n=$((n + 1))
	if ((${#bad[@]} == 0)); then
		echo "ok $n - test_${l}_includes_only_the_layers_below_it (${allowed[$l]})"
	else
		echo "not ok $n - test_${l}_includes_only_the_layers_below_it"
		printf '# %s\n' "${bad[@]}"
	fi
done
hits=$(grep -nE 'nl_policy_(2lsc|nlsc|static)\b|NL_SCHEME_[A-Z0-9_]+' dataplane/engine/*.[ch] sim/dispatch/*.[ch] |
	grep -v '^\S*:[0-9]*:\s*\(\*\|//\)')
if [[ -z $hits ]]; then
	echo "ok 6 - test_engines_name_no_policy_or_scheme"
else
	echo "not ok 6 - test_engines_name_no_policy_or_scheme"
	sed 's/^/# /' <<<"$hits"
fi
big=$(find dataplane -name '*.c' -exec wc -l {} + | awk '$2 != "total" && $1 > 800 {printf "%s(%d) ", $2, $1}')
if [[ -z $big ]]; then
	echo "ok 7 - test_no_dataplane_file_over_800_lines"
else
	echo "not ok 7 - test_no_dataplane_file_over_800_lines # $big"
fi
