/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replay window of protocol version 2 (nl_proto.h: nl_replay_init(), nl_replay_check()):
 * per sender the highest sequence number accepted and a bitmap of the ones below it, in a
 * set-associative table of senders.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nl_proto.h"

/* ---- replay window (RFC 4303 section 3.4.3, bitmap as a ring of words per RFC 6479) ---- */

#define NL_REPLAY_WORDS (NL_REPLAY_WINDOW / 64u + 1u)
#define NL_REPLAY_WAYS 4u

struct nl_replay_ent {
	uint64_t sender;      /* 0 = empty */
	uint64_t top;         /* highest sequence number accepted */
	uint64_t bits[NL_REPLAY_WORDS];
};

int
nl_replay_init(struct nl_replay *rp, unsigned int senders)
{
	unsigned int sets = 1;

	if (senders < NL_REPLAY_WAYS || senders > (1u << 24))
		return -EINVAL;
	while (sets * NL_REPLAY_WAYS < senders)
		sets <<= 1;
	rp->ent = calloc((size_t)sets * NL_REPLAY_WAYS, sizeof(*rp->ent));
	if (rp->ent == NULL)
		return -ENOMEM;
	rp->set_mask = sets - 1;
	rp->n_ent = sets * NL_REPLAY_WAYS;
	rp->skew_ns = NL_REPLAY_SKEW_NS;
	rp->full = 0;
	return 0;
}

void
nl_replay_free(struct nl_replay *rp)
{
	free(rp->ent);
	rp->ent = NULL;
}

static bool
bit_test_set(struct nl_replay_ent *e, uint64_t seq)
{
	uint64_t *w = &e->bits[(seq / 64) % NL_REPLAY_WORDS], b = 1ull << (seq % 64);
	bool was = (*w & b) != 0;

	*w |= b;
	return was;
}

enum nl_proto_err
nl_replay_check(struct nl_replay *rp, uint64_t sender, uint64_t seq, uint64_t now_ns)
{
	struct nl_replay_ent *set, *e = NULL, *free_e = NULL;
	unsigned int s;

	/* Outside the clock tolerance: too old to be told from a replay, or from the future. */
	if (sender == 0 || seq + rp->skew_ns < now_ns || seq > now_ns + rp->skew_ns)
		return NL_PROTO_E_REPLAY;
	s = (unsigned int)((sender * 0x9e3779b97f4a7c15ull) >> 40) & rp->set_mask;
	set = &rp->ent[(size_t)s * NL_REPLAY_WAYS];
	for (unsigned int i = 0; i < NL_REPLAY_WAYS; i++) {
		if (set[i].sender == sender) {
			e = &set[i];
			break;
		}
		/* empty, or stale: its every frame is now outside the clock tolerance */
		if (free_e == NULL && (set[i].sender == 0 || set[i].top + rp->skew_ns < now_ns))
			free_e = &set[i];
	}
	if (e == NULL) {
		if (free_e == NULL) {
			rp->full++;
			return NL_PROTO_E_REPLAY; /* no room to remember this sender */
		}
		e = free_e;
		memset(e, 0, sizeof(*e));
		e->sender = sender;
		e->top = seq;
		bit_test_set(e, seq);
		return NL_PROTO_OK;
	}
	if (seq > e->top) {
		uint64_t ow = e->top / 64, nw = seq / 64;

		if (seq - e->top >= NL_REPLAY_WINDOW) {
			memset(e->bits, 0, sizeof(e->bits));
		} else {
			/* words entered since top start empty; top's own word keeps its bits */
			for (uint64_t w = ow + 1; w <= nw; w++)
				e->bits[w % NL_REPLAY_WORDS] = 0;
		}
		e->top = seq;
		bit_test_set(e, seq);
		return NL_PROTO_OK;
	}
	if (e->top - seq >= NL_REPLAY_WINDOW)
		return NL_PROTO_E_REPLAY; /* older than the window */
	return bit_test_set(e, seq) ? NL_PROTO_E_REPLAY : NL_PROTO_OK;
}
