/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The appliance's table of accepted FSUBMITs (dataplane/port/nl_farm_dd.h), against a reference:
 * random puts, finds and deletes of keys that collide (a small table kept half full, keys
 * differing only in address or port), so backward-shift deletion moves entries across the
 * table's end; every present key is found with its own values, every absent one is not. TAP.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "nl_farm_dd.h"
#include "nl_rng.h"
#include "nl_tap.h"

#define CAP 64u
#define KEYS 96u

int
main(void)
{
	struct nl_farm_dd slots[CAP] = { { 0 } };
	struct nl_farm_dd_tab t = { slots, CAP };
	bool in[KEYS] = { false };
	unsigned int n_in = 0, bad_find = 0, bad_val = 0, bad_absent = 0, dels = 0, wraps = 0;
	struct nl_rng r;

	nl_rng_seed(&r, nl_tap_seed(11));
	for (unsigned int it = 0; it < 200000; it++) {
		unsigned int k = (unsigned int)(nl_rng_u64(&r) % KEYS);
		uint64_t tid = (uint64_t)(1 + k / 8) << 32 | 7; /* 8 keys share a task id */
		uint32_t ip = 0x0a600000u + k % 4;
		uint16_t port = (uint16_t)(40000 + (k / 4) % 2);
		struct nl_farm_dd *e = nl_farm_dd_find(&t, tid, ip, port);

		if ((e != NULL) != in[k])
			bad_find++;
		if (e != NULL && e->ref != k)
			bad_val++;
		if (!in[k] && n_in < CAP / 2) {
			e = nl_farm_dd_put(&t, tid, ip, port);
			e->ref = k;
			in[k] = true;
			n_in++;
		} else if (in[k] && e != NULL) {
			wraps += nl_farm_dd_hash(&t, tid, ip, port) > (uint32_t)(e - slots);
			nl_farm_dd_del(&t, e);
			in[k] = false;
			n_in--;
			dels++;
		}
		if (it % 1000 == 0) /* every key absent from the table is not found */
			for (unsigned int a = 0; a < KEYS; a++)
				bad_absent += !in[a] &&
					      nl_farm_dd_find(&t, (uint64_t)(1 + a / 8) << 32 | 7,
							      0x0a600000u + a % 4,
							      (uint16_t)(40000 + (a / 4) % 2)) != NULL;
	}
	unsigned int used = 0;

	for (unsigned int i = 0; i < CAP; i++)
		used += slots[i].task_id != 0;
	nl_tap_ok(bad_find == 0 && bad_val == 0 && bad_absent == 0,
		  "200,000 random operations: presence and values as the reference (%u / %u / %u "
		  "wrong)", bad_find, bad_val, bad_absent);
	nl_tap_ok(used == n_in && dels > 10000 && wraps > 0,
		  "%u deletions (%u of an entry past the table's end), %u slots used for %u keys",
		  dels, wraps, used, n_in);
	return nl_tap_done();
}
