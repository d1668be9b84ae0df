/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal state of the live engine (nl_dp.h), shared by nl_dp.c (engine, emulation),
 * nl_dp_port.c (port I/O, workers) and nl_dp_tel.c (telemetry). Not a public header.
 */
#ifndef NL_DP_PRIV_H
#define NL_DP_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <urcu/urcu-qsbr.h>

#include "nl_dp.h"

/* Task flags (struct nl_task.flags, engine-private). */
#define NL_TF_LEFT_MASK 0xffffu  /* sub-tasks not finished yet */
#define NL_TF_FAILED (1u << 16)  /* refused or lost after acceptance */
#define NL_TF_DEAD (1u << 17)    /* returned to the pool by a teardown drain */
#define NL_TF_REASON_SHIFT 24    /* enum nl_reject_reason of a failure */

/* A message in a manager inbox (ring element, 16 bytes). */
struct nl_dp_msg {
	struct nl_task *t;
	double stamp_vt; /* emulated: when it reaches the manager; native: ingress time */
};

/* A sub-task on its way to a machine (ring element, 32 bytes). */
struct nl_dp_sub {
	struct nl_task *t;
	double arrive_vt; /* when it reaches the machine (emulated) */
	uint64_t seq;     /* booking sequence number of manager mgr (nl_load.h I4) */
	uint32_t mach;
	uint16_t mgr;
	uint16_t sub;
};

/* Per-task data the 64-byte task has no room for (index = task->aux). */
struct nl_dp_meta {
	struct nl_task *task;  /* the task this meta belongs to (set at pool creation) */
	uint8_t active;        /* port mode: sub-tasks out on workers */
	uint8_t pad[7];
	uint64_t client_ts_ns;
	uint64_t ingress_tsc;
	uint32_t client_ip;    /* network order */
	uint16_t client_port;  /* host order */
	uint16_t cmd_id;
	uint8_t client_mac[6];
	uint8_t args_len;
	uint8_t n_done;
	int32_t status;        /* first non-zero exit status */
	uint64_t done_mask;    /* sub-tasks done (port mode) */
	uint32_t sub_mach[NL_TASK_MAX_SPLIT]; /* machine of each sub-task (port mode) */
	uint8_t args[NL_PROTO_MAX_ARGS];
};

/* A machine generation: the machine table the policies see, published under RCU (I3). */
struct nl_dp_gen {
	struct nl_sched *s;
	struct nl_machine *mach; /* [n_mach] */
	uint8_t *alive;          /* [n_mach] */
	unsigned int n_mach;
	uint64_t id;
	struct rcu_head rcu;
};

struct nl_dp_lcore;

struct nl_dp_mgr {
	uint32_t id;
	unsigned int lcore;
	struct nl_dp_lcore *owner;  /* lcore that polls it */
	uint32_t lc_idx;            /* index in owner->mgr[] and bit in owner->pend[] */
	struct rte_ring *inbox;
	struct nl_load_view view;
	bool has_cur;
	struct nl_dp_msg cur;
	double cur_done_vt;
	double busy_until_vt;
	double next_measure_vt;
	/* statistics: written by the owner lcore, read by telemetry (relaxed) */
	uint64_t tasks_in;
	uint64_t tasks_out;
	uint64_t fwd_out;
	uint64_t dispatched;
	uint64_t refused;
	uint64_t busy_ns;         /* emulated: service time booked [ns of wall scale] */
	double busy_vt;           /* owner-only */
	uint64_t svc_hist[NL_DP_HIST_BUCKETS]; /* decide() cost [ns], log2 buckets */
} __rte_cache_aligned;

struct nl_dp_lcore {
	struct nl_dp *dp;
	unsigned int lcore_id;
	struct nl_dp_mgr *mgr[4096];
	unsigned int n_mgr;
	/* Pending bits, one per manager of this lcore: set (release) by whoever enqueued into
	 * its inbox, taken (acquire exchange) by this lcore, which polls only those managers. */
	uint64_t pend[4096 / 64];
	bool ingress;                 /* runs the generator */
	struct nl_engine eng;         /* ctx = this struct */
	struct nl_dp_gen *gen;        /* current generation, valid until the next QS */
	struct nl_dp_mgr *at;         /* manager being served */
	uint64_t hk_mask;
	double now_vt;                /* this lcore's emulated clock (see nl_dp_lcore_main) */
	uint64_t clock_mvt;           /* now_vt in 1/1000 u.t., for other threads (relaxed) */
	/* generator */
	struct nl_rng rng;
	double next_arrival_vt;
	uint64_t generated;
	uint64_t accepted;
	uint64_t rejected_ingress;
	/* native latency statistics */
	uint64_t lat_hist[64 * 8];    /* 8 sub-buckets per power of two [ns] */
	uint64_t lat_n;
	double lat_sum_ns;
	uint64_t dispatched_tasks;
} __rte_cache_aligned;

struct nl_dp_heap_ent {
	double fin_vt;
	struct nl_task *t;
	uint32_t mach;
	uint32_t pad;
};

struct nl_dp_worker;

struct nl_dp {
	struct nl_model_cfg m;
	struct nl_dp_opts o;
	struct nl_sched_params sp;
	struct nl_machine *mach0;     /* configured machines */
	unsigned int n_mach;
	struct nl_dp_gen *gen_rcu;    /* RCU root (I3) */
	struct nl_load_table *load;
	struct nl_dp_mgr *mgr;
	unsigned int n_mgr;
	struct rte_mempool *pool;
	struct nl_dp_meta *meta;      /* [pool_size] */
	unsigned int n_meta;
	struct rte_ring *sub_ring;    /* managers -> control (sub-tasks) */
	struct rte_ring *fin_ring;    /* managers -> control (refused tasks) */
	struct nl_dp_lcore *lc;       /* [n_lc] */
	unsigned int n_lc;
	/* clock */
	uint64_t tsc0;
	double vt_per_cyc;
	double cyc_per_ns;
	/* run parameters (emulated) */
	double lambda;
	double horizon_vt;
	double warmup_vt;
	uint64_t bg_seed;
	uint64_t gen_done;            /* generator finished (relaxed flag) */
	uint64_t run_quit;            /* lcores stop (relaxed flag) */
	/* control-lcore state (I3) */
	struct nl_dp_heap_ent *heap;
	size_t heap_n, heap_cap;
	double *resp;
	size_t n_resp, cap_resp;
	double sum_hops, sum_wait;
	uint64_t completed, failed, rejected_policy, redispatched;
	uint64_t drops[NL_PROTO_E_MAX];
	uint64_t rx_msgs[NL_MSG_TYPE_MAX];
	double last_publish_vt;
	bool ctl_dirty;               /* load table changed since the last publish */
	/* port mode */
	struct nl_dp_worker *workers;
	unsigned int n_workers;
	uint8_t mac[6];
	uint64_t tx_frames, rx_frames, tx_fail;
	uint64_t gen_next_id;
	uint64_t io_accepted;         /* port mode: SUBMITs accepted by the I/O lcore */
	uint64_t io_rejected;         /* port mode: SUBMITs answered REJECT at ingress */
	struct rte_ring *req_ring;    /* control requests from telemetry (machine set) */
	double work_scale_us;         /* port mode: wall us per model second (booking estimate) */
	double dur_scale;             /* vt per model second in managers' bookings */
	uint64_t stale_done;          /* DONEs for nothing outstanding (late, duplicate, forged) */
	uint64_t workers_joined;
	uint64_t workers_left;
};

/* A control request (telemetry -> control lcore). */
struct nl_dp_req {
	uint32_t mach;
	uint32_t alive;
	double speed_ips;
};

/*
 * Engine internals shared by nl_dp.c, nl_dp_port.c and nl_dp_tel.c (not public API).
 * Suffixes as everywhere: _st = the calling lcore owns the object, _ctl = control thread.
 */

/**
 * Current engine time: TSC since the run started, scaled to u.t. (ns_per_vt wall ns per u.t.
 * in emulated mode; 1 u.t. = 1 us in native and port modes).
 * @return now [u.t.]. @par Context Any lcore; reads the TSC, no memory written.
 */
double nl_dp_now_vt(const struct nl_dp *dp);

/**
 * Manager lcore main loop (STYLE.md shape): polls its managers in bursts, quiescent state in
 * the housekeeping block, exits when the run ends.
 * @param arg  struct nl_dp_lcore * owned by this lcore.
 * @return 0. @par Context The lcore launched with it (rte_eal_remote_launch).
 */
int nl_dp_lcore_main(void *arg);

/**
 * Account a task whose last sub-task finished at fin_vt (completed, or failed when flagged),
 * record its response time and return it to the mempool.
 * @par Context Control lcore only.
 */
void nl_dp_task_finish_ctl(struct nl_dp *dp, struct nl_task *t, double fin_vt);

/**
 * Publish a new machine generation (machines, alive flags, a fresh policy bound to them) with
 * rcu_assign_pointer; the old one is freed after a grace period (urcu_qsbr_call_rcu).
 * @param mach, alive  [n_mach] copied. @param alive  NULL = all alive.
 * @return 0, or -ENOMEM / the policy's -errno (nothing published).
 * @par Context Control thread; may allocate.
 */
int nl_dp_gen_publish_ctl(struct nl_dp *dp, const struct nl_machine *mach, const uint8_t *alive,
			  unsigned int n_mach);

/**
 * Admit a new task at its entry manager (policy entry(), rnd uniform 64-bit).
 * @param stamp_vt  Arrival time [u.t.].
 * @return 0; -ENOBUFS when the entry inbox is full (the caller answers REJECT overload).
 * @par Context Ingress lcore, QSBR-online; no allocation, no lock.
 */
int nl_dp_ingress_st(struct nl_dp_lcore *lc, struct nl_task *t, double now_vt, uint64_t rnd);

/**
 * After the lcores stopped: return every task still held anywhere (inboxes, service slots,
 * rings, heap) to the mempool exactly once.
 * @par Context Control thread, lcores stopped.
 */
void nl_dp_drain_ctl(struct nl_dp *dp);

/** Mark every manager as having work, so each is polled at least once. @par Context Control. */
void nl_dp_kick_ctl(struct nl_dp *dp);

/**
 * Background-load factor of machine i at t_vt in emulated mode (nl_mach_bg_factor() with the
 * run's seed), 1.0 otherwise. @par Context Pure read of dp.
 */
double nl_dp_bg_factor(const struct nl_dp *dp, uint32_t i, double t_vt);

#endif /* NL_DP_PRIV_H */
