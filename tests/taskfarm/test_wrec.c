/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-worker's record of ended runs (tools/worker/nl_wrec.h, issue #34 item 2): a run
 * (task id, sub-task, attempt) is found with the DONE it ended with; another attempt, another
 * sub-task or attempt 0 is not; a run recorded again keeps one entry; the record holds the
 * last 20,000 runs of a worker whatever their ids (sequential ids, and ids that share their low
 * 32 bits), and forgets the oldest first within a set; DISPATCH's attempt byte survives the
 * wire (nl_proto encode/decode). TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_proto.h"
#include "nl_tap.h"
#include "nl_wrec.h"

static struct nl_msg_done
done_of(uint64_t id, int32_t status)
{
	struct nl_msg_done d = { .task_id = id, .status = status, .state = NL_DONE_EXITED,
				 .run_ms = (uint32_t)(id % 1000) };

	return d;
}

int
main(void)
{
	struct nl_wrec r;
	const struct nl_msg_done *d;
	struct nl_msg_done x;
	uint64_t id = (UINT64_C(77) << 32) | 5;
	unsigned int miss = 0, wrong = 0;

	nl_tap_check(nl_wrec_init(&r) == 0, "init");
	x = done_of(id, 3);
	nl_wrec_put(&r, id, 0, 1, &x);
	d = nl_wrec_find(&r, id, 0, 1);
	nl_tap_ok(d != NULL && d->status == 3 && d->run_ms == x.run_ms,
		  "a run is found with its DONE (status %d)", d != NULL ? d->status : -99);
	nl_tap_check(nl_wrec_find(&r, id, 0, 2) == NULL, "another attempt of the task is not");
	nl_tap_check(nl_wrec_find(&r, id, 1, 1) == NULL, "another sub-task is not");
	nl_tap_check(nl_wrec_find(&r, id + 1, 0, 1) == NULL, "another task is not");
	x = done_of(id, 0);
	nl_wrec_put(&r, id, 0, 0, &x);
	nl_tap_check(nl_wrec_find(&r, id, 0, 0) == NULL, "attempt 0 (not given) is never kept");
	x = done_of(id, 9);
	nl_wrec_put(&r, id, 0, 1, &x);
	d = nl_wrec_find(&r, id, 0, 1);
	nl_tap_ok(d != NULL && d->status == 9, "the same run recorded again: its last DONE");
	/* 20,000 runs of two batches whose ids share the low half, then all looked up */
	for (uint32_t i = 1; i <= 10000; i++)
		for (uint64_t b = 1; b <= 2; b++) {
			x = done_of(b << 32 | i, (int32_t)(i % 200 + b));
			nl_wrec_put(&r, b << 32 | i, 0, 1, &x);
		}
	for (uint32_t i = 1; i <= 10000; i++)
		for (uint64_t b = 1; b <= 2; b++) {
			d = nl_wrec_find(&r, b << 32 | i, 0, 1);
			if (d == NULL)
				miss++;
			else if (d->status != (int32_t)(i % 200 + b) || d->task_id != (b << 32 | i))
				wrong++;
		}
	nl_tap_ok(wrong == 0, "20,000 runs: no run answered with another's DONE (%u)", wrong);
	nl_tap_ok(miss == 0, "the last 20,000 runs are all kept (%u forgotten)", miss);
	/* far more runs than the table: the oldest go, the newest stay */
	for (uint32_t i = 1; i <= 200000; i++) {
		x = done_of((UINT64_C(3) << 32) | i, 1);
		nl_wrec_put(&r, (UINT64_C(3) << 32) | i, 0, 2, &x);
	}
	miss = 0;
	for (uint32_t i = 200000 - 999; i <= 200000; i++)
		miss += nl_wrec_find(&r, (UINT64_C(3) << 32) | i, 0, 2) == NULL;
	nl_tap_ok(miss == 0, "after 200,000 runs the last 1,000 are all kept (%u forgotten)", miss);
	nl_tap_check(nl_wrec_find(&r, (UINT64_C(3) << 32) | 1, 0, 2) == NULL,
		     "and the first is forgotten (the oldest of its set)");
	nl_wrec_fini(&r);

	/* the attempt byte on the wire */
	struct nl_msg m = { .type = NL_MSG_DISPATCH }, o;
	uint8_t buf[NL_PROTO_MAX_LEN];
	int n;

	m.u.dispatch.task_id = id;
	m.u.dispatch.n_split = 1;
	m.u.dispatch.cmd_id = 4;
	m.u.dispatch.attempt = 7;
	m.u.dispatch.args_len = 2;
	memcpy(m.u.dispatch.args, "a", 2);
	memset(&o, 0, sizeof(o));
	n = nl_proto_encode(&m, buf, sizeof(buf));
	int e = n > 0 ? (int)nl_proto_decode(buf, (size_t)n, &o) : -1;

	nl_tap_ok(e == NL_PROTO_OK && o.u.dispatch.attempt == 7 && o.u.dispatch.task_id == id,
		  "DISPATCH carries its attempt (7 -> %u; encode %d, decode %d)",
		  o.u.dispatch.attempt, n, e);
	return nl_tap_done();
}
