#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Smoke run of every nlevel-bench benchmark (TAP): each one runs briefly (min time 1 ms), the
JSON lists every benchmark family the harness must have, none reports an error, and each
reports items/s and cyc_per_item. A speed figure is never asserted here (STYLE: speed targets
are benchmark figures, not timed tests).

Usage: smoke_bench.py NLEVEL_BENCH
"""
import json
import os
import subprocess
import sys
import tempfile

FAMILIES = ['BM_tree_route', 'BM_grp_pick', 'BM_2lsc_global', 'BM_2lsc_task', 'BM_rcu_read',
            'BM_sim_events', 'BM_ring_hop', 'BM_dispatch_path', 'BM_base_ring_2lcore',
            'BM_base_pingpong']


def main():
    exe = sys.argv[1]
    tests = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, 'run.json')
        cmd = [exe, '--no-huge', '--no-pci', '--no-shconf', f'--file-prefix=nlbench{os.getpid()}',
               '-l', '0-1', '--log-level=lib.*:error', '--',
               '--benchmark_min_time=0.001', f'--benchmark_out={out}',
               '--benchmark_out_format=json']
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=160)
        tests.append(('nlevel_bench_exits_0', p.returncode == 0, p.stderr[-2000:]))
        try:
            run = json.load(open(out))
        except (OSError, ValueError) as e:
            run = {'benchmarks': []}
            tests.append(('json_output_parses', False, str(e)))
    bs = [b for b in run['benchmarks'] if b.get('run_type', 'iteration') == 'iteration']
    names = {b['name'].split('/')[0] for b in bs}
    families = set(FAMILIES)
    # Optional parts: benchmarks compiled only when their library is in the build.
    for opt in ('BM_load_publish', 'BM_frame_parse'):
        if opt in names:
            families.add(opt)
    for fam in sorted(families):
        tests.append((f'family_{fam}_ran', fam in names, 'missing from the run'))
    bad = [f"{b['name']}: {b.get('error_message')}" for b in bs if b.get('error_occurred')]
    tests.append(('no_benchmark_reports_an_error', not bad, '\n'.join(bad)))
    nocnt = [b['name'] for b in bs if not b.get('error_occurred') and
             ('items_per_second' not in b or 'cyc_per_item' not in b)]
    tests.append(('every_benchmark_reports_items_and_cycles', not nocnt, ' '.join(nocnt)))
    print(f'1..{len(tests)}')
    ok_all = True
    for i, (name, ok, why) in enumerate(tests, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok:
            ok_all = False
            for line in str(why).splitlines()[-20:]:
                print(f'# {line}')
    return 0 if ok_all else 1


if __name__ == '__main__':
    sys.exit(main())
