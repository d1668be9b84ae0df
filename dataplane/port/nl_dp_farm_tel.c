/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry of task farms in port mode: /nlevel/submits (submit ids, or one submit's
 * counters) and /nlevel/farm (command names, machine ClassAd records, eligible machines per
 * handle). Read on the telemetry thread, relaxed, from the I/O lcore's state (nl_dp_farm.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "nl_atomic.h"
#include "nl_dp_farm_priv.h"

static void
counts_dict(struct rte_tel_data *d, const struct farm_sub *s)
{
	rte_tel_data_add_dict_u64(d, "submitted", nl_atomic_load_relaxed(&s->c.submitted));
	rte_tel_data_add_dict_u64(d, "accepted", nl_atomic_load_relaxed(&s->c.accepted));
	rte_tel_data_add_dict_u64(d, "rejected", nl_atomic_load_relaxed(&s->c.rejected));
	rte_tel_data_add_dict_u64(d, "done_ok", nl_atomic_load_relaxed(&s->c.done_ok));
	rte_tel_data_add_dict_u64(d, "done_err", nl_atomic_load_relaxed(&s->c.done_err));
	rte_tel_data_add_dict_u64(d, "lost", nl_atomic_load_relaxed(&s->c.lost));
	rte_tel_data_add_dict_u64(d, "running", nl_atomic_load_relaxed(&s->c.running));
}

static int
tel_submits(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_port *io = nl_dp_tel_driver();
	struct nl_dp_farm *f = io != NULL ? io->farm : NULL;

	(void)cmd;
	if (f == NULL)
		return -EINVAL;
	if (params != NULL && *params != '\0') {
		char *end;
		unsigned long long id = strtoull(params, &end, 10);

		if (*end != '\0' || id == 0)
			return -EINVAL;
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_u64(d, "submit_id", id);
		for (uint32_t i = 0; i < FARM_SUBMITS; i++)
			if (nl_atomic_load_relaxed(&f->sub[i].id) == id) {
				rte_tel_data_add_dict_u64(d, "known", 1);
				counts_dict(d, &f->sub[i]);
				return 0;
			}
		rte_tel_data_add_dict_u64(d, "known", 0);
		return 0;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "handles", f->n_h > 0 ? f->n_h - 1 : 0);
	rte_tel_data_add_dict_u64(d, "commands", f->n_names);
	rte_tel_data_add_dict_u64(d, "match_rebuilds", nl_atomic_load_relaxed(&f->n_rebuilds));
	rte_tel_data_add_dict_u64(d, "resent", nl_atomic_load_relaxed(&f->n_resent));
	/* #34: the journal */
	rte_tel_data_add_dict_u64(d, "journal_answered", nl_atomic_load_relaxed(&f->n_jr_answered));
	rte_tel_data_add_dict_u64(d, "journal_pinned", nl_atomic_load_relaxed(&f->n_jr_pinned));
	rte_tel_data_add_dict_u64(d, "journal_unpinned", nl_atomic_load_relaxed(&f->n_jr_unpinned));
	rte_tel_data_add_dict_u64(d, "journal_held_full", nl_atomic_load_relaxed(&f->n_held_full));
	rte_tel_data_add_dict_u64(d, "journal_requeued", nl_atomic_load_relaxed(&f->n_jr_requeued));
	rte_tel_data_add_dict_u64(d, "journal_requeue_refused",
				  nl_atomic_load_relaxed(&f->n_jr_requeue_refused));
	struct rte_tel_data *ids = rte_tel_data_alloc();

	if (ids == NULL)
		return -ENOMEM;
	rte_tel_data_start_array(ids, RTE_TEL_U64_VAL);
	for (uint32_t i = 0, n = 0; i < FARM_SUBMITS && n < 128; i++) {
		uint64_t id = nl_atomic_load_relaxed(&f->sub[i].id);

		if (id != 0) {
			rte_tel_data_add_array_u64(ids, id);
			n++;
		}
	}
	rte_tel_data_add_dict_container(d, "submit_ids", ids, 0);
	return 0;
}

/* /nlevel/farm: command names, each machine's ClassAd record, each handle's eligible count */
static int
tel_farm(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_port *io = nl_dp_tel_driver();
	struct nl_dp_farm *f = io != NULL ? io->farm : NULL;
	struct rte_tel_data *names, *ads, *elig;

	(void)cmd;
	(void)params;
	if (f == NULL)
		return -EINVAL;
	names = rte_tel_data_alloc();
	ads = rte_tel_data_alloc();
	elig = rte_tel_data_alloc();
	if (names == NULL || ads == NULL || elig == NULL) {
		rte_tel_data_free(names);
		rte_tel_data_free(ads);
		rte_tel_data_free(elig);
		return -ENOMEM;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_start_array(names, RTE_TEL_STRING_VAL);
	for (unsigned int i = 0; i < nl_atomic_load_relaxed(&f->n_names); i++)
		rte_tel_data_add_array_string(names, f->names[i]);
	/* records: read racily by design (a record is replaced only by the control lcore and
	 * its text outlives this call unless a worker changes it at the same moment) */
	rte_tel_data_start_array(ads, RTE_TEL_STRING_VAL);
	for (uint32_t m = 0; m < io->dp->n_mach; m++) {
		const char *t = __atomic_load_n(&f->ad[m].text, __ATOMIC_ACQUIRE);
		char buf[RTE_TEL_MAX_STRING_LEN];

		snprintf(buf, sizeof(buf), "%s", t != NULL ? t : "");
		rte_tel_data_add_array_string(ads, buf);
	}
	rte_tel_data_start_array(elig, RTE_TEL_U64_VAL);
	urcu_qsbr_register_thread(); /* a short-lived reader of the match table */
	const struct nl_match_tab *tab = __atomic_load_n(&nl_match_src.tab, __ATOMIC_ACQUIRE);

	for (uint32_t h = 1; tab != NULL && h < tab->n_h; h++)
		rte_tel_data_add_array_u64(elig, tab->ent[h].n_elig);
	urcu_qsbr_unregister_thread();
	rte_tel_data_add_dict_container(d, "commands", names, 0);
	rte_tel_data_add_dict_container(d, "machine_ads", ads, 0);
	rte_tel_data_add_dict_container(d, "handle_eligible", elig, 0);
	return 0;
}

int
nl_dp_farm_tel_attach(void)
{
	int rc = nl_dp_tel_register("/nlevel/submits", tel_submits,
				"Task farms: submit ids, or one submit's counters "
				"(param: submit id)");
	if (rc == 0)
		rc = nl_dp_tel_register("/nlevel/farm", tel_farm,
					"Task farms: command names, machine ClassAd records, "
					"eligible machines per handle");
	return rc;
}
