/* SPDX-License-Identifier: BSD-3-Clause */
/* One record spreading through N nl_gossip views in synchronous rounds (nl_gspread.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nl_gspread.h"

#define REC_LIFETIME_S 1e9 /* the spread is about propagation, not expiry */

int
nl_gspread_run(const struct nl_gspread_cfg *c, struct nl_gspread_res *res)
{
	uint32_t n = c->n_nodes, n_mem = 0, *mem = NULL;
	struct nl_gossip_view **v = NULL;
	struct nl_gossip_rec *msg = NULL;
	uint8_t *has = NULL, *nat = NULL;
	struct nl_gossip_scratch scr = { 0 };
	struct nl_rng rng;
	int rc = -ENOMEM;

	if (n < 2 || !(c->nat_share >= 0 && c->nat_share < 1) || c->max_rounds == 0 ||
	    c->max_rounds > NL_GSPREAD_MAX_ROUNDS || nl_gossip_cfg_check(&c->g) != 0)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	nl_rng_seed(&rng, c->seed);
	v = calloc(n, sizeof(*v));
	msg = calloc(n, sizeof(*msg));
	has = calloc(n, 1);
	nat = calloc(n, 1);
	mem = calloc(n, sizeof(*mem));
	scr.rec = malloc(4 * sizeof(*scr.rec));
	scr.ack = malloc(4 * sizeof(*scr.ack));
	if (v == NULL || msg == NULL || has == NULL || nat == NULL || mem == NULL ||
	    scr.rec == NULL || scr.ack == NULL)
		goto out;
	scr.cap = 4;
	/* exactly round(nat_share x N) NAT'd nodes, chosen at random */
	uint32_t n_nat = (uint32_t)(c->nat_share * n + 0.5);

	for (uint32_t i = 0; i < n_nat; i++) {
		uint32_t k;

		do
			k = (uint32_t)(nl_rng_u64(&rng) % n);
		while (nat[k]);
		nat[k] = 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (nl_gossip_view_create(&v[i], i, 2) != 0)
			goto out;
		if (!nat[i])
			mem[n_mem++] = i;
	}
	if (n_mem < 2) {
		rc = -EINVAL;
		goto out;
	}
	uint32_t src = (uint32_t)(nl_rng_u64(&rng) % n);
	struct nl_gossip_rec r = { .src = src, .cores = 1, .free_cores = 1, .mem_mb = 1024,
				   .state = NL_GOSSIP_UP, .flags = nat[src] ? NL_GOSSIP_F_NAT : 0,
				   .created_s = 1.0, .lifetime_s = REC_LIFETIME_S };

	if (nl_gossip_set_self_st(v[src], &r) != 0)
		goto out;
	uint32_t informed = 1;

	res->share[0] = 1.0 / n;
	res->n_share = 1;
	rc = 0;
	for (unsigned int round = 1; round <= c->max_rounds; round++) {
		double now = 1.0 + round;
		bool changed = false;

		/* the messages of this round: what each node held at its start */
		for (uint32_t i = 0; i < n; i++)
			has[i] = (uint8_t)nl_gossip_collect_st(v[i], &c->g, now, &msg[i], 1);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t peer[NL_GOSSIP_MAX_FANOUT];
			unsigned int np = 0;

			/* f distinct peers other than i (the membership = the view): contactable
			 * ones, or any when the initiator cannot tell who is behind NAT */
			for (unsigned int t = 0; np < c->g.fanout && t < 64 * c->g.fanout; t++) {
				uint32_t p = c->nat_blind ? (uint32_t)(nl_rng_u64(&rng) % n) :
							    mem[nl_rng_u64(&rng) % n_mem];
				bool dup = p == i;

				for (unsigned int j = 0; j < np; j++)
					dup |= peer[j] == p;
				if (!dup)
					peer[np++] = p;
			}
			for (unsigned int j = 0; j < np; j++) {
				uint32_t p = peer[j];
				struct nl_gossip_ack ack;
				size_t n_ack, n_new;

				res->exchanges++;
				if (nat[p]) {
					res->failed++; /* nobody can open a connection to it */
					continue;
				}
				if (c->g.mode != NL_GOSSIP_PULL && has[i]) {
					res->recs_sent++;
					if (nl_gossip_receive_st(v[p], &msg[i], 1, now, &ack, &n_ack,
								 &n_new) != 0)
						goto nomem;
					nl_gossip_acked_st(v[i], &c->g, &ack, n_ack);
					informed += (uint32_t)n_new;
					changed |= n_new > 0;
				}
				if (c->g.mode != NL_GOSSIP_PUSH && has[p]) {
					res->recs_sent++;
					if (nl_gossip_receive_st(v[i], &msg[p], 1, now, &ack, &n_ack,
								 &n_new) != 0)
						goto nomem;
					nl_gossip_acked_st(v[p], &c->g, &ack, n_ack);
					informed += (uint32_t)n_new;
					changed |= n_new > 0;
				}
			}
		}
		res->share[round] = (double)informed / n;
		res->n_share = round + 1;
		if (informed == n && res->rounds_all == 0)
			res->rounds_all = round;
		/* converged: everyone has it, or (stop-k) nobody pushes it any more */
		bool hot = false;

		if (c->g.rule == NL_GOSSIP_STOP_K && informed < n) {
			for (uint32_t i = 0; i < n && !hot; i++) {
				struct nl_gossip_rec tmp;

				hot = nl_gossip_collect_st(v[i], &c->g, now, &tmp, 1) > 0;
			}
		}
		if (changed)
			res->rounds_conv = round;
		if (informed == n || (c->g.rule == NL_GOSSIP_STOP_K && !hot))
			break;
	}
	res->final_share = (double)informed / n;
	goto out;
nomem:
	rc = -ENOMEM;
out:
	if (v != NULL)
		for (uint32_t i = 0; i < n; i++)
			nl_gossip_view_free(v[i]);
	free(v);
	free(msg);
	free(has);
	free(nat);
	free(mem);
	nl_gossip_scratch_fini(&scr);
	return rc;
}
