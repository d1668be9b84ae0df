#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""benchtab on a recorded nlevel-bench JSON run (TAP).

Usage: test_benchtab.py BENCHTAB.py RECORDED.json RECORDED-REPETITIONS.json
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile


def run(tool, *args):
    p = subprocess.run([sys.executable, tool, *args], capture_output=True, text=True, timeout=20)
    return p.returncode, p.stdout, p.stderr


def rows_of(md):
    """benchmark name -> list of cells of its table row."""
    rows = {}
    for line in md.splitlines():
        if line.startswith('| BM_'):
            cells = [c.strip() for c in line.strip('|').split('|')]
            rows[cells[0]] = cells
    return rows


def main():
    tool, rec = sys.argv[1], sys.argv[2]
    spec = importlib.util.spec_from_file_location('benchtab', tool)
    tab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tab)
    run_json = json.load(open(rec))
    bs = [b for b in run_json['benchmarks'] if b.get('run_type', 'iteration') == 'iteration']
    base = next(b for b in bs if b['name'].startswith('BM_base_ring_2lcore'))
    base_ns = 1e9 / base['items_per_second']
    tests = []

    rc, out, err = run(tool, rec)
    rows = rows_of(out)
    tests.append(('exits_0_on_a_recorded_run', rc == 0, err))
    tests.append(('one_row_per_benchmark_of_the_run',
                  sorted(rows) == sorted(b['name'] for b in bs),
                  f'{sorted(rows)} vs {sorted(b["name"] for b in bs)}'))
    tests.append(('header_carries_the_recorded_command_line',
                  f"Command: `{run_json['context']['command']}`" in out, out[:300]))
    tests.append(('baseline_row_has_ratio_1', rows.get(base['name'], [''] * 6)[5] == '1.00',
                  rows.get(base['name'])))
    # Every ratio is that row's time per item over the baseline's, to 2 decimals.
    wrong = []
    for b in bs:
        if b.get('error_occurred') or b['name'] not in rows:
            continue
        want = f"{(1e9 / b['items_per_second']) / base_ns:.2f}"
        if rows[b['name']][5] != want:
            wrong.append(f"{b['name']}: {rows[b['name']][5]} != {want}")
    tests.append(('ratio_is_time_per_item_over_baseline', not wrong, '\n'.join(wrong)))
    # real/iter is the wall-clock time of one iteration, the figure per-step targets use.
    wrong = [b['name'] for b in bs if not b.get('error_occurred') and b['name'] in rows and
             rows[b['name']][2] != tab.fmt_ns(b['real_time'] * tab.SCALE_NS[b['time_unit']])]
    tests.append(('real_per_iter_column_is_the_real_time', not wrong, ' '.join(wrong)))
    # Targets: met/no follows the recorded figures.
    tr = [b for b in bs if b['name'].startswith('BM_tree_route/')]
    wrong = []
    for b in tr:
        want = 'yes' if b['real_time'] <= 5.0 else '**no**'
        if rows[b['name']][7] != want:
            wrong.append(b['name'])
    tests.append(('tree_route_target_marked_by_its_figure', tr and not wrong, ' '.join(wrong)))
    pk = [b for b in bs if b['name'] == 'BM_grp_pick/m:64/L:4']
    tests.append(('pick_target_marked_by_its_figure', len(pk) == 1 and rows[pk[0]['name']][7] ==
                  ('yes' if 1e9 / pk[0]['items_per_second'] <= 100 else '**no**'), pk))
    dp = [b for b in bs if b['name'].startswith('BM_dispatch_path/')]
    tests.append(('dispatch_target_uses_ratio_to_bare', dp and all(
        rows[b['name']][7] == ('yes' if b['ratio_to_bare'] <= 3 else '**no**') for b in dp), ''))

    rc, out, err = run(tool, rec, '--baseline', 'BM_no_such')
    tests.append(('missing_baseline_exits_2', rc == 2 and 'BM_no_such' in err, (rc, err)))

    rc, out, err = run(tool, rec, '--filter', '^BM_tree_route/')
    r2 = rows_of(out)
    tests.append(('filter_keeps_only_matching_rows',
                  rc == 0 and r2 and all(n.startswith('BM_tree_route/') for n in r2), out))

    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, 'bad.json')
        with open(bad, 'w') as f:
            f.write('{"benchmarks": [')
        rc, out, err = run(tool, bad)
        tests.append(('truncated_json_exits_2', rc == 2, (rc, err)))
        o = os.path.join(d, 'out.md')
        rc, _, _ = run(tool, rec, '-o', o)
        txt = open(o).read() if os.path.exists(o) else ''
        tests.append(('writes_the_table_to_a_file',
                      rc == 0 and re.search(r'^\| benchmark \|', txt, re.M) is not None, txt[:200]))

    # A run with --benchmark_repetitions: one row per benchmark, its median.
    reps = sys.argv[3]
    rj = json.load(open(reps))
    med = {b['run_name']: b for b in rj['benchmarks'] if b.get('aggregate_name') == 'median'}
    rc, out, err = run(tool, reps)
    r3 = rows_of(out)
    tests.append(('repetitions_give_one_row_per_benchmark', rc == 0 and sorted(r3) == sorted(med),
                  f'{sorted(r3)} vs {sorted(med)}'))
    wrong = [n for n, b in med.items() if n in r3 and
             r3[n][1] != tab.fmt_ns(1e9 / b['items_per_second'])]
    tests.append(('repetition_rows_show_the_median', not wrong and 'median of 3' in out,
                  ' '.join(wrong) or out[:300]))

    print(f'1..{len(tests)}')
    good = True
    for i, (name, ok, why) in enumerate(tests, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok:
            good = False
            for line in str(why).splitlines()[-15:]:
                print(f'# {line}')
    return 0 if good else 1


if __name__ == '__main__':
    sys.exit(main())
