/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-worker's --commands file and named-command start (tools/worker/nl_worker_farm.h):
 * comments ('#' only at a line start or after a space or tab, outside "..."), size errors
 * named, programs that are not executable regular files refused, the output folder checked
 * at start (group/world-writable without the sticky bit refused), output files never written
 * through a planted symbolic link, and the output size cap of a command =
 * min(--rlimit fsize, output_cap): past it the command dies of SIGXFSZ (153). TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include "nl_tap.h"
#include "nl_worker_farm.h"

static char dir[256];
static struct nl_msg_mach desc[1] = { { .speed_ips = 1000000000ull } };

/* Write a --commands file of text (len bytes) and load it. @return nl_wfarm_load()'s. */
static int
load(struct nl_wfarm *wf, const char *text, size_t len, char *err, size_t errlen)
{
	char path[300];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/cmds.conf", dir);
	f = fopen(path, "w");
	if (f == NULL || fwrite(text, 1, len, f) != len)
		return -2;
	fclose(f);
	err[0] = '\0';
	rc = nl_wfarm_load(wf, path, 1, 1, desc, err, errlen);
	if (rc != 0)
		nl_tap_diag("%s", err);
	return rc;
}

static int
loads(struct nl_wfarm *wf, const char *text, char *err, size_t errlen)
{
	return load(wf, text, strlen(text), err, errlen);
}

/* Run named command 0 of wf for task SUBMIT_INDEX 4242_1; @return its wait status or -1. */
static int
run0(const struct nl_wfarm *wf, const char *arg, const struct nl_harden_limits *lim)
{
	struct nl_msg_dispatch d = { .task_id = (UINT64_C(4242) << 32) | 1, .cmd_id = NL_WFARM_ID0 };
	pid_t p;
	int st;

	d.args_len = (uint8_t)(strlen(arg) + 1);
	memcpy(d.args, arg, d.args_len);
	if (nl_wfarm_spawn(wf, &wf->cmd[0], &d, lim, &p) != 0 || waitpid(p, &st, 0) != p)
		return -1;
	return st;
}

static long
file_size(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? (long)st.st_size : -1;
}

int
main(void)
{
	struct nl_wfarm wf;
	char err[512], text[4096], out[300], victim[300];
	struct nl_harden_limits lim = { 0 };
	struct stat st;
	int rc, s;

	snprintf(dir, sizeof(dir), "/tmp/nl-wfarm.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return perror("mkdtemp"), 1;
	chmod(dir, 0755);

	/* item 13: comments */
	snprintf(text, sizeof(text), "# a comment\ncommand hello = /bin/echo a#b  # the end\n"
		 "machine Foo = \"a#b\" # and a comment\noutput_dir = %s/o1\n", dir);
	rc = loads(&wf, text, err, sizeof(err));
	nl_tap_check(rc == 0 && wf.n_cmd == 1 && wf.cmd[0].n_tok == 1 &&
			     strcmp(wf.cmd[0].tok[0], "a#b") == 0 &&
			     strstr(wf.ad[0], "Foo = \"a#b\"") != NULL,
		     "'#' inside a word or a \"...\" string is text; after a blank it starts a comment");
	nl_wfarm_free(&wf);

	memset(text, 0, sizeof(text));
	snprintf(text, sizeof(text), "machine Big = \"");
	memset(text + strlen(text), 'x', 1100);
	strcat(text, "\"\n");
	rc = loads(&wf, text, err, sizeof(err));
	nl_tap_check(rc != 0 && strstr(err, "cmds.conf:1:") != NULL &&
			     strstr(err, "bytes; at most") != NULL,
		     "a machine value over the record size: FILE:LINE names the size");
	nl_wfarm_free(&wf);

	rc = load(&wf, "command a = /bin/echo a\0 evil\n", 30, err, sizeof(err));
	nl_tap_check(rc != 0 && strstr(err, "cmds.conf:1:") != NULL && strstr(err, "NUL") != NULL,
		     "a NUL byte in the commands file: FILE:LINE");
	nl_wfarm_free(&wf);

	/* item 14: a folder is not a program */
	rc = loads(&wf, "command hello = /tmp\n", err, sizeof(err));
	nl_tap_check(rc != 0 && strstr(err, "not a regular file") != NULL,
		     "command NAME = /tmp (a folder) refused");
	nl_wfarm_free(&wf);
	rc = loads(&wf, "command hello = /nonexistent/x\n", err, sizeof(err));
	nl_tap_check(rc != 0 && strstr(err, "No such file") != NULL,
		     "command NAME = a missing program refused");
	nl_wfarm_free(&wf);

	/* item 3: the output folder */
	snprintf(out, sizeof(out), "%s/o777", dir);
	mkdir(out, 0777);
	chmod(out, 0777);
	snprintf(text, sizeof(text), "command hello = /bin/echo\noutput_dir = %s\n", out);
	rc = loads(&wf, text, err, sizeof(err));
	nl_tap_check(rc != 0 && strstr(err, "without the sticky bit") != NULL,
		     "an existing world-writable output_dir without the sticky bit is refused");
	nl_wfarm_free(&wf);
	chmod(out, 01777);
	rc = loads(&wf, text, err, sizeof(err));
	nl_tap_check(rc == 0, "a world-writable output_dir with the sticky bit (as /tmp) is accepted");
	/* a link planted under the name of the task's output file */
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	{
		FILE *f = fopen(victim, "w");

		fputs("precious\n", f);
		fclose(f);
	}
	char link[400];

	snprintf(link, sizeof(link), "%s/4242_1.0.out", out);
	if (symlink(victim, link) != 0)
		nl_tap_diag("symlink: %s", strerror(errno));
	s = rc == 0 ? run0(&wf, "hello", NULL) : -1;
	nl_tap_check(s >= 0 && WIFEXITED(s) && WEXITSTATUS(s) == 0 && file_size(victim) == 9 &&
			     lstat(link, &st) == 0 && S_ISREG(st.st_mode) && file_size(link) == 6,
		     "a symbolic link planted as the output file: replaced, its target untouched");
	nl_tap_check(lstat(link, &st) == 0 && (st.st_mode & 0777) == 0640,
		     "output files are mode 0640");
	s = rc == 0 ? run0(&wf, "again", NULL) : -1;
	nl_tap_check(s >= 0 && WIFEXITED(s) && WEXITSTATUS(s) == 0 && file_size(link) == 6,
		     "a retry of the task rewrites its own output file");
	nl_wfarm_free(&wf);

	snprintf(out, sizeof(out), "%s/onew", dir);
	snprintf(text, sizeof(text), "command hello = /bin/echo\noutput_dir = %s\n", out);
	rc = loads(&wf, text, err, sizeof(err));
	nl_tap_check(rc == 0 && stat(out, &st) == 0 && (st.st_mode & 0777) == 0750,
		     "a missing output_dir is created 0750");
	nl_wfarm_free(&wf);

	/* items 2 and 7: the output cap, min(--rlimit fsize, output_cap), SIGXFSZ past it */
	snprintf(text, sizeof(text), "command zeros = /bin/dd if=/dev/zero bs=1024 count={1} "
		 "status=none\noutput_dir = %s\noutput_cap = 8k\n", out);
	rc = loads(&wf, text, err, sizeof(err));
	lim.fsize_bytes = 1 << 20;
	nl_tap_check(rc == 0 && nl_wfarm_fsize(&wf, &lim) == 8192,
		     "--rlimit fsize=1M over output_cap = 8k: the command's cap is 8k");
	s = rc == 0 ? run0(&wf, "20", &lim) : -1;
	snprintf(link, sizeof(link), "%s/4242_1.0.out", out);
	nl_tap_ok(s >= 0 && WIFSIGNALED(s) && WTERMSIG(s) == SIGXFSZ && file_size(link) == 8192,
		  "a command writing 20 KiB past output_cap 8k: killed by SIGXFSZ (DONE 153), 8 KiB "
		  "kept (status %#x, size %ld)", s, file_size(link));
	s = rc == 0 ? run0(&wf, "4", &lim) : -1;
	nl_tap_ok(s >= 0 && WIFEXITED(s) && WEXITSTATUS(s) == 0 && file_size(link) == 4096,
		  "a command under the cap runs (no exit 126; status %#x)", s);
	lim.fsize_bytes = 2048;
	nl_tap_check(nl_wfarm_fsize(&wf, &lim) == 2048 && nl_wfarm_fsize(&wf, NULL) == 8192,
		     "--rlimit fsize under output_cap wins; without it output_cap");
	nl_wfarm_free(&wf);

	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			nl_tap_diag("could not remove %s", dir);
	}
	return nl_tap_done();
}
