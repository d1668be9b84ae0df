/* SPDX-License-Identifier: BSD-3-Clause */
/* nlevel-worker's DONEs not yet acknowledged (nl_wpend.h). */
#include <errno.h>
#include <stdlib.h>

#include "nl_wpend.h"

static struct nl_wpend_ent *
set_of(struct nl_wpend *p, uint64_t task_id, uint16_t sub, uint32_t token)
{
	uint64_t h = task_id ^ ((uint64_t)sub << 48) ^ ((uint64_t)token << 20);

	h ^= h >> 33; /* splitmix64's finalizer */
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return &p->e[(size_t)(h & (NL_WPEND_SETS - 1)) * NL_WPEND_WAYS];
}

static bool
same(const struct nl_wpend_ent *e, uint64_t task_id, uint16_t sub, uint32_t token)
{
	return e->done.task_id == task_id && e->done.sub == sub && e->done.token == token;
}

int
nl_wpend_init(struct nl_wpend *p)
{
	*p = (struct nl_wpend){ .next_ns = UINT64_MAX };
	p->e = calloc((size_t)NL_WPEND_SETS * NL_WPEND_WAYS, sizeof(*p->e));
	return p->e != NULL ? 0 : -ENOMEM;
}

void
nl_wpend_fini(struct nl_wpend *p)
{
	free(p->e);
	p->e = NULL;
	p->n = 0;
}

bool
nl_wpend_add(struct nl_wpend *p, const struct nl_msg_done *d, uint64_t now_ns)
{
	return nl_wpend_add_to(p, d, now_ns, 0);
}

bool
nl_wpend_add_to(struct nl_wpend *p, const struct nl_msg_done *d, uint64_t now_ns,
		unsigned int dest)
{
	struct nl_wpend_ent *s, *free_way = NULL;

	if (d->task_id == 0 || p->e == NULL || dest >= NL_WPEND_DESTS)
		return false;
	s = set_of(p, d->task_id, d->sub, d->token);
	for (unsigned int w = 0; w < NL_WPEND_WAYS; w++) {
		if (same(&s[w], d->task_id, d->sub, d->token)) {
			free_way = &s[w];
			p->n--;
			p->n_to[s[w].dest]--;
			break;
		}
		if (s[w].done.task_id == 0 && free_way == NULL)
			free_way = &s[w];
	}
	if (free_way == NULL) {
		p->n_full++;
		return false;
	}
	free_way->done = *d;
	free_way->dest = (uint8_t)dest;
	free_way->first_ns = now_ns;
	free_way->gap_ns = NL_WPEND_FIRST_NS;
	free_way->due_ns = now_ns + NL_WPEND_FIRST_NS;
	if (free_way->due_ns < p->next_ns)
		p->next_ns = free_way->due_ns;
	p->n++;
	p->n_to[dest]++;
	p->n_kept++;
	return true;
}

bool
nl_wpend_ack(struct nl_wpend *p, uint64_t task_id, uint16_t sub, uint32_t token)
{
	struct nl_wpend_ent *s;

	if (task_id != 0 && p->e != NULL) {
		s = set_of(p, task_id, sub, token);
		for (unsigned int w = 0; w < NL_WPEND_WAYS; w++)
			if (same(&s[w], task_id, sub, token)) {
				s[w].done.task_id = 0;
				p->n--;
				p->n_to[s[w].dest]--;
				p->n_acked++;
				if (p->n == 0)
					p->next_ns = UINT64_MAX;
				return true;
			}
	}
	p->n_ack_unknown++;
	return false;
}

/* nl_wpend_poll()'s callback without the dest, called from nl_wpend_poll_to() */
struct plain_cb {
	void (*resend)(void *arg, const struct nl_msg_done *d);
	void *arg;
};

static void
plain_resend(void *arg, const struct nl_msg_done *d, unsigned int dest)
{
	const struct plain_cb *c = arg;

	(void)dest;
	c->resend(c->arg, d);
}

uint64_t
nl_wpend_poll(struct nl_wpend *p, uint64_t now_ns,
	      void (*resend)(void *arg, const struct nl_msg_done *d), void *arg)
{
	struct plain_cb c = { resend, arg };

	return nl_wpend_poll_to(p, now_ns, plain_resend, &c);
}

uint64_t
nl_wpend_poll_to(struct nl_wpend *p, uint64_t now_ns,
		 void (*resend)(void *arg, const struct nl_msg_done *d, unsigned int dest),
		 void *arg)
{
	uint64_t next = UINT64_MAX;

	if (p->n == 0 || now_ns < p->next_ns)
		return p->n == 0 ? UINT64_MAX : p->next_ns;
	for (size_t i = 0; i < (size_t)NL_WPEND_SETS * NL_WPEND_WAYS; i++) {
		struct nl_wpend_ent *e = &p->e[i];

		if (e->done.task_id == 0)
			continue;
		if (now_ns >= e->due_ns) {
			if (now_ns - e->first_ns >= NL_WPEND_GIVE_UP_NS) {
				e->done.task_id = 0;
				p->n--;
				p->n_to[e->dest]--;
				p->n_gave_up++;
				continue;
			}
			resend(arg, &e->done, e->dest);
			p->n_resent++;
			e->gap_ns = e->gap_ns * 2 < NL_WPEND_MAX_GAP_NS ? e->gap_ns * 2
									 : NL_WPEND_MAX_GAP_NS;
			e->due_ns = now_ns + e->gap_ns;
		}
		if (e->due_ns < next)
			next = e->due_ns;
	}
	p->next_ns = next;
	return next;
}

uint32_t
nl_wpend_drop_to(struct nl_wpend *p, unsigned int dest)
{
	uint32_t n = 0;

	if (dest >= NL_WPEND_DESTS || p->n_to[dest] == 0 || p->e == NULL)
		return 0;
	for (size_t i = 0; i < (size_t)NL_WPEND_SETS * NL_WPEND_WAYS; i++) {
		struct nl_wpend_ent *e = &p->e[i];

		if (e->done.task_id == 0 || e->dest != dest)
			continue;
		e->done.task_id = 0;
		n++;
	}
	p->n -= n;
	p->n_to[dest] -= n;
	p->n_dropped += n;
	if (p->n == 0)
		p->next_ns = UINT64_MAX; /* else next_ns may be early: a poll then recomputes it */
	return n;
}

uint32_t
nl_wpend_relay_to(struct nl_wpend *p, unsigned int from, unsigned int to, uint64_t now_ns,
		  uint32_t *relayed)
{
	uint32_t n = 0;

	*relayed = 0;
	if (from >= NL_WPEND_DESTS || to >= NL_WPEND_DESTS)
		return 0;
	if (p->e != NULL && p->n_to[from] != 0)
		for (size_t i = 0; i < (size_t)NL_WPEND_SETS * NL_WPEND_WAYS; i++) {
			struct nl_wpend_ent *e = &p->e[i];

			if (e->done.task_id == 0 || e->dest != from || e->done.origin_seq == 0)
				continue;
			if (e->done.relay == NL_RELAY_NONE)
				e->done.relay = NL_RELAY_ENDED;
			e->dest = (uint8_t)to;
			e->first_ns = e->due_ns = now_ns;
			e->gap_ns = NL_WPEND_FIRST_NS;
			p->n_to[from]--;
			p->n_to[to]++;
			n++;
		}
	if (n > 0)
		p->next_ns = now_ns;
	*relayed = n;
	return from == to ? 0 : nl_wpend_drop_to(p, from); /* (a restart: the rest stay) */
}

void
nl_wpend_each_to(const struct nl_wpend *p, unsigned int dest,
		 void (*fn)(void *arg, const struct nl_msg_done *d), void *arg)
{
	if (p->e == NULL || dest >= NL_WPEND_DESTS || p->n_to[dest] == 0)
		return;
	for (size_t i = 0; i < (size_t)NL_WPEND_SETS * NL_WPEND_WAYS; i++)
		if (p->e[i].done.task_id != 0 && p->e[i].dest == dest)
			fn(arg, &p->e[i].done);
}
