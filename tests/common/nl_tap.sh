# SPDX-License-Identifier: BSD-3-Clause
# TAP for the shell tests, as tests/common/nl_tap.h for the C ones. Source it:
#   . "$(dirname "$0")/../common/nl_tap.sh"
# then `say NAME STATUS DETAIL` (STATUS 0 = ok) or `t NAME RC SUBSTRING CMD...` (runs CMD, ok
# when it exits RC and prints SUBSTRING), and end with `nl_tap_done` (plan, exit status).
n=0
fail=0
say() { # name, status (0 = ok), detail
	n=$((n + 1))
	if [ "$2" = 0 ]; then
		echo "ok $n - $1"
	else
		# also on stderr: meson's --print-errorlogs (CI's log) shows stderr, not the TAP
		local msg="not ok $n - $1 (${3//$'\n'/ | })"
		echo "$msg"
		echo "$msg" >&2
		fail=1
	fi
}
t() { # name, expected exit status, expected output substring, command...
	local name=$1 want_rc=$2 want=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	[[ $rc == "$want_rc" && $out == *"$want"* ]]
	say "$name" $? "rc $rc, want $want_rc and '$want'; output: $(head -c 600 <<<"$out")"
}
nl_tap_done() {
	echo "1..$n"
	exit $fail
}
