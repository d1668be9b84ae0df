/* SPDX-License-Identifier: BSD-3-Clause */
/* Inter-appliance messages: codec (nl_xa_proto.h, docs/protocol.md "Between appliances"). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <sodium.h>

#include "nl_xa_proto.h"

static uint64_t
rd_be(const uint8_t **p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = (v << 8) | (*p)[i];
	*p += n;
	return v;
}

static uint8_t *
wr_be(uint8_t *p, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return p + n;
}

static uint64_t
dbl_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return u;
}

static double
bits_dbl(uint64_t u)
{
	double d;

	memcpy(&d, &u, 8);
	return d;
}

size_t
nl_xa_task_wire_len(const struct nl_xa_task *t)
{
	return NL_XA_TASK_LEN + (((size_t)t->args_len + 7u) & ~(size_t)7u);
}

static size_t
rec_len(const struct nl_xa_msg *m, unsigned int i)
{
	switch (m->type) {
	case NL_XA_MSG_HANDOVER:
		return nl_xa_task_wire_len(&m->u.task[i]);
	case NL_XA_MSG_HANDBACK:
		return NL_XA_BACK_LEN;
	case NL_XA_MSG_ACK:
		return NL_XA_ACK_LEN;
	case NL_XA_MSG_SWIM:
		return NL_XA_SWIM_LEN;
	case NL_XA_MSG_HOLD:
		return NL_XA_HOLD_LEN;
	default:
		return NL_XA_SUM_LEN;
	}
}

static unsigned int
max_recs(uint8_t type)
{
	switch (type) {
	case NL_XA_MSG_HANDOVER:
		return NL_XA_MAX_TASKS;
	case NL_XA_MSG_HANDBACK:
		return NL_XA_MAX_BACKS;
	case NL_XA_MSG_SUMMARY:
		return NL_XA_MAX_SUMS;
	case NL_XA_MSG_ACK:
		return NL_XA_MAX_ACKS;
	case NL_XA_MSG_SWIM:
		return 1 + NL_XA_SWIM_MAX_UPD; /* the head, then the updates */
	case NL_XA_MSG_HOLD:
		return 1;
	default:
		return 0;
	}
}

/* The bounds of a record, shared by the encoder and the decoder (one definition of valid). */
static int
task_ok(const struct nl_xa_task *t)
{
	return t->to_mgr < NL_XA_MAX_MGR && t->origin_app < NL_XA_MAX_APPS && t->n_split >= 1 &&
	       t->n_split <= NL_PROTO_MAX_SPLIT && t->args_len <= NL_PROTO_MAX_ARGS &&
	       (t->flags & ~NL_XA_TF_ALL) == 0;
}

/* Datagrams that carry tasks are numbered (acknowledged, retransmitted); the others not. */
static int
seq_ok(uint8_t type, uint32_t dgram_seq)
{
	return (type == NL_XA_MSG_HANDOVER || type == NL_XA_MSG_HANDBACK) == (dgram_seq != 0);
}

static int
back_ok(const struct nl_xa_back *b)
{
	return b->reason <= NL_XA_REASON_UNSENT && b->n_done <= NL_PROTO_MAX_SPLIT &&
	       b->at_app < NL_XA_MAX_APPS;
}

static int
swim_head_ok(const struct nl_xa_swim *w)
{
	return w->type >= 1 && w->type <= NL_XA_SWIM_TYPE_MAX && w->target < NL_XA_MAX_APPS;
}

static int
swim_upd_ok(const struct nl_xa_swim_upd *u)
{
	return u->id < NL_XA_MAX_APPS && u->from < NL_XA_MAX_APPS &&
	       u->state <= NL_XA_SWIM_STATE_MAX;
}

bool
nl_xa_sum_from_future(const struct nl_xa_sum *s, double now_s, double ahead_max_s)
{
	/* !(a <= b) also refuses what cannot be compared (the decoder refuses NaN already) */
	return !(s->created_s <= now_s + ahead_max_s);
}

static int
sum_ok(const struct nl_xa_sum *s)
{
	return s->state <= 1 && isfinite(s->created_s) && isfinite(s->lifetime_s) &&
	       s->lifetime_s > 0;
}

int
nl_xa_encode(const struct nl_xa_msg *m, void *buf, size_t cap)
{
	uint8_t tmp[NL_PROTO_MAX_LEN];
	uint8_t *p = tmp;
	size_t len = NL_PROTO_HDR_LEN + NL_XA_PREFIX_LEN;

	if (m == NULL || buf == NULL || max_recs(m->type) == 0 || m->n == 0 ||
	    m->n > max_recs(m->type) || m->from_app >= NL_XA_MAX_APPS ||
	    !seq_ok(m->type, m->dgram_seq) ||
	    (m->type == NL_XA_MSG_SWIM && m->n != 1u + m->u.swim.n_upd))
		return -EINVAL;
	for (unsigned int i = 0; i < m->n; i++)
		len += rec_len(m, i);
	if (len > NL_PROTO_MAX_LEN - NL_AUTH_TRAILER_LEN)
		return -ENOSPC;
	if (len > cap)
		return -ENOSPC;
	memset(tmp, 0, len);
	p = wr_be(p, NL_PROTO_MAGIC, 2);
	p = wr_be(p, NL_PROTO_VERSION, 1);
	p = wr_be(p, m->type, 1);
	p = wr_be(p, len, 2);
	p = wr_be(p, 0, 2);
	p = wr_be(p, m->from_app, 2);
	p = wr_be(p, m->n, 2);
	p = wr_be(p, m->dgram_seq, 4);
	p = wr_be(p, m->incarnation, 8);
	for (unsigned int i = 0; i < m->n; i++) {
		if (m->type == NL_XA_MSG_HANDOVER) {
			const struct nl_xa_task *t = &m->u.task[i];

			if (!task_ok(t))
				return -EINVAL;
			p = wr_be(p, t->task_id, 8);
			p = wr_be(p, t->need, 8);
			p = wr_be(p, t->instr, 8);
			p = wr_be(p, t->data_bits, 8);
			p = wr_be(p, t->age_us, 8);
			p = wr_be(p, t->origin_seq, 4);
			p = wr_be(p, t->origin_token, 4);
			p = wr_be(p, t->to_mgr, 2);
			p = wr_be(p, t->origin_app, 2);
			p = wr_be(p, t->n_split, 2);
			p = wr_be(p, t->hops, 2);
			p = wr_be(p, t->cmd_id, 2);
			p = wr_be(p, t->args_len, 1);
			p = wr_be(p, t->flags, 1);
			p = wr_be(p, t->client_ip, 4);
			p = wr_be(p, t->client_port, 2);
			p = wr_be(p, 0, 6);
			memcpy(p, t->args, t->args_len);
			p += ((size_t)t->args_len + 7u) & ~(size_t)7u; /* padding stays 0 */
		} else if (m->type == NL_XA_MSG_HANDBACK) {
			const struct nl_xa_back *b = &m->u.back[i];

			if (!back_ok(b))
				return -EINVAL;
			p = wr_be(p, b->task_id, 8);
			p = wr_be(p, b->origin_token, 4);
			p = wr_be(p, b->origin_seq, 4);
			p = wr_be(p, b->reason, 2);
			p = wr_be(p, b->n_done, 2);
			p = wr_be(p, (uint32_t)b->status, 4);
			p = wr_be(p, b->hops, 2);
			p = wr_be(p, b->at_app, 2);
			p = wr_be(p, 0, 4);
		} else if (m->type == NL_XA_MSG_ACK) {
			if (m->u.ack[i] == 0)
				return -EINVAL;
			p = wr_be(p, m->u.ack[i], 4);
			p = wr_be(p, 0, 4);
		} else if (m->type == NL_XA_MSG_SWIM && i == 0) {
			const struct nl_xa_swim *w = &m->u.swim;

			if (!swim_head_ok(w))
				return -EINVAL;
			p = wr_be(p, w->type, 1);
			p = wr_be(p, 0, 3);
			p = wr_be(p, w->target, 4);
			p = wr_be(p, w->seq, 4);
			p = wr_be(p, 0, 4);
		} else if (m->type == NL_XA_MSG_HOLD) {
			if ((m->u.hold.flags & ~NL_XA_HOLD_F_ALL) != 0)
				return -EINVAL;
			p = wr_be(p, m->u.hold.held, 8);
			p = wr_be(p, m->u.hold.flags, 1);
			p = wr_be(p, 0, 7);
		} else if (m->type == NL_XA_MSG_SWIM) {
			const struct nl_xa_swim_upd *u = &m->u.swim.upd[i - 1];

			if (!swim_upd_ok(u))
				return -EINVAL;
			p = wr_be(p, u->id, 4);
			p = wr_be(p, u->incarnation, 4);
			p = wr_be(p, u->from, 4);
			p = wr_be(p, u->state, 1);
			p = wr_be(p, 0, 3);
		} else {
			const struct nl_xa_sum *s = &m->u.sum[i];

			if (!sum_ok(s))
				return -EINVAL;
			p = wr_be(p, s->src, 4);
			p = wr_be(p, s->cores, 4);
			p = wr_be(p, s->free_cores, 4);
			p = wr_be(p, s->mem_mb, 4);
			p = wr_be(p, s->arch, 2);
			p = wr_be(p, s->state, 1);
			p = wr_be(p, s->flags, 1);
			p = wr_be(p, 0, 4);
			p = wr_be(p, dbl_bits(s->created_s), 8);
			p = wr_be(p, dbl_bits(s->lifetime_s), 8);
			for (unsigned int k = 0; k < 3; k++)
				p = wr_be(p, s->aux[k], 8);
		}
	}
	memcpy(buf, tmp, len);
	return (int)len;
}

static int
zeros(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

enum nl_proto_err
nl_xa_decode(const void *buf, size_t len, unsigned int version, struct nl_xa_msg *out)
{
	const uint8_t *b = buf, *p, *end;
	size_t body, want;
	unsigned int n;

	if (buf == NULL || len < NL_PROTO_HDR_LEN)
		return NL_PROTO_E_TRUNC;
	if (len > NL_PROTO_MAX_LEN)
		return NL_PROTO_E_OVERSIZE;
	if (b[0] != (NL_PROTO_MAGIC >> 8) || b[1] != (NL_PROTO_MAGIC & 0xff))
		return NL_PROTO_E_MAGIC;
	if (b[2] != version || (version != NL_PROTO_VERSION && version != NL_PROTO_VERSION_AUTH))
		return NL_PROTO_E_VERSION;
	if (max_recs(b[3]) == 0)
		return NL_PROTO_E_TYPE;
	want = ((size_t)b[4] << 8) | b[5];
	if (want > len)
		return NL_PROTO_E_TRUNC;
	if (want < len)
		return NL_PROTO_E_OVERSIZE;
	if (b[6] != 0 || b[7] != 0)
		return NL_PROTO_E_FIELD;
	body = len - (version == NL_PROTO_VERSION_AUTH ? NL_AUTH_TRAILER_LEN : 0);
	if (len < NL_AUTH_TRAILER_LEN + NL_PROTO_HDR_LEN && version == NL_PROTO_VERSION_AUTH)
		return NL_PROTO_E_TRUNC;
	if (body < NL_PROTO_HDR_LEN + NL_XA_PREFIX_LEN)
		return NL_PROTO_E_TRUNC;
	memset(out, 0, offsetof(struct nl_xa_msg, u));
	out->type = b[3];
	p = b + NL_PROTO_HDR_LEN;
	end = b + body;
	out->from_app = (uint16_t)rd_be(&p, 2);
	n = (unsigned int)rd_be(&p, 2);
	out->dgram_seq = (uint32_t)rd_be(&p, 4);
	out->incarnation = rd_be(&p, 8);
	if (out->from_app >= NL_XA_MAX_APPS || n == 0 || n > max_recs(out->type) ||
	    out->incarnation == 0 || !seq_ok(out->type, out->dgram_seq))
		return NL_PROTO_E_FIELD;
	out->n = (uint16_t)n;
	for (unsigned int i = 0; i < n; i++) {
		if (out->type == NL_XA_MSG_HANDOVER) {
			struct nl_xa_task *t = &out->u.task[i];
			size_t al;

			if ((size_t)(end - p) < NL_XA_TASK_LEN)
				return NL_PROTO_E_TRUNC;
			t->task_id = rd_be(&p, 8);
			t->need = rd_be(&p, 8);
			t->instr = rd_be(&p, 8);
			t->data_bits = rd_be(&p, 8);
			t->age_us = rd_be(&p, 8);
			t->origin_seq = (uint32_t)rd_be(&p, 4);
			t->origin_token = (uint32_t)rd_be(&p, 4);
			t->to_mgr = (uint16_t)rd_be(&p, 2);
			t->origin_app = (uint16_t)rd_be(&p, 2);
			t->n_split = (uint16_t)rd_be(&p, 2);
			t->hops = (uint16_t)rd_be(&p, 2);
			t->cmd_id = (uint16_t)rd_be(&p, 2);
			t->args_len = (uint8_t)rd_be(&p, 1);
			t->flags = (uint8_t)rd_be(&p, 1);
			t->client_ip = (uint32_t)rd_be(&p, 4);
			t->client_port = (uint16_t)rd_be(&p, 2);
			if (!zeros(p, 6) || !task_ok(t))
				return NL_PROTO_E_FIELD;
			p += 6;
			al = ((size_t)t->args_len + 7u) & ~(size_t)7u;
			if ((size_t)(end - p) < al)
				return NL_PROTO_E_TRUNC;
			memcpy(t->args, p, t->args_len);
			if (!zeros(p + t->args_len, al - t->args_len))
				return NL_PROTO_E_FIELD;
			p += al;
		} else if (out->type == NL_XA_MSG_HANDBACK) {
			struct nl_xa_back *k = &out->u.back[i];

			if ((size_t)(end - p) < NL_XA_BACK_LEN)
				return NL_PROTO_E_TRUNC;
			k->task_id = rd_be(&p, 8);
			k->origin_token = (uint32_t)rd_be(&p, 4);
			k->origin_seq = (uint32_t)rd_be(&p, 4);
			k->reason = (uint16_t)rd_be(&p, 2);
			k->n_done = (uint16_t)rd_be(&p, 2);
			k->status = (int32_t)(uint32_t)rd_be(&p, 4);
			k->hops = (uint16_t)rd_be(&p, 2);
			k->at_app = (uint16_t)rd_be(&p, 2);
			if (!zeros(p, 4) || !back_ok(k))
				return NL_PROTO_E_FIELD;
			p += 4;
		} else if (out->type == NL_XA_MSG_ACK) {
			if ((size_t)(end - p) < NL_XA_ACK_LEN)
				return NL_PROTO_E_TRUNC;
			out->u.ack[i] = (uint32_t)rd_be(&p, 4);
			if (out->u.ack[i] == 0 || !zeros(p, 4))
				return NL_PROTO_E_FIELD;
			p += 4;
		} else if (out->type == NL_XA_MSG_HOLD) {
			if ((size_t)(end - p) < NL_XA_HOLD_LEN)
				return NL_PROTO_E_TRUNC;
			out->u.hold.held = rd_be(&p, 8);
			out->u.hold.flags = (uint8_t)rd_be(&p, 1);
			if (!zeros(p, 7) || (out->u.hold.flags & ~NL_XA_HOLD_F_ALL) != 0)
				return NL_PROTO_E_FIELD;
			p += 7;
		} else if (out->type == NL_XA_MSG_SWIM) {
			struct nl_xa_swim *w = &out->u.swim;

			if ((size_t)(end - p) < NL_XA_SWIM_LEN)
				return NL_PROTO_E_TRUNC;
			if (i == 0) {
				w->type = (uint8_t)rd_be(&p, 1);
				w->n_upd = (uint8_t)(n - 1);
				if (!zeros(p, 3))
					return NL_PROTO_E_FIELD;
				p += 3;
				w->target = (uint32_t)rd_be(&p, 4);
				w->seq = (uint32_t)rd_be(&p, 4);
				if (!zeros(p, 4) || !swim_head_ok(w))
					return NL_PROTO_E_FIELD;
				p += 4;
			} else {
				struct nl_xa_swim_upd *u = &w->upd[i - 1];

				u->id = (uint32_t)rd_be(&p, 4);
				u->incarnation = (uint32_t)rd_be(&p, 4);
				u->from = (uint32_t)rd_be(&p, 4);
				u->state = (uint8_t)rd_be(&p, 1);
				if (!zeros(p, 3) || !swim_upd_ok(u))
					return NL_PROTO_E_FIELD;
				p += 3;
			}
		} else {
			struct nl_xa_sum *s = &out->u.sum[i];

			if ((size_t)(end - p) < NL_XA_SUM_LEN)
				return NL_PROTO_E_TRUNC;
			s->src = (uint32_t)rd_be(&p, 4);
			s->cores = (uint32_t)rd_be(&p, 4);
			s->free_cores = (uint32_t)rd_be(&p, 4);
			s->mem_mb = (uint32_t)rd_be(&p, 4);
			s->arch = (uint16_t)rd_be(&p, 2);
			s->state = (uint8_t)rd_be(&p, 1);
			s->flags = (uint8_t)rd_be(&p, 1);
			if (!zeros(p, 4))
				return NL_PROTO_E_FIELD;
			p += 4;
			s->created_s = bits_dbl(rd_be(&p, 8));
			s->lifetime_s = bits_dbl(rd_be(&p, 8));
			for (unsigned int k = 0; k < 3; k++)
				s->aux[k] = rd_be(&p, 8);
			if (!sum_ok(s))
				return NL_PROTO_E_FIELD;
		}
	}
	if (p != end)
		return NL_PROTO_E_OVERSIZE;
	return NL_PROTO_OK;
}

enum nl_proto_err
nl_xa_open(const struct nl_auth_key *key, struct nl_replay *rp, const void *buf, size_t len,
	   uint64_t now_ns, struct nl_xa_msg *out)
{
	uint64_t sender, seq;
	enum nl_proto_err e;

	if (key == NULL)
		return nl_xa_decode(buf, len, NL_PROTO_VERSION, out);
	e = nl_auth_verify(key, buf, len, &sender, &seq);
	if (e == NL_PROTO_OK)
		e = nl_replay_check(rp, sender, seq, now_ns);
	if (e == NL_PROTO_OK)
		e = nl_xa_decode(buf, len, NL_PROTO_VERSION_AUTH, out);
	return e;
}

int
nl_xa_seal(const void *msg, size_t n, struct nl_auth_tx *tx, uint64_t now_ns, void *buf,
	   size_t cap)
{
	uint8_t tmp[NL_PROTO_MAX_LEN];
	uint64_t seq;
	size_t len = n + NL_AUTH_TRAILER_LEN;

	if (n < NL_PROTO_HDR_LEN || n > NL_PROTO_MAX_LEN)
		return -EINVAL;
	if (tx == NULL) {
		if (cap < n)
			return -ENOSPC;
		memcpy(buf, msg, n);
		return (int)n;
	}
	if (len > NL_PROTO_MAX_LEN)
		return -EINVAL;
	if (cap < len)
		return -ENOSPC;
	memcpy(tmp, msg, n);
	seq = now_ns > tx->seq ? now_ns : tx->seq + 1;
	tx->seq = seq;
	tmp[2] = NL_PROTO_VERSION_AUTH;
	wr_be(tmp + 4, len, 2);
	wr_be(tmp + n, tx->sender, 8);
	wr_be(tmp + n + 8, seq, 8);
	crypto_shorthash_siphashx24(tmp + len - NL_AUTH_TAG_LEN, tmp, len - NL_AUTH_TAG_LEN,
				    tx->key.k);
	memcpy(buf, tmp, len);
	return (int)len;
}
