#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Native-mode capacity of the live appliance (docs/benchmarks-live.md): for N = 4 and N = 8,
# NLSC and 2LSC, the saturated dispatch rate with in-process instant machines, then the mean
# and p99 dispatch latency (ingress to sub-task assignment) at half that rate. Every run also
# prints the cost of a bare SP/SC rte_ring hop measured in the same process (ring_hop_ns).
# Usage: dataplane/bench_live.sh BUILD_DIR [SECONDS]   (from the repository root)
set -eu
B=${1:?build dir}
S=${2:-3}
APP=$B/dataplane/nlevel
EAL=(--no-huge --no-pci --no-shconf -l 0-1 --log-level=lib.*:error)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp config/paper-96.ini "$tmp/n4.ini"
sed -e 's/^resources = 4 .*/resources = 8/' -e 's/^machines = 96 .*/machines = 512/' \
	config/paper-96.ini >"$tmp/n8.ini"
for n in 4 8; do
	for s in nlsc 2lsc; do
		cap=$("$APP" "${EAL[@]}" -- --config "$tmp/n$n.ini" --scheme "$s" --native "$S" |
			grep '^SUMMARY')
		echo "$cap"
		rate=$(echo "$cap" | tr ' ' '\n' | sed -n 's/^rate_tps=//p')
		half=$(python3 -c "print(int($rate / 2))")
		"$APP" "${EAL[@]}" -- --config "$tmp/n$n.ini" --scheme "$s" --native "$S" \
			--rate "$half" | grep '^SUMMARY'
	done
done
