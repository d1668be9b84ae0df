/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inter-appliance messages (dataplane/wire/nl_xa_proto.h): round trips of HANDOVER, HANDBACK,
 * SUMMARY, ACK and SWIM in both versions; a SUMMARY dated in the future is refused; every way a message can be malformed is refused with its reason;
 * a forged, altered or replayed sealed message is refused; random mutations are refused or
 * canonical. And the simulated split (managers/nl_model.h): parts and cut-edge delays.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nl_appkey.h"
#include "nl_machine.h"
#include "nl_model.h"
#include "nl_tap.h"
#include "nl_xa_proto.h"

static const struct nl_auth_key key = { { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 } };
static struct nl_xa_msg m, out;

static void
fill(uint8_t type, unsigned int n)
{
	memset(&m, 0, sizeof(m));
	m.type = type;
	m.from_app = 2;
	m.n = (uint16_t)n;
	m.incarnation = 0x1234567890abcdefull;
	m.dgram_seq = type == NL_XA_MSG_HANDOVER || type == NL_XA_MSG_HANDBACK ? 0x80000007u : 0;
	for (unsigned int i = 0; i < n; i++) {
		if (type == NL_XA_MSG_HANDOVER) {
			struct nl_xa_task *t = &m.u.task[i];

			t->task_id = 1000 + i;
			t->need = i & 3;
			t->instr = 8000000000ull;
			t->data_bits = 100000000;
			t->age_us = 77 * i;
			t->origin_seq = 5 + i;
			t->origin_token = 900 + i;
			t->to_mgr = (uint16_t)(i % 7);
			t->origin_app = 1;
			t->n_split = 4;
			t->hops = (uint16_t)i;
			t->cmd_id = 3;
			t->args_len = (uint8_t)(i % 10);
			memset(t->args, 'a' + (int)i, t->args_len);
			t->flags = (uint8_t)(i & NL_XA_TF_ALL);
			t->client_ip = 0x0a000001u + i;
			t->client_port = (uint16_t)(40000 + i);
		} else if (type == NL_XA_MSG_ACK) {
			m.u.ack[i] = 0xffffff00u + i;
		} else if (type == NL_XA_MSG_HOLD) {
			m.u.hold.held = 0x8000000000000005ull;
			m.u.hold.flags = NL_XA_HOLD_F_SETTLING;
		} else if (type == NL_XA_MSG_SWIM && i == 0) {
			m.u.swim.type = 1 + (uint8_t)(n % NL_XA_SWIM_TYPE_MAX);
			m.u.swim.n_upd = (uint8_t)(n - 1);
			m.u.swim.target = 63;
			m.u.swim.seq = 0xfedcba98u;
		} else if (type == NL_XA_MSG_SWIM) {
			struct nl_xa_swim_upd *u = &m.u.swim.upd[i - 1];

			u->id = i;
			u->incarnation = 0x80000000u + i;
			u->from = 63 - i;
			u->state = (uint8_t)(i % 3);
		} else if (type == NL_XA_MSG_HANDBACK) {
			struct nl_xa_back *b = &m.u.back[i];

			b->task_id = 2000 + i;
			b->origin_token = i;
			b->origin_seq = 3 * i;
			b->reason = i % 2 ? NL_XA_REASON_MOVED : 0;
			b->n_done = 4;
			b->status = -(int32_t)i;
			b->hops = 2;
			b->at_app = 3;
		} else {
			struct nl_xa_sum *s = &m.u.sum[i];

			s->src = 64 + i;
			s->cores = 12;
			s->free_cores = 5;
			s->mem_mb = 30;
			s->arch = 4;
			s->created_s = 1.7e9 + i;
			s->lifetime_s = 2;
			s->aux[0] = 42;
			s->aux[1] = 0xf;
			s->aux[2] = 1234;
		}
	}
}

static int
same(void)
{
	if (out.type != m.type || out.from_app != m.from_app || out.n != m.n ||
	    out.incarnation != m.incarnation || out.dgram_seq != m.dgram_seq)
		return 0;
	for (unsigned int i = 0; i < m.n; i++) {
		if (m.type == NL_XA_MSG_HANDOVER) {
			const struct nl_xa_task *a = &m.u.task[i], *b = &out.u.task[i];

			if (a->task_id != b->task_id || a->need != b->need || a->instr != b->instr ||
			    a->data_bits != b->data_bits || a->age_us != b->age_us ||
			    a->origin_seq != b->origin_seq || a->origin_token != b->origin_token ||
			    a->to_mgr != b->to_mgr || a->origin_app != b->origin_app ||
			    a->n_split != b->n_split || a->hops != b->hops || a->cmd_id != b->cmd_id ||
			    a->args_len != b->args_len || memcmp(a->args, b->args, a->args_len) != 0 ||
			    a->flags != b->flags || a->client_ip != b->client_ip ||
			    a->client_port != b->client_port)
				return 0;
		} else if (m.type == NL_XA_MSG_ACK) {
			if (m.u.ack[i] != out.u.ack[i])
				return 0;
		} else if (m.type == NL_XA_MSG_HOLD) {
			if (m.u.hold.held != out.u.hold.held || m.u.hold.flags != out.u.hold.flags)
				return 0;
		} else if (m.type == NL_XA_MSG_SWIM && i == 0) {
			if (m.u.swim.type != out.u.swim.type || m.u.swim.n_upd != out.u.swim.n_upd ||
			    m.u.swim.target != out.u.swim.target || m.u.swim.seq != out.u.swim.seq)
				return 0;
		} else if (m.type == NL_XA_MSG_SWIM) {
			const struct nl_xa_swim_upd *a = &m.u.swim.upd[i - 1], *b = &out.u.swim.upd[i - 1];

			if (a->id != b->id || a->incarnation != b->incarnation || a->from != b->from ||
			    a->state != b->state)
				return 0;
		} else if (m.type == NL_XA_MSG_HANDBACK) {
			const struct nl_xa_back *a = &m.u.back[i], *b = &out.u.back[i];

			if (a->task_id != b->task_id || a->origin_token != b->origin_token ||
			    a->origin_seq != b->origin_seq || a->reason != b->reason ||
			    a->n_done != b->n_done || a->status != b->status || a->hops != b->hops ||
			    a->at_app != b->at_app)
				return 0;
		} else {
			const struct nl_xa_sum *a = &m.u.sum[i], *b = &out.u.sum[i];

			if (a->src != b->src || a->cores != b->cores || a->free_cores != b->free_cores ||
			    a->mem_mb != b->mem_mb || a->arch != b->arch || a->state != b->state ||
			    a->flags != b->flags || a->created_s != b->created_s ||
			    a->lifetime_s != b->lifetime_s || memcmp(a->aux, b->aux, sizeof(a->aux)) != 0)
				return 0;
		}
	}
	return 1;
}

static void
test_round_trips(void)
{
	static const unsigned int max[6] = { NL_XA_MAX_TASKS, NL_XA_MAX_BACKS, NL_XA_MAX_SUMS,
					     NL_XA_MAX_ACKS, 1 + NL_XA_SWIM_MAX_UPD, 1 };
	uint8_t buf[NL_PROTO_MAX_LEN], sealed[NL_PROTO_MAX_LEN];
	int ok1 = 1, ok2 = 1, full = 1;
	struct nl_auth_tx tx;
	struct nl_replay rp;

	nl_auth_tx_init(&tx, &key);
	if (nl_replay_init(&rp, 16) != 0)
		abort();
	for (uint8_t ty = NL_XA_MSG_HANDOVER; ty <= NL_XA_MSG_HOLD; ty++) {
		for (unsigned int n = 1; n <= max[ty - NL_XA_MSG_HANDOVER]; n++) {
			int len, sl;

			fill(ty, n);
			len = nl_xa_encode(&m, buf, sizeof(buf));
			if (len < 0) { /* HANDOVER with args may not fit 20: that is the encoder's call */
				full &= ty == NL_XA_MSG_HANDOVER && len == -ENOSPC;
				continue;
			}
			ok1 &= nl_xa_decode(buf, (size_t)len, NL_PROTO_VERSION, &out) == NL_PROTO_OK && same();
			sl = nl_xa_seal(buf, (size_t)len, &tx, nl_auth_now_ns(), sealed,
						 sizeof(sealed));
			ok2 &= sl == len + (int)NL_AUTH_TRAILER_LEN && sealed[2] == NL_PROTO_VERSION_AUTH &&
			       nl_xa_open(&key, &rp, sealed, (size_t)sl, nl_auth_now_ns(), &out) ==
				       NL_PROTO_OK &&
			       same();
			/* the same sealed bytes again: replayed */
			ok2 &= nl_xa_open(&key, &rp, sealed, (size_t)sl, nl_auth_now_ns(), &out) ==
			       NL_PROTO_E_REPLAY;
		}
	}
	nl_replay_free(&rp);
	nl_tap_check(ok1, "version_1_round_trip_every_type_every_count");
	nl_tap_check(ok2, "version_2_sealed_round_trip_every_type_and_replay_refused");
	nl_tap_check(full, "only_a_handover_with_arguments_can_exceed_one_datagram");
}

static enum nl_proto_err
dec(const uint8_t *b, size_t n)
{
	return nl_xa_decode(b, n, NL_PROTO_VERSION, &out);
}

static void
test_malformed(void)
{
	uint8_t b[NL_PROTO_MAX_LEN], c[NL_PROTO_MAX_LEN];
	int n, ok = 1;

	fill(NL_XA_MSG_HANDOVER, 3);
	n = nl_xa_encode(&m, b, sizeof(b));
	ok &= n > 0;
	ok &= dec(b, 7) == NL_PROTO_E_TRUNC;
	ok &= dec(b, (size_t)n - 1) == NL_PROTO_E_TRUNC; /* length field says more */
	memcpy(c, b, (size_t)n);
	c[(size_t)n] = 0;
	ok &= dec(c, (size_t)n + 1) == NL_PROTO_E_OVERSIZE;
	memcpy(c, b, (size_t)n);
	c[0] = 'X';
	ok &= dec(c, (size_t)n) == NL_PROTO_E_MAGIC;
	memcpy(c, b, (size_t)n);
	c[2] = 2;
	ok &= dec(c, (size_t)n) == NL_PROTO_E_VERSION;
	memcpy(c, b, (size_t)n);
	c[3] = 22; /* 16..21 are defined, 22 and 23 reserved */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_TYPE;
	c[3] = 9; /* a client/worker type is not an inter-appliance one */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_TYPE;
	memcpy(c, b, (size_t)n);
	c[7] = 1; /* reserved */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_FIELD;
	memcpy(c, b, (size_t)n);
	c[10] = 0, c[11] = 0; /* n = 0 */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_FIELD;
	memcpy(c, b, (size_t)n);
	c[8] = 0, c[9] = 64; /* from_app */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_FIELD;
	memcpy(c, b, (size_t)n);
	memset(c + 16, 0, 8); /* incarnation 0 */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_FIELD;
	memcpy(c, b, (size_t)n);
	c[24 + 52] = 0, c[24 + 53] = 0; /* L = 0 */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_FIELD;
	memcpy(c, b, (size_t)n);
	c[24 + 48] = 0x10, c[24 + 49] = 0; /* to_mgr 4096 */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_FIELD;
	memcpy(c, b, (size_t)n);
	c[24 + 66] = 1; /* record pad (after the client's address) */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_FIELD;
	memcpy(c, b, (size_t)n);
	c[24 + 59] = 0x10; /* unknown flag (0x08 is NL_XA_TF_RESEND) */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_FIELD;
	memcpy(c, b, (size_t)n);
	memset(c + 12, 0, 4); /* a HANDOVER without its datagram number */
	ok &= dec(c, (size_t)n) == NL_PROTO_E_FIELD;
	nl_tap_check(ok, "malformed_handover_refused_with_its_reason");

	ok = 1;
	m.u.task[0].n_split = 65;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	fill(NL_XA_MSG_SUMMARY, 1);
	m.u.sum[0].lifetime_s = NAN;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	m.u.sum[0].lifetime_s = 0;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	fill(NL_XA_MSG_SUMMARY, 1);
	n = nl_xa_encode(&m, b, sizeof(b));
	memcpy(b + 24 + 32, "\x7f\xf8\0\0\0\0\0\0", 8); /* lifetime NaN on the wire */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	fill(NL_XA_MSG_HANDBACK, 1);
	m.u.back[0].reason = NL_XA_REASON_UNSENT + 1;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	fill(NL_XA_MSG_HANDBACK, 1);
	n = nl_xa_encode(&m, b, sizeof(b));
	b[24 + 30] = 1; /* record pad */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	fill(NL_XA_MSG_SUMMARY, 1);
	m.dgram_seq = 3; /* summaries are not numbered */
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	fill(NL_XA_MSG_ACK, 2);
	n = nl_xa_encode(&m, b, sizeof(b));
	ok &= n == 24 + 16 && dec(b, (size_t)n) == NL_PROTO_OK;
	memset(b + 24 + 8, 0, 4); /* an ACK of datagram 0 */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	fill(NL_XA_MSG_ACK, 1);
	n = nl_xa_encode(&m, b, sizeof(b));
	b[24 + 5] = 1; /* ACK record pad */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	m.u.ack[0] = 0;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	nl_tap_check(ok, "malformed_handback_summary_and_ack_refused_encoder_agrees");
}

/* Type 20 (SWIM): the head, then 0..8 updates of 16 bytes each; every bound refused. */
static void
test_swim_malformed(void)
{
	uint8_t b[NL_PROTO_MAX_LEN];
	int n, ok = 1;

	fill(NL_XA_MSG_SWIM, 3); /* head + 2 updates */
	n = nl_xa_encode(&m, b, sizeof(b));
	ok &= n == 24 + 3 * 16 && dec(b, (size_t)n) == NL_PROTO_OK && same();
	b[24] = 0; /* SWIM type 0 */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	b[24] = NL_XA_SWIM_TYPE_MAX + 1;
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[25] = 1; /* head pad */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[24 + 7] = 64; /* target 64 */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[24 + 15] = 1; /* head's trailing pad */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[40 + 3] = 64; /* update id 64 */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[40 + 11] = 64; /* update from 64 */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[40 + 12] = 3; /* state 3 */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[40 + 13] = 1; /* update pad */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[12 + 3] = 1; /* SWIM is not numbered */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	ok &= dec(b, (size_t)n - 8) == NL_PROTO_E_TRUNC; /* length field says more */
	b[5] = (uint8_t)(n - 8); /* ... and a record cut in half */
	b[11] = 3;
	ok &= dec(b, (size_t)n - 8) == NL_PROTO_E_TRUNC;
	fill(NL_XA_MSG_SWIM, 1);
	n = nl_xa_encode(&m, b, sizeof(b));
	ok &= n == 24 + 16 && dec(b, (size_t)n) == NL_PROTO_OK && out.u.swim.n_upd == 0;
	/* the encoder refuses what the decoder would */
	fill(NL_XA_MSG_SWIM, 1 + NL_XA_SWIM_MAX_UPD);
	ok &= nl_xa_encode(&m, b, sizeof(b)) > 0;
	m.n++;
	m.u.swim.n_upd++;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL; /* 9 updates */
	fill(NL_XA_MSG_SWIM, 3);
	m.u.swim.n_upd = 1; /* n != 1 + n_upd */
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	fill(NL_XA_MSG_SWIM, 3);
	m.u.swim.upd[1].state = 3;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	fill(NL_XA_MSG_SWIM, 3);
	m.u.swim.target = 64;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	fill(NL_XA_MSG_SWIM, 3);
	m.dgram_seq = 5;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	nl_tap_check(ok, "swim_message_round_trip_and_every_bound_refused_encoder_agrees");
}

/* Type 21 (HOLD, issue #36 failback = no): one 16-byte record; every bound refused. */
static void
test_hold_malformed(void)
{
	uint8_t b[NL_PROTO_MAX_LEN];
	int n, ok = 1;

	fill(NL_XA_MSG_HOLD, 1);
	n = nl_xa_encode(&m, b, sizeof(b));
	ok &= n == 24 + 16 && dec(b, (size_t)n) == NL_PROTO_OK && same() &&
	       out.u.hold.held == 0x8000000000000005ull && out.u.hold.flags == NL_XA_HOLD_F_SETTLING;
	b[24 + 8] = 0x02; /* unknown flag */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[24 + 15] = 1; /* pad */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[12 + 3] = 1; /* HOLD is not numbered */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	b[11] = 2; /* two records */
	ok &= dec(b, (size_t)n) == NL_PROTO_E_FIELD;
	n = nl_xa_encode(&m, b, sizeof(b));
	ok &= dec(b, (size_t)n - 4) == NL_PROTO_E_TRUNC;
	b[5] = (uint8_t)(n - 4); /* the length says so too: the record is cut */
	ok &= dec(b, (size_t)n - 4) == NL_PROTO_E_TRUNC;
	/* the encoder refuses what the decoder would */
	fill(NL_XA_MSG_HOLD, 1);
	m.u.hold.flags = 0x80;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	fill(NL_XA_MSG_HOLD, 1);
	m.n = 2;
	ok &= nl_xa_encode(&m, b, sizeof(b)) == -EINVAL;
	nl_tap_check(ok, "malformed_hold_refused_encoder_agrees");
}

/* Who holds c's subtree (failback = no, standby b), the table of docs/scale-out.md "Failback
 * or not", and its stories told as a sequence of maps. a = 0, b = 1, c = 2. */
static void
test_hold_want(void)
{
	enum { A, B, C };
	int ok = 1;
	unsigned int h;

	/* the table: c dead -> the verdicts' holder stays */
	ok &= nl_xa_hold_want(C, false, false, B, true, false, false, B) == B;
	ok &= nl_xa_hold_want(C, false, true, B, true, false, false, C) == C; /* b dead too */
	/* c claims its own: c, whatever b says (a partition or a pause healed) */
	ok &= nl_xa_hold_want(C, true, true, B, true, true, false, B) == C;
	/* c does not claim, b live and claiming: b */
	ok &= nl_xa_hold_want(C, true, false, B, true, true, false, C) == B;
	ok &= nl_xa_hold_want(C, true, false, B, true, true, true, C) == B; /* c itself, settling */
	/* b's claim counts only while b is live */
	ok &= nl_xa_hold_want(C, true, false, B, false, true, false, B) == C;
	/* nobody claims: c, except at c while it settles */
	ok &= nl_xa_hold_want(C, true, false, B, true, false, false, B) == C;
	ok &= nl_xa_hold_want(C, true, false, B, true, false, true, C) == C;
	ok &= nl_xa_hold_want(C, true, false, -1, false, false, false, C) == C;
	/* the story at a: c killed (verdict: b adopts), c restarted (settling: no claim of its
	 * own), b's HOLD still claims: b keeps it; b dies: the verdict gives it to c (live), c's
	 * HOLD claims it: c */
	h = B;
	h = nl_xa_hold_want(C, true, false, B, true, true, false, h);
	ok &= h == B;
	h = C; /* b declared dead: nl_xa_standby_dead_ctl() gives c its subtree back */
	h = nl_xa_hold_want(C, true, true, B, false, false, false, h);
	ok &= h == C;
	/* b restarted while holding it: its new incarnation claims nothing; c, yielded and not
	 * settling, takes it back */
	ok &= nl_xa_hold_want(C, true, false, B, true, false, false, B) == C;
	nl_tap_check(ok, "failback_no_holder_follows_the_claims");
}

/* A client's resend held at the standby (docs/scale-out.md "A client's resend at the
 * standby"): run only when nobody said a sub-task ran and the workers' telling is over;
 * answered from the words once what ran has ended (early when every sub-task ended); a
 * sub-task said running is waited for until its bound. */
static void
test_resend_decide(void)
{
	int ok = 1;

	/* no word that it ran: wait while the workers may still tell, then run it here */
	ok &= nl_xa_resend_decide(2, 0, 0, false, false) == NL_XA_RESEND_WAIT;
	ok &= nl_xa_resend_decide(2, 0, 0, true, false) == NL_XA_RESEND_RUN;
	ok &= nl_xa_resend_decide(2, 0, 0, true, true) == NL_XA_RESEND_RUN;
	/* words on sub-tasks the task does not have (another task's, same id) do not count */
	ok &= nl_xa_resend_decide(2, 0x4, 0x4, true, false) == NL_XA_RESEND_RUN;
	/* one of two ended, the other unheard: wait for the telling, then answer (it ran) */
	ok &= nl_xa_resend_decide(2, 0x1, 0x1, false, false) == NL_XA_RESEND_WAIT;
	ok &= nl_xa_resend_decide(2, 0x1, 0x1, true, false) == NL_XA_RESEND_ANSWER;
	/* every sub-task ended: nothing more to learn, answer at once */
	ok &= nl_xa_resend_decide(2, 0x3, 0x3, false, false) == NL_XA_RESEND_ANSWER;
	ok &= nl_xa_resend_decide(64, ~UINT64_C(0), ~UINT64_C(0), false, false) ==
	      NL_XA_RESEND_ANSWER;
	ok &= nl_xa_resend_decide(64, ~UINT64_C(0), ~UINT64_C(0) >> 1, true, false) ==
	      NL_XA_RESEND_WAIT;
	/* one runs: wait for its end (never run it again), until the bound */
	ok &= nl_xa_resend_decide(2, 0x3, 0x1, true, false) == NL_XA_RESEND_WAIT;
	ok &= nl_xa_resend_decide(2, 0x2, 0x0, true, false) == NL_XA_RESEND_WAIT;
	ok &= nl_xa_resend_decide(2, 0x2, 0x0, true, true) == NL_XA_RESEND_ANSWER;
	/* withdrawn only (no bit): as never run */
	ok &= nl_xa_resend_decide(1, 0, 0, true, false) == NL_XA_RESEND_RUN;
	nl_tap_check(ok, "resend_at_standby_runs_only_what_did_not_run");
}

/* A SUMMARY record dated ahead of the receiver's clock by more than the tolerance is refused
 * (a forged record an hour ahead would otherwise win over every later record of its source);
 * within the tolerance, or in the past however far, it is not (its age is measured on the
 * receiver's monotonic clock from its receipt, not from this date). */
static void
test_future_dated(void)
{
	const double now = 1.7e9;
	struct nl_xa_sum s = { .created_s = now, .lifetime_s = 2 };
	int ok = 1;

	ok &= !nl_xa_sum_from_future(&s, now, NL_XA_SUM_AHEAD_MAX_S);
	s.created_s = now + 3;      /* a clock 3 s ahead: tolerated */
	ok &= !nl_xa_sum_from_future(&s, now, NL_XA_SUM_AHEAD_MAX_S);
	s.created_s = now + 60;     /* the bound itself */
	ok &= !nl_xa_sum_from_future(&s, now, NL_XA_SUM_AHEAD_MAX_S);
	s.created_s = now + 60.001;
	ok &= nl_xa_sum_from_future(&s, now, NL_XA_SUM_AHEAD_MAX_S);
	s.created_s = now + 3600;   /* the forged SUMMARY of issue #36, an hour ahead */
	ok &= nl_xa_sum_from_future(&s, now, NL_XA_SUM_AHEAD_MAX_S);
	s.created_s = INFINITY;
	ok &= nl_xa_sum_from_future(&s, now, NL_XA_SUM_AHEAD_MAX_S);
	s.created_s = NAN;
	ok &= nl_xa_sum_from_future(&s, now, NL_XA_SUM_AHEAD_MAX_S);
	s.created_s = now - 86400;  /* a clock a day behind: old, not refused */
	ok &= !nl_xa_sum_from_future(&s, now, NL_XA_SUM_AHEAD_MAX_S);
	nl_tap_check(ok, "summary_dated_over_60_s_ahead_refused_behind_or_within_60_s_kept");
}

static void
test_forged(void)
{
	static const struct nl_auth_key other = { { 1 } };
	uint8_t b[NL_PROTO_MAX_LEN], s[NL_PROTO_MAX_LEN];
	struct nl_auth_tx tx;
	struct nl_replay rp;
	int n, k, ok = 1;

	fill(NL_XA_MSG_HANDBACK, 2);
	n = nl_xa_encode(&m, b, sizeof(b));
	nl_auth_tx_init(&tx, &other);
	if (nl_replay_init(&rp, 16) != 0)
		abort();
	k = nl_xa_seal(b, (size_t)n, &tx, nl_auth_now_ns(), s, sizeof(s));
	ok &= nl_xa_open(&key, &rp, s, (size_t)k, nl_auth_now_ns(), &out) == NL_PROTO_E_MAC;
	nl_auth_tx_init(&tx, &key);
	for (int i = 0; i < k; i++) { /* every byte altered: refused */
		k = nl_xa_seal(b, (size_t)n, &tx, nl_auth_now_ns(), s, sizeof(s));
		s[i] ^= 0x20;
		ok &= nl_xa_open(&key, &rp, s, (size_t)k, nl_auth_now_ns(), &out) != NL_PROTO_OK;
	}
	/* unauthenticated (version 1) at a keyed appliance */
	ok &= nl_xa_open(&key, &rp, b, (size_t)n, nl_auth_now_ns(), &out) == NL_PROTO_E_MAC;
	nl_replay_free(&rp);
	nl_tap_check(ok, "forged_altered_and_unauthenticated_sealed_messages_refused");
}

/* #36: appliance keys: three key files, their pair keys symmetric and distinct, a datagram
 * sealed under the pair (a, b) opens at b only under that pair's key: not under the site key
 * (what a client or worker holds), not under the pair (a, c) or (b, c); bad public keys. */
static void
test_pair_keys(void)
{
	uint8_t sk[3][NL_APPKEY_LEN], pk[3][NL_APPKEY_LEN], b[NL_PROTO_MAX_LEN], s[NL_PROTO_MAX_LEN];
	uint8_t zero[NL_APPKEY_LEN] = { 0 }, raw[32], back[NL_APPKEY_LEN];
	char path[64], hex[2 * NL_APPKEY_LEN + 1], err[256];
	struct nl_auth_key ab, ba, ac, bc, bad;
	struct nl_auth_tx tx;
	struct nl_replay rp;
	int n, k, ok = 1;

	for (int i = 0; i < 3; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/tmp/nl_xa_appkey_%d_%d", (int)getpid(), i);
		for (unsigned int j = 0; j < sizeof(raw); j++)
			raw[j] = (uint8_t)(37 * i + 11 * j + 1);
		f = fopen(path, "wb");
		if (f == NULL || fwrite(raw, 1, sizeof(raw), f) != sizeof(raw) || fclose(f) != 0)
			abort();
		chmod(path, 0600);
		ok &= nl_appkey_load(path, sk[i], pk[i], err, sizeof(err)) == 0;
		chmod(path, 0644); /* too wide: refused, as a site key */
		ok &= nl_appkey_load(path, sk[i], back, err, sizeof(err)) == -EPERM;
		unlink(path);
	}
	ok &= nl_appkey_pair(sk[0], pk[0], pk[1], &ab) == 0;
	ok &= nl_appkey_pair(sk[1], pk[1], pk[0], &ba) == 0;
	ok &= nl_appkey_pair(sk[0], pk[0], pk[2], &ac) == 0;
	ok &= nl_appkey_pair(sk[1], pk[1], pk[2], &bc) == 0;
	ok &= memcmp(&ab, &ba, sizeof(ab)) == 0 && memcmp(&ab, &ac, sizeof(ab)) != 0 &&
	      memcmp(&ab, &bc, sizeof(ab)) != 0 && memcmp(&ab, &key, sizeof(ab)) != 0;
	/* a low-order point (all zero) and our own key are no peer's */
	ok &= nl_appkey_pair(sk[0], pk[0], zero, &bad) == -EINVAL;
	ok &= nl_appkey_pair(sk[0], pk[0], pk[0], &bad) == -EINVAL;
	/* hex: round trip; wrong length, a non-hex digit refused */
	nl_appkey_pub_hex(pk[2], hex);
	ok &= nl_appkey_pub_parse(hex, back) == 0 && memcmp(back, pk[2], sizeof(back)) == 0;
	hex[63] = 'g';
	ok &= nl_appkey_pub_parse(hex, back) == -EINVAL;
	hex[63] = '\0';
	ok &= nl_appkey_pub_parse(hex, back) == -EINVAL;
	/* sealed by a under (a, b): opens at b under (b, a) only */
	fill(NL_XA_MSG_SUMMARY, 1);
	n = nl_xa_encode(&m, b, sizeof(b));
	if (nl_replay_init(&rp, 16) != 0)
		abort();
	nl_auth_tx_init(&tx, &ab);
	k = nl_xa_seal(b, (size_t)n, &tx, nl_auth_now_ns(), s, sizeof(s));
	ok &= nl_xa_open(&key, &rp, s, (size_t)k, nl_auth_now_ns(), &out) == NL_PROTO_E_MAC;
	ok &= nl_xa_open(&ac, &rp, s, (size_t)k, nl_auth_now_ns(), &out) == NL_PROTO_E_MAC;
	ok &= nl_xa_open(&bc, &rp, s, (size_t)k, nl_auth_now_ns(), &out) == NL_PROTO_E_MAC;
	ok &= nl_xa_open(&ba, &rp, s, (size_t)k, nl_auth_now_ns(), &out) == NL_PROTO_OK;
	/* the site key's holder forging as a: refused under the pair's key */
	nl_auth_tx_init(&tx, &key);
	k = nl_xa_seal(b, (size_t)n, &tx, nl_auth_now_ns(), s, sizeof(s));
	ok &= nl_xa_open(&ba, &rp, s, (size_t)k, nl_auth_now_ns(), &out) == NL_PROTO_E_MAC;
	nl_replay_free(&rp);
	nl_tap_check(ok, "appliance_pair_keys_symmetric_distinct_and_the_site_key_cannot_speak_as_a_peer");
}

static void
test_random(void)
{
	uint8_t b[NL_PROTO_MAX_LEN], re[NL_PROTO_MAX_LEN];
	uint64_t x = nl_tap_seed(7);
	int ok = 1, accepted = 0;

	for (int r = 0; r < 200000; r++) {
		int n, k;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		fill((uint8_t)(x % 4 == 3 ? NL_XA_MSG_SWIM : NL_XA_MSG_HANDOVER + x % 4),
		     1 + (unsigned int)((x >> 8) % 3));
		n = nl_xa_encode(&m, b, sizeof(b));
		for (int j = 0; j < 1 + (int)((x >> 16) % 3); j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b[(x >> 20) % (uint64_t)n] = (uint8_t)(x >> 40);
		}
		if (dec(b, (size_t)n) != NL_PROTO_OK)
			continue;
		accepted++;
		k = nl_xa_encode(&out, re, sizeof(re));
		ok &= k == n && memcmp(re, b, (size_t)n) == 0;
	}
	nl_tap_check(ok && accepted > 0, "random_mutations_refused_or_canonical");
	nl_tap_diag("%d of 200000 mutated messages accepted (all re-encode to the same bytes)",
		    accepted);
}

static void
test_split(void)
{
	struct nl_model_cfg mc = { 0 };
	struct nl_machine mach[96];
	struct nl_sched_params sp = { 0 };
	struct nl_sched *s;
	uint8_t part[64];
	int ok = 1;

	mc.n_mach = 96;
	mc.n_res = 4;
	mc.n_speed = 1;
	mc.speed_ips[0] = 1e8;
	mc.link_bps = 1e7;
	mc.transfer_delay_vt = 20;
	mc.cut_delay_vt = 30;
	mc.cut_datagram_vt = 2;
	mc.n_cut = 1;
	snprintf(mc.cut[0], sizeof(mc.cut[0]), "M(1,1)");
	sp.n_res = 4;
	if (nl_machines_build(&mc, 1, mach) != 0 ||
	    nl_sched_create(&s, &nl_policy_nlsc, &sp, mach, 96) != 0 || s->n_mgr > 64)
		abort();
	ok &= nl_model_split_parts(&mc, s, part) == 1;
	for (uint32_t i = 0; i < s->n_mgr; i++) {
		const struct nl_tree_node *nd = &s->tree->node[i];
		int want = nd->level >= 1 && (nd->prefix & 1);

		ok &= part[i] == want;
	}
	/* root (0) -> M(1,1): a cut edge; root -> M(1,0): not */
	ok &= nl_model_hop_vt(&mc, part, 0, s->tree->node[0].child[1]) == 52;
	ok &= nl_model_hop_vt(&mc, part, 0, s->tree->node[0].child[0]) == 20;
	ok &= nl_model_hop_vt(&mc, NULL, 0, s->tree->node[0].child[1]) == 20;
	nl_sched_free(s);
	nl_tap_check(ok, "split_parts_follow_the_tree_and_only_cut_edges_pay_the_cut_delay");

	/* machines: an NLSC machine is in its leaf's part (the leaf of its vector); a 2LSC
	 * machine in its group's */
	uint8_t mpart[96];
	uint32_t home[96];
	int ok2 = 1;

	if (nl_sched_create(&s, &nl_policy_nlsc, &sp, mach, 96) != 0)
		abort();
	nl_model_split_parts(&mc, s, part);
	nl_model_split_mach_parts(s, part, mpart, home);
	for (uint32_t m = 0; m < 96; m++) {
		uint32_t leaf = nl_tree_leaf_of(s->tree, mach[m].res.set);

		ok2 &= leaf != NL_NODE_NONE && home[m] == s->tree->leaf_node[leaf] &&
		       mpart[m] == part[home[m]];
	}
	nl_sched_free(s);
	sp.n_groups = 3;
	snprintf(mc.cut[0], sizeof(mc.cut[0]), "group1");
	if (nl_sched_create(&s, &nl_policy_2lsc, &sp, mach, 96) != 0)
		abort();
	nl_model_split_parts(&mc, s, part);
	nl_model_split_mach_parts(s, part, mpart, home);
	for (uint32_t m = 0; m < 96; m++)
		ok2 &= home[m] == nl_2lsc_group_of(s, m) && mpart[m] == (home[m] == 1);
	nl_sched_free(s);
	nl_tap_check(ok2, "split_machines_belong_to_the_part_of_their_leaf_or_group");
}

/* Issue #36: the order of *moved* notes. A task of b went to a, on to c, back to a and on to
 * c again: the notes (hops 3 from a, 4 from c, 5 from a) may reach b in any order, and b must
 * end with the last one's location whatever the order. */
static void
test_moved_order(void)
{
	const struct {
		uint16_t hops;
		char at;
	} note[3] = { { 3, 'c' }, { 4, 'a' }, { 5, 'c' } };
	static const int order[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
					 { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	bool ok = true;

	for (unsigned int o = 0; o < 6; o++) {
		uint16_t have = 2; /* handed to a at hops 2 */
		char at = 'a';

		for (unsigned int k = 0; k < 3; k++) {
			unsigned int i = (unsigned int)order[o][k];

			if (nl_xa_moved_newer(note[i].hops, have)) {
				have = note[i].hops;
				at = note[i].at;
			}
		}
		ok &= at == 'c' && have == 5;
	}
	nl_tap_check(ok, "moved_notes_in_any_order_leave_the_last_location");
	/* equal is late (a note repeated); the count wraps (RFC 1982) */
	nl_tap_check(!nl_xa_moved_newer(7, 7) && !nl_xa_moved_newer(6, 7) &&
			     nl_xa_moved_newer(8, 7) && nl_xa_moved_newer(2, 65534) &&
			     !nl_xa_moved_newer(65534, 2) && nl_xa_moved_newer(32767, 0) &&
			     !nl_xa_moved_newer(32768, 0),
		     "moved_note_hops_compare_as_serial_numbers");
}

int
main(void)
{
	test_moved_order();
	test_round_trips();
	test_malformed();
	test_swim_malformed();
	test_hold_malformed();
	test_hold_want();
	test_resend_decide();
	test_future_dated();
	test_forged();
	test_pair_keys();
	test_random();
	test_split();
	return nl_tap_done();
}
