/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-submit: submit a task farm to an nlevel appliance and follow it (issue #15,
 * docs/taskfarm.md). Plain UDP sockets, no DPDK.
 *
 *   nlevel-submit --appliance IP[:PORT] [options] TASKFILE
 *   nlevel-submit --appliance IP[:PORT] [options] --array A-B[:STEP] COMMAND [ARG ...]
 *   nlevel-submit --appliance IP[:PORT] --status SUBMIT_ID [--tasks]
 *   nlevel-submit --appliance IP[:PORT] --cancel SUBMIT_ID[.INDEX]
 *   nlevel-submit --appliance IP[:PORT] --wait SUBMIT_ID
 *
 * A task file holds one task a line: a command name the workers offer (their --commands
 * file) and its arguments (whitespace-separated, '...' or "..." quote one argument with
 * spaces). Lines starting with '@' set what the following tasks carry: `@requirements EXPR`,
 * `@rank EXPR` (ClassAd, HTCondor's matchmaking semantics, evaluated against the machines'
 * records), `@need VECTOR` (resource vector, e.g. 01), `@split L` (sub-tasks), `@time S`
 * (wall-clock limit, issue #33). '#' starts a
 * comment line. Every error names FILE:LINE and nothing is sent.
 *
 * Each distinct (command, Requirements, Rank) is registered once (REGISTER -> handle); tasks
 * go out as FSUBMIT with a window of tasks in flight; REJECT overload is retried with
 * exponential backoff, failed tasks (non-zero exit, machine lost) up to --retries times. The
 * job log (CSV) records every attempt; --resume skips what it records as succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "nl_classad.h"
#include "nl_principal.h"
#include "nl_proto.h"

#define MAX_HANDLES 256u
#define NL_SUBMIT_MAX_WORDS 40u        /* words of a task: the command and 39 arguments */
#define NL_SUBMIT_MAX_TASKS 50000001u  /* tasks of one submit (--array values) */

/* REJECT reasons on the wire (docs/protocol.md) */
enum { NL_REJECT_NO_MACHINE = 1, NL_REJECT_BAD_TASK = 2, NL_REJECT_OVERLOAD = 3,
       NL_REJECT_MACHINE_LOST = 4, NL_REJECT_NO_HANDLE = 7, NL_REJECT_CANCELLED = 8 };
/* 9 shutdown (#34): NL_REJECT_SHUTDOWN, nl_proto.h */

enum tstate { T_PENDING = 0, T_SENT, T_RUNNING, T_OK, T_FAILED, T_SKIPPED };

struct task {
	uint32_t index;        /* task index (array value, or 1-based task number) */
	uint32_t line;         /* source line (0 for --array) */
	uint16_t hk;           /* handle key index */
	uint8_t args_len;
	uint8_t state;
	uint8_t attempt;       /* attempts made (numbered across --resume: the job log's) */
	uint8_t n_split;
	uint8_t last_reason;   /* REJECT reason of the last failure, 0 = exit status */
	uint64_t need;
	uint8_t args[NL_PROTO_MAX_ARGS];
	int32_t status;
	uint64_t t_send_ns;    /* this attempt's first send */
	uint64_t t_retry_ns;   /* not before (backoff) */
	uint64_t t_accept_ns;
	uint32_t backoff_ms;
	uint32_t worker_id, slot, disp_us;
	uint16_t mach;
	bool have_info;
	uint32_t tl_ms;        /* #33: wall-clock limit (--time, @time), 0 = none */
	struct nl_msg_taskinfo ti; /* #33: the last TASKINFO (its end record: state, times) */
	uint64_t t_heard_ns;   /* #34: accepted: the last send or word of it */
	uint8_t n_resend;      /* #34: resends of this attempt since it was accepted */
};

struct hkey {
	char name[NL_FARM_NAME_MAX + 1];
	char *req, *rank;
	uint32_t handle;
	uint32_t first_line;   /* for errors */
	uint16_t n_match;
};

static struct {
	int fd;
	struct sockaddr_in app;
	const struct nl_auth_key *key;
	const char *principal; /* --principal NAME (#35), or NULL: the site key */
	struct nl_auth_tx tx;
	struct nl_replay rp;
	const char *file;
	struct task *t;
	uint32_t n, cap;
	struct hkey hk[MAX_HANDLES];
	unsigned int n_hk;
	uint64_t submit_id;
	FILE *log;
	uint64_t t0_ns;
	/* counters */
	uint32_t n_ok, n_failed, n_rejected, n_running, n_skipped, n_retried, n_overload;
	uint32_t n_resent;     /* #34: accepted tasks sent again for want of a final answer */
	/* the first send since the appliance's last answer [ns, now_ns()]; 0: every send answered.
	 * A silence counts as the appliance's (down, restarting, held) only while asked. */
	uint64_t asked_ns;
	uint32_t n_timeout, n_cancelled; /* #33: final states of their own (not exit codes) */
	uint32_t n_shutdown;   /* #34: REJECT shutdown (the appliance stops): not run */
	uint32_t n_not_sent;   /* #34: not sent once the appliance said it stops */
	bool shutting;         /* #34: a REJECT shutdown came: send nothing new */
	uint32_t tl_ms;        /* --time */
	uint32_t in_flight;    /* tasks SENT or RUNNING */
	int ready_fd;          /* background: written once the appliance answered (-1: none) */
	double *start_ms;
	uint32_t n_start;
} S;

static volatile sig_atomic_t stop_flag;

static void
on_sig(int s)
{
	(void)s;
	stop_flag = 1;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double
wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
ferr(const char *file, unsigned int line, const char *fmt, ...)
{
	va_list ap;

	if (line > 0)
		fprintf(stderr, "%s:%u: ", file, line);
	else
		fprintf(stderr, "nlevel-submit: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* What to check when the appliance does not answer: the key, and the principal it is for. */
static const char *
key_hint(void)
{
	static char h[160];

	if (S.principal == NULL)
		return "";
	snprintf(h, sizeof(h), ", and is %s a principal of its --principals whose key --key "
		 "holds (nlevel-key --principal %s)", S.principal, S.principal);
	return h;
}

static void
send_msg(const struct nl_msg *m)
{
	uint8_t buf[NL_PROTO_MAX_LEN];
	int n = nl_proto_seal(m, S.key != NULL ? &S.tx : NULL, nl_auth_now_ns(), buf, sizeof(buf));

	if (n > 0)
		(void)sendto(S.fd, buf, (size_t)n, 0, (const struct sockaddr *)&S.app, sizeof(S.app));
	if (S.asked_ns == 0)
		S.asked_ns = now_ns();
}

/* Receive one message (waits up to ms). 1 = got one, 0 = none. */
static int
recv_msg(struct nl_msg *m, int ms)
{
	struct pollfd pfd = { .fd = S.fd, .events = POLLIN };

	for (;;) {
		uint8_t buf[2048];
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(S.fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);

		if (n < 0) {
			if (ms <= 0 || poll(&pfd, 1, ms) <= 0)
				return 0;
			ms = 0;
			continue;
		}
		if (from.sin_addr.s_addr != S.app.sin_addr.s_addr || from.sin_port != S.app.sin_port)
			continue;
		if (nl_proto_open(S.key, &S.rp, buf, (size_t)n, nl_auth_now_ns(), m) == NL_PROTO_OK)
			return 1;
	}
}

/* ---- task file ---- */

/* Split a task line into words (quotes group); returns the count or -1 (err set). */
static int
split_words(char *s, char **w, int max, const char **err)
{
	int n = 0;

	for (;;) {
		char *o;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '\n' || *s == '\r')
			return n;
		if (n == max) {
			*err = "too many arguments";
			return -1;
		}
		w[n++] = o = s;
		while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') {
			if (*s == '\'' || *s == '"') {
				char q = *s++;

				while (*s != '\0' && *s != q)
					*o++ = *s++;
				if (*s != q) {
					*err = "unterminated quote";
					return -1;
				}
				s++;
			} else {
				*o++ = *s++;
			}
		}
		if (*s != '\0')
			s++;
		*o = '\0';
	}
}

static int
parse_vector(const char *v, uint64_t *need)
{
	size_t n = strlen(v);

	*need = 0;
	if (n == 0 || n > 64)
		return -1;
	for (size_t k = 0; k < n; k++) {
		if (v[k] == '1')
			*need |= UINT64_C(1) << k;
		else if (v[k] != '0')
			return -1;
	}
	return 0;
}

static int
check_expr(const char *what, const char *e, const char *file, unsigned int line)
{
	struct nl_cad_prog *p = NULL;
	struct nl_cad_err ce;
	int rc;

	if (strlen(e) > NL_FARM_EXPR_MAX)
		return ferr(file, line, "%s is %zu bytes; at most %u", what, strlen(e),
			    NL_FARM_EXPR_MAX);
	rc = nl_cad_parse_match("", 0, &p, NULL);
	if (rc == 0)
		rc = nl_cad_parse_expr(p, e, strlen(e), &ce);
	nl_cad_prog_free(p);
	if (rc < 0)
		return ferr(file, line, "%s: column %u: %s", what, ce.col, ce.msg);
	return 0;
}

static int
hkey_of(const char *name, const char *req, const char *rank, unsigned int line)
{
	for (unsigned int i = 0; i < S.n_hk; i++)
		if (strcmp(S.hk[i].name, name) == 0 && strcmp(S.hk[i].req, req) == 0 &&
		    strcmp(S.hk[i].rank, rank) == 0)
			return (int)i;
	if (S.n_hk == MAX_HANDLES)
		return -1;
	snprintf(S.hk[S.n_hk].name, sizeof(S.hk[0].name), "%s", name);
	S.hk[S.n_hk].req = strdup(req);
	S.hk[S.n_hk].rank = strdup(rank);
	S.hk[S.n_hk].first_line = line;
	return (int)S.n_hk++;
}

static struct task *
new_task(void)
{
	if (S.n == S.cap) {
		uint32_t nc = S.cap ? S.cap * 2 : 1024;
		struct task *nt = realloc(S.t, nc * sizeof(*nt));

		if (nt == NULL)
			return NULL;
		S.t = nt;
		S.cap = nc;
	}
	memset(&S.t[S.n], 0, sizeof(S.t[0]));
	return &S.t[S.n++];
}

/* Pack words into NUL-separated arguments; -1 when over NL_PROTO_MAX_ARGS. */
static int
pack_args(char **w, int n, struct task *t)
{
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		size_t l = strlen(w[i]) + 1;

		if (len + l > NL_PROTO_MAX_ARGS)
			return -1;
		memcpy(t->args + len, w[i], l);
		len += l;
	}
	t->args_len = (uint8_t)len;
	return 0;
}

/* A wall-clock limit in seconds (0 = none) into ms; -1 when not a number in range. */
static int
parse_time(const char *v, uint32_t *ms)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end != '\0' || !(d >= 0) || d > 4294967.0 || (d > 0 && d < 0.001))
		return -1;
	*ms = (uint32_t)(d * 1000 + 0.5);
	return 0;
}

static int
read_taskfile(const char *file, uint16_t split0, uint64_t need0, const char *req0,
	      const char *rank0)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
	char *line = NULL, req[NL_FARM_EXPR_MAX + 2], rank[NL_FARM_EXPR_MAX + 2];
	size_t cap = 0;
	unsigned int ln = 0;
	uint16_t split = split0;
	uint64_t need = need0;
	uint32_t tl_ms = S.tl_ms;
	ssize_t got;
	int rc = 0;

	if (f == NULL)
		return ferr(file, 0, "cannot open task file %s: %s", file, strerror(errno));
	snprintf(req, sizeof(req), "%s", req0);
	snprintf(rank, sizeof(rank), "%s", rank0);
	while (rc == 0 && (got = getline(&line, &cap, f)) >= 0) {
		char *s = line, *w[NL_SUBMIT_MAX_WORDS];
		const char *why = NULL;
		int n;

		ln++;
		if (strlen(line) != (size_t)got) {
			rc = ferr(file, ln, "a NUL byte in the line (a task file is text)");
			break;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '#' || *s == '\n' || *s == '\r' || *s == '\0')
			continue;
		s[strcspn(s, "\r\n")] = '\0';
		if (*s == '@') {
			char *arg = s + strcspn(s, " \t");

			if (*arg != '\0')
				*arg++ = '\0';
			while (*arg == ' ' || *arg == '\t')
				arg++;
			if (strcmp(s, "@requirements") == 0 || strcmp(s, "@rank") == 0) {
				bool is_req = s[1] == 'r' && s[2] == 'e';

				rc = *arg == '\0' ? 0 : check_expr(is_req ? "Requirements" : "Rank", arg,
								   file, ln);
				if (rc == 0)
					snprintf(is_req ? req : rank, sizeof(req), "%s", arg);
			} else if (strcmp(s, "@need") == 0) {
				if (parse_vector(arg, &need) != 0)
					rc = ferr(file, ln, "@need: want a vector of 0 and 1 (resource 1 "
						  "first, at most 64), got '%s'", arg);
			} else if (strcmp(s, "@split") == 0) {
				char *end;
				long v = strtol(arg, &end, 10);

				if (*end != '\0' || v < 1 || v > (long)NL_PROTO_MAX_SPLIT)
					rc = ferr(file, ln, "@split: want 1..%u, got '%s'",
						  NL_PROTO_MAX_SPLIT, arg);
				else
					split = (uint16_t)v;
			} else if (strcmp(s, "@time") == 0) { /* #33 */
				if (parse_time(arg, &tl_ms) != 0)
					rc = ferr(file, ln, "@time: want seconds 0.001..4294967 (0 = no "
						  "limit), got '%s'", arg);
			} else {
				rc = ferr(file, ln, "unknown directive '%s' (@requirements, @rank, "
					  "@need, @split, @time)", s);
			}
			continue;
		}
		n = split_words(s, w, (int)NL_SUBMIT_MAX_WORDS, &why);
		if (n < 0) {
			rc = ferr(file, ln, "%s", why);
			break;
		}
		if (!nl_farm_name_ok(w[0], strlen(w[0]))) {
			rc = ferr(file, ln, "command name '%s': want 1..%u of A-Z a-z 0-9 _ . + -",
				  w[0], NL_FARM_NAME_MAX);
			break;
		}
		struct task *t = new_task();
		int hk = hkey_of(w[0], req, rank, ln);

		if (t == NULL || hk < 0) {
			rc = ferr(file, ln, t == NULL ? "out of memory" :
				  "more than %u distinct (command, Requirements, Rank)", MAX_HANDLES);
			break;
		}
		if (pack_args(w + 1, n - 1, t) != 0) {
			rc = ferr(file, ln, "arguments of '%s' are over %u bytes (NUL-separated); "
				  "pass a file name instead", w[0], NL_PROTO_MAX_ARGS);
			break;
		}
		t->index = S.n;
		t->line = ln;
		t->hk = (uint16_t)hk;
		t->need = need;
		t->n_split = (uint8_t)split;
		t->tl_ms = tl_ms;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (rc == 0 && S.n == 0)
		rc = ferr(file, 0, "%s holds no task", file);
	return rc;
}

/*
 * A decimal integer 0..UINT32_MAX made of digits only (no sign, no space, no 0x): *end is the
 * first character after it. -1 when there is no digit or the value is over UINT32_MAX.
 */
static int
parse_u32_digits(const char *s, unsigned long *v, const char **end)
{
	unsigned long x = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		x = x * 10 + (unsigned long)(*p - '0');
		if (x > UINT32_MAX)
			return -1;
	}
	*v = x;
	*end = p;
	return p == s ? -1 : 0;
}

static int
make_array(const char *spec, char **words, int n_words, uint16_t split, uint64_t need,
	   const char *req, const char *rank)
{
	unsigned long a, b, step = 1;
	const char *end;
	int hk;

	if (parse_u32_digits(spec, &a, &end) != 0 || *end != '-' ||
	    parse_u32_digits(end + 1, &b, &end) != 0 ||
	    (*end == ':' && parse_u32_digits(end + 1, &step, &end) != 0) || *end != '\0')
		return ferr("--array", 0, "--array: want A-B[:STEP] of unsigned decimal integers, "
			    "e.g. 1-10000 or 0-99:2, got '%s'", spec);
	if (b < a || step == 0 || b > UINT32_MAX - 1)
		return ferr("--array", 0, "--array: want A <= B <= %lu and STEP >= 1, got '%s'",
			    (unsigned long)UINT32_MAX - 1, spec);
	if ((b - a) / step >= NL_SUBMIT_MAX_TASKS)
		return ferr("--array", 0, "--array: '%s' is %lu values; at most %u tasks a submit",
			    spec, (b - a) / step + 1, NL_SUBMIT_MAX_TASKS);
	if (n_words > (int)NL_SUBMIT_MAX_WORDS)
		return ferr("--array", 0, "too many arguments (%d; at most %u after the command)",
			    n_words - 1, NL_SUBMIT_MAX_WORDS - 1);
	if (!nl_farm_name_ok(words[0], strlen(words[0])))
		return ferr("--array", 0, "command name '%s': want 1..%u of A-Z a-z 0-9 _ . + -",
			    words[0], NL_FARM_NAME_MAX);
	hk = hkey_of(words[0], req, rank, 0);
	for (unsigned long v = a; v <= b; v += step) {
		char *w[NL_SUBMIT_MAX_WORDS], num[24];
		char buf[NL_SUBMIT_MAX_WORDS][NL_PROTO_MAX_ARGS + 1];
		struct task *t = new_task();

		if (t == NULL)
			return ferr("--array", 0, "out of memory");
		snprintf(num, sizeof(num), "%lu", v);
		for (int i = 1; i < n_words; i++) {
			const char *src = words[i];
			char *o = buf[i];
			size_t room = sizeof(buf[i]) - 1;

			while (*src != '\0' && room > 0) {
				if (src[0] == '{' && src[1] == '}') {
					size_t l = strlen(num) < room ? strlen(num) : room;

					memcpy(o, num, l);
					o += l;
					room -= l;
					src += 2;
				} else {
					*o++ = *src++;
					room--;
				}
			}
			*o = '\0';
			if (*src != '\0')
				return ferr("--array", 0, "arguments are over %u bytes for index %lu",
					    NL_PROTO_MAX_ARGS, v);
			w[i - 1] = buf[i];
		}
		if (pack_args(w, n_words - 1, t) != 0)
			return ferr("--array", 0, "arguments are over %u bytes (NUL-separated) for "
				    "index %lu", NL_PROTO_MAX_ARGS, v);
		t->index = (uint32_t)v;
		t->hk = (uint16_t)hk;
		t->need = need;
		t->n_split = (uint8_t)split;
		t->tl_ms = S.tl_ms;
	}
	return 0;
}

/* ---- register ---- */

static int
register_all(double timeout_s)
{
	uint64_t t_end = now_ns() + (uint64_t)(timeout_s * 1e9);

	for (unsigned int i = 0; i < S.n_hk; i++) {
		struct hkey *h = &S.hk[i];
		struct nl_msg m = { .type = NL_MSG_REGISTER }, r;
		struct nl_msg_register *rg = &m.u.farm.reg;
		uint64_t next = 0;
		bool got = false;

		rg->req_id = ((uint64_t)S.submit_id << 32) | i;
		rg->name_len = (uint8_t)strlen(h->name);
		memcpy(rg->name, h->name, rg->name_len);
		rg->req_len = (uint16_t)strlen(h->req);
		memcpy(rg->req, h->req, rg->req_len);
		rg->rank_len = (uint16_t)strlen(h->rank);
		memcpy(rg->rank, h->rank, rg->rank_len);
		while (!got && !stop_flag) {
			uint64_t now = now_ns();
			/* past the deadline: what already came is still read (this process may
			 * have been held past it by the host with the answer waiting), not sent */
			bool last = now >= t_end;

			if (!last && now >= next) {
				send_msg(&m);
				next = now + 200000000ull;
			}
			while (recv_msg(&r, last ? 0 : 20) == 1) {
				if (r.type != NL_MSG_REGISTERED || r.u.farm.regd.req_id != rg->req_id)
					continue;
				got = true;
				break;
			}
			if (last && !got)
				return ferr(NULL, 0, "no answer from the appliance to REGISTER (%s:%u, "
					    "%g s): is it running, and is --key the appliance's%s?",
					    inet_ntoa(S.app.sin_addr), ntohs(S.app.sin_port), timeout_s,
					    key_hint());
		}
		if (!got)
			return -1;
		const struct nl_msg_registered *rd = &r.u.farm.regd;
		const char *f = h->first_line > 0 ? S.file : "--array";

		switch (rd->status) {
		case NL_FARM_REG_OK:
			h->handle = rd->handle;
			h->n_match = rd->n_match;
			break;
		case NL_FARM_REG_UNKNOWN_CMD:
			return ferr(f, h->first_line, "unknown command '%s': no worker of the "
				    "appliance offers it (their --commands files)%s%s; nothing was "
				    "submitted", h->name, rd->err_len ? "; offered: " : "",
				    rd->err_len ? rd->err : "");
		default:
			return ferr(f, h->first_line, "the appliance refused %s: %s (%s)", h->name,
				    nl_farm_reg_name(rd->status), rd->err);
		}
	}
	return 0;
}

/* ---- job log ---- */

static void
csv_field(FILE *f, const uint8_t *args, unsigned int len)
{
	fputc('"', f);
	for (unsigned int i = 0; i < len; i++) {
		char c = (char)args[i];

		if (c == '\0')
			c = i + 1 < len ? ' ' : '\0';
		if (c == '\0')
			break;
		if (c == '"')
			fputc('"', f);
		fputc(c, f);
	}
	fputc('"', f);
}

static const char *
reason_name(unsigned int r)
{
	static const char *const n[] = { "exit", "no_machine", "bad_task", "overload",
					 "machine_lost", "quota", "?", "no_handle", "cancelled",
					 "shutdown" };

	return r < sizeof(n) / sizeof(n[0]) ? n[r] : "?";
}

static void
log_attempt(const struct task *t, const char *result)
{
	double now = wall_s();
	double rt = (double)(now_ns() - t->t_send_ns) * 1e-9;

	if (S.log == NULL)
		return;
	fprintf(S.log, "%u,%llu,%u,%s,", t->index, (unsigned long long)(S.submit_id << 32 | t->index),
		t->attempt, S.hk[t->hk].name);
	csv_field(S.log, t->args, t->args_len);
	if (t->have_info)
		fprintf(S.log, ",w%u.%u,%u", t->worker_id, t->mach, t->slot);
	else
		fprintf(S.log, ",,");
	fprintf(S.log, ",%.6f,%.6f", now - rt, now);
	if (t->have_info && t->ti.has_end) /* #33: queue wait and run time apart; CPU, memory */
		fprintf(S.log, ",%.3f,%.3f,%.3f,%u", t->ti.queue_ms * 1e-3, t->ti.run_ms * 1e-3,
			t->ti.cpu_ms * 1e-3, t->ti.mem_kib);
	else if (t->have_info)
		fprintf(S.log, ",%.3f,%.3f,,", t->disp_us * 1e-6, t->ti.run_us * 1e-6);
	else
		fprintf(S.log, ",,,,");
	fprintf(S.log, ",%d,%s,%llu_%u.0.out\n", t->status, result,
		(unsigned long long)S.submit_id, t->index);
}

/*
 * One record of a job log: a line, joined with the next ones while a quoted field is open (the
 * args field holds the task's arguments as they are, newlines included; RFC 4180). The
 * trailing newline is removed. @return the record's length, or -1 at the end of the file.
 */
static ssize_t
read_record(FILE *f, char **rec, size_t *cap, unsigned int *ln)
{
	char *more = NULL;
	size_t mcap = 0;
	ssize_t n = getline(rec, cap, f), m;
	bool open_q = false;

	if (n < 0)
		return -1;
	(*ln)++;
	for (;;) {
		for (ssize_t i = 0; i < n; i++)
			if ((*rec)[i] == '"')
				open_q = !open_q;
		if (!open_q || (m = getline(&more, &mcap, f)) < 0)
			break;
		(*ln)++;
		if ((size_t)(n + m + 1) > *cap) {
			char *nr = realloc(*rec, (size_t)(n + m + 1));

			if (nr == NULL)
				break;
			*rec = nr;
			*cap = (size_t)(n + m + 1);
		}
		for (ssize_t i = 0; i < m; i++)
			if (more[i] == '"')
				open_q = !open_q;
		memcpy(*rec + n, more, (size_t)m + 1);
		n += m;
		if (!open_q)
			break;
	}
	free(more);
	if (n > 0 && (*rec)[n - 1] == '\n')
		(*rec)[--n] = '\0';
	if (n > 0 && (*rec)[n - 1] == '\r')
		(*rec)[--n] = '\0';
	return n;
}

/* The task of index idx, or NULL (S.t is in ascending index order: file order, array order). */
static struct task *
task_of_index(uint32_t idx)
{
	uint32_t lo = 0, hi = S.n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (S.t[mid].index == idx)
			return &S.t[mid];
		if (S.t[mid].index < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * --resume: the tasks (already read) whose last logged result is ok are marked T_SKIPPED; the
 * submit id is reused. Records are read as CSV (a quoted field may hold newlines); the first
 * three fields must be unsigned decimal integers (index < 2^32, task_id < 2^64, attempt),
 * else FILE:LINE "not a job log line". Indexes of no task of this submit are ignored.
 */
static int
read_joblog(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned int ln = 0, first;
	ssize_t len;
	int rc = 0;

	if (f == NULL)
		return errno == ENOENT ? 0 : ferr(path, 0, "cannot read job log: %s", strerror(errno));
	for (first = 1; (len = read_record(f, &line, &cap, &ln)) >= 0; first = ln + 1) {
		unsigned long idx, att;
		unsigned long long tid = 0;
		const char *p;
		char *res;
		struct task *t;

		if (first == 1 && strncmp(line, "index,", 6) == 0)
			continue;
		if (strlen(line) != (size_t)len || parse_u32_digits(line, &idx, &p) != 0 ||
		    *p != ',' || p[1] < '0' || p[1] > '9') {
			rc = ferr(path, first, "not a job log line of nlevel-submit");
			break;
		}
		errno = 0;
		tid = strtoull(p + 1, &res, 10);
		if (errno != 0 || *res != ',' || parse_u32_digits(res + 1, &att, &p) != 0 ||
		    *p != ',' || (tid & 0xffffffffull) != idx) {
			rc = ferr(path, first, "not a job log line of nlevel-submit");
			break;
		}
		if (S.submit_id == 0)
			S.submit_id = tid >> 32;
		/* result is the second-to-last field (neither it nor stdout holds a comma) */
		res = strrchr(line, ',');
		if (res != NULL) {
			*res = '\0';
			res = strrchr(line, ',');
		}
		t = task_of_index((uint32_t)idx);
		if (res != NULL && t != NULL)
			t->state = strcmp(res + 1, "ok") == 0 ? T_SKIPPED : T_PENDING;
		if (t != NULL && att > t->attempt) /* #33: attempts go on from the log's */
			t->attempt = att > 254 ? 254 : (uint8_t)att;
	}
	free(line);
	fclose(f);
	return rc;
}

/* ---- the run ---- */

/* p-quantile of sorted v[0..n-1] (nearest rank below). */
static double
pct(const double *v, uint32_t n, double p)
{
	return n == 0 ? NAN : v[(uint32_t)((double)(n - 1) * p)];
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
send_task(struct task *t, uint64_t now)
{
	struct nl_msg m = { .type = NL_MSG_FSUBMIT };
	struct nl_msg_fsubmit *s = &m.u.farm.fsubmit;

	s->task_id = S.submit_id << 32 | t->index;
	s->need = t->need;
	s->instr = 1000000;
	s->client_ts_ns = now;
	s->handle = S.hk[t->hk].handle;
	s->n_split = t->n_split;
	s->args_len = t->args_len;
	s->attempt = t->attempt; /* a resend carries the same attempt: answered, not run again */
	s->time_limit_ms = t->tl_ms; /* #33 */
	memcpy(s->args, t->args, t->args_len);
	send_msg(&m);
	if (t->state != T_SENT) {
		t->t_send_ns = now;
		S.in_flight++;
	}
	t->state = T_SENT;
	t->t_retry_ns = now + 2000000000ull; /* resend when neither ACCEPT nor REJECT came */
}

/*
 * #34: an accepted task without a final answer is sent again, the same attempt, after 5, 10,
 * 20, 40 and then every 60 s without a word of it: the appliance answers from its state (ACCEPT
 * while it runs, its final answer again once it ended; docs/taskfarm.md "Exactly once"),
 * never runs it twice; so a COMPLETE lost on the link, or an appliance restarted from its
 * journal, cannot leave the task without an answer.
 */
static uint64_t
resend_gap_ns(const struct task *t)
{
	return t->n_resend >= 4 ? 60000000000ull : 5000000000ull << t->n_resend;
}

static void
resend_accepted(struct task *t, uint64_t now)
{
	t->state = T_SENT; /* already in flight: send_task() counts nothing again */
	send_task(t, now);
	t->state = T_RUNNING; /* still accepted and running */
	t->t_heard_ns = now;
	if (t->n_resend < 255)
		t->n_resend++;
	S.n_resent++;
}

/* A failure of t's attempt: retry when attempts are left, else final. */
static void
attempt_failed(struct task *t, unsigned int retries, const char *result)
{
	log_attempt(t, result);
	if (t->state == T_RUNNING && S.n_running > 0)
		S.n_running--;
	S.in_flight--;
	if (t->attempt <= retries) {
		t->state = T_PENDING;
		t->t_retry_ns = 0;
		t->have_info = false;
		S.n_retried++;
		return;
	}
	t->state = T_FAILED;
	S.n_failed++;
}

/* #33: t ended TIMEOUT or CANCELLED: a state of its own, final (not retried), counted failed
 * for the exit status and in *n. */
static void
final_state(struct task *t, const char *result, uint32_t *n)
{
	log_attempt(t, result);
	if (t->state == T_RUNNING && S.n_running > 0)
		S.n_running--;
	S.in_flight--;
	t->state = T_FAILED;
	S.n_failed++;
	(*n)++;
}

static void
progress(bool tty, bool final, uint32_t total)
{
	double el = (double)(now_ns() - S.t0_ns) * 1e-9;
	uint32_t done = S.n_ok + S.n_failed + S.n_skipped;
	double rate = el > 0 ? (double)(S.n_ok + S.n_failed) / el : 0;
	double eta = rate > 0 ? (double)(total - done) / rate : NAN;

	if (tty)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "nlevel-submit %llu: %u/%u done (%u ok, %u failed), %u running, %u retried, "
		"%u overload backoffs, %.0f tasks/s, ETA %.0f s",
		(unsigned long long)S.submit_id, done, total, S.n_ok + S.n_skipped, S.n_failed,
		S.n_running, S.n_retried, S.n_overload, rate, isnan(eta) ? 0.0 : eta);
	fputs(tty && !final ? "" : "\n", stderr);
	fflush(stderr);
}

/* In the background: tell the foreground (once) that the appliance knows the batch. */
static void
batch_known(void)
{
	if (S.ready_fd >= 0) {
		char c = 1;

		(void)!write(S.ready_fd, &c, 1);
		close(S.ready_fd);
		S.ready_fd = -1;
	}
}

static int
run(unsigned int window, unsigned int retries, double timeout_s, bool quiet)
{
	bool tty = isatty(2) && !quiet;
	uint64_t last_prog = 0, last_answer = now_ns(), next_scan = 0, last_probe = 0;
	uint32_t next = 0, total = S.n;
	uint32_t *by_index = NULL, max_index = 0;

	for (uint32_t i = 0; i < S.n; i++)
		if (S.t[i].index > max_index)
			max_index = S.t[i].index;
	by_index = malloc(((size_t)max_index + 1) * sizeof(uint32_t));
	S.start_ms = malloc((size_t)S.n * sizeof(double));
	if (by_index == NULL || S.start_ms == NULL)
		return ferr(NULL, 0, "out of memory");
	memset(by_index, 0xff, ((size_t)max_index + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < S.n; i++)
		by_index[S.t[i].index] = i;
	S.t0_ns = now_ns();
	while (!stop_flag && S.n_ok + S.n_failed + S.n_skipped < total &&
	       !(S.shutting && S.in_flight == 0)) { /* #34: nothing more will run */
		uint64_t now = now_ns();
		struct nl_msg m;

		/* send: every 5 ms, retries and resends that are due; then new tasks */
		if (now >= next_scan) {
			for (uint32_t i = 0; i < next; i++) {
				struct task *t = &S.t[i];

				if (t->state == T_PENDING && now >= t->t_retry_ns &&
				    S.in_flight < window && !S.shutting) {
					t->attempt++;
					send_task(t, now);
				} else if (t->state == T_SENT && now >= t->t_retry_ns) {
					send_task(t, now); /* neither ACCEPT nor REJECT came: again */
				} else if (t->state == T_RUNNING &&
					   now - t->t_heard_ns >= resend_gap_ns(t)) {
					resend_accepted(t, now); /* #34: no final answer yet */
				}
			}
			next_scan = now + 5000000ull;
		}
		while (next < S.n && S.in_flight < window && !S.shutting) {
			struct task *t = &S.t[next++];

			if (t->state == T_SKIPPED)
				continue;
			t->attempt = t->attempt < 255 ? t->attempt + 1 : 255; /* 1, or after the log's */
			send_task(t, now);
		}
		/* receive */
		int got = 0;

		while (recv_msg(&m, got == 0 ? 2 : 0) == 1) {
			uint64_t tid, rnow = now_ns();
			uint32_t idx;
			struct task *t;

			got++;
			if (S.asked_ns != 0 && rnow - S.asked_ns > 3000000000ull) {
				/* #34: the appliance speaks again after leaving a request of ours
				 * unanswered for 3 s (it may have restarted from its journal): every
				 * accepted task without a final answer is sent again now, not at its
				 * backed-off time. A silence while nothing was asked (long tasks
				 * running) is not one: the answer to a resend of theirs must not undo
				 * their back-off (it did: every running task went out every 5 s) */
				for (uint32_t i = 0; i < next; i++)
					if (S.t[i].state == T_RUNNING) {
						S.t[i].t_heard_ns = 0;
						S.t[i].n_resend = 0;
					}
				next_scan = 0;
			}
			last_answer = rnow;
			S.asked_ns = 0;
			if (m.type == NL_MSG_ACCEPT || m.type == NL_MSG_REJECT || m.type == NL_MSG_COMPLETE)
				tid = m.u.reply.task_id;
			else if (m.type == NL_MSG_TASKINFO)
				tid = m.u.farm.taskinfo.task_id;
			else
				continue;
			idx = (uint32_t)tid;
			if ((tid >> 32) != S.submit_id || idx > max_index || by_index[idx] == UINT32_MAX)
				continue;
			t = &S.t[by_index[idx]];
			batch_known(); /* an answer of the appliance about this batch */
			if (t->state != T_SENT && t->state != T_RUNNING)
				continue; /* a late duplicate */
			switch (m.type) {
			case NL_MSG_ACCEPT:
				if (t->state == T_SENT) {
					t->state = T_RUNNING;
					t->t_accept_ns = rnow;
					t->n_resend = 0;
					S.n_running++;
				}
				t->t_heard_ns = rnow;
				break;
			case NL_MSG_TASKINFO:
				t->t_heard_ns = rnow;
				t->have_info = true;
				t->worker_id = m.u.farm.taskinfo.worker_id;
				t->slot = m.u.farm.taskinfo.slot;
				t->mach = m.u.farm.taskinfo.mach;
				t->disp_us = m.u.farm.taskinfo.disp_us;
				t->ti = m.u.farm.taskinfo;
				break;
			case NL_MSG_REJECT:
				t->last_reason = (uint8_t)m.u.reply.reason;
				if (m.u.reply.reason == NL_REJECT_OVERLOAD ||
				    m.u.reply.reason == NL_REJECT_NO_HANDLE) {
					/* #34: an accepted task the appliance no longer holds (it
					 * restarted): not accepted any more, sent again as below */
					if (t->state == T_RUNNING && S.n_running > 0)
						S.n_running--;
					if (t->state == T_RUNNING)
						t->state = T_SENT;
				}
				if (m.u.reply.reason == NL_REJECT_OVERLOAD && t->state == T_SENT) {
					/* admission control: back off and resend, not an attempt */
					t->backoff_ms = t->backoff_ms == 0 ? 1 :
							t->backoff_ms >= 1000 ? 1000 : t->backoff_ms * 2;
					t->state = T_PENDING;
					t->attempt--;
					t->t_retry_ns = rnow + (uint64_t)t->backoff_ms * 1000000ull +
							(rnow % 1000000ull);
					S.in_flight--;
					S.n_overload++;
					break;
				}
				if (m.u.reply.reason == NL_REJECT_NO_HANDLE && t->state == T_SENT) {
					S.hk[t->hk].handle = 0;
					if (register_all(5) != 0)
						return 2;
					t->state = T_PENDING;
					t->t_retry_ns = 0;
					t->attempt--;
					S.in_flight--;
					break;
				}
				t->status = -1;
				if (m.u.reply.reason == NL_REJECT_SHUTDOWN) { /* #34: not run */
					if (!S.shutting && !quiet)
						fprintf(stderr, "%snlevel-submit: the appliance is "
							"shutting down: sending nothing more\n",
							tty ? "\r\033[K" : "");
					S.shutting = true;
					final_state(t, "shutdown", &S.n_shutdown);
					break;
				}
				if (m.u.reply.reason == NL_REJECT_CANCELLED) { /* #33: final */
					final_state(t, "cancelled", &S.n_cancelled);
					break;
				}
				if (m.u.reply.reason == NL_REJECT_NO_MACHINE ||
				    m.u.reply.reason == NL_REJECT_BAD_TASK) {
					/* no machine matches (before or after admission): final */
					char res[32];

					snprintf(res, sizeof(res), "rejected_%s", reason_name(m.u.reply.reason));
					log_attempt(t, res);
					if (t->state == T_RUNNING && S.n_running > 0)
						S.n_running--;
					t->state = T_FAILED;
					S.in_flight--;
					S.n_failed++;
					S.n_rejected++;
					break;
				}
				char res[32];

				snprintf(res, sizeof(res), "failed_%s", reason_name(m.u.reply.reason));
				attempt_failed(t, retries, res);
				break;
			case NL_MSG_COMPLETE:
				t->status = m.u.reply.status;
				if (t->have_info && t->ti.has_end && t->ti.state == NL_DONE_TIMEOUT) {
					final_state(t, "timeout", &S.n_timeout); /* #33: not an exit */
					break;
				}
				if (t->have_info && t->ti.has_end && t->ti.state == NL_DONE_CANCELLED) {
					final_state(t, "cancelled", &S.n_cancelled);
					break;
				}
				if (t->t_accept_ns > t->t_send_ns && t->have_info && S.n_start < S.n)
					S.start_ms[S.n_start++] =
						(double)(t->t_accept_ns - t->t_send_ns) * 0.5e-6 +
						t->disp_us * 1e-3;
				if (m.u.reply.status == 0) {
					if (t->state == T_RUNNING && S.n_running > 0)
						S.n_running--;
					S.in_flight--;
					t->state = T_OK;
					S.n_ok++;
					log_attempt(t, "ok");
				} else {
					t->last_reason = 0;
					attempt_failed(t, retries,
						       t->have_info && t->ti.has_end &&
								       t->ti.state == NL_DONE_NOSTART ?
							       "failed_nostart" :
						       t->have_info && t->ti.has_end &&
								       t->ti.state == NL_DONE_OOM ?
							       "failed_oom" : "failed_exit");
				}
				break;
			}
		}
		now = now_ns();
		/* Accepted tasks may run for longer than --timeout without a word: after 5 s of
		 * silence ask the appliance for the batch's status (every 5 s), so that only a
		 * silent appliance, not a long task, ends the wait. Its STATUS is an answer. */
		if (S.n_running > 0 && now - last_answer > 5000000000ull &&
		    now - last_probe > 5000000000ull) {
			struct nl_msg q = { .type = NL_MSG_STATUS_Q };

			q.u.farm.status_q.req_id = now;
			q.u.farm.status_q.submit_id = S.submit_id;
			send_msg(&q);
			last_probe = now;
		}
		if (timeout_s > 0 && now - last_answer > (uint64_t)(timeout_s * 1e9)) {
			ferr(NULL, 0, "no answer from the appliance for %.0f s: giving up (--timeout)",
			     timeout_s);
			break;
		}
		if (!quiet && now - last_prog > (tty ? 200000000ull : 5000000000ull)) {
			progress(tty, false, total);
			last_prog = now;
		}
	}
	for (uint32_t i = 0; S.shutting && i < S.n; i++) /* #34: what the stop left unsent */
		S.n_not_sent += S.t[i].state == T_PENDING;
	if (!quiet)
		progress(tty, true, total);
	free(by_index);
	return 0;
}

/* A submit id 1..2^32-1, optionally followed by ".INDEX" when idx != NULL. */
static int
parse_id(const char *opt, const char *txt, uint64_t *id, uint32_t *idx, bool *has_idx)
{
	char *end;
	unsigned long long v = strtoull(txt, &end, 10);

	if (has_idx != NULL)
		*has_idx = false;
	if (end != txt && *end == '.' && idx != NULL) {
		unsigned long w;
		const char *e2;

		if (parse_u32_digits(end + 1, &w, &e2) == 0 && *e2 == '\0') {
			*idx = (uint32_t)w;
			*has_idx = true;
			end = (char *)(uintptr_t)e2;
		}
	}
	if (end == txt || *end != '\0' || v == 0 || v > UINT32_MAX || txt[0] == '-')
		return ferr(NULL, 0, "%s: want a submit id 1..%u%s, got '%s'", opt, UINT32_MAX,
			    idx != NULL ? "[.INDEX]" : "", txt), 2;
	*id = v;
	return 0;
}

/* Ask q (its req_id set) until an answer of type want with that req_id comes; 0, or 2 when
 * nothing came within timeout_s (the message names the likely cause). */
static int
ask(struct nl_msg *q, uint64_t req_id, uint8_t want, struct nl_msg *r, double timeout_s,
    const char *what)
{
	uint64_t t_end = now_ns() + (uint64_t)(timeout_s * 1e9), next = 0;

	while (now_ns() < t_end) {
		if (now_ns() >= next) {
			send_msg(q);
			next = now_ns() + 200000000ull;
		}
		if (recv_msg(r, 20) != 1 || r->type != want)
			continue;
		if ((want == NL_MSG_STATUS && r->u.farm.status.req_id == req_id) ||
		    (want == NL_MSG_TASKS && r->u.farm.tasks.req_id == req_id) ||
		    (want == NL_MSG_CANCELLED && r->u.farm.cancelled.req_id == req_id))
			return 0;
	}
	return ferr(NULL, 0, "no answer from the appliance to %s (%s:%u, %g s): is it running, "
		    "and is --key the appliance's%s?", what, inet_ntoa(S.app.sin_addr),
		    ntohs(S.app.sin_port), timeout_s, key_hint()), 2;
}

/* --status ID: tasks by state (the appliance's records), and its per-attempt counters. */
static int
status_once(uint64_t id, double timeout_s, bool print, struct nl_msg_status *st)
{
	struct nl_msg m = { .type = NL_MSG_STATUS_Q }, r;
	int rc;

	m.u.farm.status_q.req_id = now_ns();
	m.u.farm.status_q.submit_id = id;
	rc = ask(&m, m.u.farm.status_q.req_id, NL_MSG_STATUS, &r, timeout_s, "--status");
	if (rc != 0)
		return rc;
	*st = r.u.farm.status;
	if (!print)
		return st->known ? 0 : 1;
	if (!st->known) {
		printf("submit %llu: unknown to the appliance\n", (unsigned long long)id);
		return 1;
	}
	const struct nl_farm_counts *c = &st->c;
	const uint32_t *n = st->t.n;

	if (st->has_tasks) /* #33: tasks, not attempts */
		printf("submit %llu: %u tasks: %u queued, %u running, %u done ok, %u failed, "
		       "%u timeout, %u cancelled, %u rejected, %u shutdown\n",
		       (unsigned long long)id, st->t.tasks, n[NL_FARM_T_QUEUED],
		       n[NL_FARM_T_RUNNING], n[NL_FARM_T_OK], n[NL_FARM_T_FAILED],
		       n[NL_FARM_T_TIMEOUT], n[NL_FARM_T_CANCELLED], n[NL_FARM_T_REJECTED],
		       n[NL_FARM_T_SHUTDOWN]);
	printf("SUMMARY submit_id=%llu submitted=%llu accepted=%llu running=%llu "
	       "done_ok=%llu done_err=%llu rejected=%llu lost=%llu", (unsigned long long)id,
	       (unsigned long long)c->submitted, (unsigned long long)c->accepted,
	       (unsigned long long)c->running, (unsigned long long)c->done_ok,
	       (unsigned long long)c->done_err, (unsigned long long)c->rejected,
	       (unsigned long long)c->lost);
	if (st->has_tasks)
		printf(" tasks=%u t_queued=%u t_running=%u t_ok=%u t_failed=%u t_timeout=%u "
		       "t_cancelled=%u t_rejected=%u t_shutdown=%u", st->t.tasks,
		       n[NL_FARM_T_QUEUED], n[NL_FARM_T_RUNNING], n[NL_FARM_T_OK],
		       n[NL_FARM_T_FAILED], n[NL_FARM_T_TIMEOUT], n[NL_FARM_T_CANCELLED],
		       n[NL_FARM_T_REJECTED], n[NL_FARM_T_SHUTDOWN]);
	printf("\n");
	return 0;
}

/* --status ID --tasks: one line per task, from the appliance's records (TASKS_Q pages). */
static int
tasks_cmd(uint64_t id, double timeout_s)
{
	struct nl_msg m = { .type = NL_MSG_TASKS_Q }, r;
	uint32_t from = 0, n = 0;
	int rc;

	printf("%-8s %-9s %6s %-8s %9s %9s %8s\n", "index", "state", "exit", "machine",
	       "queue_s", "run_s", "attempts");
	for (;;) {
		m.u.farm.tasks_q.req_id = now_ns();
		m.u.farm.tasks_q.submit_id = id;
		m.u.farm.tasks_q.from = from;
		m.u.farm.tasks_q.max = NL_FARM_TASKS_MAX;
		rc = ask(&m, m.u.farm.tasks_q.req_id, NL_MSG_TASKS, &r, timeout_s, "--status --tasks");
		if (rc != 0)
			return rc;
		const struct nl_msg_tasks *t = &r.u.farm.tasks;

		if (!t->known) {
			printf("submit %llu: unknown to the appliance\n", (unsigned long long)id);
			return 1;
		}
		for (unsigned int i = 0; i < t->n; i++) {
			const struct nl_farm_trec *q = &t->rec[i];
			char mach[24] = "-", ex[16] = "-";

			if (q->worker_id != 0 || q->mach != 0)
				snprintf(mach, sizeof(mach), "w%u.%u", q->worker_id, q->mach);
			if (q->status >= 0 && q->state >= NL_FARM_T_OK)
				snprintf(ex, sizeof(ex), "%d", q->status);
			printf("%-8u %-9s %6s %-8s %9.3f %9.3f %8u\n", q->index,
			       nl_farm_tstate_name(q->state), ex, mach, q->queue_ms * 1e-3,
			       q->run_ms * 1e-3, q->attempts);
			n++;
		}
		if (!t->more)
			break;
		from = t->next;
	}
	printf("SUMMARY submit_id=%llu tasks=%u\n", (unsigned long long)id, n);
	return 0;
}

/* --cancel ID[.INDEX]: queued tasks withdrawn, running ones killed, each answered CANCELLED
 * to its submitter. */
static int
cancel_cmd(const char *txt, double timeout_s)
{
	struct nl_msg m = { .type = NL_MSG_CANCEL }, r;
	uint64_t id;
	uint32_t idx = 0;
	bool has_idx;
	int rc = parse_id("--cancel", txt, &id, &idx, &has_idx);

	if (rc != 0)
		return rc;
	m.u.farm.cancel.req_id = now_ns();
	m.u.farm.cancel.submit_id = id;
	m.u.farm.cancel.index = idx;
	m.u.farm.cancel.all = !has_idx;
	rc = ask(&m, m.u.farm.cancel.req_id, NL_MSG_CANCELLED, &r, timeout_s, "--cancel");
	if (rc != 0)
		return rc;
	if (!r.u.farm.cancelled.known) {
		printf("submit %llu: unknown to the appliance (nothing running or queued)\n",
		       (unsigned long long)id);
		return 1;
	}
	printf("submit %s: %u queued tasks withdrawn, %u running tasks killed\n", txt,
	       r.u.farm.cancelled.withdrawn, r.u.farm.cancelled.killed);
	printf("SUMMARY submit_id=%llu withdrawn=%u killed=%u\n", (unsigned long long)id,
	       r.u.farm.cancelled.withdrawn, r.u.farm.cancelled.killed);
	return 0;
}

/* --wait ID: until no task of the batch is queued or running (every 0.5 s), then its status;
 * exit 0 when every task ended ok, 1 otherwise (or unknown). */
static int
wait_cmd(uint64_t id, double timeout_s)
{
	struct nl_msg_status st;
	/* the first question is answered within 5 s or the appliance is not there (#33); once it
	 * answered, a stall of it (a host holding its lcores for seconds was seen) is waited out
	 * up to --timeout without any answer */
	double t = timeout_s < 5 ? timeout_s : 5;
	int rc;

	for (;;) {
		rc = status_once(id, t, false, &st);
		if (rc == 2)
			return rc;
		t = timeout_s;
		if (rc == 1 || !st.has_tasks) {
			status_once(id, t, true, &st);
			return 1;
		}
		if (st.t.n[NL_FARM_T_QUEUED] + st.t.n[NL_FARM_T_RUNNING] == 0 || stop_flag)
			break;
		usleep(500000);
	}
	status_once(id, t, true, &st);
	return st.t.n[NL_FARM_T_OK] == st.t.tasks && !stop_flag ? 0 : 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nlevel-submit --appliance IP[:PORT] [options] TASKFILE\n"
		"       nlevel-submit --appliance IP[:PORT] [options] --array A-B[:STEP] CMD [ARG...]\n"
		"       nlevel-submit --appliance IP[:PORT] --status SUBMIT_ID [--tasks]\n"
		"       nlevel-submit --appliance IP[:PORT] --cancel SUBMIT_ID[.INDEX]\n"
		"       nlevel-submit --appliance IP[:PORT] --wait SUBMIT_ID\n"
		"Submit a task farm to the nlevel appliance and follow it (docs/taskfarm.md).\n"
		"TASKFILE: one task a line, 'COMMAND ARG ...' (a command name of the workers'\n"
		"--commands files; arguments at most %u bytes, NUL-separated; quotes group);\n"
		"'@requirements EXPR', '@rank EXPR', '@need VECTOR', '@split L', '@time S'\n"
		"apply to the lines after them; '#' comments; '-' reads stdin.\n"
		"  --appliance IP[:PORT]  the appliance (default port %u)\n"
		"  --array A-B[:STEP]     one task per value; {} in the arguments is the value\n"
		"  --requirements EXPR    ClassAd Requirements of every task (e.g. 'Memory >= 1024\n"
		"                         && Arch == \"X86_64\"'); the task file's @requirements wins\n"
		"  --rank EXPR            ClassAd Rank: machines of higher Rank first\n"
		"  --need VECTOR          resource vector of the tasks (default: all 0)\n"
		"  --split L              sub-tasks per task, 1..%u (default 1)\n"
		"  --window N             tasks in flight at most (default 256)\n"
		"  --time S               wall-clock limit of each task [s] (like sbatch --time):\n"
		"                         at the limit its commands are killed and it ends TIMEOUT\n"
		"                         (a state of its own, not retried); 0 = none (default;\n"
		"                         the workers' --max-time still applies)\n"
		"  --retries N            re-run a failed task (non-zero exit, machine lost) up to N\n"
		"                         times (default 0); REJECT overload is always retried with\n"
		"                         exponential backoff (1 ms .. 1 s)\n"
		"  --joblog FILE          CSV of every attempt: index, task_id, attempt, command,\n"
		"                         args, machine, slot, start, end, queue_s (waited before it\n"
		"                         started), run_s (its own run time), cpu_s, mem_kib (peak),\n"
		"                         status, result (ok, failed_exit, timeout, cancelled, ...),\n"
		"                         stdout (file name under the worker's output_dir)\n"
		"  --resume               skip the tasks --joblog records as ok (reuses its submit id;\n"
		"                         attempts go on numbering from the log's)\n"
		"  --wait                 stay until every task ended (default: print the submit id\n"
		"                         and go on in the background once the appliance answered\n"
		"                         for the batch; see --status); --wait ID\n"
		"                         alone waits for a batch submitted earlier\n"
		"  --submit-id N          submit id 1..2^32-1 (default: random)\n"
		"  --timeout S            give up after S seconds without any answer (default 30;\n"
		"                         while accepted tasks run, the appliance is asked for the\n"
		"                         batch's status after 5 s of silence, so long tasks are\n"
		"                         waited for as long as the appliance answers)\n"
		"  --key FILE             site key (the appliance's --key), or with --principal\n"
		"                         the principal's own key file (nlevel-key)\n"
		"  --principal NAME       submit as principal NAME of the appliance's\n"
		"                         --principals, with --key NAME's key file (nlevel-key;\n"
		"                         docs/security.md); also for --status\n"

		"  --quiet                no progress\n"
		"  --status ID            the batch's tasks by state (queued, running, done ok,\n"
		"                         failed, timeout, cancelled, rejected) from the appliance's\n"
		"                         records (kept on its disk: answers after hours, restarts)\n"
		"  --tasks                with --status: one line per task (state, exit, machine,\n"
		"                         queue wait, run time, attempts)\n"
		"  --cancel ID[.INDEX]    cancel a batch (or one task): queued tasks are withdrawn,\n"
		"                         running ones killed; each ends CANCELLED (like scancel)\n"
		"  --help                 this text\n"
		"Exit status: 0 every task succeeded; 1 some failed, timed out or were cancelled\n"
		"(their count is printed), or --status/--cancel/--wait ID: the appliance does not\n"
		"know the submit id (--wait ID: not every task ok); 2 bad command line or task file\n"
		"(FILE:LINE), unknown command, no answer from the appliance to REGISTER,\n"
		"--status or --cancel within 5 s (a --key it refuses gets no answer at all).\n",
		NL_PROTO_MAX_ARGS, NL_PROTO_PORT, NL_PROTO_MAX_SPLIT);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "appliance", required_argument, NULL, 'a' },
		{ "array", required_argument, NULL, 'A' },
		{ "requirements", required_argument, NULL, 'r' },
		{ "rank", required_argument, NULL, 'k' },
		{ "need", required_argument, NULL, 'n' },
		{ "split", required_argument, NULL, 'L' },
		{ "window", required_argument, NULL, 'w' },
		{ "retries", required_argument, NULL, 'R' },
		{ "joblog", required_argument, NULL, 'j' },
		{ "resume", no_argument, NULL, 'u' },
		{ "wait", no_argument, NULL, 'W' },
		{ "submit-id", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ "key", required_argument, NULL, 'K' },
		{ "principal", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "status", required_argument, NULL, 's' },
		{ "tasks", no_argument, NULL, 'Y' },
		{ "cancel", required_argument, NULL, 'C' },
		{ "time", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *array = NULL, *req = "", *rank = "", *joblog = NULL, *key_file = NULL;
	const char *status_id = NULL, *cancel_id = NULL;
	bool list_tasks = false;
	bool have_app = false, resume = false, wait = false, quiet = false;
	unsigned long window = 256, retries = 0, split = 1;
	uint64_t need = 0;
	double timeout_s = 30;
	static struct nl_auth_key key;
	char *end;
	int c;

	S.ready_fd = -1;
	while ((c = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (nl_proto_parse_addr(optarg, &S.app) != 0)
				return ferr(NULL, 0, "--appliance: bad address '%s'", optarg), 2;
			have_app = true;
			break;
		case 'A':
			array = optarg;
			break;
		case 'r':
			if (check_expr("--requirements", optarg, "--requirements", 0) != 0)
				return 2;
			req = optarg;
			break;
		case 'k':
			if (check_expr("--rank", optarg, "--rank", 0) != 0)
				return 2;
			rank = optarg;
			break;
		case 'n':
			if (parse_vector(optarg, &need) != 0)
				return ferr(NULL, 0, "--need: want a vector of 0 and 1, got '%s'", optarg), 2;
			break;
		case 'L':
		case 'w':
		case 'R': {
			unsigned long v = strtoul(optarg, &end, 10);
			unsigned long hi = c == 'L' ? NL_PROTO_MAX_SPLIT : c == 'w' ? 1000000 : 100;

			if (*end != '\0' || end == optarg || (c != 'R' && v == 0) || v > hi)
				return ferr(NULL, 0, "--%s: want an integer %d..%lu, got '%s'",
					    c == 'L' ? "split" : c == 'w' ? "window" : "retries",
					    c == 'R' ? 0 : 1, hi, optarg), 2;
			if (c == 'L')
				split = v;
			else if (c == 'w')
				window = v;
			else
				retries = v;
			break;
		}
		case 'j':
			joblog = optarg;
			break;
		case 'u':
			resume = true;
			break;
		case 'W':
			wait = true;
			break;
		case 'i': {
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end != '\0' || v == 0 || v > UINT32_MAX)
				return ferr(NULL, 0, "--submit-id: want 1..%u, got '%s'", UINT32_MAX,
					    optarg), 2;
			S.submit_id = v;
			break;
		}
		case 't':
			timeout_s = strtod(optarg, &end);
			if (*end != '\0' || !(timeout_s > 0))
				return ferr(NULL, 0, "--timeout: want seconds > 0, got '%s'", optarg), 2;
			break;
		case 'K':
			key_file = optarg;
			break;
		case 'P':
			if (!nl_principal_name_ok(optarg))
				return ferr(NULL, 0, "--principal: bad name '%s' (1..%u characters of "
					    "A-Z a-z 0-9 . _ -)", optarg, NL_PRINCIPAL_NAME_MAX), 2;
			S.principal = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 's':
			status_id = optarg;
			break;
		case 'Y':
			list_tasks = true;
			break;
		case 'C':
			cancel_id = optarg;
			break;
		case 'T':
			if (parse_time(optarg, &S.tl_ms) != 0)
				return ferr(NULL, 0, "--time: want seconds 0.001..4294967 (0 = no limit), "
					    "got '%s'", optarg), 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!have_app) {
		ferr(NULL, 0, "--appliance IP[:PORT] is required (--help)");
		return 2;
	}
	if ((status_id != NULL || cancel_id != NULL) && (optind != argc || array != NULL)) {
		ferr(NULL, 0, "--%s ID takes no TASKFILE, --array or other argument (got '%s')",
		     status_id != NULL ? "status" : "cancel", optind != argc ? argv[optind] : array);
		return 2;
	}
	if (list_tasks && status_id == NULL) {
		ferr(NULL, 0, "--tasks goes with --status ID");
		return 2;
	}
	/* #33: --wait ID on a batch submitted earlier (an all-digit argument that names no file) */
	const char *wait_id = NULL;

	if (wait && status_id == NULL && cancel_id == NULL && array == NULL &&
	    optind == argc - 1 && argv[optind][0] >= '0' && argv[optind][0] <= '9' &&
	    strspn(argv[optind], "0123456789") == strlen(argv[optind]) &&
	    access(argv[optind], F_OK) != 0)
		wait_id = argv[optind];
	if (status_id == NULL && cancel_id == NULL && array == NULL && optind != argc - 1) {
		ferr(NULL, 0, optind == argc ? "a TASKFILE or --array A-B COMMAND is required (--help)" :
					       "one TASKFILE only (options start with --)");
		return 2;
	}
	if (array != NULL && optind == argc) {
		ferr(NULL, 0, "--array needs a COMMAND [ARG ...] after the options");
		return 2;
	}
	if (resume && joblog == NULL) {
		ferr(NULL, 0, "--resume needs --joblog FILE (the log to resume from)");
		return 2;
	}
	if (key_file != NULL) {
		char err[512];

		if (nl_auth_key_load(key_file, &key, err, sizeof(err)) != 0)
			return ferr(NULL, 0, "--key: %s", err), 2;
		if (nl_replay_init(&S.rp, 16) != 0)
			return 1;
		if (S.principal != NULL) /* #35: our principal's id in the sender id */
			nl_auth_tx_init_principal(&S.tx, &key, S.principal);
		else
			nl_auth_tx_init(&S.tx, &key);
		S.key = &key;
	} else if (S.principal != NULL) {
		return ferr(NULL, 0, "--principal needs --key (the principal's key file, from "
			    "nlevel-key)"), 2;
	}
	S.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (S.fd < 0)
		return ferr(NULL, 0, "socket: %s", strerror(errno)), 1;
	int rcv = 8 << 20;

	setsockopt(S.fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (status_id != NULL || wait_id != NULL) {
		uint64_t id;
		struct nl_msg_status st;
		int rc = parse_id(status_id != NULL ? "--status" : "--wait",
				  status_id != NULL ? status_id : wait_id, &id, NULL, NULL);

		if (rc != 0)
			return rc;
		if (wait_id != NULL)
			return wait_cmd(id, timeout_s);
		rc = status_once(id, timeout_s < 5 ? timeout_s : 5, true, &st);
		return rc == 0 && list_tasks ? tasks_cmd(id, timeout_s < 5 ? timeout_s : 5) : rc;
	}
	if (cancel_id != NULL)
		return cancel_cmd(cancel_id, timeout_s < 5 ? timeout_s : 5);

	/* the tasks, checked whole before anything is sent */
	S.file = array != NULL ? "--array" : argv[optind];
	if (array != NULL ? make_array(array, argv + optind, argc - optind, (uint16_t)split, need,
				       req, rank) :
			    read_taskfile(argv[optind], (uint16_t)split, need, req, rank))
		return 2;
	if (resume && read_joblog(joblog) != 0)
		return 2;
	while (S.submit_id == 0) {
		uint32_t r = 0;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)(now_ns() ^ (uint64_t)getpid() << 16);
		S.submit_id = r;
	}
	for (uint32_t i = 0; i < S.n; i++)
		S.n_skipped += S.t[i].state == T_SKIPPED;
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	if (register_all(timeout_s < 4 ? timeout_s : 4) != 0) /* #33: said within 5 s */
		return 2;
	for (unsigned int i = 0; i < S.n_hk; i++)
		if (S.hk[i].n_match == 0 && !quiet)
			fprintf(stderr, "nlevel-submit: warning: no machine matches %s%s%s now "
				"(its tasks will be REJECTed no_machine unless one joins)\n",
				S.hk[i].name, S.hk[i].req[0] ? " with Requirements " : "",
				S.hk[i].req);
	if (joblog != NULL) {
		bool fresh = !resume || access(joblog, F_OK) != 0;

		S.log = fopen(joblog, fresh ? "w" : "a");
		if (S.log == NULL)
			return ferr(NULL, 0, "--joblog %s: %s", joblog, strerror(errno)), 2;
		setvbuf(S.log, NULL, _IOLBF, 0); /* a killed submitter loses no logged line */
		if (fresh)
			fprintf(S.log, "index,task_id,attempt,command,args,machine,slot,start,end,"
				       "queue_s,run_s,cpu_s,mem_kib,status,result,stdout\n");
	}
	printf("Submitted batch %llu (%u tasks%s%s)\n", (unsigned long long)S.submit_id, S.n,
	       S.n_skipped ? ", resumed: skipping ok ones " : "", "");
	fflush(stdout);
	if (!wait) {
		/* go on in the background, like sbatch: follow with --status. The foreground
		 * returns once the appliance has answered one task of the batch (it knows the
		 * batch: `nlevel-submit --wait ID` or --status right after finds it), or the
		 * background part ended, or --timeout passed. */
		int rp[2];
		pid_t p;

		if (pipe(rp) != 0)
			return ferr(NULL, 0, "pipe: %s", strerror(errno)), 1;
		p = fork();
		if (p < 0)
			return ferr(NULL, 0, "fork: %s", strerror(errno)), 1;
		if (p > 0) {
			struct pollfd pf = { .fd = rp[0], .events = POLLIN };
			char c = 0;

			close(rp[1]);
			if (poll(&pf, 1, (int)(timeout_s * 1000)) == 1 && read(rp[0], &c, 1) == 1)
				return 0;
			return ferr(NULL, 0, "no answer from the appliance for batch %llu yet; it "
				    "goes on in the background (see --status %llu)",
				    (unsigned long long)S.submit_id,
				    (unsigned long long)S.submit_id), 0;
		}
		close(rp[0]);
		S.ready_fd = rp[1];
		setsid();
		int dn = open("/dev/null", O_RDWR);

		if (dn >= 0) {
			dup2(dn, 0);
			dup2(dn, 1);
			dup2(dn, 2);
			if (dn > 2)
				close(dn);
		}
		quiet = true;
	}
	int rc = run((unsigned int)window, (unsigned int)retries, timeout_s, quiet);

	batch_known();

	if (S.log != NULL)
		fclose(S.log);
	if (rc != 0)
		return rc;
	double el = (double)(now_ns() - S.t0_ns) * 1e-9;

	qsort(S.start_ms, S.n_start, sizeof(double), cmp_d);
	printf("SUMMARY submit_id=%llu tasks=%u ok=%u failed=%u rejected=%u timeout=%u cancelled=%u "
	       "shutdown=%u not_sent=%u "
	       "skipped=%u retried=%u overload_backoffs=%u resent=%u elapsed_s=%.3f rate_tps=%.1f "
	       "start_p50_ms=%.3f start_p99_ms=%.3f\n",
	       (unsigned long long)S.submit_id, S.n, S.n_ok, S.n_failed, S.n_rejected, S.n_timeout,
	       S.n_cancelled, S.n_shutdown, S.n_not_sent, S.n_skipped,
	       S.n_retried, S.n_overload, S.n_resent, el, el > 0 ? (double)(S.n_ok + S.n_failed) / el : 0.0,
	       pct(S.start_ms, S.n_start, 0.5), pct(S.start_ms, S.n_start, 0.99));
	if (stop_flag) {
		fprintf(stderr, "nlevel-submit: interrupted: %u of %u tasks not ended (resume with "
			"--resume --joblog)\n", S.n - S.n_ok - S.n_failed - S.n_skipped, S.n);
		return 1;
	}
	if (S.shutting) { /* #34: REJECT shutdown; the rest was not sent */
		fprintf(stderr, "nlevel-submit: appliance is shutting down: %u tasks not run (%u "
			"answered REJECT shutdown, %u not sent); %u ok, %u failed otherwise; run them "
			"after its restart with --resume --joblog%s%s\n", S.n_shutdown + S.n_not_sent,
			S.n_shutdown, S.n_not_sent, S.n_ok + S.n_skipped, S.n_failed - S.n_shutdown,
			joblog ? " " : " FILE", joblog ? joblog : "");
		return 1;
	}
	if (S.n_ok + S.n_failed + S.n_skipped < S.n) {
		fprintf(stderr, "nlevel-submit: %u of %u tasks got no final answer\n",
			S.n - S.n_ok - S.n_failed - S.n_skipped, S.n);
		return 1;
	}
	if (S.n_failed > 0) {
		fprintf(stderr, "nlevel-submit: %u of %u tasks failed (%u rejected, %u timeout, %u "
			"cancelled)%s%s\n", S.n_failed, S.n, S.n_rejected, S.n_timeout, S.n_cancelled,
			joblog ? "; see " : "", joblog ? joblog : "");
		return 1;
	}
	return 0;
}
