/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * nlevel-worker's record of the runs it ended (issue #34 item 2, idempotency): the DONE of
 * each run (task id, sub-task, attempt) it sent, kept so that a DISPATCH of the same run
 * (the appliance restarted and asks again, docs/taskfarm.md "Exactly once") is answered from
 * the record instead of running the command a second time. A set-associative table of
 * NL_WREC_WAYS ways (131,072 runs, 8 MiB): a new record replaces the oldest of its set, so
 * the last 20,000 runs of a worker are all kept (test_wrec; 1.2 a set on average, a set
 * overflows its 8 ways about once in 10^5) and older ones go oldest first: hours of a busy
 * worker, far beyond any restart of its appliance. Pure bookkeeping, no system calls; the
 * worker's loop owns it (one thread).
 * Source: the idempotent-receiver pattern (Hohpe and Woolf, "Enterprise Integration
 * Patterns", 2003); HTCondor's starter answers a shadow's reconnect from its own state.
 */
#ifndef NL_WREC_H
#define NL_WREC_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_proto.h"

#define NL_WREC_SETS 16384u /**< sets (power of two) */
#define NL_WREC_WAYS 8u     /**< ways per set */

struct nl_wrec_ent {
	uint64_t task_id;   /**< 0 = empty */
	uint64_t seq;       /**< insertion order (the oldest of a set is replaced) */
	uint16_t sub;
	uint8_t attempt;
	struct nl_msg_done done; /**< the DONE sent (status, state, times) */
};

struct nl_wrec {
	struct nl_wrec_ent *e; /**< [NL_WREC_SETS * NL_WREC_WAYS] */
	uint64_t seq;
	uint64_t n_put, n_hit;
};

/**
 * Allocate an empty record (8 MiB).
 * @return 0; -ENOMEM. @par Context Any one thread (the worker's loop), at start.
 */
int nl_wrec_init(struct nl_wrec *r);

/** Free it (r->e NULL accepted). */
void nl_wrec_fini(struct nl_wrec *r);

/**
 * Keep the DONE d of run (task_id, sub, attempt); attempt 0 (not given by the submitter)
 * is not kept. A record of the same run is replaced.
 * @par Context The worker's loop.
 */
void nl_wrec_put(struct nl_wrec *r, uint64_t task_id, uint16_t sub, uint8_t attempt,
		 const struct nl_msg_done *d);

/**
 * The DONE kept for run (task_id, sub, attempt), or NULL (never ended here, forgotten, or
 * attempt 0).
 * @par Context The worker's loop.
 */
const struct nl_msg_done *nl_wrec_find(struct nl_wrec *r, uint64_t task_id, uint16_t sub,
				       uint8_t attempt);

#endif /* NL_WREC_H */
