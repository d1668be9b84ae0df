#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job: install, build (release), reproduce seed 002 Fig. 4-6 on config/paper-96.ini
# with the simulator, then run the live appliance in emulated mode on the same
# configuration (DPDK with --no-huge --no-pci, machines emulated in-process) and print
# live beside simulated mean response. Output in results/paper-96/ (curves.csv, fig4-6.png,
# live/live.csv, live-vs-sim.csv); the simulator's SUMMARY line on stdout.
# NL_NO_LIVE=1 skips the live run.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
B=${NL_BUILD:-build}
t0=$SECONDS
[ -f "$B/build.ninja" ] || meson setup "$B" --buildtype=release >/dev/null
echo "nl-main: building $B (ninja's [done/total] progress below)..." >&2
ninja -C "$B" >&2
echo "nl-main: built in $((SECONDS - t0)) s; simulating Fig. 4-6 (one line per curve)..." >&2
out=${NL_OUT:-results/paper-96}
mkdir -p "$out"
t0=$SECONDS
"$B/sim/nlevel-sim" --config config/paper-96.ini --out "$out"
echo "nl-main: simulated in $((SECONDS - t0)) s" >&2
echo "nl-main: curves in $out/curves.csv, plots $out/fig4.png $out/fig5.png $out/fig6.png" >&2
if [ "${NL_NO_LIVE:-0}" = 1 ] || [ ! -x "$B/dataplane/nlevel" ]; then
	exit 0
fi
echo "nl-main: live appliance, emulated mode (one line per curve)..." >&2
t0=$SECONDS
"$B/dataplane/nlevel" --no-huge --no-pci --no-shconf -l 0-1 --log-level=user.*:warning -- \
	--config config/paper-96.ini --emulate --curve "$out/live" 2>&1 | tee "$out/live.log" |
	awk '/^nlevel: .* load / { c = $2 " " $3 " " $4; if (c != last) { print "nl-main: live curve " c; last = c } }' >&2 ||
	{ echo "nl-main: live run failed, see $out/live.log" >&2; exit 1; }
echo "nl-main: live run in $((SECONDS - t0)) s" >&2
python3 - "$out/curves.csv" "$out/live/live.csv" "$out/live-vs-sim.csv" <<'PY'
import csv, sys
def load(p):
    d = {}
    for r in csv.DictReader(open(p)):
        k = (r['scheme'], r['groups'], r['static_known'], float(r['load_pct']))
        mean = None if r['saturated'] == '1' or not r['resp_mean_vt'] else float(r['resp_mean_vt'])
        d[k] = (mean, float(r['global_util'] or 0))
    return d
sim, live = load(sys.argv[1]), load(sys.argv[2])
# A point is "at saturation" when the simulated 2LSC global scheduler is >= 90 % busy, or the
# next load of the same curve is saturated in the simulator: there the mean is dominated by
# queueing variance, and live and simulated runs of different lengths differ by tens of %.
def at_saturation(k):
    if k[0] == '2lsc' and sim[k][1] >= 0.9:
        return True
    nxt = sorted(l for (s, g, st, l) in sim if (s, g, st) == k[:3] and l > k[3])
    return bool(nxt) and sim[k[:3] + (nxt[0],)][0] is None
marked = False
with open(sys.argv[3], 'w') as f:
    f.write("scheme,groups,static_known,load_pct,sim_resp_mean_vt,live_resp_mean_vt,diff_pct,at_saturation\n")
    print("live vs simulated mean response [u.t.] (emulated mode, same model):")
    print(f"{'curve':<18}{'load %':>7}{'simulated':>11}{'live':>11}{'diff':>8}")
    for k in sorted(live, key=lambda k: (k[0] != 'nlsc', k[1], k[2], k[3])):
        if k not in sim: continue
        s, l = sim[k][0], live[k][0]
        sat = s is not None and l is not None and at_saturation(k)
        name = (k[0].upper() + (f" G={k[1]}" if k[0] == '2lsc' else "") +
                (f" static k={k[2]}" if k[2] != '0' else ""))
        fmt = lambda x: "saturated" if x is None else f"{x:.1f}"
        d = "" if s is None or l is None else f"{(l - s) / s * 100:+.1f}%"
        f.write(f"{k[0]},{k[1]},{k[2]},{k[3]:g},{'' if s is None else s},{'' if l is None else l},{d.rstrip('%')},{int(sat)}\n")
        if k[3] in (5, 15, 30, 60):
            note = ""
            if sat:
                note = f"  * at saturation (global scheduler {sim[k][1]:.0%} busy)" if k[0] == '2lsc' else "  * at saturation"
                marked = True
            print(f"{name:<18}{k[3]:>7g}{fmt(s):>11}{fmt(l):>11}{d:>8}{note}")
    if marked:
        print("* at or just below saturation the mean is dominated by queueing variance: the live run\n"
              "  (1e5 u.t., one seed) and the simulator (1e6 u.t., several seeds) differ by tens of %\n"
              "  there without either being wrong (docs/results.md \"live appliance\")")
PY
echo "nl-main: live curve in $out/live/live.csv, comparison in $out/live-vs-sim.csv" >&2
