/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Containment of nlevel-worker's commands: cgroup v1 / v2 through the cgroup filesystem, the
 * keeper process, and the process-group fallback (nl_cgroup.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nl_cgroup.h"

static const char *const ctl_name[NL_CG_NCTL] = { "memory", "pids", "freezer", "cpuacct" };

const char *
nl_cg_mode_name(enum nl_cg_mode m)
{
	return m == NL_CG_V2 ? "cgroup v2" : m == NL_CG_V1 ? "cgroup v1" : "process groups";
}

int
nl_cg_parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'M')
		mul = 1024 * 1024, end++;
	else if (*end == 'G')
		mul = 1024ull * 1024 * 1024, end++;
	if (*end != '\0' || v == 0 || v > UINT64_MAX / mul)
		return -EINVAL;
	*bytes = v * mul;
	return 0;
}

/* How long a purge of the worker's cgroups (at start: an earlier life's; the keeper's and
 * nl_cg_close()'s: this life's) waits for them to empty before it leaves them [ms]; a slot's
 * kill waits 2,000 polls (the worker's loop waits with it). A SIGKILLed process leaves its
 * cgroup only when it runs its exit; on a loaded host cgroup writes elsewhere held that for
 * seconds (docs/taskfarm.md). */
#define NL_CG_PURGE_MS 30000

static void
sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Write text to dir/file. 0 or -errno. */
static int
put_file(const char *dir, const char *file, const char *text)
{
	char p[NL_CG_PATH * 3];
	int fd, rc = 0;
	size_t n = strlen(text);

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		rc = -errno;
	close(fd);
	return rc;
}

/* Read dir/file into buf (NUL-terminated). Bytes read or -errno. */
static ssize_t
get_file(const char *dir, const char *file, char *buf, size_t cap)
{
	char p[NL_CG_PATH * 3];
	ssize_t n, got = 0;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got + 1 < cap && (n = read(fd, buf + got, cap - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

/* The value after "key " in a "key value" file (cpu.stat, memory.events, oom_control). */
static bool
get_key(const char *dir, const char *file, const char *key, uint64_t *v)
{
	char buf[4096], *p;
	size_t kl = strlen(key);

	if (get_file(dir, file, buf, sizeof(buf)) <= 0)
		return false;
	for (p = buf; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p != NULL ? p + 1 : NULL)
		if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
			*v = strtoull(p + kl + 1, NULL, 10);
			return true;
		}
	return false;
}

static bool
get_u64(const char *dir, const char *file, uint64_t *v)
{
	char buf[64];

	if (get_file(dir, file, buf, sizeof(buf)) <= 0 || buf[0] < '0' || buf[0] > '9')
		return false;
	*v = strtoull(buf, NULL, 10);
	return true;
}

static void
slot_dir(const struct nl_cg *cg, unsigned int c, unsigned int k, char *p, size_t cap)
{
	snprintf(p, cap, "%s/m%u", cg->dir[c], k);
}

/* The hierarchy whose cgroup.procs lists a slot's processes. */
static int
member_ctl(const struct nl_cg *cg)
{
	if (cg->mode == NL_CG_V2)
		return 0;
	for (int c = NL_CG_FRZ; c >= 0; c--) /* freezer first, else pids, else memory */
		if (cg->have[c])
			return c;
	return cg->have[NL_CG_CPU] ? NL_CG_CPU : -1;
}

/* Processes in cgroup folder dir: up to cap pids into pids; the count (more than cap: cap). */
static unsigned int
list_procs(const char *dir, pid_t *pids, unsigned int cap)
{
	char buf[65536], *p = buf;
	unsigned int n = 0;

	if (get_file(dir, "cgroup.procs", buf, sizeof(buf)) <= 0)
		return 0;
	while (*p != '\0' && n < cap) {
		long v = strtol(p, &p, 10);

		if (v > 0)
			pids[n++] = (pid_t)v;
		while (*p == '\n')
			p++;
		if (v <= 0)
			break;
	}
	return n;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The deadline of a purge that starts now (CLOCK_MONOTONIC [ns]). */
static uint64_t
purge_deadline(void)
{
	return mono_ns() + NL_CG_PURGE_MS * 1000000ull;
}

/*
 * Kill every process of the cgroup folder sdir (v1: the slot's folder in each hierarchy is
 * dirs[c]). v2: cgroup.kill when the kernel has it; else and in v1: freeze, SIGKILL every pid,
 * thaw, until empty. Waits until empty, for 2,000 polls (about 2 s) and then until deadline
 * (CLOCK_MONOTONIC [ns], 0: none): a process killed leaves its cgroup only when it runs its
 * exit, which a busy host's cgroup writes (a migration into another cgroup holds the lock exits
 * take) can hold for seconds. 0 or -EBUSY.
 */
static int
kill_dir(enum nl_cg_mode mode, const char *member, const char *freezer, bool v2_kill,
	 uint64_t deadline)
{
	pid_t pids[4096];
	unsigned int n;

	for (int round = 0; round < 2000 || mono_ns() < deadline; round++) {
		n = list_procs(member, pids, 4096);
		if (n == 0)
			return 0;
		if (mode == NL_CG_V2 && v2_kill && round % 50 == 0) {
			put_file(member, "cgroup.kill", "1");
		} else if (round % 10 == 0) {
			if (freezer != NULL) {
				char st[32] = "";

				put_file(freezer, mode == NL_CG_V2 ? "cgroup.freeze" : "freezer.state",
					 mode == NL_CG_V2 ? "1" : "FROZEN");
				for (int i = 0; i < 100 && mode == NL_CG_V1; i++) {
					if (get_file(freezer, "freezer.state", st, sizeof(st)) <= 0 ||
					    strncmp(st, "FROZEN", 6) == 0)
						break;
					sleep_us(1000);
				}
				n = list_procs(member, pids, 4096); /* no fork can add one now */
			}
			for (unsigned int i = 0; i < n; i++)
				kill(pids[i], SIGKILL);
			if (freezer != NULL)
				put_file(freezer, mode == NL_CG_V2 ? "cgroup.freeze" : "freezer.state",
					 mode == NL_CG_V2 ? "0" : "THAWED");
		}
		sleep_us(round < 20 ? 100 : round < 2000 ? 1000 : 10000);
	}
	return list_procs(member, pids, 1) == 0 ? 0 : -EBUSY;
}

static bool
v2_has_kill(const char *dir)
{
	char p[NL_CG_PATH * 2];

	if ((size_t)snprintf(p, sizeof(p), "%s/cgroup.kill", dir) >= sizeof(p))
		return false;
	return access(p, W_OK) == 0;
}

/* Kill and remove every cgroup folder under base (depth 1: the slots), then base itself;
 * frz: base is in a hierarchy that can freeze (v1 freezer, v2). Waits for them to empty until
 * deadline (CLOCK_MONOTONIC [ns]); the folders removed (*busy += those that could not be). */
static unsigned int
purge(const struct nl_cg *cg, const char *base, bool rm_base, bool frz, uint64_t deadline,
      unsigned int *busy)
{
	DIR *d = opendir(base);
	struct dirent *e;
	unsigned int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char sub[NL_CG_PATH * 2 + 300];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", base, e->d_name);
		if (stat(sub, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		n += purge(cg, sub, true, frz, deadline, busy);
	}
	closedir(d);
	if (rm_base) {
		bool v2_kill = cg->mode == NL_CG_V2 && v2_has_kill(base);

		/* empty by cgroup.procs can still be populated for a moment (a process between
		 * its exit's steps): rmdir says EBUSY then; kill and try again until deadline */
		for (;;) {
			kill_dir(cg->mode, base, frz ? base : NULL, v2_kill, deadline);
			if (rmdir(base) == 0) {
				n++;
				break;
			}
			int e = errno;

			if (e != EBUSY || mono_ns() >= deadline) {
				if (e == EBUSY)
					(*busy)++;
				break;
			}
			sleep_us(10000);
		}
	}
	return n;
}

/* Kill and remove the worker's cgroups, the freezer's first (no fork while it kills),
 * waiting NL_CG_PURGE_MS at most for them to empty. */
static void
purge_all(const struct nl_cg *cg)
{
	static const int order[NL_CG_NCTL] = { NL_CG_FRZ, NL_CG_PIDS, NL_CG_MEM, NL_CG_CPU };
	uint64_t deadline = purge_deadline();
	unsigned int busy = 0;

	for (unsigned int i = 0; i < NL_CG_NCTL; i++)
		if (cg->have[order[i]])
			purge(cg, cg->dir[order[i]], true,
			      cg->mode == NL_CG_V2 || order[i] == NL_CG_FRZ, deadline, &busy);
}

/* The mount point of a v1 hierarchy with option ctl, or of cgroup2 (ctl NULL). */
static bool
find_mount(const char *ctl, char *mnt, size_t cap)
{
	FILE *f = fopen("/proc/mounts", "r");
	char dev[256], dir[NL_CG_PATH], type[64], opts[1024];
	bool found = false;

	if (f == NULL)
		return false;
	while (!found && fscanf(f, "%255s %511s %63s %1023s %*d %*d", dev, dir, type, opts) == 4) {
		if (ctl == NULL) {
			found = strcmp(type, "cgroup2") == 0;
		} else if (strcmp(type, "cgroup") == 0) {
			char *save = NULL;

			for (char *t = strtok_r(opts, ",", &save); t != NULL && !found;
			     t = strtok_r(NULL, ",", &save))
				found = strcmp(t, ctl) == 0;
		}
		if (found)
			snprintf(mnt, cap, "%s", dir);
	}
	fclose(f);
	return found;
}

/* Whether a mounts table (/proc/PID/mounts) lists a cgroup or cgroup2 file system. */
static bool
has_cgroup_mounts(const char *table)
{
	FILE *f = fopen(table, "r");
	char dev[256], dir[NL_CG_PATH], type[64];
	bool found = false;

	if (f == NULL)
		return false;
	while (!found && fscanf(f, "%255s %511s %63s %*s %*d %*d", dev, dir, type) == 3)
		found = strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0;
	fclose(f);
	return found;
}

/*
 * Our mount namespace has no cgroup hierarchies but PID 1's has (`ip netns exec` gives its
 * command a mount namespace of its own with a fresh /sys): mount them again here, under the
 * same paths in /sys/fs/cgroup (a tmpfs there first), as systemd mounts them. The mounts are
 * our namespace's only; the hierarchies are the same (a v1 hierarchy is named by its exact
 * controller set). @return how many were mounted (0: none, *why says why).
 */
static unsigned int
remount_from_pid1(const char **why)
{
	FILE *f = fopen("/proc/1/mounts", "r");
	char dev[256], dir[NL_CG_PATH], type[64], opts[1024];
	unsigned int n = 0;
	bool tmpfs = false;

	*why = "cannot read /proc/1/mounts";
	if (f == NULL)
		return 0;
	*why = NULL;
	while (fscanf(f, "%255s %511s %63s %1023s %*d %*d", dev, dir, type, opts) == 4) {
		char data[1024] = "", *save = NULL;
		size_t dl = 0;

		if ((strcmp(type, "cgroup") != 0 && strcmp(type, "cgroup2") != 0) ||
		    strncmp(dir, "/sys/fs/cgroup", 14) != 0 || (dir[14] != '\0' && dir[14] != '/'))
			continue;
		if (!tmpfs && dir[14] == '/') {
			if (mount("nlevel-cgroup", "/sys/fs/cgroup", "tmpfs", MS_NOSUID | MS_NODEV |
				  MS_NOEXEC, "mode=755") != 0) {
				*why = "cannot mount a tmpfs on /sys/fs/cgroup";
				break;
			}
			tmpfs = true;
		}
		/* a v1 hierarchy's controllers (and name=), not the generic options */
		for (char *t = strtok_r(opts, ",", &save); t != NULL && strcmp(type, "cgroup") == 0;
		     t = strtok_r(NULL, ",", &save)) {
			if (strcmp(t, "rw") == 0 || strcmp(t, "ro") == 0 || strcmp(t, "relatime") == 0 ||
			    strcmp(t, "noatime") == 0 || strcmp(t, "nosuid") == 0 ||
			    strcmp(t, "nodev") == 0 || strcmp(t, "noexec") == 0 ||
			    (strchr(t, '=') != NULL && strncmp(t, "name=", 5) != 0))
				continue;
			dl += (size_t)snprintf(data + dl, sizeof(data) - dl, "%s%s", dl > 0 ? "," : "", t);
			if (dl >= sizeof(data))
				break;
		}
		if (dir[14] == '/' && mkdir(dir, 0755) != 0 && errno != EEXIST)
			continue;
		if (mount("nlevel-cgroup", dir, type, MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  data[0] != '\0' ? data : NULL) == 0)
			n++;
	}
	fclose(f);
	if (n == 0 && tmpfs)
		umount("/sys/fs/cgroup");
	if (n == 0 && *why == NULL)
		*why = "mounting them here failed";
	return n;
}

/* The worker's own cgroup path in hierarchy ctl (v1), or in the unified one (ctl NULL). */
static void
own_path(const char *ctl, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[1024];

	snprintf(out, cap, "/");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *a = strchr(line, ':'), *b = a != NULL ? strchr(a + 1, ':') : NULL;
		bool hit = false;

		if (b == NULL)
			continue;
		*b = '\0';
		b[strcspn(b + 1, "\n") + 1] = '\0';
		if (ctl == NULL) {
			hit = a[1] == '\0' && strncmp(line, "0:", 2) == 0;
		} else {
			char *save = NULL;

			for (char *t = strtok_r(a + 1, ",", &save); t != NULL && !hit;
			     t = strtok_r(NULL, ",", &save))
				hit = strcmp(t, ctl) == 0;
		}
		if (hit) {
			snprintf(out, cap, "%s", b + 1);
			break;
		}
	}
	fclose(f);
}

/* mkdir -p of base/nlevel/NAME (worker-ID@IP:PORT, mode 0755). 0 or -errno. */
static int
make_worker_dir(const char *base, const char *name, char *out, size_t cap)
{
	char p[NL_CG_PATH];

	snprintf(p, sizeof(p), "%s/nlevel", base);
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		return -errno;
	if ((size_t)snprintf(out, cap, "%s/%s", p, name) >= cap)
		return -ENAMETOOLONG;
	if (mkdir(out, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int
open_join(const char *slot)
{
	char p[NL_CG_PATH * 3];

	snprintf(p, sizeof(p), "%s/cgroup.procs", slot);
	return open(p, O_WRONLY | O_CLOEXEC);
}

/* Make the slot cgroups and set their limits. 0 or -errno. */
static int
make_slots(struct nl_cg *cg, char *note, size_t notelen)
{
	char lim[32], sd[NL_CG_PATH + 16];
	bool lim_mem = false, lim_pids = false;

	for (unsigned int k = 0; k < cg->n_slot; k++) {
		struct nl_cg_slot *s = &cg->slot[k];

		for (unsigned int c = 0; c < NL_CG_NCTL; c++) {
			if (!cg->have[c])
				continue;
			slot_dir(cg, c, k, sd, sizeof(sd));
			if (mkdir(sd, 0755) != 0 && errno != EEXIST)
				return -errno;
			s->join_fd[c] = open_join(sd);
			if (s->join_fd[c] < 0)
				return -errno;
			if (cg->max_mem > 0 && (cg->mode == NL_CG_V2 || c == NL_CG_MEM)) {
				snprintf(lim, sizeof(lim), "%llu", (unsigned long long)cg->max_mem);
				if (put_file(sd, cg->mode == NL_CG_V2 ? "memory.max" :
						 "memory.limit_in_bytes", lim) == 0)
					lim_mem = true;
				if (cg->mode == NL_CG_V2) /* the limit is on memory, not memory + swap */
					put_file(sd, "memory.swap.max", "0");
				else
					put_file(sd, "memory.memsw.limit_in_bytes", lim);
			}
			if (cg->max_procs > 0 && (cg->mode == NL_CG_V2 || c == NL_CG_PIDS)) {
				snprintf(lim, sizeof(lim), "%u", cg->max_procs);
				if (put_file(sd, "pids.max", lim) == 0)
					lim_pids = true;
			}
			if (cg->mode == NL_CG_V2) {
				char p[NL_CG_PATH * 3];

				snprintf(p, sizeof(p), "%s/memory.peak", sd);
				s->peak_fd = open(p, O_RDWR | O_CLOEXEC);
				break; /* one hierarchy */
			}
		}
	}
	snprintf(note, notelen, "%s%s", (cg->max_mem > 0 && !lim_mem) ? "; no memory controller: "
		 "--max-mem not enforced" : "", (cg->max_procs > 0 && !lim_pids) ?
		 "; no pids controller: --max-procs not enforced" : "");
	return 0;
}

static int
setup_v2(struct nl_cg *cg, const char *root)
{
	char mnt[NL_CG_PATH], own[NL_CG_PATH], base[NL_CG_PATH * 2];

	if (root != NULL) {
		snprintf(base, sizeof(base), "%s", root);
	} else {
		if (!find_mount(NULL, mnt, sizeof(mnt)))
			return -ENOENT;
		own_path(NULL, own, sizeof(own));
		snprintf(base, sizeof(base), "%s%s", mnt, strcmp(own, "/") == 0 ? "" : own);
		/* v2's no-internal-processes rule: controllers for our sub-cgroups can be enabled
		 * under our own cgroup only if it holds no process; the root is exempt */
		if (strcmp(own, "/") != 0 && put_file(base, "cgroup.subtree_control", "+memory +pids") != 0)
			snprintf(base, sizeof(base), "%s", mnt);
	}
	if (strlen(base) > NL_CG_PATH - 64)
		return -ENAMETOOLONG;
	cg->mode = NL_CG_V2;
	put_file(base, "cgroup.subtree_control", "+memory +pids");
	int rc = make_worker_dir(base, cg->name, cg->dir[0], sizeof(cg->dir[0]));

	if (rc != 0)
		return rc;
	char nl[NL_CG_PATH];

	snprintf(nl, sizeof(nl), "%s/nlevel", base);
	put_file(nl, "cgroup.subtree_control", "+memory +pids");
	cg->n_stale = purge(cg, cg->dir[0], false, true, purge_deadline(), &cg->n_stale_busy);
	put_file(cg->dir[0], "cgroup.subtree_control", "+memory +pids");
	cg->have[0] = true;
	return 0;
}

static int
setup_v1(struct nl_cg *cg, const char *root)
{
	uint64_t deadline = purge_deadline();
	unsigned int n = 0;

	cg->mode = NL_CG_V1;
	for (unsigned int c = 0; c < NL_CG_NCTL; c++) {
		char mnt[NL_CG_PATH], own[NL_CG_PATH], base[NL_CG_PATH * 2];

		if (root != NULL)
			snprintf(mnt, sizeof(mnt), "%s/%s", root, ctl_name[c]);
		else if (!find_mount(ctl_name[c], mnt, sizeof(mnt)))
			continue;
		own_path(ctl_name[c], own, sizeof(own));
		snprintf(base, sizeof(base), "%s%s", mnt,
			 root != NULL || strcmp(own, "/") == 0 ? "" : own);
		if (strlen(base) > NL_CG_PATH - 64 ||
		    make_worker_dir(base, cg->name, cg->dir[c], sizeof(cg->dir[c])) != 0)
			continue;
		cg->n_stale += purge(cg, cg->dir[c], false, c == NL_CG_FRZ, deadline,
				     &cg->n_stale_busy);
		cg->have[c] = true;
		n++;
	}
	/* one hierarchy is enough to hold and kill the commands; freezer or pids is best */
	return n > 0 ? 0 : -ENOENT;
}

/* The keeper: waits on the pipe; at its end (the worker died or closed it), kills and
 * removes the worker's cgroups, or the process groups it was told of. Never returns. */
static void
keeper_main(struct nl_cg *cg, int rfd)
{
	pid_t groups[NL_PROTO_MAX_MACH * 4];
	unsigned int n = 0;
	int32_t rec;

	setpgid(0, 0); /* a signal to the worker's group (Ctrl-C) leaves the keeper */
	prctl(PR_SET_NAME, "nlevel-keeper", 0, 0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (read(rfd, &rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
		if (rec > 0 && n < sizeof(groups) / sizeof(groups[0])) {
			groups[n++] = rec;
		} else if (rec < 0) {
			for (unsigned int i = 0; i < n; i++)
				if (groups[i] == -rec) {
					groups[i] = groups[--n];
					break;
				}
		}
	}
	for (unsigned int i = 0; i < n; i++)
		kill(-groups[i], SIGKILL);
	purge_all(cg);
	_exit(0);
}

static void
start_keeper(struct nl_cg *cg)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[1]);
		/* nothing of the worker's but the pipe: close every other descriptor */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != p[0] && fd != cg->lock_fd) /* the lock: held until both end */
				close(fd);
		keeper_main(cg, p[0]);
	}
	close(p[0]);
	cg->keeper_fd = p[1];
	cg->keeper = pid;
}

/*
 * The cgroups worker-ID@IP:PORT are one worker's (and its keeper's): another live worker of
 * the same id and appliance on this host (a mistake, or two tests) must not have its commands
 * killed as "stale". flock() on /run/nlevel/worker-ID@IP:PORT.lock, held by the worker and
 * its keeper (the lock ends when both have ended; a previous life's keeper still at work is
 * waited for, 3 s at most). 0, or -EBUSY when another holds it (*holder its pid when known),
 * or -errno (no lock: go on, as before).
 */
static int
take_lock(struct nl_cg *cg, long *holder)
{
	char p[128], buf[32];
	ssize_t n;

	*holder = 0;
	if (mkdir("/run/nlevel", 0755) != 0 && errno != EEXIST)
		return -errno;
	snprintf(p, sizeof(p), "/run/nlevel/%s.lock", cg->name);
	cg->lock_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (cg->lock_fd < 0)
		return -errno;
	/* a previous life's keeper may still be removing its cgroups: wait for it, 3 s, and while
	 * the worker whose pid the file holds is gone (its keeper holds the lock: its purge waits
	 * NL_CG_PURGE_MS at most) up to that and 5 s more */
	for (int i = 0; i < 10 * (NL_CG_PURGE_MS / 1000 + 5) &&
	     flock(cg->lock_fd, LOCK_EX | LOCK_NB) != 0; i++) {
		if (errno != EWOULDBLOCK)
			break;
		if (i >= 30) {
			long pid = 0;

			n = pread(cg->lock_fd, buf, sizeof(buf) - 1, 0);
			if (n > 0) {
				buf[n] = '\0';
				pid = strtol(buf, NULL, 10);
			}
			if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				break; /* a live worker of this id (or unknown): not waited for */
		}
		sleep_us(100000);
	}
	if (flock(cg->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;

		n = pread(cg->lock_fd, buf, sizeof(buf) - 1, 0);
		if (n > 0) {
			buf[n] = '\0';
			*holder = strtol(buf, NULL, 10);
		}
		close(cg->lock_fd);
		cg->lock_fd = -1;
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(cg->lock_fd, 0) != 0 || pwrite(cg->lock_fd, buf, (size_t)n, 0) != n)
		return 0; /* the lock holds; its pid is only for the message */
	return 0;
}

enum nl_cg_mode
nl_cg_open(struct nl_cg *cg, uint32_t wid, const char *app, unsigned int n_slot,
	   uint64_t max_mem, uint32_t max_procs, const char *want, char *line, size_t linelen)
{
	char note[600] = "", again[300] = "";
	const char *root = NULL;
	int rc = -ENOENT;
	long holder = 0;
	bool v2;

	memset(cg, 0, sizeof(*cg));
	cg->wid = wid;
	if (app != NULL && strlen(app) < 40 && strchr(app, '/') == NULL)
		snprintf(cg->name, sizeof(cg->name), "worker-%u@%s", (unsigned int)wid, app);
	else
		snprintf(cg->name, sizeof(cg->name), "worker-%u", (unsigned int)wid);
	cg->n_slot = n_slot;
	cg->max_mem = max_mem;
	cg->max_procs = max_procs;
	cg->keeper_fd = -1;
	cg->lock_fd = -1;
	for (unsigned int k = 0; k < NL_PROTO_MAX_MACH; k++) {
		cg->slot[k].peak_fd = -1;
		for (unsigned int c = 0; c < NL_CG_NCTL; c++)
			cg->slot[k].join_fd[c] = -1;
	}
	if (want == NULL)
		want = "auto";
	if (strncmp(want, "v2:", 3) == 0 || strncmp(want, "v1:", 3) == 0)
		root = want + 3;
	if (strcmp(want, "off") == 0) {
		snprintf(note, sizeof(note), "--cgroup off");
	} else if (geteuid() != 0) {
		snprintf(note, sizeof(note), "not root");
	} else if (root == NULL && take_lock(cg, &holder) == -EBUSY) {
		snprintf(note, sizeof(note), "another worker with id %u of this appliance runs on "
			 "this host (process %ld holds /run/nlevel/%s.lock): its cgroups are left "
			 "alone; give each worker of a host its own --id", (unsigned int)wid, holder,
			 cg->name);
	} else {
		char mnt[NL_CG_PATH];

		/* `ip netns exec` hides the hierarchies (a fresh /sys): mount them again here */
		if (root == NULL && !has_cgroup_mounts("/proc/self/mounts") &&
		    has_cgroup_mounts("/proc/1/mounts")) {
			const char *why = NULL;
			unsigned int n = remount_from_pid1(&why);

			if (n > 0)
				snprintf(again, sizeof(again), "; this mount namespace had no cgroup "
					 "hierarchies (as under `ip netns exec`): %u of PID 1's mounted "
					 "again here", n);
			else
				snprintf(again, sizeof(again), "; this mount namespace has no cgroup "
					 "hierarchies but PID 1's has (`ip netns exec` mounts a fresh "
					 "/sys) and %s: start the worker with nsenter --net=/run/netns/NAME "
					 "instead, or mount them", why);
		}
		v2 = strncmp(want, "v2", 2) == 0 ||
		     (strcmp(want, "auto") == 0 && access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0);
		rc = v2 ? setup_v2(cg, root) : setup_v1(cg, root);
		if (rc == 0)
			rc = make_slots(cg, note, sizeof(note));
		if (rc != 0)
			snprintf(note, sizeof(note), "%s: %s%s", v2 ? "cgroup v2" : "cgroup v1",
				 rc == -ENOENT ? "not mounted" : strerror(-rc), again);
		else if (again[0] != '\0')
			snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s", again);
		(void)mnt;
	}
	if (rc != 0) {
		for (unsigned int k = 0; k < NL_PROTO_MAX_MACH; k++)
			for (unsigned int c = 0; c < NL_CG_NCTL; c++)
				if (cg->slot[k].join_fd[c] >= 0) {
					close(cg->slot[k].join_fd[c]);
					cg->slot[k].join_fd[c] = -1;
				}
		for (unsigned int c = 0; c < NL_CG_NCTL; c++)
			cg->have[c] = false;
		cg->mode = NL_CG_OFF;
		snprintf(line, linelen, "no cgroups (%s): commands are contained by process groups, "
			 "a subreaper and a parent-death signal only; --max-procs and --max-mem not "
			 "enforced, a setsid child of a command escapes if the worker is SIGKILLed",
			 note);
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	} else {
		char where[NL_CG_PATH + 8];
		int mc = member_ctl(cg);

		snprintf(where, sizeof(where), "%s", cg->dir[mc >= 0 ? mc : 0]);
		char busy[96] = "";

		if (cg->n_stale_busy > 0)
			snprintf(busy, sizeof(busy), ", %u still not empty after %d s and left",
				 cg->n_stale_busy, NL_CG_PURGE_MS / 1000);
		snprintf(line, linelen, "%s, a cgroup per machine slot under %s (%u stale removed%s)%s",
			 nl_cg_mode_name(cg->mode), where, cg->n_stale, busy, note);
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	}
	start_keeper(cg);
	return cg->mode;
}

bool
nl_cg_busy(const struct nl_cg *cg, unsigned int k)
{
	char sd[NL_CG_PATH * 2];
	pid_t p[1];
	int mc = member_ctl(cg);

	if (cg->mode == NL_CG_OFF || mc < 0)
		return cg->slot[k].pgid > 0 && kill(-cg->slot[k].pgid, 0) == 0;
	slot_dir(cg, (unsigned int)mc, k, sd, sizeof(sd));
	return list_procs(sd, p, 1) > 0;
}

void
nl_cg_left(const struct nl_cg *cg, unsigned int k, char *out, size_t cap)
{
	char sd[NL_CG_PATH * 2], st[512], wchan[64] = "?", path[64], *rp;
	pid_t p[64];
	unsigned int n;
	int mc = member_ctl(cg);

	out[0] = '\0';
	if (cg->mode == NL_CG_OFF || mc < 0)
		return;
	slot_dir(cg, (unsigned int)mc, k, sd, sizeof(sd));
	n = list_procs(sd, p, 64);
	if (n == 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d", (int)p[0]);
	if (get_file(path, "stat", st, sizeof(st)) <= 0 || (rp = strrchr(st, ')')) == NULL)
		rp = NULL;
	if (get_file(path, "wchan", wchan, sizeof(wchan)) <= 0)
		snprintf(wchan, sizeof(wchan), "?");
	/* the kernel stack's first frames (root only): "[<0>] name+0x../0x.." per line */
	char stk[2048], frames[200] = "";
	size_t fl = 0;

	if (get_file(path, "stack", stk, sizeof(stk)) > 0) {
		char *save = NULL;

		for (char *ln = strtok_r(stk, "\n", &save); ln != NULL && fl < 150;
		     ln = strtok_r(NULL, "\n", &save)) {
			char *f = strchr(ln, ' '), *e;

			if (f == NULL)
				continue;
			f++;
			e = strchr(f, '+');
			if (e != NULL)
				*e = '\0';
			fl += (size_t)snprintf(frames + fl, sizeof(frames) - fl, "%s%s",
					       fl > 0 ? " < " : "", f);
		}
	}
	snprintf(out, cap, "%u process%s left in %s, pid %d in state %c (wchan %s%s%s)", n,
		 n == 1 ? "" : "es", sd, (int)p[0], rp != NULL && rp[1] == ' ' ? rp[2] : '?',
		 wchan[0] != '\0' ? wchan : "0", frames[0] != '\0' ? "; stack " : "", frames);
}

int
nl_cg_begin(struct nl_cg *cg, unsigned int k)
{
	struct nl_cg_slot *s = &cg->slot[k];
	char sd[NL_CG_PATH * 2];

	s->pgid = 0;
	if (cg->mode == NL_CG_OFF)
		return 0;
	if (nl_cg_busy(cg, k) && nl_cg_kill(cg, k) != 0)
		return -EBUSY;
	s->cpu0_ns = 0;
	s->oom0 = 0;
	if (cg->mode == NL_CG_V2) {
		uint64_t us = 0;

		slot_dir(cg, 0, k, sd, sizeof(sd));
		if (get_key(sd, "cpu.stat", "usage_usec", &us))
			s->cpu0_ns = us * 1000;
		get_key(sd, "memory.events", "oom_kill", &s->oom0);
		if (s->peak_fd >= 0 && pwrite(s->peak_fd, "reset\n", 6, 0) != 6) {
			close(s->peak_fd); /* a kernel without the reset: no per-command peak */
			s->peak_fd = -1;
		}
		return 0;
	}
	if (cg->have[NL_CG_CPU]) {
		slot_dir(cg, NL_CG_CPU, k, sd, sizeof(sd));
		get_u64(sd, "cpuacct.usage", &s->cpu0_ns);
	}
	if (cg->have[NL_CG_MEM]) {
		slot_dir(cg, NL_CG_MEM, k, sd, sizeof(sd));
		put_file(sd, "memory.max_usage_in_bytes", "0");
		get_key(sd, "memory.oom_control", "oom_kill", &s->oom0);
	}
	return 0;
}

void
nl_cg_started(struct nl_cg *cg, unsigned int k, pid_t pgid)
{
	int32_t rec = (int32_t)pgid;

	cg->slot[k].pgid = pgid;
	if (cg->mode == NL_CG_OFF && cg->keeper_fd >= 0)
		(void)write(cg->keeper_fd, &rec, sizeof(rec));
}

void
nl_cg_starting(struct nl_cg *cg, unsigned int k, bool on)
{
	cg->slot[k].starting = on;
}

/* Fallback: SIGKILL the processes adopted by the worker (the subreaper) whose process group is
 * pgid, or any group no slot runs (a setsid orphan; not while a slot's command is being started:
 * its new child would look like one, nl_cg_starting()). */
static void
kill_orphans(const struct nl_cg *cg, pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t me = getpid();
	bool any_starting = false;

	for (unsigned int k = 0; k < cg->n_slot; k++)
		any_starting |= cg->slot[k].starting;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[64], buf[512], *rp;
		long ppid, pg;
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid <= 0 || pid == cg->keeper)
			continue;
		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
		if (get_file(path, "stat", buf, sizeof(buf)) <= 0 || (rp = strrchr(buf, ')')) == NULL)
			continue;
		if (sscanf(rp + 2, "%*c %ld %ld", &ppid, &pg) != 2 || ppid != me)
			continue;
		bool running = any_starting; /* then only pgid's own */

		for (unsigned int k = 0; k < cg->n_slot && !running; k++)
			running |= cg->slot[k].pgid == pg && pg != pgid;
		if (pg == pgid || !running)
			kill(pid, SIGKILL);
	}
	closedir(d);
}

int
nl_cg_kill(struct nl_cg *cg, unsigned int k)
{
	struct nl_cg_slot *s = &cg->slot[k];
	char md[NL_CG_PATH * 2], fd[NL_CG_PATH * 2];
	int mc = member_ctl(cg);

	if (cg->mode == NL_CG_OFF || mc < 0) {
		if (s->pgid > 0) {
			int32_t rec = -(int32_t)s->pgid;

			kill(-s->pgid, SIGKILL);
			kill_orphans(cg, s->pgid);
			if (cg->keeper_fd >= 0)
				(void)write(cg->keeper_fd, &rec, sizeof(rec));
		}
		return 0;
	}
	/* the command's own process group first: a signal needs no cgroup lock, and cgroup
	 * writes (freeze, cgroup.kill) can wait seconds on a busy host while other cgroups are
	 * made, moved into or removed; the sweep below then finds only what left the group */
	if (s->pgid > 0)
		kill(-s->pgid, SIGKILL);
	slot_dir(cg, (unsigned int)mc, k, md, sizeof(md));
	if (cg->mode == NL_CG_V2)
		return kill_dir(NL_CG_V2, md, md, v2_has_kill(md), 0);
	if (cg->have[NL_CG_FRZ])
		slot_dir(cg, NL_CG_FRZ, k, fd, sizeof(fd));
	return kill_dir(NL_CG_V1, md, cg->have[NL_CG_FRZ] ? fd : NULL, false, 0);
}

void
nl_cg_usage(struct nl_cg *cg, unsigned int k, uint32_t *cpu_ms, uint32_t *mem_kib, bool *oom)
{
	struct nl_cg_slot *s = &cg->slot[k];
	char sd[NL_CG_PATH * 2];
	uint64_t v = 0, o = 0;

	*oom = false;
	if (cg->mode == NL_CG_V2) {
		slot_dir(cg, 0, k, sd, sizeof(sd));
		if (get_key(sd, "cpu.stat", "usage_usec", &v) && v * 1000 >= s->cpu0_ns)
			*cpu_ms = (uint32_t)((v * 1000 - s->cpu0_ns) / 1000000);
		if (get_key(sd, "memory.events", "oom_kill", &o))
			*oom = o > s->oom0;
		if (s->peak_fd >= 0) {
			char buf[32];
			ssize_t n = pread(s->peak_fd, buf, sizeof(buf) - 1, 0);

			if (n > 0) {
				buf[n] = '\0';
				*mem_kib = (uint32_t)(strtoull(buf, NULL, 10) / 1024);
			}
		}
		return;
	}
	if (cg->mode != NL_CG_V1)
		return;
	if (cg->have[NL_CG_CPU]) {
		slot_dir(cg, NL_CG_CPU, k, sd, sizeof(sd));
		if (get_u64(sd, "cpuacct.usage", &v) && v >= s->cpu0_ns)
			*cpu_ms = (uint32_t)((v - s->cpu0_ns) / 1000000);
	}
	if (cg->have[NL_CG_MEM]) {
		slot_dir(cg, NL_CG_MEM, k, sd, sizeof(sd));
		if (get_u64(sd, "memory.max_usage_in_bytes", &v))
			*mem_kib = (uint32_t)(v / 1024);
		if (get_key(sd, "memory.oom_control", "oom_kill", &o))
			*oom = o > s->oom0;
	}
}

void
nl_cg_close(struct nl_cg *cg)
{
	for (unsigned int k = 0; k < cg->n_slot; k++) {
		if (cg->mode != NL_CG_OFF || cg->slot[k].pgid > 0)
			nl_cg_kill(cg, k);
		for (unsigned int c = 0; c < NL_CG_NCTL; c++)
			if (cg->slot[k].join_fd[c] >= 0)
				close(cg->slot[k].join_fd[c]);
		if (cg->slot[k].peak_fd >= 0)
			close(cg->slot[k].peak_fd);
	}
	purge_all(cg);
	if (cg->keeper_fd >= 0) {
		close(cg->keeper_fd); /* the keeper finds nothing left and exits */
		cg->keeper_fd = -1;
	}
	if (cg->lock_fd >= 0) {
		close(cg->lock_fd); /* the keeper's copy ends with the keeper */
		cg->lock_fd = -1;
	}
	cg->mode = NL_CG_OFF;
}
