/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Task-farm messages (types 24..31, dataplane/wire/nl_proto_farm.h): every type round trips in
 * both protocol versions; out-of-bound fields are refused as bad_field; a mutated frame is
 * refused or re-encodes to the same bytes (one definition of "valid"); old-style frames are
 * unaffected.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nl_proto.h"
#include "nl_tap.h"

static struct nl_msg
sample(unsigned int type, bool ext)
{
	struct nl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = (uint8_t)type;
	switch (type) {
	case NL_MSG_CMDS:
		m.u.farm.cmds.worker_id = 7;
		m.u.farm.cmds.n = 2;
		m.u.farm.cmds.cmd[0] = (struct nl_farm_cmd){ .id = 0x8000, .len = 4, .name = "emit" };
		m.u.farm.cmds.cmd[1] = (struct nl_farm_cmd){ .id = 0x8001, .len = 5, .name = "a.b-c" };
		break;
	case NL_MSG_MACHAD: {
		const char *ad = "Memory = 16384; Arch = \"X86_64\"; HasAvx2 = true";

		m.u.farm.machad.worker_id = 7;
		m.u.farm.machad.mach = 3;
		m.u.farm.machad.len = (uint16_t)strlen(ad);
		memcpy(m.u.farm.machad.ad, ad, strlen(ad));
		break;
	}
	case NL_MSG_REGISTER: {
		struct nl_msg_register *r = &m.u.farm.reg;

		r->req_id = 99;
		r->name_len = 4;
		memcpy(r->name, "emit", 4);
		r->req_len = 14;
		memcpy(r->req, "Memory >= 1024", 14);
		r->rank_len = 4;
		memcpy(r->rank, "Mips", 4);
		break;
	}
	case NL_MSG_REGISTERED:
		m.u.farm.regd.req_id = 99;
		m.u.farm.regd.handle = 3;
		m.u.farm.regd.n_match = 12;
		break;
	case NL_MSG_FSUBMIT: {
		struct nl_msg_fsubmit *s = &m.u.farm.fsubmit;

		s->task_id = (UINT64_C(42) << 32) | 5;
		s->need = 1;
		s->instr = 1000000;
		s->client_ts_ns = 123;
		s->handle = 3;
		s->n_split = 2;
		s->args_len = 6;
		memcpy(s->args, "a\0bcd\0", 6);
		break;
	}
	case NL_MSG_STATUS_Q:
		m.u.farm.status_q.req_id = 1;
		m.u.farm.status_q.submit_id = 42;
		break;
	case NL_MSG_STATUS:
		m.u.farm.status.req_id = 1;
		m.u.farm.status.submit_id = 42;
		m.u.farm.status.known = 1;
		m.u.farm.status.c = (struct nl_farm_counts){ 10, 9, 1, 6, 2, 0, 1 };
		break;
	case NL_MSG_TASKINFO:
		m.u.farm.taskinfo = (struct nl_msg_taskinfo){ .task_id = 5, .worker_id = 2, .slot = 9,
							     .mach = 1, .n_split = 1, .disp_us = 30,
							     .run_us = 900 };
		break;
	case NL_MSG_CANCEL:
		m.u.farm.cancel = (struct nl_msg_cancel){ .req_id = 3, .submit_id = 42, .index = 7 };
		break;
	case NL_MSG_CANCELLED:
		m.u.farm.cancelled = (struct nl_msg_cancelled){ .req_id = 3, .submit_id = 42, .known = 1,
							       .withdrawn = 90, .killed = 10 };
		break;
	case NL_MSG_TASKS_Q:
		m.u.farm.tasks_q = (struct nl_msg_tasks_q){ .req_id = 4, .submit_id = 42, .from = 5,
							   .max = NL_FARM_TASKS_MAX };
		break;
	case NL_MSG_TASKS: {
		struct nl_msg_tasks *t = &m.u.farm.tasks;

		t->req_id = 4;
		t->submit_id = 42;
		t->known = 1;
		t->more = 1;
		t->next = 45;
		t->n = 3;
		for (unsigned int i = 0; i < t->n; i++)
			t->rec[i] = (struct nl_farm_trec){ .index = 5 + i, .state = (uint8_t)(3 + i),
							   .attempts = 2, .status = i == 1 ? -1 : 0,
							   .worker_id = 9, .mach = 2, .queue_ms = 15,
							   .run_ms = 1001 };
		break;
	}
	case NL_MSG_KILL:
		m.u.farm.kill = (struct nl_msg_kill){ .task_id = (UINT64_C(42) << 32) | 5,
						      .token = 77, .mach = 2, .sub = 1,
						      .reason = NL_KILL_CANCEL };
		break;
	case NL_MSG_DONE_ACK:
		m.u.farm.done_ack = (struct nl_msg_done_ack){ .task_id = (UINT64_C(42) << 32) | 5,
							      .token = 77, .sub = 63 };
		break;
	}
	if (ext) { /* #33: the fields appended to FSUBMIT, STATUS, TASKINFO */
		m.u.farm.fsubmit.time_limit_ms = type == NL_MSG_FSUBMIT ? 2000 : m.u.farm.fsubmit.time_limit_ms;
		if (type == NL_MSG_STATUS) {
			m.u.farm.status.has_tasks = 1;
			m.u.farm.status.t = (struct nl_farm_tcounts){ 10, { 0, 1, 2, 3, 1, 1, 1, 1 } };
		}
		if (type == NL_MSG_TASKINFO) {
			struct nl_msg_taskinfo *ti = &m.u.farm.taskinfo;

			ti->has_end = 1;
			ti->state = 1;
			ti->run_ms = 2001;
			ti->queue_ms = 3;
			ti->cpu_ms = 40;
			ti->mem_kib = 2048;
		}
	}
	return m;
}

static const unsigned int types[] = { 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37 };
#define N_TYPES (sizeof(types) / sizeof(types[0]))

static uint64_t rs = 0x243f6a8885a308d3ull;

static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

int
main(void)
{
	uint8_t buf[NL_PROTO_MAX_LEN], buf2[NL_PROTO_MAX_LEN];
	struct nl_msg out;
	struct nl_auth_key key;
	struct nl_auth_tx tx;
	struct nl_replay rp;

	memset(&key, 0x5a, sizeof(key));
	nl_auth_tx_init(&tx, &key);
	nl_replay_init(&rp, 16);
	for (unsigned int i = 0; i < 2 * N_TYPES; i++) {
		unsigned int t = types[i % N_TYPES];
		struct nl_msg m = sample(t, i >= N_TYPES);
		int n = nl_proto_encode(&m, buf, sizeof(buf));
		bool ok = n > 0 && nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_OK &&
			  out.type == t;
		int n2 = ok ? nl_proto_encode(&out, buf2, sizeof(buf2)) : -1;

		nl_tap_ok(ok && n2 == n && memcmp(buf, buf2, (size_t)n) == 0 &&
				  (i < N_TYPES || t != NL_MSG_FSUBMIT ||
				   out.u.farm.fsubmit.time_limit_ms == 2000) &&
				  (i < N_TYPES || t != NL_MSG_STATUS || out.u.farm.status.t.n[3] == 3) &&
				  (i < N_TYPES || t != NL_MSG_TASKINFO || out.u.farm.taskinfo.run_ms == 2001),
			  "%s round trips (version 1)%s", nl_msg_type_name(t),
			  i >= N_TYPES ? " with #33's fields" : "");
		n = nl_proto_seal(&m, &tx, nl_auth_now_ns(), buf, sizeof(buf));
		nl_tap_ok(n > 0 && nl_proto_open(&key, &rp, buf, (size_t)n, nl_auth_now_ns(), &out) ==
					   NL_PROTO_OK && out.type == t,
			  "%s round trips sealed (version 2)", nl_msg_type_name(t));
	}
	/* field bounds */
	struct nl_msg m = sample(NL_MSG_CMDS, false);

	m.u.farm.cmds.cmd[1].name[1] = ' ';
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "CMDS: a name with a space is refused");
	m = sample(NL_MSG_FSUBMIT, false);
	m.u.farm.fsubmit.handle = 0;
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "FSUBMIT: handle 0 is refused");
	m = sample(NL_MSG_FSUBMIT, false);
	m.u.farm.fsubmit.task_id = 5;
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "FSUBMIT: submit id 0 is refused");
	m = sample(NL_MSG_FSUBMIT, false);
	m.u.farm.fsubmit.args_len = 65;
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "FSUBMIT: 65 bytes of arguments are refused");
	m = sample(NL_MSG_MACHAD, false);
	m.u.farm.machad.ad[2] = '\0';
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "MACHAD: a NUL in the record is refused");
	m = sample(NL_MSG_MACHAD, false);
	m.u.farm.machad.len = NL_FARM_AD_MAX + 1;
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "MACHAD: a record over 1024 bytes is refused");
	m = sample(NL_MSG_REGISTERED, false);
	m.u.farm.regd.status = NL_FARM_REG_UNKNOWN_CMD;
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "REGISTERED: an error with a handle is refused");
	m.u.farm.regd.handle = 0;
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) > 0, "REGISTERED: an error without a handle is fine");
	m = sample(NL_MSG_STATUS_Q, false);
	m.u.farm.status_q.submit_id = UINT64_C(1) << 32;
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "STATUS_Q: a submit id over 32 bits is refused");
	m = sample(NL_MSG_KILL, false);
	m.u.farm.kill.reason = 0;
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "KILL: reason 0 is refused");
	m = sample(NL_MSG_KILL, false);
	m.u.farm.kill.mach = NL_PROTO_MAX_MACH;
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "KILL: machine 24 is refused");
	m = sample(NL_MSG_KILL, false);
	{
		int n = nl_proto_encode(&m, buf, sizeof(buf));

		nl_tap_ok(n == 28 && nl_proto_decode(buf, 27, &out) == NL_PROTO_E_TRUNC &&
				  (buf[27] = 1, nl_proto_decode(buf, 28, &out)) == NL_PROTO_E_FIELD,
			  "KILL: 20-byte body, a short one truncated, the pad byte checked");
	}
	/* #34: DONE_ACK */
	m = sample(NL_MSG_DONE_ACK, false);
	m.u.farm.done_ack.sub = NL_PROTO_MAX_SPLIT;
	nl_tap_ok(nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL, "DONE_ACK: sub-task 64 is refused");
	m = sample(NL_MSG_DONE_ACK, false);
	{
		int n = nl_proto_encode(&m, buf, sizeof(buf));
		bool ok = n == 24 && nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_OK &&
			  out.u.farm.done_ack.task_id == ((UINT64_C(42) << 32) | 5) &&
			  out.u.farm.done_ack.token == 77 && out.u.farm.done_ack.sub == 63;

		nl_tap_ok(ok && nl_proto_decode(buf, 23, &out) == NL_PROTO_E_TRUNC &&
				  (buf[23] = 1, nl_proto_decode(buf, 24, &out)) == NL_PROTO_E_FIELD &&
				  (buf[23] = 0, buf[21] = 64, nl_proto_decode(buf, 24, &out)) ==
					  NL_PROTO_E_FIELD,
			  "DONE_ACK: 16-byte body, a short one truncated, pad and sub-task checked");
	}
	/* #34: STATUS's shutdown count, appended only when not 0 (one encoding per message) */
	m = sample(NL_MSG_STATUS, true);
	{
		int n0 = nl_proto_encode(&m, buf, sizeof(buf)), n;
		bool ok = n0 > 0 && nl_proto_decode(buf, (size_t)n0, &out) == NL_PROTO_OK &&
			  out.u.farm.status.t.n[NL_FARM_T_SHUTDOWN] == 0;

		m.u.farm.status.t.n[NL_FARM_T_SHUTDOWN] = 16;
		n = nl_proto_encode(&m, buf, sizeof(buf));
		ok = ok && n == n0 + 4 && nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_OK &&
		     out.u.farm.status.t.n[NL_FARM_T_SHUTDOWN] == 16 &&
		     out.u.farm.status.t.n[NL_FARM_T_OK] == 3;
		memset(buf + n - 4, 0, 4); /* the long form with 0: not canonical */
		nl_tap_ok(ok && nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD &&
				  strcmp(nl_farm_tstate_name(NL_FARM_T_SHUTDOWN), "shutdown") == 0,
			  "STATUS: the shutdown count only when not 0 (4 bytes more); 0 there is bad_field");
	}
	/* mutations: refused, or canonical */
	unsigned int bad = 0, accepted = 0;

	for (unsigned int i = 0; i < 200000; i++) {
		struct nl_msg s = sample(types[rnd() % N_TYPES], rnd() % 2);
		int n = nl_proto_encode(&s, buf, sizeof(buf));
		unsigned int k = 1 + (unsigned int)(rnd() % 3);

		for (unsigned int j = 0; j < k; j++)
			buf[8 + rnd() % (uint64_t)(n - 8)] ^= (uint8_t)(1u << (rnd() % 8));
		if (nl_proto_decode(buf, (size_t)n, &out) != NL_PROTO_OK)
			continue;
		accepted++;
		int n2 = nl_proto_encode(&out, buf2, sizeof(buf2));

		if (n2 != n || memcmp(buf, buf2, (size_t)n) != 0)
			bad++;
	}
	nl_tap_ok(bad == 0 && accepted > 0, "200,000 mutated task-farm frames: refused, or re-encode to the same bytes (%u accepted, %u not canonical)", accepted, bad);
	nl_tap_ok(strcmp(nl_msg_type_name(NL_MSG_FSUBMIT), "FSUBMIT") == 0 &&
			  strcmp(nl_farm_reg_name(NL_FARM_REG_BAD_REQ), "bad_requirements") == 0,
		  "type and status names print");
	nl_replay_free(&rp);
	printf("1..%u\n", nl_tap_n);
	return nl_tap_fail ? 1 : 0;
}
