/* SPDX-License-Identifier: BSD-3-Clause */
/* nl_swimnet: N nl_swim members on a lossy, delaying network in virtual time (nl_swimnet.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nl_swimnet.h"

enum ev_kind { EV_DELIVER, EV_TICK, EV_PAUSE, EV_RESUME };

struct ev {
	uint64_t t_ns;
	uint64_t order;           /* FIFO among equal times */
	uint32_t node;
	uint32_t kind;
	struct nl_swim_msg msg;   /* EV_DELIVER */
};

struct node {
	struct nl_swimnet *net;
	struct nl_swim *sw;
	uint32_t id;
	bool crashed;
	bool paused;
	bool ever_paused;
	uint64_t crash_at_ns;     /* UINT64_MAX: never */
	uint64_t sched_ns;        /* the pending EV_TICK's time, 0 if none */
	struct nl_swim_msg *buf;  /* messages that arrived while paused */
	uint32_t n_buf, cap_buf;
	/* as a subject */
	uint64_t first_suspect_ns, first_dead_ns, all_dead_ns;
	uint32_t dead_seen;       /* live observers that have it DEAD (crashed subject) */
	uint32_t fp_inc;
	bool fp_marked;
};

struct nl_swimnet {
	struct nl_swimnet_cfg cfg;
	struct nl_swimnet_res res;
	struct node *node;
	struct ev *heap;
	size_t n_heap, cap_heap;
	uint64_t order;
	uint64_t now_ns;
	uint64_t rng;
	uint64_t cut_mask;        /* nl_swimnet_partition() */
	uint64_t cut_from_ns, cut_to_ns;
};

static uint64_t
rnd(struct nl_swimnet *net)
{
	uint64_t x = net->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	net->rng = x;
	return x * 2685821657736338717ull;
}

static double
rnd01(struct nl_swimnet *net)
{
	return (double)(rnd(net) >> 11) * (1.0 / 9007199254740992.0);
}

static bool
ev_less(const struct ev *a, const struct ev *b)
{
	return a->t_ns != b->t_ns ? a->t_ns < b->t_ns : a->order < b->order;
}

static int
push(struct nl_swimnet *net, const struct ev *e)
{
	size_t i;

	if (net->n_heap == net->cap_heap) {
		size_t cap = net->cap_heap != 0 ? net->cap_heap * 2 : 1024;
		struct ev *h = realloc(net->heap, cap * sizeof(*h));

		if (h == NULL)
			return -ENOMEM;
		net->heap = h;
		net->cap_heap = cap;
	}
	i = net->n_heap++;
	net->heap[i] = *e;
	net->heap[i].order = net->order++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		struct ev t;

		if (!ev_less(&net->heap[i], &net->heap[p]))
			break;
		t = net->heap[i];
		net->heap[i] = net->heap[p];
		net->heap[p] = t;
		i = p;
	}
	return 0;
}

static void
pop(struct nl_swimnet *net, struct ev *out)
{
	size_t i = 0;

	*out = net->heap[0];
	net->heap[0] = net->heap[--net->n_heap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct ev t;

		if (l < net->n_heap && ev_less(&net->heap[l], &net->heap[m]))
			m = l;
		if (r < net->n_heap && ev_less(&net->heap[r], &net->heap[m]))
			m = r;
		if (m == i)
			break;
		t = net->heap[i];
		net->heap[i] = net->heap[m];
		net->heap[m] = t;
		i = m;
	}
}

static void
schedule_tick(struct node *nd)
{
	uint64_t d = nl_swim_next_deadline(nd->sw);
	struct ev e;

	if (nd->sched_ns != 0 && nd->sched_ns <= d)
		return;
	memset(&e, 0, sizeof(e));
	e.t_ns = d < nd->net->now_ns ? nd->net->now_ns : d;
	e.kind = EV_TICK;
	e.node = nd->id;
	nd->sched_ns = e.t_ns;
	(void)push(nd->net, &e);
}

static int
net_send(void *ctx, uint32_t to, const struct nl_swim_msg *msg)
{
	struct node *nd = ctx;
	struct nl_swimnet *net = nd->net;
	struct ev e;

	net->res.msgs++;
	if (net->cfg.loss > 0 && rnd01(net) < net->cfg.loss)
		return 0;
	if (net->now_ns >= net->cut_from_ns && net->now_ns < net->cut_to_ns && nd->id < 64 &&
	    to < 64 && (((net->cut_mask >> nd->id) ^ (net->cut_mask >> to)) & 1u) != 0)
		return 0;                /* sent across the cut */
	e.t_ns = net->now_ns + net->cfg.delay_min_ns;
	if (net->cfg.delay_max_ns > net->cfg.delay_min_ns)
		e.t_ns += rnd(net) % (net->cfg.delay_max_ns - net->cfg.delay_min_ns + 1);
	e.kind = EV_DELIVER;
	e.node = to;
	e.msg = *msg;
	return push(net, &e);
}

static void
net_change(void *ctx, uint32_t id, enum nl_swim_state old_state, enum nl_swim_state new_state,
	uint32_t incarnation, uint64_t now_ns)
{
	struct node *obs = ctx;
	struct nl_swimnet *net = obs->net;
	struct node *sub = &net->node[id];
	bool crashed = sub->crash_at_ns <= now_ns;

	(void)old_state;
	if (new_state == NL_SWIM_SUSPECT) {
		if (crashed && sub->first_suspect_ns == 0)
			sub->first_suspect_ns = now_ns;
		if (!crashed && !sub->ever_paused)
			net->res.suspect_healthy++;
	}
	if (new_state != NL_SWIM_DEAD)
		return;
	if (crashed) {
		if (sub->first_dead_ns == 0)
			sub->first_dead_ns = now_ns;
		sub->dead_seen++;
		{
			/* every live member (others crashed cannot see it) */
			uint32_t live = 0;

			for (uint32_t i = 0; i < net->cfg.n; i++)
				live += i != id && net->node[i].crash_at_ns > now_ns;
			if (sub->dead_seen >= live && sub->all_dead_ns == 0)
				sub->all_dead_ns = now_ns;
		}
		return;
	}
	if (sub->ever_paused)
		net->res.fp_dead_paused++;
	else {
		net->res.fp_dead_healthy++;
		if (obs->ever_paused)
			net->res.fp_dead_by_paused++;
	}
	if (!sub->fp_marked || sub->fp_inc != incarnation) {
		sub->fp_marked = true;
		sub->fp_inc = incarnation;
		net->res.fp_subjects++;
	}
}

int
nl_swimnet_create(const struct nl_swimnet_cfg *cfg, struct nl_swimnet **out)
{
	struct nl_swimnet *net;

	if (cfg->n < 2 || cfg->n > NL_SWIM_MAX_MEMBERS || cfg->loss < 0 || cfg->loss >= 1 ||
	    cfg->delay_max_ns < cfg->delay_min_ns)
		return -EINVAL;
	net = calloc(1, sizeof(*net));
	if (net == NULL)
		return -ENOMEM;
	net->cfg = *cfg;
	net->rng = cfg->seed * 0x9e3779b97f4a7c15ull + 1;
	net->node = calloc(cfg->n, sizeof(*net->node));
	if (net->node == NULL) {
		free(net);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cfg->n; i++) {
		struct node *nd = &net->node[i];
		struct nl_swim_cfg sc;
		int rc;

		nd->net = net;
		nd->id = i;
		nd->crash_at_ns = UINT64_MAX;
		nl_swim_cfg_default(&sc, cfg->n, i);
		sc.lifeguard = cfg->lifeguard;
		sc.suspicion = cfg->suspicion;
		sc.seed = rnd(net) | 1;
		sc.send = net_send;
		sc.on_change = net_change;
		sc.ctx = nd;
		rc = nl_swim_create(&sc, 0, &nd->sw);
		if (rc != 0) {
			nl_swimnet_free(net);
			return rc;
		}
		schedule_tick(nd);
	}
	*out = net;
	return 0;
}

void
nl_swimnet_free(struct nl_swimnet *net)
{
	if (net == NULL)
		return;
	for (uint32_t i = 0; i < net->cfg.n; i++) {
		nl_swim_free(net->node[i].sw);
		free(net->node[i].buf);
	}
	free(net->node);
	free(net->heap);
	free(net);
}

int
nl_swimnet_crash(struct nl_swimnet *net, uint32_t id, uint64_t at_ns)
{
	if (id >= net->cfg.n)
		return -EINVAL;
	net->node[id].crash_at_ns = at_ns;
	return 0;
}

int
nl_swimnet_pause(struct nl_swimnet *net, uint32_t id, uint64_t from_ns, uint64_t to_ns)
{
	struct ev e;
	int rc;

	if (id >= net->cfg.n || to_ns <= from_ns)
		return -EINVAL;
	memset(&e, 0, sizeof(e));
	net->node[id].ever_paused = true;
	e.node = id;
	e.kind = EV_PAUSE;
	e.t_ns = from_ns;
	rc = push(net, &e);
	e.kind = EV_RESUME;
	e.t_ns = to_ns;
	return rc != 0 ? rc : push(net, &e);
}

int
nl_swimnet_partition(struct nl_swimnet *net, uint64_t side_mask, uint64_t from_ns,
	uint64_t to_ns)
{
	if (to_ns <= from_ns || net->cfg.n > 64)
		return -EINVAL;
	net->cut_mask = side_mask;
	net->cut_from_ns = from_ns;
	net->cut_to_ns = to_ns;
	return 0;
}

static void
deliver(struct node *nd, const struct nl_swim_msg *msg)
{
	(void)nl_swim_recv_st(nd->sw, nd->net->now_ns, msg);
}

void
nl_swimnet_run(struct nl_swimnet *net, uint64_t until_ns)
{
	struct ev e;

	while (net->n_heap > 0 && net->heap[0].t_ns <= until_ns) {
		struct node *nd;

		pop(net, &e);
		net->now_ns = e.t_ns;
		nd = &net->node[e.node];
		if (!nd->crashed && nd->crash_at_ns <= net->now_ns)
			nd->crashed = true;
		if (nd->crashed)
			continue;
		switch ((enum ev_kind)e.kind) {
		case EV_DELIVER:
			if (nd->paused) {
				if (nd->n_buf == nd->cap_buf) {
					uint32_t cap = nd->cap_buf != 0 ? nd->cap_buf * 2 : 64;
					struct nl_swim_msg *b = realloc(nd->buf, cap * sizeof(*b));

					if (b == NULL)
						continue;   /* a full socket buffer drops */
					nd->buf = b;
					nd->cap_buf = cap;
				}
				nd->buf[nd->n_buf++] = e.msg;
				continue;
			}
			deliver(nd, &e.msg);
			break;
		case EV_TICK:
			if (e.t_ns != nd->sched_ns || nd->paused)
				continue;       /* superseded, or frozen (the resume ticks) */
			nd->sched_ns = 0;
			(void)nl_swim_tick_st(nd->sw, net->now_ns);
			break;
		case EV_PAUSE:
			nd->paused = true;
			continue;
		case EV_RESUME:
			nd->paused = false;
			nd->sched_ns = 0;
			(void)nl_swim_tick_st(nd->sw, net->now_ns);
			for (uint32_t i = 0; i < nd->n_buf; i++)
				deliver(nd, &nd->buf[i]);
			nd->n_buf = 0;
			break;
		}
		schedule_tick(nd);
	}
	net->now_ns = until_ns;
	net->res.probes = net->res.probes_failed = 0;
	net->res.lhm_max = 0;
	for (uint32_t i = 0; i < net->cfg.n; i++) {
		const struct nl_swim_stats *st = nl_swim_stats(net->node[i].sw);

		net->res.probes += st->probes;
		net->res.probes_failed += st->probes_failed;
		if (nl_swim_lhm(net->node[i].sw) > net->res.lhm_max)
			net->res.lhm_max = nl_swim_lhm(net->node[i].sw);
	}
}

struct nl_swim *
nl_swimnet_member(struct nl_swimnet *net, uint32_t id)
{
	return id < net->cfg.n ? net->node[id].sw : NULL;
}

const struct nl_swimnet_res *
nl_swimnet_res(struct nl_swimnet *net)
{
	return &net->res;
}

int
nl_swimnet_detection(struct nl_swimnet *net, uint32_t id, uint64_t *first_suspect_ns,
	uint64_t *first_dead_ns, uint64_t *all_dead_ns)
{
	struct node *nd;

	if (id >= net->cfg.n)
		return -ENOENT;
	nd = &net->node[id];
	*first_suspect_ns = nd->first_suspect_ns != 0 ? nd->first_suspect_ns - nd->crash_at_ns : 0;
	*first_dead_ns = nd->first_dead_ns != 0 ? nd->first_dead_ns - nd->crash_at_ns : 0;
	*all_dead_ns = nd->all_dead_ns != 0 ? nd->all_dead_ns - nd->crash_at_ns : 0;
	return nd->all_dead_ns != 0 ? 0 : -ENOENT;
}
