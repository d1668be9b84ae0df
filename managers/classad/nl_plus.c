/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PluS-style advance reservations with a ClassAd admission policy (seed 004). See nl_plus.h
 * for the theory of operation and invariants I1..I3.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nl_plus.h"

enum { N_NAME, N_ALIVE, N_LOAD, N_NRUN, N_JOBS, N_NODE_ATTRS };
enum { J_ID, J_OWNER, J_STATE, J_PRIO, J_START, J_WALL, N_JOB_ATTRS };

static const char *const node_attrs[N_NODE_ATTRS] = {
	"name", "isAlive", "loadavg", "nRunJobs", "jobs",
};
static const char *const job_attrs[N_JOB_ATTRS] = {
	"id", "owner", "state", "priority", "startTime", "wallTime",
};

struct pjob {
	struct nl_plus_job j;
	struct nl_cad_val vals[N_JOB_ATTRS];
	struct nl_cad_rec rec;
};

struct pnode {
	char name[NL_PLUS_NAME_MAX];
	struct nl_cad_val vals[N_NODE_ATTRS];
	struct nl_cad_rec rec;
	struct pjob *jobs;
	struct nl_cad_val *job_vals;  /* [n_jobs] record values: the `jobs` list */
	unsigned int n_jobs, cap_jobs;
};

struct rsv {
	uint64_t id;
	char owner[NL_PLUS_NAME_MAX];
	int64_t start_s, end_s;
	unsigned int n;
	uint32_t *nodes;
	int state;     /* enum nl_plus_state; 0 while being modified */
};

struct nl_plus {
	struct nl_cad_prog *prog;
	struct nl_cad_ctx *ctx;
	struct nl_cad_schema node_sc, job_sc;
	struct pnode *nodes;
	unsigned int n_nodes;
	struct nl_cad_val *all_vals;    /* PLUS_ALL_NODES items */
	struct nl_cad_val *alloc_vals;  /* PLUS_ALLOCATED_NODES items (scratch) */
	uint8_t *held;                  /* scratch: node held in the window */
	bool held_dirty;                /* held[] has a nonzero byte */
	uint32_t *pick;                 /* scratch: accepted nodes */
	uint32_t *at;                   /* scratch: node -> its index in a query, UINT32_MAX */
	struct rsv *rsv;
	unsigned int n_rsv, cap_rsv;
	uint64_t next_id;
	int s_owner, s_start, s_end, s_all, s_cand, s_alloc, s_ok;
};

static void
job_vals(struct pjob *pj)
{
	pj->vals[J_ID] = nl_cad_str(pj->j.id, (uint32_t)strlen(pj->j.id));
	pj->vals[J_OWNER] = nl_cad_str(pj->j.owner, (uint32_t)strlen(pj->j.owner));
	pj->vals[J_STATE] = nl_cad_str(pj->j.state, (uint32_t)strlen(pj->j.state));
	pj->vals[J_PRIO] = nl_cad_int(pj->j.priority);
	pj->vals[J_START] = nl_cad_abstime(pj->j.start_s);
	pj->vals[J_WALL] = nl_cad_reltime(pj->j.wall_s);
}

int
nl_plus_node_set(struct nl_plus *pl, unsigned int idx, const struct nl_plus_node *node)
{
	if (idx >= pl->n_nodes)
		return -EINVAL;
	struct pnode *pn = &pl->nodes[idx];

	if (node->n_jobs > pn->cap_jobs) {
		struct pjob *j = realloc(pn->jobs, node->n_jobs * sizeof(*j));

		if (j == NULL)
			return -ENOMEM;
		pn->jobs = j;
		struct nl_cad_val *v = realloc(pn->job_vals, node->n_jobs * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		pn->job_vals = v;
		pn->cap_jobs = node->n_jobs;
	}
	snprintf(pn->name, sizeof(pn->name), "%s", node->name);
	int64_t running = 0;

	pn->n_jobs = node->n_jobs;
	for (unsigned int k = 0; k < node->n_jobs; k++) {
		struct pjob *pj = &pn->jobs[k];

		pj->j = node->jobs[k];
		pj->j.id[sizeof(pj->j.id) - 1] = 0;
		pj->j.owner[sizeof(pj->j.owner) - 1] = 0;
		pj->j.state[sizeof(pj->j.state) - 1] = 0;
		job_vals(pj);
		pj->rec.schema = &pl->job_sc;
		pj->rec.vals = pj->vals;
		pn->job_vals[k] = nl_cad_record(&pj->rec);
		running += strcasecmp(pj->j.state, "Running") == 0;
	}
	pn->vals[N_NAME] = nl_cad_str(pn->name, (uint32_t)strlen(pn->name));
	pn->vals[N_ALIVE] = nl_cad_bool(node->alive);
	pn->vals[N_LOAD] = nl_cad_real(node->loadavg);
	pn->vals[N_NRUN] = nl_cad_int(running);
	pn->vals[N_JOBS] = nl_cad_list(pn->job_vals, pn->n_jobs);
	return 0;
}

int
nl_plus_create(const char *policy, size_t len, unsigned int n_nodes, struct nl_plus **out,
	       struct nl_cad_err *err)
{
	struct nl_plus *pl;
	int rc;

	*out = NULL;
	if (n_nodes == 0)
		return -EINVAL;
	pl = calloc(1, sizeof(*pl));
	if (pl == NULL)
		return -ENOMEM;
	rc = nl_cad_parse(policy, len, &pl->prog, err);
	if (rc < 0)
		goto fail;
	pl->s_ok = nl_cad_slot(pl->prog, "PLUS_NODE_RESERVABLE");
	if (pl->s_ok < 0 || !nl_cad_slot_defined(pl->prog, (unsigned int)pl->s_ok)) {
		if (err != NULL) {
			err->line = 1;
			err->col = 1;
			snprintf(err->msg, sizeof(err->msg), "policy does not define PLUS_NODE_RESERVABLE");
		}
		rc = -EINVAL;
		goto fail;
	}
	/* the variables PluS provides (seed 004 Table 1); -ENOENT when the policy ignores one */
	pl->s_owner = nl_cad_slot(pl->prog, "PLUS_RSV_OWNER");
	pl->s_start = nl_cad_slot(pl->prog, "PLUS_RSV_START");
	pl->s_end = nl_cad_slot(pl->prog, "PLUS_RSV_END");
	pl->s_all = nl_cad_slot(pl->prog, "PLUS_ALL_NODES");
	pl->s_cand = nl_cad_slot(pl->prog, "PLUS_CANDIDATE_NODE");
	pl->s_alloc = nl_cad_slot(pl->prog, "PLUS_ALLOCATED_NODES");
	rc = nl_cad_ctx_create(pl->prog, &pl->ctx);
	if (rc < 0)
		goto fail;
	nl_cad_schema_init(&pl->node_sc, node_attrs, N_NODE_ATTRS);
	nl_cad_schema_init(&pl->job_sc, job_attrs, N_JOB_ATTRS);
	pl->n_nodes = n_nodes;
	pl->nodes = calloc(n_nodes, sizeof(*pl->nodes));
	pl->all_vals = calloc(n_nodes, sizeof(*pl->all_vals));
	pl->alloc_vals = calloc(n_nodes, sizeof(*pl->alloc_vals));
	pl->held = calloc(n_nodes, 1);
	pl->pick = calloc(n_nodes, sizeof(*pl->pick));
	pl->at = malloc(n_nodes * sizeof(*pl->at));
	rc = -ENOMEM;
	if (pl->nodes == NULL || pl->all_vals == NULL || pl->alloc_vals == NULL ||
	    pl->held == NULL || pl->pick == NULL || pl->at == NULL)
		goto fail;
	memset(pl->at, 0xff, n_nodes * sizeof(*pl->at));
	for (unsigned int i = 0; i < n_nodes; i++) {
		struct nl_plus_node nd = { .alive = false };
		struct pnode *pn = &pl->nodes[i];

		snprintf(nd.name, sizeof(nd.name), "node%u", i);
		pn->rec.schema = &pl->node_sc;
		pn->rec.vals = pn->vals;
		nl_plus_node_set(pl, i, &nd);
		pl->all_vals[i] = nl_cad_record(&pn->rec);
	}
	pl->next_id = 1;
	*out = pl;
	return 0;
fail:
	nl_plus_free(pl);
	return rc;
}

void
nl_plus_free(struct nl_plus *pl)
{
	if (pl == NULL)
		return;
	for (unsigned int i = 0; pl->nodes != NULL && i < pl->n_nodes; i++) {
		free(pl->nodes[i].jobs);
		free(pl->nodes[i].job_vals);
	}
	for (unsigned int i = 0; i < pl->n_rsv; i++)
		free(pl->rsv[i].nodes);
	free(pl->rsv);
	free(pl->nodes);
	free(pl->all_vals);
	free(pl->alloc_vals);
	free(pl->held);
	free(pl->pick);
	free(pl->at);
	nl_cad_ctx_free(pl->ctx);
	nl_cad_prog_free(pl->prog);
	free(pl);
}

void
nl_plus_set_now(struct nl_plus *pl, int64_t now_s)
{
	nl_cad_ctx_set_now(pl->ctx, now_s);
}

struct nl_cad_ctx *
nl_plus_ctx(struct nl_plus *pl)
{
	return pl->ctx;
}

unsigned int
nl_plus_n_nodes(const struct nl_plus *pl)
{
	return pl->n_nodes;
}

unsigned int
nl_plus_n_active(const struct nl_plus *pl)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < pl->n_rsv; i++)
		n += pl->rsv[i].state != 0;
	return n;
}

/* plus_rsvutil(owner, from, to): count, total duration, node-hours of the owner's active
 * reservations overlapping [from, to) (seed 004 §5.3). */
static int
rsvutil(void *arg, const char *owner, unsigned int owner_len, int64_t from_s, int64_t to_s,
	struct nl_cad_val out[3])
{
	const struct nl_plus *pl = arg;
	int64_t count = 0;
	double dur_s = 0, node_h = 0;

	for (unsigned int i = 0; i < pl->n_rsv; i++) {
		const struct rsv *r = &pl->rsv[i];

		if (r->state == 0 || r->end_s <= from_s || r->start_s >= to_s ||
		    strlen(r->owner) != owner_len || strncasecmp(r->owner, owner, owner_len) != 0)
			continue;
		count++;
		dur_s += (double)(r->end_s - r->start_s);
		node_h += (double)r->n * (double)(r->end_s - r->start_s) / 3600.0;
	}
	out[0] = nl_cad_int(count);
	out[1] = nl_cad_reltime(dur_s);
	out[2] = nl_cad_real(node_h);
	return 0;
}

static void
refuse(struct nl_plus_refusal *why, int rc, const char *fmt, const char *a, unsigned int x,
       unsigned int y)
{
	if (why == NULL)
		return;
	memset(why, 0, sizeof(*why));
	why->rc = rc;
	snprintf(why->msg, sizeof(why->msg), fmt, a, x, y);
}

/* The values of the policy's own attributes that the refusing clause names (bindings as for
 * the refused node), so that `(nAllocate <= nAllocatable) is false` says why. */
static void
explain_names(struct nl_plus *pl, struct nl_plus_refusal *why)
{
	const char *p = why->clause;
	size_t n = 0;
	int seen[4];
	unsigned int n_seen = 0;

	why->detail[0] = 0;
	while (*p != 0 && n_seen < 4) {
		char name[64];
		size_t k = 0;

		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_')) {
			p++;
			continue;
		}
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		       (*p >= '0' && *p <= '9')) {
			if (k < sizeof(name) - 1)
				name[k++] = *p;
			p++;
		}
		name[k] = 0;
		if (p[0] == '(' || (p > why->clause + k && p[-(long)k - 1] == '.'))
			continue; /* a function name or a selected attribute */
		int s = nl_cad_slot(pl->prog, name);
		bool dup = false;

		for (unsigned int j = 0; j < n_seen; j++)
			dup = dup || seen[j] == s;
		if (s < 0 || dup || !nl_cad_slot_defined(pl->prog, (unsigned int)s) ||
		    strncmp(name, "PLUS_", 5) == 0)
			continue;
		struct nl_cad_val v;
		char val[48];

		seen[n_seen++] = s;
		nl_cad_eval(pl->ctx, s, &v);
		nl_cad_format(pl->ctx, &v, val, sizeof(val));
		n += (size_t)snprintf(why->detail + n, sizeof(why->detail) - n, "%s%s = %s",
				      n ? ", " : "", name, val);
		if (n >= sizeof(why->detail))
			break;
	}
}

static int
admit(struct nl_plus *pl, const struct nl_plus_req *req, uint32_t *out,
      struct nl_plus_refusal *why)
{
	struct nl_cad_ctx *c = pl->ctx;
	unsigned int n_free = 0, acc = 0;
	int first_ref = -1;
	unsigned int first_ref_acc = 0;

	if (req->owner == NULL || req->owner[0] == 0 ||
	    strlen(req->owner) >= NL_PLUS_NAME_MAX || req->end_s <= req->start_s ||
	    req->n_nodes == 0) {
		refuse(why, -EINVAL, "bad request%s", "", 0, 0);
		return -EINVAL;
	}
	if (req->n_nodes > pl->n_nodes) {
		refuse(why, -ENOSPC, "%s%u nodes requested, %u exist", "", req->n_nodes,
		       pl->n_nodes);
		return -ENOSPC;
	}
	/* nodes held by active reservations overlapping the window (I1); the map is cleared
	 * only when the previous admission marked something, so an admission costs O(nodes
	 * evaluated + nodes held), not O(all nodes) */
	unsigned int n_held = 0;

	if (pl->held_dirty)
		memset(pl->held, 0, pl->n_nodes);
	pl->held_dirty = false;
	for (unsigned int i = 0; i < pl->n_rsv; i++) {
		const struct rsv *r = &pl->rsv[i];

		if (r->state == 0 || r->end_s <= req->start_s || r->start_s >= req->end_s)
			continue;
		for (unsigned int k = 0; k < r->n; k++) {
			n_held += !pl->held[r->nodes[k]];
			pl->held[r->nodes[k]] = 1;
			pl->held_dirty = true;
		}
	}
	n_free = pl->n_nodes - n_held;
	if (n_free < req->n_nodes) {
		refuse(why, -ENOSPC, "%sonly %u nodes free in the window, %u requested", "",
		       n_free, req->n_nodes);
		if (why != NULL)
			why->n_free = n_free;
		return -ENOSPC;
	}
	struct nl_cad_val owner = nl_cad_str(req->owner, (uint32_t)strlen(req->owner));
	struct nl_cad_val start = nl_cad_abstime(req->start_s);
	struct nl_cad_val end = nl_cad_abstime(req->end_s);
	struct nl_cad_val all = nl_cad_list(pl->all_vals, pl->n_nodes);

	nl_cad_ctx_set_rsvutil(c, rsvutil, pl);
	nl_cad_bind(c, pl->s_owner, &owner);
	nl_cad_bind(c, pl->s_start, &start);
	nl_cad_bind(c, pl->s_end, &end);
	nl_cad_bind(c, pl->s_all, &all);
	/* candidate and allocated list are updated in place between evaluations (I3) */
	struct nl_cad_val *cand = nl_cad_bind_ref(c, pl->s_cand);
	struct nl_cad_val *alloc = nl_cad_bind_ref(c, pl->s_alloc);

	*alloc = nl_cad_list(pl->alloc_vals, 0);
	for (unsigned int i = 0; i < pl->n_nodes && acc < req->n_nodes; i++) {
		if (pl->held[i])
			continue;
		struct nl_cad_val v;

		*cand = pl->all_vals[i];
		alloc->aux = (int32_t)acc;
		nl_cad_eval(c, pl->s_ok, &v);
		if (v.type == NL_CAD_BOOL && v.u.b) {
			pl->alloc_vals[acc] = pl->all_vals[i];
			pl->pick[acc++] = i;
		} else if (first_ref < 0) {
			first_ref = (int)i;
			first_ref_acc = acc;
		}
	}
	if (acc == req->n_nodes) {
		if (out != NULL)
			memcpy(out, pl->pick, acc * sizeof(*out));
		return (int)acc;
	}
	if (why != NULL) {
		struct nl_cad_val alloc = nl_cad_list(pl->alloc_vals, first_ref_acc);
		struct nl_cad_why w;

		memset(why, 0, sizeof(*why));
		why->rc = -EACCES;
		why->n_free = n_free;
		why->n_accepted = acc;
		snprintf(why->node, sizeof(why->node), "%s", pl->nodes[first_ref].name);
		nl_cad_bind(c, pl->s_cand, &pl->all_vals[first_ref]);
		nl_cad_bind(c, pl->s_alloc, &alloc);
		if (nl_cad_explain(c, pl->s_ok, &w) == 0) {
			unsigned int tl = w.text_len < sizeof(why->clause) - 1 ? w.text_len
							: (unsigned int)sizeof(why->clause) - 1;

			memcpy(why->clause, w.text, tl);
			why->clause[tl] = 0;
			nl_cad_format(c, &w.val, why->value, sizeof(why->value));
			why->line = w.line;
			why->col = w.col;
		}
		explain_names(pl, why);
		snprintf(why->msg, sizeof(why->msg),
			 "policy accepted %u of %u nodes requested (%u free); first refused %s: "
			 "%u:%u `%s` is %s%s%s%s",
			 acc, req->n_nodes, n_free, why->node, why->line, why->col, why->clause,
			 why->value, why->detail[0] ? " (" : "", why->detail,
			 why->detail[0] ? ")" : "");
	}
	return -EACCES;
}

int
nl_plus_admit(struct nl_plus *pl, const struct nl_plus_req *req, uint32_t *out,
	      struct nl_plus_refusal *why)
{
	return admit(pl, req, out, why);
}

static struct rsv *
find(const struct nl_plus *pl, uint64_t id)
{
	for (unsigned int i = 0; i < pl->n_rsv; i++)
		if (pl->rsv[i].id == id)
			return &pl->rsv[i];
	return NULL;
}

static void
drop(struct nl_plus *pl, struct rsv *r)
{
	free(r->nodes);
	*r = pl->rsv[--pl->n_rsv];
}

int
nl_plus_prepare(struct nl_plus *pl, const struct nl_plus_req *req, uint64_t *id,
		struct nl_plus_refusal *why)
{
	int rc = admit(pl, req, NULL, why);

	if (rc < 0)
		return rc;
	if (pl->n_rsv == pl->cap_rsv) {
		unsigned int nc = pl->cap_rsv ? pl->cap_rsv * 2 : 16;
		struct rsv *a = realloc(pl->rsv, nc * sizeof(*a));

		if (a == NULL)
			return -ENOMEM;
		pl->rsv = a;
		pl->cap_rsv = nc;
	}
	struct rsv *r = &pl->rsv[pl->n_rsv];

	r->nodes = malloc(req->n_nodes * sizeof(*r->nodes));
	if (r->nodes == NULL)
		return -ENOMEM;
	memcpy(r->nodes, pl->pick, req->n_nodes * sizeof(*r->nodes));
	r->n = req->n_nodes;
	r->id = pl->next_id++;
	snprintf(r->owner, sizeof(r->owner), "%s", req->owner);
	r->start_s = req->start_s;
	r->end_s = req->end_s;
	r->state = NL_PLUS_PREPARED;
	pl->n_rsv++;
	*id = r->id;
	return 0;
}

int
nl_plus_commit(struct nl_plus *pl, uint64_t id)
{
	struct rsv *r = find(pl, id);

	if (r == NULL)
		return -ENOENT;
	r->state = NL_PLUS_COMMITTED;
	return 0;
}

int
nl_plus_abort(struct nl_plus *pl, uint64_t id)
{
	struct rsv *r = find(pl, id);

	if (r == NULL)
		return -ENOENT;
	if (r->state == NL_PLUS_COMMITTED)
		return -EBUSY;
	drop(pl, r);
	return 0;
}

int
nl_plus_reserve(struct nl_plus *pl, const struct nl_plus_req *req, uint64_t *id,
		struct nl_plus_refusal *why)
{
	int rc = nl_plus_prepare(pl, req, id, why);

	return rc < 0 ? rc : nl_plus_commit(pl, *id);
}

int
nl_plus_modify(struct nl_plus *pl, uint64_t id, const struct nl_plus_req *req,
	       struct nl_plus_refusal *why)
{
	struct rsv *r = find(pl, id);

	if (r == NULL)
		return -ENOENT;
	struct nl_plus_req q = *req;
	int state = r->state;

	q.owner = r->owner;
	r->state = 0; /* as if it held nothing while re-admitted */
	int rc = admit(pl, &q, NULL, why);

	if (rc < 0) {
		r->state = state; /* I2 */
		return rc;
	}
	uint32_t *nodes = malloc(q.n_nodes * sizeof(*nodes));

	if (nodes == NULL) {
		r->state = state;
		return -ENOMEM;
	}
	memcpy(nodes, pl->pick, q.n_nodes * sizeof(*nodes));
	free(r->nodes);
	r->nodes = nodes;
	r->n = q.n_nodes;
	r->start_s = q.start_s;
	r->end_s = q.end_s;
	r->state = state;
	return 0;
}

int
nl_plus_cancel(struct nl_plus *pl, uint64_t id)
{
	struct rsv *r = find(pl, id);

	if (r == NULL)
		return -ENOENT;
	drop(pl, r);
	return 0;
}

int
nl_plus_get(const struct nl_plus *pl, uint64_t id, struct nl_plus_rsv_info *info)
{
	const struct rsv *r = find(pl, id);

	if (r == NULL)
		return -ENOENT;
	info->id = r->id;
	memcpy(info->owner, r->owner, sizeof(info->owner));
	info->start_s = r->start_s;
	info->end_s = r->end_s;
	info->n_nodes = r->n;
	info->state = (enum nl_plus_state)r->state;
	info->nodes = r->nodes;
	return 0;
}

bool
nl_plus_node_held(const struct nl_plus *pl, unsigned int idx, int64_t t0_s, int64_t t1_s)
{
	for (unsigned int i = 0; i < pl->n_rsv; i++) {
		const struct rsv *r = &pl->rsv[i];

		if (r->state == 0 || r->end_s <= t0_s || r->start_s >= t1_s)
			continue;
		for (unsigned int k = 0; k < r->n; k++)
			if (r->nodes[k] == idx)
				return true;
	}
	return false;
}

int64_t
nl_plus_node_next_hold(const struct nl_plus *pl, unsigned int idx, int64_t t_s)
{
	int64_t best = INT64_MAX;

	for (unsigned int i = 0; i < pl->n_rsv; i++) {
		const struct rsv *r = &pl->rsv[i];

		if (r->state == 0 || r->end_s <= t_s || r->start_s >= best)
			continue;
		for (unsigned int k = 0; k < r->n; k++) {
			if (r->nodes[k] == idx) {
				best = r->start_s;
				break;
			}
		}
	}
	return best;
}

int
nl_plus_nodes_next_hold(struct nl_plus *pl, const uint32_t *idx, unsigned int n, int64_t t_s,
			int64_t *out)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (idx[i] >= pl->n_nodes || pl->at[idx[i]] != UINT32_MAX)
			break;
		pl->at[idx[i]] = i;
		out[i] = INT64_MAX;
	}
	if (i == n) {
		for (unsigned int r = 0; r < pl->n_rsv; r++) {
			const struct rsv *v = &pl->rsv[r];

			if (v->state == 0 || v->end_s <= t_s)
				continue;
			for (unsigned int k = 0; k < v->n; k++) {
				uint32_t a = pl->at[v->nodes[k]];

				if (a != UINT32_MAX && v->start_s < out[a])
					out[a] = v->start_s;
			}
		}
	}
	for (unsigned int j = 0; j < i; j++)
		pl->at[idx[j]] = UINT32_MAX;
	return i == n ? 0 : -EINVAL;
}
