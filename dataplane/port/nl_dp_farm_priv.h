/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The task-farm state of port mode (nl_dp_farm.c, its telemetry in nl_dp_farm_tel.c): see the
 * top of nl_dp_farm.c. Private to those two files.
 */
#ifndef NL_DP_FARM_PRIV_H
#define NL_DP_FARM_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_dp_farm.h"
#include "nl_dp_farm_rec.h"
#include "nl_farm_dd.h"
#include "nl_match.h"
#include "nl_match_cad.h"

#define FARM_NAMES 64u     /* distinct command names */
#define FARM_HANDLES 1024u /* registered Requirements/Rank handles (handle 0 unused) */
#define FARM_PR_HANDLES 128u /* #35: new handles one principal may register (the operator: all) */
#define FARM_SUBMITS 4096u /* submit ids with counters (power of two) */
#define FARM_DONE_KEEP 16384u /* ended FSUBMITs remembered for resends (power of two) */

struct farm_worker {
	uint16_t cmd[FARM_NAMES]; /* local command id per name id, 0 = not offered */
};

struct farm_ad {
	struct nl_match_mad *ad;
	char *text;
};

struct farm_handle {
	uint32_t name;             /* name id */
	bool has_rank;             /* #33: a Rank orders its machines: no pull (queues) */
	struct nl_match_expr *x;
	char *req, *rank;          /* texts, for de-duplication */
};

struct farm_sub {
	uint64_t id;               /* submit id, 0 = free */
	uint64_t last_tsc;
	struct nl_farm_counts c;   /* written by the I/O lcore, read relaxed by telemetry */
	uint32_t owner;            /* #35: the principal of its first FSUBMIT (io->principal) */
	bool owned;                /* owner set */
	bool cancelled;            /* #33: a CANCEL of the whole batch came */
};

/* #33: a farm sub-task waiting at the appliance for an idle slot (nl_dp_farm_occ.c) */
struct farm_park {
	uint32_t aux;
	uint16_t sub;
	uint64_t task_id;
};

/* #33: what the DONEs of a task said (nl_dp_farm_ctl.c) */
struct farm_end {
	uint8_t state;             /* enum nl_done_state: the first not EXITED, CANCELLED wins */
	uint8_t n_done;
	uint32_t run_ms, queue_ms, cpu_ms, mem_kib;
};

/* The replies of an ended FSUBMIT, sent again to a resend. */
struct farm_done {
	uint64_t task_id;          /* 0 = unused */
	uint32_t ip;               /* its last submitter's address */
	uint16_t port;
	uint32_t principal;        /* #34: only its principal's resends are answered */
	bool has_info;
	struct nl_msg_taskinfo ti;
	struct nl_msg_reply rep;   /* COMPLETE or REJECT */
	uint8_t type;
};

struct nl_dp_farm {
	char names[FARM_NAMES][NL_FARM_NAME_MAX + 1];
	unsigned int n_names;
	struct farm_worker wk[MAX_WORKERS];
	struct farm_ad *ad;        /* [n_mach] */
	struct farm_handle hd[FARM_HANDLES];
	unsigned int n_h;          /* next handle (1..) */
	uint16_t pr_h[NL_PRINCIPAL_MAX]; /* #35: handles each principal registered first */
	uint32_t *h_by_aux;        /* [n_meta] */
	uint64_t *disp_tsc;        /* [n_meta] last DISPATCH of sub-task 0 */
	uint32_t *disp_slot;       /* [n_meta] its machine */
	uint32_t cur_h;            /* handle of the FSUBMIT being admitted, 0 = none */
	struct nl_match_tab *tab;  /* published */
	struct farm_sub sub[FARM_SUBMITS];
	uint64_t n_rebuilds;
	/* resends (see the top of the file) */
	struct nl_farm_dd_tab dd;  /* cap: power of two >= 2 (n_meta + FARM_DONE_KEEP) */
	struct farm_done *done;    /* [FARM_DONE_KEEP] ring */
	uint32_t done_next;
	uint64_t *inf_tid;         /* [n_meta] task id of the in-flight entry of a pool slot, 0 */
	uint32_t *inf_ip;          /* [n_meta] its submitter address */
	uint16_t *inf_port;
	uint8_t cur_attempt;       /* of the FSUBMIT being admitted */
	uint32_t cur_aux;          /* its pool index (nl_dp_farm_task) */
	uint64_t n_resent;         /* resends answered without running (telemetry) */
	struct nl_msg_taskinfo last_ti; /* the TASKINFO just sent (stored with its COMPLETE) */
	uint64_t last_ti_id;
	/* #33: placement by real occupancy (nl_dp_farm_occ.c) */
	uint32_t *occ;             /* [n_mach] farm sub-tasks dispatched and not done */
	double *occ_est_sum;       /* [n_mach] their run-time estimates [ns] */
	uint64_t *occ_head_tsc;    /* [n_mach] start of the one running now */
	uint64_t *occ_rep_tsc;     /* [n_mach] the worker's last LOAD report (0 = none) */
	uint64_t *occ_rep_ns;      /* [n_mach] its backlog_ns */
	uint8_t *occ_touched;      /* [n_mach] a farm sub-task was ever dispatched there */
	double *occ_est_aux;       /* [n_pool] the estimate a task's sub-tasks were booked with */
	double name_est_ns[FARM_NAMES]; /* mean run time per command name [ns], 0 = none yet */
	uint64_t occ_last_poll;
	double mean_speed;         /* mean nominal speed of the live slots [instr/s] */
	struct farm_park *park;    /* [park_cap] ring: sub-tasks waiting for an idle slot */
	uint32_t park_cap, park_head, n_park;
	bool pull_busy;
	nl_dp_farm_dispatch_fn dispatch_fn; /* the port's send of a DISPATCH */
	nl_dp_farm_withdraw_fn withdraw_fn; /* the port's end of a withdrawn sub-task */
	/* #33: the user's view and control (nl_dp_farm_ctl.c) */
	struct nl_farm_rec *rec;   /* records on disk, their thread */
	uint32_t *tl_ms;           /* [n_pool] wall-clock limit of the task [ms], 0 = none */
	struct farm_end *end;      /* [n_pool] */
	uint8_t *withdraw;         /* [n_pool] 0, or the REJECT reason it was withdrawn for
				    * before dispatch (or KILLed): cancelled, shutdown (#34) */
	uint32_t cur_tl_ms;        /* of the FSUBMIT being admitted */
	uint64_t cur_tid;
	/* #34: the journal read back at start (nl_dp_farm_jrnl.c) */
	uint8_t *att;              /* [n_pool] the FSUBMIT's attempt, put in its DISPATCHes */
	struct farm_jr *jr;        /* [jr_cap] open addressing by task id */
	uint32_t jr_cap, jr_n;
	uint32_t *pin_w;           /* [n_pool] worker id + 1 of the journal's run, 0 = none */
	uint16_t *pin_m;           /* [n_pool] its worker-local machine */
	uint32_t cur_pin_w;        /* of the FSUBMIT being admitted */
	uint16_t cur_pin_m;
	uint64_t pin_until_tsc;    /* pinned runs wait this long for their worker to rejoin */
	uint32_t n_h_restored;     /* handles 1..n_h_restored-1 came from the journal */
	uint64_t n_jr_answered, n_jr_pinned, n_jr_unpinned; /* telemetry */
	struct farm_held *held;    /* [FARM_HELD] ring: DISPATCHes (and KILLs behind them) held
				    * until their record is on disk (write-ahead) */
	uint32_t held_head, n_held;
	uint64_t n_held_full;      /* sent without waiting: the ring was full (telemetry) */
	/* #34: tasks of the journal not ended, admitted again without their submitter */
	struct farm_rq *rq;        /* [rq_n], task_id 0 = done */
	uint32_t rq_n, rq_left, rq_cur, rq_last;
	uint64_t rq_next_tsc;      /* the next look at the list */
	uint16_t last_reject;      /* reason of the last REJECT at admission, 0 = none */
	uint64_t n_jr_requeued, n_jr_requeue_refused; /* telemetry */
};

/* #34: a task of the journal to admit again (its FSUBMIT as the journal kept it) */
struct farm_rq {
	uint64_t task_id;
	uint64_t retry_tsc;        /* not before */
	struct nl_farm_rec_sub q;
};

#define FARM_HELD 8192u

/* #34: a frame to a worker held until the journal has what it follows. */
struct farm_held {
	uint8_t type;              /* NL_MSG_DISPATCH or NL_MSG_KILL */
	union {
		struct nl_msg_dispatch d;
		struct nl_msg_kill k;
	} u;
	uint32_t principal;
	uint32_t ip;
	uint16_t port;
	uint8_t mac[6];
	uint64_t mark;             /* nl_farm_rec_mark() when it was held */
};

/* #34: a task of the journal, read back at start. */
/* #34: where a later sub-task (>= 1) of a task of the journal not ended was dispatched */
struct farm_jr_sub {
	uint32_t w1;               /* its worker's id + 1; 0 = pinned already, or given up */
	uint16_t sub, mach;
};

struct farm_jr {
	uint64_t task_id;          /* 0 = empty */
	struct farm_jr_sub *subs;  /* #34: [n_subs] (malloc'd), NULL = none */
	uint16_t n_subs;
	uint8_t state;             /* enum nl_farm_tstate; 0 = used up (a tombstone) */
	uint8_t attempt;
	int32_t status;
	uint32_t worker_id;
	uint16_t mach;
	uint32_t queue_ms, run_ms, cpu_ms, mem_kib;
};

/**
 * Answer /nlevel/submits and /nlevel/farm behind the telemetry gate (nl_dp_tel_register()):
 * the handlers read the farm of the engine the gate is open for (nl_dp_tel_dp(), relaxed
 * loads of the counters); nl_port_serve() closes the gate before the farm state is freed.
 * @return 0; -ENOSPC, -EINVAL or -ENOENT from nl_dp_tel_register().
 * @par Context  The I/O lcore, at nl_dp_farm_init(); not on a dispatch path.
 * @par Source   DPDK telemetry library (rte_telemetry_register_cmd()); issue #15.
 */
int nl_dp_farm_tel_attach(void);

/**
 * Allocate (init) or free (fini) the occupancy state of n_mach slots and n_pool tasks.
 * @return 0; -1 (no memory; nothing kept). @par Context The I/O lcore, start and stop.
 * @par Source issue #33 item 1 (nl_dp_farm_occ.c).
 */
int nl_dp_farm_occ_init(struct nl_dp_farm *f, uint32_t n_mach, uint32_t n_pool);
void nl_dp_farm_occ_fini(struct nl_dp_farm *f);

/**
 * A farm sub-task of t (command name id `name`) was dispatched to slot m: it occupies m until
 * its DONE (nl_dp_farm_done()). @par Context The I/O lcore (nl_dp_farm_dispatch()).
 * @par Source issue #33 item 1; HTCondor manual "Claiming and Activation" (a claimed slot).
 */
void nl_dp_farm_occ_dispatch(struct nl_port *io, const struct nl_task *t, uint32_t name, uint32_t m);

/**
 * The model work [instr] to give a farm task of command name `name` at admission: its mean
 * run time so far (1 s before the first DONE) at the slots' mean speed, in the booking
 * scale of port mode (--work-scale), so that the model booking of the leaf managers equals
 * the estimate. 1e6 when there is no booking scale.
 * @par Context The I/O lcore (nl_dp_farm_frame()). @par Source issue #33 item 1.
 */
double nl_dp_farm_instr(const struct nl_port *io, uint32_t name);

/**
 * Slot m's worker left: it holds nothing any more (its sub-tasks are dispatched again).
 * @par Context The I/O lcore (nl_dp_farm_worker_gone()).
 */
void nl_dp_farm_slot_gone(struct nl_port *io, uint32_t m);

/*
 * #34, the journal (nl_dp_farm_jrnl.c; docs/taskfarm.md "Exactly once"), on the I/O lcore:
 *  init    read the records back: handles registered again under their numbers (restore:
 *          nl_dp_farm.c's registration, 0 or -1 refused and logged), tasks not
 *          ended and the last ended ones kept for resends (-errno: no memory);
 *  resend  an FSUBMIT (attempt != 0) of a task the journal has: ended -> answered from it
 *          (true); running on a worker -> admitted, pinned to that worker's machine (the
 *          worker answers a run it holds or ended from its own record); queued -> admitted;
 *  admitted  the task entered the pool: its journal entry is used up (not ended ones);
 *  pin     sub-task 0 of a pinned task: *m = its machine (1), or wait for its worker to
 *          rejoin (2: parked) until pin_until_tsc, then placed as any other (0);
 *  pin_sub the same for sub-task sub >= 1 of task t, pinned when the journal's fdisp table
 *          held where it ran and t is the same attempt (0 when not pinned);
 *  handle  a handle registered: journaled.
 */
typedef int (*nl_dp_farm_restore_fn)(struct nl_port *io, uint32_t h, const char *name,
				     const char *req, const char *rank, uint32_t principal);
int nl_dp_farm_jrnl_init(struct nl_port *io, nl_dp_farm_restore_fn restore);
void nl_dp_farm_jrnl_fini(struct nl_dp_farm *f);
bool nl_dp_farm_jrnl_resend(struct nl_port *io, const struct nl_msg_fsubmit *fs,
			    const struct nl_frame_addr *a);
void nl_dp_farm_jrnl_admitted(struct nl_dp_farm *f, uint64_t task_id);
int nl_dp_farm_jrnl_pin(struct nl_port *io, uint32_t aux, uint32_t *m);
int nl_dp_farm_jrnl_pin_sub(struct nl_port *io, const struct nl_task *t, unsigned int sub,
			    uint32_t *m);
void nl_dp_farm_jrnl_handle(struct nl_port *io, uint32_t h);
/* release: send the held frames whose records are on disk, in order (how many) */
unsigned int nl_dp_farm_jrnl_release(struct nl_port *io);
/* stop: the held KILLs go, the held DISPATCHes (their tasks answered already) do not */
void nl_dp_farm_jrnl_stop(struct nl_port *io);

/* Resent FSUBMITs (nl_dp_farm_dd.c; see the top of nl_dp_farm.c). The I/O lcore. */
void nl_dp_farm_dd_forget_aux(struct nl_dp_farm *f, uint32_t aux);
bool nl_dp_farm_dd_resend(struct nl_port *io, const struct nl_msg_fsubmit *fs,
			  const struct nl_frame_addr *a);
void nl_dp_farm_dd_ended(struct nl_dp_farm *f, uint32_t aux, const struct nl_msg *m,
			 uint32_t principal);
void nl_dp_farm_dd_fini(struct nl_dp_farm *f);
int nl_dp_farm_dd_init(struct nl_dp_farm *f, uint32_t n_meta);

/* nl_dp_farm_occ.c's halves of nl_dp_farm_done() and nl_dp_farm_poll() (nl_dp_farm.h): the
 * slot's occupancy at a DONE; occupied slots' estimates as time passes (how many changed). */
void nl_dp_farm_occ_done(struct nl_port *io, const struct nl_task *t, uint32_t m,
			 const struct nl_msg_done *d);
unsigned int nl_dp_farm_occ_poll(struct nl_port *io);

/*
 * nl_dp_farm_ctl.c (issue #33 items 3 and 5), called from nl_dp_farm.c at the matching
 * points; all on the I/O lcore:
 *  init/fini        per-task arrays, the records (-errno: --state-dir not usable, logged);
 *  task             a submission enters pool slot aux: its limit, a pending batch CANCEL;
 *  accept           ACCEPT sent: record queued;  dispatch: DISPATCH's time_limit_ms, record
 *                   running (sub-task 0);  done: a DONE's state and times;
 *  taskinfo         the end record appended to TASKINFO;  end: record the final answer m
 *                   (ti: the TASKINFO sent with a COMPLETE, else NULL);
 *  status_q/tasks_q/cancel: the client's questions;  poll: send the records thread's answers.
 */
int nl_dp_farm_ctl_init(struct nl_port *io);
void nl_dp_farm_ctl_fini(struct nl_dp_farm *f);
void nl_dp_farm_ctl_task(struct nl_port *io, uint32_t aux, const struct farm_sub *s);
void nl_dp_farm_ctl_accept(struct nl_port *io, uint64_t task_id, uint8_t attempt);
void nl_dp_farm_ctl_dispatch(struct nl_port *io, const struct nl_task *t, struct nl_msg_dispatch *d,
			     uint32_t worker_id);
void nl_dp_farm_ctl_done(struct nl_port *io, const struct nl_task *t, const struct nl_msg_done *d);
void nl_dp_farm_ctl_taskinfo(struct nl_port *io, uint32_t aux, struct nl_msg_taskinfo *ti);
void nl_dp_farm_ctl_end(struct nl_port *io, uint32_t aux, uint64_t task_id, const struct nl_msg *m,
			const struct nl_msg_taskinfo *ti);
void nl_dp_farm_ctl_status_q(struct nl_port *io, const struct nl_msg_status_q *q,
			     const struct nl_frame_addr *a, const struct farm_sub *s);
void nl_dp_farm_ctl_tasks_q(struct nl_port *io, const struct nl_msg_tasks_q *q,
			    const struct nl_frame_addr *a);
/* cancel: s is the batch when the frame's principal may steer it (#35), else NULL (answered
 * unknown); the caller pulls afterwards (parked sub-tasks of it end then, REJECT cancelled) */
void nl_dp_farm_ctl_cancel(struct nl_port *io, const struct nl_msg_cancel *c,
			   const struct nl_frame_addr *a, struct farm_sub *s);
unsigned int nl_dp_farm_ctl_poll(struct nl_port *io);

#endif /* NL_DP_FARM_PRIV_H */
