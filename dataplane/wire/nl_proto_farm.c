/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Task-farm messages (types 24..30) of the wire protocol: nl_proto_farm.h, docs/protocol.md
 * "Task farms". Big-endian fields read and written byte by byte as in nl_proto.c; every
 * text is length-prefixed printable ASCII, every pad byte 0, so what decodes re-encodes to the
 * same bytes.
 */
#include <errno.h>
#include <string.h>

#include "nl_proto.h"

static uint64_t
rd(const uint8_t **p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = (v << 8) | (*p)[i];
	*p += n;
	return v;
}

static uint8_t *
wr(uint8_t *p, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return p + n;
}

bool
nl_farm_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > NL_FARM_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '+' || c == '-'))
			return false;
	}
	return true;
}

/* ClassAd texts: printable ASCII, tab and newline. */
static bool
text_ok(const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 0x20 && s[i] < 0x7f) || s[i] == '\t' || s[i] == '\n'))
			return false;
	return true;
}

#define FIELD NL_PROTO_E_FIELD
#define TRUNC NL_PROTO_E_TRUNC
/* STATUS body with the task counts of states 0..7 (#33); the shutdown count (#34) adds 4 */
#define STATUS_T8 (24u + 7 * 8 + 4 * (1 + NL_FARM_T_SHUTDOWN))

static int
exact(size_t have, size_t want)
{
	return have < want ? NL_PROTO_E_TRUNC : have > want ? NL_PROTO_E_OVERSIZE : NL_PROTO_OK;
}

int
nl_farm_decode_body(unsigned int type, const uint8_t *b, size_t len, void *outv)
{
	union nl_msg_farm *f = outv;
	const uint8_t *p = b, *end = b + len;
	int e;

	switch (type) {
	case NL_MSG_CMDS: {
		struct nl_msg_cmds *c = &f->cmds;

		if (len < 8)
			return TRUNC;
		c->worker_id = (uint32_t)rd(&p, 4);
		c->n = (uint8_t)rd(&p, 1);
		if (rd(&p, 3) != 0 || c->n > NL_FARM_MAX_CMDS)
			return FIELD;
		for (unsigned int i = 0; i < c->n; i++) {
			struct nl_farm_cmd *x = &c->cmd[i];

			if (end - p < 3)
				return TRUNC;
			x->id = (uint16_t)rd(&p, 2);
			x->len = (uint8_t)rd(&p, 1);
			if ((size_t)(end - p) < x->len)
				return TRUNC;
			if (x->id == 0 || !nl_farm_name_ok((const char *)p, x->len))
				return FIELD;
			memcpy(x->name, p, x->len);
			x->name[x->len] = '\0';
			p += x->len;
		}
		return p == end ? NL_PROTO_OK : NL_PROTO_E_OVERSIZE;
	}
	case NL_MSG_MACHAD: {
		struct nl_msg_machad *m = &f->machad;

		if (len < 8)
			return TRUNC;
		m->worker_id = (uint32_t)rd(&p, 4);
		m->mach = (uint16_t)rd(&p, 2);
		m->len = (uint16_t)rd(&p, 2);
		if (m->mach >= NL_PROTO_MAX_MACH || m->len > NL_FARM_AD_MAX)
			return FIELD;
		e = exact(len, 8u + m->len);
		if (e != NL_PROTO_OK)
			return e;
		if (!text_ok(p, m->len))
			return FIELD;
		memcpy(m->ad, p, m->len);
		m->ad[m->len] = '\0';
		return NL_PROTO_OK;
	}
	case NL_MSG_REGISTER: {
		struct nl_msg_register *r = &f->reg;

		if (len < 16)
			return TRUNC;
		r->req_id = rd(&p, 8);
		r->name_len = (uint8_t)rd(&p, 1);
		r->req_len = (uint16_t)rd(&p, 2);
		r->rank_len = (uint16_t)rd(&p, 2);
		if (rd(&p, 3) != 0 || r->req_len > NL_FARM_EXPR_MAX || r->rank_len > NL_FARM_EXPR_MAX)
			return FIELD;
		e = exact(len, 16u + r->name_len + r->req_len + r->rank_len);
		if (e != NL_PROTO_OK)
			return e;
		if (!nl_farm_name_ok((const char *)p, r->name_len) ||
		    !text_ok(p + r->name_len, (size_t)r->req_len + r->rank_len))
			return FIELD;
		memcpy(r->name, p, r->name_len);
		r->name[r->name_len] = '\0';
		p += r->name_len;
		memcpy(r->req, p, r->req_len);
		r->req[r->req_len] = '\0';
		p += r->req_len;
		memcpy(r->rank, p, r->rank_len);
		r->rank[r->rank_len] = '\0';
		return NL_PROTO_OK;
	}
	case NL_MSG_REGISTERED: {
		struct nl_msg_registered *r = &f->regd;

		if (len < 24)
			return TRUNC;
		r->req_id = rd(&p, 8);
		r->handle = (uint32_t)rd(&p, 4);
		r->status = (uint16_t)rd(&p, 2);
		r->n_match = (uint16_t)rd(&p, 2);
		r->err_len = (uint8_t)rd(&p, 1);
		if (rd(&p, 7) != 0 || r->status >= NL_FARM_REG_MAX || r->err_len > NL_FARM_ERR_MAX ||
		    (r->status == NL_FARM_REG_OK) != (r->handle != NL_FARM_NO_HANDLE))
			return FIELD;
		e = exact(len, 24u + r->err_len);
		if (e != NL_PROTO_OK)
			return e;
		if (!text_ok(p, r->err_len))
			return FIELD;
		memcpy(r->err, p, r->err_len);
		r->err[r->err_len] = '\0';
		return NL_PROTO_OK;
	}
	case NL_MSG_FSUBMIT: {
		struct nl_msg_fsubmit *s = &f->fsubmit;

		if (len < 48)
			return TRUNC;
		s->task_id = rd(&p, 8);
		s->need = rd(&p, 8);
		s->instr = rd(&p, 8);
		s->data_bits = rd(&p, 8);
		s->client_ts_ns = rd(&p, 8);
		s->handle = (uint32_t)rd(&p, 4);
		s->n_split = (uint16_t)rd(&p, 2);
		s->args_len = (uint8_t)rd(&p, 1);
		s->attempt = (uint8_t)rd(&p, 1); /* was a pad byte (0): old submitters still fit */
		if (s->handle == NL_FARM_NO_HANDLE || (s->task_id >> 32) == 0 ||
		    s->n_split == 0 || s->n_split > NL_PROTO_MAX_SPLIT ||
		    s->args_len > NL_PROTO_MAX_ARGS)
			return FIELD;
		/* #33: time_limit_ms after the arguments, present only when non-zero */
		s->time_limit_ms = 0;
		if (len == 52u + s->args_len) {
			const uint8_t *q = p + s->args_len;

			s->time_limit_ms = (uint32_t)rd(&q, 4);
			if (s->time_limit_ms == 0)
				return FIELD;
		} else if ((e = exact(len, 48u + s->args_len)) != NL_PROTO_OK) {
			return e;
		}
		memcpy(s->args, p, s->args_len);
		return NL_PROTO_OK;
	}
	case NL_MSG_STATUS_Q: {
		struct nl_msg_status_q *q = &f->status_q;

		e = exact(len, 16);
		if (e != NL_PROTO_OK)
			return e;
		q->req_id = rd(&p, 8);
		q->submit_id = rd(&p, 8);
		if (q->submit_id == 0 || q->submit_id > UINT32_MAX)
			return FIELD;
		return NL_PROTO_OK;
	}
	case NL_MSG_STATUS: {
		struct nl_msg_status *s = &f->status;

		/* #33: tasks and states 0..7; #34: then the shutdown count, only when not 0 */
		s->has_tasks = len == STATUS_T8 || len == STATUS_T8 + 4;
		e = s->has_tasks ? NL_PROTO_OK : exact(len, 24 + 7 * 8);
		if (e != NL_PROTO_OK)
			return e;
		s->req_id = rd(&p, 8);
		s->submit_id = rd(&p, 8);
		s->known = (uint32_t)rd(&p, 4);
		if (rd(&p, 4) != 0 || s->known > 1)
			return FIELD;
		s->c.submitted = rd(&p, 8);
		s->c.accepted = rd(&p, 8);
		s->c.rejected = rd(&p, 8);
		s->c.done_ok = rd(&p, 8);
		s->c.done_err = rd(&p, 8);
		s->c.lost = rd(&p, 8);
		s->c.running = rd(&p, 8);
		memset(&s->t, 0, sizeof(s->t));
		if (s->has_tasks) {
			s->t.tasks = (uint32_t)rd(&p, 4);
			for (unsigned int i = 0; i < NL_FARM_T_SHUTDOWN; i++)
				s->t.n[i] = (uint32_t)rd(&p, 4);
			if (len == STATUS_T8 + 4) {
				s->t.n[NL_FARM_T_SHUTDOWN] = (uint32_t)rd(&p, 4);
				if (s->t.n[NL_FARM_T_SHUTDOWN] == 0)
					return FIELD; /* one encoding: 0 is the short form */
			}
			if (s->t.n[0] != 0)
				return FIELD;
		}
		return NL_PROTO_OK;
	}
	case NL_MSG_TASKINFO: {
		struct nl_msg_taskinfo *t = &f->taskinfo;

		t->has_end = len == 52; /* #33: the end record appended */
		e = t->has_end ? NL_PROTO_OK : exact(len, 32);
		if (e != NL_PROTO_OK)
			return e;
		t->task_id = rd(&p, 8);
		t->worker_id = (uint32_t)rd(&p, 4);
		t->slot = (uint32_t)rd(&p, 4);
		t->mach = (uint16_t)rd(&p, 2);
		t->n_split = (uint16_t)rd(&p, 2);
		t->disp_us = (uint32_t)rd(&p, 4);
		t->run_us = (uint32_t)rd(&p, 4);
		if (rd(&p, 4) != 0 || t->mach >= NL_PROTO_MAX_MACH || t->n_split == 0 ||
		    t->n_split > NL_PROTO_MAX_SPLIT)
			return FIELD;
		t->state = 0;
		t->run_ms = t->queue_ms = t->cpu_ms = t->mem_kib = 0;
		if (t->has_end) {
			t->state = (uint8_t)rd(&p, 1);
			if (rd(&p, 3) != 0 || t->state > 4)
				return FIELD;
			t->run_ms = (uint32_t)rd(&p, 4);
			t->queue_ms = (uint32_t)rd(&p, 4);
			t->cpu_ms = (uint32_t)rd(&p, 4);
			t->mem_kib = (uint32_t)rd(&p, 4);
		}
		return NL_PROTO_OK;
	}
	case NL_MSG_CANCEL: {
		struct nl_msg_cancel *c = &f->cancel;

		e = exact(len, 24);
		if (e != NL_PROTO_OK)
			return e;
		c->req_id = rd(&p, 8);
		c->submit_id = rd(&p, 8);
		c->index = (uint32_t)rd(&p, 4);
		c->all = (uint8_t)rd(&p, 1);
		if (rd(&p, 3) != 0 || c->all > 1 || c->submit_id == 0 || c->submit_id > UINT32_MAX)
			return FIELD;
		return NL_PROTO_OK;
	}
	case NL_MSG_CANCELLED: {
		struct nl_msg_cancelled *c = &f->cancelled;

		e = exact(len, 28);
		if (e != NL_PROTO_OK)
			return e;
		c->req_id = rd(&p, 8);
		c->submit_id = rd(&p, 8);
		c->known = (uint8_t)rd(&p, 1);
		if (rd(&p, 3) != 0 || c->known > 1)
			return FIELD;
		c->withdrawn = (uint32_t)rd(&p, 4);
		c->killed = (uint32_t)rd(&p, 4);
		return NL_PROTO_OK;
	}
	case NL_MSG_TASKS_Q: {
		struct nl_msg_tasks_q *q = &f->tasks_q;

		e = exact(len, 24);
		if (e != NL_PROTO_OK)
			return e;
		q->req_id = rd(&p, 8);
		q->submit_id = rd(&p, 8);
		q->from = (uint32_t)rd(&p, 4);
		q->max = (uint16_t)rd(&p, 2);
		if (rd(&p, 2) != 0 || q->max == 0 || q->max > NL_FARM_TASKS_MAX ||
		    q->submit_id == 0 || q->submit_id > UINT32_MAX)
			return FIELD;
		return NL_PROTO_OK;
	}
	case NL_MSG_TASKS: {
		struct nl_msg_tasks *t = &f->tasks;

		if (len < 24)
			return TRUNC;
		t->req_id = rd(&p, 8);
		t->submit_id = rd(&p, 8);
		t->known = (uint8_t)rd(&p, 1);
		t->n = (uint8_t)rd(&p, 1);
		t->more = (uint8_t)rd(&p, 1);
		if (rd(&p, 1) != 0 || t->known > 1 || t->more > 1 || t->n > NL_FARM_TASKS_MAX)
			return FIELD;
		t->next = (uint32_t)rd(&p, 4);
		e = exact(len, 24u + 28u * t->n);
		if (e != NL_PROTO_OK)
			return e;
		for (unsigned int i = 0; i < t->n; i++) {
			struct nl_farm_trec *r = &t->rec[i];

			r->index = (uint32_t)rd(&p, 4);
			r->state = (uint8_t)rd(&p, 1);
			r->attempts = (uint8_t)rd(&p, 1);
			if (rd(&p, 2) != 0 || r->state >= NL_FARM_T_MAX)
				return FIELD;
			r->status = (int32_t)(uint32_t)rd(&p, 4);
			r->worker_id = (uint32_t)rd(&p, 4);
			r->mach = (uint16_t)rd(&p, 2);
			if (rd(&p, 2) != 0)
				return FIELD;
			r->queue_ms = (uint32_t)rd(&p, 4);
			r->run_ms = (uint32_t)rd(&p, 4);
		}
		return NL_PROTO_OK;
	}
	case NL_MSG_KILL: { /* issue #33: task_id (8), token (4), mach (4), sub (2), reason (1), pad */
		struct nl_msg_kill *k = &f->kill;

		if ((e = exact(len, 20)) != NL_PROTO_OK)
			return e;
		k->task_id = rd(&p, 8);
		k->token = (uint32_t)rd(&p, 4);
		k->mach = (uint32_t)rd(&p, 4);
		k->sub = (uint16_t)rd(&p, 2);
		k->reason = (uint8_t)rd(&p, 1);
		if (rd(&p, 1) != 0 || k->mach >= NL_PROTO_MAX_MACH || k->sub >= NL_PROTO_MAX_SPLIT ||
		    k->reason == 0 || k->reason > NL_KILL_REASON_MAX)
			return FIELD;
		return NL_PROTO_OK;
	}
	case NL_MSG_DONE_ACK: { /* issue #34: task_id (8), token (4), sub (2), pad (2) */
		struct nl_msg_done_ack *k = &f->done_ack;

		if ((e = exact(len, 16)) != NL_PROTO_OK)
			return e;
		k->task_id = rd(&p, 8);
		k->token = (uint32_t)rd(&p, 4);
		k->sub = (uint16_t)rd(&p, 2);
		if (rd(&p, 2) != 0 || k->sub >= NL_PROTO_MAX_SPLIT)
			return FIELD;
		return NL_PROTO_OK;
	}
	}
	return NL_PROTO_E_TYPE;
}

int
nl_farm_encode_body(unsigned int type, const union nl_msg_farm *f, uint8_t *b, size_t cap)
{
	uint8_t *p = b;
	size_t need;

	switch (type) {
	case NL_MSG_CMDS: {
		const struct nl_msg_cmds *c = &f->cmds;

		if (c->n > NL_FARM_MAX_CMDS)
			return -EINVAL;
		need = 8;
		for (unsigned int i = 0; i < c->n; i++)
			need += 3u + c->cmd[i].len;
		if (need > cap)
			return -ENOSPC;
		p = wr(p, c->worker_id, 4);
		p = wr(p, c->n, 1);
		p = wr(p, 0, 3);
		for (unsigned int i = 0; i < c->n; i++) {
			if (c->cmd[i].len > NL_FARM_NAME_MAX)
				return -EINVAL;
			p = wr(p, c->cmd[i].id, 2);
			p = wr(p, c->cmd[i].len, 1);
			memcpy(p, c->cmd[i].name, c->cmd[i].len);
			p += c->cmd[i].len;
		}
		break;
	}
	case NL_MSG_MACHAD: {
		const struct nl_msg_machad *m = &f->machad;

		if (m->len > NL_FARM_AD_MAX)
			return -EINVAL;
		if (8u + m->len > cap)
			return -ENOSPC;
		p = wr(p, m->worker_id, 4);
		p = wr(p, m->mach, 2);
		p = wr(p, m->len, 2);
		memcpy(p, m->ad, m->len);
		p += m->len;
		break;
	}
	case NL_MSG_REGISTER: {
		const struct nl_msg_register *r = &f->reg;

		if (r->name_len > NL_FARM_NAME_MAX || r->req_len > NL_FARM_EXPR_MAX ||
		    r->rank_len > NL_FARM_EXPR_MAX)
			return -EINVAL;
		if (16u + r->name_len + r->req_len + r->rank_len > cap)
			return -ENOSPC;
		p = wr(p, r->req_id, 8);
		p = wr(p, r->name_len, 1);
		p = wr(p, r->req_len, 2);
		p = wr(p, r->rank_len, 2);
		p = wr(p, 0, 3);
		memcpy(p, r->name, r->name_len);
		p += r->name_len;
		memcpy(p, r->req, r->req_len);
		p += r->req_len;
		memcpy(p, r->rank, r->rank_len);
		p += r->rank_len;
		break;
	}
	case NL_MSG_REGISTERED: {
		const struct nl_msg_registered *r = &f->regd;

		if (r->err_len > NL_FARM_ERR_MAX)
			return -EINVAL;
		if (24u + r->err_len > cap)
			return -ENOSPC;
		p = wr(p, r->req_id, 8);
		p = wr(p, r->handle, 4);
		p = wr(p, r->status, 2);
		p = wr(p, r->n_match, 2);
		p = wr(p, r->err_len, 1);
		p = wr(p, 0, 7);
		memcpy(p, r->err, r->err_len);
		p += r->err_len;
		break;
	}
	case NL_MSG_FSUBMIT: {
		const struct nl_msg_fsubmit *s = &f->fsubmit;

		if (s->args_len > NL_PROTO_MAX_ARGS)
			return -EINVAL;
		if (48u + s->args_len + (s->time_limit_ms ? 4u : 0u) > cap)
			return -ENOSPC;
		p = wr(p, s->task_id, 8);
		p = wr(p, s->need, 8);
		p = wr(p, s->instr, 8);
		p = wr(p, s->data_bits, 8);
		p = wr(p, s->client_ts_ns, 8);
		p = wr(p, s->handle, 4);
		p = wr(p, s->n_split, 2);
		p = wr(p, s->args_len, 1);
		p = wr(p, s->attempt, 1);
		memcpy(p, s->args, s->args_len);
		p += s->args_len;
		if (s->time_limit_ms != 0) /* #33: only when set (older appliances) */
			p = wr(p, s->time_limit_ms, 4);
		break;
	}
	case NL_MSG_STATUS_Q:
		if (cap < 16)
			return -ENOSPC;
		p = wr(p, f->status_q.req_id, 8);
		p = wr(p, f->status_q.submit_id, 8);
		break;
	case NL_MSG_STATUS: {
		const struct nl_msg_status *s = &f->status;

		if (cap < (s->has_tasks ? STATUS_T8 + 4u : 24u + 7 * 8))
			return -ENOSPC;
		if (s->has_tasks && s->t.n[0] != 0)
			return -EINVAL;
		p = wr(p, s->req_id, 8);
		p = wr(p, s->submit_id, 8);
		p = wr(p, s->known, 4);
		p = wr(p, 0, 4);
		p = wr(p, s->c.submitted, 8);
		p = wr(p, s->c.accepted, 8);
		p = wr(p, s->c.rejected, 8);
		p = wr(p, s->c.done_ok, 8);
		p = wr(p, s->c.done_err, 8);
		p = wr(p, s->c.lost, 8);
		p = wr(p, s->c.running, 8);
		if (s->has_tasks) { /* #33 */
			p = wr(p, s->t.tasks, 4);
			for (unsigned int i = 0; i < NL_FARM_T_SHUTDOWN; i++)
				p = wr(p, s->t.n[i], 4);
			if (s->t.n[NL_FARM_T_SHUTDOWN] != 0) /* #34: appended when not 0 */
				p = wr(p, s->t.n[NL_FARM_T_SHUTDOWN], 4);
		}
		break;
	}
	case NL_MSG_TASKINFO: {
		const struct nl_msg_taskinfo *t = &f->taskinfo;

		if (cap < (t->has_end ? 52u : 32u))
			return -ENOSPC;
		if (t->has_end && t->state > 4)
			return -EINVAL;
		p = wr(p, t->task_id, 8);
		p = wr(p, t->worker_id, 4);
		p = wr(p, t->slot, 4);
		p = wr(p, t->mach, 2);
		p = wr(p, t->n_split, 2);
		p = wr(p, t->disp_us, 4);
		p = wr(p, t->run_us, 4);
		p = wr(p, 0, 4);
		if (t->has_end) { /* #33 */
			p = wr(p, t->state, 1);
			p = wr(p, 0, 3);
			p = wr(p, t->run_ms, 4);
			p = wr(p, t->queue_ms, 4);
			p = wr(p, t->cpu_ms, 4);
			p = wr(p, t->mem_kib, 4);
		}
		break;
	}
	case NL_MSG_CANCEL: {
		const struct nl_msg_cancel *c = &f->cancel;

		if (cap < 24)
			return -ENOSPC;
		if (c->all > 1 || c->submit_id == 0 || c->submit_id > UINT32_MAX)
			return -EINVAL;
		p = wr(p, c->req_id, 8);
		p = wr(p, c->submit_id, 8);
		p = wr(p, c->index, 4);
		p = wr(p, c->all, 1);
		p = wr(p, 0, 3);
		break;
	}
	case NL_MSG_CANCELLED: {
		const struct nl_msg_cancelled *c = &f->cancelled;

		if (cap < 28)
			return -ENOSPC;
		if (c->known > 1)
			return -EINVAL;
		p = wr(p, c->req_id, 8);
		p = wr(p, c->submit_id, 8);
		p = wr(p, c->known, 1);
		p = wr(p, 0, 3);
		p = wr(p, c->withdrawn, 4);
		p = wr(p, c->killed, 4);
		break;
	}
	case NL_MSG_TASKS_Q: {
		const struct nl_msg_tasks_q *q = &f->tasks_q;

		if (cap < 24)
			return -ENOSPC;
		if (q->max == 0 || q->max > NL_FARM_TASKS_MAX || q->submit_id == 0 ||
		    q->submit_id > UINT32_MAX)
			return -EINVAL;
		p = wr(p, q->req_id, 8);
		p = wr(p, q->submit_id, 8);
		p = wr(p, q->from, 4);
		p = wr(p, q->max, 2);
		p = wr(p, 0, 2);
		break;
	}
	case NL_MSG_TASKS: {
		const struct nl_msg_tasks *t = &f->tasks;

		if (t->n > NL_FARM_TASKS_MAX || t->known > 1 || t->more > 1)
			return -EINVAL;
		if (cap < 24u + 28u * t->n)
			return -ENOSPC;
		p = wr(p, t->req_id, 8);
		p = wr(p, t->submit_id, 8);
		p = wr(p, t->known, 1);
		p = wr(p, t->n, 1);
		p = wr(p, t->more, 1);
		p = wr(p, 0, 1);
		p = wr(p, t->next, 4);
		for (unsigned int i = 0; i < t->n; i++) {
			const struct nl_farm_trec *r = &t->rec[i];

			if (r->state >= NL_FARM_T_MAX)
				return -EINVAL;
			p = wr(p, r->index, 4);
			p = wr(p, r->state, 1);
			p = wr(p, r->attempts, 1);
			p = wr(p, 0, 2);
			p = wr(p, (uint32_t)r->status, 4);
			p = wr(p, r->worker_id, 4);
			p = wr(p, r->mach, 2);
			p = wr(p, 0, 2);
			p = wr(p, r->queue_ms, 4);
			p = wr(p, r->run_ms, 4);
		}
		break;
	}
	case NL_MSG_KILL: {
		const struct nl_msg_kill *k = &f->kill;

		if (cap < 20)
			return -ENOSPC;
		p = wr(p, k->task_id, 8);
		p = wr(p, k->token, 4);
		p = wr(p, k->mach, 4);
		p = wr(p, k->sub, 2);
		p = wr(p, k->reason, 1);
		p = wr(p, 0, 1);
		break;
	}
	case NL_MSG_DONE_ACK: {
		const struct nl_msg_done_ack *k = &f->done_ack;

		if (cap < 16)
			return -ENOSPC;
		if (k->sub >= NL_PROTO_MAX_SPLIT)
			return -EINVAL;
		p = wr(p, k->task_id, 8);
		p = wr(p, k->token, 4);
		p = wr(p, k->sub, 2);
		p = wr(p, 0, 2);
		break;
	}
	default:
		return -EINVAL;
	}
	return (int)(p - b);
}

const char *
nl_farm_type_name(unsigned int type)
{
	static const char *const n[NL_FARM_TYPE_MAX - NL_FARM_TYPE_MIN + 1] = {
		"CMDS", "MACHAD", "REGISTER", "REGISTERED", "FSUBMIT", "STATUS_Q", "STATUS",
		"TASKINFO", "KILL", "CANCEL", "CANCELLED", "TASKS_Q", "TASKS", "DONE_ACK",
	};

	return nl_farm_type(type) && n[type - NL_FARM_TYPE_MIN] != NULL ?
		       n[type - NL_FARM_TYPE_MIN] : "?";
}

const char *
nl_farm_tstate_name(unsigned int state)
{
	static const char *const n[NL_FARM_T_MAX] = { "none", "queued", "running", "ok", "failed",
						      "timeout", "cancelled", "rejected",
						      "shutdown" };

	return state < NL_FARM_T_MAX ? n[state] : "?";
}

const char *
nl_farm_reg_name(unsigned int status)
{
	static const char *const n[NL_FARM_REG_MAX] = { "ok", "unknown_command",
							"bad_requirements", "bad_rank", "full" };

	return status < NL_FARM_REG_MAX ? n[status] : "?";
}

uint8_t *
nl_farm_encode_at(unsigned int type, const union nl_msg_farm *f, uint8_t *p, size_t cap)
{
	int n = nl_farm_type(type) ? nl_farm_encode_body(type, f, p, cap) : -EINVAL;

	return n < 0 ? NULL : p + n;
}
