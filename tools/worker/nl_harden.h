/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * How nlevel-worker starts a task-farm command (issue #16, docs/security.md "Worker"): a
 * cleared environment, no inherited file descriptors but 0-2, its own process group, and
 * optional resource limits (CPU seconds, address space, open files, output file size), so a
 * command cannot read the worker's secrets from its environment or descriptors, its whole
 * process tree can be killed at once, and one that runs away is stopped by the kernel and
 * reported with its signal (128 + n in DONE).
 */
#ifndef NL_HARDEN_H
#define NL_HARDEN_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Resource limits of a command; 0 = not limited (the worker's own limit applies). */
struct nl_harden_limits {
	uint64_t cpu_s;       /**< RLIMIT_CPU [s]: SIGXCPU at the soft limit, SIGKILL 1 s later */
	uint64_t mem_bytes;   /**< RLIMIT_AS [bytes]: allocations beyond fail */
	uint64_t nofile;      /**< RLIMIT_NOFILE [descriptors] */
	uint64_t fsize_bytes; /**< RLIMIT_FSIZE [bytes]: a write beyond gets SIGXFSZ */
	/* issue #33 (nl_cgroup.h), not parsed from --rlimit: */
	const int *join_fd;   /**< cgroup.procs files (open for writing) the child joins by
			       *   writing "0" before exec; entries < 0 skipped */
	unsigned int n_join;  /**< entries of join_fd */
	int pdeathsig;        /**< PR_SET_PDEATHSIG of the child (0 = none): it dies with
			       *   the worker */
	const sigset_t *mask; /**< the command's signal mask at exec, or NULL: the calling
			       *   thread's (a caller on a thread that blocks every signal
			       *   passes the process's own) */
};

/**
 * Parse "cpu=S,mem=BYTES,nofile=N,fsize=BYTES" (a non-empty subset, any order, each name at
 * most once, no empty item or trailing comma) into lim (fields not named are left as they
 * are). S (CPU seconds) and N (descriptors) are integers >= 1 with no suffix; BYTES is an
 * integer >= 1 that may end in k, M or G (powers of 1024): no sign, decimal point or exponent;
 * every value at most 1e18.
 * @return 0; -EINVAL (unknown or repeated name, bad number); lim is unchanged on an error.
 * @par Context Pure.
 */
int nl_harden_parse_limits(const char *s, struct nl_harden_limits *lim);

/**
 * Start path with argv: fork; in the child a new process group (setpgid), stdin from
 * /dev/null, stdout / stderr from out_fd / err_fd when >= 0 (else kept), every other
 * descriptor closed (after joining lim's cgroups and setting its parent-death signal; a
 * failed join exits 126), the limits set (soft = hard, but CPU hard = soft + 1 s), the environment
 * replaced by PATH=/usr/bin:/bin only, then execve. An exec failure exits 127.
 *
 * @param path    Absolute path of the program.
 * @param argv    NULL-terminated arguments (argv[0] = path).
 * @param lim     Limits (NULL = none).
 * @param out_fd  Descriptor for the command's stdout, or -1 to keep the worker's.
 * @param err_fd  Descriptor for its stderr, or -1.
 * @param pid     Output: the child's pid (also its process group id).
 * @return 0; -errno of fork().
 * @par Context Any one thread at a time (the worker's starter thread, or its loop when there
 *      is none); async-signal-safe calls only in the child.
 * @par Source setrlimit(2), setpgid(2), close_range(2); the environment rule of sudo's
 *      env_reset and HTCondor's job environment (only what the job is given).
 */
int nl_harden_spawn(const char *path, char *const argv[], const struct nl_harden_limits *lim,
		    int out_fd, int err_fd, pid_t *pid);

/**
 * Kill a command's whole process group (sig to -pid), so children it started go too.
 * @return 0; -errno. @par Context Any.
 */
int nl_harden_kill(pid_t pid, int sig);

#ifdef __cplusplus
}
#endif
#endif /* NL_HARDEN_H */
