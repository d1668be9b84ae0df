#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""benchtab: turn a Google Benchmark JSON run of nlevel-bench into the markdown table of
docs/benchmarks.md.

Every row gives the figure (time per item and items/s, from Google Benchmark's
items_per_second, itself from CPU time unless the benchmark uses real time), the wall-clock
time of one iteration (real/iter: what the per-step targets are checked on, as the acceptance
check does), TSC cycles per item, the ratio to the baseline measured in the same run (default BM_base_ring_2lcore: a bare
SP/SC rte_ring hop between the two lcores), and the issue's target where there is one. A run
with --benchmark_repetitions gives one row per benchmark: the median of its repetitions. The
header carries the command line nlevel-bench recorded in the JSON context, so every figure
comes with the command that produced it.

Usage: benchtab.py RUN.json [--baseline NAME] [--filter REGEX] [-o OUT.md]
Exit status: 0, or 2 on a bad file or a baseline missing from the run.
"""
import argparse
import json
import re
import sys

SCALE_NS = {'ns': 1.0, 'us': 1e3, 'ms': 1e6, 's': 1e9}

# name regex -> (what is compared, limit, label). 'ns' = ns per item <= limit; 'eps' = items/s
# >= limit; a counter name = that counter <= limit.
TARGETS = [
    (r'^BM_tree_route/', 'ns_iter', 5.0, '<= 5 ns/step (real)'),
    (r'^BM_grp_pick/m:64/L:4(/|$)', 'ns', 100.0, '<= 100 ns/pick'),
    (r'^BM_rcu_read(/|$)', 'ns_iter', 2.0, '<= 2 ns/read (real)'),
    (r'^BM_dispatch_path/', 'ratio_to_bare', 3.0, '<= 3x bare hops'),
    (r'^BM_sim_events/', 'eps', 5e6, '>= 5 M events/s'),
]


def fmt_si(x):
    """Compact number with an SI suffix."""
    for div, suf in ((1e9, 'G'), (1e6, 'M'), (1e3, 'k')):
        if abs(x) >= div:
            return f'{x / div:.3g} {suf}'
    return f'{x:.3g}'


def fmt_ns(x):
    if x >= 1e6:
        return f'{x / 1e6:.3g} ms'
    if x >= 1e3:
        return f'{x / 1e3:.3g} us'
    return f'{x:.3g} ns'


def ns_per_item(b):
    """Time per item [ns]; per iteration when the benchmark reports no items."""
    ips = b.get('items_per_second')
    if ips:
        return 1e9 / ips
    return b['real_time'] * SCALE_NS[b.get('time_unit', 'ns')]


def target_of(b):
    """(label, met) for a benchmark row, or None."""
    for rx, what, lim, label in TARGETS:
        if not re.search(rx, b['name']):
            continue
        if what == 'ns':
            v = ns_per_item(b)
            return label, v <= lim
        if what == 'ns_iter':
            v = b['real_time'] * SCALE_NS[b.get('time_unit', 'ns')]
            return label, v <= lim
        if what == 'eps':
            return label, b.get('items_per_second', 0) >= lim
        if what not in b:
            return label, None
        return label, b[what] <= lim
    return None


def table(run, baseline, flt):
    """Markdown lines for a parsed run."""
    ctx = run.get('context', {})
    allb = run.get('benchmarks', [])
    med = [dict(b, name=b.get('run_name', b['name'])) for b in allb
           if b.get('run_type') == 'aggregate' and b.get('aggregate_name') == 'median']
    # With --benchmark_repetitions, one row per benchmark: the median of the repetitions.
    rows = med if med else [b for b in allb if b.get('run_type', 'iteration') != 'aggregate']
    base = [b for b in rows if b['name'].split('/')[0] == baseline and not b.get('error_occurred')]
    if not base:
        raise KeyError(f'baseline {baseline} is not in the run (or it failed)')
    base_ns = ns_per_item(base[0])
    cmd = ctx.get('command', ctx.get('executable', '?'))
    out = [
        f'Command: `{cmd}`  ',
        f"Run: {ctx.get('date', '?')} on {ctx.get('host_name', '?')}, "
        f"{ctx.get('num_cpus', '?')} CPUs at {ctx.get('mhz_per_cpu', '?')} MHz, "
        f"EAL {ctx.get('eal', '?')}, lcores {ctx.get('lcores', '?')}  ",
        f'Baseline: {base[0]["name"]} = {fmt_ns(base_ns)}/item (ratio 1.00)' +
        (f"; every row is the median of {med[0].get('repetitions', '?')} repetitions" if med else ''),
        '',
        '| benchmark | time/item | real/iter | items/s | cyc/item | x baseline | target | met |',
        '|---|---:|---:|---:|---:|---:|---|---|',
    ]
    for b in rows:
        if flt and not re.search(flt, b['name']):
            continue
        if b.get('error_occurred'):
            out.append(f"| {b['name']} | skipped: {b.get('error_message', '')} | | | | | | |")
            continue
        ns = ns_per_item(b)
        cyc = b.get('cyc_per_item')
        tg = target_of(b)
        label, met = tg if tg else ('', None)
        mets = '' if met is None else ('yes' if met else '**no**')
        real = b['real_time'] * SCALE_NS[b.get('time_unit', 'ns')]
        out.append('| {} | {} | {} | {} | {} | {:.2f} | {} | {} |'.format(
            b['name'], fmt_ns(ns), fmt_ns(real), fmt_si(b['items_per_second']) if 'items_per_second' in b else '',
            f'{cyc:.1f}' if cyc is not None else '', ns / base_ns, label, mets))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('run', help='Google Benchmark JSON (--benchmark_out_format=json)')
    ap.add_argument('--baseline', default='BM_base_ring_2lcore',
                    help='benchmark whose time per item is ratio 1 (default %(default)s)')
    ap.add_argument('--filter', default=None, help='only rows whose name matches this regex')
    ap.add_argument('-o', '--out', default='-', help='output file (default stdout)')
    a = ap.parse_args(argv)
    try:
        with open(a.run) as f:
            run = json.load(f)
        lines = table(run, a.baseline, a.filter)
    except (OSError, ValueError, KeyError) as e:
        print(f'benchtab: {a.run}: {e}', file=sys.stderr)
        return 2
    text = '\n'.join(lines) + '\n'
    if a.out == '-':
        sys.stdout.write(text)
    else:
        with open(a.out, 'w') as f:
            f.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
