/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The model's task classes in the emulated and native appliance (issue #15 item 4): the
 * `[machine NAME]` records and `[class NAME]` Requirements/Rank of the configuration evaluated
 * into the match table the leaf reads (managers/match/nl_match_model.h), and each generated
 * task's class handle recorded by its pool index, so the appliance places it with the same
 * code and the same table as nlevel-sim (tests/lockstep/). Port mode has no generator: its
 * tasks' handles come from REGISTER (nl_dp_farm.c).
 */
#ifndef NL_DP_MATCH_H
#define NL_DP_MATCH_H

#include <stdint.h>

#include "nl_match.h"
#include "nl_model.h"

struct nl_dp;

/**
 * Build and publish the model's match table when it has task classes (else nothing).
 *
 * @param dp  Appliance being created (dp->m, dp->mach0, dp->n_pool set).
 * @return 0; as nl_match_model_build() (the message is logged).
 * @par Context  Control path, before the lcores start. @par Source nl_match_model.h.
 */
int nl_dp_match_attach_ctl(struct nl_dp *dp);

/**
 * Unpublish and free; safe when nothing was attached.
 * @param dp  Appliance being freed. @par Context Control path, after the lcores stopped.
 * @par Source nl_match.h I1 (a published table is freed only when no reader is left).
 */
void nl_dp_match_detach_ctl(struct nl_dp *dp);

/**
 * Record generated task t's class handle (its aux indexes the handle map).
 * @param h_by_aux  The appliance's map (NULL: no classes, nothing to do).
 * @param m  Model. @param src  The generator's source. @param t  Task just drawn.
 * @par Context  The generating lcore, before the task is enqueued.
 * @par Source   nl_model_task_class() (the class both engines give a task).
 */
static inline void
nl_dp_match_task(uint32_t *h_by_aux, const struct nl_model_cfg *m, const struct nl_model_src *src,
		 const struct nl_task *t)
{
	if (h_by_aux != NULL)
		h_by_aux[t->aux] = nl_model_task_class(m, src, t);
}

#endif /* NL_DP_MATCH_H */
