/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-worker's task-farm configuration and named-command spawning (nl_worker_farm.h).
 */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "nl_classad.h"
#include "nl_principal.h"
#include "nl_worker_farm.h"

static int
fail(char *err, size_t errlen, const char *path, unsigned int line, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s:%u: %s", path, line, msg);
	return -1;
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/*
 * Cut a comment off a line: '#' starts one at the start of the line or after a space or tab,
 * outside a "..." string (in which \" and \\ are escapes); elsewhere it is text ("a#b").
 */
static void
strip_comment(char *s)
{
	bool in_q = false;

	for (char *p = s; *p != '\0'; p++) {
		if (in_q) {
			if (*p == '\\' && p[1] != '\0')
				p++;
			else if (*p == '"')
				in_q = false;
		} else if (*p == '"') {
			in_q = true;
		} else if (*p == '#' && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			return;
		}
	}
}

/* Append "ATTR = EXPR; " to a machine record, replacing an earlier ATTR of the same name. */
static int
ad_set(char *ad, const char *attr, const char *expr)
{
	char tmp[NL_FARM_AD_MAX + 1] = "";
	char *save = NULL, *copy = strdup(ad), *st;
	int n;

	if (copy == NULL)
		return -ENOMEM;
	for (st = strtok_r(copy, ";", &save); st != NULL; st = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(st, '='), name[64];

		if (eq == NULL)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - st), st);
		if (strcasecmp(trim(name), attr) == 0)
			continue;
		if (strlen(tmp) + strlen(st) + 2 > NL_FARM_AD_MAX) {
			free(copy);
			return -E2BIG;
		}
		strcat(tmp, trim(st));
		strcat(tmp, "; ");
	}
	free(copy);
	n = snprintf(ad, NL_FARM_AD_MAX + 1, "%s%s = %s", tmp, attr, expr);
	return n > (int)NL_FARM_AD_MAX ? -E2BIG : 0;
}

static uint64_t
mem_total_mib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb / 1024;
}

static bool
attr_ok(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

int
nl_wfarm_program_ok(const char *prog, char *why, size_t whylen)
{
	struct stat st;

	if (prog[0] != '/') {
		snprintf(why, whylen, "the program must be an absolute path (no shell, no PATH "
			 "search), got '%s'", prog);
		return -EINVAL;
	}
	if (stat(prog, &st) != 0) {
		int e = errno;

		snprintf(why, whylen, "%s: %s", prog, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s is not a regular file (a %s)", prog,
			 S_ISDIR(st.st_mode) ? "directory" : "special file");
		return -EINVAL;
	}
	if (access(prog, X_OK) != 0) {
		int e = errno;

		snprintf(why, whylen, "%s is not executable: %s", prog, strerror(e));
		return -e;
	}
	return 0;
}

/*
 * Open (create when missing, mode 0750) the output folder and keep it open: every output file
 * is opened relative to it. An existing folder must belong to the worker's user or root and
 * must not be writable by group or others unless it has the sticky bit (as /tmp), or another
 * user could plant links or files under the names the worker writes.
 */
static int
open_out_dir(struct nl_wfarm *wf, const char *path, unsigned int line, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkdir(wf->out_dir, 0750) != 0 && errno != EEXIST)
		return fail(err, errlen, path, line, "output_dir %s: %s", wf->out_dir, strerror(errno));
	fd = open(wf->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, path, line, "output_dir %s: %s", wf->out_dir, strerror(errno));
	if (fstat(fd, &st) != 0) {
		close(fd);
		return fail(err, errlen, path, line, "output_dir %s: %s", wf->out_dir, strerror(errno));
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		close(fd);
		return fail(err, errlen, path, line, "output_dir %s belongs to uid %u, neither this "
			    "worker's user (uid %u) nor root: refused", wf->out_dir,
			    (unsigned int)st.st_uid, (unsigned int)geteuid());
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
		close(fd);
		return fail(err, errlen, path, line, "output_dir %s is writable by %s (mode %04o) "
			    "without the sticky bit: refused (chmod go-w, or +t)", wf->out_dir,
			    (st.st_mode & S_IWOTH) != 0 ? "everyone" : "its group",
			    (unsigned int)(st.st_mode & 07777));
	}
	wf->out_dirfd = fd;
	wf->have_dir = true;
	return 0;
}

/*
 * `options NAME = allow | refuse` and `principals NAME = P1, P2, @operator` (issue #35): for a
 * command defined above; a principals line holds 1..NL_WFARM_MAX_PR valid names, each once.
 */
static int
cmd_policy(struct nl_wfarm *wf, const char *key, char *val, const char *path, unsigned int ln,
	   char *err, size_t errlen)
{
	bool opt = key[0] == 'o';
	const char *name = key + (opt ? 7 : 10);
	struct nl_wfarm_cmd *c = NULL;
	char *save = NULL;

	while (isspace((unsigned char)*name))
		name++;
	for (unsigned int i = 0; i < wf->n_cmd; i++)
		if (strcmp(wf->cmd[i].name, name) == 0)
			c = &wf->cmd[i];
	if (c == NULL)
		return fail(err, errlen, path, ln, "%s %s: no command '%s' defined above this line",
			    opt ? "options" : "principals", name, name);
	if (opt) {
		if (strcmp(val, "allow") != 0 && strcmp(val, "refuse") != 0)
			return fail(err, errlen, path, ln, "options %s = '%s': want allow or refuse",
				    name, val);
		c->options = strcmp(val, "allow") == 0;
		return 0;
	}
	if (c->restricted)
		return fail(err, errlen, path, ln, "principals %s given twice", name);
	c->pr_text = strdup(val);
	if (c->pr_text == NULL)
		return fail(err, errlen, path, ln, "out of memory");
	c->restricted = true;
	for (char *t = strtok_r(val, ", \t", &save); t != NULL; t = strtok_r(NULL, ", \t", &save)) {
		uint32_t id;

		if (strcmp(t, NL_WFARM_OPERATOR) == 0)
			id = 0;
		else if (nl_principal_name_ok(t))
			id = nl_principal_id(t);
		else
			return fail(err, errlen, path, ln, "principals %s: '%s' is not a principal "
				    "name (1..%u of A-Z a-z 0-9 . _ -) nor %s", name, t,
				    NL_PRINCIPAL_NAME_MAX, NL_WFARM_OPERATOR);
		for (unsigned int i = 0; i < c->n_pr; i++)
			if (c->pr[i] == id)
				return fail(err, errlen, path, ln, "principals %s: '%s' given twice",
					    name, t);
		if (c->n_pr == NL_WFARM_MAX_PR)
			return fail(err, errlen, path, ln, "principals %s: more than %u", name,
				    NL_WFARM_MAX_PR);
		c->pr[c->n_pr++] = id;
	}
	if (c->n_pr == 0)
		return fail(err, errlen, path, ln, "principals %s: want at least one name (or %s)",
			    name, NL_WFARM_OPERATOR);
	return 0;
}

int
nl_wfarm_load(struct nl_wfarm *wf, const char *path, uint32_t wid, unsigned int n_mach,
	      const struct nl_msg_mach *desc, char *err, size_t errlen)
{
	FILE *f;
	ssize_t got;
	struct utsname un;
	char arch[80] = "UNKNOWN", *line = NULL, *save;
	size_t cap = 0;
	unsigned int ln = 0, dir_line = 0; /* the output_dir line (0: the default) */
	uint64_t mem = mem_total_mib();

	memset(wf, 0, sizeof(*wf));
	snprintf(wf->out_dir, sizeof(wf->out_dir), "nlevel-out");
	wf->out_cap = 16u << 20;
	if (uname(&un) == 0) {
		snprintf(arch, sizeof(arch), "%s", un.machine);
		for (char *p = arch; *p; p++)
			*p = (char)toupper((unsigned char)*p);
	}
	for (unsigned int i = 0; i < n_mach; i++) {
		snprintf(wf->ad[i], sizeof(wf->ad[i]),
			 "Name = \"w%u.%u\"; Machine = %u; Cpus = 1; Memory = %llu; Arch = \"%s\"; "
			 "OpSys = \"LINUX\"; Mips = %llu; KFlops = %llu",
			 wid, i, i, (unsigned long long)(n_mach ? mem / n_mach : 0), arch,
			 (unsigned long long)(desc[i].speed_ips / 1000000),
			 (unsigned long long)(desc[i].speed_ips / 1000));
	}
	f = fopen(path, "r");
	if (f == NULL)
		return fail(err, errlen, path, 0, "cannot open: %s", strerror(errno));
	while ((got = getline(&line, &cap, f)) >= 0) {
		char *s, *eq, *key, *val;

		ln++;
		if (strlen(line) != (size_t)got) {
			fclose(f);
			free(line);
			return fail(err, errlen, path, ln, "a NUL byte in the line (the file is text)");
		}
		strip_comment(line);
		s = trim(line);
		if (*s == '\0')
			continue;
		eq = strchr(s, '=');
		if (eq == NULL) {
			fclose(f);
			free(line);
			return fail(err, errlen, path, ln, "want KEY = VALUE (command, machine, "
					"output_dir, output_cap)");
		}
		*eq = '\0';
		key = trim(s);
		val = trim(eq + 1);
		int rc = 0;

		if (strncmp(key, "command", 7) == 0 && isspace((unsigned char)key[7])) {
			char *name = trim(key + 8);
			struct nl_wfarm_cmd *c;
			char *tok, why[300];

			if (!nl_farm_name_ok(name, strlen(name)))
				rc = fail(err, errlen, path, ln, "command name '%s': want 1..%u of "
					  "A-Z a-z 0-9 _ . + -", name, NL_FARM_NAME_MAX);
			for (unsigned int i = 0; rc == 0 && i < wf->n_cmd; i++)
				if (strcmp(wf->cmd[i].name, name) == 0)
					rc = fail(err, errlen, path, ln, "command '%s' defined twice",
						  name);
			if (rc == 0 && wf->n_cmd == NL_FARM_MAX_CMDS)
				rc = fail(err, errlen, path, ln, "more than %u commands",
					  NL_FARM_MAX_CMDS);
			if (rc == 0 && val[0] != '/')
				rc = fail(err, errlen, path, ln, "command '%s': the program must be an "
					  "absolute path (no shell, no PATH search), got '%s'",
					  name, val);
			if (rc == 0) {
				c = &wf->cmd[wf->n_cmd];
				snprintf(c->name, sizeof(c->name), "%s", name);
				c->dd_tok = -1;
				save = NULL;
				tok = strtok_r(val, " \t", &save);
				c->path = strdup(tok);
				if (c->path == NULL)
					rc = fail(err, errlen, path, ln, "out of memory");
				else if (nl_wfarm_program_ok(c->path, why, sizeof(why)) != 0)
					rc = fail(err, errlen, path, ln, "command '%s': %s", name, why);
				while (rc == 0 && (tok = strtok_r(NULL, " \t", &save)) != NULL) {
					if (c->n_tok == NL_WFARM_MAX_TOK) {
						rc = fail(err, errlen, path, ln, "more than %u template "
							  "arguments", NL_WFARM_MAX_TOK);
						break;
					}
					if (strstr(tok, "{@}") != NULL && strcmp(tok, "{@}") != 0) {
						rc = fail(err, errlen, path, ln, "'%s': {@} (every task "
							  "argument) must be a word of its own", tok);
						break;
					}
					for (const char *q = tok; (q = strchr(q, '{')) != NULL; q++)
						if ((q[1] >= '1' && q[1] <= '9' && q[2] == '}') ||
						    strncmp(q, "{@}", 3) == 0)
							c->has_ph = true;
					if (strcmp(tok, "--") == 0 && c->dd_tok < 0)
						c->dd_tok = (int)c->n_tok;
					c->tok[c->n_tok++] = strdup(tok);
				}
				wf->n_cmd++; /* freed by nl_wfarm_free() even on an error */
			}
		} else if (strncmp(key, "machine", 7) == 0 &&
			   (isspace((unsigned char)key[7]) || key[7] == '.')) {
			unsigned int lo = 0, hi = n_mach;
			char *attr = key + 7;
			char src[NL_FARM_AD_MAX + 80];
			struct nl_cad_prog *p = NULL;
			struct nl_cad_err ce;

			if (*attr == '.') {
				char *end;
				unsigned long k = strtoul(attr + 1, &end, 10);

				if (end == attr + 1 || !isspace((unsigned char)*end) || k >= n_mach) {
					rc = fail(err, errlen, path, ln, "machine.K: K must be a machine "
						  "index 0..%u (--mach order)", n_mach - 1);
				}
				lo = (unsigned int)k;
				hi = lo + 1;
				attr = end;
			}
			attr = trim(attr);
			if (rc == 0 && !attr_ok(attr))
				rc = fail(err, errlen, path, ln, "attribute name '%s': want a ClassAd "
					  "name (letters, digits, _)", attr);
			if (rc == 0 && strlen(attr) > NL_WFARM_ATTR_MAX)
				rc = fail(err, errlen, path, ln, "attribute name '%.20s...' is %zu bytes; "
					  "at most %u", attr, strlen(attr), NL_WFARM_ATTR_MAX);
			if (rc == 0 && strlen(val) > NL_FARM_AD_MAX)
				rc = fail(err, errlen, path, ln, "machine %s: the value is %zu bytes; at "
					  "most %u (a machine's whole record)", attr, strlen(val),
					  NL_FARM_AD_MAX);
			snprintf(src, sizeof(src), "%s = %s", attr, val);
			if (rc == 0 && nl_cad_parse(src, strlen(src), &p, &ce) != 0)
				rc = fail(err, errlen, path, ln, "ClassAd expression: %s (col %u)",
					  ce.msg, ce.col > strlen(attr) + 3 ?
							  ce.col - (unsigned int)strlen(attr) - 3 : 1);
			nl_cad_prog_free(p);
			for (unsigned int i = lo; rc == 0 && i < hi; i++)
				if (ad_set(wf->ad[i], attr, val) != 0)
					rc = fail(err, errlen, path, ln, "machine %u's record is over "
						  "%u bytes", i, NL_FARM_AD_MAX);
		} else if ((strncmp(key, "options", 7) == 0 && isspace((unsigned char)key[7])) ||
			   (strncmp(key, "principals", 10) == 0 && isspace((unsigned char)key[10]))) {
			rc = cmd_policy(wf, key, val, path, ln, err, errlen);
		} else if (strcmp(key, "output_dir") == 0) {
			if (strlen(val) == 0)
				rc = fail(err, errlen, path, ln, "output_dir: want a folder name");
			else if (strlen(val) >= sizeof(wf->out_dir) - 64)
				rc = fail(err, errlen, path, ln, "output_dir: the name is %zu bytes; at "
					  "most %zu", strlen(val), sizeof(wf->out_dir) - 65);
			else
				snprintf(wf->out_dir, sizeof(wf->out_dir), "%s", val), dir_line = ln;
		} else if (strcmp(key, "output_cap") == 0) {
			char *end;
			double v = strtod(val, &end);
			double mul = *end == 'k' || *end == 'K' ? 1024.0 :
				     *end == 'M' ? 1048576.0 : *end == 'G' ? 1073741824.0 : 1.0;

			if (mul > 1)
				end++;
			if (*end != '\0' || !(v >= 1) || v * mul > 1e15)
				rc = fail(err, errlen, path, ln, "output_cap: want a size in bytes "
					  "(k, M, G suffixes), got '%s'", val);
			else
				wf->out_cap = (uint64_t)(v * mul);
		} else {
			rc = fail(err, errlen, path, ln, "unknown key '%s' (command NAME, options NAME, "
				  "principals NAME, machine ATTR, machine.K ATTR, output_dir, "
				  "output_cap)", key);
		}
		if (rc != 0) {
			fclose(f);
			free(line);
			return -1;
		}
	}
	fclose(f);
	free(line);
	return open_out_dir(wf, path, dir_line, err, errlen);
}

void
nl_wfarm_free(struct nl_wfarm *wf)
{
	if (wf->have_dir)
		close(wf->out_dirfd);
	wf->have_dir = false;
	for (unsigned int i = 0; i < wf->n_cmd; i++) {
		free(wf->cmd[i].path);
		free(wf->cmd[i].pr_text);
		for (unsigned int k = 0; k < wf->cmd[i].n_tok; k++)
			free(wf->cmd[i].tok[k]);
	}
	wf->n_cmd = 0;
}

void
nl_wfarm_cmds_msg(const struct nl_wfarm *wf, uint32_t wid, struct nl_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = NL_MSG_CMDS;
	m->u.farm.cmds.worker_id = wid;
	m->u.farm.cmds.n = (uint8_t)wf->n_cmd;
	for (unsigned int i = 0; i < wf->n_cmd; i++) {
		struct nl_farm_cmd *c = &m->u.farm.cmds.cmd[i];

		c->id = (uint16_t)(NL_WFARM_ID0 + i);
		c->len = (uint8_t)strlen(wf->cmd[i].name);
		memcpy(c->name, wf->cmd[i].name, c->len);
	}
}

void
nl_wfarm_ad_msg(const struct nl_wfarm *wf, uint32_t wid, unsigned int i, struct nl_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = NL_MSG_MACHAD;
	m->u.farm.machad.worker_id = wid;
	m->u.farm.machad.mach = (uint16_t)i;
	m->u.farm.machad.len = (uint16_t)strlen(wf->ad[i]);
	memcpy(m->u.farm.machad.ad, wf->ad[i], m->u.farm.machad.len);
}

const struct nl_wfarm_cmd *
nl_wfarm_find(const struct nl_wfarm *wf, uint16_t cmd_id)
{
	if (wf == NULL || cmd_id < NL_WFARM_ID0 || cmd_id - NL_WFARM_ID0 >= wf->n_cmd)
		return NULL;
	return &wf->cmd[cmd_id - NL_WFARM_ID0];
}

#define MAX_ARGV 80u

/*
 * Open output file name (no '/') in the output folder for a command: any earlier file of
 * that name is removed first (a retry of the task rewrites its own file), then a new one is
 * created exclusively (O_EXCL | O_NOFOLLOW: never through a link another user planted, nor
 * into a file that appeared in between), mode 0640. @return the descriptor or -errno.
 */
static int
out_open(const struct nl_wfarm *wf, const char *name)
{
	int fd;

	if (!wf->have_dir)
		return -EBADF;
	if (unlinkat(wf->out_dirfd, name, 0) != 0 && errno != ENOENT)
		return -errno;
	fd = openat(wf->out_dirfd, name,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0640);
	return fd >= 0 ? fd : -errno;
}

/* Split a DISPATCH's NUL-separated arguments (args must hold args_len + 1 bytes). */
static unsigned int
split_args(const struct nl_msg_dispatch *d, char *args, char **targ)
{
	unsigned int n = 0;

	memcpy(args, d->args, d->args_len);
	args[d->args_len] = '\0';
	for (unsigned int i = 0; i < d->args_len;) {
		targ[n++] = &args[i];
		while (i < d->args_len && args[i] != '\0')
			i++;
		i++;
	}
	return n;
}

int
nl_wfarm_check(const struct nl_wfarm_cmd *c, const struct nl_msg_dispatch *d, char *why,
	       size_t whylen)
{
	char args[NL_PROTO_MAX_ARGS + 1], *targ[NL_PROTO_MAX_ARGS + 1];
	unsigned int n = split_args(d, args, targ), bad = 0;

	if (c->restricted) {
		bool ok = false;

		for (unsigned int i = 0; i < c->n_pr; i++)
			ok |= c->pr[i] == d->principal;
		if (!ok) {
			if (d->principal == 0)
				snprintf(why, whylen, "the site key's holder (%s) may not run command "
					 "'%s' on this worker (principals %s = %s)", NL_WFARM_OPERATOR,
					 c->name, c->name, c->pr_text);
			else
				snprintf(why, whylen, "principal id %08x may not run command '%s' on "
					 "this worker (principals %s = %s)", d->principal, c->name,
					 c->name, c->pr_text);
			return -EACCES;
		}
	}
	if (c->options)
		return 0;
	/* where a task argument begins an argv word before the template's "--" */
	for (unsigned int k = 0; k < c->n_tok && bad == 0; k++) {
		const char *t = c->tok[k];

		if (c->dd_tok >= 0 && (int)k > c->dd_tok)
			break;
		if (strcmp(t, "{@}") == 0) {
			for (unsigned int j = 0; j < n && bad == 0; j++)
				if (targ[j][0] == '-')
					bad = j + 1;
		} else if (t[0] == '{' && t[1] >= '1' && t[1] <= '9' && t[2] == '}') {
			unsigned int j = (unsigned int)(t[1] - '1');

			if (j < n && targ[j][0] == '-')
				bad = j + 1;
		}
	}
	if (!c->has_ph && c->dd_tok < 0) /* appended at the end, with no "--" before them */
		for (unsigned int j = 0; j < n && bad == 0; j++)
			if (targ[j][0] == '-')
				bad = j + 1;
	if (bad == 0)
		return 0;
	snprintf(why, whylen, "task argument %u '%.40s' starts with '-': command '%s' takes no "
		 "options from tasks (put its task arguments after a '--' word of its template, "
		 "or write 'options %s = allow' in the commands file; docs/taskfarm.md)", bad,
		 targ[bad - 1], c->name, c->name);
	return -EACCES;
}

int
nl_wfarm_spawn(const struct nl_wfarm *wf, const struct nl_wfarm_cmd *c,
	       const struct nl_msg_dispatch *d, const struct nl_harden_limits *lim, pid_t *pid)
{
	char args[NL_PROTO_MAX_ARGS + 1];
	char *targ[NL_PROTO_MAX_ARGS + 1];
	char *argv[MAX_ARGV + 1];
	unsigned int n_targ = 0, argc = 0;
	char out[64], errp[64];
	char scratch[4096], *sp = scratch; /* template words with {k} replaced */
	pid_t p;

	if (nl_wfarm_check(c, d, scratch, sizeof(scratch)) != 0) { /* #35: refused, not run */
		nl_wfarm_note(wf, d, scratch);
		return -EACCES;
	}
	n_targ = split_args(d, args, targ);
	argv[argc++] = c->path;
	for (unsigned int k = 0; k < c->n_tok && argc < MAX_ARGV; k++) {
		const char *t = c->tok[k];

		if (strcmp(t, "{@}") == 0) {
			for (unsigned int j = 0; j < n_targ && argc < MAX_ARGV; j++)
				argv[argc++] = targ[j];
			continue;
		}
		argv[argc++] = sp;
		while (*t != '\0') {
			const char *v = NULL;

			if (t[0] == '{' && t[1] >= '1' && t[1] <= '9' && t[2] == '}') {
				unsigned int j = (unsigned int)(t[1] - '1');

				if (j >= n_targ)
					return -EINVAL; /* the task has fewer arguments */
				v = targ[j];
				t += 3;
			}
			size_t l = v != NULL ? strlen(v) : 1;

			if ((size_t)(sp - scratch) + l + 1 >= sizeof(scratch))
				return -E2BIG;
			memcpy(sp, v != NULL ? v : t, l);
			sp += l;
			if (v == NULL)
				t++;
		}
		*sp++ = '\0';
	}
	if (!c->has_ph)
		for (unsigned int j = 0; j < n_targ && argc < MAX_ARGV; j++)
			argv[argc++] = targ[j];
	argv[argc] = NULL;
	snprintf(out, sizeof(out), "%u_%u.%u.out", (unsigned int)(d->task_id >> 32),
		 (unsigned int)(d->task_id & 0xffffffffu), d->sub);
	snprintf(errp, sizeof(errp), "%u_%u.%u.err", (unsigned int)(d->task_id >> 32),
		 (unsigned int)(d->task_id & 0xffffffffu), d->sub);
	/* The hardened start (issue #16, nl_harden.h): cleared environment, no inherited
	 * descriptors, its own process group, signals at their defaults, the --rlimit limits;
	 * RLIMIT_FSIZE = nl_wfarm_fsize(): a write past it ends the command with SIGXFSZ. */
	int ofd = out_open(wf, out), efd, rc;
	struct nl_harden_limits l = { 0 };

	if (ofd < 0)
		return ofd;
	efd = out_open(wf, errp);
	if (efd < 0) {
		close(ofd);
		return efd;
	}
	if (lim != NULL)
		l = *lim;
	l.fsize_bytes = nl_wfarm_fsize(wf, lim);
	rc = nl_harden_spawn(c->path, argv, &l, ofd, efd, &p);
	close(ofd);
	close(efd);
	if (rc != 0)
		return rc;
	*pid = p;
	return 0;
}

int
nl_wfarm_note(const struct nl_wfarm *wf, const struct nl_msg_dispatch *d, const char *why)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "%u_%u.%u.err", (unsigned int)(d->task_id >> 32),
		 (unsigned int)(d->task_id & 0xffffffffu), d->sub);
	fd = out_open(wf, name);
	if (fd < 0)
		return fd;
	dprintf(fd, "nlevel-worker: refused, not run: %s\n", why);
	close(fd);
	return 0;
}

uint64_t
nl_wfarm_fsize(const struct nl_wfarm *wf, const struct nl_harden_limits *lim)
{
	uint64_t v = wf->out_cap;
	struct rlimit rl;

	if (lim != NULL && lim->fsize_bytes > 0 && lim->fsize_bytes < v)
		v = lim->fsize_bytes;
	/* an unprivileged worker's command cannot go above the worker's own hard limit */
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
	    (uint64_t)rl.rlim_max < v)
		v = (uint64_t)rl.rlim_max;
	return v > 0 ? v : 1;
}
