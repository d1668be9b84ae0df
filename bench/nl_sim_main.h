/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The models nlevel-sim runs, chosen by the configuration's sections. Each model has one
 * entry point taking the loaded configuration and the command-line options; it prints its
 * errors and returns the process exit status (0 ok, 1 run failed, 2 bad configuration).
 */
#ifndef NL_SIM_MAIN_H
#define NL_SIM_MAIN_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nl_cfg.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Command-line options of nlevel-sim. */
struct nl_sim_opts {
	const char *config;  /**< --config */
	const char *out_dir; /**< --out */
	const char *trace;   /**< --trace (batch models), or NULL */
	const char *rsv_policy; /**< --rsv-policy (batch models with [reservations]), or NULL */
	const char *loads;   /**< --loads, or NULL */
	unsigned int seeds;  /**< --seeds, 0 = configuration's */
	unsigned int threads; /**< --threads, 0 = configuration's */
	double horizon_vt;   /**< --horizon, 0 = configuration's */
	bool quiet;          /**< --quiet */
};

/**
 * Monotonic wall clock for progress lines and the SUMMARY figures.
 * @return seconds since an arbitrary origin [s]. @par Context Any thread.
 */
static inline double
nl_sim_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/**
 * Run `gnuplot SCRIPT` with its stderr in LOG, in folder `dir` (NULL: the current one), without
 * a shell: the output folder's name reaches no command line (a name with a quote, or one
 * written to run a command, is only a name).
 * @param dir     Folder to run in (chdir in the child), or NULL.
 * @param script  gnuplot script, relative to dir.
 * @param log     File for gnuplot's stderr, relative to dir (created or truncated).
 * @return 0 when gnuplot exited 0; -1 otherwise (missing, failed, or fork failed).
 * @par Context  Control path (forks and waits).
 */
static inline int
nl_sim_gnuplot(const char *dir, const char *script, const char *log)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd;

		if (dir != NULL && chdir(dir) != 0)
			_exit(126);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/** Seed 002 dispatch curves ([system]/[task]/[nlsc]/[2lsc] sections). @return exit status. */
int nl_sim_main_curves(struct nl_cfg *cfg, const struct nl_sim_opts *o);

/** Batch model (a [batch] section; bench/batch/). @return exit status. */
int nl_sim_main_batch(struct nl_cfg *cfg, const struct nl_sim_opts *o);

/** Gossip model (a [gossip] section; bench/gossip/, docs/gossip.md). @return exit status. */
int nl_sim_main_gossip(struct nl_cfg *cfg, const struct nl_sim_opts *o);

/**
 * Pick the model by the configuration's sections and run it.
 * @return exit status.
 */
static inline int
nl_sim_main_dispatch(struct nl_cfg *cfg, const struct nl_sim_opts *o)
{
#ifdef NL_HAVE_GOSSIP
	if (nl_cfg_has_section(cfg, "gossip"))
		return nl_sim_main_gossip(cfg, o);
#endif
#ifdef NL_HAVE_BATCH
	if (nl_cfg_has_section(cfg, "batch")) {
		if (o->loads != NULL || o->seeds > 0 || o->horizon_vt > 0 || o->threads > 0) {
			fprintf(stderr, "nlevel-sim: --loads, --seeds, --horizon and --threads do not "
					"apply to the batch model (see --help)\n");
			return 2;
		}
		return nl_sim_main_batch(cfg, o);
	}
#endif
	if (o->trace != NULL || o->rsv_policy != NULL) {
		fprintf(stderr, "nlevel-sim: --trace and --rsv-policy apply to the batch model only "
				"(a [batch] section; see --help)\n");
		return 2;
	}
	return nl_sim_main_curves(cfg, o);
}

#ifdef __cplusplus
}
#endif
#endif /* NL_SIM_MAIN_H */
