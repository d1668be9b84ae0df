#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job: install, build (release), reproduce seed 002 Fig. 4-6 on config/paper-96.ini.
# Output in results/paper-96/ (curves.csv, fig4.png, fig5.png, fig6.png); SUMMARY on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
B=${NL_BUILD:-build}
[ -f "$B/build.ninja" ] || meson setup "$B" --buildtype=release >/dev/null
ninja -C "$B" >/dev/null
out=${NL_OUT:-results/paper-96}
mkdir -p "$out"
"$B/bench/nlevel-sim" --config config/paper-96.ini --out "$out"
echo "nl-main: curves in $out/curves.csv, plots $out/fig4.png $out/fig5.png $out/fig6.png" >&2
