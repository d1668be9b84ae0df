#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Native-mode capacity of the live appliance (docs/benchmarks.md (Live appliance)): for N = 4 and N = 8,
# NLSC and 2LSC, the saturated dispatch rate with in-process instant machines, then the mean
# and p99 dispatch latency (ingress to sub-task assignment) at half that rate. Every run also
# prints the cost of a bare SP/SC rte_ring hop measured in the same process (ring_hop_ns).
# Usage: dataplane/bench_live.sh BUILD_DIR [SECONDS [REPS]]   (from the repository root)
# The capacity is the best of REPS saturated runs (the machine is shared: the best run is the
# one least disturbed); the latency run offers half of it once.
set -eu
B=${1:?build dir}
S=${2:-3}
R=${3:-1}
APP=$B/dataplane/nlevel
EAL=(--no-huge --no-pci --no-shconf -l 0-1 --log-level=lib.*:error)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp config/paper-96.ini "$tmp/n4.ini"
sed -e 's/^resources = 4 .*/resources = 8/' -e 's/^machines = 96 .*/machines = 512/' \
	config/paper-96.ini >"$tmp/n8.ini"
for n in 4 8; do
	for s in nlsc 2lsc; do
		best=0
		for _ in $(seq "$R"); do
			line=$("$APP" "${EAL[@]}" -- --config "$tmp/n$n.ini" --scheme "$s" --native "$S" |
				grep '^SUMMARY')
			echo "$line"
			r=$(echo "$line" | tr ' ' '\n' | sed -n 's/^rate_tps=//p')
			[[ ${r%.*} -gt ${best%.*} ]] && best=$r
		done
		rate=$best
		half=$(python3 -c "print(int($rate / 2))")
		"$APP" "${EAL[@]}" -- --config "$tmp/n$n.ini" --scheme "$s" --native "$S" \
			--rate "$half" | grep '^SUMMARY'
	done
done
