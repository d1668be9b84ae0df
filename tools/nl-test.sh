#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The test suite: install, build with ASan+UBSan and -Werror, run every meson test but those of
# suite slow (the Debian package: tests/install/meson.build says why). Extra arguments go to
# `meson test` instead (e.g. --suite unit, or --suite slow). The last line printed is always
# "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
B=${NL_TEST_BUILD:-build-test}
if [ ! -f "$B/build.ninja" ]; then
	# the log lives inside the build folder (ignored by git), not beside it at the root
	mkdir -p "$B"
	meson setup "$B" --buildtype=debugoptimized -Db_sanitize=address,undefined -Dwerror=true \
		>"$B/setup.log" 2>&1 || { cat "$B/setup.log"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
fi
ninja -C "$B" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--no-suite slow)
meson test -C "$B" --num-processes 2 --print-errorlogs "${args[@]}"
rc=$?
python3 - "$B/meson-logs/testlog.json" <<'PY'
import json, sys
ok = bad = skip = 0
try:
    for line in open(sys.argv[1]):
        r = json.loads(line).get("result", "")
        if r in ("OK", "EXPECTEDFAIL"): ok += 1
        elif r == "SKIP": skip += 1
        else: bad += 1
except OSError:
    bad += 1
print(f"{ok} passed, {bad} failed, {skip} skipped")
PY
exit $rc
