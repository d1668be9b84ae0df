/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hardened start of a task-farm command (nl_harden.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/syscall.h>

#include "nl_harden.h"

static int
parse_size(const char *s, size_t n, uint64_t *out)
{
	char buf[32], *end;
	double v, mul = 1;

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	v = strtod(buf, &end);
	if (end == buf)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		mul = 1024.0, end++;
	else if (*end == 'M')
		mul = 1024.0 * 1024, end++;
	else if (*end == 'G')
		mul = 1024.0 * 1024 * 1024, end++;
	if (*end != '\0' || !(v >= 1) || v * mul > 1e18)
		return -EINVAL;
	*out = (uint64_t)(v * mul);
	return 0;
}

int
nl_harden_parse_limits(const char *s, struct nl_harden_limits *lim)
{
	struct nl_harden_limits l = *lim;

	while (*s != '\0') {
		const char *eq = strchr(s, '='), *end = strchr(s, ',');
		uint64_t *f;
		size_t klen;

		if (end == NULL)
			end = s + strlen(s);
		if (eq == NULL || eq > end)
			return -EINVAL;
		klen = (size_t)(eq - s);
		if (klen == 3 && strncmp(s, "cpu", 3) == 0)
			f = &l.cpu_s;
		else if (klen == 3 && strncmp(s, "mem", 3) == 0)
			f = &l.mem_bytes;
		else if (klen == 6 && strncmp(s, "nofile", 6) == 0)
			f = &l.nofile;
		else if (klen == 5 && strncmp(s, "fsize", 5) == 0)
			f = &l.fsize_bytes;
		else
			return -EINVAL;
		if (parse_size(eq + 1, (size_t)(end - eq - 1), f) != 0)
			return -EINVAL;
		s = *end == ',' ? end + 1 : end;
	}
	*lim = l;
	return 0;
}

static void
set_limit(int res, uint64_t soft, uint64_t hard)
{
	struct rlimit r = { .rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard };

	if (setrlimit(res, &r) != 0)
		_exit(126);
}

/* Close every descriptor above 2 (close_range(2), else one by one). */
static void
close_from_3(void)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
		return;
#endif
	long max = sysconf(_SC_OPEN_MAX);

	for (long fd = 3; fd < (max > 0 ? max : 65536); fd++)
		close((int)fd);
}

int
nl_harden_spawn(const char *path, char *const argv[], const struct nl_harden_limits *lim,
		int out_fd, int err_fd, pid_t *pid)
{
	static char *const env[] = { "PATH=/usr/bin:/bin", NULL };
	sigset_t all, old;
	pid_t p;

	/* no signal handler of ours may run in the child between fork and exec */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	p = fork();
	if (p < 0) {
		int e = errno;

		sigprocmask(SIG_SETMASK, &old, NULL);
		return -e;
	}
	if (p > 0) {
		/* also from the parent: no race with a kill of the group right after */
		setpgid(p, p);
		sigprocmask(SIG_SETMASK, &old, NULL);
		*pid = p;
		return 0;
	}
	/* child */
	setpgid(0, 0);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	{
		int nul = open("/dev/null", O_RDONLY);

		if (nul < 0 || dup2(nul, 0) < 0)
			_exit(126);
		if (nul > 2)
			close(nul);
	}
	if (out_fd >= 0 && dup2(out_fd, 1) < 0)
		_exit(126);
	if (err_fd >= 0 && dup2(err_fd, 2) < 0)
		_exit(126);
	close_from_3();
	if (lim != NULL) {
		if (lim->cpu_s > 0)
			set_limit(RLIMIT_CPU, lim->cpu_s, lim->cpu_s + 1);
		if (lim->mem_bytes > 0)
			set_limit(RLIMIT_AS, lim->mem_bytes, lim->mem_bytes);
		if (lim->nofile > 0)
			set_limit(RLIMIT_NOFILE, lim->nofile, lim->nofile);
		if (lim->fsize_bytes > 0)
			set_limit(RLIMIT_FSIZE, lim->fsize_bytes, lim->fsize_bytes);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	execve(path, argv, env);
	_exit(127);
}

int
nl_harden_kill(pid_t pid, int sig)
{
	if (pid <= 0)
		return -EINVAL;
	return kill(-pid, sig) == 0 ? 0 : -errno;
}
