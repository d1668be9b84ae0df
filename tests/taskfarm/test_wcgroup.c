/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-worker's containment (tools/worker/nl_cgroup.h, issue #33) against fake cgroup trees
 * in a tmpfs (/dev/shm): the paths it builds (ROOT/CTL/nlevel/worker-ID/mK), the limits it
 * writes (v1 memory.limit_in_bytes, memory.memsw.limit_in_bytes, pids.max; v2 memory.max,
 * memory.swap.max = 0, pids.max, subtree_control), its join descriptors, the stale cgroups of
 * an earlier life killed at start (freeze, SIGKILL, thaw), a slot killed whole (v1 freezer
 * loop; v2 cgroup.kill; v2 without it: cgroup.freeze loop), the usage read back (CPU, peak
 * memory, the OOM count), and the start-up line's warnings when memory.max / pids.max are
 * missing (a v2 hierarchy without controllers). A small "fake kernel" process plays the
 * kernel's part: it drops dead (zombie) processes from every cgroup.procs and kills the
 * processes of a cgroup whose cgroup.kill was written. rmdir of a cgroup is not tested here
 * (a fake folder with files cannot be removed): tests/chaos/test_contain*.sh do it on the
 * real cgroup file systems. Needs root (the worker uses cgroups only as root). TAP.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include "nl_cgroup.h"
#include "nl_tap.h"

static char T[128];

static void
msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void
put(const char *text, const char *fmt, ...)
{
	char p[512];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	f = fopen(p, "w");
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

/* Contents of a file (static buffer; "" when absent). */
static const char *
get(const char *fmt, ...)
{
	static char buf[4096];
	char p[512];
	va_list ap;
	FILE *f;
	size_t n = 0;

	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	buf[0] = '\0';
	f = fopen(p, "r");
	if (f != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static void
mkdirs(const char *fmt, ...)
{
	char p[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	for (char *s = p + 1; *s != '\0'; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

/* A fake v1 (ctl given) or v2 (ctl NULL) cgroup folder with the files the worker uses. */
static void
fake_cg(const char *dir, const char *ctl, bool v2_kill, bool v2_ctrls)
{
	mkdirs("%s", dir);
	put("", "%s/cgroup.procs", dir);
	if (ctl == NULL) {
		put("", "%s/cgroup.subtree_control", dir);
		put("0\n", "%s/cgroup.freeze", dir);
		put("populated 0\nfrozen 0\n", "%s/cgroup.events", dir);
		put("usage_usec 0\nuser_usec 0\nsystem_usec 0\n", "%s/cpu.stat", dir);
		if (v2_kill)
			put("", "%s/cgroup.kill", dir);
		if (v2_ctrls) {
			put("", "%s/memory.max", dir);
			put("", "%s/memory.swap.max", dir);
			put("", "%s/pids.max", dir);
			put("0\n", "%s/memory.peak", dir);
			put("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n", "%s/memory.events", dir);
		}
	} else if (strcmp(ctl, "memory") == 0) {
		/* limits start empty: a write to a regular file does not truncate it */
		put("", "%s/memory.limit_in_bytes", dir);
		put("", "%s/memory.memsw.limit_in_bytes", dir);
		put("0\n", "%s/memory.max_usage_in_bytes", dir);
		put("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", "%s/memory.oom_control", dir);
	} else if (strcmp(ctl, "pids") == 0) {
		put("", "%s/pids.max", dir);
	} else if (strcmp(ctl, "freezer") == 0) {
		put("THAWED\n", "%s/freezer.state", dir);
	} else if (strcmp(ctl, "cpuacct") == 0) {
		put("0\n", "%s/cpuacct.usage", dir);
	}
}

/* The fake kernel's round over one folder's cgroup.procs (recursive). */
static void
fake_round(const char *dir)
{
	char p[1024], procs[4096] = "", out[4096] = "", *s, *save = NULL;
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t ol = 0;
	bool changed = false, kill_all = false;
	FILE *f;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && e->d_type == DT_DIR) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			fake_round(p);
		}
	closedir(d);
	snprintf(p, sizeof(p), "%s/cgroup.kill", dir);
	f = fopen(p, "r+");
	if (f != NULL) {
		kill_all = fgetc(f) == '1';
		fclose(f);
		if (kill_all && truncate(p, 0) != 0)
			kill_all = false;
	}
	snprintf(procs, sizeof(procs), "%s", get("%s/cgroup.procs", dir));
	for (s = strtok_r(procs, "\n", &save); s != NULL; s = strtok_r(NULL, "\n", &save)) {
		long pid = strtol(s, NULL, 10);
		const char *st = pid > 0 ? get("/proc/%ld/stat", pid) : "";
		const char *rp = strrchr(st, ')');

		if (kill_all && pid > 0)
			kill((pid_t)pid, SIGKILL);
		if (pid <= 0 || rp == NULL || rp[2] == 'Z' || rp[2] == 'X') {
			changed = true; /* exited: gone from its cgroup */
			continue;
		}
		ol += (size_t)snprintf(out + ol, sizeof(out) - ol, "%ld\n", pid);
	}
	if (changed) { /* replaced whole: a reader never sees half a file */
		char tmp[1024];

		snprintf(tmp, sizeof(tmp), "%s/.procs.tmp", dir);
		put(out, "%s", tmp);
		snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
		rename(tmp, p);
	}
}

static pid_t
fake_kernel(void)
{
	pid_t p = fork();

	if (p == 0) {
		for (;;) {
			fake_round(T);
			msleep(1);
		}
	}
	return p;
}

/* A child that sleeps until killed, listed in the cgroup.procs of dir. */
static pid_t
victim_in(const char *dir)
{
	pid_t p = fork();
	char line[32];

	if (p == 0) {
		for (;;)
			pause();
	}
	snprintf(line, sizeof(line), "%d\n", (int)p);
	put(line, "%s/cgroup.procs", dir);
	return p;
}

/* Whether child p died of SIGKILL within 3 s. */
static bool
died_of_kill(pid_t p)
{
	int st;

	for (int i = 0; i < 300; i++) {
		pid_t r = waitpid(p, &st, WNOHANG);

		if (r == p)
			return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		msleep(10);
	}
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	return false;
}

static bool
same_file(int fd, const char *path)
{
	struct stat a, b;

	return fd >= 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

static const char *const ctls[4] = { "memory", "pids", "freezer", "cpuacct" };

static void
test_v1(void)
{
	struct nl_cg cg;
	char want[256], line[1400], d[512];
	uint32_t cpu = 7, mem = 7;
	bool oom = true, ok = true;
	pid_t stale, v;
	enum nl_cg_mode mode;

	/* slots m0, m1 as a kernel would make them; m9: a stale one holding a process */
	for (unsigned int c = 0; c < 4; c++) {
		for (unsigned int k = 0; k < 2; k++) {
			snprintf(d, sizeof(d), "%s/v1/%s/nlevel/worker-77/m%u", T, ctls[c], k);
			fake_cg(d, ctls[c], false, false);
		}
		snprintf(d, sizeof(d), "%s/v1/%s/nlevel/worker-77/m9", T, ctls[c]);
		fake_cg(d, ctls[c], false, false);
	}
	snprintf(d, sizeof(d), "%s/v1/freezer/nlevel/worker-77/m9", T);
	put("", "%s/freezer.state", d); /* THAWED after: written by the worker */
	stale = victim_in(d);
	snprintf(want, sizeof(want), "v1:%s/v1", T);
	mode = nl_cg_open(&cg, 77, NULL, 2, 512ull << 20, 50, want, line, sizeof(line));
	nl_tap_diag("%s", line);
	snprintf(d, sizeof(d), "cgroup v1, a cgroup per machine slot under %s/v1/freezer/nlevel/"
		 "worker-77", T);
	nl_tap_ok(mode == NL_CG_V1 && strstr(line, d) != NULL && strstr(line, "not enforced") == NULL,
		  "v1: mode, its line names the freezer hierarchy's worker-77, limits enforced");
	nl_tap_ok(died_of_kill(stale), "v1: a stale cgroup's process of an earlier life is killed");
	nl_tap_ok(strncmp(get("%s/v1/freezer/nlevel/worker-77/m9/freezer.state", T), "THAWED", 6) == 0,
		  "v1: ... frozen while killed, thawed after (freezer.state THAWED)");
	for (unsigned int k = 0; k < 2; k++) {
		ok &= strcmp(get("%s/v1/memory/nlevel/worker-77/m%u/memory.limit_in_bytes", T, k),
			     "536870912") == 0;
		ok &= strcmp(get("%s/v1/memory/nlevel/worker-77/m%u/memory.memsw.limit_in_bytes", T,
				 k), "536870912") == 0;
		ok &= strcmp(get("%s/v1/pids/nlevel/worker-77/m%u/pids.max", T, k), "50") == 0;
	}
	nl_tap_ok(ok, "v1: --max-mem 512M in memory.limit_in_bytes and memsw, --max-procs 50 in pids.max");
	ok = true;
	for (unsigned int k = 0; k < 2; k++)
		for (unsigned int c = 0; c < 4; c++) {
			snprintf(d, sizeof(d), "%s/v1/%s/nlevel/worker-77/m%u/cgroup.procs", T, ctls[c], k);
			ok &= same_file(cg.slot[k].join_fd[c], d);
		}
	nl_tap_ok(ok, "v1: slot k's join descriptors are mK/cgroup.procs of each hierarchy");
	/* a command's usage: CPU and peak since nl_cg_begin, the OOM count */
	put("1000000000\n", "%s/v1/cpuacct/nlevel/worker-77/m1/cpuacct.usage", T);
	put("oom_kill_disable 0\nunder_oom 0\noom_kill 4\n",
	    "%s/v1/memory/nlevel/worker-77/m1/memory.oom_control", T);
	put("999999\n", "%s/v1/memory/nlevel/worker-77/m1/memory.max_usage_in_bytes", T);
	/* (the fake file keeps its tail after the write of "0": 099999) */
	nl_tap_ok(nl_cg_begin(&cg, 1) == 0 &&
		  get("%s/v1/memory/nlevel/worker-77/m1/memory.max_usage_in_bytes", T)[0] == '0',
		  "v1: nl_cg_begin of an empty slot: 0, its peak reset (0 written)");
	put("3500000000\n", "%s/v1/cpuacct/nlevel/worker-77/m1/cpuacct.usage", T);
	put("1048576\n", "%s/v1/memory/nlevel/worker-77/m1/memory.max_usage_in_bytes", T);
	nl_cg_usage(&cg, 1, &cpu, &mem, &oom);
	nl_tap_ok(cpu == 2500 && mem == 1024 && !oom, "v1: usage: cpu 2500 ms, peak 1024 KiB, no OOM "
		  "(got %u, %u, %d)", cpu, mem, oom);
	put("oom_kill_disable 0\nunder_oom 0\noom_kill 5\n",
	    "%s/v1/memory/nlevel/worker-77/m1/memory.oom_control", T);
	nl_cg_usage(&cg, 1, &cpu, &mem, &oom);
	nl_tap_ok(oom, "v1: the OOM kill count rose: oom");
	/* a slot killed whole: the freezer loop */
	snprintf(d, sizeof(d), "%s/v1/freezer/nlevel/worker-77/m0", T);
	v = victim_in(d);
	nl_tap_ok(nl_cg_busy(&cg, 0) && !nl_cg_busy(&cg, 1), "v1: busy: m0 holds a process, m1 not");
	{ /* what a slow kill left, for its log line: count, pid, state, wchan; "" when empty */
		char left[1200], want_l[640];

		nl_cg_left(&cg, 0, left, sizeof(left));
		snprintf(want_l, sizeof(want_l), "1 process left in %s, pid %d in state ", d, (int)v);
		nl_tap_ok(strncmp(left, want_l, strlen(want_l)) == 0 &&
			  strchr("SR", left[strlen(want_l)]) != NULL && strstr(left, "(wchan ") != NULL,
			  "v1: nl_cg_left names the process left in m0 and its state (%s)", left);
		nl_cg_left(&cg, 1, left, sizeof(left));
		nl_tap_ok(left[0] == '\0', "v1: nl_cg_left of an empty slot: \"\" (%s)", left);
	}
	nl_tap_ok(nl_cg_kill(&cg, 0) == 0 && died_of_kill(v) && !nl_cg_busy(&cg, 0),
		  "v1: nl_cg_kill: 0, its process SIGKILLed, the slot empty");
	v = victim_in(d);
	nl_tap_ok(nl_cg_begin(&cg, 0) == 0 && died_of_kill(v),
		  "v1: nl_cg_begin of a slot a leftover holds: killed first, then 0");
	nl_cg_close(&cg);
	if (cg.keeper > 0)
		waitpid(cg.keeper, NULL, 0);
}

static void
test_v2(void)
{
	struct nl_cg cg;
	char want[256], line[1400], d[512], base[300];
	uint32_t cpu = 7, mem = 7;
	bool oom = true;
	pid_t v;
	enum nl_cg_mode mode;

	snprintf(base, sizeof(base), "%s/v2/nlevel/worker-78", T);
	fake_cg(base, NULL, true, true);
	snprintf(d, sizeof(d), "%s/m0", base);
	fake_cg(d, NULL, true, true);  /* a kernel with cgroup.kill (5.14+) */
	snprintf(d, sizeof(d), "%s/m1", base);
	fake_cg(d, NULL, false, true); /* one without: the cgroup.freeze loop */
	snprintf(want, sizeof(want), "v2:%s/v2", T);
	mode = nl_cg_open(&cg, 78, NULL, 2, 256ull << 20, 40, want, line, sizeof(line));
	nl_tap_diag("%s", line);
	nl_tap_ok(mode == NL_CG_V2 && strstr(line, base) != NULL && strstr(line, "not enforced") == NULL,
		  "v2: mode, its line names ROOT/nlevel/worker-78, limits enforced");
	nl_tap_ok(strcmp(get("%s/m0/memory.max", base), "268435456") == 0 &&
		  strcmp(get("%s/m1/memory.swap.max", base), "0") == 0 &&
		  strcmp(get("%s/m1/pids.max", base), "40") == 0,
		  "v2: memory.max 256M, memory.swap.max 0, pids.max 40 in each slot");
	nl_tap_ok(strcmp(get("%s/cgroup.subtree_control", base), "+memory +pids") == 0,
		  "v2: the worker's cgroup hands memory and pids down (subtree_control)");
	nl_tap_ok(cg.slot[0].peak_fd >= 0 && cg.slot[1].peak_fd >= 0,
		  "v2: memory.peak kept open per slot");
	put("usage_usec 1000\nuser_usec 0\nsystem_usec 0\n", "%s/m0/cpu.stat", base);
	put("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n", "%s/m0/memory.events", base);
	nl_tap_ok(nl_cg_begin(&cg, 0) == 0 && strncmp(get("%s/m0/memory.peak", base), "reset", 5) == 0,
		  "v2: nl_cg_begin resets memory.peak (writes reset)");
	put("usage_usec 2501000\nuser_usec 0\nsystem_usec 0\n", "%s/m0/cpu.stat", base);
	put("2097152\n", "%s/m0/memory.peak", base);
	nl_cg_usage(&cg, 0, &cpu, &mem, &oom);
	nl_tap_ok(cpu == 2500 && mem == 2048 && !oom, "v2: usage: cpu 2500 ms, peak 2048 KiB, no OOM "
		  "(got %u, %u, %d)", cpu, mem, oom);
	put("low 0\nhigh 0\nmax 9\noom 3\noom_kill 3\n", "%s/m0/memory.events", base);
	nl_cg_usage(&cg, 0, &cpu, &mem, &oom);
	nl_tap_ok(oom, "v2: memory.events oom_kill rose: oom");
	snprintf(d, sizeof(d), "%s/m0", base);
	v = victim_in(d);
	nl_tap_ok(nl_cg_kill(&cg, 0) == 0 && died_of_kill(v),
		  "v2: nl_cg_kill through cgroup.kill: 0, its process SIGKILLed");
	snprintf(d, sizeof(d), "%s/m1", base);
	put("", "%s/cgroup.freeze", d); /* 0 after: written by the worker */
	v = victim_in(d);
	nl_tap_ok(nl_cg_kill(&cg, 1) == 0 && died_of_kill(v) &&
		  strncmp(get("%s/m1/cgroup.freeze", base), "0", 1) == 0,
		  "v2 without cgroup.kill: freeze, SIGKILL, thaw (cgroup.freeze 0 after)");
	nl_cg_close(&cg);
	if (cg.keeper > 0)
		waitpid(cg.keeper, NULL, 0);

	/* a v2 hierarchy without the memory and pids controllers (this machine's cgroup2) */
	snprintf(base, sizeof(base), "%s/v2b/nlevel/worker-79", T);
	fake_cg(base, NULL, true, false);
	snprintf(d, sizeof(d), "%s/m0", base);
	fake_cg(d, NULL, true, false);
	snprintf(want, sizeof(want), "v2:%s/v2b", T);
	mode = nl_cg_open(&cg, 79, NULL, 1, 256ull << 20, 40, want, line, sizeof(line));
	nl_tap_diag("%s", line);
	nl_tap_ok(mode == NL_CG_V2 && strstr(line, "no memory controller: --max-mem not enforced") &&
		  strstr(line, "no pids controller: --max-procs not enforced") && cg.slot[0].peak_fd < 0,
		  "v2 without controllers: still v2, its line says --max-mem and --max-procs are "
		  "not enforced; no memory.peak");
	cpu = 5, mem = 6;
	nl_cg_begin(&cg, 0);
	put("usage_usec 7000\nuser_usec 0\nsystem_usec 0\n", "%s/m0/cpu.stat", base);
	nl_cg_usage(&cg, 0, &cpu, &mem, &oom);
	nl_tap_ok(cpu == 7 && mem == 6 && !oom,
		  "... CPU from cpu.stat (7 ms), the peak left to the caller's rusage");
	nl_cg_close(&cg);
	if (cg.keeper > 0)
		waitpid(cg.keeper, NULL, 0);
}

/* a child in a process group of its own, sleeping */
static pid_t
own_group_child(void)
{
	pid_t p = fork();

	if (p == 0) {
		setpgid(0, 0);
		pause();
		_exit(0);
	}
	if (p > 0)
		setpgid(p, p);
	return p;
}

/* The fallback (no cgroups): a kill takes the slot's group and groups no slot runs, but not
 * while a slot's command is being started (nl_cg_starting): the new child is in no slot yet. */
static void
test_off(void)
{
	struct nl_cg cg;
	char line[512];
	enum nl_cg_mode mode = nl_cg_open(&cg, 80, NULL, 2, 0, 0, "off", line, sizeof(line));
	pid_t run0 = own_group_child(), fresh = own_group_child();

	nl_tap_ok(mode == NL_CG_OFF && run0 > 0 && fresh > 0, "off: the fallback (%s)", line);
	nl_cg_started(&cg, 0, run0);
	nl_cg_starting(&cg, 1, true);
	nl_cg_kill(&cg, 0);
	msleep(50);
	nl_tap_ok(died_of_kill(run0) && kill(fresh, 0) == 0,
		  "off: while slot 1 is starting, a kill of slot 0 takes slot 0's group only (a "
		  "child in no slot's group yet is left alone)");
	nl_cg_starting(&cg, 1, false);
	nl_cg_started(&cg, 0, 0);
	run0 = own_group_child();
	nl_cg_started(&cg, 0, run0);
	nl_cg_kill(&cg, 0);
	nl_tap_ok(died_of_kill(run0) && died_of_kill(fresh),
		  "off: with no start under way, a kill of slot 0 also takes a group no slot runs "
		  "(an orphan)");
	nl_cg_close(&cg);
	if (cg.keeper > 0)
		waitpid(cg.keeper, NULL, 0);
}

int
main(void)
{
	pid_t fk;
	char cmd[300];

	if (geteuid() != 0) {
		printf("1..0 # SKIP not root (the worker uses cgroups only as root)\n");
		return 0;
	}
	snprintf(T, sizeof(T), "%s/nl_wcgroup.XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (mkdtemp(T) == NULL) {
		printf("1..0 # SKIP no temporary folder\n");
		return 0;
	}
	fk = fake_kernel();
	test_v1();
	test_v2();
	kill(fk, SIGKILL);
	waitpid(fk, NULL, 0);
	test_off(); /* (last: its kill takes any child of ours in no slot's group) */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	if (system(cmd) != 0)
		nl_tap_diag("could not remove %s", T);
	return nl_tap_done();
}
