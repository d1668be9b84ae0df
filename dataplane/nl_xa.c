/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out (nl_xa.h): placement, proxies, hand-over and hand-back of tasks between
 * appliances, membership and group-load summaries by gossip. Control lcore only (X2).
 */
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

#include "nl_atomic.h"
#include "nl_dp_inline.h"
#include "nl_dp_port.h"
#include "nl_gossip.h"
#include "nl_policy.h"
#include "nl_rng.h"
#include "nl_xa.h"

#define XA_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

/* meta->xa_state */
#define XA_OWN 0     /* ours, here */
#define XA_PARKED 1  /* ours, handed to another appliance (meta->xa_at) */
#define XA_FOREIGN 2 /* another appliance's (meta->xa_origin), carried here */

#define XA_MAX_ROOTS 256u

struct xa_root {
	uint32_t mgr;        /* subtree root manager */
	uint16_t app;        /* owner */
	uint16_t k;          /* index among the owner's roots (gossip src = app * 64 + k) */
	uint32_t *mach;      /* machines of the subtree */
	unsigned int n_mach;
	/* the last summary of this root (own: made; remote: received); telemetry reads it */
	double created_s;
	double rx_s;         /* when it was received (own: made) [CLOCK_REALTIME s] */
	uint32_t live, idle, n_sub;
	uint64_t free_mask;
	uint32_t backlog_us;
	uint64_t n_rx;
};

struct xa_peer {
	bool live;           /* not declared gone */
	bool mac_known;
	uint8_t mac[6];
	uint64_t inc;        /* incarnation last seen (0 = never heard) */
	double last_rx_s;
	struct nl_xa_msg out_task, out_back; /* batches being filled */
	size_t out_task_len;
	/* counters (control writes, telemetry reads relaxed) */
	uint64_t tx_tasks, rx_tasks, tx_backs, rx_backs, tx_dgrams, rx_dgrams;
	uint64_t lost_tasks, gone, rejoined;
};

struct nl_xa {
	struct nl_dp *dp;
	struct nl_xa_cfg cfg;
	unsigned int self;
	uint64_t inc;
	uint8_t *mgr_app;    /* [n_mgr] */
	uint8_t *mach_app;   /* [n_mach] */
	struct nl_dp_lcore *proxy;
	struct xa_peer peer[NL_XA_MAX_APPS];
	struct xa_root root[XA_MAX_ROOTS];
	unsigned int n_root;
	uint32_t seq;
	uint64_t foreign_live;
	uint64_t parked;
	uint64_t stale_back, bad_peer, bad_task, lost_tasks, overload_in, not_ours, moved;
	uint64_t gossip_rounds, sum_tx, sum_rx;
	struct nl_gossip_view *view;
	struct nl_gossip_cfg gcfg;
	struct nl_rng rng;
	double start_s, next_gossip_s;
	uint64_t next_check_tsc, check_cyc;
	struct nl_gossip_rec *grec;  /* scratch */
	struct nl_gossip_ack *gack;
	size_t gcap;
};

static double
real_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- configuration ---- */

static int
name_is_manager(const char *s)
{
	unsigned int lv;
	char bits[80];

	if (strcmp(s, "global") == 0 || strcmp(s, "M(0,root)") == 0)
		return 1;
	if (sscanf(s, "group%u", &lv) == 1)
		return 1;
	if (sscanf(s, "M(%u,%70[01*])", &lv, bits) == 2 && strlen(bits) == lv &&
	    s[strlen(s) - 1] == ')')
		return 1;
	return 0;
}

int
nl_xa_cfg_parse(struct nl_cfg *c, const char *self, struct nl_xa_cfg *out)
{
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
			unsigned int b[6];

			if (sscanf(v, "%2x:%2x:%2x:%2x:%2x:%2x", &b[0], &b[1], &b[2], &b[3], &b[4],
				   &b[5]) != 6)
				return nl_cfg_error(c, nl_cfg_find(c, sec, "mac"),
						    "'%s' is not a MAC address (aa:bb:cc:dd:ee:ff)", v);
			for (int k = 0; k < 6; k++)
				a->mac[k] = (uint8_t)b[k];
			a->has_mac = true;
		}
		rc = nl_cfg_get_str(c, sec, "owns", &v, false);
		if (rc < 0)
			return rc;
		e = nl_cfg_find(c, sec, "owns");
		a->owns_line = e != NULL ? e->line : c->section_line[i];
		while (rc == 1 && *v != '\0') {
			size_t len;
			const char *end;

			while (*v == ' ' || *v == ',')
				v++;
			if (*v == '\0')
				break;
			/* a name ends at the comma after its closing parenthesis, if it has one */
			end = v;
			while (*end != '\0' && *end != ',' && *end != '(')
				end++;
			if (*end == '(') {
				while (*end != '\0' && *end != ')')
					end++;
				if (*end == ')')
					end++;
			}
			len = (size_t)(end - v);
			while (len > 0 && v[len - 1] == ' ')
				len--;
			if (a->n_owns == NL_XA_MAX_OWNS || len >= NL_XA_NAME_LEN)
				return nl_cfg_error(c, e, "too many or too long names (at most %u of %u)",
						    NL_XA_MAX_OWNS, NL_XA_NAME_LEN - 1);
			memcpy(a->owns[a->n_owns], v, len);
			a->owns[a->n_owns][len] = '\0';
			if (!name_is_manager(a->owns[a->n_owns]))
				return nl_cfg_error(c, e,
						    "'%s' names no manager (NLSC: M(0,root), M(K,bits); "
						    "2LSC: global, groupG)",
						    a->owns[a->n_owns]);
			for (unsigned int k = 0; k <= out->n_app; k++)
				for (unsigned int j = 0; j < out->app[k].n_owns; j++)
					if (strcmp(out->app[k].owns[j], a->owns[a->n_owns]) == 0)
						return nl_cfg_error(c, e, "'%s' is owned twice (also by [appliance %s])",
								    a->owns[a->n_owns], out->app[k].name);
			a->n_owns++;
			v = end;
		}
		if (self != NULL && strcmp(self, a->name) == 0)
			out->self = (int)out->n_app;
		out->n_app++;
	}
	out->gossip_period_s = 0.05;
	out->gone_after_s = 1.0;
	out->fanout = 2;
	if (nl_cfg_has_section(c, "scaleout")) {
		double ms = 50;
		uint64_t f = 2;
		int rc = nl_cfg_get_double(c, "scaleout", "gossip_period_ms", &ms, 1, 60000, false);

		if (rc >= 0)
			rc = nl_cfg_get_double(c, "scaleout", "gone_after_s", &out->gone_after_s, 0.01,
					       3600, false);
		if (rc >= 0)
			rc = nl_cfg_get_u64(c, "scaleout", "fanout", &f, 1, NL_GOSSIP_MAX_FANOUT, false);
		if (rc < 0)
			return rc;
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

static uint32_t
mgr_parent(const struct nl_sched *s, uint32_t m)
{
	if (s->ops == &nl_policy_2lsc)
		return m == nl_2lsc_global_mgr(s) ? NL_NODE_NONE : nl_2lsc_global_mgr(s);
	return s->tree->node[m].parent;
}

/* The manager that dispatches to machine m (NLSC: its leaf; 2LSC: its group). */
static uint32_t
mach_home(const struct nl_sched *s, uint32_t m)
{
	const struct nl_tree *tr = s->tree;

	if (s->ops == &nl_policy_2lsc)
		return nl_2lsc_group_of(s, m);
	for (uint32_t l = 0; l < tr->n_leaf; l++)
		for (uint32_t j = tr->leaf_off[l]; j < tr->leaf_off[l + 1]; j++)
			if (tr->leaf_mach[j] == m)
				return tr->leaf_node[l];
	return 0;
}

static bool
is_under(const struct nl_sched *s, uint32_t m, uint32_t root)
{
	for (uint32_t x = m; x != NL_NODE_NONE; x = mgr_parent(s, x))
		if (x == root)
			return true;
	return false;
}

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
	r->k = (uint16_t)k;
	r->mach = calloc(s->n_mach, sizeof(uint32_t));
	if (r->mach == NULL)
		return -ENOMEM;
	for (uint32_t m = 0; m < s->n_mach; m++)
		if (is_under(s, mach_home(s, m), mgr))
			r->mach[r->n_mach++] = m;
	return 0;
}

int
nl_xa_attach_ctl(struct nl_dp *dp, const struct nl_xa_cfg *cfg)
{
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
	dp->xa = xa;
	xa->dp = dp;
	xa->cfg = *cfg;
	xa->self = (unsigned int)cfg->self;
	do
		randombytes_buf(&xa->inc, sizeof(xa->inc));
	while (xa->inc == 0);
	nl_rng_seed(&xa->rng, xa->inc);
	xa->mgr_app = calloc(dp->n_mgr, 1);
	xa->mach_app = calloc(dp->n_mach, 1);
	if (xa->mgr_app == NULL || xa->mach_app == NULL)
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
	for (uint32_t m = 0; m < dp->n_mach; m++)
		xa->mach_app[m] = xa->mgr_app[mach_home(s, m)];
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
	for (unsigned int a = 0; a < cfg->n_app; a++) {
		xa->peer[a].live = true; /* until silent for gone_after_s from our start */
		xa->peer[a].mac_known = cfg->app[a].has_mac;
		memcpy(xa->peer[a].mac, cfg->app[a].mac, 6);
		xa->peer[a].out_task.type = NL_XA_MSG_HANDOVER;
		xa->peer[a].out_back.type = NL_XA_MSG_HANDBACK;
	}
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
	xa->start_s = real_s();
	xa->check_cyc = rte_get_tsc_hz() / 100;
	free(listed);
	return 0;
fail:
	free(listed);
	nl_xa_free(xa);
	dp->xa = NULL;
	return rc;
}

void
nl_xa_free(struct nl_xa *xa)
{
	if (xa == NULL)
		return;
	for (unsigned int i = 0; i < xa->n_root; i++)
		free(xa->root[i].mach);
	nl_gossip_view_free(xa->view);
	free(xa->grec);
	free(xa->gack);
	rte_free(xa->proxy);
	free(xa->mgr_app);
	free(xa->mach_app);
	free(xa);
}

struct nl_dp_lcore *
nl_xa_mgr_lcore(struct nl_xa *xa, uint32_t mgr, struct nl_dp_lcore *lc)
{
	if (xa == NULL || xa->mgr_app[mgr] == xa->self)
		return lc;
	return xa->proxy;
}

bool
nl_xa_owns_mach(const struct nl_xa *xa, uint32_t m)
{
	return xa == NULL || xa->mach_app[m] == xa->self;
}

uint64_t
nl_xa_foreign_live(const struct nl_xa *xa)
{
	return xa == NULL ? 0 : nl_atomic_load_relaxed(&xa->foreign_live);
}

/* ---------------------------------------------------------------- sending ---- */

static void
send_msg(struct io *io, unsigned int app, const struct nl_xa_msg *m)
{
	struct nl_xa *xa = io->dp->xa;
	struct xa_peer *p = &xa->peer[app];
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t buf[NL_PROTO_MAX_LEN];
	int n = nl_xa_encode(m, buf, sizeof(buf));

	if (n < 0) {
		nl_stat_add_st(&io->dp->tx_fail, 1);
		return;
	}
	/* until we heard from it (or were told its MAC), Ethernet broadcast on our segment */
	nl_dp_io_send_bytes(io, buf, (size_t)n, p->mac_known ? p->mac : bcast,
			    xa->cfg.app[app].ip, xa->cfg.app[app].port);
	nl_stat_add_st(&p->tx_dgrams, 1);
}

static void
flush_peer(struct io *io, unsigned int app)
{
	struct xa_peer *p = &io->dp->xa->peer[app];

	if (p->out_task.n > 0) {
		send_msg(io, app, &p->out_task);
		p->out_task.n = 0;
		p->out_task_len = 0;
	}
	if (p->out_back.n > 0) {
		send_msg(io, app, &p->out_back);
		p->out_back.n = 0;
	}
}

static void
prep(struct nl_xa *xa, struct nl_xa_msg *m)
{
	m->from_app = (uint16_t)xa->self;
	m->incarnation = xa->inc;
}

static void
queue_task(struct io *io, unsigned int app, const struct nl_xa_task *r)
{
	struct xa_peer *p = &io->dp->xa->peer[app];
	size_t len = nl_xa_task_wire_len(r);

	if (p->out_task.n == NL_XA_MAX_TASKS || p->out_task_len + len > NL_XA_ROOM)
		flush_peer(io, app);
	prep(io->dp->xa, &p->out_task);
	p->out_task.u.task[p->out_task.n++] = *r;
	p->out_task_len += len;
	p->tx_tasks++;
}

static void
queue_back(struct io *io, unsigned int app, const struct nl_xa_back *r)
{
	struct xa_peer *p = &io->dp->xa->peer[app];

	if (p->out_back.n == NL_XA_MAX_BACKS)
		flush_peer(io, app);
	prep(io->dp->xa, &p->out_back);
	p->out_back.u.back[p->out_back.n++] = *r;
	p->tx_backs++;
}

/* ---------------------------------------------------------------- task ends ---- */

static void
set_failed(struct nl_task *t, enum nl_reject_reason why)
{
	t->flags = (t->flags & ~(NL_MODEL_SUBS_MASK | (0xffu << NL_TF_REASON_SHIFT))) |
		   NL_TF_FAILED | ((uint32_t)why << NL_TF_REASON_SHIFT);
}

bool
nl_xa_finish_ctl(struct io *io, struct nl_task *t)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	struct nl_dp_meta *mt = &dp->meta[t->aux];
	struct nl_xa_back b;

	if (xa == NULL || mt->xa_state != XA_FOREIGN)
		return false;
	memset(&b, 0, sizeof(b));
	b.task_id = t->id;
	b.origin_token = mt->xa_token;
	b.origin_seq = mt->xa_seq;
	b.reason = (t->flags & NL_TF_FAILED) ?
			   (uint16_t)((t->flags >> NL_TF_REASON_SHIFT) & 0xff) : 0;
	if ((t->flags & NL_TF_FAILED) && b.reason == 0)
		b.reason = NL_REJECT_OVERLOAD;
	b.n_done = mt->n_done;
	b.status = mt->status;
	b.hops = t->hops;
	queue_back(io, mt->xa_origin, &b);
	mt->active = 0;
	mt->xa_state = XA_OWN;
	rte_mempool_put(dp->pool, t);
	nl_atomic_store_relaxed(&xa->foreign_live, xa->foreign_live - 1);
	return true;
}

/* A task we cannot carry on here: ours is answered REJECT `why`; a foreign one is handed back
 * failed (nl_xa_finish_ctl() from the port's finish). */
static void
fail_task(struct io *io, struct nl_task *t, enum nl_reject_reason why)
{
	set_failed(t, why);
	nl_dp_port_finish(io, t);
}

/* ---------------------------------------------------------------- hand-over out ---- */

static void
hand_out(struct io *io, struct nl_task *t, uint32_t to_mgr)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	struct nl_dp_meta *mt = &dp->meta[t->aux];
	unsigned int app = xa->mgr_app[to_mgr];
	struct nl_xa_task r;
	uint64_t now = rte_rdtsc();

	if (!xa->peer[app].live) { /* its appliance is gone: nowhere to carry it */
		xa->peer[app].lost_tasks++;
		xa->lost_tasks++;
		fail_task(io, t, NL_REJECT_MACHINE_LOST);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.task_id = t->id;
	r.need = t->need;
	r.instr = (uint64_t)t->instr;
	r.data_bits = (uint64_t)t->data_bits;
	r.age_us = (uint64_t)((double)(now - mt->ingress_tsc) / (double)rte_get_tsc_hz() * 1e6);
	r.to_mgr = (uint16_t)to_mgr;
	r.n_split = t->n_split;
	r.hops = t->hops;
	r.cmd_id = mt->cmd_id;
	r.args_len = mt->args_len;
	memcpy(r.args, mt->args, mt->args_len);
	if (mt->xa_state == XA_FOREIGN) { /* passing through: it stays the origin's */
		r.origin_app = mt->xa_origin;
		r.origin_token = mt->xa_token;
		r.origin_seq = mt->xa_seq;
		queue_task(io, app, &r);
		if (app != mt->xa_origin) { /* tell the origin whom to wait for (X1) */
			struct nl_xa_back mv = { .task_id = t->id,
						 .origin_token = mt->xa_token,
						 .origin_seq = mt->xa_seq,
						 .reason = NL_XA_REASON_MOVED,
						 .hops = t->hops,
						 .at_app = (uint16_t)app };

			queue_back(io, mt->xa_origin, &mv);
		}
		mt->xa_state = XA_OWN;
		rte_mempool_put(dp->pool, t);
		nl_atomic_store_relaxed(&xa->foreign_live, xa->foreign_live - 1);
		return;
	}
	mt->xa_state = XA_PARKED; /* ours: parked, in flight elsewhere (X1) */
	mt->xa_at = (uint16_t)app;
	mt->xa_seq = ++xa->seq;
	r.origin_app = (uint16_t)xa->self;
	r.origin_token = t->aux;
	r.origin_seq = mt->xa_seq;
	nl_atomic_store_relaxed(&xa->parked, xa->parked + 1);
	queue_task(io, app, &r);
}

/* Drain the proxies' inboxes (the pending bits other lcores set, as a manager lcore does). */
static unsigned int
drain_proxies(struct io *io)
{
	struct nl_xa *xa = io->dp->xa;
	struct nl_dp_lcore *px = xa->proxy;
	unsigned int work = 0, n_words = (px->n_mgr + 63) / 64;

	for (unsigned int w = 0; w < n_words; w++) {
		uint64_t bits;

		if (nl_atomic_load_relaxed(&px->pend[w]) == 0)
			continue;
		bits = nl_atomic_xchg_acquire(&px->pend[w], 0);
		while (bits != 0) {
			unsigned int b = (unsigned int)__builtin_ctzll(bits);
			struct nl_dp_mgr *mg = px->mgr[w * 64 + b];
			struct nl_dp_msg msg[32];
			unsigned int n;

			bits &= bits - 1;
			n = rte_ring_sc_dequeue_burst_elem(mg->inbox, msg, sizeof(msg[0]), 32, NULL);
			for (unsigned int i = 0; i < n; i++)
				hand_out(io, msg[i].t, mg->id);
			mg->tasks_in += n;
			work += n;
			if (rte_ring_count(mg->inbox) > 0)
				nl_dp_mgr_mark(mg);
		}
	}
	return work;
}

/* ---------------------------------------------------------------- hand-over in ---- */

static void
reject_back(struct io *io, const struct nl_xa_task *r, enum nl_reject_reason why)
{
	struct nl_xa_back b = { .task_id = r->task_id,
				.origin_token = r->origin_token,
				.origin_seq = r->origin_seq,
				.reason = (uint16_t)why,
				.hops = r->hops };

	queue_back(io, r->origin_app, &b);
}

static bool
inbox_put_ctl(struct nl_dp *dp, struct nl_task *t, uint32_t to)
{
	struct nl_dp_msg msg = { .t = t, .stamp_vt = nl_dp_now_vt(dp) };

	t->at_mgr = to;
	if (rte_ring_mp_enqueue_elem(dp->mgr[to].inbox, &msg, sizeof(msg)) != 0)
		return false;
	nl_dp_mgr_mark(&dp->mgr[to]);
	return true;
}

static struct nl_task *
parked_lookup(struct nl_xa *xa, uint32_t token, uint32_t seq, uint64_t id)
{
	struct nl_dp *dp = xa->dp;
	struct nl_dp_meta *mt;

	if (token >= dp->n_meta)
		return NULL;
	mt = &dp->meta[token];
	if (mt->task == NULL || mt->xa_state != XA_PARKED || mt->xa_seq != seq || mt->task->id != id)
		return NULL;
	return mt->task;
}

static void
unpark(struct nl_xa *xa, struct nl_task *t)
{
	xa->dp->meta[t->aux].xa_state = XA_OWN;
	nl_atomic_store_relaxed(&xa->parked, xa->parked - 1);
}

static void
hand_in(struct io *io, const struct nl_xa_task *r)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	struct nl_dp_meta *mt;
	struct nl_task *t;
	void *obj;

	if (r->to_mgr >= dp->n_mgr || r->origin_app >= xa->cfg.n_app) {
		xa->bad_task++;
		if (r->origin_app < xa->cfg.n_app && r->origin_app != xa->self)
			reject_back(io, r, NL_REJECT_BAD_TASK);
		return;
	}
	if (r->origin_app == xa->self) { /* one of ours comes back (e.g. up to our root) */
		t = parked_lookup(xa, r->origin_token, r->origin_seq, r->task_id);
		if (t == NULL) {
			xa->stale_back++;
			return;
		}
		unpark(xa, t);
		t->hops = r->hops;
		if (!inbox_put_ctl(dp, t, r->to_mgr))
			fail_task(io, t, NL_REJECT_OVERLOAD);
		return;
	}
	if (rte_mempool_get(dp->pool, &obj) != 0) {
		xa->overload_in++;
		reject_back(io, r, NL_REJECT_OVERLOAD);
		return;
	}
	t = obj;
	mt = &dp->meta[t->aux];
	t->id = r->task_id;
	t->need = r->need;
	t->instr = (double)r->instr;
	t->data_bits = (double)r->data_bits;
	t->n_split = r->n_split;
	t->t_arrive_vt = nl_dp_now_vt(dp) - (double)r->age_us * 1000.0 / dp->o.ns_per_vt;
	t->sched_wait_vt = 0;
	t->hops = r->hops;
	t->flags = 0;
	memset(&mt->client_ts_ns, 0, offsetof(struct nl_dp_meta, sub_mach) -
					     offsetof(struct nl_dp_meta, client_ts_ns));
	mt->active = 0;
	mt->ingress_tsc = rte_rdtsc() - (uint64_t)((double)r->age_us * 1e-6 *
						   (double)rte_get_tsc_hz());
	mt->cmd_id = r->cmd_id;
	mt->args_len = r->args_len;
	memcpy(mt->args, r->args, r->args_len);
	memset(mt->sub_mach, 0xff, sizeof(mt->sub_mach));
	mt->xa_state = XA_FOREIGN;
	mt->xa_origin = r->origin_app;
	mt->xa_token = r->origin_token;
	mt->xa_seq = r->origin_seq;
	nl_atomic_store_relaxed(&xa->foreign_live, xa->foreign_live + 1);
	if (!inbox_put_ctl(dp, t, r->to_mgr))
		fail_task(io, t, NL_REJECT_OVERLOAD); /* handed back failed */
}

static void
back_in(struct io *io, const struct nl_xa_back *b)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	struct nl_task *t = parked_lookup(xa, b->origin_token, b->origin_seq, b->task_id);
	struct nl_dp_meta *mt;

	if (t == NULL) { /* answered already (its appliance was declared gone), or forged */
		xa->stale_back++;
		return;
	}
	if (b->reason == NL_XA_REASON_MOVED) { /* still away: now at another appliance */
		if (b->at_app < xa->cfg.n_app && b->at_app != xa->self)
			dp->meta[t->aux].xa_at = b->at_app;
		xa->moved++;
		return;
	}
	unpark(xa, t);
	mt = &dp->meta[t->aux];
	mt->n_done = (uint8_t)b->n_done;
	mt->status = b->status;
	t->hops = b->hops;
	t->flags &= ~NL_MODEL_SUBS_MASK;
	if (b->reason != 0)
		set_failed(t, (enum nl_reject_reason)b->reason);
	nl_dp_port_finish(io, t);
}

/* ---------------------------------------------------------------- membership ---- */

/* Appliance `app` is gone (silent past its records' lifetime, or restarted): what was parked
 * at it is answered REJECT machine_lost, now (X1: each exactly once). */
static void
declare_lost(struct io *io, unsigned int app, const char *why)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	uint64_t n = 0;

	flush_peer(io, app);
	for (unsigned int i = 0; i < dp->n_meta; i++) {
		struct nl_dp_meta *mt = &dp->meta[i];

		if (mt->xa_state != XA_PARKED || mt->xa_at != app || mt->task == NULL)
			continue;
		unpark(xa, mt->task);
		fail_task(io, mt->task, NL_REJECT_MACHINE_LOST);
		n++;
	}
	xa->peer[app].lost_tasks += n;
	xa->lost_tasks += n;
	XA_LOG(WARNING, "appliance %s %s: %llu tasks parked there answered REJECT machine_lost\n",
	       xa->cfg.app[app].name, why, (unsigned long long)n);
}

static void
peer_heard(struct io *io, unsigned int app, uint64_t inc, const struct nl_frame_addr *a)
{
	struct nl_xa *xa = io->dp->xa;
	struct xa_peer *p = &xa->peer[app];

	memcpy(p->mac, a->src_mac, 6);
	p->mac_known = true;
	p->last_rx_s = real_s();
	p->rx_dgrams++;
	if (p->inc != 0 && p->inc != inc) {
		declare_lost(io, app, "restarted");
		p->gone++;
		if (p->live)
			p->rejoined++;
	}
	p->inc = inc;
	if (!p->live) {
		p->live = true;
		p->rejoined++;
		XA_LOG(INFO, "appliance %s rejoined\n", xa->cfg.app[app].name);
	}
}

/* ---------------------------------------------------------------- summaries ---- */

static void
make_summary(struct io *io, struct xa_root *r, double now_s, struct nl_gossip_rec *g)
{
	struct nl_dp *dp = io->dp;
	const struct nl_dp_gen *gen = dp->gen_rcu;
	double now_vt = nl_dp_now_vt(dp), backlog = 0;
	uint32_t live = 0, idle = 0, n_sub = 0;
	uint64_t mask = 0;

	for (unsigned int j = 0; j < r->n_mach; j++) {
		uint32_t m = r->mach[j];
		const struct nl_mach_load *w = nl_load_entry_ctl(dp->load, m);

		if (!io->alive[m] || w == NULL)
			continue;
		live++;
		n_sub += w->n_sub;
		if (w->busy_until_vt > now_vt)
			backlog += w->busy_until_vt - now_vt;
		else {
			idle++;
			mask |= gen->mach[m].res.set | gen->mach[m].res.any;
		}
	}
	memset(g, 0, sizeof(*g));
	g->src = r->app * 64u + r->k;
	g->cores = live;
	g->free_cores = idle;
	g->mem_mb = n_sub;
	g->arch = (uint16_t)r->mgr;
	g->state = NL_GOSSIP_UP;
	g->created_s = now_s;
	g->lifetime_s = io->dp->xa->cfg.gone_after_s;
	g->aux[0] = io->dp->xa->inc;
	g->aux[1] = mask;
	g->aux[2] = live > 0 ? (uint64_t)(backlog / live) : 0; /* mean backlog [us] */
	r->created_s = r->rx_s = now_s;
	r->live = live;
	r->idle = idle;
	r->n_sub = n_sub;
	r->free_mask = mask;
	r->backlog_us = (uint32_t)g->aux[2];
}

static struct xa_root *
root_of_src(struct nl_xa *xa, uint32_t src)
{
	for (unsigned int i = 0; i < xa->n_root; i++)
		if (xa->root[i].app * 64u + xa->root[i].k == src)
			return &xa->root[i];
	return NULL;
}

static void
gossip_round(struct io *io, double now_s)
{
	struct nl_xa *xa = io->dp->xa;
	bool present[NL_XA_MAX_APPS] = { false };
	struct nl_xa_msg m;
	size_t n;

	for (unsigned int i = 0; i < xa->n_root; i++) {
		struct nl_gossip_rec g;

		if (xa->root[i].app != xa->self)
			continue;
		make_summary(io, &xa->root[i], now_s, &g);
		if (xa->root[i].k == 0)
			nl_gossip_set_self_st(xa->view, &g);
		else
			nl_gossip_merge_st(xa->view, &g, now_s);
	}
	nl_gossip_expire_st(xa->view, now_s);
	n = nl_gossip_collect_st(xa->view, &xa->gcfg, now_s, xa->grec, xa->gcap);
	/* membership: an appliance is live while one of its records is */
	for (size_t i = 0; i < n; i++)
		if (xa->grec[i].state == NL_GOSSIP_UP && xa->grec[i].src / 64u < NL_XA_MAX_APPS)
			present[xa->grec[i].src / 64u] = true;
	for (unsigned int a = 0; a < xa->cfg.n_app; a++) {
		struct xa_peer *p = &xa->peer[a];

		if (a == xa->self || present[a] || !p->live ||
		    now_s - xa->start_s < xa->cfg.gone_after_s)
			continue;
		p->live = false;
		p->gone++;
		declare_lost(io, a, "gone (no gossip record within gone_after_s)");
	}
	/* push every valid record to `fanout` appliances drawn at random (gone ones included,
	 * so one that comes back hears from us) */
	memset(&m, 0, sizeof(m));
	m.type = NL_XA_MSG_SUMMARY;
	prep(xa, &m);
	for (unsigned int f = 0; f < xa->cfg.fanout && f + 1 < xa->cfg.n_app; f++) {
		/* fan-out >= peers: everyone once, in turn; else a random peer per draw */
		unsigned int a = xa->cfg.fanout + 1 >= xa->cfg.n_app ?
					 (xa->self + 1 + f) % xa->cfg.n_app :
					 (unsigned int)(nl_rng_u64(&xa->rng) % (xa->cfg.n_app - 1));

		if (xa->cfg.fanout + 1 < xa->cfg.n_app && a >= xa->self)
			a++;
		for (size_t i = 0; i < n;) {
			m.n = 0;
			while (i < n && m.n < NL_XA_MAX_SUMS) {
				const struct nl_gossip_rec *g = &xa->grec[i++];
				struct nl_xa_sum *s = &m.u.sum[m.n++];

				s->src = g->src;
				s->cores = g->cores;
				s->free_cores = g->free_cores;
				s->mem_mb = g->mem_mb;
				s->arch = g->arch;
				s->state = g->state;
				s->flags = g->flags;
				s->created_s = g->created_s;
				s->lifetime_s = g->lifetime_s;
				memcpy(s->aux, g->aux, sizeof(s->aux));
			}
			send_msg(io, a, &m);
			xa->sum_tx += m.n;
		}
	}
	xa->gossip_rounds++;
}

static void
summary_in(struct io *io, const struct nl_xa_msg *m)
{
	struct nl_xa *xa = io->dp->xa;
	double now_s = real_s();
	size_t n_ack = 0, n_new = 0;

	for (unsigned int i = 0; i < m->n; i++) {
		const struct nl_xa_sum *s = &m->u.sum[i];
		struct nl_gossip_rec *g = &xa->grec[i];

		memset(g, 0, sizeof(*g));
		g->src = s->src;
		g->cores = s->cores;
		g->free_cores = s->free_cores;
		g->mem_mb = s->mem_mb;
		g->arch = s->arch;
		g->state = s->state;
		g->flags = s->flags;
		g->created_s = s->created_s;
		g->lifetime_s = s->lifetime_s;
		memcpy(g->aux, s->aux, sizeof(g->aux));
	}
	nl_gossip_receive_st(xa->view, xa->grec, m->n, now_s, xa->gack, &n_ack, &n_new);
	xa->sum_rx += m->n;
	for (unsigned int i = 0; i < m->n; i++) {
		const struct nl_xa_sum *s = &m->u.sum[i];
		struct xa_root *r = root_of_src(xa, s->src);
		unsigned int app = s->src / 64u;

		if (r == NULL || r->app == xa->self || s->created_s <= r->created_s)
			continue;
		r->created_s = s->created_s;
		r->rx_s = now_s;
		r->live = s->cores;
		r->idle = s->free_cores;
		r->n_sub = s->mem_mb;
		r->free_mask = s->aux[1];
		r->backlog_us = (uint32_t)s->aux[2];
		r->n_rx++;
		/* a record younger than our last word from it, of another incarnation: restarted */
		if (app < xa->cfg.n_app && app != xa->self && s->state == NL_GOSSIP_UP &&
		    now_s - s->created_s < xa->cfg.gone_after_s && !xa->peer[app].live) {
			xa->peer[app].live = true;
			xa->peer[app].rejoined++;
			XA_LOG(INFO, "appliance %s rejoined (gossip)\n", xa->cfg.app[app].name);
		}
	}
}

/* ---------------------------------------------------------------- rounds ---- */

unsigned int
nl_xa_poll_ctl(struct io *io)
{
	struct nl_xa *xa = io->dp->xa;
	unsigned int work;
	uint64_t now = rte_rdtsc();

	if (xa == NULL)
		return 0;
	work = drain_proxies(io);
	if (now >= xa->next_check_tsc) { /* 100 times a second: is a gossip round due? */
		double s = real_s();

		xa->next_check_tsc = now + xa->check_cyc;
		if (s >= xa->next_gossip_s) {
			xa->next_gossip_s = s + xa->cfg.gossip_period_s;
			gossip_round(io, s);
			work++;
		}
	}
	for (unsigned int a = 0; a < xa->cfg.n_app; a++)
		if (xa->peer[a].out_task.n > 0 || xa->peer[a].out_back.n > 0)
			flush_peer(io, a);
	return work;
}

void
nl_xa_rx_ctl(struct io *io, const struct nl_frame_addr *a, const uint8_t *pl, size_t plen)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	static struct nl_xa_msg m; /* control lcore only (X2); too large for its stack */
	enum nl_proto_err e;

	if (xa == NULL) {
		nl_stat_add_st(&dp->drops[NL_PROTO_E_TYPE], 1); /* not split: not ours to take */
		return;
	}
	if (a->dst_ip != dp->o.ip) { /* flooded by a switch to everyone (broadcast): not ours */
		nl_stat_add_st(&xa->not_ours, 1);
		return;
	}
	e = nl_xa_open(dp->o.auth ? &dp->o.auth_key : NULL, &io->rp, pl, plen, io->now_ns, &m);
	if (e != NL_PROTO_OK) {
		nl_stat_add_st(&dp->drops[e], 1);
		return;
	}
	/* the sender must be a configured appliance, speaking from its configured address */
	if (m.from_app >= xa->cfg.n_app || m.from_app == xa->self ||
	    xa->cfg.app[m.from_app].ip != a->src_ip || xa->cfg.app[m.from_app].port != a->src_port) {
		nl_stat_add_st(&xa->bad_peer, 1);
		return;
	}
	peer_heard(io, m.from_app, m.incarnation, a);
	switch (m.type) {
	case NL_XA_MSG_HANDOVER:
		xa->peer[m.from_app].rx_tasks += m.n;
		for (unsigned int i = 0; i < m.n; i++)
			hand_in(io, &m.u.task[i]);
		break;
	case NL_XA_MSG_HANDBACK:
		xa->peer[m.from_app].rx_backs += m.n;
		for (unsigned int i = 0; i < m.n; i++)
			back_in(io, &m.u.back[i]);
		break;
	default:
		summary_in(io, &m);
		break;
	}
}

void
nl_xa_drain_ctl(struct nl_dp *dp)
{
	struct nl_xa *xa = dp->xa;
	uint64_t n = 0;

	if (xa == NULL)
		return;
	for (unsigned int i = 0; i < dp->n_meta; i++) {
		struct nl_dp_meta *mt = &dp->meta[i];

		if (mt->xa_state == XA_PARKED && mt->task != NULL) {
			mt->xa_state = XA_OWN;
			rte_mempool_put(dp->pool, mt->task);
			n++;
		}
	}
	xa->parked = 0;
	nl_stat_add_st(&dp->failed, n); /* I1: what a stop leaves unfinished is reported failed */
}

/* ---------------------------------------------------------------- telemetry ---- */

static struct nl_dp *xa_tel_dp;

static int
tel_appliances(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_xa *xa = xa_tel_dp != NULL ? xa_tel_dp->xa : NULL;
	double now_s = real_s();
	enum { K_NAME, K_IP, K_LIVE, K_TOUT, K_TIN, K_BOUT, K_BIN, K_DOUT, K_DIN, K_LOST, K_GONE,
	       K_REJ, K_HEARD, K_N };
	static const char *const key[K_N] = { "name", "ip", "live", "tasks_out", "tasks_in",
					      "handbacks_out", "handbacks_in", "datagrams_out",
					      "datagrams_in", "lost_tasks", "gone", "rejoined",
					      "last_heard_ms" };
	struct rte_tel_data *a[K_N];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (xa == NULL)
		return 0;
	rte_tel_data_add_dict_string(d, "self", xa->cfg.app[xa->self].name);
	rte_tel_data_add_dict_u64(d, "incarnation", xa->inc);
	rte_tel_data_add_dict_u64(d, "parked", nl_atomic_load_relaxed(&xa->parked));
	rte_tel_data_add_dict_u64(d, "foreign", nl_atomic_load_relaxed(&xa->foreign_live));
	rte_tel_data_add_dict_u64(d, "lost_tasks_total", nl_atomic_load_relaxed(&xa->lost_tasks));
	rte_tel_data_add_dict_u64(d, "stale_handback", nl_atomic_load_relaxed(&xa->stale_back));
	rte_tel_data_add_dict_u64(d, "bad_peer", nl_atomic_load_relaxed(&xa->bad_peer));
	rte_tel_data_add_dict_u64(d, "bad_task", nl_atomic_load_relaxed(&xa->bad_task));
	rte_tel_data_add_dict_u64(d, "overload_in", nl_atomic_load_relaxed(&xa->overload_in));
	rte_tel_data_add_dict_u64(d, "not_ours", nl_atomic_load_relaxed(&xa->not_ours));
	rte_tel_data_add_dict_u64(d, "moved", nl_atomic_load_relaxed(&xa->moved));
	rte_tel_data_add_dict_u64(d, "gossip_rounds", nl_atomic_load_relaxed(&xa->gossip_rounds));
	rte_tel_data_add_dict_u64(d, "summaries_tx", nl_atomic_load_relaxed(&xa->sum_tx));
	rte_tel_data_add_dict_u64(d, "summaries_rx", nl_atomic_load_relaxed(&xa->sum_rx));
	for (unsigned int k = 0; k < K_N; k++) {
		a[k] = rte_tel_data_alloc();
		if (a[k] == NULL) {
			while (k > 0)
				rte_tel_data_free(a[--k]);
			return -ENOMEM;
		}
		rte_tel_data_start_array(a[k], k <= K_IP ? RTE_TEL_STRING_VAL :
					 k == K_HEARD ? RTE_TEL_INT_VAL : RTE_TEL_U64_VAL);
	}
	for (unsigned int i = 0; i < xa->cfg.n_app; i++) {
		const struct xa_peer *p = &xa->peer[i];
		char ip[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &xa->cfg.app[i].ip, ip, sizeof(ip));
		rte_tel_data_add_array_string(a[K_NAME], xa->cfg.app[i].name);
		rte_tel_data_add_array_string(a[K_IP], ip);
		rte_tel_data_add_array_u64(a[K_LIVE], i == xa->self || p->live);
		rte_tel_data_add_array_u64(a[K_TOUT], nl_atomic_load_relaxed(&p->tx_tasks));
		rte_tel_data_add_array_u64(a[K_TIN], nl_atomic_load_relaxed(&p->rx_tasks));
		rte_tel_data_add_array_u64(a[K_BOUT], nl_atomic_load_relaxed(&p->tx_backs));
		rte_tel_data_add_array_u64(a[K_BIN], nl_atomic_load_relaxed(&p->rx_backs));
		rte_tel_data_add_array_u64(a[K_DOUT], nl_atomic_load_relaxed(&p->tx_dgrams));
		rte_tel_data_add_array_u64(a[K_DIN], nl_atomic_load_relaxed(&p->rx_dgrams));
		rte_tel_data_add_array_u64(a[K_LOST], nl_atomic_load_relaxed(&p->lost_tasks));
		rte_tel_data_add_array_u64(a[K_GONE], nl_atomic_load_relaxed(&p->gone));
		rte_tel_data_add_array_u64(a[K_REJ], nl_atomic_load_relaxed(&p->rejoined));
		rte_tel_data_add_array_int(a[K_HEARD], p->last_rx_s > 0 ?
						       (int)((now_s - p->last_rx_s) * 1e3) : -1);
	}
	for (unsigned int k = 0; k < K_N; k++)
		rte_tel_data_add_dict_container(d, key[k], a[k], 0);
	return 0;
}

static int
tel_summaries(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_xa *xa = xa_tel_dp != NULL ? xa_tel_dp->xa : NULL;
	double now_s = real_s();
	struct rte_tel_data *a[9];
	static const char *const key[9] = { "root", "appliance", "live", "idle", "n_sub",
					    "backlog_us", "free_res_mask", "age_ms", "received" };

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (xa == NULL)
		return 0;
	for (unsigned int k = 0; k < 9; k++) {
		a[k] = rte_tel_data_alloc();
		if (a[k] == NULL) {
			while (k > 0)
				rte_tel_data_free(a[--k]);
			return -ENOMEM;
		}
		rte_tel_data_start_array(a[k], k <= 1 ? RTE_TEL_STRING_VAL : RTE_TEL_U64_VAL);
	}
	for (unsigned int i = 0; i < xa->n_root; i++) {
		const struct xa_root *r = &xa->root[i];
		char name[64];
		double age = r->created_s > 0 ? (now_s - r->created_s) * 1e3 : -1;

		xa_tel_dp->gen_rcu->s->ops->mgr_name(xa_tel_dp->gen_rcu->s, r->mgr, name,
						     sizeof(name));
		rte_tel_data_add_array_string(a[0], name);
		rte_tel_data_add_array_string(a[1], xa->cfg.app[r->app].name);
		rte_tel_data_add_array_u64(a[2], r->live);
		rte_tel_data_add_array_u64(a[3], r->idle);
		rte_tel_data_add_array_u64(a[4], r->n_sub);
		rte_tel_data_add_array_u64(a[5], r->backlog_us);
		rte_tel_data_add_array_u64(a[6], r->free_mask);
		rte_tel_data_add_array_u64(a[7], age >= 0 ? (uint64_t)age : UINT64_MAX);
		rte_tel_data_add_array_u64(a[8], r->app == xa->self ? 0 : r->n_rx);
	}
	for (unsigned int k = 0; k < 9; k++)
		rte_tel_data_add_dict_container(d, key[k], a[k], 0);
	return 0;
}

void
nl_xa_telemetry_init(struct nl_dp *dp)
{
	xa_tel_dp = dp;
	if (dp->xa == NULL)
		return;
	rte_telemetry_register_cmd("/nlevel/appliances", tel_appliances,
				   "Scale-out: this appliance and each peer (live, tasks and "
				   "hand-backs each way, datagrams, lost tasks, last heard).");
	rte_telemetry_register_cmd("/nlevel/summaries", tel_summaries,
				   "Scale-out: the group-load summary of every subtree root "
				   "(own: made; remote: received by gossip) and its age [ms].");
}
