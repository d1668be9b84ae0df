/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The task farm's records on disk (issue #33 item 5; docs/taskfarm.md "Records"): one row per
 * farm task (batch, index) in an SQLite database in WAL mode under --state-dir, written by a
 * records thread of its own (never the I/O lcore, never a dispatch lcore) from a ring the I/O
 * lcore fills; --status and --status --tasks are answered from it, so they answer for
 * finished batches after hours and after a restart. Queries go through the same ring, so an
 * answer reflects every event queued before it; the answers come back on a second ring for
 * the I/O lcore to send (only it owns the port). Not a public header.
 */
#ifndef NL_DP_FARM_REC_H
#define NL_DP_FARM_REC_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_proto.h"

struct nl_port;
struct nl_farm_rec;

/** Record kinds (ring events). */
enum nl_farm_rec_kind {
	NL_REC_ACCEPT = 1,   /**< accepted: queued (attempt, owner principal; #34: sub, the
			      *   FSUBMIT to admit again after a restart) */
	NL_REC_DISPATCH,     /**< sub-task `subtask` dispatched (worker, mach); sub-task 0's
			      *   makes the task running */
	NL_REC_END,          /**< final answer sent: state, status, times */
	NL_REC_STATUS_Q,     /**< answer a STATUS_Q (its in-memory counters in m) */
	NL_REC_TASKS_Q,      /**< answer a TASKS_Q */
	NL_REC_HANDLE,       /**< #34: a handle registered (worker_id = handle, principal, text
			      *   = "name\0req\0rank", heap, freed by the records thread) */
};

/**
 * #34: an accepted FSUBMIT as the journal keeps it until the task ends (table fsubmit): what
 * a restarted appliance needs to admit it again without its submitter (nl_dp_farm_jrnl.c).
 */
struct nl_farm_rec_sub {
	uint32_t handle;       /**< REGISTERED handle (the journal's handle table keeps it) */
	uint32_t tl_ms;        /**< wall-clock limit [ms], 0 = none */
	uint64_t need;         /**< resource vector (bit per resource) */
	uint64_t data_bits;    /**< data to move [bits] */
	uint64_t client_ts_ns; /**< the submitter's time stamp, echoed in replies */
	uint16_t n_split;      /**< sub-tasks */
	uint8_t attempt;       /**< the submitter's attempt, 0 = not given */
	uint8_t args_len;
	uint8_t args[NL_PROTO_MAX_ARGS];
	uint32_t principal;    /**< owner (NL_PRINCIPAL_NONE: the site key) */
	uint32_t ip;           /**< the submitter's address (network order): answers go there */
	uint16_t port;         /**< (network order) */
	uint8_t mac[6];
};

/** One ring event (filled by the I/O lcore). */
struct nl_farm_rec_ev {
	uint8_t kind;
	uint16_t subtask;     /**< DISPATCH: the sub-task (#34: every one is recorded) */
	uint8_t state;        /**< END: enum nl_farm_tstate */
	uint8_t attempt;
	uint16_t mach;
	uint32_t principal;   /**< ACCEPT: owner; queries: the asker (NL_PRINCIPAL_NONE: all) */
	uint64_t task_id;     /**< (batch << 32) | index; queries: batch << 32 */
	int32_t status;
	uint32_t worker_id;
	uint32_t queue_ms, run_ms, cpu_ms, mem_kib;
	uint64_t t_ns;        /**< CLOCK_REALTIME */
	/* queries */
	uint64_t req_id;
	uint32_t from;
	uint16_t max;
	uint32_t ip;          /**< asker, network order */
	uint16_t port;
	uint8_t mac[6];
	struct nl_farm_counts c; /**< STATUS_Q: the batch's in-memory counters */
	uint8_t known;           /**< STATUS_Q: in memory */
	char *text;              /**< HANDLE: its texts (malloc'd; the records thread frees it) */
	struct nl_farm_rec_sub *sub; /**< #34, ACCEPT: the FSUBMIT (malloc'd, the records
				      *   thread frees it), NULL = not kept */
};

/** #34: a handle of the journal (nl_farm_rec_replay()). */
struct nl_farm_rec_handle {
	uint32_t h;            /**< its number, 1.. */
	uint32_t principal;    /**< who registered it (NL_PRINCIPAL_NONE: the site key) */
	const char *name, *req, *rank;
};

/** #34: a task of the journal (nl_farm_rec_replay()). */
struct nl_farm_rec_task {
	uint64_t task_id;      /**< (submit << 32) | index */
	uint8_t state;         /**< enum nl_farm_tstate */
	uint8_t attempt;       /**< the highest attempt accepted */
	int32_t status;
	uint32_t worker_id;    /**< RUNNING and ended: the worker of sub-task 0 (its --id) */
	uint16_t mach;         /**< its worker-local machine index */
	uint32_t queue_ms, run_ms, cpu_ms, mem_kib;
	bool has_sub;          /**< not ended, and its FSUBMIT was kept (schema 3): sub valid */
	struct nl_farm_rec_sub sub;
};

/** Callbacks of nl_farm_rec_replay() (ctx is the caller's). */
typedef void (*nl_farm_rec_handle_fn)(void *ctx, const struct nl_farm_rec_handle *h);
typedef void (*nl_farm_rec_task_fn)(void *ctx, const struct nl_farm_rec_task *t);
/** #34: where sub-task `sub` (>= 1) of a task of the journal not ended was dispatched. */
typedef void (*nl_farm_rec_disp_fn)(void *ctx, uint64_t task_id, uint16_t sub, uint32_t worker_id,
				    uint16_t mach);

/** An answer for the I/O lcore to send (heap; it frees it). */
struct nl_farm_rec_out {
	struct nl_msg m;
	uint32_t principal;
	uint32_t ip;
	uint16_t port;
	uint8_t mac[6];
};

/**
 * Open (create if missing) DIR/farm-IP_PORT.sqlite in WAL mode, creating DIR (mode 0750) if
 * missing, and start the records thread.
 * @param out  The records. @param dir  --state-dir. @param ip  The appliance's IPv4 (network
 * order) and @param udp_port  its UDP port: one database per appliance address.
 * @param full_sync  #34: synchronous = FULL (each pass's commit fsynced), else NORMAL.
 * @param err  Message on failure [errlen].
 * @return 0; -errno (dir not creatable / not writable, SQLite error: -EIO), err says which.
 * @par Context The I/O lcore, start-up. @par Source SQLite "Write-Ahead Logging"
 * (https://sqlite.org/wal.html); HTCondor's job_queue.log, Slurm's StateSaveLocation.
 */
int nl_farm_rec_open(struct nl_farm_rec **out, const char *dir, uint32_t ip, uint16_t udp_port,
		     bool full_sync, char *err, size_t errlen);

/**
 * #34: read the journal back at start: every registered handle in order of its number, every
 * task not ended (QUEUED or RUNNING), and the max_ended tasks that ended last (newest first),
 * then where each sub-task after the first of a task not ended was dispatched (table fdisp).
 * @param r  Records just opened. @param on_h, on_t, on_d  Called per handle / task /
 * dispatched later sub-task (any NULL: skipped). @param ctx  Their first argument. @param max_ended  Bound on ended tasks.
 * @return the number of tasks passed; -EIO (an SQLite error; what was passed stays valid).
 * @par Context The I/O lcore, start-up, before the first nl_farm_rec_put() (the records
 * thread touches the database only for queued events). @par Source issue #34 item 1.
 */
int nl_farm_rec_replay(struct nl_farm_rec *r, nl_farm_rec_handle_fn on_h, nl_farm_rec_task_fn on_t,
		       nl_farm_rec_disp_fn on_d, void *ctx, uint32_t max_ended);

/** Stop the thread after it wrote every queued event; close. NULL accepted. @par Context I/O lcore. */
void nl_farm_rec_close(struct nl_farm_rec *r);

/**
 * Queue an event. @return true; false when the ring is full (counted: dropped()).
 * @par Context The I/O lcore only (single producer).
 */
bool nl_farm_rec_put(struct nl_farm_rec *r, const struct nl_farm_rec_ev *ev);

/**
 * Next answer to send, or NULL. The caller frees it. @par Context The I/O lcore only.
 */
struct nl_farm_rec_out *nl_farm_rec_answer(struct nl_farm_rec *r);

/**
 * #34, write-ahead: the count of events queued so far (a mark: the events up to the last
 * nl_farm_rec_put()), and whether every event up to a mark is committed to disk.
 * @par Context The I/O lcore only (mark, durable). @par Source SQLite WAL with synchronous =
 * FULL (https://sqlite.org/pragma.html#pragma_synchronous): a committed pass survives a crash
 * of the process and of the host.
 */
uint64_t nl_farm_rec_mark(const struct nl_farm_rec *r);
bool nl_farm_rec_durable(const struct nl_farm_rec *r, uint64_t mark);

/** Events dropped (ring full) and written so far. @par Context Any thread (relaxed). */
uint64_t nl_farm_rec_dropped(const struct nl_farm_rec *r);
uint64_t nl_farm_rec_written(const struct nl_farm_rec *r);

#endif /* NL_DP_FARM_REC_H */
