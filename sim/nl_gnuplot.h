/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * gnuplot for the programs that draw their CSV files (nlevel-sim, nlevel-jobmix), run without
 * a shell.
 */
#ifndef NL_GNUPLOT_H
#define NL_GNUPLOT_H

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

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
nl_gnuplot_run(const char *dir, const char *script, const char *log)
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

#ifdef __cplusplus
}
#endif
#endif /* NL_GNUPLOT_H */
