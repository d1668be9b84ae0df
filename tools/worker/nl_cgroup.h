/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Containment of nlevel-worker's commands (issue #33, docs/taskfarm.md "Containment"): each
 * machine slot of the worker has a cgroup of its own,
 * <own cgroup>/nlevel/worker-ID@IP:PORT/mK (IP:PORT its appliance's), which the command of
 * that slot joins between fork and exec (nl_harden_spawn()'s join_fd = the slot's join_fd);
 * at the command's end, on a KILL and at its time limit the whole cgroup is killed (cgroup
 * v2: cgroup.kill; v1: freezer FROZEN, SIGKILL to every pid of cgroup.procs, THAWED,
 * repeated until empty), so background and setsid children go too. Limits: pids.max
 * (--max-procs) and the memory limit (--max-mem); CPU time and peak memory are read back for
 * DONE. The slot cgroups are made once and reused
 * (emptied and checked between commands): no mkdir/rmdir per task.
 *
 * A keeper process (forked at start, its own process group) waits on a pipe from the worker;
 * when the worker dies, even by SIGKILL, the pipe ends and the keeper kills and removes the
 * worker's cgroups. A restarted worker kills and removes what its previous life left under
 * the same worker id before it makes its own.
 *
 * Without cgroups (not root, not mounted, read-only) the fallback is a process group per
 * command, the worker a child subreaper (PR_SET_CHILD_SUBREAPER), commands with
 * PR_SET_PDEATHSIG(SIGKILL), and at a command's end a kill of its group and of every orphan
 * adopted from it; the keeper kills the groups it was told of when the worker dies.
 *
 * The cgroup filesystem is used directly (no libcgroup): the files needed are a handful of
 * writes and reads, identical in v1 and v2 but for the names, and libcgroup's v1/v2
 * abstraction does not cover cgroup.kill, the freezer loop nor memory.peak's reset.
 * Source: Linux Documentation/admin-guide/cgroup-v2.rst (cgroup.kill, memory.peak, pids.max,
 * cpu.stat), cgroup-v1/{freezer-subsystem,memory,pids}.rst; Slurm proctrack/cgroup and
 * HTCondor's per-job cgroups do the same for their jobs.
 */
#ifndef NL_CGROUP_H
#define NL_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "nl_proto.h"

enum nl_cg_mode {
	NL_CG_OFF = 0, /**< fallback: process groups + subreaper + parent-death signal */
	NL_CG_V1 = 1,  /**< cgroup v1: memory, pids, freezer, cpuacct hierarchies */
	NL_CG_V2 = 2,  /**< cgroup v2 (unified) */
};

enum { NL_CG_MEM, NL_CG_PIDS, NL_CG_FRZ, NL_CG_CPU, NL_CG_NCTL };

#define NL_CG_PATH 512u
#define NL_CG_DEF_PROCS 4096u /**< default --max-procs: processes (and threads) per command */

struct nl_cg_slot {
	int join_fd[NL_CG_NCTL]; /**< cgroup.procs of each hierarchy, open for writing, or -1 */
	int peak_fd;             /**< v2 memory.peak (reset per command), or -1 */
	uint64_t cpu0_ns;        /**< CPU usage of the cgroup at the command's start [ns] */
	uint64_t oom0;           /**< OOM kills of the cgroup at the command's start */
	pid_t pgid;              /**< the command's process group (0 = none) */
	bool starting;           /**< its command is being started on another thread (see
				  *   nl_cg_starting()); written and read by the worker's loop only */
};

struct nl_cg {
	enum nl_cg_mode mode;
	uint32_t wid;
	char name[64];           /**< worker-ID, or worker-ID@IP:PORT (its appliance) */
	unsigned int n_slot;
	uint64_t max_mem;        /**< per command [bytes], 0 = none */
	uint32_t max_procs;      /**< per command, 0 = none */
	bool have[NL_CG_NCTL];   /**< v1: hierarchy mounted and writable (v2: [0] only) */
	char dir[NL_CG_NCTL][NL_CG_PATH]; /**< the worker's cgroup .../nlevel/worker-ID */
	struct nl_cg_slot slot[NL_PROTO_MAX_MACH];
	int keeper_fd;           /**< write end of the keeper's pipe, or -1 */
	int lock_fd;             /**< /run/nlevel/worker-ID.lock, flock()ed by worker and keeper */
	pid_t keeper;            /**< the keeper process, or 0 */
	unsigned int n_stale;    /**< cgroups of an earlier life removed at start */
	unsigned int n_stale_busy; /**< ... not removed: still not empty after 30 s (reused) */
};

/**
 * Set up containment for n_slot machine slots: find the cgroup hierarchies (or use want),
 * kill and remove what an earlier worker of the same id left (waiting up to 30 s for its
 * killed processes to leave their cgroups; an earlier life's keeper still at that is waited
 * for up to 35 s), make one cgroup per slot with the limits, and start the keeper. Falls back
 * to NL_CG_OFF when cgroups cannot be used.
 *
 * @param cg         Output (free with nl_cg_close()).
 * @param wid        Worker id (names the cgroups).
 * @param app        The appliance "IP:PORT" (worker ids are the appliance's: the cgroups
 *                   and the lock are worker-ID@IP:PORT), or NULL (worker-ID).
 * @param n_slot     Machine slots, 1..NL_PROTO_MAX_MACH.
 * @param max_mem    Memory limit per command [bytes], 0 = none.
 * @param max_procs  Process limit per command, 0 = none.
 * @param want       "auto" (v2 when /sys/fs/cgroup is cgroup2, else v1), "v1", "v2", "off",
 *                   or "v2:PATH" / "v1:PATH" (that hierarchy root; for tests).
 * @param line       Output: one line for the worker's start-up message (what is used, or
 *                   why there are no cgroups and what the fallback is).
 * @param linelen    Size of line.
 * @return the mode in use (never an error: the fallback is always available).
 * @par Context Start-up of the worker (blocking file I/O, fork of the keeper).
 */
enum nl_cg_mode nl_cg_open(struct nl_cg *cg, uint32_t wid, const char *app, unsigned int n_slot,
			   uint64_t max_mem, uint32_t max_procs, const char *want, char *line,
			   size_t linelen);

/**
 * Prepare slot k for its next command: the slot must be empty; reset its peak memory and
 * read its CPU and OOM counters.
 * @return 0; -EBUSY when processes are still in it (kill them first).
 * @par Context The thread that starts slot k's commands; it touches slot k only, so it may run
 *      beside the loop's calls for other slots when the loop has marked k nl_cg_starting().
 */
int nl_cg_begin(struct nl_cg *cg, unsigned int k);

/**
 * Record the command of slot k (its pid = its process group) after the fork; in the
 * fallback the keeper is told of the group. @par Context Worker.
 */
void nl_cg_started(struct nl_cg *cg, unsigned int k, pid_t pgid);

/**
 * Mark slot k as having its command started on another thread (on = true, before that thread
 * calls nl_cg_begin()) or no longer (on = false, once its result is back). While any slot is
 * so marked, the fallback's kill (nl_cg_kill()) kills only the killed slot's own group and
 * leaves the worker's other children alone: a child just cloned is not yet in any slot's
 * group (nor its own), and must not be taken for an orphan. Slot k's pgid is not read then.
 * @par Context The worker's loop (the only thread that calls nl_cg_kill() for other slots).
 */
void nl_cg_starting(struct nl_cg *cg, unsigned int k, bool on);

/**
 * Kill everything of slot k: the whole cgroup (v2 cgroup.kill; v1 freeze, SIGKILL every pid,
 * thaw, until empty), or in the fallback its process group and the orphans adopted from it.
 * Waits (at most about 2 s) until the cgroup is empty.
 * @return 0 when nothing is left; -EBUSY when something still is. @par Context Worker.
 */
int nl_cg_kill(struct nl_cg *cg, unsigned int k);

/**
 * CPU time and peak memory of slot k's command (call after nl_cg_kill()), and whether the
 * memory limit's OOM killer struck. Unknown values stay as they are (the caller's rusage).
 * @par Context Worker.
 */
void nl_cg_usage(struct nl_cg *cg, unsigned int k, uint32_t *cpu_ms, uint32_t *mem_kib, bool *oom);

/**
 * Whether slot k's cgroup still holds a process. @par Context Worker.
 */
bool nl_cg_busy(const struct nl_cg *cg, unsigned int k);

/**
 * What a kill left in slot k's cgroup, for the log of a slow kill: "N processes left in DIR,
 * pid P in state S (wchan W; stack F1 < F2 ...)" from /proc/P/stat, wchan and stack (proc(5);
 * the stack needs root); "" when the slot is empty or has no cgroup.
 * @param out at least 256 bytes. @par Context Worker.
 */
void nl_cg_left(const struct nl_cg *cg, unsigned int k, char *out, size_t cap);

/**
 * Kill every slot, remove the worker's cgroups (waiting up to 30 s for them to empty), stop
 * the keeper. @par Context Worker, at exit.
 */
void nl_cg_close(struct nl_cg *cg);

/**
 * Parse a size "N[k|M|G]" (powers of 1024) into bytes. @return 0; -EINVAL. @par Context Pure.
 */
int nl_cg_parse_size(const char *s, uint64_t *bytes);

/** Printable mode ("cgroup v1", "cgroup v2", "process groups"). @par Context Pure. */
const char *nl_cg_mode_name(enum nl_cg_mode m);

#endif /* NL_CGROUP_H */
