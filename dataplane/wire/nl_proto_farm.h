/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Task-farm messages of the wire protocol (types 24..31, docs/protocol.md "Task farms"):
 * named commands and machine ClassAds announced by workers, Requirements/Rank registered by
 * clients as a handle, SUBMIT with a handle and a submit id, and per-submit status. Pure C, no
 * DPDK; nl_proto.c decodes and encodes them through nl_farm_decode_body() and
 * nl_farm_encode_body(), so the header, the version, the MAC trailer and the drop reasons are
 * those of every other message. Old peers drop these types as bad_type.
 *
 * A task-farm task id is (submit_id << 32) | task index: the appliance counts per submit id
 * (its upper 32 bits, never 0) and the worker names output files after both halves.
 */
#ifndef NL_PROTO_FARM_H
#define NL_PROTO_FARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NL_FARM_TYPE_MIN 24u
#define NL_FARM_TYPE_MAX 39u   /**< 24..39: task-farm range (KILL 32, DONE_ACK 37: to workers) */
#define NL_FARM_NAME_MAX 31u   /**< bytes of a command name: [A-Za-z0-9_.+-], 1..31 */
#define NL_FARM_MAX_CMDS 32u   /**< command names per CMDS message (per worker) */
#define NL_FARM_AD_MAX 1024u   /**< bytes of a machine ClassAd text */
#define NL_FARM_EXPR_MAX 512u  /**< bytes of a Requirements or a Rank text */
#define NL_FARM_ERR_MAX 160u   /**< bytes of a REGISTERED error text */
#define NL_FARM_NO_HANDLE 0u   /**< handle 0 = none */

/** Task-farm message types (24..31 are this range). */
enum nl_farm_msg_type {
	NL_MSG_CMDS = 24,       /**< worker -> appliance: the command names it offers */
	NL_MSG_MACHAD = 25,     /**< worker -> appliance: one machine's ClassAd record */
	NL_MSG_REGISTER = 26,   /**< client -> appliance: command + Requirements + Rank */
	NL_MSG_REGISTERED = 27, /**< appliance -> client: the handle, or why not */
	NL_MSG_FSUBMIT = 28,    /**< client -> appliance: a task naming a handle */
	NL_MSG_STATUS_Q = 29,   /**< client -> appliance: counters of a submit id? */
	NL_MSG_STATUS = 30,     /**< appliance -> client: counters of a submit id */
	NL_MSG_TASKINFO = 31,   /**< appliance -> client: where and when a farm task ran */
	NL_MSG_KILL = 32,       /**< appliance -> worker: end one sub-task (issue #33) */
	/* issue #33, client side: */
	NL_MSG_CANCEL = 33,     /**< client -> appliance: cancel a batch or one of its tasks */
	NL_MSG_CANCELLED = 34,  /**< appliance -> client: what the CANCEL withdrew and killed */
	NL_MSG_TASKS_Q = 35,    /**< client -> appliance: per-task records of a batch, from an index */
	NL_MSG_TASKS = 36,      /**< appliance -> client: up to NL_FARM_TASKS_MAX of them */
	/* issue #34: */
	NL_MSG_DONE_ACK = 37,   /**< appliance -> worker: this DONE was received (resend no more) */
};

#define NL_FARM_TASKS_MAX 40u  /**< task records per TASKS message */

/** A farm task's state (--status, TASKS, the appliance's records; issue #33 item 5). */
enum nl_farm_tstate {
	NL_FARM_T_NONE = 0,
	NL_FARM_T_QUEUED = 1,    /**< accepted, not dispatched yet */
	NL_FARM_T_RUNNING = 2,   /**< dispatched to a machine (running or queued there) */
	NL_FARM_T_OK = 3,        /**< ended, every sub-task exited 0 */
	NL_FARM_T_FAILED = 4,    /**< ended with a non-zero exit, could not start, lost */
	NL_FARM_T_TIMEOUT = 5,   /**< killed at its wall-clock limit */
	NL_FARM_T_CANCELLED = 6, /**< withdrawn or killed by a CANCEL */
	NL_FARM_T_REJECTED = 7,  /**< refused after acceptance: no machine matches, bad task */
	NL_FARM_T_SHUTDOWN = 8,  /**< not run: the appliance stopped (drain on stop, issue #34);
				  *   STATUS carries its count only when not 0 */
	NL_FARM_T_MAX
};

/** KILL reason. */
#define NL_KILL_CANCEL 1u       /**< the submitter cancelled the task */
#define NL_KILL_REASON_MAX 1u

/** REGISTERED status. */
enum nl_farm_reg_status {
	NL_FARM_REG_OK = 0,
	NL_FARM_REG_UNKNOWN_CMD = 1, /**< no worker ever announced the command name */
	NL_FARM_REG_BAD_REQ = 2,     /**< Requirements does not parse (err says where) */
	NL_FARM_REG_BAD_RANK = 3,    /**< Rank does not parse */
	NL_FARM_REG_FULL = 4,        /**< no free handle */
	NL_FARM_REG_MAX
};

struct nl_farm_cmd {
	uint16_t id;                        /**< the worker's local command id (DISPATCH cmd_id) */
	uint8_t len;                        /**< 1..NL_FARM_NAME_MAX */
	char name[NL_FARM_NAME_MAX + 1];    /**< NUL-terminated in memory, not on the wire */
};

struct nl_msg_cmds {
	uint32_t worker_id;
	uint8_t n;                          /**< 0..NL_FARM_MAX_CMDS */
	struct nl_farm_cmd cmd[NL_FARM_MAX_CMDS];
};

struct nl_msg_machad {
	uint32_t worker_id;
	uint16_t mach;                      /**< worker-local machine index < NL_PROTO_MAX_MACH */
	uint16_t len;                       /**< 0..NL_FARM_AD_MAX */
	char ad[NL_FARM_AD_MAX + 1];        /**< ClassAd attribute list, printable ASCII */
};

struct nl_msg_register {
	uint64_t req_id;                    /**< echoed */
	uint8_t name_len;                   /**< 1..NL_FARM_NAME_MAX */
	uint16_t req_len, rank_len;         /**< 0..NL_FARM_EXPR_MAX each; 0 = none */
	char name[NL_FARM_NAME_MAX + 1];
	char req[NL_FARM_EXPR_MAX + 1];
	char rank[NL_FARM_EXPR_MAX + 1];
};

struct nl_msg_registered {
	uint64_t req_id;
	uint32_t handle;                    /**< != 0 when status is OK */
	uint16_t status;                    /**< enum nl_farm_reg_status */
	uint16_t n_match;                   /**< machines eligible now (saturates at 65535) */
	uint8_t err_len;                    /**< 0..NL_FARM_ERR_MAX */
	char err[NL_FARM_ERR_MAX + 1];
};

struct nl_msg_fsubmit {
	uint64_t task_id;                   /**< (submit_id << 32) | index; submit_id != 0 */
	uint64_t need, instr, data_bits, client_ts_ns;
	uint32_t handle;                    /**< from REGISTERED, != 0 */
	uint16_t n_split;                   /**< 1..NL_PROTO_MAX_SPLIT */
	uint8_t args_len;                   /**< 0..NL_PROTO_MAX_ARGS */
	uint8_t attempt;                    /**< the submitter's attempt 1..255 of this task id;
					     *   0 = not given (resends then match only in flight) */
	uint8_t args[64];
	uint32_t time_limit_ms;             /**< #33: wall-clock limit, 0 = none; on the wire
					     *   after args only when non-zero (older peers) */
};

struct nl_msg_status_q {
	uint64_t req_id;
	uint64_t submit_id;                 /**< 1..2^32-1 */
};

/** Counters of one submit id, as the appliance keeps them. */
struct nl_farm_counts {
	uint64_t submitted;  /**< FSUBMITs received */
	uint64_t accepted;   /**< ACCEPTed */
	uint64_t rejected;   /**< REJECTed at admission (never accepted) */
	uint64_t done_ok;    /**< COMPLETE, every sub-task exited 0 */
	uint64_t done_err;   /**< COMPLETE with a non-zero exit status */
	uint64_t lost;       /**< accepted, then REJECTed (machine_lost, no_machine, ...) */
	uint64_t running;    /**< accepted and not ended */
};

/** #33: tasks (not attempts) of one batch by state, from the appliance's records. */
struct nl_farm_tcounts {
	uint32_t tasks;                     /**< tasks the appliance has a record of */
	uint32_t n[NL_FARM_T_MAX];          /**< per enum nl_farm_tstate (n[0] unused) */
};

struct nl_msg_status {
	uint64_t req_id;
	uint64_t submit_id;
	uint32_t known;      /**< 1 when the appliance has counters for it */
	struct nl_farm_counts c;
	uint8_t has_tasks;   /**< #33: t follows (appended; older appliances: 0) */
	struct nl_farm_tcounts t;
};

/** #33: CANCEL a whole batch (all = 1) or its task `index`. */
struct nl_msg_cancel {
	uint64_t req_id;
	uint64_t submit_id;                 /**< 1..2^32-1 */
	uint32_t index;
	uint8_t all;
};

/** #33: the answer to a CANCEL (each task's own final answer goes to its submitter). */
struct nl_msg_cancelled {
	uint64_t req_id;
	uint64_t submit_id;
	uint8_t known;                      /**< 0: no such batch (or another principal's) */
	uint32_t withdrawn;                 /**< queued tasks withdrawn */
	uint32_t killed;                    /**< running tasks whose sub-tasks were sent KILL */
};

/** #33: ask for the records of a batch's tasks of index >= from (at most max). */
struct nl_msg_tasks_q {
	uint64_t req_id;
	uint64_t submit_id;
	uint32_t from;
	uint16_t max;                       /**< 1..NL_FARM_TASKS_MAX */
};

/** One task's record. */
struct nl_farm_trec {
	uint32_t index;
	uint8_t state;                      /**< enum nl_farm_tstate */
	uint8_t attempts;                   /**< the submitter's attempt numbers seen, highest */
	int32_t status;                     /**< exit status of the last run (-1: none) */
	uint32_t worker_id;
	uint16_t mach;                      /**< worker-local machine index */
	uint32_t queue_ms;                  /**< accepted to dispatched, plus queued on the worker */
	uint32_t run_ms;                    /**< the command's run time */
};

struct nl_msg_tasks {
	uint64_t req_id;
	uint64_t submit_id;
	uint8_t known;
	uint8_t n;                          /**< 0..NL_FARM_TASKS_MAX */
	uint8_t more;                       /**< 1: ask again from next */
	uint32_t next;
	struct nl_farm_trec rec[NL_FARM_TASKS_MAX];
};

/** Where a farm task ran (sent just before its COMPLETE). */
struct nl_msg_taskinfo {
	uint64_t task_id;
	uint32_t worker_id;  /**< worker of sub-task 0's (last) machine */
	uint32_t slot;       /**< appliance machine id of sub-task 0 */
	uint16_t mach;       /**< worker-local machine index */
	uint16_t n_split;
	uint32_t disp_us;    /**< ingress to sub-task 0's (last) DISPATCH at the appliance [us] */
	uint32_t run_us;     /**< that DISPATCH to the task's end [us] */
	/* #33, appended (an older appliance's 32-byte body decodes as has_end = 0) */
	uint8_t has_end;
	uint8_t state;       /**< enum nl_done_state of its worst sub-task (0 exited, 1 timeout,
			      *   2 cancelled, 3 could not start, 4 memory limit) */
	uint32_t run_ms;     /**< the command's run time on the worker (longest sub-task) */
	uint32_t queue_ms;   /**< queued at the appliance and on the worker before it started */
	uint32_t cpu_ms;     /**< CPU time, all sub-tasks */
	uint32_t mem_kib;    /**< peak memory (largest sub-task) */
};

/** End one sub-task (issue #33): the worker kills its whole cgroup (or process group) if it
 * runs, withdraws it if queued, and answers DONE state NL_DONE_CANCELLED; a KILL for a
 * sub-task it does not hold is counted and not answered. */
struct nl_msg_kill {
	uint64_t task_id;
	uint32_t token;      /**< the DISPATCH's token */
	uint32_t mach;       /**< worker-local machine index < NL_PROTO_MAX_MACH */
	uint16_t sub;        /**< sub-task index < NL_PROTO_MAX_SPLIT */
	uint8_t reason;      /**< NL_KILL_CANCEL */
};

/** A DONE received (issue #34, docs/protocol.md "DONE_ACK"): the appliance answers every
 * DONE it takes in (one that settles a sub-task, a duplicate and a stale one alike) with the
 * DONE's own task id, token and sub-task, sent to the DONE's source address; the worker
 * resends a DONE not acknowledged so (tools/worker/nl_wpend.h), so that one lost datagram
 * does not leave a task without its answer. */
struct nl_msg_done_ack {
	uint64_t task_id;
	uint32_t token;      /**< the DONE's token */
	uint16_t sub;        /**< sub-task index < NL_PROTO_MAX_SPLIT */
};

/** Decoded task-farm messages (member of struct nl_msg's union). */
union nl_msg_farm {
	struct nl_msg_cmds cmds;
	struct nl_msg_machad machad;
	struct nl_msg_register reg;
	struct nl_msg_registered regd;
	struct nl_msg_fsubmit fsubmit;
	struct nl_msg_status_q status_q;
	struct nl_msg_status status;
	struct nl_msg_taskinfo taskinfo;
	struct nl_msg_cancel cancel;
	struct nl_msg_cancelled cancelled;
	struct nl_msg_tasks_q tasks_q;
	struct nl_msg_tasks tasks;
	struct nl_msg_kill kill;
	struct nl_msg_done_ack done_ack;
};

/** @return true for a type of the task-farm range (24..39; an unassigned one decodes as
 * bad_type). @par Context Pure. */
static inline bool
nl_farm_type(unsigned int type)
{
	return type >= NL_FARM_TYPE_MIN && type <= NL_FARM_TYPE_MAX;
}

/** Printable task state ("queued", "running", "ok", ...; "?" outside). @par Context Pure. */
const char *nl_farm_tstate_name(unsigned int state);

/**
 * A valid command name: 1..NL_FARM_NAME_MAX bytes of [A-Za-z0-9_.+-].
 * @param s    Name bytes. @param len  Their count.
 * @return true when valid. @par Context Pure.
 */
bool nl_farm_name_ok(const char *s, size_t len);

/**
 * Decode the body of a task-farm message (called by nl_proto.c after the header checks).
 *
 * @param type  24..30.
 * @param body  Bytes after the 8-byte header.
 * @param len   Body length [bytes] (trailer excluded).
 * @param out   Output: out->u.farm.
 * @return NL_PROTO_OK (0), or the enum nl_proto_err value (E_TRUNC, E_OVERSIZE, E_FIELD,
 *         E_TYPE) as an int.
 * @par Context  Pure; any thread.
 */
int nl_farm_decode_body(unsigned int type, const uint8_t *body, size_t len, void *out);

/**
 * Encode the body of a task-farm message (called by nl_proto_encode()).
 *
 * @param type  24..30.
 * @param f     The message (union nl_msg_farm).
 * @param p     Output (after the header).
 * @param cap   Room [bytes].
 * @return body bytes written; -EINVAL for a bad field; -ENOSPC.
 * @par Context  Pure; any thread.
 */
int nl_farm_encode_body(unsigned int type, const union nl_msg_farm *f, uint8_t *p, size_t cap);

/**
 * nl_farm_encode_body() for nl_proto_encode()'s switch: encode at p, cap bytes of room.
 * @return the end of the body; NULL for a type outside 24..31, a bad field or no room.
 * @par Context  Pure; any thread.
 */
uint8_t *nl_farm_encode_at(unsigned int type, const union nl_msg_farm *f, uint8_t *p,
			   size_t cap);

/** Printable name of a task-farm type ("?" outside 24..30). @par Context Pure. */
const char *nl_farm_type_name(unsigned int type);

/** Printable REGISTERED status ("ok", "unknown_command", ...). @par Context Pure. */
const char *nl_farm_reg_name(unsigned int status);

#ifdef __cplusplus
}
#endif
#endif /* NL_PROTO_FARM_H */
