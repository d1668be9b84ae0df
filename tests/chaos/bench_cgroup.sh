#!/bin/bash
# tests/chaos/bench_cgroup.sh (issue #33, docs/benchmarks.md): farm throughput of `true` through one
# worker (4 machines) with cgroups (--cgroup v1) and without (--cgroup off), and a fork/exec bound
# in the same run. As root, from the source tree: NL_TEST_BUILD=build-x bash tests/chaos/bench_cgroup.sh
# farm throughput of `true`, cgroups vs --cgroup off, and a fork/exec bound, same run
set -u
B=${NL_TEST_BUILD:-build}
export NL_SRC_ROOT=${NL_SRC_ROOT:-$(pwd)}
. "$NL_SRC_ROOT/tests/chaos/chaos_lib.sh"
chaos_init bn $B/dataplane/nlevel $B/tools/worker/nlevel-worker $B/tools/submit/nlevel-submit
chaos_commands 1 <<X
command true = /bin/true
X
cp $CT/w1.conf $CT/w2.conf; sed -i "s#out1#out2#" $CT/w2.conf; mkdir -p -m 755 $CT/out2
chaos_start_app
for mode in v1 off; do
  chaos_start_worker 1 --cgroup $mode --quiet
  chaos_wait_joined 1 1; sleep 2
  t0=$(date +%s.%N)
  chaos_sub --wait --quiet --window 64 --array 1-3000 true > $CT/s.$mode 2>&1
  t1=$(date +%s.%N)
  echo "mode $mode: $(grep SUMMARY $CT/s.$mode)"
  kill ${CW_PID[1]}; wait ${CW_PID[1]} 2>/dev/null; sleep 4
done
t0=$(date +%s.%N)
for i in $(seq 3000); do /bin/true; done
t1=$(date +%s.%N)
echo "fork/exec bound (bash loop, 1 core): $(python3 -c "print(round(3000/($t1-$t0)))") /s"
t0=$(date +%s.%N)
(for i in $(seq 1500); do /bin/true; done) &
p1=$!
(for i in $(seq 1500); do /bin/true; done) &
wait "$p1" $! # not a bare wait: the appliance runs in the background until the end
t1=$(date +%s.%N)
echo "fork/exec bound (2 bash loops): $(python3 -c "print(round(3000/($t1-$t0)))") /s"
