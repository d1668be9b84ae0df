/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * nlevel-worker's per-machine queue (issue #33): the sub-tasks a machine holds (the head
 * one running), the occupancy it reports in LOAD/HELLO (n_sub, backlog_ns: docs/protocol.md
 * contract item 4), a KILL's lookup (running, queued, not held), a command's time limit and
 * the DONE record of its end (state, run/queue times). Pure bookkeeping, no system calls:
 * the worker's loop (nlevel_worker.c) does the processes, cgroups and datagrams.
 * Source: docs/taskfarm.md "Containment" and "Occupancy"; DONE states as Slurm's job states
 * TIMEOUT / CANCELLED / OUT_OF_MEMORY (Slurm squeue(1) "JOB STATE CODES").
 */
#ifndef NL_WQUEUE_H
#define NL_WQUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "nl_proto.h"

#define NL_WQ_QCAP 4096u /**< sub-tasks queued per machine */

/** One sub-task a machine holds. */
struct nl_wq_sub {
	struct nl_msg_dispatch d;
	uint64_t fin_ns; /**< emulated work: when it finishes [ns, CLOCK_MONOTONIC] */
	uint64_t arr_ns; /**< when its DISPATCH arrived [ns] */
	uint8_t from;    /**< the appliance that DISPATCHed it (0 = --appliance, 1 = --standby):
			  *   its DONE goes there */
};

/** One machine of the worker: a FIFO of sub-tasks, the head one running. */
struct nl_wq_mach {
	struct nl_msg_mach desc;
	uint32_t slot;
	struct nl_wq_sub *q;  /**< ring of NL_WQ_QCAP */
	unsigned int head, n;
	uint64_t busy_until_ns; /**< emulated work: end of the last queued one */
	pid_t pid;            /**< task-farm: the running command, 0 = none */
	uint64_t start_ns;    /**< the running command's start */
	uint64_t deadline_ns; /**< its time limit's end, 0 = none */
	uint64_t kill_ns;     /**< when the worker killed it (time limit, KILL), 0 = not killed */
	bool starting;        /**< its head's command is being started (off the loop): held as
			       *   running (a KILL marks it, nothing withdraws it), pid still 0 */
	uint8_t end_state;    /**< enum nl_done_state when we killed it (TIMEOUT, CANCELLED) */
	uint64_t mean_ns;     /**< recent mean run time of its commands (EWMA 1/5), 0 = none yet */
	bool was_busy;        /**< held a sub-task at the last LOAD */
};

/**
 * Time to drain machine m [ns] (contract item 4): per queued or running named command its
 * machine's recent mean run time (1 s before the first), at most the command's time limit;
 * the running one's estimate less its elapsed time, at least a quarter of the estimate (so
 * never 0 while it runs) and at most the time to its deadline (1 ms at least); emulated
 * work: until its model end.
 * @param m    The machine.
 * @param now  Now [ns, CLOCK_MONOTONIC].
 * @return the estimate [ns]; 0 only when m holds nothing.
 * @par Context Pure (the worker's loop).
 */
uint64_t nl_wq_backlog_ns(const struct nl_wq_mach *m, uint64_t now);

/** What nl_wq_kill() found. */
enum nl_wq_kill_res {
	NL_WQ_KILL_NONE = 0,    /**< not held (a late or foreign KILL): answered with nothing */
	NL_WQ_KILL_RUNNING = 1, /**< the running command: kill its cgroup; DONE when reaped */
	NL_WQ_KILL_QUEUED = 2,  /**< withdrawn from the queue: send *done at once */
};

/**
 * A KILL (contract item 3) for machine table mach[n_mach]: finds the sub-task by task id,
 * token and sub on the KILL's machine. A running one, or the head whose start is under way
 * (m->starting), is marked CANCELLED (unless its end was already decided: TIMEOUT stays);
 * a queued one is removed from the ring (order kept) and
 * *done / *d are filled for its DONE (state CANCELLED, queue_ms).
 * @param mach    The worker's machines.
 * @param n_mach  Their number.
 * @param k       The KILL.
 * @param now     Now [ns].
 * @param d       Output for QUEUED: the withdrawn sub-task's DISPATCH.
 * @param done    Output for QUEUED: its DONE record (ids filled by the caller's sender).
 * @return enum nl_wq_kill_res.
 * @par Context Pure (the worker's loop).
 */
enum nl_wq_kill_res nl_wq_kill(struct nl_wq_mach *mach, unsigned int n_mach,
			       const struct nl_msg_kill *k, uint64_t now,
			       struct nl_msg_dispatch *d, struct nl_msg_done *done);

/**
 * nl_wq_kill() that also says, for QUEUED, which appliance DISPATCHed the withdrawn sub-task
 * (*from, its struct nl_wq_sub from: where its DONE goes).
 * @par Context Pure (the worker's loop).
 */
enum nl_wq_kill_res nl_wq_kill_from(struct nl_wq_mach *mach, unsigned int n_mach,
				    const struct nl_msg_kill *k, uint64_t now,
				    struct nl_msg_dispatch *d, struct nl_msg_done *done,
				    uint8_t *from);

/**
 * The head of m started its command (pid set by the caller) at now: its start, its deadline
 * = now + min(DISPATCH time_limit_ms, max_time_ns) (0 in both: none), end state EXITED.
 * @param max_time_ns  The worker's --max-time [ns], 0 = none.
 * @par Context Pure.
 */
void nl_wq_started(struct nl_wq_mach *m, uint64_t now, uint64_t max_time_ns);

/**
 * The running command of m ended (reaped) at now with wait status wstatus: fill *done
 * (status 0..255 or 128 + signal; state: the end we decided, TIMEOUT or CANCELLED, else OOM
 * when the memory limit's OOM killer struck, else EXITED; run_ms, queue_ms) without touching
 * cpu_ms / mem_peak_kib, update the machine's mean run time, and pop the head.
 * @param m        The machine (its head must be running).
 * @param wstatus  waitpid()'s status.
 * @param oom      Whether the cgroup's OOM kill counter rose during the command.
 * @param now      Now [ns].
 * @param d        Output: the ended sub-task's DISPATCH.
 * @param done     In: cpu_ms / mem_peak_kib; out: the DONE record.
 * @return the DONE status.
 * @par Context Pure.
 */
int32_t nl_wq_end(struct nl_wq_mach *m, int wstatus, bool oom, uint64_t now,
		  struct nl_msg_dispatch *d, struct nl_msg_done *done);

/** Milliseconds of ns, saturated at UINT32_MAX. @par Context Pure. */
uint32_t nl_wq_ms(uint64_t ns);

#endif /* NL_WQUEUE_H */
