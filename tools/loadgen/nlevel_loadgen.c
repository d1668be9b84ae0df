/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-loadgen: a client of the nlevel appliance on a plain UDP socket (no DPDK).
 *
 *   nlevel-loadgen --appliance IP[:PORT] --tasks N
 *                  (--rate TPS | --load PCT | --replay FILE) [--config FILE | --res N --split L]
 *                  [--scale S] [--instr I] [--data D] [--cmd ID] [--arg A ...]
 *                  [--seed S] [--csv FILE] [--timeout S] [--expect-complete]
 *                  [--standby IP[:PORT] [--failover-s S]]
 *
 * The task shape (resources N, L sub-tasks, instructions and data per task) comes from the
 * appliance's own configuration (--config, the INI nlevel reads); --res/--split/--instr/--data
 * override it. Every REJECT and failed COMPLETE is counted by reason and the reasons printed.
 *
 * Poisson arrivals at a rate (or at a system load of a model configuration, time-scaled like
 * nlevel-worker's --scale), or a replayed task file (lines "t_s need instr data split
 * [cmd [arg ...]]", need in hex; every field checked, errors as FILE:LINE). It measures each
 * task's response from SUBMIT to COMPLETE (client clock, echoed by the appliance), prints
 * mean / p50 / p99 / rejects and one SUMMARY line, and writes one CSV row per task. Exit
 * status 0 when every task got a final answer (COMPLETE or REJECT); with --expect-complete,
 * only when every task COMPLETEd with status 0 or an expected status.
 *
 * With --standby (a split tree's `standby = ...` of the appliance, docs/scale-out.md), the
 * client fails over: when the current address (first --appliance) has sent no valid frame for
 * --failover-s seconds while a SUBMIT has no ACCEPT (or, once every task is sent, while what it
 * accepted is unanswered: the first failover only), it switches to the other address and sends
 * every unanswered task the other has not accepted there again, same id and original submit
 * time (its response includes the outage), with the SUBMIT flag resend (the standby holds it
 * until the dead appliance's workers have said whether it ran there, and answers it from their
 * word rather than run it twice); answers are taken from both addresses, a task's
 * first final answer counts and a later one is counted dup_answers. An appliance that has
 * accepted a task and holds it (parked at a peer declared dead, dead_hold_s) is not left for
 * that: a client flapping between the two would have them run a task twice.
 *
 * Every number is checked whole (no trailing text, sign, nan or inf) against a stated range
 * before anything is sent or allocated: --tasks 1..NL_LG_MAX_TASKS, --timeout 0..NL_LG_MAX_S,
 * --failover-s NL_LG_FAILOVER_MIN_S..NL_LG_FAILOVER_MAX_S.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "nl_cfg.h"
#include "nl_model_cfg.h"
#include "nl_principal.h"
#include "nl_proto.h"

enum { ST_SENT = 0, ST_ACCEPTED, ST_REJECTED, ST_COMPLETE };

/* Limits of the command line and of --replay files; --help states them. */
#define NL_LG_MAX_TASKS 10000000u /* --tasks and replay lines (~130 bytes of memory each) */
#define NL_LG_MAX_S 1e6           /* --timeout and replay t_s [s] (about 11.6 days) */
#define NL_LG_MAX_AMOUNT 1e18     /* --instr [instr], --data [bit], --rate, ...: sanity bound */
#define NL_LG_LINE_MAX 1024       /* a replay line, newline included [bytes] */
#define NL_LG_FAILOVER_MIN_S 0.5  /* --failover-s [s]: shorter takes a busy appliance for dead */
#define NL_LG_FAILOVER_MAX_S 3600.0
#define NL_LG_FAILOVER_DEF_S 3.0
#define NL_LG_RESEND_BURST 32     /* a failover's SUBMITs sent again per millisecond at most */

struct task {
	uint64_t submit_ns;
	uint64_t resp_ns;
	uint64_t need;
	uint8_t state;
	uint8_t reason;  /* REJECT reason, or COMPLETE failure reason */
	uint8_t acc_by;  /* index of the address whose ACCEPT came last (0xff: none yet; its
			  * first ACCEPT is the one counted in `accepted`) */
	uint8_t resend;  /* to be sent again (a failover's, paced: NL_LG_RESEND_BURST a ms) */
	int32_t status;  /* COMPLETE exit status */
	double at_s;     /* replay: submit time */
	uint64_t instr, data;
	uint16_t split, cmd;
	uint8_t args_len;
	uint8_t args[NL_PROTO_MAX_ARGS];
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_s = 88172645463325252ull;

static uint64_t
rnd(void)
{
	rng_s ^= rng_s << 13;
	rng_s ^= rng_s >> 7;
	rng_s ^= rng_s << 17;
	return rng_s;
}

static double
unif(void)
{
	return (double)(rnd() >> 11) * 0x1.0p-53;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Wall seconds to ns, saturating (a time past ~584 years is never reached). */
static uint64_t
s_to_ns(double s)
{
	if (!(s > 0))
		return 0;
	if (s >= 1.8e10)
		return UINT64_MAX;
	return (uint64_t)(s * 1e9);
}

/* The whole of s is a finite number 0..max: no sign, space, nan, inf or trailing text. */
static bool
num_ok(const char *s, double max, double *out)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)s[0]) && !(s[0] == '.' && isdigit((unsigned char)s[1])))
		return false;
	v = strtod(s, &end);
	if (*end != '\0' || !isfinite(v) || v < 0 || v > max)
		return false;
	*out = v;
	return true;
}

/* The whole of s is an integer lo..hi, written as a number (12, 1e6; not 1.5). */
static bool
int_ok(const char *s, double lo, double hi, double *out)
{
	double v;

	if (!num_ok(s, hi, &v) || v < lo || v != floor(v))
		return false;
	*out = v;
	return true;
}

/* The whole of s is a decimal integer lo..hi, with an optional '-' sign. */
static bool
long_ok(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	if (!isdigit((unsigned char)s[s[0] == '-']))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* The whole of s is 1..16 hexadecimal digits, after an optional 0x. */
static bool
hex_ok(const char *s, uint64_t *out)
{
	size_t l;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	l = strlen(s);
	if (l == 0 || strspn(s, "0123456789abcdefABCDEF") != l)
		return false;
	errno = 0;
	*out = strtoull(s, NULL, 16);
	return errno == 0;
}

/*
 * One line of f into buf (without its newline, NUL-terminated): its length; -1 at the end of
 * the file; -2 if it does not fit in cap - 1 bytes; -3 if it holds a NUL byte.
 */
static long
read_line(FILE *f, char *buf, size_t cap)
{
	size_t len = 0;
	bool nul = false;
	int ch;

	while ((ch = getc(f)) != EOF && ch != '\n') {
		if (len + 1 >= cap)
			return -2;
		nul |= ch == '\0';
		buf[len++] = (char)ch;
	}
	if (ch == EOF && len == 0)
		return -1;
	buf[len] = '\0';
	return nul ? -3 : (long)len;
}

/*
 * Read a --replay file: lines "t_s need instr data split [cmd [arg ...]]". Every field is
 * checked; the first bad one is reported as FILE:LINE and nothing is sent.
 */
static int
load_replay(const char *path, struct task **out, unsigned int *n)
{
	FILE *f = fopen(path, "r");
	char line[NL_LG_LINE_MAX];
	unsigned int cap = 1024, k = 0, ln = 0;
	struct task *t;

	if (f == NULL) {
		fprintf(stderr, "nlevel-loadgen: --replay %s: %s\n", path, strerror(errno));
		return -1;
	}
	t = calloc(cap, sizeof(*t));
	if (t == NULL) {
		fprintf(stderr, "nlevel-loadgen: --replay %s: out of memory\n", path);
		fclose(f);
		return -1;
	}
	for (;;) {
		char *save = NULL, *tok[40];
		unsigned int nt = 0;
		const char *bad = NULL, *want = NULL;
		long long iv = 0;
		long len = read_line(f, line, sizeof(line));
		double v;

		if (len == -1)
			break;
		ln++;
		if (len < 0) {
			if (len == -2)
				fprintf(stderr, "%s:%u: line longer than %u bytes\n", path, ln,
					NL_LG_LINE_MAX - 1);
			else
				fprintf(stderr, "%s:%u: line holds a NUL byte\n", path, ln);
			goto fail;
		}
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		for (char *p = strtok_r(line, " \t\r\n", &save); p != NULL && nt < 40;
		     p = strtok_r(NULL, " \t\r\n", &save))
			tok[nt++] = p;
		if (nt < 5) {
			fprintf(stderr, "%s:%u: want 't_s need instr data split [cmd [arg...]]'\n",
				path, ln);
			goto fail;
		}
		if (k == NL_LG_MAX_TASKS) {
			fprintf(stderr, "%s:%u: more than %u tasks\n", path, ln, NL_LG_MAX_TASKS);
			goto fail;
		}
		if (k == cap) {
			struct task *r = realloc(t, 2 * (size_t)cap * sizeof(*t));

			if (r == NULL) {
				fprintf(stderr, "nlevel-loadgen: --replay %s: out of memory\n", path);
				goto fail;
			}
			t = r;
			memset(&t[cap], 0, cap * sizeof(*t));
			cap *= 2;
		}
		struct task *x = &t[k];

		if (!num_ok(tok[0], NL_LG_MAX_S, &x->at_s)) {
			bad = tok[0];
			want = "t_s: want wall seconds from the start, 0..1e6";
		} else if (!hex_ok(tok[1], &x->need)) {
			bad = tok[1];
			want = "need: want a resource bit vector in hex, 1..16 digits";
		} else if (!num_ok(tok[2], NL_LG_MAX_AMOUNT, &v)) {
			bad = tok[2];
			want = "instr: want instructions, a number 0..1e18";
		} else if ((x->instr = (uint64_t)v, !num_ok(tok[3], NL_LG_MAX_AMOUNT, &v))) {
			bad = tok[3];
			want = "data: want bits, a number 0..1e18";
		} else if ((x->data = (uint64_t)v, !int_ok(tok[4], 1, NL_PROTO_MAX_SPLIT, &v))) {
			_Static_assert(NL_PROTO_MAX_SPLIT == 64, "the message below says 1..64");
			bad = tok[4];
			want = "split: want sub-tasks L, an integer 1..64";
		} else if ((x->split = (uint16_t)v, nt > 5 && !long_ok(tok[5], 0, 65535, &iv))) {
			bad = tok[5];
			want = "cmd: want a command id, an integer 0..65535";
		}
		if (bad != NULL) {
			fprintf(stderr, "%s:%u: %s, got '%s'\n", path, ln, want, bad);
			goto fail;
		}
		if (nt > 5)
			x->cmd = (uint16_t)iv;
		for (unsigned int i = 6; i < nt; i++) {
			size_t l = strlen(tok[i]) + 1;

			if (x->args_len + l > NL_PROTO_MAX_ARGS) {
				fprintf(stderr, "%s:%u: arguments longer than %u bytes\n", path, ln,
					NL_PROTO_MAX_ARGS);
				goto fail;
			}
			memcpy(x->args + x->args_len, tok[i], l);
			x->args_len = (uint8_t)(x->args_len + l);
		}
		k++;
	}
	if (ferror(f)) {
		fprintf(stderr, "nlevel-loadgen: --replay %s: read error\n", path);
		goto fail;
	}
	if (k == 0) {
		fprintf(stderr, "nlevel-loadgen: --replay %s: no task lines\n", path);
		goto fail;
	}
	fclose(f);
	*out = t;
	*n = k;
	return 0;
fail:
	fclose(f);
	free(t);
	return -1;
}

/* a and b are one IPv4 address and port. */
static bool
same_addr(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_family == AF_INET && b->sin_family == AF_INET &&
	       a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

/* a as "A.B.C.D:PORT" in buf (for messages). */
static const char *
addr_str(const struct sockaddr_in *a, char *buf, size_t cap)
{
	char ip[INET_ADDRSTRLEN];

	if (inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip)) == NULL)
		snprintf(ip, sizeof(ip), "?");
	snprintf(buf, cap, "%s:%u", ip, (unsigned int)ntohs(a->sin_port));
	return buf;
}

/*
 * Send task id's SUBMIT to dst. Its client_ts_ns is x->submit_ns, the time of the task's
 * first SUBMIT: a task sent again at a failover echoes it, so its response counts from then.
 * `resend`: it is such a task, flagged so (the standby answers it from what the dead
 * appliance's workers say of it rather than run it twice, docs/scale-out.md).
 */
static void
send_submit(int fd, const struct sockaddr_in *dst, const struct task *x, uint64_t id,
	    bool reroute, bool resend, struct nl_auth_tx *tx)
{
	struct nl_msg m = { .type = NL_MSG_SUBMIT };
	uint8_t out[NL_PROTO_MAX_LEN];
	int len;

	m.u.submit.task_id = id;
	m.u.submit.need = x->need;
	m.u.submit.instr = x->instr;
	m.u.submit.data_bits = x->data;
	m.u.submit.n_split = x->split;
	m.u.submit.cmd_id = x->cmd;
	m.u.submit.args_len = x->args_len;
	m.u.submit.flags = (uint8_t)((reroute ? NL_SUBMIT_F_REROUTE : 0) |
				     (resend ? NL_SUBMIT_F_RESEND : 0));
	memcpy(m.u.submit.args, x->args, x->args_len);
	m.u.submit.client_ts_ns = x->submit_ns;
	len = nl_proto_seal(&m, tx, nl_auth_now_ns(), out, sizeof(out));
	if (len > 0)
		(void)sendto(fd, out, (size_t)len, 0, (const struct sockaddr *)dst, sizeof(*dst));
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nlevel-loadgen --appliance IP[:PORT] (--rate TPS | --load PCT | --replay FILE)\n"
		"                      [--config FILE | --res N --split L] [options]\n"
		"A client of the nlevel appliance on a plain UDP socket: submits tasks, measures each\n"
		"one from SUBMIT to its final answer (COMPLETE or REJECT), prints the reasons of\n"
		"every REJECT and a SUMMARY line.\n"
		"  --appliance IP[:PORT]  the appliance's address (required; default port %u)\n"
		"  --standby IP[:PORT]    its standby in a split tree (default port %u; not\n"
		"                         --appliance's address): SUBMITs go to one of the two, first\n"
		"                         --appliance; when it has sent nothing valid for\n"
		"                         --failover-s seconds while a SUBMIT has no ACCEPT yet (or,\n"
		"                         every task sent, while what it accepted is unanswered: the\n"
		"                         first failover only), switch to the other (and back the\n"
		"                         same way) and send every unanswered task that the other\n"
		"                         has not accepted there again (32 a millisecond), same id,\n"
		"                         flagged as a resend (the standby answers one that ran at\n"
		"                         the silent appliance from its workers' word instead of\n"
		"                         running it twice); its response then counts from its\n"
		"                         first SUBMIT. Answers from\n"
		"                         both addresses (a frame from any other is a bad frame); a\n"
		"                         task's first final answer counts. Default: none (one\n"
		"                         appliance, answers from any address, as before)\n"
		"  --failover-s S         --standby's silence, %g..%g s (default %g); take it\n"
		"                         longer than a task runs, or an appliance busy with long\n"
		"                         tasks and nothing else to answer looks dead\n"
		"  --config FILE          the appliance's configuration (INI): resources N, sub-tasks\n"
		"                         per task L, instructions and data per task, and --load\n"
		"  --tasks N              tasks to submit, 1..%u (default 1000; --replay: the file's\n"
		"                         lines, at most as many)\n"
		"  --rate TPS             Poisson arrivals, tasks per wall second\n"
		"  --load PCT             Poisson arrivals at PCT %% system load of --config's model\n"
		"  --scale S              wall seconds per model second for --load, > 0 (default\n"
		"                         1e-5, as nlevel-worker --scale)\n"
		"  --replay FILE          tasks from FILE, lines 't_s need instr data split [cmd\n"
		"                         [arg ...]]' (t_s: wall seconds from start, 0..1e6; need:\n"
		"                         1..16 hex digits; instr, data: 0..1e18; split 1..%u; cmd\n"
		"                         0..65535); a bad line is refused as FILE:LINE, exit 2\n"
		"  --res N                resources N, 1..64: each task needs a uniform random subset\n"
		"                         (default: --config's N; required without --config)\n"
		"  --split L              sub-tasks per task, 1..%u (default: --config's L;\n"
		"                         required without --config)\n"
		"  --instr I              instructions per task (default: --config's, else 8e6)\n"
		"  --data D               data per task in bits (default: --config's, else 0)\n"
		"  --cmd ID               task-farm command id run by the workers (default 0 = none)\n"
		"  --arg A                an argument of --cmd (repeatable, %u bytes in all)\n"
		"  --seed S               random seed, an integer (default: a fixed one)\n"
		"  --csv FILE             one row per task: task_id,need,cmd,submit_s,outcome,reason,\n"
		"                         status,resp_us (default: none); created before the run\n"
		"  --timeout S            give up S wall seconds after the last answer (default 10)\n"
		"                         0..1e6 s, counted once every task is sent; with --standby\n"
		"                         failover-s + S (a silent appliance's failover, then S for\n"
		"                         the answers of the tasks sent again)\n"
		"  --key FILE             site key of the appliance's --key (owner-only\n"
		"                         permissions): frames are authenticated (protocol version\n"
		"                         2); without it, version 1 (appliance without --key)\n"
		"  --principal NAME       with --key FILE holding NAME's key (nlevel-key): submit\n"
		"                         as principal NAME of the appliance's --principals\n"
		"  --reroute              with --key: ask a split tree to route a task again through\n"
		"                         a live part when its appliance is lost (SUBMIT flag)\n"
		"  --expect-complete      exit 1 unless every task COMPLETEs with status 0 (or\n"
		"                         --expect-status)\n"
		"  --expect-status CMD=STATUS\n"
		"                         exit status expected of command CMD (repeatable, up to 16)\n"
		"  --help                 this text\n"
		"SUMMARY keys: sent accepted rejected completed failed lost exit_nonzero\n"
		"unexpected_status mean_us p50_us p99_us bad_frames wall_s, rejected_REASON and\n"
		"failed_REASON per reason (no_machine, bad_task, overload, machine_lost, quota,\n"
		"other), then resent failovers dup_answers: SUBMITs sent again at failovers,\n"
		"switches between --appliance and --standby (both 0 without --standby), and final\n"
		"answers that came after a task's first (ignored otherwise); responses in\n"
		"microseconds of wall time from the first SUBMIT to COMPLETE.\n"
		"Exit status: 0 when every task got a final answer, 1 when some did not (or\n"
		"--expect-complete failed, or the --csv file could not be written), 2 on a bad\n"
		"command line, configuration or --replay file, or a --csv FILE that cannot be\n"
		"created.\n",
		NL_PROTO_PORT, NL_PROTO_PORT, NL_LG_FAILOVER_MIN_S, NL_LG_FAILOVER_MAX_S,
		NL_LG_FAILOVER_DEF_S, NL_LG_MAX_TASKS, NL_PROTO_MAX_SPLIT,
		NL_PROTO_MAX_SPLIT, NL_PROTO_MAX_ARGS);
}

/* Printable names of enum nl_reject_reason (managers/nl_task.h, docs/protocol.md). */
enum { N_REASONS = 7 };
static const char *const reason_name[N_REASONS] = {
	"none", "no_machine", "bad_task", "overload", "machine_lost", "quota", "other",
};

static unsigned int
reason_idx(unsigned int r)
{
	return r < N_REASONS - 1 ? r : N_REASONS - 1;
}

static const char *
opt_name(int c)
{
	switch (c) {
	case 'r': return "--rate";
	case 'L': return "--load";
	case 'N': return "--res";
	case 'l': return "--split";
	case 'I': return "--instr";
	case 'D': return "--data";
	case 'c': return "--cmd";
	default: return "option";
	}
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "appliance", required_argument, NULL, 'a' },
		{ "tasks", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, 'r' },
		{ "load", required_argument, NULL, 'L' },
		{ "config", required_argument, NULL, 'C' },
		{ "scale", required_argument, NULL, 's' },
		{ "replay", required_argument, NULL, 'R' },
		{ "res", required_argument, NULL, 'N' },
		{ "split", required_argument, NULL, 'l' },
		{ "instr", required_argument, NULL, 'I' },
		{ "data", required_argument, NULL, 'D' },
		{ "cmd", required_argument, NULL, 'c' },
		{ "arg", required_argument, NULL, 'A' },
		{ "seed", required_argument, NULL, 'S' },
		{ "csv", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 't' },
		{ "expect-complete", no_argument, NULL, 'E' },
		{ "expect-status", required_argument, NULL, 'X' },
		{ "key", required_argument, NULL, 'K' },
		{ "principal", required_argument, NULL, 'j' },
		{ "reroute", no_argument, NULL, 'W' },
		{ "standby", required_argument, NULL, 'B' },
		{ "failover-s", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_in app = { 0 }, standby = { 0 };
	bool have_app = false, expect = false, reroute = false;
	bool have_standby = false, have_failover = false;
	double failover_s = NL_LG_FAILOVER_DEF_S;
	const char *standby_arg = NULL;
	const char *config = NULL, *replay = NULL, *csv = NULL;
	FILE *csv_f = NULL;
	bool csv_failed = false;
	double rate = 0, load = 0, scale = 1e-5, instr = 8e6, data = 0, timeout_s = 10;
	unsigned int n_tasks = 1000, n_res = 0, split = 0, cmd = 0;
	bool have_res = false, have_split = false, have_instr = false, have_data = false;
	uint8_t args[NL_PROTO_MAX_ARGS];
	unsigned int args_len = 0, n_xs = 0;
	int xs_cmd[16], xs_st[16];
	struct task *tk = NULL;
	int c, fd;
	char *end;
	const char *key_file = NULL, *principal = NULL;
	static struct nl_auth_key key;
	static struct nl_auth_tx seal_tx;
	/* replay state per appliance, [0] --appliance (any sender without --standby) and
	 * [1] --standby: two appliances' sequences interleave */
	struct nl_replay rwin[2] = { { 0 } };

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		double v = 0;

		if (strchr("rLNlIDc", c) != NULL) {
			if (!num_ok(optarg, NL_LG_MAX_AMOUNT, &v)) {
				bool big = num_ok(optarg, HUGE_VAL, &v);

				fprintf(stderr, "nlevel-loadgen: %s: want a number >= 0, got '%s'%s\n",
					opt_name(c), optarg, big ? " (at most 1e18)" : "");
				return 2;
			}
			if (strchr("Nlc", c) != NULL && v != floor(v)) {
				fprintf(stderr, "nlevel-loadgen: %s: want an integer, got '%s'\n",
					opt_name(c), optarg);
				return 2;
			}
		}
		switch (c) {
		case 'a':
			if (nl_proto_parse_addr(optarg, &app) != 0) {
				fprintf(stderr, "nlevel-loadgen: bad address '%s'\n", optarg);
				return 2;
			}
			have_app = true;
			break;
		case 'n':
			if (!int_ok(optarg, 1, NL_LG_MAX_TASKS, &v)) {
				fprintf(stderr, "nlevel-loadgen: --tasks: want an integer 1..%u, got "
						"'%s'\n", NL_LG_MAX_TASKS, optarg);
				return 2;
			}
			n_tasks = (unsigned int)v;
			break;
		case 'r': rate = v; break;
		case 'L': load = v; break;
		case 'C': config = optarg; break;
		case 's':
			if (!num_ok(optarg, NL_LG_MAX_AMOUNT, &v) || v == 0) {
				fprintf(stderr, "nlevel-loadgen: --scale: want wall seconds per model "
						"second, a number > 0, got '%s'\n", optarg);
				return 2;
			}
			scale = v;
			break;
		case 'R': replay = optarg; break;
		case 'N':
			if (v < 1 || v > 64) {
				fprintf(stderr, "nlevel-loadgen: --res: resources N must be 1..64, got "
						"'%s'\n", optarg);
				return 2;
			}
			n_res = (unsigned int)v;
			have_res = true;
			break;
		case 'l':
			if (v < 1 || v > NL_PROTO_MAX_SPLIT) {
				fprintf(stderr, "nlevel-loadgen: --split: sub-tasks L must be 1..%u, got "
						"'%s'\n", NL_PROTO_MAX_SPLIT, optarg);
				return 2;
			}
			split = (unsigned int)v;
			have_split = true;
			break;
		case 'I': instr = v; have_instr = true; break;
		case 'D': data = v; have_data = true; break;
		case 'c':
			if (v > 65535) {
				fprintf(stderr, "nlevel-loadgen: --cmd: command id must be 0..65535, got "
						"'%s'\n", optarg);
				return 2;
			}
			cmd = (unsigned int)v;
			break;
		case 'A': {
			size_t l = strlen(optarg) + 1;

			if (args_len + l > NL_PROTO_MAX_ARGS) {
				fprintf(stderr, "nlevel-loadgen: arguments exceed %u bytes\n",
					NL_PROTO_MAX_ARGS);
				return 2;
			}
			memcpy(args + args_len, optarg, l);
			args_len += (unsigned int)l;
			break;
		}
		case 'S': {
			unsigned long long seed;

			errno = 0;
			seed = strtoull(optarg, &end, 10);
			if (!isdigit((unsigned char)optarg[0]) || *end != '\0' || errno != 0) {
				fprintf(stderr, "nlevel-loadgen: --seed: want an integer 0..%llu, got "
						"'%s'\n", (unsigned long long)UINT64_MAX, optarg);
				return 2;
			}
			rng_s = (uint64_t)seed * 2654435761u + 1;
			if (rng_s == 0) /* xorshift's one fixed point */
				rng_s = 1;
			break;
		}
		case 'o': csv = optarg; break;
		case 't':
			if (!num_ok(optarg, NL_LG_MAX_S, &v)) {
				fprintf(stderr, "nlevel-loadgen: --timeout: want seconds 0..%.0f, got '%s'\n",
					NL_LG_MAX_S, optarg);
				return 2;
			}
			timeout_s = v;
			break;
		case 'E': expect = true; break;
		case 'X': {
			char *eq = strchr(optarg, '=');
			long long xc, xst;
			bool ok;

			if (eq != NULL)
				*eq = '\0';
			ok = eq != NULL && n_xs < 16 && long_ok(optarg, 0, 65535, &xc) &&
			     long_ok(eq + 1, INT32_MIN, INT32_MAX, &xst);
			if (eq != NULL)
				*eq = '=';
			if (!ok) {
				fprintf(stderr, "nlevel-loadgen: --expect-status: want CMD=STATUS, CMD "
						"0..65535 and STATUS an integer (at most 16), got '%s'\n",
					optarg);
				return 2;
			}
			xs_cmd[n_xs] = (int)xc;
			xs_st[n_xs] = (int)xst;
			n_xs++;
			break;
		}
		case 'j':
			if (!nl_principal_name_ok(optarg)) {
				fprintf(stderr, "nlevel-loadgen: --principal: bad name '%s'\n", optarg);
				return 2;
			}
			principal = optarg;
			break;
		case 'K': key_file = optarg; break;
		case 'W': reroute = true; break;
		case 'B':
			if (nl_proto_parse_addr(optarg, &standby) != 0) {
				fprintf(stderr, "nlevel-loadgen: --standby: bad address '%s' (want "
						"IP[:PORT])\n", optarg);
				return 2;
			}
			standby_arg = optarg;
			have_standby = true;
			break;
		case 'F':
			if (!num_ok(optarg, NL_LG_FAILOVER_MAX_S, &v) || v < NL_LG_FAILOVER_MIN_S) {
				fprintf(stderr, "nlevel-loadgen: --failover-s: want seconds %g..%g, got "
						"'%s'\n", NL_LG_FAILOVER_MIN_S, NL_LG_FAILOVER_MAX_S, optarg);
				return 2;
			}
			failover_s = v;
			have_failover = true;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (reroute && key_file == NULL) {
		fprintf(stderr, "nlevel-loadgen: --reroute is a protocol version 2 flag: give --key\n");
		return 2;
	}
	if (optind != argc) {
		fprintf(stderr, "nlevel-loadgen: unexpected argument '%s' (options start with --; "
				"--help lists them)\n", argv[optind]);
		return 2;
	}
	if (!have_app) {
		fprintf(stderr, "nlevel-loadgen: --appliance IP[:PORT] is required (--help lists the "
				"options)\n");
		return 2;
	}
	if (have_failover && !have_standby) {
		fprintf(stderr, "nlevel-loadgen: --failover-s is the silence before a failover to "
				"--standby: give --standby IP[:PORT]\n");
		return 2;
	}
	if (have_standby && same_addr(&app, &standby)) {
		fprintf(stderr, "nlevel-loadgen: --standby %s is --appliance's address: give the "
				"standby's own\n", standby_arg);
		return 2;
	}
	if (key_file != NULL) {
		char err[512];

		if (nl_auth_key_load(key_file, &key, err, sizeof(err)) != 0) {
			fprintf(stderr, "nlevel-loadgen: --key: %s\n", err);
			return 2;
		}
		if (nl_replay_init(&rwin[0], 16) != 0 ||
		    (have_standby && nl_replay_init(&rwin[1], 16) != 0)) {
			nl_replay_free(&rwin[0]);
			return 1;
		}
		if (principal != NULL) /* #16: our principal's id in the sender id */
			nl_auth_tx_init_principal(&seal_tx, &key, principal);
		else
			nl_auth_tx_init(&seal_tx, &key);
	} else if (principal != NULL) {
		fprintf(stderr, "nlevel-loadgen: --principal needs --key (its key file)\n");
		return 2;
	}
	if (config != NULL) {
		struct nl_cfg *cfg = NULL;
		struct nl_model_cfg m;
		char err[NL_CFG_ERR_LEN];

		if (nl_cfg_load(&cfg, config, err, sizeof(err)) != 0 ||
		    nl_model_cfg_parse(cfg, &m) != 0) {
			fprintf(stderr, "nlevel-loadgen: %s\n", cfg != NULL ? cfg->err : err);
			nl_cfg_free(cfg);
			return 2;
		}
		nl_cfg_free(cfg);
		if (!have_res)
			n_res = m.n_res;
		if (!have_split)
			split = m.n_split;
		if (!have_instr)
			instr = m.instr;
		if (!have_data)
			data = m.data_bits;
		if (load > 0)
			rate = nl_model_arrival_rate(&m, load) / (scale > 0 ? scale : 1);
		fprintf(stderr, "nlevel-loadgen: %s: N = %u resources, L = %u sub-tasks, %g "
				"instructions, %g bits per task\n", config, n_res, split, instr, data);
	} else if (load > 0) {
		fprintf(stderr, "nlevel-loadgen: --load needs --config FILE (the model it is a load "
				"of)\n");
		return 2;
	}
	if (split > NL_PROTO_MAX_SPLIT) {
		fprintf(stderr, "nlevel-loadgen: L = %u sub-tasks is more than the protocol's %u\n",
			split, NL_PROTO_MAX_SPLIT);
		return 2;
	}
	if (replay != NULL) {
		if (load_replay(replay, &tk, &n_tasks) != 0)
			return 2;
	} else {
		if (!(rate > 0) || n_tasks == 0) {
			fprintf(stderr, "nlevel-loadgen: give --rate TPS, --load PCT with --config FILE, "
					"or --replay FILE (and --tasks N >= 1)\n");
			return 2;
		}
		if (n_res == 0 || split == 0) {
			fprintf(stderr, "nlevel-loadgen: give --config FILE (the appliance's "
					"configuration) or both --res N and --split L: the task shape must "
					"match the appliance's model, or it answers REJECT\n");
			return 2;
		}
		tk = calloc(n_tasks, sizeof(*tk)); /* n_tasks <= NL_LG_MAX_TASKS */
		if (tk == NULL) {
			fprintf(stderr, "nlevel-loadgen: no memory for %u tasks\n", n_tasks);
			return 1;
		}
		double t = 0;

		for (unsigned int i = 0; i < n_tasks; i++) {
			t += -log(1.0 - unif()) / rate;
			tk[i].at_s = t;
			tk[i].need = rnd() & (n_res >= 64 ? ~0ull : ((1ull << n_res) - 1));
			tk[i].instr = (uint64_t)instr;
			tk[i].data = (uint64_t)data;
			tk[i].split = (uint16_t)split;
			tk[i].cmd = (uint16_t)cmd;
			tk[i].args_len = (uint8_t)args_len;
			memcpy(tk[i].args, args, args_len);
		}
	}
	if (csv != NULL) {
		/* opened before the run: a path that cannot be written is a bad command line */
		csv_f = fopen(csv, "w");
		if (csv_f == NULL) {
			fprintf(stderr, "nlevel-loadgen: --csv %s: %s\n", csv, strerror(errno));
			free(tk);
			return 2;
		}
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("nlevel-loadgen: socket");
		if (csv_f != NULL)
			fclose(csv_f);
		free(tk);
		return 1;
	}
	int buf = 8 << 20;

	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	uint64_t t0 = now_ns(), last_progress = t0;
	/*
	 * The run ends when every task has its final answer, or once every task is sent and
	 * nothing has been answered (nor a new task sent) for --timeout S. With --standby it
	 * waits failover-s + S instead: the current appliance's silence cannot have started
	 * after the last answer or new task, so the first failover since comes within
	 * failover-s of it and the tasks it sends again still get S for their answers. Sending
	 * them again is not progress: with both appliances silent the run still ends,
	 * failover-s + S after the last answer, not never.
	 */
	const uint64_t timeout_ns = s_to_ns(timeout_s + (have_standby ? failover_s : 0));
	const uint64_t failover_ns = s_to_ns(failover_s);
	/* SUBMITs go to dst[cur]: [0] --appliance, [1] --standby (none: always 0) */
	const struct sockaddr_in dst[2] = { app, have_standby ? standby : app };
	unsigned int cur = 0;
	/* Since when dst[cur] has sent no valid frame while a task was unanswered: its last
	 * frame, the switch to it, or the SUBMIT that ended a time with nothing unanswered. */
	uint64_t quiet_since = t0;
	unsigned int sent = 0, done = 0;
	uint64_t n_acc = 0, n_rej = 0, n_comp = 0, n_fail = 0, n_bad = 0;
	uint64_t n_resent = 0, n_failovers = 0, n_dup = 0;
	/* tasks in ST_SENT: sent (to dst[cur]: a failover sends them all again) and not
	 * answered by any appliance yet, not even ACCEPTed */
	unsigned int n_unacc = 0;
	unsigned int rs_pos = UINT_MAX; /* next task to look at for a failover's resend */
	uint64_t rej_by[N_REASONS] = { 0 }, fail_by[N_REASONS] = { 0 };
	struct nl_auth_tx *tx = key_file != NULL ? &seal_tx : NULL;

	while (done < n_tasks) {
		uint64_t now = now_ns();

		if (have_standby && sent > done && now - quiet_since >= failover_ns &&
		    (n_unacc > 0 || (sent == n_tasks && n_failovers == 0))) {
			/* Failover: the current address is silent and a SUBMIT of ours has had no
			 * ACCEPT (it takes no task), or, once every task is sent, what it accepted
			 * goes unanswered (the first failover only: an appliance that holds accepted
			 * tasks a while, e.g. parked at a peer declared dead, is not flapped away
			 * from). Every task without a final answer that the other address has not
			 * accepted goes there at once (at most --tasks SUBMITs), so the pacing of new
			 * tasks below is not held back behind a backlog. */
			unsigned int again = 0;
			char was[32], to[32];

			cur ^= 1u;
			n_unacc = 0;
			for (unsigned int i = 0; i < sent; i++)
				if ((tk[i].state == ST_SENT || tk[i].state == ST_ACCEPTED) &&
				    tk[i].acc_by != cur) {
					tk[i].state = ST_SENT; /* accepted there, if at all, not here */
					tk[i].resend = 1;
					n_unacc++;
					again++;
				}
			rs_pos = 0;
			n_resent += again;
			n_failovers++;
			fprintf(stderr, "nlevel-loadgen: appliance %s silent for %.1f s with %u tasks "
					"unanswered: sent again to %s\n",
				addr_str(&dst[cur ^ 1u], was, sizeof(was)),
				(double)(now - quiet_since) / 1e9, again,
				addr_str(&dst[cur], to, sizeof(to)));
			now = now_ns();
			quiet_since = now;
		}
		/* the failover's SUBMITs, NL_LG_RESEND_BURST a millisecond: a burst of thousands
		 * overflows the appliance's receive ring (its own clients' frames with them) */
		for (unsigned int k = 0; rs_pos < sent && k < NL_LG_RESEND_BURST; rs_pos++) {
			if (!tk[rs_pos].resend)
				continue;
			tk[rs_pos].resend = 0;
			if (tk[rs_pos].state == ST_SENT) /* not answered meanwhile */
				send_submit(fd, &dst[cur], &tk[rs_pos], rs_pos, reroute, true, tx);
			k++;
		}
		while (sent < n_tasks && now - t0 >= s_to_ns(tk[sent].at_s)) {
			if (sent == done) /* nothing was unanswered: no silence until now */
				quiet_since = now;
			tk[sent].submit_ns = now_ns();
			tk[sent].acc_by = 0xff;
			send_submit(fd, &dst[cur], &tk[sent], sent, reroute, false, tx);
			sent++;
			n_unacc++;
			last_progress = now;
		}
		if (sent == n_tasks && now - last_progress > timeout_ns)
			break;
		int ms = rs_pos < sent ? 1 : 20;

		if (sent < n_tasks) {
			double due = tk[sent].at_s * 1e9 - (double)(now - t0);

			ms = due <= 0 ? 0 : (int)(due / 1e6);
			if (ms > 20 || (rs_pos < sent && ms > 1))
				ms = rs_pos < sent ? 1 : 20;
		}
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, ms) <= 0)
			continue;
		for (;;) {
			uint8_t in[2048];
			struct nl_msg m;
			struct sockaddr_in from;
			socklen_t from_len = sizeof(from);
			ssize_t n = recvfrom(fd, in, sizeof(in), MSG_DONTWAIT, (struct sockaddr *)&from,
					     &from_len);
			unsigned int src = 0; /* the appliance that sent it: an index of dst */
			uint64_t t;

			if (n < 0)
				break;
			if (have_standby) {
				/* only the two appliances' answers can be told apart and timed */
				if (from_len == sizeof(from) && same_addr(&from, &dst[1]))
					src = 1;
				else if (from_len != sizeof(from) || !same_addr(&from, &dst[0])) {
					n_bad++;
					continue;
				}
			}
			if (nl_proto_open(key_file != NULL ? &key : NULL, &rwin[src], in, (size_t)n,
					  nl_auth_now_ns(), &m) != NL_PROTO_OK ||
			    (m.type != NL_MSG_ACCEPT && m.type != NL_MSG_REJECT &&
			     m.type != NL_MSG_COMPLETE) ||
			    m.u.reply.task_id >= sent) {
				n_bad++;
				continue;
			}
			t = m.u.reply.task_id;
			last_progress = now_ns();
			if (src == cur)
				quiet_since = last_progress;
			if (tk[t].state == ST_REJECTED || tk[t].state == ST_COMPLETE) {
				/* the first final answer counts: a second one (the task sent again, or
				 * answered twice) changes nothing but dup_answers; a late ACCEPT nothing */
				if (m.type != NL_MSG_ACCEPT)
					n_dup++;
				continue;
			}
			if (tk[t].state == ST_SENT)
				n_unacc--; /* an appliance has it (any answer says so) */
			if (m.type == NL_MSG_ACCEPT) {
				if (tk[t].state == ST_SENT) {
					tk[t].state = ST_ACCEPTED;
					if (tk[t].acc_by == 0xff)
						n_acc++;
					tk[t].acc_by = (uint8_t)src;
				}
				continue;
			}
			tk[t].resp_ns = last_progress - m.u.reply.client_ts_ns;
			done++;
			if (m.type == NL_MSG_REJECT) {
				tk[t].state = ST_REJECTED;
				tk[t].reason = (uint8_t)m.u.reply.reason;
				n_rej++;
				rej_by[reason_idx(m.u.reply.reason)]++;
			} else {
				tk[t].state = ST_COMPLETE;
				tk[t].reason = (uint8_t)m.u.reply.reason;
				tk[t].status = m.u.reply.status;
				n_comp++;
				if (m.u.reply.reason != 0) {
					n_fail++;
					fail_by[reason_idx(m.u.reply.reason)]++;
				}
			}
		}
	}
	close(fd);
	nl_replay_free(&rwin[0]);
	nl_replay_free(&rwin[1]);

	uint64_t *r = malloc((n_comp + 1) * sizeof(*r)), nr = 0, nonzero = 0, unexpected = 0;
	double sum = 0;

	if (r == NULL) {
		fprintf(stderr, "nlevel-loadgen: out of memory\n");
		if (csv_f != NULL)
			fclose(csv_f);
		free(tk);
		return 1;
	}

	for (unsigned int i = 0; i < n_tasks; i++) {
		if (tk[i].state != ST_COMPLETE)
			continue;
		r[nr++] = tk[i].resp_ns;
		sum += (double)tk[i].resp_ns;
		if (tk[i].status != 0)
			nonzero++;
		int want = 0;

		for (unsigned int k = 0; k < n_xs; k++)
			if (xs_cmd[k] == tk[i].cmd)
				want = xs_st[k];
		if (tk[i].status != want)
			unexpected++;
	}
	qsort(r, nr, sizeof(*r), cmp_u64);
	double mean = nr ? sum / (double)nr / 1e3 : 0;
	double p50 = nr ? (double)r[(size_t)(0.50 * (double)(nr - 1))] / 1e3 : 0;
	double p99 = nr ? (double)r[(size_t)(0.99 * (double)(nr - 1))] / 1e3 : 0;
	uint64_t lost = n_tasks - done;
	double wall = (double)(now_ns() - t0) / 1e9;

	if (csv_f != NULL) {
		FILE *f = csv_f;
		int bad;

		fprintf(f, "task_id,need,cmd,submit_s,outcome,reason,status,resp_us\n");
		for (unsigned int i = 0; i < n_tasks; i++)
			fprintf(f, "%u,%llx,%u,%.6f,%s,%u,%d,%.1f\n", i,
				(unsigned long long)tk[i].need, tk[i].cmd,
				(double)(tk[i].submit_ns - t0) / 1e9,
				tk[i].state == ST_COMPLETE ? "complete" :
				tk[i].state == ST_REJECTED ? "reject" : "lost",
				tk[i].reason, tk[i].status, (double)tk[i].resp_ns / 1e3);
		bad = ferror(f);
		if (fclose(f) != 0 || bad) {
			fprintf(stderr, "nlevel-loadgen: --csv %s: write failed: %s\n", csv,
				strerror(errno));
			csv_failed = true;
		}
	}
	printf("nlevel-loadgen: %u tasks in %.2f s: %llu accepted, %llu rejected, %llu complete "
	       "(%llu failed), %llu lost; response mean %.1f us, p50 %.1f us, p99 %.1f us\n",
	       n_tasks, wall, (unsigned long long)n_acc, (unsigned long long)n_rej,
	       (unsigned long long)n_comp, (unsigned long long)n_fail, (unsigned long long)lost,
	       mean, p50, p99);
	for (unsigned int k = 1; k < N_REASONS; k++)
		if (rej_by[k] > 0)
			printf("nlevel-loadgen: %llu rejected: %s%s\n", (unsigned long long)rej_by[k],
			       reason_name[k],
			       k == 1 ? " (no machine matches the task's resource vector: are --res/"
					"--split the appliance's N and L? give --config)" :
			       k == 2 ? " (L or the vector is outside the appliance's model)" :
			       k == 3 ? " (admission control: inbox or task pool full)" :
			       k == 5 ? " (over this principal's cap: max_in_flight or max_rate)" : "");
	for (unsigned int k = 1; k < N_REASONS; k++)
		if (fail_by[k] > 0)
			printf("nlevel-loadgen: %llu failed: %s\n", (unsigned long long)fail_by[k],
			       reason_name[k]);
	if (n_failovers > 0 || n_dup > 0)
		printf("nlevel-loadgen: %llu failovers, %llu tasks sent again, %llu duplicate final "
		       "answers ignored\n", (unsigned long long)n_failovers,
		       (unsigned long long)n_resent, (unsigned long long)n_dup);
	printf("SUMMARY sent=%u accepted=%llu rejected=%llu completed=%llu failed=%llu lost=%llu "
	       "exit_nonzero=%llu unexpected_status=%llu mean_us=%.1f p50_us=%.1f p99_us=%.1f "
	       "bad_frames=%llu wall_s=%.2f",
	       n_tasks, (unsigned long long)n_acc, (unsigned long long)n_rej,
	       (unsigned long long)n_comp, (unsigned long long)n_fail, (unsigned long long)lost,
	       (unsigned long long)nonzero, (unsigned long long)unexpected, mean, p50, p99,
	       (unsigned long long)n_bad, wall);
	for (unsigned int k = 1; k < N_REASONS; k++)
		printf(" rejected_%s=%llu", reason_name[k], (unsigned long long)rej_by[k]);
	for (unsigned int k = 1; k < N_REASONS; k++)
		printf(" failed_%s=%llu", reason_name[k], (unsigned long long)fail_by[k]);
	/* appended after every older key (a parser of the older line still reads it); present
	 * without --standby too, resent and failovers then 0 */
	printf(" resent=%llu failovers=%llu dup_answers=%llu\n", (unsigned long long)n_resent,
	       (unsigned long long)n_failovers, (unsigned long long)n_dup);
	free(r);
	free(tk);
	if (lost > 0 || csv_failed)
		return 1;
	if (expect && (n_rej > 0 || n_fail > 0 || unexpected > 0))
		return 1;
	return 0;
}
