#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian package (TAP; root): a copy of the source tree built with
# `dpkg-buildpackage -us -uc -b` (a release build of what the package installs: no tests, no
# micro-benchmarks, no -dbgsym package; 90-130 s of CPU, 3½-8 min at load 6-13), then
# installed with dpkg -i: every program in /usr/bin runs --help, the units verify, the man pages
# and share/nlevel are there, the units are neither enabled nor started; removed with dpkg -r
# (no program left) and purged. Suite `slow` (tests/install/meson.build says why it is out of
# the default run):
#   meson test -C BUILD --suite slow      or     tools/nl-test.sh --suite slow
# Skips (a TAP skip plan) without dpkg-buildpackage or debhelper, when not root, or when a
# package named nlevel is installed already (it is not ours to replace).
set -uo pipefail
SRC=${NL_SRC_ROOT:?}
TMP=$(mktemp -d /tmp/nl-deb.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
skip() { echo "1..0 # SKIP $*"; exit 0; } # TAP: a skip plan, status 0
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
[[ $(id -u) == 0 ]] || skip "not root (dpkg -i)"
command -v dpkg-buildpackage >/dev/null && dpkg -s debhelper >/dev/null 2>&1 ||
	skip "no dpkg-buildpackage/debhelper (apt-get install dpkg-dev debhelper)"
dpkg -s nlevel >/dev/null 2>&1 && skip "a package nlevel is installed already"
mkdir -p "$TMP/src"
tar -C "$SRC" --exclude='./build*' --exclude=./results --exclude=./.git -cf - . | tar -C "$TMP/src" -xf -
t0=$(date +%s)
# 2 jobs (the CI machine's cores); no -dbgsym package (its dwz pass is time, not a check)
(cd "$TMP/src" && DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=2" dpkg-buildpackage -us -uc -b) \
	>"$TMP/build.log" 2>&1
rc=$?
check "dpkg-buildpackage -us -uc -b: exit 0 in $(($(date +%s) - t0)) s" test $rc == 0
deb=$(ls "$TMP"/nlevel_*.deb 2>/dev/null | head -n 1)
if [[ $rc != 0 || -z $deb ]]; then
	tail -n 30 "$TMP/build.log" | sed 's/^/# /'
	echo "1..$n"
	exit 1
fi
dpkg -i "$deb" >"$TMP/inst.log" 2>&1
check "dpkg -i $(basename "$deb")" test $? == 0 || sed 's/^/# /' "$TMP/inst.log"
for p in nlevel nlevel-sim nlevel-worker nlevel-submit nlevel-loadgen nlevel-key nlevel-jobmix \
	nlevel-classad nlevel-benchtab nlevel-farm-up nlevel-farm-down; do
	/usr/bin/$p --help >/dev/null 2>&1
	check "/usr/bin/$p --help" test $? == 0
	check "man page of $p" test -s "/usr/share/man/man1/$p.1.gz"
done
check "/usr/share/nlevel/farm.ini and the dashboard" \
	test -s /usr/share/nlevel/farm.ini -a -s /usr/share/nlevel/grafana/nlevel.json
check "units in /lib/systemd/system" \
	test -s /lib/systemd/system/nlevel.service -a -s "/lib/systemd/system/nlevel-worker@.service"
mkdir -p "$TMP/units"
cp "/lib/systemd/system/nlevel-worker@.service" "$TMP/units/nlevel-worker@one.service"
out=$(cd "$TMP/units" && systemd-analyze verify --man=no /lib/systemd/system/nlevel.service \
	nlevel-worker@one.service 2>&1)
check "systemd-analyze verify nlevel.service nlevel-worker@one.service${out:+ ($(tr '\n' ' ' <<<"$out"))}" \
	test -z "$out"
check "the units are not enabled" test ! -e /etc/systemd/system/multi-user.target.wants/nlevel.service
check "the system user nlevel exists" eval "getent passwd nlevel >/dev/null"
dpkg -r nlevel >"$TMP/rm.log" 2>&1
check "dpkg -r nlevel" test $? == 0
check "no program left after dpkg -r" test ! -e /usr/bin/nlevel -a ! -e /usr/bin/nlevel-submit
dpkg -P nlevel >/dev/null 2>&1
check "dpkg -P nlevel: the package is gone" test "$(dpkg-query -W -f='${Status}' nlevel 2>/dev/null | grep -c installed)" == 0
echo "# the whole test took $(($(date +%s) - t0)) s after the copy of the tree"
echo "1..$n"
[[ $fails == 0 ]]
