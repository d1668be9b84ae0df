/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wire protocol codec (nl_proto.h, docs/protocol.md). Big-endian fields read and written
 * byte by byte, so the code has no alignment or aliasing assumptions about the buffer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "nl_proto.h"

/* Fixed body sizes after the 8-byte header. */
#define SUBMIT_FIX 48u
#define REPLY_FIX 16u
#define REJECT_FIX 24u
#define COMPLETE_FIX 32u
#define DISPATCH_FIX 40u
#define DONE_FIX 24u
#define DONE_EXT 20u /* #33: state (1), pad (3), run_ms, queue_ms, cpu_ms, mem_peak_kib (4 each) */
#define ORIGIN_LEN 16u /* #36: DISPATCH's origin block */
#define RELAY_LEN 12u  /* #36: DONE's relay block */
#define HELLO_FIX 8u
#define MACH_LEN 48u
#define BYE_FIX 8u

/* DONE carries its issue-#33 fields when one is not 0 (absent = all 0). */
static bool
done_ext(const struct nl_msg_done *d)
{
	return (d->state | d->run_ms | d->queue_ms | d->cpu_ms | d->mem_peak_kib) != 0;
}

struct rd {
	const uint8_t *p;
};

static uint64_t
get(struct rd *r, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = (v << 8) | r->p[i];
	r->p += n;
	return v;
}

static uint8_t *
put(uint8_t *p, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return p + n;
}

/* #36: DISPATCH's origin block, when the task came from another appliance */
static uint8_t *
put_origin(uint8_t *p, const struct nl_msg_dispatch *d)
{
	if (!d->has_origin)
		return p;
	p = put(p, d->origin_app, 2);
	p = put(p, d->origin_port, 2);
	p = put(p, ntohl(d->origin_ip), 4);
	p = put(p, d->origin_token, 4);
	return put(p, d->origin_seq, 4);
}

static enum nl_proto_err
check_len(size_t have, size_t want)
{
	if (have < want)
		return NL_PROTO_E_TRUNC;
	if (have > want)
		return NL_PROTO_E_OVERSIZE;
	return NL_PROTO_OK;
}

static enum nl_proto_err
decode_mach(struct rd *r, struct nl_msg_mach *m, uint8_t type, uint16_t flags)
{
	m->speed_ips = get(r, 8);
	m->link_bps = get(r, 8);
	m->res_set = get(r, 8);
	m->res_any = get(r, 8);
	m->slot = (uint32_t)get(r, 4);
	m->n_sub = (uint32_t)get(r, 4);
	m->backlog_ns = get(r, 8);
	if (type == NL_MSG_HELLO && (flags & NL_HELLO_F_REPLY) == 0 &&
	    (m->speed_ips == 0 || m->link_bps == 0 || (m->res_set & m->res_any) != 0))
		return NL_PROTO_E_FIELD;
	return NL_PROTO_OK;
}

/*
 * Decode a message of version `want`: version 1 is the whole datagram; version 2 carries the
 * 32-byte authentication trailer, which the length field covers and the body checks skip.
 */
static enum nl_proto_err
decode_ver(const void *buf, size_t len, struct nl_msg *out, unsigned int want)
{
	struct rd r = { .p = buf };
	unsigned int magic, ver, type, mlen, resv;
	enum nl_proto_err e;

	if (buf == NULL || len < NL_PROTO_HDR_LEN)
		return NL_PROTO_E_TRUNC;
	if (len > NL_PROTO_MAX_LEN)
		return NL_PROTO_E_OVERSIZE;
	magic = (unsigned int)get(&r, 2);
	ver = (unsigned int)get(&r, 1);
	type = (unsigned int)get(&r, 1);
	mlen = (unsigned int)get(&r, 2);
	resv = (unsigned int)get(&r, 2);
	if (magic != NL_PROTO_MAGIC)
		return NL_PROTO_E_MAGIC;
	if (ver != want)
		return NL_PROTO_E_VERSION;
	if ((type == 0 || type >= NL_MSG_TYPE_MAX) && !nl_farm_type(type))
		return NL_PROTO_E_TYPE;
	e = check_len(len, mlen);
	if (e != NL_PROTO_OK)
		return e;
	if (resv != 0)
		return NL_PROTO_E_FIELD;
	if (want == NL_PROTO_VERSION_AUTH) {
		if (len < NL_PROTO_HDR_LEN + NL_AUTH_TRAILER_LEN)
			return NL_PROTO_E_TRUNC;
		len -= NL_AUTH_TRAILER_LEN; /* the body ends where the trailer starts */
	}
	memset(out, 0, sizeof(*out));
	out->type = (uint8_t)type;
	if (nl_farm_type(type)) /* task-farm messages: nl_proto_farm.c */
		return (enum nl_proto_err)nl_farm_decode_body(type, r.p, len - NL_PROTO_HDR_LEN,
							      &out->u.farm);
	switch (type) {
	case NL_MSG_SUBMIT: {
		struct nl_msg_submit *s = &out->u.submit;

		if (len < NL_PROTO_HDR_LEN + SUBMIT_FIX)
			return NL_PROTO_E_TRUNC;
		s->task_id = get(&r, 8);
		s->need = get(&r, 8);
		s->instr = get(&r, 8);
		s->data_bits = get(&r, 8);
		s->client_ts_ns = get(&r, 8);
		s->n_split = (uint16_t)get(&r, 2);
		s->cmd_id = (uint16_t)get(&r, 2);
		s->args_len = (uint8_t)get(&r, 1);
		s->flags = (uint8_t)get(&r, 1);
		/* flags: version 2, and version 1's resend only (a version-1 client's pad byte
		 * stays 0 otherwise) */
		if (get(&r, 2) != 0 || s->n_split == 0 || s->n_split > NL_PROTO_MAX_SPLIT ||
		    s->args_len > NL_PROTO_MAX_ARGS || (s->flags & ~NL_SUBMIT_F_ALL) != 0 ||
		    ((s->flags & ~NL_SUBMIT_F_V1) != 0 && want != NL_PROTO_VERSION_AUTH))
			return NL_PROTO_E_FIELD;
		e = check_len(len, NL_PROTO_HDR_LEN + SUBMIT_FIX + s->args_len);
		if (e != NL_PROTO_OK)
			return e;
		memcpy(s->args, r.p, s->args_len);
		return NL_PROTO_OK;
	}
	case NL_MSG_ACCEPT:
	case NL_MSG_REJECT:
	case NL_MSG_COMPLETE: {
		struct nl_msg_reply *p = &out->u.reply;
		size_t want = type == NL_MSG_ACCEPT ? REPLY_FIX :
			      type == NL_MSG_REJECT ? REJECT_FIX : COMPLETE_FIX;

		e = check_len(len, NL_PROTO_HDR_LEN + want);
		if (e != NL_PROTO_OK)
			return e;
		p->task_id = get(&r, 8);
		p->client_ts_ns = get(&r, 8);
		if (type == NL_MSG_REJECT) {
			p->reason = (uint16_t)get(&r, 2);
			if (get(&r, 6) != 0 || p->reason == 0 || p->reason > 15)
				return NL_PROTO_E_FIELD;
		} else if (type == NL_MSG_COMPLETE) {
			p->reason = (uint16_t)get(&r, 2);
			p->n_done = (uint16_t)get(&r, 2);
			p->status = (int32_t)(uint32_t)get(&r, 4);
			p->resp_us = (uint32_t)get(&r, 4);
			if (get(&r, 4) != 0 || p->reason > 15 || p->n_done > NL_PROTO_MAX_SPLIT)
				return NL_PROTO_E_FIELD;
		}
		return NL_PROTO_OK;
	}
	case NL_MSG_DISPATCH: {
		struct nl_msg_dispatch *d = &out->u.dispatch;

		if (len < NL_PROTO_HDR_LEN + DISPATCH_FIX)
			return NL_PROTO_E_TRUNC;
		d->task_id = get(&r, 8);
		d->instr = get(&r, 8);
		d->data_bits = get(&r, 8);
		d->mach = (uint32_t)get(&r, 4);
		d->token = (uint32_t)get(&r, 4);
		d->sub = (uint16_t)get(&r, 2);
		d->n_split = (uint16_t)get(&r, 2);
		d->cmd_id = (uint16_t)get(&r, 2);
		d->args_len = (uint8_t)get(&r, 1);
		d->attempt = (uint8_t)get(&r, 1); /* #34 (a pad before: 0 = not given) */
		if (d->n_split == 0 || d->n_split > NL_PROTO_MAX_SPLIT ||
		    d->sub >= d->n_split || d->args_len > NL_PROTO_MAX_ARGS ||
		    d->mach >= NL_PROTO_MAX_MACH)
			return NL_PROTO_E_FIELD;
		/* version 2 carries the submitter's principal id after the arguments (#35); then,
		 * in both versions, time_limit_ms when not 0 (#33): the body length tells */
		size_t base = NL_PROTO_HDR_LEN + DISPATCH_FIX + d->args_len +
			      (want == NL_PROTO_VERSION_AUTH ? 4u : 0u);

		/* then #36's origin block (12 bytes) when the task came from another appliance:
		 * base, +4, +12, +16 are the four lengths */
		size_t tl = len == base + 4 || len == base + 4 + ORIGIN_LEN ? 4u : 0u;
		size_t ob = len >= base + tl + ORIGIN_LEN ? ORIGIN_LEN : 0u;

		e = check_len(len, base + tl + ob);
		if (e != NL_PROTO_OK)
			return e;
		memcpy(d->args, r.p, d->args_len);
		r.p += d->args_len;
		if (want == NL_PROTO_VERSION_AUTH)
			d->principal = (uint32_t)get(&r, 4);
		if (tl != 0 && (d->time_limit_ms = (uint32_t)get(&r, 4)) == 0)
			return NL_PROTO_E_FIELD; /* canonical: a 0 limit is not sent */
		if (ob != 0) {
			d->has_origin = 1;
			d->origin_app = (uint16_t)get(&r, 2);
			d->origin_port = (uint16_t)get(&r, 2);
			d->origin_ip = htonl((uint32_t)get(&r, 4));
			d->origin_token = (uint32_t)get(&r, 4);
			d->origin_seq = (uint32_t)get(&r, 4);
		}
		return NL_PROTO_OK;
	}
	case NL_MSG_DONE: {
		struct nl_msg_done *d = &out->u.done;

		/* #33: state, run_ms, queue_ms, cpu_ms, mem_peak_kib when one is not 0; then #36's
		 * relay block: FIX, +20, +12, +32 are the four lengths */
		size_t body = len > NL_PROTO_HDR_LEN + DONE_FIX ? len - NL_PROTO_HDR_LEN - DONE_FIX : 0;
		bool ext = body == DONE_EXT || body == DONE_EXT + RELAY_LEN;
		bool rel = body == RELAY_LEN || body == DONE_EXT + RELAY_LEN;

		e = check_len(len, NL_PROTO_HDR_LEN + DONE_FIX + (ext ? DONE_EXT : 0u) +
					   (rel ? RELAY_LEN : 0u));
		if (e != NL_PROTO_OK)
			return e;
		d->task_id = get(&r, 8);
		d->mach = (uint32_t)get(&r, 4);
		d->token = (uint32_t)get(&r, 4);
		d->sub = (uint16_t)get(&r, 2);
		if (get(&r, 2) != 0 || d->sub >= NL_PROTO_MAX_SPLIT || d->mach >= NL_PROTO_MAX_MACH)
			return NL_PROTO_E_FIELD;
		d->status = (int32_t)(uint32_t)get(&r, 4);
		if (ext) {
			d->state = (uint8_t)get(&r, 1);
			if (get(&r, 3) != 0 || d->state >= NL_DONE_STATE_MAX)
				return NL_PROTO_E_FIELD;
			d->run_ms = (uint32_t)get(&r, 4);
			d->queue_ms = (uint32_t)get(&r, 4);
			d->cpu_ms = (uint32_t)get(&r, 4);
			d->mem_peak_kib = (uint32_t)get(&r, 4);
			if (!done_ext(d))
				return NL_PROTO_E_FIELD; /* canonical */
		}
		if (rel) {
			d->origin_app = (uint16_t)get(&r, 2);
			d->relay = (uint8_t)get(&r, 1);
			if (get(&r, 1) != 0 || d->relay == NL_RELAY_NONE || d->relay >= NL_RELAY_MAX)
				return NL_PROTO_E_FIELD;
			d->origin_token = (uint32_t)get(&r, 4);
			d->origin_seq = (uint32_t)get(&r, 4);
		}
		return NL_PROTO_OK;
	}
	case NL_MSG_HELLO:
	case NL_MSG_LOAD: {
		struct nl_msg_hello *h = &out->u.hello;

		if (len < NL_PROTO_HDR_LEN + HELLO_FIX)
			return NL_PROTO_E_TRUNC;
		h->worker_id = (uint32_t)get(&r, 4);
		h->n_mach = (uint16_t)get(&r, 2);
		h->flags = (uint16_t)get(&r, 2);
		if (h->n_mach == 0 || h->n_mach > NL_PROTO_MAX_MACH ||
		    (h->flags & ~(unsigned int)(NL_HELLO_F_REPLY | NL_HELLO_F_REJOIN |
						NL_HELLO_F_FAILOVER | NL_HELLO_F_NEW)) != 0 ||
		    h->flags == NL_HELLO_F_REJOIN ||
		    ((h->flags & NL_HELLO_F_NEW) && !(h->flags & NL_HELLO_F_REPLY)) ||
		    ((h->flags & NL_HELLO_F_FAILOVER) && h->flags != NL_HELLO_F_FAILOVER) ||
		    (type == NL_MSG_LOAD && h->flags != 0))
			return NL_PROTO_E_FIELD;
		e = check_len(len, NL_PROTO_HDR_LEN + HELLO_FIX + (size_t)h->n_mach * MACH_LEN);
		if (e != NL_PROTO_OK)
			return e;
		for (unsigned int i = 0; i < h->n_mach; i++) {
			e = decode_mach(&r, &h->mach[i], (uint8_t)type, h->flags);
			if (e != NL_PROTO_OK)
				return e;
		}
		return NL_PROTO_OK;
	}
	case NL_MSG_BYE:
		e = check_len(len, NL_PROTO_HDR_LEN + BYE_FIX);
		if (e != NL_PROTO_OK)
			return e;
		out->u.bye.worker_id = (uint32_t)get(&r, 4);
		if (get(&r, 4) != 0)
			return NL_PROTO_E_FIELD;
		return NL_PROTO_OK;
	}
	return NL_PROTO_E_TYPE;
}

enum nl_proto_err
nl_proto_decode(const void *buf, size_t len, struct nl_msg *out)
{
	return decode_ver(buf, len, out, NL_PROTO_VERSION);
}

enum nl_proto_err
nl_proto_decode_sealed(const void *buf, size_t len, struct nl_msg *out)
{
	return decode_ver(buf, len, out, NL_PROTO_VERSION_AUTH);
}

int
nl_proto_encode(const struct nl_msg *m, void *buf, size_t cap)
{
	uint8_t tmp[NL_PROTO_MAX_LEN];
	uint8_t *p = tmp + NL_PROTO_HDR_LEN;
	size_t len;
	struct nl_msg chk;

	switch (m->type) {
	case NL_MSG_SUBMIT: {
		const struct nl_msg_submit *s = &m->u.submit;

		if (s->args_len > NL_PROTO_MAX_ARGS)
			return -EINVAL;
		p = put(p, s->task_id, 8);
		p = put(p, s->need, 8);
		p = put(p, s->instr, 8);
		p = put(p, s->data_bits, 8);
		p = put(p, s->client_ts_ns, 8);
		p = put(p, s->n_split, 2);
		p = put(p, s->cmd_id, 2);
		p = put(p, s->args_len, 1);
		p = put(p, s->flags, 1);
		p = put(p, 0, 2);
		memcpy(p, s->args, s->args_len);
		p += s->args_len;
		break;
	}
	case NL_MSG_ACCEPT:
	case NL_MSG_REJECT:
	case NL_MSG_COMPLETE: {
		const struct nl_msg_reply *r = &m->u.reply;

		p = put(p, r->task_id, 8);
		p = put(p, r->client_ts_ns, 8);
		if (m->type == NL_MSG_REJECT) {
			p = put(p, r->reason, 2);
			p = put(p, 0, 6);
		} else if (m->type == NL_MSG_COMPLETE) {
			p = put(p, r->reason, 2);
			p = put(p, r->n_done, 2);
			p = put(p, (uint32_t)r->status, 4);
			p = put(p, r->resp_us, 4);
			p = put(p, 0, 4);
		}
		break;
	}
	case NL_MSG_DISPATCH: {
		const struct nl_msg_dispatch *d = &m->u.dispatch;

		if (d->args_len > NL_PROTO_MAX_ARGS)
			return -EINVAL;
		p = put(p, d->task_id, 8);
		p = put(p, d->instr, 8);
		p = put(p, d->data_bits, 8);
		p = put(p, d->mach, 4);
		p = put(p, d->token, 4);
		p = put(p, d->sub, 2);
		p = put(p, d->n_split, 2);
		p = put(p, d->cmd_id, 2);
		p = put(p, d->args_len, 1);
		p = put(p, d->attempt, 1); /* #34 */
		memcpy(p, d->args, d->args_len);
		p += d->args_len;
		if (d->time_limit_ms != 0) /* #33 (version 2: moved after the principal) */
			p = put(p, d->time_limit_ms, 4);
		p = put_origin(p, d);   /* #36 (version 2: after the time limit too) */
		break;
	}
	case NL_MSG_DONE: {
		const struct nl_msg_done *d = &m->u.done;

		p = put(p, d->task_id, 8);
		p = put(p, d->mach, 4);
		p = put(p, d->token, 4);
		p = put(p, d->sub, 2);
		p = put(p, 0, 2);
		p = put(p, (uint32_t)d->status, 4);
		if (d->relay >= NL_RELAY_MAX)
			return -EINVAL;
		if (done_ext(d)) {
			p = put(p, d->state, 1);
			p = put(p, 0, 3);
			p = put(p, d->run_ms, 4);
			p = put(p, d->queue_ms, 4);
			p = put(p, d->cpu_ms, 4);
			p = put(p, d->mem_peak_kib, 4);
		}
		if (d->relay != NL_RELAY_NONE) { /* #36 */
			p = put(p, d->origin_app, 2);
			p = put(p, d->relay, 1);
			p = put(p, 0, 1);
			p = put(p, d->origin_token, 4);
			p = put(p, d->origin_seq, 4);
		}
		break;
	}
	case NL_MSG_HELLO:
	case NL_MSG_LOAD: {
		const struct nl_msg_hello *h = &m->u.hello;

		if (h->n_mach == 0 || h->n_mach > NL_PROTO_MAX_MACH)
			return -EINVAL;
		p = put(p, h->worker_id, 4);
		p = put(p, h->n_mach, 2);
		p = put(p, h->flags, 2);
		for (unsigned int i = 0; i < h->n_mach; i++) {
			const struct nl_msg_mach *x = &h->mach[i];

			p = put(p, x->speed_ips, 8);
			p = put(p, x->link_bps, 8);
			p = put(p, x->res_set, 8);
			p = put(p, x->res_any, 8);
			p = put(p, x->slot, 4);
			p = put(p, x->n_sub, 4);
			p = put(p, x->backlog_ns, 8);
		}
		break;
	}
	case NL_MSG_BYE:
		p = put(p, m->u.bye.worker_id, 4);
		p = put(p, 0, 4);
		break;
	default: /* task-farm messages (nl_proto_farm.c); anything else: -EINVAL */
		p = nl_farm_encode_at(m->type, &m->u.farm, p,
				      sizeof(tmp) - NL_AUTH_TRAILER_LEN - (size_t)(p - tmp));
		if (p == NULL)
			return -EINVAL;
	}
	len = (size_t)(p - tmp);
	put(tmp, NL_PROTO_MAGIC, 2);
	put(tmp + 2, NL_PROTO_VERSION, 1);
	put(tmp + 3, m->type, 1);
	put(tmp + 4, len, 2);
	put(tmp + 6, 0, 2);
	/* What we send must pass our own parser: the bounds live in one place. SUBMIT flags are
	 * version 2's (checked here, then sealed) but resend: the version-1 check sees only
	 * that one. */
	uint8_t sflags = m->type == NL_MSG_SUBMIT ? m->u.submit.flags : 0;

	if ((sflags & ~NL_SUBMIT_F_ALL) != 0)
		return -EINVAL;
	if (m->type == NL_MSG_SUBMIT)
		tmp[NL_PROTO_HDR_LEN + 45] = sflags & NL_SUBMIT_F_V1;
	if (nl_proto_decode(tmp, len, &chk) != NL_PROTO_OK)
		return -EINVAL;
	if (m->type == NL_MSG_SUBMIT)
		tmp[NL_PROTO_HDR_LEN + 45] = sflags;
	if (cap < len)
		return -ENOSPC;
	memcpy(buf, tmp, len);
	return (int)len;
}

static uint16_t
ip_csum(const uint8_t *h, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

enum nl_proto_err
nl_frame_parse(const uint8_t *frame, size_t len, uint16_t port, struct nl_frame_addr *addr,
	       const uint8_t **payload, size_t *plen)
{
	const uint8_t *ip, *udp;
	size_t ihl, tot, ulen;
	struct rd r;

	if (len < 14 || frame[12] != 0x08 || frame[13] != 0x00)
		return NL_PROTO_E_ETH;
	memcpy(addr->dst_mac, frame, 6);
	memcpy(addr->src_mac, frame + 6, 6);
	ip = frame + 14;
	if (len < 14 + 20)
		return NL_PROTO_E_TRUNC;
	ihl = (size_t)(ip[0] & 0xf) * 4;
	r.p = ip + 2;
	tot = (size_t)get(&r, 2);
	if ((ip[0] >> 4) != 4 || ihl < 20 || 14 + ihl > len || tot < ihl || 14 + tot > len)
		return NL_PROTO_E_IP;
	if ((ip[6] & 0x3f) != 0 || ip[7] != 0) /* MF or fragment offset: no fragments */
		return NL_PROTO_E_IP;
	if (ip_csum(ip, ihl) != 0)
		return NL_PROTO_E_IP;
	if (ip[9] != 17)
		return NL_PROTO_E_UDP;
	udp = ip + ihl;
	if (tot < ihl + 8)
		return NL_PROTO_E_UDP;
	r.p = udp + 4;
	ulen = (size_t)get(&r, 2);
	if (ulen < 8 || ulen > tot - ihl)
		return NL_PROTO_E_UDP;
	r.p = ip + 12;
	addr->src_ip = 0;
	memcpy(&addr->src_ip, ip + 12, 4);
	memcpy(&addr->dst_ip, ip + 16, 4);
	r.p = udp;
	addr->src_port = (uint16_t)get(&r, 2);
	addr->dst_port = (uint16_t)get(&r, 2);
	if (port != 0 && addr->dst_port != port)
		return NL_PROTO_E_PORT;
	*payload = udp + 8;
	*plen = ulen - 8;
	return NL_PROTO_OK;
}

int
nl_frame_build(uint8_t *frame, const struct nl_frame_addr *addr, size_t plen)
{
	uint8_t *ip = frame + 14, *udp = frame + 34;
	uint16_t c;

	if (plen > NL_PROTO_MAX_LEN)
		return -EINVAL;
	memcpy(frame, addr->dst_mac, 6);
	memcpy(frame + 6, addr->src_mac, 6);
	frame[12] = 0x08;
	frame[13] = 0x00;
	ip[0] = 0x45;
	ip[1] = 0;
	put(ip + 2, 20 + 8 + plen, 2);
	put(ip + 4, 0, 2);
	put(ip + 6, 0x4000, 2); /* DF */
	ip[8] = 64;
	ip[9] = 17;
	put(ip + 10, 0, 2);
	memcpy(ip + 12, &addr->src_ip, 4);
	memcpy(ip + 16, &addr->dst_ip, 4);
	c = ip_csum(ip, 20);
	put(ip + 10, c, 2);
	put(udp, addr->src_port, 2);
	put(udp + 2, addr->dst_port, 2);
	put(udp + 4, 8 + plen, 2);
	put(udp + 6, 0, 2); /* no UDP checksum (allowed over IPv4) */
	return (int)(NL_FRAME_HDR_LEN + plen);
}

const char *
nl_proto_err_name(enum nl_proto_err e)
{
	static const char *const n[NL_PROTO_E_MAX] = {
		"ok", "truncated", "oversized", "bad_magic", "bad_version", "bad_type",
		"bad_field", "not_ipv4", "bad_ip", "bad_udp", "wrong_port", "bad_mac", "replay",
		"wrong_ip",
	};

	return (unsigned int)e < NL_PROTO_E_MAX ? n[e] : "?";
}

const char *
nl_msg_type_name(unsigned int type)
{
	static const char *const n[NL_MSG_TYPE_MAX] = {
		"?", "SUBMIT", "ACCEPT", "REJECT", "COMPLETE", "DISPATCH", "DONE", "LOAD",
		"HELLO", "BYE",
	};

	if (nl_farm_type(type))
		return nl_farm_type_name(type);
	return type < NL_MSG_TYPE_MAX ? n[type] : "?";
}

int
nl_proto_parse_addr(const char *s, struct sockaddr_in *a)
{
	char buf[64], *colon;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons(NL_PROTO_PORT);
	colon = strchr(buf, ':');
	if (colon != NULL) {
		char *end;
		long p = strtol(colon + 1, &end, 10);

		if (*end != '\0' || p < 1 || p > 65535)
			return -EINVAL;
		a->sin_port = htons((uint16_t)p);
		*colon = '\0';
	}
	return inet_pton(AF_INET, buf, &a->sin_addr) == 1 ? 0 : -EINVAL;
}

/* ---- authentication (protocol version 2) ---- */
/* (the key files: nl_keyfile.c) */

void
nl_auth_tx_init(struct nl_auth_tx *tx, const struct nl_auth_key *key)
{
	if (sodium_init() < 0)
		abort(); /* no randomness: nothing safe to do */
	tx->key = *key;
	do
		randombytes_buf(&tx->sender, sizeof(tx->sender));
	while (tx->sender == 0);
	tx->seq = 0;
}

static void
mac(const struct nl_auth_key *key, const uint8_t *p, size_t n, uint8_t tag[NL_AUTH_TAG_LEN])
{
	crypto_shorthash_siphashx24(tag, p, n, key->k);
}

int
nl_proto_seal(const struct nl_msg *m, struct nl_auth_tx *tx, uint64_t now_ns, void *buf,
	      size_t cap)
{
	return nl_proto_seal_with(m, tx, tx != NULL ? &tx->key : NULL, now_ns, buf, cap);
}

int
nl_proto_seal_with(const struct nl_msg *m, struct nl_auth_tx *tx, const struct nl_auth_key *key,
		   uint64_t now_ns, void *buf, size_t cap)
{
	uint8_t tmp[NL_PROTO_MAX_LEN];
	uint64_t seq;
	size_t len;
	int n;

	if (tx == NULL)
		return nl_proto_encode(m, buf, cap);
	n = nl_proto_encode(m, tmp, sizeof(tmp) - NL_AUTH_TRAILER_LEN - 4);
	if (n < 0)
		return n == -ENOSPC ? -EINVAL : n;
	if (m->type == NL_MSG_DISPATCH) { /* version 2: the submitter's principal id (#35), */
		uint32_t tl = m->u.dispatch.time_limit_ms; /* then the time limit (#33) */

		n -= (tl != 0 ? 4 : 0) + (m->u.dispatch.has_origin ? (int)ORIGIN_LEN : 0);
		n = (int)(put(tmp + n, m->u.dispatch.principal, 4) - tmp);
		if (tl != 0)
			n = (int)(put(tmp + n, tl, 4) - tmp);
		n = (int)(put_origin(tmp + n, &m->u.dispatch) - tmp); /* then #36's origin */
	}
	len = (size_t)n + NL_AUTH_TRAILER_LEN;
	if (cap < len)
		return -ENOSPC;
	seq = now_ns > tx->seq ? now_ns : tx->seq + 1;
	tx->seq = seq;
	put(tmp + 2, NL_PROTO_VERSION_AUTH, 1);
	put(tmp + 4, len, 2);
	put(tmp + n, tx->sender, 8);
	put(tmp + n + 8, seq, 8);
	mac(key, tmp, len - NL_AUTH_TAG_LEN, tmp + len - NL_AUTH_TAG_LEN);
	memcpy(buf, tmp, len);
	return (int)len;
}

enum nl_proto_err
nl_auth_verify(const struct nl_auth_key *key, const void *buf, size_t len, uint64_t *sender,
	       uint64_t *seq)
{
	const uint8_t *p = buf;
	uint8_t tag[NL_AUTH_TAG_LEN];
	struct rd r;

	if (buf == NULL || len < NL_PROTO_HDR_LEN)
		return NL_PROTO_E_TRUNC;
	if (len > NL_PROTO_MAX_LEN)
		return NL_PROTO_E_OVERSIZE;
	if (p[0] != (NL_PROTO_MAGIC >> 8) || p[1] != (NL_PROTO_MAGIC & 0xff))
		return NL_PROTO_E_MAGIC;
	if (p[2] == NL_PROTO_VERSION)
		return NL_PROTO_E_MAC; /* unauthenticated: no MAC at all */
	if (p[2] != NL_PROTO_VERSION_AUTH)
		return NL_PROTO_E_VERSION;
	r.p = p + 4;
	if (get(&r, 2) != len)
		return len < NL_PROTO_HDR_LEN + NL_AUTH_TRAILER_LEN ? NL_PROTO_E_TRUNC :
								    NL_PROTO_E_MAC;
	if (len < NL_PROTO_HDR_LEN + NL_AUTH_TRAILER_LEN)
		return NL_PROTO_E_TRUNC;
	mac(key, p, len - NL_AUTH_TAG_LEN, tag);
	if (crypto_verify_16(tag, p + len - NL_AUTH_TAG_LEN) != 0)
		return NL_PROTO_E_MAC;
	r.p = p + len - NL_AUTH_TRAILER_LEN;
	*sender = get(&r, 8);
	*seq = get(&r, 8);
	return NL_PROTO_OK;
}

enum nl_proto_err
nl_proto_open(const struct nl_auth_key *key, struct nl_replay *rp, const void *buf, size_t len,
	      uint64_t now_ns, struct nl_msg *out)
{
	uint64_t sender, seq;
	enum nl_proto_err e;

	if (key == NULL)
		return nl_proto_decode(buf, len, out); /* version 2 here: bad_version */
	/* MAC first (forgeries never touch the replay table), then the body (a frame that does
	 * not decode creates no state either), then the window. */
	e = nl_auth_verify(key, buf, len, &sender, &seq);
	if (e == NL_PROTO_OK)
		e = nl_proto_decode_sealed(buf, len, out);
	if (e == NL_PROTO_OK)
		e = nl_replay_check(rp, sender, seq, now_ns);
	return e;
}

uint64_t
nl_auth_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
