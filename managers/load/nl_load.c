/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Load tables under liburcu QSBR (see nl_load.h for the theory of operation and I1..I6).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-qsbr.h>

#include "nl_load.h"

static struct nl_load_snap *
snap_alloc(struct nl_load_table *t, unsigned int n_mach, unsigned int n_mgr)
{
	struct nl_load_snap *s;
	size_t sz = sizeof(*s) + n_mgr * sizeof(uint64_t) + n_mach * sizeof(struct nl_mach_load);

	s = calloc(1, sz);
	if (s == NULL)
		return NULL;
	s->n_mach = s->cap_mach = n_mach;
	s->n_mgr = n_mgr;
	s->applied = (uint64_t *)(s + 1);
	s->load = (struct nl_mach_load *)(s->applied + n_mgr);
	s->table = t;
	cds_lfs_node_init(&s->spare);
	if (t != NULL)
		t->n_snap_alloc++;
	return s;
}

/* A snapshot for the next publish: a spare one past its grace period when it has room (the
 * writer is the only popper, which is what __cds_lfs_pop() asks), else a new one. */
static struct nl_load_snap *
snap_get(struct nl_load_table *t)
{
	struct cds_lfs_node *n;

	while ((n = __cds_lfs_pop(&t->spare)) != NULL) {
		struct nl_load_snap *s = caa_container_of(n, struct nl_load_snap, spare);

		uatomic_dec(&t->n_spare);
		if (s->cap_mach >= t->n_mach && s->n_mgr == t->n_mgr) {
			s->n_mach = t->n_mach;
			return s;
		}
		free(s); /* the table grew: too small */
	}
	return snap_alloc(t, t->n_mach, t->n_mgr);
}

/* call_rcu thread: the grace period is over, no reader holds s any more (I2, I3) */
static void
snap_free_cb(struct rcu_head *head)
{
	struct nl_load_snap *s = caa_container_of(head, struct nl_load_snap, rcu);
	struct nl_load_table *t = s->table;

	if (uatomic_add_return(&t->n_spare, 1) > NL_LOAD_SPARE_MAX) {
		uatomic_dec(&t->n_spare);
		free(s);
		return;
	}
	cds_lfs_push(&t->spare, &s->spare);
}

static void
spare_free(struct nl_load_table *t)
{
	struct cds_lfs_node *n;

	while ((n = __cds_lfs_pop(&t->spare)) != NULL)
		free(caa_container_of(n, struct nl_load_snap, spare));
	t->n_spare = 0;
}

int
nl_load_create(struct nl_load_table **out, unsigned int n_mach, unsigned int n_mgr)
{
	struct nl_load_table *t;

	if (out == NULL || n_mach == 0 || n_mach > NL_MODEL_MAX_MACH || n_mgr == 0)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	__cds_lfs_init(&t->spare);
	t->w_load = calloc(n_mach, sizeof(*t->w_load));
	t->w_applied = calloc(n_mgr, sizeof(*t->w_applied));
	t->n_mach = n_mach;
	t->n_mgr = n_mgr;
	if (t->w_load == NULL || t->w_applied == NULL) {
		free(t->w_load);
		free(t->w_applied);
		free(t);
		return -ENOMEM;
	}
	struct nl_load_snap *s = snap_alloc(t, n_mach, n_mgr);

	if (s == NULL) {
		free(t->w_load);
		free(t->w_applied);
		free(t);
		return -ENOMEM;
	}
	s->version = ++t->version;
	/* No reader can see t yet: a plain store is enough. */
	t->cur_rcu = s;
	*out = t;
	return 0;
}

void
nl_load_free(struct nl_load_table *t)
{
	if (t == NULL)
		return;
	/* Wait for callbacks of earlier publishes so no freed-later snapshot outlives us. */
	urcu_qsbr_barrier();
	spare_free(t);
	free(t->cur_rcu);
	free(t->w_load);
	free(t->w_applied);
	free(t);
}

struct nl_mach_load *
nl_load_entry_ctl(struct nl_load_table *t, uint32_t mach)
{
	return mach < t->n_mach ? &t->w_load[mach] : NULL;
}

int
nl_load_apply_ctl(struct nl_load_table *t, uint32_t mgr, uint64_t seq, uint32_t mach,
		  double arrive_vt, double dur_vt)
{
	struct nl_mach_load *l;

	if (mgr >= t->n_mgr || mach >= t->n_mach)
		return -EINVAL;
	l = &t->w_load[mach];
	l->busy_until_vt = (l->busy_until_vt > arrive_vt ? l->busy_until_vt : arrive_vt) + dur_vt;
	l->n_sub++;
	if (seq > t->w_applied[mgr])
		t->w_applied[mgr] = seq; /* I4 */
	return 0;
}

void
nl_load_mark_applied_ctl(struct nl_load_table *t, uint32_t mgr, uint64_t seq)
{
	if (mgr < t->n_mgr && seq > t->w_applied[mgr])
		t->w_applied[mgr] = seq;
}

int
nl_load_publish_ctl(struct nl_load_table *t)
{
	struct nl_load_snap *s = snap_get(t), *old;

	if (s == NULL)
		return -ENOMEM;
	memcpy(s->load, t->w_load, t->n_mach * sizeof(*s->load));
	memcpy(s->applied, t->w_applied, t->n_mgr * sizeof(*s->applied));
	s->version = ++t->version;
	old = t->cur_rcu; /* I1: only this thread writes the root */
	/* rcu_assign_pointer orders the snapshot's contents before the pointer store; pairs
	 * with the rcu_dereference() in nl_load_view_refresh_rcu(). */
	rcu_assign_pointer(t->cur_rcu, s);
	urcu_qsbr_call_rcu(&old->rcu, snap_free_cb); /* I2 */
	t->n_publish++;
	return 0;
}

int
nl_load_resize_ctl(struct nl_load_table *t, unsigned int n_mach)
{
	struct nl_mach_load *w;

	if (n_mach == 0 || n_mach > NL_MODEL_MAX_MACH)
		return -EINVAL;
	if (n_mach != t->n_mach) {
		w = realloc(t->w_load, n_mach * sizeof(*w));
		if (w == NULL)
			return -ENOMEM;
		if (n_mach > t->n_mach)
			memset(&w[t->n_mach], 0, (n_mach - t->n_mach) * sizeof(*w));
		t->w_load = w;
		t->n_mach = n_mach;
	}
	return nl_load_publish_ctl(t);
}

int
nl_load_view_init(struct nl_load_view *v, uint32_t mgr, unsigned int cap_mach,
		  unsigned int log_cap)
{
	unsigned int cap = 2;

	if (v == NULL || cap_mach == 0 || log_cap < 2 || log_cap > (1u << 24))
		return -EINVAL;
	while (cap < log_cap)
		cap <<= 1;
	memset(v, 0, sizeof(*v));
	v->mgr = mgr;
	v->next_seq = 1;
	v->log_head = 1;
	v->cap_mach = cap_mach;
	v->log_cap = cap;
	v->load = calloc(cap_mach, sizeof(*v->load));
	v->log = calloc(cap, sizeof(*v->log));
	if (v->load == NULL || v->log == NULL) {
		nl_load_view_fini(v);
		return -ENOMEM;
	}
	return 0;
}

void
nl_load_view_fini(struct nl_load_view *v)
{
	free(v->load);
	free(v->log);
	v->load = NULL;
	v->log = NULL;
}

static void
view_apply(struct nl_load_view *v, uint32_t mach, double arrive_vt, double dur_vt)
{
	struct nl_mach_load *l = &v->load[mach];

	l->busy_until_vt = (l->busy_until_vt > arrive_vt ? l->busy_until_vt : arrive_vt) + dur_vt;
	l->n_sub++;
}

bool
nl_load_view_refresh_rcu(struct nl_load_view *v, const struct nl_load_table *t)
{
	/* Pairs with rcu_assign_pointer() in nl_load_publish_ctl(). */
	const struct nl_load_snap *s = rcu_dereference(t->cur_rcu);
	uint64_t applied;
	unsigned int n;

	if (s->version == v->version_seen)
		return false;
	n = s->n_mach < v->cap_mach ? s->n_mach : v->cap_mach; /* I6: a view never grows here */
	memcpy(v->load, s->load, n * sizeof(*v->load));
	v->n_mach = n;
	applied = v->mgr < s->n_mgr ? s->applied[v->mgr] : 0;
	v->version_seen = s->version;
	/* s is not used past this point (I3). */
	if (applied + 1 > v->log_head)
		v->log_head = applied + 1 < v->next_seq ? applied + 1 : v->next_seq;
	for (uint64_t q = v->log_head; q < v->next_seq; q++) {
		const struct nl_load_booking *b = &v->log[q & (v->log_cap - 1)];

		if (b->mach < n)
			view_apply(v, b->mach, b->arrive_vt, b->dur_vt); /* I5 */
	}
	return true;
}

uint64_t
nl_load_version_rcu(const struct nl_load_table *t)
{
	/* Pairs with rcu_assign_pointer() in nl_load_publish_ctl(). */
	return rcu_dereference(t->cur_rcu)->version;
}
