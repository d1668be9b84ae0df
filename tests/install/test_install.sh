#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# meson install, into a temporary folder (TAP; docs/operations.md): every program on PATH
# (PREFIX/bin) and running --help with exit status 0, a man page for each, the example
# configurations under share/nlevel (the installed nlevel-sim runs the installed farm.ini), the
# Grafana dashboard (valid JSON, every metric it plots served by the appliance's renderer), and
# the systemd units verified by `systemd-analyze verify` with their paths pointing into the
# temporary folder (systemd is not PID 1 here); a unit with a relative ExecStart is refused by
# the same check (it can fail).
#   test_install.sh   (NL_BUILD_ROOT, NL_SRC_ROOT from meson)
set -uo pipefail
B=${NL_BUILD_ROOT:?} SRC=${NL_SRC_ROOT:?}
TMP=$(mktemp -d /tmp/nl-install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }

prefix=$(meson introspect "$B" --buildoptions | python3 -c '
import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
meson install -C "$B" --destdir "$TMP" --no-rebuild --quiet >"$TMP/install.log" 2>&1
check "meson install --destdir (prefix $prefix)" test $? == 0 || { tail -n 20 "$TMP/install.log" | sed 's/^/# /'; }
R=$TMP$prefix
progs=(nlevel-sim nlevel-jobmix nlevel-classad nlevel-farm-up nlevel-farm-down)
[[ -x $B/dataplane/nlevel ]] && progs+=(nlevel)
for p in nlevel-worker nlevel-loadgen nlevel-submit nlevel-key; do
	[[ -x $B/tools/${p#nlevel-}/$p ]] && progs+=("$p")
done
[[ -x $B/bench/micro/nlevel-bench ]] && progs+=(nlevel-bench)
for p in "${progs[@]}"; do
	if [[ ! -x $R/bin/$p ]]; then
		nok "$p installed in $prefix/bin"
		continue
	fi
	out=$(ASAN_OPTIONS=detect_leaks=0 PATH=$R/bin:$PATH "$p" --help 2>&1)
	rc=$?
	check "$p installed, --help exits 0 and prints its usage" test $rc == 0 -a -n "$out"
	check "$p: man page $prefix/share/man/man1/$p.1" test -s "$R/share/man/man1/$p.1"
done
check "nlevel-benchtab installed" test -x "$R/bin/nlevel-benchtab"
check "nlevel-benchtab: man page $prefix/share/man/man1/nlevel-benchtab.1" \
	test -s "$R/share/man/man1/nlevel-benchtab.1"
for f in farm.ini paper-96.ini farm-demo.ini hpc2500.ini policies/fig8-running-jobs.cad \
	nlevel.env worker.env grafana/nlevel.json; do
	check "share/nlevel/$f" test -s "$R/share/nlevel/$f"
done
check "docs in share/doc/nlevel" test -s "$R/share/doc/nlevel/operations.md"
ASAN_OPTIONS=detect_leaks=0 "$R/bin/nlevel-sim" --config "$R/share/nlevel/farm.ini" \
	--out "$TMP/sim" --seeds 1 --horizon 2e4 --loads 10 >"$TMP/sim.log" 2>&1
check "the installed nlevel-sim runs the installed farm.ini" test $? == 0 -a -s "$TMP/sim/curves.csv"

# the dashboard: valid JSON, and every nlevel_* metric it plots is one the endpoint serves
if python3 -m json.tool "$R/share/nlevel/grafana/nlevel.json" >/dev/null 2>&1; then
	ok "grafana/nlevel.json is valid JSON"
	missing=()
	for m in $(grep -o 'nlevel_[a-z_]*' "$R/share/nlevel/grafana/nlevel.json" | sort -u); do
		m=${m%_bucket}
		grep -q "\"$m\"" "$SRC/dataplane/metrics/nl_metrics.c" || missing+=("$m")
	done
	check "every metric of the dashboard is rendered by dataplane/metrics${missing:+ (not: ${missing[*]})}" \
		test ${#missing[@]} == 0
	# every query parses as PromQL: as recording rules, checked by promtool
	if command -v promtool >/dev/null; then
		python3 - "$R/share/nlevel/grafana/nlevel.json" >"$TMP/rules.yml" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exprs = [t["expr"].replace('"$job"', '".+"') for p in d["panels"] for t in p.get("targets", [])]
print("groups:\n  - name: nlevel_dashboard\n    rules:")
for i, e in enumerate(exprs):
    print(f"      - record: nlevel_dashboard_q{i}\n        expr: {json.dumps(e)}")
PY
		out=$(promtool check rules "$TMP/rules.yml" 2>&1)
		check "every dashboard query is valid PromQL (promtool check rules)" test $? == 0 ||
			sed 's/^/# /' <<<"$out" | tail -n 5
	else
		ok "dashboard queries # SKIP no promtool (apt-get install prometheus)"
	fi
else
	nok "grafana/nlevel.json is valid JSON"
fi

# systemd units (systemd is not PID 1 here: verify the files, with paths into $TMP)
U=$R/lib/systemd/system
for u in nlevel.service nlevel-worker@.service; do
	check "$u installed in $prefix/lib/systemd/system" test -s "$U/$u"
done
if command -v systemd-analyze >/dev/null && [[ -s $U/nlevel.service ]]; then
	mkdir -p "$TMP/units"
	for u in nlevel.service nlevel-worker@.service; do
		sed "s|$prefix/bin/|$R/bin/|g" "$U/$u" >"$TMP/units/$u"
	done
	cp "$TMP/units/nlevel-worker@.service" "$TMP/units/nlevel-worker@one.service"
	out=$(cd "$TMP/units" && systemd-analyze verify --man=no nlevel.service nlevel-worker@one.service 2>&1)
	check "systemd-analyze verify: nlevel.service, nlevel-worker@one.service${out:+ ($(tr '\n' ' ' <<<"$out"))}" \
		test -z "$out"
	grep -q '^Type=notify' "$U/nlevel.service" && grep -q '^Restart=on-failure' "$U/nlevel.service"
	check "nlevel.service: Type=notify, Restart=on-failure" test $? == 0
	sed 's|^ExecStart=[^ ]*|ExecStart=bin/nlevel|' "$TMP/units/nlevel.service" >"$TMP/units/bad.service"
	(cd "$TMP/units" && systemd-analyze verify --man=no bad.service >/dev/null 2>&1)
	check "systemd-analyze verify refuses a unit with a relative ExecStart (the check can fail)" test $? != 0
else
	ok "systemd-analyze verify # SKIP no systemd-analyze"
fi
echo "1..$n"
[[ $fails == 0 ]]
