/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-worker: machines behind an nlevel appliance, on a plain UDP socket (no DPDK).
 *
 *   nlevel-worker --appliance IP[:PORT] --mach SPEED_IPS:VECTOR[:LINK_BPS] [--mach ...]
 *                 [--scale S] [--cmd ID=PATH ...] [--id N] [--load-ms MS]
 *                 [--exit-after S] [--die-after S] [--allow-root] [--quiet]
 *                 [--standby IP[:PORT] [--failover-s S]]
 *
 * Emulated machines: a sub-task of I instructions and D bits takes (I/W + D/T) model seconds,
 * times --scale wall seconds per model second; each machine is a FIFO server. Task-farm mode:
 * a DISPATCH whose command id is in this worker's own --cmd list runs that program with the
 * DISPATCH's bounded arguments (NUL-separated, at most 64 bytes) as argv, without a shell,
 * one at a time per machine, and DONE carries its exit status (128 + signal when killed;
 * 127 for an unknown command id, 126 when its principals or options rule refuses it). HELLO
 * at start (repeated until the appliance answers), LOAD every --load-ms, BYE at exit
 * (--die-after exits without BYE, to test the timeout).
 * The worker refuses to run as root unless --allow-root is given.
 *
 * --standby (docs/scale-out.md, an appliance's standby): when the appliance has sent nothing
 * for --failover-s, the worker HELLOs the standby too and moves there once the standby's
 * HELLO reply gives it slots (the standby adopted the dead appliance's subtree); there it
 * HELLOs the appliance every second and goes back once that answers with slots and the
 * worker holds nothing of the standby's. Each sub-task's DONE goes to the appliance that
 * DISPATCHed it. At the failover (issue #36, failover_tell()) what the dead appliance
 * DISPATCHed and has not started is withdrawn, and the standby is told, by relayed DONEs, what
 * became of other appliances' sub-tasks (ended, running, withdrawn), for their origins.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "nl_cgroup.h" /* issue #33: containment, limits, usage */
#include "nl_harden.h"
#include "nl_principal.h"
#include "nl_proto.h"
#include "nl_worker_farm.h" /* issue #15: named commands, machine records, output capture */
#include "nl_wqueue.h" /* issue #33: the per-machine queue, occupancy, KILL, DONE */
#include "nl_wpend.h" /* issue #34: DONEs resent until acknowledged */
#include "nl_wrec.h" /* issue #34: runs ended here, answered again from the record */
#include "nl_xa_proto.h" /* issue #36: NL_XA_MAX_APPS (a DISPATCH's origin appliance) */

extern char **environ;

#define MAX_CMDS 64u
#define QCAP NL_WQ_QCAP
#define MAX_ARGV 34u


struct cmd {
	uint16_t id;
	char *path;
};

static volatile sig_atomic_t stop_flag;

/* issue #15: a child's exit interrupts the loop's poll() (EINTR; poll is never restarted),
 * so the next command of a machine starts at once instead of at the next 5 ms poll. */
static void
on_chld(int s)
{
	(void)s;
}

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

/* SPEED_IPS:VECTOR[:LINK_BPS], VECTOR of '0' '1' '*' for resources 1..N */
static int
parse_mach(const char *s, struct nl_msg_mach *m, const char **why)
{
	char buf[256], *p1, *p2, *end;

	*why = "want SPEED_IPS:VECTOR[:LINK_BPS], e.g. 100e6:01 or 1e9:1*0:1e10";
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	memset(m, 0, sizeof(*m));
	p1 = strchr(buf, ':');
	if (p1 == NULL)
		return -1;
	*p1++ = '\0';
	p2 = strchr(p1, ':');
	if (p2 != NULL)
		*p2++ = '\0';
	double sp = strtod(buf, &end);

	if (*end != '\0' || !(sp >= 1) || sp > 1e18) {
		*why = "SPEED_IPS (before the first ':') must be a number of instructions per "
		       "second, 1..1e18";
		return -1;
	}
	m->speed_ips = (uint64_t)sp;
	m->link_bps = 10000000;
	if (p2 != NULL) {
		double l = strtod(p2, &end);

		if (*end != '\0' || !(l >= 1) || l > 1e18) {
			*why = "LINK_BPS (after the second ':') must be a number of bits per second, "
			       "1..1e18";
			return -1;
		}
		m->link_bps = (uint64_t)l;
	}
	size_t n = strlen(p1);

	if (n == 0 || n > NL_PROTO_MAX_RES) {
		*why = "VECTOR must have 1..64 entries, one of 0 1 * per resource";
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		if (p1[k] == '1')
			m->res_set |= UINT64_C(1) << k;
		else if (p1[k] == '*')
			m->res_any |= UINT64_C(1) << k;
		else if (p1[k] != '0') {
			*why = "VECTOR entries must be 0, 1 or * (one per resource, resource 1 first)";
			return -1;
		}
	}
	return 0;
}

/*
 * The appliances this worker talks to: apps[0] the --appliance (the primary), apps[1] the
 * --standby (n_apps 2 only with --standby). HELLO, LOAD and the farm messages go to the
 * current one, apps[cur_app]; a sub-task's DONE goes to the one that DISPATCHed it. cur_app
 * is written by the loop's thread only and read by the heartbeat thread too: an atomic index
 * into a fixed array, so no thread reads an address half written.
 */
static struct sockaddr_in apps[2];
static char app_names[2][32]; /* "IP:PORT" of each, for messages */
static unsigned int n_apps = 1;
static unsigned int cur_app; /* __atomic */
/* Left after a failover and not heard from since (the loop's thread only): the DONEs of its
 * sub-tasks still running here are sent to it once, not kept for resending (nobody there
 * will acknowledge them; its clients send their tasks elsewhere). */
static bool app_gone[2];

static unsigned int
cur_app_get(void)
{
	return __atomic_load_n(&cur_app, __ATOMIC_RELAXED);
}

/* The index in apps of the sender a, n_apps when it is neither appliance. */
static unsigned int
app_index(const struct sockaddr_in *a)
{
	for (unsigned int i = 0; i < n_apps; i++)
		if (a->sin_addr.s_addr == apps[i].sin_addr.s_addr &&
		    a->sin_port == apps[i].sin_port)
			return i;
	return n_apps;
}

/* --key: our sealing state and each appliance's replay window (NULL key: version 1); one
 * window per appliance: two appliances' sequence numbers are unrelated */
static struct nl_auth_tx seal_tx;
static const struct nl_auth_key *auth_key;
static struct nl_replay replay[2];

static uint64_t n_send_retry, n_send_lost; /* sendto() failures retried / given up */

/*
 * Send m to the appliance. A datagram the kernel refuses for a passing reason (EINTR, EAGAIN,
 * ENOBUFS: a full device queue or socket buffer, ENOMEM) is sent again, up to 40 times over
 * about 0.5 s, not dropped: a lost DONE leaves its task without an answer (issue #33). What
 * still fails is counted and said (the first 10).
 */
/* The heartbeat (issue #33): the main loop can stall for seconds inside one fork() on a busy
 * host (seen: 2-4 s, in the kernel's copy of the page tables, at load 8 on 2 cores), and the
 * appliance removes a worker it has not heard from for --worker-timeout, dispatching its
 * running sub-tasks again. A second thread repeats the last LOAD when the loop has sent none
 * for HB_AFTER_NS, so a worker that is only slow stays joined. tx_mu serialises sealing
 * (seal_tx's counter) and sending between the two threads. */
#define HB_AFTER_NS 500000000ull
static pthread_mutex_t tx_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nl_msg hb_load;    /* the last LOAD the loop sent (under tx_mu) */
static bool hb_have;             /* hb_load holds one (under tx_mu) */
static uint64_t hb_last_ns;      /* when a LOAD last went out (under tx_mu) */
static uint64_t n_heartbeats;    /* LOADs repeated by the heartbeat thread (under tx_mu) */
static int hb_quit; /* set once by the main thread at the end (__atomic) */

static void
send_msg_locked(int fd, const struct sockaddr_in *to, const struct nl_msg *m)
{
	uint8_t buf[NL_PROTO_MAX_LEN];
	int n = nl_proto_seal(m, auth_key != NULL ? &seal_tx : NULL, nl_auth_now_ns(), buf,
			      sizeof(buf));

	if (n <= 0)
		return;
	for (unsigned int i = 0;; i++) {
		if (sendto(fd, buf, (size_t)n, 0, (const struct sockaddr *)to, sizeof(*to)) == n)
			return;
		if (i < 40 && (errno == EINTR || errno == EAGAIN || errno == ENOBUFS ||
			       errno == ENOMEM)) {
			struct timespec ts = { 0, errno == EINTR ? 0 : (long)(i < 8 ? 1 << i : 16) * 1000000L };

			n_send_retry++;
			nanosleep(&ts, NULL);
			continue;
		}
		if (n_send_lost++ < 10)
			fprintf(stderr, "nlevel-worker: a %s to the appliance not sent: %s\n",
				m->type == NL_MSG_DONE ? "DONE" : "message", strerror(errno));
		return;
	}
}

static void
send_msg(int fd, const struct sockaddr_in *to, const struct nl_msg *m)
{
	pthread_mutex_lock(&tx_mu);
	send_msg_locked(fd, to, m);
	if (m->type == NL_MSG_LOAD) {
		hb_load = *m;
		hb_have = true;
		hb_last_ns = now_ns();
	}
	pthread_mutex_unlock(&tx_mu);
}

struct hb_arg {
	int fd;
};

static void *
heartbeat(void *arg)
{
	const struct hb_arg *a = arg;
	struct timespec ts = { 0, 100000000L };

	while (!__atomic_load_n(&hb_quit, __ATOMIC_RELAXED)) {
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&tx_mu);
		if (hb_have && now_ns() - hb_last_ns > HB_AFTER_NS) {
			send_msg_locked(a->fd, &apps[cur_app_get()], &hb_load);
			hb_last_ns = now_ns();
			n_heartbeats++;
		}
		pthread_mutex_unlock(&tx_mu);
	}
	return NULL;
}

/* #34: the runs this worker ended (task id, sub-task, attempt): a DISPATCH of one of them
 * again is answered from here, never run twice (the loop's thread only) */
static struct nl_wrec wrec;
static uint64_t n_dup_running, n_dup_ended;
/* #34: DONEs sent and not acknowledged yet, resent with back-off (the loop's thread only) */
static struct nl_wpend wpend;

/* #36: the last sub-tasks of other appliances' tasks (DISPATCHes with an origin block) that
 * ended here, with the appliance that DISPATCHed each. A failover tells the standby of those
 * the dead appliance DISPATCHed in the last RECENT_NS: a task of which one sub-task ended
 * (its DONE acknowledged) while another was still out has not been answered, and its origin
 * must know that it ran before it answers. The loop's thread only. */
#define RECENT_CAP 2048u
#define RECENT_NS 30000000000ull
#define RECENT_TOLD 0xffu /* recent[].from of one told already */
#define ORIGIN_RELAY 2u /* a queued sub-task's d.has_origin when its appliance lost it while it
			 * ran (failover, restart): its DONE is a relayed one */
static struct recent {
	struct nl_msg_done d;
	uint64_t end_ns;
	uint8_t from;
} recent[RECENT_CAP];
static unsigned int recent_n; /* put so far (the ring's next is recent_n % RECENT_CAP) */
static uint64_t n_relayed, n_withdrawn, n_told_running, n_told_ended;
static uint64_t n_disp_origin; /* DISPATCHes with an origin block (another appliance's or a
				* client's task: their ends are what a failover tells) */
static unsigned int orphan_pass; /* #36, no --standby: passes of direct_tell() made since the
				  * appliance fell silent (0: it speaks) */
static void direct_word(void *arg, const struct nl_msg_done *d);

/* #36: whether sub-task d is of another appliance's task (its DISPATCH had an origin block;
 * a hand-over sequence is never 0) */
static bool
has_origin(const struct nl_msg_dispatch *d)
{
	return d->has_origin && d->origin_seq != 0;
}

static void
recent_put(const struct nl_msg_done *d, unsigned int from)
{
	struct recent *r = &recent[recent_n++ % RECENT_CAP];

	r->d = *d;
	r->d.relay = NL_RELAY_NONE;
	r->end_ns = now_ns();
	r->from = (uint8_t)from;
}

/* a DONE due again goes to the appliance its first send went to (dest, an index of apps) */
static void
resend_done(void *arg, const struct nl_msg_done *d, unsigned int dest)
{
	const int *fd = arg;
	struct nl_msg m = { .type = NL_MSG_DONE };

	m.u.done = *d;
	send_msg(*fd, &apps[dest], &m); /* sealed anew: a fresh sequence number, not a replay */
}

/* DONE of d to appliance `to` (an index of apps: the one that DISPATCHed it); u (issue #33:
 * state, run/queue/cpu ms, peak memory) may be NULL (all 0). Kept until its DONE_ACK unless
 * that appliance is gone (app_gone). The run's end is recorded (#34) unless it never started
 * for want of queue room (125): a DISPATCH of it again may run it. */
static void
send_done_u(int fd, unsigned int to, const struct nl_msg_dispatch *d, int32_t status,
	    const struct nl_msg_done *u)
{
	struct nl_msg m = { .type = NL_MSG_DONE };

	if (u != NULL)
		m.u.done = *u;
	m.u.done.task_id = d->task_id;
	m.u.done.mach = d->mach;
	m.u.done.token = d->token;
	m.u.done.sub = d->sub;
	m.u.done.status = status;
	if (has_origin(d)) { /* #36: another appliance's task */
		m.u.done.origin_app = d->origin_app;
		m.u.done.origin_token = d->origin_token;
		m.u.done.origin_seq = d->origin_seq;
		recent_put(&m.u.done, to);
		if ((app_gone[to] && cur_app_get() != to) || d->has_origin == ORIGIN_RELAY) {
			/* its appliance died (to the standby), or restarted (to its new life) */
			m.u.done.relay = NL_RELAY_ENDED; /* tells the task's origin it ran */
			to = app_gone[to] ? cur_app_get() : to;
			n_relayed++;
		}
	}
	send_msg(fd, &apps[to], &m);
	if (orphan_pass > 0 && m.u.done.relay == NL_RELAY_NONE && m.u.done.origin_seq != 0)
		direct_word(&fd, &m.u.done); /* #36: its appliance is silent: the origin too */
	if (!app_gone[to])
		nl_wpend_add_to(&wpend, &m.u.done, now_ns(), to); /* until its DONE_ACK */
	if (!(m.u.done.state == NL_DONE_NOSTART && status == 125))
		nl_wrec_put(&wrec, d->task_id, d->sub, d->attempt, &m.u.done);
}

/*
 * #34: a DISPATCH of a run this worker holds or ended (same task id, sub-task and attempt
 * not 0: the appliance restarted and asks again, docs/taskfarm.md "Exactly once"): a queued
 * or running one takes the new token, machine index and sender (its DONE answers the new
 * DISPATCH, at the appliance `from` that sent it), an ended one is answered at once from the
 * record. true when answered so (nothing starts).
 */
static bool
dispatch_again(int fd, unsigned int from, struct nl_wq_mach *mach, unsigned int n_mach,
	       const struct nl_msg_dispatch *d)
{
	const struct nl_msg_done *rec;

	if (d->attempt == 0)
		return false;
	for (unsigned int i = 0; i < n_mach; i++)
		for (unsigned int k = 0; k < mach[i].n; k++) {
			struct nl_wq_sub *s = &mach[i].q[(mach[i].head + k) % QCAP];

			if (s->d.task_id == d->task_id && s->d.sub == d->sub &&
			    s->d.attempt == d->attempt) {
				s->d.token = d->token;
				s->d.mach = d->mach;
				s->from = (uint8_t)from;
				n_dup_running++;
				return true;
			}
		}
	rec = nl_wrec_find(&wrec, d->task_id, d->sub, d->attempt);
	if (rec == NULL)
		return false;
	struct nl_msg_done u = *rec;

	send_done_u(fd, from, d, rec->status, &u);
	n_dup_ended++;
	return true;
}

static void
send_done(int fd, unsigned int to, const struct nl_msg_dispatch *d, int32_t status)
{
	send_done_u(fd, to, d, status, NULL);
}

/* A sub-task that never ran (refused, unknown command, queue full, cgroup busy): state
 * NOSTART with the time it waited, to the appliance that DISPATCHed it. */
static void
send_nostart(int fd, const struct nl_wq_sub *s, int32_t status, uint64_t now)
{
	struct nl_msg_done u = { .state = NL_DONE_NOSTART };

	u.queue_ms = (uint32_t)((now - s->arr_ns) / 1000000);
	send_done_u(fd, s->from, &s->d, status, &u);
}

/* --runs FILE: one row per sub-task this worker ran to its end (emulated or a command), for
 * the accounting of which task ran where (tests join it with nlevel-loadgen --csv). The loop's
 * thread only. */
static FILE *runs_f;

static void
run_row(unsigned int from, const struct nl_msg_dispatch *d, int32_t status)
{
	static const char *const kind[] = { "own", "handover", "relay", "client" };
	struct timespec ts;
	char ip[INET_ADDRSTRLEN];
	unsigned int k = !has_origin(d) ? 0 : (d->origin_app & NL_ORIGIN_CLIENT) ? 3 :
			  d->has_origin == ORIGIN_RELAY ? 2 : 1;

	if (runs_f == NULL)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	inet_ntop(AF_INET, &apps[from].sin_addr, ip, sizeof(ip));
	fprintf(runs_f, "%lld.%03ld,%s,%s,%d,%llu,%u,%u,%d\n", (long long)ts.tv_sec,
		ts.tv_nsec / 1000000, ip, kind[k], k == 0 ? -1 : (int)(d->origin_app & ~NL_ORIGIN_CLIENT),
		(unsigned long long)d->task_id, d->sub, d->attempt, status);
}

/* #16: limits of every command (--rlimit) */
static struct nl_harden_limits cmd_limits;
static sigset_t cmd_mask; /* the signal mask the worker was started with: its commands' */
/* #33: containment (a cgroup per machine slot, or process groups) */
static struct nl_cg cg;
static unsigned int n_slow_sweeps;
static unsigned int n_slow_spawns;

/* nl_cg_kill() of slot k, timed: a sweep that holds the loop over 0.5 s (cgroup writes can
 * wait seconds on a busy host) is said on stderr, the first 20, for the log of a late DONE. */
static void
slot_kill(unsigned int k)
{
	uint64_t t0 = now_ns(), dt;
	int rc = nl_cg_kill(&cg, k);

	dt = now_ns() - t0;
	if (dt > 500000000ull && n_slow_sweeps++ < 20) {
		char left[512] = "";

		if (rc != 0)
			nl_cg_left(&cg, k, left, sizeof(left));
		fprintf(stderr, "nlevel-worker: the kill and cgroup sweep of slot %u held the loop "
			"%llu ms%s%s\n", k, (unsigned long long)(dt / 1000000),
			left[0] != '\0' ? "; not empty then: " : "", left);
	}
}

/* The worker ends the running command of machine m (slot k): its time limit or a KILL. */
static void
slot_end(struct nl_wq_mach *m, unsigned int k)
{
	m->kill_ns = now_ns();
	slot_kill(k);
}

/*
 * Where a turn of the worker's loop spends its time, for the log of a turn over 1 s (the host
 * can hold a process for seconds; docs/taskfarm.md): each phase's end is marked with
 * loop_mark(); the longest phase of the turn is said with the turn's length.
 */
static uint64_t ph_t, ph_max;
static const char *ph_max_name, *ph_tail = "start-up";
static unsigned int n_slow_turns;

static void
loop_mark(const char *name)
{
	uint64_t t = now_ns();
	int64_t d = (int64_t)(t - ph_t); /* < 0: a poll that ended before its timeout */

	if (d > 0 && (uint64_t)d > ph_max) {
		ph_max = (uint64_t)d;
		ph_max_name = name;
	}
	ph_t = t;
}

/* cmd_limits plus slot k's cgroups and the parent-death signal */
static struct nl_harden_limits
slot_limits(unsigned int k)
{
	struct nl_harden_limits l = cmd_limits;

	l.join_fd = cg.slot[k].join_fd;
	l.n_join = NL_CG_NCTL;
	l.pdeathsig = SIGKILL;
	l.mask = &cmd_mask; /* the starter blocks every signal; the command gets the worker's */
	return l;
}

static const struct cmd *
find_cmd(const struct cmd *c, unsigned int n, uint16_t id)
{
	for (unsigned int i = 0; i < n; i++)
		if (c[i].id == id)
			return &c[i];
	return NULL;
}

/* Start DISPATCH d's --cmd command c as a child process (task-farm): *pid. 0 or -errno. */
static int
spawn_cmd(const struct nl_msg_dispatch *d, const struct cmd *c, const struct nl_harden_limits *lim,
	  pid_t *pid_out)
{
	char args[NL_PROTO_MAX_ARGS + 1];
	char *argv[MAX_ARGV + 2];
	unsigned int argc = 0;
	pid_t pid;
	int rc;

	memcpy(args, d->args, d->args_len);
	args[d->args_len] = '\0';
	argv[argc++] = c->path;
	for (unsigned int i = 0; i < d->args_len && argc < MAX_ARGV;) {
		argv[argc++] = &args[i];
		while (i < d->args_len && args[i] != '\0')
			i++;
		i++;
	}
	argv[argc] = NULL;
	/* #35: --cmd has no template with a "--": a task argument may not be an option */
	for (unsigned int i = 1; i < argc; i++)
		if (argv[i][0] == '-')
			return -EACCES;
	/* #16: cleared environment, no inherited descriptors, own process group, --rlimit */
	rc = nl_harden_spawn(c->path, argv, lim, -1, -1, &pid);
	if (rc != 0)
		return rc;
	*pid_out = pid;
	return 0;
}

/* A sub-task not run (DONE 126 or 127): one line on stderr, the first 20 only. */
static void
refused(uint32_t wid, bool quiet, const struct nl_msg_dispatch *d, int rc)
{
	static unsigned int n;

	if (quiet || n++ >= 20)
		return;
	fprintf(stderr, "nlevel-worker %u: sub-task %u_%u.%u (command id %u) not run: %s%s\n", wid,
		(unsigned int)(d->task_id >> 32), (unsigned int)(d->task_id & 0xffffffffu), d->sub,
		d->cmd_id,
		rc == -EACCES ? "refused by its principals or options rule (status 126; the "
				"reason is in its .err file)" :
				"cannot start (status 127)", n == 20 ? " (further ones not shown)" : "");
}

static uint64_t max_time_ns; /* --max-time [ns], 0 = none */

/* #33: a command we ended (time limit, KILL, memory limit): one line on stderr, the first 50. */
static void
ended(uint32_t wid, bool quiet, const struct nl_msg_dispatch *d, const struct nl_msg_done *u)
{
	static const char *const what[NL_DONE_STATE_MAX] = {
		"exited", "ended at its time limit (timeout)", "cancelled (KILL)", "not started",
		"killed at its memory limit (oom)",
	};
	static unsigned int n;

	if (quiet || u->state == NL_DONE_EXITED || u->state >= NL_DONE_STATE_MAX || n++ >= 50)
		return;
	fprintf(stderr, "nlevel-worker %u: sub-task %u_%u.%u %s after %u ms, its cgroup (or "
			"process group) killed; cpu %u ms, peak %u KiB%s\n", wid,
		(unsigned int)(d->task_id >> 32), (unsigned int)(d->task_id & 0xffffffffu), d->sub,
		what[u->state], u->run_ms, u->cpu_ms, u->mem_peak_kib,
		n == 50 ? " (further ones not shown)" : "");
}

/* Machine m (slot k) started its head's command, asked for at t0 (ns): start (when the spawn
 * returned), deadline, pid to the keeper. A start that took over 0.5 s is said (the child's
 * join of the slot's cgroups was seen to take 1.5-21 s on a loaded host; docs/taskfarm.md):
 * on the starter thread it holds only that start, inline (no starter) the loop too. */
static void
cmd_started(struct nl_wq_mach *m, unsigned int k, uint64_t t0, bool inline_start)
{
	uint64_t now = now_ns();

	if (now - t0 > 500000000ull && n_slow_spawns++ < 20)
		fprintf(stderr, "nlevel-worker: starting the command of slot %u took %llu ms%s\n", k,
			(unsigned long long)((now - t0) / 1000000),
			inline_start ? " and held the loop" : " (on the starter thread)");
	nl_wq_started(m, now, max_time_ns);
	nl_cg_started(&cg, k, m->pid);
}

/*
 * Commands start off the loop: preparing the slot's cgroup (nl_cg_begin), the clone, the
 * child's join of the slot's cgroups and its exec (nl_harden_spawn) can wait seconds in the
 * kernel on a busy host, and the loop must keep reaping, killing at time limits and answering
 * meanwhile. The loop posts machine k's head (st_post()); the starter thread starts it; the
 * loop takes the result back (st_take()) and only then knows its pid. While mach[k].starting
 * slot k's cgroup is the starter's: the loop neither kills nor reads it, a KILL only marks the
 * head (killed once started), and the loop reaps only children it knows (wait4 of each known
 * pid, not wait4(-1), which could reap the new child before its pid is known).
 */
enum st_state { ST_IDLE = 0, ST_POSTED, ST_BUSY, ST_DONE };
struct st_req {
	enum st_state state;
	const struct nl_wfarm *wf;     /* with fc: a named command (issue #15) */
	const struct nl_wfarm_cmd *fc;
	const struct cmd *cm;          /* else a --cmd command */
	struct nl_msg_dispatch d;      /* the head's DISPATCH (a copy) */
	struct nl_harden_limits lim;
	uint64_t t0; /* asked for [ns] */
	int rc;      /* 0 or -errno */
	pid_t pid;
};
static struct st_req st_req[NL_PROTO_MAX_MACH];
static pthread_mutex_t st_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t st_cv = PTHREAD_COND_INITIALIZER;
static bool st_quit, st_running; /* st_quit under st_mu; st_running: the thread runs */
static int st_efd = -1;          /* eventfd(2): the starter wakes the loop's poll */
static unsigned int n_starting;  /* the loop's: machines with a start under way */

/* Slot k's start (on either thread): its cgroup emptied and reset, then the spawn. */
static void
st_do(struct st_req *r, unsigned int k)
{
	pid_t pid = 0;
	int rc = nl_cg_begin(&cg, k);

	if (rc == 0)
		rc = r->fc != NULL ? nl_wfarm_spawn(r->wf, r->fc, &r->d, &r->lim, &pid) :
				     spawn_cmd(&r->d, r->cm, &r->lim, &pid);
	r->rc = rc;
	r->pid = rc == 0 ? pid : 0;
}

static void *
starter(void *arg)
{
	unsigned int n = *(const unsigned int *)arg;

	pthread_mutex_lock(&st_mu);
	for (;;) {
		unsigned int k = 0;

		while (k < n && st_req[k].state != ST_POSTED)
			k++;
		if (k == n) {
			if (st_quit)
				break;
			pthread_cond_wait(&st_cv, &st_mu);
			continue;
		}
		st_req[k].state = ST_BUSY;
		pthread_mutex_unlock(&st_mu);
		st_do(&st_req[k], k); /* the request is the starter's while BUSY */
		pthread_mutex_lock(&st_mu);
		st_req[k].state = ST_DONE;
		if (st_efd >= 0) {
			const uint64_t one = 1;

			(void)!write(st_efd, &one, sizeof(one));
		}
	}
	pthread_mutex_unlock(&st_mu);
	return NULL;
}

/* Machine m's head has ended (answered): the next one becomes the head. Whether m is idle now. */
static bool
pop_head(struct nl_wq_mach *m)
{
	m->head = (m->head + 1) % QCAP;
	m->n--;
	return m->n == 0;
}

/* The loop: start machine m's (slot k) head, command fc of wf or cm, on the starter thread
 * (inline when there is none: the result is then ready for the next st_take()). */
static void
st_post(struct nl_wq_mach *m, unsigned int k, const struct nl_wfarm *wf,
	const struct nl_wfarm_cmd *fc, const struct cmd *cm)
{
	struct st_req *r = &st_req[k];

	pthread_mutex_lock(&st_mu);
	r->wf = wf;
	r->fc = fc;
	r->cm = cm;
	r->d = m->q[m->head].d;
	r->lim = slot_limits(k);
	r->t0 = now_ns();
	nl_cg_starting(&cg, k, true); /* the fallback's kill leaves its new child alone */
	r->state = st_running ? ST_POSTED : ST_BUSY;
	pthread_mutex_unlock(&st_mu);
	m->starting = true;
	n_starting++;
	if (!st_running) { /* no starter thread: the loop starts it itself */
		st_do(r, k);
		r->state = ST_DONE;
	} else {
		pthread_cond_signal(&st_cv);
	}
}

/* The loop: whether slot k's start has ended; then *rc, *pid and *t0 (and the slot is the
 * loop's again). */
static bool
st_take(struct nl_wq_mach *m, unsigned int k, int *rc, pid_t *pid, uint64_t *t0)
{
	struct st_req *r = &st_req[k];
	bool done;

	if (!m->starting)
		return false;
	pthread_mutex_lock(&st_mu);
	done = r->state == ST_DONE;
	if (done) {
		*rc = r->rc;
		*pid = r->pid;
		*t0 = r->t0;
		r->state = ST_IDLE;
	}
	pthread_mutex_unlock(&st_mu);
	if (done) {
		nl_cg_starting(&cg, k, false);
		m->starting = false;
		n_starting--;
	}
	return done;
}

/* Whether child pid has exited but is not reaped yet (waitid WNOWAIT: it stays a zombie). */
static bool
exited_already(pid_t pid)
{
	siginfo_t si = { 0 };

	return pid > 0 && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == pid;
}

/*
 * KILL (issue #33): the running sub-task's whole cgroup is killed (its DONE, state CANCELLED,
 * follows when it is reaped); a queued one is withdrawn and answered at once. false when the
 * worker does not hold that sub-task.
 */
static bool
on_kill(int fd, struct nl_wq_mach *mach, unsigned int n_mach, const struct nl_msg_kill *k)
{
	struct nl_msg_dispatch d;
	struct nl_msg_done u;
	uint8_t from = 0;

	uint8_t before = k->mach < n_mach ? mach[k->mach].end_state : 0;

	switch (nl_wq_kill_from(mach, n_mach, k, now_ns(), &d, &u, &from)) {
	case NL_WQ_KILL_RUNNING:
		if (mach[k->mach].starting)
			return true; /* marked CANCELLED: killed once started (st_take()) */
		if (exited_already(mach[k->mach].pid)) {
			/* it ended on its own first: its DONE says so (EXITED), not CANCELLED */
			mach[k->mach].end_state = before;
			return true;
		}
		slot_end(&mach[k->mach], k->mach);
		return true;
	case NL_WQ_KILL_QUEUED:
		send_done_u(fd, from, &d, 0, &u); /* to the appliance that DISPATCHed it */
		return true;
	default:
		return false;
	}
}

/* A HELLO of this worker's machines, with what each holds (#33: a rejoin sees it). */
static void
hello_msg(struct nl_msg *m, uint32_t wid, const struct nl_wq_mach *mach, unsigned int n_mach,
	  uint64_t now)
{
	memset(m, 0, sizeof(*m));
	m->type = NL_MSG_HELLO;
	m->u.hello.worker_id = wid;
	m->u.hello.n_mach = (uint16_t)n_mach;
	for (unsigned int i = 0; i < n_mach; i++) {
		m->u.hello.mach[i] = mach[i].desc;
		m->u.hello.mach[i].n_sub = mach[i].n;
		m->u.hello.mach[i].backlog_ns = nl_wq_backlog_ns(&mach[i], now);
	}
}

/* Machines a HELLO reply gives a slot (the others' entries carry UINT32_MAX). */
static unsigned int
reply_slots(const struct nl_msg_hello *h, unsigned int n_mach)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < n_mach && i < h->n_mach; i++)
		n += h->mach[i].slot != UINT32_MAX;
	return n;
}

/* The slots of a HELLO reply of the current appliance become our machines' slots; joined.
 * Returns how many machines got one. */
static unsigned int
take_slots(uint32_t wid, bool quiet, struct nl_wq_mach *mach, unsigned int n_mach,
	   const struct nl_msg_hello *h, bool *hello_ok, unsigned int *n_slot_seen)
{
	unsigned int n_slot = 0;

	for (unsigned int i = 0; i < n_mach && i < h->n_mach; i++) {
		mach[i].slot = h->mach[i].slot;
		n_slot += mach[i].slot != UINT32_MAX;
	}
	/* #34: count what the appliance placed (its log says the same); a machine without a
	 * slot takes no task. Said even with --quiet. */
	if (!*hello_ok && !quiet)
		fprintf(stderr, "nlevel-worker %u: joined, %u of %u machines\n", wid, n_slot,
			n_mach);
	if ((!*hello_ok || n_slot != *n_slot_seen) && n_slot < n_mach)
		fprintf(stderr,
			"nlevel-worker %u: warning: %u of %u machines got no slot at the "
			"appliance (their resource vectors have no free slot there, e.g. another "
			"appliance of a split tree owns them): they take no task\n",
			wid, n_mach - n_slot, n_mach);
	*n_slot_seen = n_slot;
	*hello_ok = true;
	return n_slot;
}

/* Emulated work: the model time of sub-task d on machine desc [s] (before --scale). */
static double
model_s(const struct nl_msg_mach *desc, const struct nl_msg_dispatch *d)
{
	return (double)d->instr / (double)desc->speed_ips +
	       (double)d->data_bits / (double)desc->link_bps;
}

/* #36: the relayed DONE of kind `relay` (enum nl_done_relay) of sub-task d, not ended */
static struct nl_msg_done
word_of(const struct nl_msg_dispatch *d, uint8_t relay)
{
	return (struct nl_msg_done){ .task_id = d->task_id, .mach = d->mach, .token = d->token,
				     .sub = d->sub, .relay = relay, .origin_app = d->origin_app,
				     .origin_token = d->origin_token,
				     .origin_seq = d->origin_seq };
}

/* #36: DONE d to appliance `to`, kept until its DONE_ACK */
static void
send_kept(int fd, unsigned int to, const struct nl_msg_done *d)
{
	struct nl_msg m = { .type = NL_MSG_DONE };

	m.u.done = *d;
	send_msg(fd, &apps[to], &m);
	nl_wpend_add_to(&wpend, &m.u.done, now_ns(), to);
}

/* #36: fn(arg, d) for each sub-task of another appliance's task that appliance `dead`
 * DISPATCHed and that ended here in the last RECENT_NS, newest first (d relayed ENDED);
 * with `told`, each is marked so that it is not visited again */
static void
recent_each(unsigned int dead, bool told, void (*fn)(void *arg, const struct nl_msg_done *d),
	    void *arg)
{
	const uint64_t now = now_ns();

	for (unsigned int k = 0; k < RECENT_CAP && k < recent_n; k++) {
		struct recent *r = &recent[(recent_n - 1 - k) % RECENT_CAP];
		struct nl_msg_done d = r->d;

		if (now - r->end_ns > RECENT_NS)
			break; /* older from here on */
		if (r->from != dead)
			continue;
		d.relay = NL_RELAY_ENDED;
		fn(arg, &d);
		if (told)
			r->from = RECENT_TOLD;
	}
}

/* recent_each() callback of failover_tell(): d to the appliance told, kept */
struct tell_to {
	int fd;
	unsigned int to;
};

static void
tell_ended(void *arg, const struct nl_msg_done *d)
{
	const struct tell_to *k = arg;

	send_kept(k->fd, k->to, d);
	n_told_ended++;
}

/*
 * #36: the worker failed over from appliance `dead` to `to`, its standby (or `dead` restarted
 * and the worker joined its new life: `to` == `dead`). What `dead`
 * DISPATCHed and has not started here is withdrawn (never runs: no answer of it would reach
 * anyone), and the standby is told, for another appliance's task, that it was withdrawn, that
 * the running one runs (its DONE follows, relayed), and which ended here in the last
 * RECENT_NS. The standby tells each task's origin, which answers REJECT machine_lost only a
 * task none of whose sub-tasks ran (docs/scale-out.md "Asked before machine_lost"). Emulated
 * work queued behind a withdrawn one is moved up.
 */
static void
failover_tell(int fd, struct nl_wq_mach *mach, unsigned int n_mach, unsigned int dead,
	      unsigned int to, double scale)
{
	const uint64_t now = now_ns();

	for (unsigned int i = 0; i < n_mach; i++) {
		struct nl_wq_mach *m = &mach[i];
		unsigned int keep = 0, n = m->n;
		uint64_t busy = now;

		for (unsigned int k = 0; k < n; k++) {
			struct nl_wq_sub s = m->q[(m->head + k) % QCAP];
			bool run = k == 0 && (s.d.cmd_id == 0 || m->pid > 0 || m->starting);
			struct nl_msg_done w;

			if (s.from == dead && !run) { /* withdrawn */
				w = word_of(&s.d, NL_RELAY_WITHDRAWN);
				if (has_origin(&s.d))
					send_kept(fd, to, &w);
				n_withdrawn++;
				continue;
			}
			if (s.from == dead && has_origin(&s.d)) {
				w = word_of(&s.d, NL_RELAY_RUNNING);
				send_kept(fd, to, &w);
				n_told_running++;
				s.d.has_origin = ORIGIN_RELAY; /* its DONE: relayed too */
			}
			if (s.d.cmd_id == 0) { /* emulated: its end after the ones kept before it */
				if (!run)
					s.fin_ns = (s.arr_ns > busy ? s.arr_ns : busy) +
						   (uint64_t)(model_s(&m->desc, &s.d) * scale * 1e9);
				busy = s.fin_ns > busy ? s.fin_ns : busy;
			}
			m->q[(m->head + keep++) % QCAP] = s;
		}
		m->n = keep;
		m->busy_until_ns = busy;
	}
	struct tell_to k = { fd, to };

	recent_each(dead, true, tell_ended, &k); /* each told once */
}

/* #36: what failover_tell() and the DONEs kept for `dead` told `to` */
struct told {
	uint32_t relayed, dropped; /* kept DONEs relayed to `to`; dropped (not another's task) */
	uint64_t ended, running, withdrawn;
};

/* #36: appliance `dead` was left for `to` (a failover), or `dead` restarted and the worker
 * joined its new life (`to` == `dead`): the DONEs kept for `dead` of other appliances' tasks
 * go to `to` relayed (nl_wpend_relay_to()), then failover_tell(); *c the counts */
static void
tell(int fd, struct nl_wq_mach *mach, unsigned int n_mach, unsigned int dead, unsigned int to,
     double scale, struct told *c)
{
	uint64_t w0 = n_withdrawn, r0 = n_told_running, e0 = n_told_ended;

	c->dropped = nl_wpend_relay_to(&wpend, dead, to, now_ns(), &c->relayed);
	failover_tell(fd, mach, n_mach, dead, to, scale);
	c->ended = n_told_ended - e0;
	c->running = n_told_running - r0;
	c->withdrawn = n_withdrawn - w0;
}

/* #36, no --standby: the appliances that accepted the tasks of sub-tasks here (a DISPATCH's
 * origin block gives each one's address), to tell them straight when this worker's appliance
 * falls silent */
static struct sockaddr_in origin_addr[NL_XA_MAX_APPS];
static uint64_t n_told_direct;

static void
origin_learn(const struct nl_msg_dispatch *d)
{
	if (!d->has_origin || d->origin_app >= NL_XA_MAX_APPS || d->origin_ip == 0)
		return;
	origin_addr[d->origin_app].sin_family = AF_INET;
	origin_addr[d->origin_app].sin_addr.s_addr = d->origin_ip;
	origin_addr[d->origin_app].sin_port = htons(d->origin_port);
}

/* A relayed DONE d straight to its task's origin (not kept: sent on each of the two passes of
 * direct_tell(), and each later end once) */
static void
direct_word(void *arg, const struct nl_msg_done *d)
{
	const int *fd = arg;
	struct nl_msg m = { .type = NL_MSG_DONE };

	if (d->origin_seq == 0 || d->origin_app >= NL_XA_MAX_APPS ||
	    origin_addr[d->origin_app].sin_family != AF_INET)
		return;
	m.u.done = *d;
	if (m.u.done.relay == NL_RELAY_NONE)
		m.u.done.relay = NL_RELAY_ENDED;
	send_msg(*fd, &origin_addr[d->origin_app], &m);
	n_told_direct++;
}

/*
 * #36, a worker without --standby whose appliance `dead` has been silent for --failover-s
 * (killed, cut off, or paused: it cannot tell which): each task origin is told straight, in
 * relayed DONEs, what became of its sub-tasks here: ended (DONEs the appliance has not
 * acknowledged, and those that ended in the last RECENT_NS), running or queued (they run on:
 * the appliance may come back). The origin answers REJECT machine_lost only a task none of
 * whose sub-tasks ran, and waits for the ends of those said to run. Nothing is withdrawn (a
 * paused appliance comes back for them). Two passes (`last`: the second, 1 s after the
 * first), for a datagram lost on the way; the appliance's sub-tasks that end while it is
 * silent are told as they end (send_done_u()).
 */
static void
direct_tell(int fd, const struct nl_wq_mach *mach, unsigned int n_mach, unsigned int dead,
	    bool last)
{
	int f = fd;

	nl_wpend_each_to(&wpend, dead, direct_word, &f);
	for (unsigned int i = 0; i < n_mach; i++)
		for (unsigned int k = 0; k < mach[i].n; k++) {
			const struct nl_wq_sub *q = &mach[i].q[(mach[i].head + k) % QCAP];
			struct nl_msg_done w = word_of(&q->d, NL_RELAY_RUNNING);

			if (q->from == dead && has_origin(&q->d))
				direct_word(&f, &w);
		}
	recent_each(dead, last, direct_word, &f);
}

/* Sub-tasks queued or running here that appliance `from` DISPATCHed. */
static unsigned int
held_from(const struct nl_wq_mach *mach, unsigned int n_mach, unsigned int from)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < n_mach; i++)
		for (unsigned int k = 0; k < mach[i].n; k++)
			n += mach[i].q[(mach[i].head + k) % QCAP].from == from;
	return n;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nlevel-worker --appliance IP[:PORT] --mach SPEED_IPS:VECTOR[:LINK_BPS] "
		"[--mach ...] [options]\n"
		"Machines behind the nlevel appliance, on a plain UDP socket (no DPDK).\n"
		"  --appliance IP[:PORT]  the appliance's address (required; default port %u)\n"
		"  --standby IP[:PORT]    that appliance's standby in a split tree (docs/\n"
		"                         scale-out.md; default port as --appliance's): when\n"
		"                         the appliance has sent nothing for --failover-s,\n"
		"                         HELLO the standby too (flagged failover: the\n"
		"                         standby keeps the adopted slots for such HELLOs\n"
		"                         10 s) and move there once its HELLO reply gives\n"
		"                         slots (it adopted the appliance's subtree). Then\n"
		"                         what the appliance DISPATCHed and did not start\n"
		"                         here is withdrawn, and the standby is told which\n"
		"                         sub-tasks of other appliances' tasks and of the\n"
		"                         appliance's own clients' tasks ended, run or were\n"
		"                         withdrawn: their origin answers REJECT\n"
		"                         machine_lost only a task that did not run, and the\n"
		"                         standby runs a client's resend only then (relayed\n"
		"                         DONEs, docs/protocol.md); the appliance's other\n"
		"                         unacknowledged DONEs are dropped. From the standby, HELLO the appliance\n"
		"                         every second and go back once it answers with slots\n"
		"                         and nothing of the standby's is queued, running or\n"
		"                         unacknowledged here (one configured failback = no\n"
		"                         gives none: the worker stays; if the standby falls\n"
		"                         silent, it moves back as above). A DONE goes to\n"
		"                         the appliance that DISPATCHed its sub-task\n"
		"  --failover-s S         seconds without a valid frame from the current appliance\n"
		"                         before, with --standby, the other is asked, or, without,\n"
		"                         the origins of other appliances' tasks here are told\n"
		"                         straight what became of their sub-tasks (issue #36;\n"
		"                         default 3, 0.5..3600); joined, the worker HELLOs the\n"
		"                         current one every second (every S/2 when shorter) to\n"
		"                         hear from it\n"
		"  --mach SPEED_IPS:VECTOR[:LINK_BPS]\n"
		"                         one machine (required, 1..%u per worker): speed in\n"
		"                         instructions/s, resource vector (one of 0 1 * per\n"
		"                         resource, resource 1 first), link in bit/s (default 1e7)\n"
		"  --scale S              wall seconds per model second (default 1e-5): an emulated\n"
		"                         sub-task takes (I/W + D/T) * S wall seconds\n"
		"  --cmd ID=PATH          task-farm: command ID (1..65535) runs the absolute PATH\n"
		"                         with the DISPATCH's arguments (no shell; none may start\n"
		"                         with '-': status 126); repeatable, each ID once; PATH\n"
		"                         an executable regular file\n"
		"  --id N                 worker id in HELLO/LOAD (default: the process id)\n"
		"  --load-ms MS           LOAD report period in milliseconds (default 100, min 1)\n"
		"  --exit-after S         say BYE and exit after S wall seconds (default 0 = never)\n"
		"  --die-after S          exit silently after S wall seconds (default 0 = never)\n"
		"  --key FILE             site key of the appliance's --key (owner-only\n"
		"                         permissions): frames are authenticated (protocol version\n"
		"                         2); without it, version 1 (appliance without --key)\n"
		"  --principal NAME       with --key FILE holding NAME's key (nlevel-key): join as\n"
		"                         worker principal NAME of the appliance's --principals\n"
		"  --rlimit LIST          limits of every command, e.g. cpu=10,mem=512M,nofile=64,\n"
		"                         fsize=100M (CPU seconds, address space, open files,\n"
		"                         bytes a file may grow to; integers, sizes may end in k,\n"
		"                         M, G; each name once; a named command's fsize is at most\n"
		"                         output_cap); a command over its limit is\n"
		"                         killed and DONE says 128 + the signal. Commands always\n"
		"                         run with PATH=/usr/bin:/bin only, stdin /dev/null, no\n"
		"                         other inherited descriptors, in their own process group\n"
		"  --commands FILE        task farm: named commands (name = /abs/path + argument\n"
		"                         template), who may run each (principals NAME = ...),\n"
		"                         whether tasks may pass options (options NAME = allow),\n"
		"                         machine ClassAd attributes, output_dir and output_cap\n"
		"                         (docs/taskfarm.md); stdout/stderr of each sub-task go\n"
		"                         to OUTDIR/SUBMIT_INDEX.SUB.out / .err\n"
		"  --max-procs N          processes (and threads) per command, its cgroup's\n"
		"                         pids.max (default %u; 0 = no limit)\n"
		"  --max-mem SIZE         memory per command, its cgroup's memory limit (k, M, G;\n"
		"                         default: RAM / machines of this worker; 0 = no limit);\n"
		"                         a command over it is killed: DONE state oom\n"
		"  --max-time S           wall-clock limit of every command in seconds (default 0 =\n"
		"                         none); a task's own limit (nlevel-submit --time) applies\n"
		"                         when shorter; at the limit its whole cgroup is killed:\n"
		"                         DONE state timeout\n"
		"  --cgroup MODE          auto (default: v2 if /sys/fs/cgroup is cgroup2, else the\n"
		"                         v1 memory, pids, freezer, cpuacct hierarchies), v1, v2,\n"
		"                         off (process groups only); every command runs in its\n"
		"                         machine slot's cgroup <own>/nlevel/worker-ID@IP:PORT/mK\n"
		"                         (IP:PORT the appliance's), killed\n"
		"                         whole at its end, on KILL and at its limit, and by a\n"
		"                         keeper process if the worker dies (docs/taskfarm.md);\n"
		"                         v1:/PATH, v2:/PATH: that hierarchy root (tests). Under\n"
		"                         `ip netns exec` (no cgroups in its /sys) the worker\n"
		"                         mounts PID 1's hierarchies in its own mount namespace;\n"
		"                         one worker per --id, appliance and host\n"
		"                         (/run/nlevel/worker-ID@IP:PORT.lock)\n"
		"  --runs FILE            one CSV row per sub-task run here to its end:\n"
		"                         wall_s,appliance,origin_kind,origin_app,task_id,sub,\n"
		"                         attempt,status (appliance: the IP it was DISPATCHed\n"
		"                         from; origin_kind own, handover, relay or client and\n"
		"                         origin_app the config index of the appliance whose\n"
		"                         client sent the task, -1 for own; status the DONE's)\n"
		"  --allow-root           run commands as root (refused by default)\n"
		"  --quiet                no join/bye messages on stderr\n"
		"  --help                 this text\n"
		"Exit status: 0 after BYE, 1 on a socket error, 2 on a bad command line.\n",
		NL_PROTO_PORT, NL_PROTO_MAX_MACH, NL_CG_DEF_PROCS);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "appliance", required_argument, NULL, 'a' },
		{ "standby", required_argument, NULL, 'S' },
		{ "failover-s", required_argument, NULL, 'F' },
		{ "mach", required_argument, NULL, 'm' },
		{ "scale", required_argument, NULL, 's' },
		{ "cmd", required_argument, NULL, 'c' },
		{ "id", required_argument, NULL, 'i' },
		{ "load-ms", required_argument, NULL, 'l' },
		{ "exit-after", required_argument, NULL, 'x' },
		{ "die-after", required_argument, NULL, 'd' },
		{ "allow-root", no_argument, NULL, 'R' },
		{ "key", required_argument, NULL, 'K' },
		{ "principal", required_argument, NULL, 'j' },
		{ "rlimit", required_argument, NULL, 'J' },
		{ "commands", required_argument, NULL, 'C' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "max-procs", required_argument, NULL, 'P' },
		{ "max-mem", required_argument, NULL, 'M' },
		{ "max-time", required_argument, NULL, 'T' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "runs", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_in app = { 0 }, standby = { 0 };
	bool have_standby = false;
	double failover_s = 3; /* --failover-s */
	bool have_app = false, allow_root = false, quiet = false, hello_ok = false;
	unsigned int n_slot_seen = UINT32_MAX; /* #34: slots the last HELLO reply gave */
	bool hello_warned = false;
	bool rejoin_tell = false; /* #36: tell the appliance's new life once joined again */
	struct nl_wq_mach mach[NL_PROTO_MAX_MACH];
	unsigned int n_mach = 0, n_cmd = 0;
	struct cmd cmds[MAX_CMDS];
	double scale = 1e-5, exit_after = 0, die_after = 0, load_ms = 100;
	uint32_t wid = (uint32_t)getpid();
	uint64_t t0, next_hello = 0, next_load = 0, n_done = 0, n_bad = 0;
	const char *key_file = NULL, *principal = NULL, *farm_file = NULL;
	static struct nl_wfarm wfarm; /* --commands (issue #15) */
	uint64_t next_farm = 0, last_rejoin_ns = 0, n_rejoin = 0; /* #36: joined again */
	static struct nl_auth_key key;
	uint64_t max_mem = 0, max_time_ms = 0, n_kill_unknown = 0;
	uint64_t loop_prev = 0, loop_gap_max = 0; /* the longest turn of the loop (ns): silence */
	uint32_t max_procs = NL_CG_DEF_PROCS;
	bool max_mem_set = false;
	const char *cg_want = "auto";
	int c, fd;
	char *end;

	memset(mach, 0, sizeof(mach));
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (nl_proto_parse_addr(optarg, &app) != 0) {
				fprintf(stderr, "nlevel-worker: --appliance: bad address '%s'\n", optarg);
				return 2;
			}
			have_app = true;
			break;
		case 'r':
			if (runs_f != NULL || (runs_f = fopen(optarg, "we")) == NULL) {
				fprintf(stderr, "nlevel-worker: --runs: cannot create '%s': %s\n",
					optarg, runs_f != NULL ? "given twice" : strerror(errno));
				return 2;
			}
			setvbuf(runs_f, NULL, _IOLBF, 0);
			fprintf(runs_f, "wall_s,appliance,origin_kind,origin_app,task_id,sub,attempt,"
					"status\n");
			break;
		case 'S':
			if (nl_proto_parse_addr(optarg, &standby) != 0) {
				fprintf(stderr, "nlevel-worker: --standby: bad address '%s' (want "
						"IP[:PORT])\n", optarg);
				return 2;
			}
			have_standby = true;
			break;
		case 'F': {
			double v = strtod(optarg, &end);

			if (*end != '\0' || end == optarg || !(v >= 0.5) || v > 3600) {
				fprintf(stderr, "nlevel-worker: --failover-s: want seconds "
						"0.5..3600, got '%s'\n", optarg);
				return 2;
			}
			failover_s = v;
			break;
		}
		case 'm': {
			const char *why;

			if (n_mach == NL_PROTO_MAX_MACH) {
				fprintf(stderr, "nlevel-worker: --mach: at most %u machines per worker\n",
					NL_PROTO_MAX_MACH);
				return 2;
			}
			if (parse_mach(optarg, &mach[n_mach].desc, &why) != 0) {
				fprintf(stderr, "nlevel-worker: --mach '%s': %s\n", optarg, why);
				return 2;
			}
			n_mach++;
			break;
		}
		case 's':
		case 'x':
		case 'd':
		case 'l': {
			double v = strtod(optarg, &end);

			if (*end != '\0' || !(v >= 0) || v > 1e9) {
				fprintf(stderr, "nlevel-worker: --%s: want a number 0..1e9, got '%s'\n",
					c == 's' ? "scale" : c == 'x' ? "exit-after" :
					c == 'd' ? "die-after" : "load-ms", optarg);
				return 2;
			}
			if (c == 's')
				scale = v;
			else if (c == 'x')
				exit_after = v;
			else if (c == 'd')
				die_after = v;
			else
				load_ms = v > 1 ? v : 1;
			break;
		}
		case 'c': {
			char *eq = strchr(optarg, '=');
			long id = strtol(optarg, &end, 10);

			if (eq == NULL || end != eq || id < 1 || id > 65535 || n_cmd == MAX_CMDS ||
			    eq[1] != '/') {
				fprintf(stderr, "nlevel-worker: --cmd: want ID=/absolute/path, got '%s'\n",
					optarg);
				return 2;
			}
			if (find_cmd(cmds, n_cmd, (uint16_t)id) != NULL) {
				fprintf(stderr, "nlevel-worker: --cmd %ld given twice ('%s')\n", id,
					optarg);
				return 2;
			}
			char why[300];

			if (nl_wfarm_program_ok(eq + 1, why, sizeof(why)) != 0) {
				fprintf(stderr, "nlevel-worker: --cmd %ld: %s\n", id, why);
				return 2;
			}
			cmds[n_cmd].id = (uint16_t)id;
			cmds[n_cmd++].path = eq + 1;
			break;
		}
		case 'i': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end != '\0' || end == optarg || v > UINT32_MAX) {
				fprintf(stderr, "nlevel-worker: --id: want an integer 0..%u, got '%s'\n",
					UINT32_MAX, optarg);
				return 2;
			}
			wid = (uint32_t)v;
			break;
		}
		case 'R':
			allow_root = true;
			break;
		case 'K':
			key_file = optarg;
			break;
		case 'J':
			if (nl_harden_parse_limits(optarg, &cmd_limits) != 0) {
				fprintf(stderr, "nlevel-worker: --rlimit: want cpu=S,mem=BYTES,nofile=N,"
						"fsize=BYTES (any of them, each once; S and N integers >= 1; "
						"BYTES an integer >= 1, may end in k, M, G), got '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'j':
			if (!nl_principal_name_ok(optarg)) {
				fprintf(stderr, "nlevel-worker: --principal: bad name '%s'\n", optarg);
				return 2;
			}
			principal = optarg;
			break;
		case 'C':
			farm_file = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'P': { /* issue #33 */
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end != '\0' || end == optarg || v > 4194304) {
				fprintf(stderr, "nlevel-worker: --max-procs: want an integer 0..4194304 "
						"(0 = no limit), got '%s'\n", optarg);
				return 2;
			}
			max_procs = (uint32_t)v;
			break;
		}
		case 'M':
			max_mem_set = true;
			if (strcmp(optarg, "0") != 0 && nl_cg_parse_size(optarg, &max_mem) != 0) {
				fprintf(stderr, "nlevel-worker: --max-mem: want a size in bytes (k, M, G "
						"suffixes) or 0 for no limit, got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'T': {
			double v = strtod(optarg, &end);

			if (*end != '\0' || end == optarg || !(v >= 0) || v > 4e6) {
				fprintf(stderr, "nlevel-worker: --max-time: want seconds 0..4e6 (0 = no "
						"limit), got '%s'\n", optarg);
				return 2;
			}
			max_time_ms = (uint64_t)(v * 1000 + 0.5);
			break;
		}
		case 'G':
			if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "v1") != 0 &&
			    strcmp(optarg, "v2") != 0 && strcmp(optarg, "off") != 0 &&
			    strncmp(optarg, "v1:/", 4) != 0 && strncmp(optarg, "v2:/", 4) != 0) {
				fprintf(stderr, "nlevel-worker: --cgroup: want auto, v1, v2, off, v1:/PATH "
						"or v2:/PATH, got '%s'\n", optarg);
				return 2;
			}
			cg_want = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!have_app || n_mach == 0 || optind != argc) {
		fprintf(stderr, "nlevel-worker: %s\n",
			optind != argc ? "unexpected argument (options start with --)" :
			!have_app ? "--appliance IP[:PORT] is required" :
				    "at least one --mach SPEED_IPS:VECTOR is required");
		usage(stderr);
		return 2;
	}
	if (have_standby && standby.sin_addr.s_addr == app.sin_addr.s_addr &&
	    standby.sin_port == app.sin_port) {
		fprintf(stderr, "nlevel-worker: --standby is the --appliance's address: give the "
				"standby appliance's own address\n");
		return 2;
	}
	apps[0] = app;
	apps[1] = standby;
	n_apps = have_standby ? 2 : 1;
	for (unsigned int i = 0; i < n_apps; i++)
		snprintf(app_names[i], sizeof(app_names[i]), "%s:%u", inet_ntoa(apps[i].sin_addr),
			 (unsigned int)ntohs(apps[i].sin_port));
	if (geteuid() == 0 && !allow_root) {
		fprintf(stderr, "nlevel-worker: refusing to run as root (it runs commands for the "
				"network); use an unprivileged user or --allow-root\n");
		return 2;
	}
	if (key_file != NULL) {
		char err[512];

		if (nl_auth_key_load(key_file, &key, err, sizeof(err)) != 0) {
			fprintf(stderr, "nlevel-worker: --key: %s\n", err);
			return 2;
		}
		for (unsigned int i = 0; i < n_apps; i++)
			if (nl_replay_init(&replay[i], 16) != 0)
				return 1;
		if (principal != NULL) /* #16: our principal's id in the sender id */
			nl_auth_tx_init_principal(&seal_tx, &key, principal);
		else
			nl_auth_tx_init(&seal_tx, &key);
		auth_key = &key;
	} else if (principal != NULL) {
		fprintf(stderr, "nlevel-worker: --principal needs --key (its key file)\n");
		return 2;
	}
	if (nl_wrec_init(&wrec) != 0 || nl_wpend_init(&wpend) != 0) { /* #34 */
		fprintf(stderr, "nlevel-worker: out of memory\n");
		return 1;
	}
	if (farm_file != NULL) { /* issue #15: named commands and machine records */
		struct nl_msg_mach desc[NL_PROTO_MAX_MACH];
		char err[512];

		for (unsigned int i = 0; i < n_mach; i++)
			desc[i] = mach[i].desc;
		if (nl_wfarm_load(&wfarm, farm_file, wid, n_mach, desc, err, sizeof(err)) != 0) {
			fprintf(stderr, "nlevel-worker: --commands: %s\n", err);
			nl_wfarm_free(&wfarm);
			return 2;
		}
	}
	{ /* issue #33: containment; the default memory limit is the machine's share of RAM */
		char line[NL_CG_PATH + 800];
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

		if (!max_mem_set && pages > 0 && psz > 0)
			max_mem = (uint64_t)pages * (uint64_t)psz / n_mach;
		if (nl_cg_open(&cg, wid, app_names[0], n_mach, max_mem, max_procs, cg_want, line,
			       sizeof(line)) ==
		    NL_CG_OFF)
			fprintf(stderr, "nlevel-worker %u: %s\n", wid, line); /* always: a warning */
		else if (!quiet)
			fprintf(stderr, "nlevel-worker %u: containment: %s; per command at most %u "
					"processes, %llu MiB%s\n", wid, line, max_procs,
				(unsigned long long)(max_mem >> 20),
				max_time_ms > 0 ? ", --max-time" : "");
	}
	for (unsigned int i = 0; i < n_mach; i++) {
		mach[i].q = calloc(QCAP, sizeof(struct nl_wq_sub));
		mach[i].slot = UINT32_MAX;
		if (mach[i].q == NULL)
			return 1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("nlevel-worker: socket");
		return 1;
	}
	int rcv = 4 << 20;

	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	signal(SIGCHLD, on_chld);
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	signal(SIGPIPE, SIG_IGN);
	/* the heartbeat thread takes no signal: SIGCHLD and SIGTERM reach the loop */
	pthread_t hb_th;
	struct hb_arg hb_a = { .fd = fd };
	sigset_t all, old_mask;
	bool hb_started;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old_mask);
	cmd_mask = old_mask;
	hb_started = pthread_create(&hb_th, NULL, heartbeat, &hb_a) == 0;
	/* commands start on a thread of their own (st_post()); none: inline, as before */
	pthread_t st_th;
	unsigned int st_n = n_mach;

	if (n_cmd > 0 || wfarm.n_cmd > 0) {
		st_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		st_running = pthread_create(&st_th, NULL, starter, &st_n) == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	if (!hb_started)
		fprintf(stderr, "nlevel-worker %u: no heartbeat thread: a stalled loop may look "
			"silent to the appliance\n", wid);
	max_time_ns = max_time_ms * 1000000ull;
	t0 = now_ns();
	/* --standby: when a valid frame last came from each appliance (silence is counted from
	 * the start), the next HELLO to the one not current, the failover silence, and the
	 * period of the HELLOs that make the current one answer (at most half that silence) */
	uint64_t last_rx[2] = { t0, t0 }, next_probe = 0, n_rehomed = 0, n_home = 0;
	const uint64_t failover_ns = (uint64_t)(failover_s * 1e9);
	const uint64_t alive_ns = failover_ns / 2 < 1000000000ull ? failover_ns / 2 : 1000000000ull;

	while (!stop_flag) {
		uint64_t now = now_ns(), next = now + 50000000ull;
		struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
					 { .fd = st_efd, .events = POLLIN } };
		const unsigned int cur = cur_app_get(); /* changed below only by this thread */

		if (loop_prev != 0 && now - loop_prev > loop_gap_max)
			loop_gap_max = now - loop_prev;
		loop_mark(ph_tail);
		if (loop_prev != 0 && now - loop_prev > 1000000000ull && n_slow_turns++ < 20)
			fprintf(stderr, "nlevel-worker %u: a turn of the loop took %llu ms (its longest "
				"part: %s, %llu ms)\n", wid,
				(unsigned long long)((now - loop_prev) / 1000000),
				ph_max_name != NULL ? ph_max_name : "?",
				(unsigned long long)(ph_max / 1000000));
		loop_prev = now;
		ph_t = now;
		ph_max = 0;
		ph_max_name = NULL;
		if (die_after > 0 && now - t0 >= (uint64_t)(die_after * 1e9)) {
			if (!quiet)
				fprintf(stderr, "nlevel-worker %u: dying without BYE\n", wid);
			_exit(0); /* as a crash would: no BYE, no clean-up (nor a leak report) */
		}
		if (exit_after > 0 && now - t0 >= (uint64_t)(exit_after * 1e9))
			break;
		/* issue #15: HELLO again every 2 s once joined (idempotent): a worker the appliance
		 * timed out (e.g. frames lost under overload) joins again instead of idling.
		 * --standby: every alive_ns, so that a live appliance answers well within
		 * --failover-s (its HELLO reply is the proof that it lives) */
		if ((!hello_ok || farm_file != NULL || n_apps == 2) && now >= next_hello) {
			struct nl_msg m;

			hello_msg(&m, wid, mach, n_mach, now);
			send_msg(fd, &apps[cur], &m);
			next_hello = now + (!hello_ok ? 200000000ull : n_apps == 2 ? alive_ns :
							 2000000000ull);
		}
		/* #36, no --standby: the appliance silent for --failover-s while it owes us
		 * something (a DONE_ACK, resent DONEs answered within 0.3 s by a live one) or
		 * holds sub-tasks here: the origins of the sub-tasks it DISPATCHed here are told
		 * straight, twice, 1 s apart. (No probe: a repeated HELLO would claim slots a
		 * standby adopted, which the dead appliance's own workers need.) */
		if (n_apps == 1 && hello_ok && orphan_pass < 2 &&
		    now - last_rx[0] >= failover_ns + (uint64_t)orphan_pass * 1000000000ull &&
		    (wpend.n_to[0] > 0 || held_from(mach, n_mach, 0) > 0)) {
			uint64_t d0 = n_told_direct;

			orphan_pass++;
			direct_tell(fd, mach, n_mach, 0, orphan_pass == 2);
			if (orphan_pass == 1 && n_told_direct > d0)
				fprintf(stderr,
					"nlevel-worker %u: appliance %s silent for %.1f s: told the "
					"origins of other appliances' tasks straight what became of "
					"their %llu sub-tasks here\n",
					wid, app_names[0], (double)(now - last_rx[0]) / 1e9,
					(unsigned long long)(n_told_direct - d0));
		}
		/* --standby: HELLO the other appliance every second while the current one is
		 * silent (failover), and while the standby is current (to go back home) */
		if (n_apps == 2 && now >= next_probe &&
		    (cur == 1 || now - last_rx[cur] >= failover_ns)) {
			struct nl_msg m;

			hello_msg(&m, wid, mach, n_mach, now);
			if (now - last_rx[cur] >= failover_ns) /* failing over: adopted slots first */
				m.u.hello.flags = NL_HELLO_F_FAILOVER;
			send_msg(fd, &apps[1 - cur], &m);
			next_probe = now + 1000000000ull;
		}
		/* issue #33: a worker whose key the appliance refuses hears nothing back; say so
		 * (once) within 5 s instead of waiting in silence */
		if (!hello_ok && !hello_warned && now - t0 >= 5000000000ull) {
			fprintf(stderr,
				"nlevel-worker %u: no answer to HELLO from %s in 5 s: is --key the "
				"appliance's%s? is the appliance up at that address? (%" PRIu64
				" frames refused so far; still trying)\n",
				wid, app_names[cur], auth_key != NULL ? "" : " (this worker has none)",
				n_bad);
			hello_warned = true;
		}
		if (hello_ok && now >= next_load) {
			struct nl_msg m = { .type = NL_MSG_LOAD };

			m.u.hello.worker_id = wid;
			m.u.hello.n_mach = (uint16_t)n_mach;
			for (unsigned int i = 0; i < n_mach; i++) {
				m.u.hello.mach[i] = mach[i].desc;
				m.u.hello.mach[i].n_sub = mach[i].n;
				m.u.hello.mach[i].backlog_ns = nl_wq_backlog_ns(&mach[i], now);
				mach[i].was_busy = mach[i].n > 0;
			}
			send_msg(fd, &apps[cur], &m);
			next_load = now + (uint64_t)(load_ms * 1e6);
		}
		if (hello_ok && farm_file != NULL && now >= next_farm) {
			/* issue #15: command names and machine records, repeated (idempotent) */
			struct nl_msg fm;

			nl_wfarm_cmds_msg(&wfarm, wid, &fm);
			send_msg(fd, &apps[cur], &fm);
			for (unsigned int i = 0; i < n_mach; i++) {
				nl_wfarm_ad_msg(&wfarm, wid, i, &fm);
				send_msg(fd, &apps[cur], &fm);
			}
			next_farm = now + 1000000000ull;
		}
		loop_mark("HELLO, LOAD and farm records");
		/* finish what is due, start what can start */
		for (unsigned int i = 0; i < n_mach; i++) {
			struct nl_wq_mach *m = &mach[i];
			uint64_t st0;
			pid_t spid;
			int src;

			if (st_take(m, i, &src, &spid, &st0)) { /* its head's start ended */
				struct nl_wq_sub *s = &m->q[m->head];

				if (src == 0) {
					uint8_t es = m->end_state; /* a KILL meanwhile: CANCELLED */

					m->pid = spid;
					cmd_started(m, i, st0, !st_running);
					if (es != NL_DONE_EXITED) {
						m->end_state = es;
						slot_end(m, i);
					}
				} else {
					/* #35: refused by its principals or options rule: 126 */
					m->end_state = NL_DONE_EXITED;
					send_nostart(fd, s, src == -EACCES ? 126 : 127, now);
					refused(wid, quiet, &s->d, src);
					n_done++;
					if (pop_head(m))
						next_load = 0; /* #33: busy -> idle: LOAD at once */
				}
			}
			while (m->n > 0 && m->pid == 0 && !m->starting) {
				struct nl_wq_sub *s = &m->q[m->head];

				if (s->d.cmd_id == 0) { /* emulated work */
					if (s->fin_ns > now) {
						if (s->fin_ns < next)
							next = s->fin_ns;
						break;
					}
					send_done(fd, s->from, &s->d, 0);
					run_row(s->from, &s->d, 0);
				} else {
					/* issue #15: a named command, output captured (else a --cmd
					 * one); #33: in slot i's cgroup, emptied first; started off the
					 * loop (st_post()), taken back above */
					const struct nl_wfarm_cmd *fc = nl_wfarm_find(&wfarm, s->d.cmd_id);
					const struct cmd *cm =
						fc == NULL ? find_cmd(cmds, n_cmd, s->d.cmd_id) : NULL;

					if (fc != NULL || cm != NULL) {
						st_post(m, i, &wfarm, fc, cm);
						break; /* starting; runs; reaped below */
					}
					send_nostart(fd, s, 127, now);
					refused(wid, quiet, &s->d, -ENOENT);
				}
				n_done++;
				if (pop_head(m))
					next_load = 0; /* #33: busy -> idle: LOAD at once */
			}
		}
		loop_mark("starting commands");
		/* #33: time limits; a limit's end kills the command's whole cgroup */
		for (unsigned int i = 0; i < n_mach; i++) {
			struct nl_wq_mach *m = &mach[i];

			if (m->pid > 0 && m->deadline_ns != 0 && m->end_state == NL_DONE_EXITED) {
				if (now >= m->deadline_ns && exited_already(m->pid)) {
					m->deadline_ns = 0; /* ended on its own in time: EXITED */
				} else if (now >= m->deadline_ns) {
					m->end_state = NL_DONE_TIMEOUT;
					slot_end(m, i);
				} else if (m->deadline_ns < next) {
					next = m->deadline_ns;
				}
			}
		}
		loop_mark("time limits");
		for (unsigned int scan = 0;;) {
			int st;
			struct rusage ru;
			pid_t p = 0;

			if (n_starting == 0) {
				p = wait4(-1, &st, WNOHANG, &ru);
			} else { /* a start under way: its child is not known yet (st_post()) */
				for (; scan < n_mach && p <= 0; scan++)
					if (mach[scan].pid > 0)
						p = wait4(mach[scan].pid, &st, WNOHANG, &ru);
			}
			if (p <= 0)
				break;
			for (unsigned int i = 0; i < n_mach; i++) {
				struct nl_wq_mach *m = &mach[i];
				struct nl_msg_done u = { 0 };
				struct nl_msg_dispatch d;
				bool oom = false;
				int32_t status;
				uint8_t from;

				if (m->pid != p)
					continue;
				from = m->q[m->head].from; /* the running one's DONE goes there */
				if (m->kill_ns != 0 && now_ns() - m->kill_ns > 1000000000ull &&
				    n_slow_sweeps++ < 20)
					fprintf(stderr, "nlevel-worker %u: the command of slot %u ended "
						"%llu ms after the worker killed it\n", wid, i,
						(unsigned long long)((now_ns() - m->kill_ns) / 1000000));
				/* #33: the rest of its process tree goes with it; then its usage */
				slot_kill(i);
				u.cpu_ms = nl_wq_ms((uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
							 1000000000ull +
						 (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) *
							 1000ull);
				u.mem_peak_kib = (uint32_t)ru.ru_maxrss;
				nl_cg_usage(&cg, i, &u.cpu_ms, &u.mem_peak_kib, &oom);
				status = nl_wq_end(m, st, oom, now_ns(), &d, &u);
				send_done_u(fd, from, &d, status, &u);
				run_row(from, &d, status);
				ended(wid, quiet, &d, &u);
				n_done++;
				if (m->n == 0)
					next_load = 0; /* #33: busy -> idle: LOAD at once */
				next = now; /* start the next one at once */
			}
		}
		loop_mark("reaping ended commands");
		{ /* #34: DONEs not acknowledged in time, sent again */
			uint64_t due = nl_wpend_poll_to(&wpend, now_ns(), resend_done, &fd);

			if (due < next)
				next = due;
		}
		int ms = next > now ? (int)((next - now + 999999) / 1000000) : 0;

		if ((n_cmd > 0 || wfarm.n_cmd > 0) && ms > 5)
			ms = 5; /* children are reaped by polling */
		loop_mark("resending DONEs");
		ph_t += (uint64_t)ms * 1000000ull; /* the wait asked for is not a hold */
		ph_tail = "poll, beyond its timeout";
		/* a SIGCHLD ends the wait (EINTR), and so does the end of a start (st_efd) */
		if (poll(pfd, st_efd >= 0 ? 2 : 1, ms) <= 0)
			continue;
		if (st_efd >= 0 && (pfd[1].revents & POLLIN) != 0) {
			uint64_t v;

			if (read(st_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				fprintf(stderr, "nlevel-worker %u: the starter's eventfd: %s\n", wid,
					strerror(errno));
		}
		loop_mark(ph_tail);
		ph_tail = "received frames";
		for (;;) {
			uint8_t buf[2048];
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
					     (struct sockaddr *)&from, &fl);
			struct nl_msg msg;

			if (n < 0)
				break;
			/* frames count from either appliance (src: its index), each with its own
			 * replay window */
			unsigned int src = app_index(&from);

			if (src == n_apps ||
			    nl_proto_open(auth_key, &replay[src], buf, (size_t)n, nl_auth_now_ns(),
					  &msg) != NL_PROTO_OK) {
				n_bad++;
				continue;
			}
			/* the current appliance (a frame before may have changed it); src speaks:
			 * alive, its DONEs resent until acknowledged again */
			const unsigned int here = cur_app_get();
			const uint64_t rx_ns = now_ns();

			last_rx[src] = rx_ns;
			app_gone[src] = false;
			if (n_apps == 1)
				orphan_pass = 0; /* #36: it speaks (again) */
			if (msg.type == NL_MSG_HELLO && (msg.u.hello.flags & NL_HELLO_F_REJOIN)) {
				/* #36: the appliance does not know us (it restarted, or timed us
				 * out): HELLO again now, at most once a second. --standby: only the
				 * current one's; the other answers a probe so before it knows us */
				uint64_t t = now_ns();

				if (src != here)
					continue;

				if (t - last_rejoin_ns >= 1000000000ull) {
					/* #36: what its previous life DISPATCHed is told to the new
					 * one once joined (it tells the tasks' origins) */
					rejoin_tell = true;
					if (!quiet || n_rejoin == 0)
						fprintf(stderr, "nlevel-worker %u: the appliance does not "
							"know this worker (it restarted, or timed it out): "
							"joining again\n", wid);
					last_rejoin_ns = t;
					n_rejoin++;
					hello_ok = false;
					next_hello = 0;
				}
				continue;
			}
			if (msg.type == NL_MSG_HELLO && (msg.u.hello.flags & NL_HELLO_F_REPLY) &&
			    src == here) {
				if ((msg.u.hello.flags & NL_HELLO_F_NEW) && hello_ok && !rejoin_tell) {
					/* #36: joined here before, and this HELLO (which reached
					 * the new life before a LOAD did) made us known again: it
					 * restarted, or timed us out; tell it as after a "join
					 * again" */
					rejoin_tell = true;
					if (!quiet || n_rejoin == 0)
						fprintf(stderr, "nlevel-worker %u: the appliance took "
							"this worker as new (it restarted, or timed it "
							"out): joined again\n", wid);
					last_rejoin_ns = now_ns();
					n_rejoin++;
				}
				take_slots(wid, quiet, mach, n_mach, &msg.u.hello, &hello_ok,
					   &n_slot_seen);
				if (rejoin_tell) { /* #36: joined the appliance's new life */
					struct told c;

					rejoin_tell = false;
					tell(fd, mach, n_mach, here, here, scale, &c);
					if (!quiet || c.relayed + c.ended > 0)
						fprintf(stderr,
							"nlevel-worker %u: rejoined %s: told it of "
							"other appliances' sub-tasks of its previous "
							"life: %u unacknowledged DONEs, %llu ended, "
							"%llu running; %llu not started withdrawn\n",
							wid, app_names[here], c.relayed,
							(unsigned long long)c.ended,
							(unsigned long long)c.running,
							(unsigned long long)c.withdrawn);
				}
				continue;
			}
			if (msg.type == NL_MSG_HELLO && (msg.u.hello.flags & NL_HELLO_F_REPLY)) {
				/* --standby: the other appliance answered a probe. With no slot for
				 * us (a standby that has not adopted our appliance's subtree
				 * yet, an appliance not placing us yet) nothing changes: asked
				 * again. */
				unsigned int k = reply_slots(&msg.u.hello, n_mach);
				uint64_t silent_ns = rx_ns - last_rx[here];

				if (k == 0)
					continue;
				if (silent_ns >= failover_ns) {
					/* failover: the current one is taken for dead. Its DONEs
					 * not acknowledged yet never will be: dropped (its clients
					 * send their tasks elsewhere); its sub-tasks still here run
					 * on, each DONE sent to it once. */
					struct told c;

					app_gone[here] = true;
					__atomic_store_n(&cur_app, src, __ATOMIC_RELAXED);
					tell(fd, mach, n_mach, here, src, scale, &c); /* #36 */
					fprintf(stderr,
						"nlevel-worker %u: appliance %s silent for %.1f s: "
						"re-homed to %s, %u of %u machines, %u "
						"unacknowledged DONEs to it dropped; told the "
						"standby of other appliances' sub-tasks: %u "
						"unacknowledged DONEs, %llu ended, %llu running; "
						"%llu not started withdrawn\n",
						wid, app_names[here], (double)silent_ns / 1e9,
						app_names[src], k, n_mach, c.dropped, c.relayed,
						(unsigned long long)c.ended,
						(unsigned long long)c.running,
						(unsigned long long)c.withdrawn);
					n_rehomed++;
				} else if (src == 0 && held_from(mach, n_mach, 1) == 0 &&
					   wpend.n_to[1] == 0) {
					/* home: the appliance is back and the standby has
					 * nothing of ours to wait for */
					__atomic_store_n(&cur_app, src, __ATOMIC_RELAXED);
					fprintf(stderr,
						"nlevel-worker %u: back at appliance %s, %u of %u "
						"machines\n", wid, app_names[src], k, n_mach);
					n_home++;
				} else {
					continue; /* the standby's work first: it stays current */
				}
				take_slots(wid, quiet, mach, n_mach, &msg.u.hello, &hello_ok,
					   &n_slot_seen);
				/* the new current one hears our LOAD and farm messages at once */
				next_load = 0;
				next_farm = 0;
				next_hello = rx_ns + alive_ns;
				next_probe = 0;
				continue;
			}
			if (msg.type == NL_MSG_DONE_ACK) { /* #34: that DONE arrived */
				nl_wpend_ack(&wpend, msg.u.farm.done_ack.task_id, msg.u.farm.done_ack.sub,
					     msg.u.farm.done_ack.token);
				continue;
			}
			if (msg.type == NL_MSG_KILL) { /* #33: cancel one sub-task */
				if (!on_kill(fd, mach, n_mach, &msg.u.farm.kill))
					n_kill_unknown++;
				continue;
			}
			if (msg.type != NL_MSG_DISPATCH || msg.u.dispatch.mach >= n_mach) {
				n_bad++;
				continue;
			}
			struct nl_wq_mach *m = &mach[msg.u.dispatch.mach];
			uint64_t t = now_ns();

			origin_learn(&msg.u.dispatch); /* #36: where its task's origin is */
			n_disp_origin += has_origin(&msg.u.dispatch);
			if (dispatch_again(fd, src, mach, n_mach, &msg.u.dispatch))
				continue; /* #34: held or ended here: never run twice */
			if (m->n == QCAP) { /* full: report it failed at once */
				struct nl_wq_sub full = { .d = msg.u.dispatch, .arr_ns = t,
							  .from = (uint8_t)src };

				send_nostart(fd, &full, 125, t);
				continue;
			}
			if (m->n == 0)
				next_load = 0; /* #33: idle -> busy: LOAD at once */
			struct nl_wq_sub *s = &m->q[(m->head + m->n) % QCAP];
			uint64_t start = m->busy_until_ns > t ? m->busy_until_ns : t;

			s->d = msg.u.dispatch;
			s->arr_ns = t;
			s->from = (uint8_t)src; /* its DONE goes back there */
			s->fin_ns = start + (uint64_t)(model_s(&m->desc, &s->d) * scale * 1e9);
			if (s->d.cmd_id == 0)
				m->busy_until_ns = s->fin_ns;
			m->n++;
		}
	}
	/* #34: DONEs sent last and not acknowledged yet: wait for their acks (resending) up to
	 * 1 s, or the BYE would make the appliance run again a sub-task that ended here */
	for (uint64_t end = now_ns() + 1000000000ull; wpend.n > 0 && now_ns() < end;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint8_t buf[2048];
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		struct nl_msg msg;
		ssize_t n;

		nl_wpend_poll_to(&wpend, now_ns(), resend_done, &fd);
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		while ((n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from,
				     &fl)) >= 0 && (fl = sizeof(from)) > 0)
			if (app_index(&from) < n_apps &&
			    nl_proto_open(auth_key, &replay[app_index(&from)], buf, (size_t)n,
					  nl_auth_now_ns(), &msg) == NL_PROTO_OK &&
			    msg.type == NL_MSG_DONE_ACK)
				nl_wpend_ack(&wpend, msg.u.farm.done_ack.task_id,
					     msg.u.farm.done_ack.sub, msg.u.farm.done_ack.token);
	}
	/* leave: BYE (the appliance re-dispatches what we still hold) */
	struct nl_msg bye = { .type = NL_MSG_BYE };

	bye.u.bye.worker_id = wid;
	__atomic_store_n(&hb_quit, 1, __ATOMIC_RELAXED);
	if (hb_started)
		pthread_join(hb_th, NULL);
	send_msg(fd, &apps[cur_app_get()], &bye);
	if (st_running) { /* the starter ends after the start under way, whose child is ours */
		pthread_mutex_lock(&st_mu);
		st_quit = true;
		pthread_cond_signal(&st_cv);
		pthread_mutex_unlock(&st_mu);
		pthread_join(st_th, NULL);
	}
	if (st_efd >= 0)
		close(st_efd);
	for (unsigned int i = 0; i < n_mach; i++) {
		uint64_t st0;
		pid_t spid;
		int src;

		if (st_take(&mach[i], i, &src, &spid, &st0) && src == 0) {
			mach[i].pid = spid;
			nl_cg_started(&cg, i, spid); /* (the fallback: its group to the keeper) */
		}
	}
	nl_cg_close(&cg); /* #33: every command's whole cgroup (or group) killed, removed */
	for (unsigned int i = 0; i < n_mach; i++) {
		if (mach[i].pid > 0)
			waitpid(mach[i].pid, NULL, 0);
		free(mach[i].q);
	}
	if (cg.keeper > 0)
		waitpid(cg.keeper, NULL, 0);
	close(fd);
	if (runs_f != NULL)
		fclose(runs_f);
	nl_wfarm_free(&wfarm);
	if (auth_key != NULL)
		for (unsigned int i = 0; i < n_apps; i++)
			nl_replay_free(&replay[i]);
	char fo[320] = ""; /* --standby: its counters */

	if (n_apps == 2)
		snprintf(fo, sizeof(fo), "; re-homed and back: rehomed=%llu home=%llu, %llu "
			 "unacknowledged DONEs dropped; told the standby: relayed=%llu "
			 "told_ended=%llu told_running=%llu withdrawn=%llu; DISPATCHes with an "
			 "origin block %llu",
			 (unsigned long long)n_rehomed, (unsigned long long)n_home,
			 (unsigned long long)wpend.n_dropped, (unsigned long long)n_relayed,
			 (unsigned long long)n_told_ended, (unsigned long long)n_told_running,
			 (unsigned long long)n_withdrawn, (unsigned long long)n_disp_origin);
	if (!quiet)
		fprintf(stderr, "nlevel-worker %u: bye after %llu sub-tasks (%llu bad frames, %llu "
				"KILLs of sub-tasks not held, %llu sends retried, %llu not sent; longest "
				"turn of its loop %.0f ms, %llu heartbeats; %llu DISPATCHes of runs it "
				"held and %llu of runs it ended answered without running again; DONEs: "
				"%llu acknowledged, %llu resent, %llu given up after %.0f s, %llu not "
				"kept (table full), %u still unacknowledged; asked to join again %llu "
				"times%s)\n", wid,
			(unsigned long long)n_done, (unsigned long long)n_bad,
			(unsigned long long)n_kill_unknown, (unsigned long long)n_send_retry,
			(unsigned long long)n_send_lost, (double)loop_gap_max / 1e6,
			(unsigned long long)n_heartbeats, (unsigned long long)n_dup_running,
			(unsigned long long)n_dup_ended, (unsigned long long)wpend.n_acked,
			(unsigned long long)wpend.n_resent, (unsigned long long)wpend.n_gave_up,
			(double)NL_WPEND_GIVE_UP_NS / 1e9, (unsigned long long)wpend.n_full, wpend.n,
			(unsigned long long)n_rejoin, fo);
	nl_wrec_fini(&wrec);
	nl_wpend_fini(&wpend);
	return 0;
}
