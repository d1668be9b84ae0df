/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How nlevel-worker starts a command (tools/worker/nl_harden.h, issue #16): the environment
 * is cleared, inherited descriptors are closed, stdin is /dev/null, the command leads its own
 * process group (killed as a group), and each resource limit is in force: a command over its
 * CPU seconds is killed by SIGXCPU, one writing past its file size by SIGXFSZ; the open-file
 * and address-space limits are what the command sees. TAP.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#include "nl_harden.h"
#include "nl_tap.h"

static int err_fd = -1; /* the commands' stderr (-1: ours) */

/* Live (not zombie) processes of process group g, from /proc. */
static int
group_alive(pid_t g)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char path[300], buf[512], *rp, st;
		int pgrp;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) != NULL && (rp = strrchr(buf, ')')) != NULL &&
		    sscanf(rp + 1, " %c %*d %d", &st, &pgrp) == 2 && pgrp == g && st != 'Z')
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* run argv with lim; its stdout into out (NUL-terminated); return the wait status */
static int
run(char *const argv[], const struct nl_harden_limits *lim, char *out, size_t cap)
{
	int p[2], st = -1;
	pid_t pid;
	size_t have = 0;
	ssize_t n;

	if (pipe(p) != 0)
		return -1;
	if (nl_harden_spawn(argv[0], argv, lim, p[1], err_fd, &pid) != 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	while (have + 1 < cap && (n = read(p[0], out + have, cap - 1 - have)) > 0)
		have += (size_t)n;
	out[have] = '\0';
	close(p[0]);
	waitpid(pid, &st, 0);
	return st;
}

int
main(void)
{
	struct nl_harden_limits lim = { 0 };
	char out[4096];
	int st;

	/* options */
	nl_tap_check(nl_harden_parse_limits("cpu=2,mem=64M,nofile=32,fsize=1k", &lim) == 0 &&
			     lim.cpu_s == 2 && lim.mem_bytes == 64u << 20 && lim.nofile == 32 &&
			     lim.fsize_bytes == 1024,
		     "--rlimit cpu=2,mem=64M,nofile=32,fsize=1k parsed");
	nl_tap_check(nl_harden_parse_limits("cpu=0", &lim) != 0 &&
			     nl_harden_parse_limits("disk=1", &lim) != 0 &&
			     nl_harden_parse_limits("cpu=1x", &lim) != 0 &&
			     nl_harden_parse_limits("cpu", &lim) != 0,
		     "--rlimit: zero, unknown names, bad numbers refused");

	/* environment */
	setenv("NL_SECRET", "hunter2", 1);
	{
		char *argv[] = { "/usr/bin/env", NULL };

		st = run(argv, NULL, out, sizeof(out));
		nl_tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
				  strcmp(out, "PATH=/usr/bin:/bin\n") == 0,
			  "environment cleared: the command sees PATH only (got '%.60s')", out);
	}
	/* descriptors */
	{
		int leak = open("/etc/hostname", O_RDONLY); /* no O_CLOEXEC: would be inherited */
		char fdpath[64];
		char *argv[] = { "/usr/bin/readlink", fdpath, NULL };

		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", leak);
		st = run(argv, NULL, out, sizeof(out));
		nl_tap_ok(leak > 2 && WIFEXITED(st) && WEXITSTATUS(st) != 0 && out[0] == '\0',
			  "a descriptor the worker holds (fd %d) is closed in the command", leak);
		close(leak);
		strcpy(fdpath, "/proc/self/fd/0");
		st = run(argv, NULL, out, sizeof(out));
		nl_tap_ok(strcmp(out, "/dev/null\n") == 0, "stdin is /dev/null (got '%.60s')", out);
	}
	/* process group */
	{
		char *argv[] = { "/bin/sh", "-c", "/bin/sleep 30 & /bin/sleep 30; exit 0", NULL };
		pid_t pid;
		struct timespec ts = { 0, 200000000 };

		if (nl_harden_spawn(argv[0], argv, NULL, -1, -1, &pid) == 0) {
			nanosleep(&ts, NULL);
			nl_tap_ok(getpgid(pid) == pid && getpgid(0) != pid,
				  "the command leads its own process group");
			nl_harden_kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			nanosleep(&ts, NULL);
			/* the background sleep of the group went too */
			nl_tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && group_alive(pid) == 0,
				  "killing the group kills the command and its children");
		}
	}
	/* limits */
	{
		struct nl_harden_limits l = { .cpu_s = 1 };
		char *argv[] = { "/bin/sh", "-c", "while :; do :; done", NULL };
		time_t t0 = time(NULL);

		st = run(argv, &l, out, sizeof(out));
		nl_tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU && time(NULL) - t0 < 10,
			  "cpu=1: a spinning command is killed by SIGXCPU (status 128 + %d)",
			  WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	}
	{
		struct nl_harden_limits l = { .fsize_bytes = 4096 };
		char path[] = "/tmp/nl-harden-XXXXXX";
		int fd = mkstemp(path);
		char *argv[] = { "/usr/bin/head", "-c", "100000", "/dev/zero", NULL };
		pid_t pid;

		if (fd >= 0 && nl_harden_spawn(argv[0], argv, &l, fd, -1, &pid) == 0) {
			waitpid(pid, &st, 0);
			nl_tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ &&
					  lseek(fd, 0, SEEK_END) <= 4096,
				  "fsize=4k: writing 100000 bytes is stopped by SIGXFSZ at 4096");
		} else {
			nl_tap_check(0, "fsize: could not start head");
		}
		if (fd >= 0)
			close(fd);
		unlink(path);
	}
	{
		struct nl_harden_limits l = { .nofile = 16, .mem_bytes = 256u << 20 };
		char *argv[] = { "/bin/sh", "-c", "ulimit -n; ulimit -v", NULL };

		st = run(argv, &l, out, sizeof(out));
		nl_tap_ok(WIFEXITED(st) && strcmp(out, "16\n262144\n") == 0,
			  "nofile=16, mem=256M: the command's limits (got '%.40s')", out);
	}
	{
		struct nl_harden_limits l = { .mem_bytes = 64u << 20 };
		char *argv[] = { "/usr/bin/python3", "-c", "x = bytearray(512 << 20)", NULL };

		if (access(argv[0], X_OK) == 0) {
			err_fd = open("/dev/null", O_WRONLY);
			st = run(argv, &l, out, sizeof(out));
			close(err_fd);
			err_fd = -1;
			nl_tap_ok(!(WIFEXITED(st) && WEXITSTATUS(st) == 0),
				  "mem=64M: allocating 512 MiB fails (status %d)", st);
		} else {
			nl_tap_skip("mem=64M: allocating 512 MiB fails", "no python3");
		}
	}
	/* signal mask: a caller that blocks every signal (the worker's starter thread) passes the
	 * mask its commands get; without one the command inherits the caller's */
	{
		char *argv[] = { "/usr/bin/grep", "^SigBlk", "/proc/self/status", NULL };
		struct nl_harden_limits ml = { 0 };
		sigset_t all, none, old;
		char blocked[4096];

		sigfillset(&all);
		sigemptyset(&none);
		sigprocmask(SIG_BLOCK, &all, &old);
		ml.mask = &none;
		st = run(argv, &ml, out, sizeof(out));
		run(argv, NULL, blocked, sizeof(blocked));
		sigprocmask(SIG_SETMASK, &old, NULL);
		nl_tap_ok(WIFEXITED(st) && strcmp(out, "SigBlk:\t0000000000000000\n") == 0,
			  "lim.mask: a command started from a thread blocking everything has the "
			  "mask given, none blocked (got '%.40s')",
			  out);
		nl_tap_ok(strncmp(blocked, "SigBlk:", 7) == 0 && strcmp(blocked, out) != 0,
			  "no lim.mask: the command inherits the caller's mask (got '%.40s')", blocked);
	}
	{
		char *argv[] = { "/nonexistent/cmd", NULL };

		st = run(argv, NULL, out, sizeof(out));
		nl_tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 127, "a missing program exits 127");
	}
	return nl_tap_done();
}
