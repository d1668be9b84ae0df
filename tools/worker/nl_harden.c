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
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "nl_harden.h"

/*
 * s[0..n): digits only (an integer >= 1), then, when sizes, one of k K M G (powers of 1024).
 * No sign, space, decimal point or exponent; at most 1e18.
 */
static int
parse_count(const char *s, size_t n, bool sizes, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	size_t i;

	for (i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > UINT64_C(1000000000000000000))
			return -EINVAL;
	}
	if (i == 0)
		return -EINVAL;
	if (sizes && i + 1 == n) {
		if (s[i] == 'k' || s[i] == 'K')
			mul = UINT64_C(1) << 10;
		else if (s[i] == 'M')
			mul = UINT64_C(1) << 20;
		else if (s[i] == 'G')
			mul = UINT64_C(1) << 30;
		else
			return -EINVAL;
		i++;
	}
	if (i != n || v == 0 || v > UINT64_C(1000000000000000000) / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

int
nl_harden_parse_limits(const char *s, struct nl_harden_limits *lim)
{
	struct nl_harden_limits l = *lim;
	unsigned int seen = 0;

	if (*s == '\0')
		return -EINVAL;
	for (;;) {
		const char *eq = strchr(s, '='), *end = strchr(s, ',');
		uint64_t *f;
		unsigned int bit;
		bool sizes = false;
		size_t klen;

		if (end == NULL)
			end = s + strlen(s);
		if (eq == NULL || eq > end)
			return -EINVAL;
		klen = (size_t)(eq - s);
		if (klen == 3 && strncmp(s, "cpu", 3) == 0)
			f = &l.cpu_s, bit = 1;
		else if (klen == 3 && strncmp(s, "mem", 3) == 0)
			f = &l.mem_bytes, bit = 2, sizes = true;
		else if (klen == 6 && strncmp(s, "nofile", 6) == 0)
			f = &l.nofile, bit = 4;
		else if (klen == 5 && strncmp(s, "fsize", 5) == 0)
			f = &l.fsize_bytes, bit = 8, sizes = true;
		else
			return -EINVAL;
		if ((seen & bit) != 0) /* cpu=1,cpu=2: which one was meant? */
			return -EINVAL;
		seen |= bit;
		if (parse_count(eq + 1, (size_t)(end - eq - 1), sizes, f) != 0)
			return -EINVAL;
		if (*end == '\0')
			break;
		s = end + 1; /* after a ',' comes another NAME=VALUE (no trailing comma) */
	}
	*lim = l;
	return 0;
}

__attribute__((no_sanitize_address)) static void
set_limit(int res, uint64_t soft, uint64_t hard)
{
	struct rlimit r = { .rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard };

	if (setrlimit(res, &r) != 0)
		_exit(126);
}

/* Close every descriptor above 2 (close_range(2), else one by one). */
__attribute__((no_sanitize_address)) static void
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

/* What the child of nl_harden_spawn needs, in the parent's memory (CLONE_VM). */
struct spawn_arg {
	const char *path;
	char *const *argv;
	const struct nl_harden_limits *lim;
	int out_fd, err_fd;
	pid_t parent;
	sigset_t old;  /* the parent's mask */
	sigset_t exec; /* the child's after exec (lim->mask, else old) */
};

/*
 * The child, on a stack of its own in the parent's memory while the parent waits (CLONE_VM |
 * CLONE_VFORK): system calls only, no allocation and no instrumented shadow writes, until
 * execve or _exit. Its signal handlers are its own copy (no CLONE_SIGHAND).
 */
__attribute__((no_sanitize_address)) static int
spawn_child(void *p)
{
	static char *const env[] = { "PATH=/usr/bin:/bin", NULL };
	const struct spawn_arg *a = p;
	const struct nl_harden_limits *lim = a->lim;
	struct sigaction dfl;

	setpgid(0, 0);
	if (lim != NULL && lim->pdeathsig != 0) { /* issue #33: it dies with the worker */
		prctl(PR_SET_PDEATHSIG, lim->pdeathsig, 0, 0, 0);
		if (getppid() != a->parent) /* the worker died before the prctl */
			_exit(126);
	}
	for (unsigned int i = 0; lim != NULL && i < lim->n_join; i++) /* issue #33: its cgroups */
		if (lim->join_fd[i] >= 0 && write(lim->join_fd[i], "0\n", 2) != 2)
			_exit(126);
	/* every disposition to the default, before the mask opens: no handler of the worker's
	 * may run here, in its memory (execve would reset caught ones, not ignored ones) */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &dfl, NULL);
	{
		int nul = open("/dev/null", O_RDONLY);

		if (nul < 0 || dup2(nul, 0) < 0)
			_exit(126);
		if (nul > 2)
			close(nul);
	}
	if (a->out_fd >= 0 && dup2(a->out_fd, 1) < 0)
		_exit(126);
	if (a->err_fd >= 0 && dup2(a->err_fd, 2) < 0)
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
	sigprocmask(SIG_SETMASK, &a->exec, NULL);
	execve(a->path, a->argv, env);
	_exit(127);
}

int
nl_harden_spawn(const char *path, char *const argv[], const struct nl_harden_limits *lim,
		int out_fd, int err_fd, pid_t *pid)
{
	/* the child's stack: the parent is suspended until the child's execve or _exit */
	_Alignas(64) char stack[64 * 1024];
	struct spawn_arg a = { .path = path, .argv = argv, .lim = lim, .out_fd = out_fd,
			       .err_fd = err_fd, .parent = getpid() };
	sigset_t all;
	pid_t p;

	/* no signal handler of ours may run in the child between clone and exec */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &a.old);
	a.exec = lim != NULL && lim->mask != NULL ? *lim->mask : a.old;
	/* issue #33: not fork(): copying a large worker's page tables (an ASan build's shadow)
	 * was seen holding the worker 2-4 s on a loaded host; a child sharing our memory until
	 * its execve copies nothing (the way posix_spawn(3) starts a program) */
	p = clone(spawn_child, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	if (p < 0) {
		int e = errno;

		sigprocmask(SIG_SETMASK, &a.old, NULL);
		return -e;
	}
	/* also from the parent: no race with a kill of the group right after */
	setpgid(p, p);
	sigprocmask(SIG_SETMASK, &a.old, NULL);
	*pid = p;
	return 0;
}

int
nl_harden_kill(pid_t pid, int sig)
{
	if (pid <= 0)
		return -EINVAL;
	return kill(-pid, sig) == 0 ? 0 : -errno;
}
