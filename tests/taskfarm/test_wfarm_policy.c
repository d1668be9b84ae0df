/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a task may make a worker's named command do (issue #35; docs/taskfarm.md "Task
 * arguments and options", docs/security.md "Who may run which command"):
 *   - a task argument that would begin an argv word with '-' is refused (DONE 126, the reason
 *     in the task's .err file, nothing run) unless the template puts it after a "--" word or
 *     the command is `options NAME = allow`; the documented case: `sort {@}` given
 *     `-o FILE /etc/hostname` does not write FILE, `sort -- {@}` reads "-o" as a file name;
 *   - `principals NAME = ...` lets only those principals (and @operator, the site key's
 *     holder, when listed) run it, by the DISPATCH's principal id;
 *   - the commands file's mistakes in these lines are refused with FILE:LINE.
 * TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include "nl_principal.h"
#include "nl_tap.h"
#include "nl_worker_farm.h"

static char dir[256];
static struct nl_msg_mach desc[1] = { { .speed_ips = 1000000000ull } };

static int
loads(struct nl_wfarm *wf, const char *text, char *err, size_t errlen)
{
	char path[300];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/cmds.conf", dir);
	f = fopen(path, "w");
	if (f == NULL)
		return -2;
	fputs(text, f);
	fclose(f);
	err[0] = '\0';
	rc = nl_wfarm_load(wf, path, 1, 1, desc, err, errlen);
	if (rc != 0)
		nl_tap_diag("%s", err);
	return rc;
}

/* A DISPATCH of command k with the arguments of argv-like list a (NULL-terminated). */
static struct nl_msg_dispatch
disp(unsigned int k, uint32_t principal, const char *const *a)
{
	struct nl_msg_dispatch d = { .task_id = (UINT64_C(4343) << 32) | 7, .n_split = 1 };

	d.cmd_id = (uint16_t)(NL_WFARM_ID0 + k);
	d.principal = principal;
	for (; *a != NULL; a++) {
		size_t l = strlen(*a) + 1;

		memcpy(d.args + d.args_len, *a, l);
		d.args_len = (uint8_t)(d.args_len + l);
	}
	return d;
}

/* nl_wfarm_check() of command k (by name) with args: 0 or -EACCES; why filled. */
static int
check(const struct nl_wfarm *wf, const char *name, uint32_t principal, const char *const *a,
      char *why)
{
	for (unsigned int k = 0; k < wf->n_cmd; k++)
		if (strcmp(wf->cmd[k].name, name) == 0) {
			struct nl_msg_dispatch d = disp(k, principal, a);

			why[0] = '\0';
			return nl_wfarm_check(&wf->cmd[k], &d, why, 400);
		}
	return -ENOENT;
}

static char *
slurp(const char *path)
{
	static char buf[2048];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void
test_options_rule(void)
{
	struct nl_wfarm wf;
	char err[512], text[2048], why[400];
	static const char *const o[] = { "-o", "/tmp/x", "/etc/hostname", NULL };
	static const char *const plain[] = { "b.txt", "a.txt", NULL };
	static const char *const later[] = { "a", "-b", NULL };
	static const char *const first[] = { "-a", "b", NULL };
	static const char *const one[] = { "-n", NULL };
	int rc;

	snprintf(text, sizeof(text),
		 "command sortf = /usr/bin/sort {@}\n"
		 "command sortd = /usr/bin/sort -- {@}\n"
		 "command app = /bin/echo\n"
		 "command appd = /bin/echo --\n"
		 "command word = /bin/echo if={1}\n"
		 "command mixed = /bin/echo {1} -- {2}\n"
		 "command tool = /bin/echo {@}\n"
		 "options tool = allow\n"
		 "command first = /bin/echo {1}.txt\n"
		 "output_dir = %s/out\n", dir);
	rc = loads(&wf, text, err, sizeof(err));
	nl_tap_check(rc == 0, "a commands file with -- templates and an options line loads");
	if (rc != 0)
		return;
	nl_tap_ok(check(&wf, "sortf", 0, o, why) == -EACCES && strstr(why, "argument 1 '-o'") &&
			  strstr(why, "options sortf = allow"),
		  "sort {@} given -o FILE: refused, the reason names the argument and the fix (%s)",
		  why);
	nl_tap_check(check(&wf, "sortd", 0, o, why) == 0,
		     "sort -- {@} given -o FILE: allowed (after --, -o is a file name)");
	nl_tap_check(check(&wf, "sortf", 0, plain, why) == 0,
		     "arguments that are not options pass");
	nl_tap_check(check(&wf, "app", 0, one, why) == -EACCES,
		     "appended arguments without a -- in the template: an option is refused");
	nl_tap_check(check(&wf, "appd", 0, one, why) == 0,
		     "appended arguments after the template's --: allowed");
	nl_tap_check(check(&wf, "word", 0, one, why) == 0,
		     "{1} inside a word (if={1}) never begins one: allowed");
	nl_tap_check(check(&wf, "first", 0, one, why) == -EACCES,
		     "{1} at the start of a word ({1}.txt) begins it: refused");
	nl_tap_check(check(&wf, "mixed", 0, later, why) == 0 &&
			     check(&wf, "mixed", 0, first, why) == -EACCES,
		     "{1} -- {2}: an option in {2} passes, in {1} is refused");
	nl_tap_check(check(&wf, "tool", 0, o, why) == 0,
		     "options tool = allow: options pass");
	nl_wfarm_free(&wf);
}

/* The documented case, run for real: sort -o FILE writes nothing. */
static void
test_sort_o_case(void)
{
	struct nl_wfarm wf;
	char err[512], text[1024], victim[300], errf[300];
	const char *a[4];
	struct nl_msg_dispatch d;
	struct stat st;
	pid_t p;
	int rc, status = -1;

	if (access("/usr/bin/sort", X_OK) != 0) {
		nl_tap_skip("sort_o_case", "no /usr/bin/sort");
		return;
	}
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(text, sizeof(text), "command sortf = /usr/bin/sort {@}\n"
		 "command sortd = /usr/bin/sort -- {@}\noutput_dir = %s/out\n", dir);
	if (loads(&wf, text, err, sizeof(err)) != 0) {
		nl_tap_check(false, "sort_o_case_setup");
		return;
	}
	a[0] = "-o";
	a[1] = victim;
	a[2] = "/etc/hostname";
	a[3] = NULL;
	d = disp(0, 0, a);
	rc = nl_wfarm_spawn(&wf, &wf.cmd[0], &d, NULL, &p);
	snprintf(errf, sizeof(errf), "%s/out/4343_7.0.err", dir);
	const char *e = slurp(errf);

	nl_tap_ok(rc == -EACCES && stat(victim, &st) != 0 && e != NULL &&
			  strstr(e, "refused, not run") != NULL,
		  "sortf -o FILE /etc/hostname: not run (rc %d), FILE not written, the reason in "
		  "its .err file: %s", rc, e != NULL ? e : "(none)");
	d = disp(1, 0, a);
	rc = nl_wfarm_spawn(&wf, &wf.cmd[1], &d, NULL, &p);
	if (rc == 0)
		waitpid(p, &status, 0);
	nl_tap_ok(rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0 && stat(victim, &st) != 0,
		  "sort -- -o FILE /etc/hostname: runs, reads '-o' as a file (exit %d), FILE not "
		  "written", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	nl_wfarm_free(&wf);
}

static void
test_principals_rule(void)
{
	struct nl_wfarm wf;
	char err[512], text[1024], why[400];
	static const char *const none[] = { NULL };
	uint32_t alice = nl_principal_id("alice"), bob = nl_principal_id("bob");
	int rc;

	snprintf(text, sizeof(text), "command hello = /bin/echo hello\n"
		 "principals hello = alice, @operator\n"
		 "command open = /bin/echo open\n"
		 "command ops = /bin/echo ops\nprincipals ops = bob\n"
		 "output_dir = %s/out\n", dir);
	rc = loads(&wf, text, err, sizeof(err));
	nl_tap_check(rc == 0, "a commands file with principals lines loads");
	if (rc != 0)
		return;
	nl_tap_check(check(&wf, "hello", alice, none, why) == 0, "principals hello = alice: alice runs it");
	nl_tap_ok(check(&wf, "hello", bob, none, why) == -EACCES && strstr(why, "alice, @operator"),
		  "principals hello = alice: bob is refused, the reason quotes the line (%s)", why);
	nl_tap_check(check(&wf, "hello", 0, none, why) == 0,
		     "@operator listed: the site key's holder (principal id 0) runs it");
	nl_tap_check(check(&wf, "ops", 0, none, why) == -EACCES,
		     "@operator not listed: the site key's holder is refused too");
	nl_tap_check(check(&wf, "open", bob, none, why) == 0 && check(&wf, "open", 0, none, why) == 0,
		     "a command without a principals line: everybody");
	nl_wfarm_free(&wf);
}

static void
test_file_mistakes(void)
{
	static const struct {
		const char *text, *want, *claim;
	} c[] = {
		{ "principals hello = alice\ncommand hello = /bin/echo\n", "cmds.conf:1: principals "
		  "hello: no command 'hello' defined above", "principals before its command" },
		{ "command hello = /bin/echo\nprincipals hello = al/ice\n", "cmds.conf:2:",
		  "a bad principal name" },
		{ "command hello = /bin/echo\nprincipals hello = a, a\n", "given twice",
		  "a principal given twice" },
		{ "command hello = /bin/echo\nprincipals hello = a\nprincipals hello = b\n",
		  "cmds.conf:3: principals hello given twice", "two principals lines" },
		{ "command hello = /bin/echo\nprincipals hello = ,\n", "want at least one",
		  "an empty principals list" },
		{ "command hello = /bin/echo\noptions hello = maybe\n", "cmds.conf:2: options hello = "
		  "'maybe': want allow or refuse", "options neither allow nor refuse" },
		{ "options nope = allow\n", "no command 'nope'", "options of an unknown command" },
	};
	struct nl_wfarm wf;
	char err[512], text[1024];

	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(text, sizeof(text), "%soutput_dir = %s/out\n", c[i].text, dir);
		int rc = loads(&wf, text, err, sizeof(err));

		nl_tap_ok(rc != 0 && strstr(err, c[i].want) != NULL, "%s: refused with FILE:LINE",
			  c[i].claim);
		nl_wfarm_free(&wf);
	}
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/nl-wfarm-policy.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return perror("mkdtemp"), 1;
	chmod(dir, 0755);
	test_options_rule();
	test_sort_o_case();
	test_principals_rule();
	test_file_mistakes();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			nl_tap_diag("could not remove %s", dir);
	}
	return nl_tap_done();
}
