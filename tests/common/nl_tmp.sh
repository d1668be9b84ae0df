# SPDX-License-Identifier: BSD-3-Clause
# Scratch folders of the live tests. Source it, then `DIR=$(nl_scratch NAME)`: a new folder
# NAME.XXXXXX (mode 755), on tmpfs (/dev/shm) when there is a writable one, else in /tmp;
# NL_TEST_TMP=DIR puts them there instead. Why tmpfs: the appliances of these tests keep
# their task farm's journal (--state-dir, SQLite, `--journal-sync full`) in the folder, and a
# farm DISPATCH leaves only once its record is fsynced. On the development VM's disk one
# fdatasync took 1 to 6.4 s while other builds ran, and every farm DISPATCH waited for it: a
# test of 200 one-millisecond tasks on 8 machines took 17 to 89 s instead of 2 (2026-12-03,
# docs/taskfarm.md "Journal and disk"). The tests check what the appliance does, not how
# fast this disk syncs; tmpfs keeps the journal across a kill or restart of the appliance,
# which is what they test.
nl_scratch() { # NAME: prints the new folder
	local root=${NL_TEST_TMP:-}
	if [[ -z $root ]]; then
		root=/tmp
		[[ -d /dev/shm && -w /dev/shm ]] && [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] &&
			root=/dev/shm
	fi
	local d
	d=$(mktemp -d "$root/$1.XXXXXX") || return 1
	chmod 755 "$d"
	echo "$d"
}
