/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out (nl_xa.h): the configuration ([appliance NAME], [scaleout]) and the
 * placement of managers and machines.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include <sodium.h>

#include "nl_appkey.h"
#include "nl_atomic.h"
#include "nl_dp_inline.h"
#include "nl_port_priv.h"
#include "nl_gossip.h"
#include "nl_model.h"
#include "nl_model_cfg.h"
#include "nl_policy.h"
#include "nl_rng.h"
#include "nl_swim.h"
#include "nl_xa_core.h"

/* ---------------------------------------------------------------- configuration ---- */

/* "aa:bb:cc:dd:ee:ff": exactly six octets of one or two hex digits, nothing after. */
static bool
parse_mac(const char *v, uint8_t mac[6])
{
	for (int k = 0; k < 6; k++) {
		unsigned int x = 0, d = 0;

		for (; d < 2 && isxdigit((unsigned char)v[d]); d++)
			x = x * 16 + (unsigned int)(isdigit((unsigned char)v[d]) ? v[d] - '0' :
						    tolower((unsigned char)v[d]) - 'a' + 10);
		if (d == 0)
			return false;
		v += d;
		if (*v != (k < 5 ? ':' : '\0'))
			return false;
		v++;
		mac[k] = (uint8_t)x;
	}
	return true;
}

int
nl_xa_cfg_parse(struct nl_cfg *c, const struct nl_model_cfg *m, const char *self,
		struct nl_xa_cfg *out)
{
	unsigned int n_roots = 0; /* owns names of every appliance so far */

	memset(out, 0, sizeof(*out));
	out->self = -1;
	snprintf(out->path, sizeof(out->path), "%s", c->path);
	for (unsigned int i = 0; i < c->n_section; i++) {
		const char *sec = c->section[i];
		struct nl_xa_app_cfg *a;
		const struct nl_cfg_entry *e;
		const char *v;
		uint64_t u;
		int rc;

		if (strncmp(sec, "appliance ", 10) != 0)
			continue;
		if (out->n_app == NL_XA_MAX_APPS) {
			snprintf(c->err, sizeof(c->err), "%s:%u: [%s]: more than %u appliances",
				 c->path, c->section_line[i], sec, NL_XA_MAX_APPS);
			return -EINVAL;
		}
		a = &out->app[out->n_app];
		if (strlen(sec + 10) == 0 || strlen(sec + 10) >= NL_XA_NAME_LEN) {
			snprintf(c->err, sizeof(c->err), "%s:%u: [%s]: the name must have 1..%u characters",
				 c->path, c->section_line[i], sec, NL_XA_NAME_LEN - 1);
			return -EINVAL;
		}
		snprintf(a->name, sizeof(a->name), "%s", sec + 10);
		for (unsigned int k = 0; k < out->n_app; k++)
			if (strcmp(out->app[k].name, a->name) == 0) {
				snprintf(c->err, sizeof(c->err), "%s:%u: [%s] appears twice", c->path,
					 c->section_line[i], sec);
				return -EINVAL;
			}
		rc = nl_cfg_get_str(c, sec, "ip", &v, true);
		if (rc < 0)
			return rc;
		if (inet_pton(AF_INET, v, &a->ip) != 1)
			return nl_cfg_error(c, nl_cfg_find(c, sec, "ip"), "'%s' is not an IPv4 address", v);
		u = 7477;
		rc = nl_cfg_get_u64(c, sec, "port", &u, 1, 65535, false);
		if (rc < 0)
			return rc;
		a->port = (uint16_t)u;
		rc = nl_cfg_get_str(c, sec, "mac", &v, false);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			if (!parse_mac(v, a->mac))
				return nl_cfg_error(c, nl_cfg_find(c, sec, "mac"),
						    "'%s' is not a MAC address (aa:bb:cc:dd:ee:ff)", v);
			a->has_mac = true;
		}
		/* test hook (#36): this appliance's wall clock runs this far off, for the records it
		 * dates and the datagrams it seals (a host with a skewed clock) */
		a->test_skew_s = 0;
		rc = nl_cfg_get_double(c, sec, "test_clock_skew_ms", &a->test_skew_s, -600000,
				       600000, false);
		if (rc < 0)
			return rc;
		a->test_skew_s *= 1e-3;
		rc = nl_cfg_get_str(c, sec, "public_key", &v, false); /* #36: appliance keys */
		if (rc < 0)
			return rc;
		if (rc == 1) {
			e = nl_cfg_find(c, sec, "public_key");
			if (nl_appkey_pub_parse(v, a->pk) != 0)
				return nl_cfg_error(c, e, "'%s' is not a public key (64 hex digits, "
						    "as nlevel-key --appliance prints)", v);
			a->has_pk = true;
			a->pk_line = e != NULL ? e->line : c->section_line[i];
		}
		a->standby = -1; /* #36: `standby = OTHER`, resolved once every section is read */
		rc = nl_cfg_get_str(c, sec, "standby", &v, false);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			e = nl_cfg_find(c, sec, "standby");
			a->standby_line = e != NULL ? e->line : c->section_line[i];
			if (strlen(v) == 0 || strlen(v) >= NL_XA_NAME_LEN)
				return nl_cfg_error(c, e, "'%s' is no appliance name (1..%u characters)",
						    v, NL_XA_NAME_LEN - 1);
			snprintf(a->standby_name, sizeof(a->standby_name), "%s", v);
		}
		/* #36: `failback = no`: back from a restart, it leaves its subtree at its standby
		 * (docs/scale-out.md "Failback or not") */
		a->failback = true;
		rc = nl_cfg_get_bool(c, sec, "failback", &a->failback, false);
		if (rc < 0)
			return rc;
		e = nl_cfg_find(c, sec, "failback");
		if (!a->failback && a->standby_name[0] == '\0')
			return nl_cfg_error(c, e, "failback = no needs a standby (`standby = OTHER` in "
					    "this section): without one nobody keeps the subtree");
		out->any_no_failback |= !a->failback;
		rc = nl_cfg_get_str(c, sec, "owns", &v, false);
		if (rc < 0)
			return rc;
		e = nl_cfg_find(c, sec, "owns");
		a->owns_line = e != NULL ? e->line : c->section_line[i];
		/* Items end at a comma outside parentheses (M(1,0) is one name); blanks around an
		 * item are trimmed; an empty item is refused, as in every list (docs/config.md). */
		while (rc == 1) {
			const char *end = v;
			size_t len;
			int depth = 0;

			while (*end != '\0' && (*end != ',' || depth > 0)) {
				depth += *end == '(' ? 1 : *end == ')' ? -1 : 0;
				end++;
			}
			while (*v == ' ' || *v == '\t')
				v++;
			len = (size_t)(end - v);
			while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
				len--;
			if (len == 0)
				return nl_cfg_error(c, e, "empty item in the list (two commas, or a comma "
						    "at an end)");
			if (a->n_owns == NL_XA_MAX_OWNS || len >= NL_XA_NAME_LEN)
				return nl_cfg_error(c, e, "too many or too long names (at most %u of %u)",
						    NL_XA_MAX_OWNS, NL_XA_NAME_LEN - 1);
			memcpy(a->owns[a->n_owns], v, len);
			a->owns[a->n_owns][len] = '\0';
			if (!nl_model_mgr_name_ok(m, a->owns[a->n_owns]))
				return nl_cfg_error(c, e,
						    "'%s' names no manager of the curves this file runs "
						    "(NLSC: M(0,root) or M(K,bits) with K = 1..%u and K "
						    "bits 0/1, e.g. M(1,0); 2LSC: global or groupG, G below "
						    "its groups)",
						    a->owns[a->n_owns], m->n_res);
			for (unsigned int k = 0; k <= out->n_app; k++)
				for (unsigned int j = 0; j < out->app[k].n_owns; j++)
					if (strcmp(out->app[k].owns[j], a->owns[a->n_owns]) == 0)
						return nl_cfg_error(c, e, "'%s' is owned twice (also by [appliance %s])",
								    a->owns[a->n_owns], out->app[k].name);
			/* every listed manager may become a summary root, and the top one more */
			if (++n_roots > NL_XA_MAX_ROOTS - 1)
				return nl_cfg_error(c, e, "more than %u owns names over all appliances "
						    "(subtree roots of one tree)", NL_XA_MAX_ROOTS - 1);
			a->n_owns++;
			if (*end == '\0')
				break;
			v = end + 1;
		}
		if (self != NULL && strcmp(self, a->name) == 0)
			out->self = (int)out->n_app;
		out->n_app++;
	}
	for (unsigned int i = 0; i < out->n_app; i++) { /* #36: standby names, now all known */
		struct nl_xa_app_cfg *a = &out->app[i];

		if (a->standby_name[0] == '\0')
			continue;
		for (unsigned int k = 0; k < out->n_app; k++)
			if (strcmp(out->app[k].name, a->standby_name) == 0)
				a->standby = (int)k;
		if (a->standby < 0 || a->standby == (int)i) {
			snprintf(c->err, sizeof(c->err),
				 "%s:%u: [appliance %s] standby = %s: %s", c->path, a->standby_line,
				 a->name, a->standby_name,
				 a->standby < 0 ? "no [appliance] section has that name" :
						  "an appliance cannot be its own standby");
			return -EINVAL;
		}
	}
	out->gossip_period_s = 0.05;
	out->gone_after_s = 1.0;
	out->fanout = 2;
	out->retransmit_s = 0.02;
	out->test_drop_every = 0;
	out->swim_period_s = 0.4;
	out->swim_timeout_s = 0.2;
	out->swim_suspicion_mult = 9;
	out->swim_indirect = 3;
	out->entry_tree = false;
	out->dead_hold_s = 10.0;
	out->word_wait_s = 30.0;
	if (nl_cfg_has_section(c, "scaleout")) {
		double ms = 50, rt_ms = 20, sp_ms = 400, st_ms = 200;
		uint64_t f = 2, drop = 0, smult = 9, sk = 3;
		int rc = nl_cfg_get_double(c, "scaleout", "gossip_period_ms", &ms, 1, 60000, false);

		if (rc >= 0)
			rc = nl_cfg_get_double(c, "scaleout", "gone_after_s", &out->gone_after_s, 0.01,
					       3600, false);
		if (rc >= 0)
			rc = nl_cfg_get_u64(c, "scaleout", "fanout", &f, 1, NL_GOSSIP_MAX_FANOUT, false);
		if (rc >= 0)
			rc = nl_cfg_get_double(c, "scaleout", "retransmit_ms", &rt_ms, 1, 10000, false);
		if (rc >= 0)
			rc = nl_cfg_get_u64(c, "scaleout", "test_drop_every", &drop, 0, 1000000, false);
		if (rc >= 0)
			rc = nl_cfg_get_double(c, "scaleout", "swim_period_ms", &sp_ms, 10, 60000,
					       false);
		if (rc >= 0)
			rc = nl_cfg_get_double(c, "scaleout", "swim_timeout_ms", &st_ms, 1, 60000,
					       false);
		if (rc >= 0)
			rc = nl_cfg_get_u64(c, "scaleout", "swim_suspicion_mult", &smult, 1, 100,
					    false);
		if (rc >= 0)
			rc = nl_cfg_get_u64(c, "scaleout", "swim_indirect", &sk, 1, 16, false);
		if (rc >= 0)
			rc = nl_cfg_get_double(c, "scaleout", "dead_hold_s", &out->dead_hold_s, 0,
					       3600, false);
		if (rc >= 0) /* #36: a standby's wait for a dead appliance's workers' word */
			rc = nl_cfg_get_double(c, "scaleout", "word_wait_s", &out->word_wait_s, 1,
					       3600, false);
		if (rc >= 0) { /* #36: where a task enters the tree */
			static const char *const entries[] = { "local", "tree", NULL };
			unsigned int en = 0;

			rc = nl_cfg_get_enum(c, "scaleout", "entry", entries, &en, false);
			out->entry_tree = en == 1;
		}
		if (rc < 0)
			return rc;
		if (st_ms > sp_ms)
			return nl_cfg_error(c, nl_cfg_find(c, "scaleout", "swim_timeout_ms"),
					    "the probe's ACK wait must fit its period "
					    "(swim_period_ms = %g)", sp_ms);
		out->swim_period_s = sp_ms / 1000.0;
		out->swim_timeout_s = st_ms / 1000.0;
		out->swim_suspicion_mult = (unsigned int)smult;
		out->swim_indirect = (unsigned int)sk;
		if (drop == 1)
			return nl_cfg_error(c, nl_cfg_find(c, "scaleout", "test_drop_every"),
					    "1 would drop every datagram (0 = off, k >= 2)");
		out->retransmit_s = rt_ms / 1000.0;
		out->test_drop_every = (unsigned int)drop;
		out->gossip_period_s = ms / 1000.0;
		out->fanout = (unsigned int)f;
		if (out->gone_after_s < 2 * out->gossip_period_s)
			return nl_cfg_error(c, nl_cfg_find(c, "scaleout", "gone_after_s"),
					    "must be at least two gossip periods (%g s)",
					    2 * out->gossip_period_s);
	}
	if (self != NULL && out->self < 0) {
		snprintf(c->err, sizeof(c->err), "%s: --appliance %s: no [appliance %s] section",
			 c->path, self, self);
		return -EINVAL;
	}
	return 0;
}

/* ---------------------------------------------------------------- placement ---- */

/* The parent of manager m: its tree node's when the policy has one manager per tree node
 * (NLSC), else the top manager (2LSC: the global scheduler is every group's parent). */
static uint32_t
mgr_parent(const struct nl_sched *s, uint32_t m)
{
	if (s->n_mgr == s->tree->n_node)
		return s->tree->node[m].parent;
	return m == s->ops->top_mgr(s) ? NL_NODE_NONE : s->ops->top_mgr(s);
}

static bool
is_under(const struct nl_sched *s, uint32_t m, uint32_t root)
{
	for (uint32_t x = m; x != NL_NODE_NONE; x = mgr_parent(s, x))
		if (x == root)
			return true;
	return false;
}

/* Subtree root mgr of appliance app; its machines: those whose manager (xa->mach_mgr) is under it. */
static int
add_root(struct nl_xa *xa, const struct nl_sched *s, uint32_t mgr, unsigned int app)
{
	struct xa_root *r;
	unsigned int k = 0;

	if (xa->n_root == XA_MAX_ROOTS)
		return -E2BIG;
	for (unsigned int i = 0; i < xa->n_root; i++)
		k += xa->root[i].app == app;
	r = &xa->root[xa->n_root++];
	memset(r, 0, sizeof(*r));
	r->mgr = mgr;
	r->app = (uint16_t)app;
	r->home = (uint16_t)app;
	r->k = (uint16_t)k;
	r->src = app * 64u + k;
	r->mach = calloc(s->n_mach, sizeof(uint32_t));
	if (r->mach == NULL)
		return -ENOMEM;
	for (uint32_t m = 0; m < s->n_mach; m++)
		if (is_under(s, xa->mach_mgr[m], mgr))
			r->mach[r->n_mach++] = m;
	return 0;
}

int
nl_xa_attach_ctl(struct nl_dp *dp, const void *arg, void **ext)
{
	const struct nl_xa_cfg *cfg = arg;
	const struct nl_sched *s = dp->gen_rcu->s;
	struct nl_xa *xa;
	int32_t *listed;
	char name[64];
	int rc = -ENOMEM;

	if (cfg == NULL || cfg->n_app == 0 || cfg->self < 0)
		return 0;
	if (!dp->o.port_mode) {
		fprintf(stderr, "nlevel: %s: a split tree (--appliance) runs in port mode only\n",
			cfg->path);
		return -EINVAL;
	}
	xa = calloc(1, sizeof(*xa));
	listed = malloc(dp->n_mgr * sizeof(*listed));
	if (xa == NULL || listed == NULL)
		goto fail;
	xa->dp = dp;
	xa->cfg = *cfg;
	xa->self = (unsigned int)cfg->self;
	nl_xa_test_skew_s = cfg->app[cfg->self].test_skew_s; /* test hook (#36) */
	if (cfg->paired) /* #36: one sealing state per pair (its own sender id and sequence) */
		for (unsigned int a = 0; a < cfg->n_app; a++)
			if (a != xa->self)
				nl_auth_tx_init(&xa->peer[a].tx, &cfg->pair[a]);
	do
		randombytes_buf(&xa->inc, sizeof(xa->inc));
	while (xa->inc == 0);
	nl_rng_seed(&xa->rng, xa->inc);
	xa->mgr_app = calloc(dp->n_mgr, 1);
	xa->mach_app = calloc(dp->n_mach, 1);
	xa->mgr_home = calloc(dp->n_mgr, 1);
	xa->mach_home = calloc(dp->n_mach, 1);
	xa->mach_fo = calloc(dp->n_mach, 1);
	xa->mach_mgr = calloc(dp->n_mach, sizeof(*xa->mach_mgr));
	xa->mach_inst = calloc(dp->n_mach, 1);
	xa->local_load = calloc(dp->n_mach, sizeof(*xa->local_load));
	xa->task = calloc(dp->o.pool_size, sizeof(*xa->task)); /* by pool index (nl_task.aux) */
	if (xa->mgr_app == NULL || xa->mach_app == NULL || xa->mach_mgr == NULL ||
	    xa->mgr_home == NULL || xa->mach_home == NULL || xa->mach_fo == NULL ||
	    xa->mach_inst == NULL || xa->local_load == NULL || xa->task == NULL)
		goto fail;
	for (uint32_t i = 0; i < dp->n_mgr; i++)
		listed[i] = -1;
	for (unsigned int a = 0; a < cfg->n_app; a++)
		for (unsigned int j = 0; j < cfg->app[a].n_owns; j++) {
			uint32_t i;

			for (i = 0; i < dp->n_mgr; i++) {
				s->ops->mgr_name(s, i, name, sizeof(name));
				if (strcmp(name, cfg->app[a].owns[j]) == 0)
					break;
			}
			if (i == dp->n_mgr)
				continue; /* a manager of the other scheme (docs/scale-out.md) */
			listed[i] = (int32_t)a;
		}
	for (uint32_t i = 0; i < dp->n_mgr; i++) {
		uint32_t x = i;

		while (x != NL_NODE_NONE && listed[x] < 0)
			x = mgr_parent(s, x);
		xa->mgr_app[i] = (uint8_t)(x == NL_NODE_NONE ? 0 : listed[x]);
	}
	/* the manager that dispatches to each machine (its leaf in NLSC, its group in 2LSC) and
	 * that manager's appliance, as nlevel-sim's split model has them */
	nl_model_split_mach_parts(s, xa->mgr_app, xa->mach_app, xa->mach_mgr);
	memcpy(xa->mgr_home, xa->mgr_app, dp->n_mgr); /* #36: a standby's adoption changes */
	memcpy(xa->mach_home, xa->mach_app, dp->n_mach); /* the *_app ones, never these */
	for (unsigned int a = 0; a < NL_XA_MAX_APPS; a++)
		xa->holder[a] = (uint8_t)a;
	nl_xa_entry_init(xa, s); /* #36: local entry */
	/* Summary roots: every listed manager, and the top if nobody lists it. */
	if (listed[s->ops->top_mgr(s)] < 0 && (rc = add_root(xa, s, s->ops->top_mgr(s), 0)) != 0)
		goto fail;
	for (uint32_t i = 0; i < dp->n_mgr; i++)
		if (listed[i] >= 0 && (rc = add_root(xa, s, i, (unsigned int)listed[i])) != 0)
			goto fail;
	rc = -ENOMEM;
	xa->proxy = rte_zmalloc("nl_xa_proxy", sizeof(*xa->proxy), RTE_CACHE_LINE_SIZE);
	if (xa->proxy == NULL)
		goto fail;
	xa->proxy->dp = dp;
	xa->proxy->lcore_id = rte_get_main_lcore();
	/* #36 standby: the control lcore decides at the managers it adopted, on this lcore
	 * struct (nl_dp_mgr_serve_ctl()) */
	xa->proxy->eng.ops = &nl_dp_engine_ops_ctl;
	xa->proxy->eng.ctx = xa->proxy;
	xa->proxy->hk_mask = 63;
	for (unsigned int a = 0; a < cfg->n_app; a++) {
		xa->peer[a].live = true; /* until SWIM declares it DEAD (nl_xa_swim.c) */
		xa->peer[a].mac_known = cfg->app[a].has_mac;
		memcpy(xa->peer[a].mac, cfg->app[a].mac, 6);
		xa->peer[a].out_task.type = NL_XA_MSG_HANDOVER;
		xa->peer[a].out_back.type = NL_XA_MSG_HANDBACK;
		xa->peer[a].out_ack.type = NL_XA_MSG_ACK;
		if (a != xa->self) {
			xa->peer[a].rtx = calloc(XA_RTX_CAP, sizeof(*xa->peer[a].rtx));
			if (xa->peer[a].rtx == NULL)
				goto fail;
		}
	}
	xa->settling = !cfg->app[xa->self].failback; /* #36 failback = no (nl_xa_standby.c) */
	for (unsigned int a = 0; a < cfg->n_app; a++)
		if (cfg->app[a].standby >= 0 && xa->resend == NULL &&
		    (rc = nl_xa_resend_init(xa)) != 0) /* #36: clients' resends at the standby */
			goto fail;
	xa->gcfg = (struct nl_gossip_cfg){ .fanout = cfg->fanout, .mode = NL_GOSSIP_PUSH,
					   .rule = NL_GOSSIP_ANTI_ENTROPY, .stop_k = 1 };
	rc = nl_gossip_view_create(&xa->view, xa->self * 64u, 4u * XA_MAX_ROOTS);
	if (rc != 0)
		goto fail;
	xa->gcap = XA_MAX_ROOTS * 2;
	xa->grec = calloc(xa->gcap, sizeof(*xa->grec));
	xa->gack = calloc(xa->gcap, sizeof(*xa->gack));
	if (xa->grec == NULL || xa->gack == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	xa->start_s = nl_xa_real_s();
	xa->check_cyc = rte_get_tsc_hz() / 100;
	xa->rtx_cyc = (uint64_t)(cfg->retransmit_s * (double)rte_get_tsc_hz());
	free(listed);
	*ext = xa;
	return 0;
fail:
	free(listed);
	nl_xa_free(xa);
	return rc;
}

void
nl_xa_free(void *ext)
{
	struct nl_xa *xa = ext;

	if (xa == NULL)
		return;
	for (unsigned int i = 0; i < xa->n_root; i++)
		free(xa->root[i].mach);
	nl_swim_free(xa->swim); /* the detector (nl_xa_swim.c made it) */
	nl_xa_resend_free(xa);
	nl_gossip_view_free(xa->view);
	free(xa->grec);
	free(xa->gack);
	rte_free(xa->proxy);
	for (unsigned int a = 0; a < NL_XA_MAX_APPS; a++)
		free(xa->peer[a].rtx);
	free(xa->mgr_app);
	free(xa->mach_app);
	free(xa->mgr_home);
	free(xa->mach_home);
	free(xa->mach_fo);
	free(xa->mach_mgr);
	free(xa->mach_inst);
	free(xa->local_load);
	free(xa->task);
	free(xa);
}

struct nl_dp_lcore *
nl_xa_mgr_lcore(void *ext, uint32_t mgr, struct nl_dp_lcore *lc)
{
	const struct nl_xa *xa = ext;

	if (xa == NULL || xa->mgr_app[mgr] == xa->self)
		return lc;
	return xa->proxy;
}

bool
nl_xa_owns_mach(void *ext, uint32_t m, uint16_t hello_flags)
{
	struct nl_xa *xa = ext;
	unsigned int home;

	if (xa == NULL)
		return true;
	home = xa->mach_home[m];
	/* #36 failback = no: no slot of its own subtree while settling (its standby may keep
	 * it; a worker that joined here would have to leave again) */
	if (xa->mach_app[m] != xa->self || (xa->settling && home == xa->self))
		return false;
	/* #36: an adopted subtree's slots go to its dead appliance's workers first, which fail
	 * over to tell what became of its sub-tasks; our own workers, which HELLO us every
	 * second, would otherwise take them (the same vectors), and those never would (a worker
	 * re-homes only to slots). So for XA_ADOPT_GRACE_S, and while what was parked there is
	 * held on for their word past dead_hold_s (nl_xa_hold_on_ctl()) */
	if (home != xa->self && !(hello_flags & NL_HELLO_F_FAILOVER) &&
	    ((double)(rte_rdtsc() - xa->adopt_tsc[home]) <
		     XA_ADOPT_GRACE_S * (double)rte_get_tsc_hz() ||
	     xa->peer[home].holding_on))
		return false;
	/* granted (nl_dp_claim_slots() takes it now): whether by one of home's own workers */
	xa->mach_fo[m] = (hello_flags & NL_HELLO_F_FAILOVER) != 0;
	return true;
}

uint64_t
nl_xa_foreign_live(const void *ext)
{
	const struct nl_xa *xa = ext;

	return xa == NULL ? 0 : nl_atomic_load_relaxed(&xa->foreign_live);
}

double nl_xa_test_skew_s;

int
nl_xa_cfg_keys(struct nl_xa_cfg *x, const char *keyfile, bool auth, char *err, size_t errlen)
{
	uint8_t sk[NL_APPKEY_LEN], pk[NL_APPKEY_LEN];
	char hex[2 * NL_APPKEY_LEN + 1], kerr[512];
	const struct nl_xa_app_cfg *me;
	int rc = 0;

	x->paired = false;
	if (x->n_app == 0 || x->self < 0) {
		if (keyfile != NULL) {
			snprintf(err, errlen, "--appliance-key %s: only with --appliance NAME (a split "
					      "tree's appliance)", keyfile);
			return -EINVAL;
		}
		return 0;
	}
	me = &x->app[x->self];
	if (keyfile == NULL) {
		for (unsigned int a = 0; a < x->n_app; a++)
			if (x->app[a].has_pk) {
				snprintf(err, errlen, "%s:%u: [appliance %s] has a public_key: start "
						      "appliance %s with --appliance-key FILE (its own key, "
						      "nlevel-key --appliance), or remove every public_key "
						      "to seal with the site key", x->path,
					 x->app[a].pk_line, x->app[a].name, me->name);
				return -EINVAL;
			}
		return 0;
	}
	if (!auth) {
		snprintf(err, errlen, "--appliance-key %s: needs --key (datagrams between appliances "
				      "are sealed: protocol version 2)", keyfile);
		return -EINVAL;
	}
	for (unsigned int a = 0; a < x->n_app; a++)
		if (!x->app[a].has_pk) {
			snprintf(err, errlen, "%s: [appliance %s] has no public_key (needed with "
					      "--appliance-key; nlevel-key --appliance %s --out FILE "
					      "makes its key and prints the line)", x->path,
				 x->app[a].name, x->app[a].name);
			return -EINVAL;
		}
	if (nl_appkey_load(keyfile, sk, pk, kerr, sizeof(kerr)) != 0) {
		snprintf(err, errlen, "--appliance-key: %s", kerr);
		return -EINVAL;
	}
	if (memcmp(pk, me->pk, sizeof(pk)) != 0) {
		nl_appkey_pub_hex(pk, hex);
		snprintf(err, errlen, "%s:%u: --appliance-key %s is not appliance %s's key: its "
				      "public key is %s", x->path, me->pk_line, keyfile, me->name, hex);
		rc = -EINVAL;
	}
	for (unsigned int a = 0; rc == 0 && a < x->n_app; a++) {
		if (a == (unsigned int)x->self)
			continue;
		if (nl_appkey_pair(sk, pk, x->app[a].pk, &x->pair[a]) != 0) {
			snprintf(err, errlen, "%s:%u: [appliance %s] public_key: unusable (a low-order "
					      "point, or the same key as appliance %s)", x->path,
				 x->app[a].pk_line, x->app[a].name, me->name);
			rc = -EINVAL;
		}
	}
	sodium_memzero(sk, sizeof(sk));
	x->paired = rc == 0;
	return rc;
}
