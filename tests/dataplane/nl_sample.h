/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A well-formed message of every type the codec knows (types 1..9 and the task farm's
 * 24..37), for the rights tests: tests/dataplane/test_rights.c (unit) and nl-send (live,
 * test_secure.sh case 7). Header-only, test code.
 */
#ifndef NL_SAMPLE_H
#define NL_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nl_proto.h"

/* Every type nl_sample_msg() builds, in order. */
static const uint8_t nl_sample_types[] = {
	NL_MSG_SUBMIT, NL_MSG_ACCEPT, NL_MSG_REJECT, NL_MSG_COMPLETE, NL_MSG_DISPATCH,
	NL_MSG_DONE, NL_MSG_LOAD, NL_MSG_HELLO, NL_MSG_BYE, NL_MSG_CMDS, NL_MSG_MACHAD,
	NL_MSG_REGISTER, NL_MSG_REGISTERED, NL_MSG_FSUBMIT, NL_MSG_STATUS_Q, NL_MSG_STATUS,
	NL_MSG_TASKINFO, NL_MSG_KILL, NL_MSG_CANCEL, NL_MSG_CANCELLED, NL_MSG_TASKS_Q,
	NL_MSG_TASKS, NL_MSG_DONE_ACK,
};

/*
 * A message of `type` that encodes (nl_proto_encode() accepts it) and does as little as it
 * can at an appliance: a SUBMIT or FSUBMIT no machine can take (resource 41, handle 999999),
 * a HELLO and LOAD of a machine no slot matches (resource 41), a DONE of no sub-task, a
 * REGISTER of a command nobody offers. wid = the worker id it carries.
 */
static inline bool
nl_sample_msg(unsigned int type, uint32_t wid, struct nl_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = (uint8_t)type;
	switch (type) {
	case NL_MSG_SUBMIT:
		m->u.submit.task_id = 0x5a3e00000001ull;
		m->u.submit.need = 1ull << 40;
		m->u.submit.instr = 1000;
		m->u.submit.n_split = 1;
		return true;
	case NL_MSG_ACCEPT:
	case NL_MSG_REJECT:
	case NL_MSG_COMPLETE:
		m->u.reply.task_id = 0x5a3e00000001ull;
		m->u.reply.reason = type == NL_MSG_REJECT ? 3 : 0;
		return true;
	case NL_MSG_DISPATCH:
		m->u.dispatch.task_id = 0x5a3e00000001ull;
		m->u.dispatch.n_split = 1;
		return true;
	case NL_MSG_DONE:
		m->u.done.task_id = 0x5a3e00000001ull;
		m->u.done.token = 0xfffffff0u;
		return true;
	case NL_MSG_LOAD:
	case NL_MSG_HELLO:
		m->u.hello.worker_id = wid;
		m->u.hello.n_mach = 1;
		m->u.hello.mach[0].speed_ips = 1000000;
		m->u.hello.mach[0].link_bps = 1000000;
		m->u.hello.mach[0].res_set = 1ull << 40; /* no slot has resource 41 */
		return true;
	case NL_MSG_BYE:
		m->u.bye.worker_id = wid;
		return true;
	case NL_MSG_CMDS:
		m->u.farm.cmds.worker_id = wid;
		m->u.farm.cmds.n = 1;
		m->u.farm.cmds.cmd[0].id = 0x8000;
		m->u.farm.cmds.cmd[0].len = 6;
		memcpy(m->u.farm.cmds.cmd[0].name, "sample", 7);
		return true;
	case NL_MSG_MACHAD:
		m->u.farm.machad.worker_id = wid;
		m->u.farm.machad.len = 9;
		memcpy(m->u.farm.machad.ad, "Tag = 1.0", 10);
		return true;
	case NL_MSG_REGISTER:
		m->u.farm.reg.req_id = 7;
		m->u.farm.reg.name_len = 13;
		memcpy(m->u.farm.reg.name, "nobody_has_it", 14);
		return true;
	case NL_MSG_REGISTERED:
		m->u.farm.regd.req_id = 7;
		m->u.farm.regd.status = NL_FARM_REG_UNKNOWN_CMD;
		return true;
	case NL_MSG_FSUBMIT:
		m->u.farm.fsubmit.task_id = 0x5a3e00000001ull;
		m->u.farm.fsubmit.need = 1ull << 40;
		m->u.farm.fsubmit.handle = 999999;
		m->u.farm.fsubmit.n_split = 1;
		m->u.farm.fsubmit.attempt = 1;
		return true;
	case NL_MSG_STATUS_Q:
		m->u.farm.status_q.req_id = 7;
		m->u.farm.status_q.submit_id = 0x5a3e;
		return true;
	case NL_MSG_STATUS:
		m->u.farm.status.req_id = 7;
		m->u.farm.status.submit_id = 0x5a3e;
		return true;
	case NL_MSG_TASKINFO:
		m->u.farm.taskinfo.task_id = 0x5a3e00000001ull;
		m->u.farm.taskinfo.n_split = 1;
		return true;
	case NL_MSG_CANCEL: /* #33: a batch nobody submitted: answered known = 0 */
		m->u.farm.cancel.req_id = 7;
		m->u.farm.cancel.submit_id = 0x5a3e;
		m->u.farm.cancel.all = 1;
		return true;
	case NL_MSG_CANCELLED:
		m->u.farm.cancelled.req_id = 7;
		m->u.farm.cancelled.submit_id = 0x5a3e;
		return true;
	case NL_MSG_TASKS_Q:
		m->u.farm.tasks_q.req_id = 7;
		m->u.farm.tasks_q.submit_id = 0x5a3e;
		m->u.farm.tasks_q.max = 1;
		return true;
	case NL_MSG_TASKS:
		m->u.farm.tasks.req_id = 7;
		m->u.farm.tasks.submit_id = 0x5a3e;
		return true;
	case NL_MSG_KILL: /* #33: appliance -> worker only; nobody else may send it */
		m->u.farm.kill.task_id = (0x5a3eull << 32) | 1;
		m->u.farm.kill.reason = NL_KILL_CANCEL;
		return true;
	case NL_MSG_DONE_ACK: /* #34: appliance -> worker only; nobody else may send it */
		m->u.farm.done_ack.task_id = (0x5a3eull << 32) | 1;
		return true;
	default:
		return false;
	}
}

#endif /* NL_SAMPLE_H */
