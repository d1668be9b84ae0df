/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-jobmix: learn job-mix models from a real SWF log, generate synthetic mixes, compare
 * mixes (seed 001 §4). Usage in docs/jobmix.md; exit status 0 = done, 1 = run-time failure,
 * 2 = bad usage or bad input.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "sim/nl_gnuplot.h"
#include "nl_jobmix.h"
#include "nl_swf.h"
#ifdef NL_HAVE_BATCH
#include "nl_batch.h"
#include "nl_batch_cfg.h"
#include "nl_cfg.h"
#endif

#define EXIT_BAD 2
/* one convention with nlevel-sim: 2 for bad input, whatever the command */
#define EXIT_TEXT                                                                           \
	"Exit status: 0 done; 1 run-time failure (cannot write, out of memory); 2 bad input:\n" \
	"command line, configuration (FILE:LINE), or a trace that cannot be read (missing,\n"  \
	"truncated or corrupt .gz, bad SWF line).\n"

static const char *prog = "nlevel-jobmix";

static void
usage_main(FILE *f)
{
	fprintf(f,
		"usage: %s COMMAND [options]   (docs/jobmix.md)\n"
		"commands:\n"
		"  learn TRACE.swf[.gz] --out MODEL     learn the normal-group model, the probability-\n"
		"                                       distribution map and the submit profile\n"
		"  generate MODEL --jobs N --seed S --method map|normal --out MIX.swf\n"
		"  compare A.swf B.swf [C.swf ...]      statistics, KS distances, joint distance of\n"
		"                                       each of B, C, ... against A; SUMMARY line\n"
		"  waits MIX.swf --config CONFIG.ini    run a mix through the batch engine: wait\n"
		"                                       by node count and walltime (Fig. 9)\n"
		"  COMMAND --help                       options of a command\n"
		EXIT_TEXT, prog);
}

static void
usage_learn(FILE *f)
{
	fprintf(f,
		"usage: %s learn TRACE.swf[.gz] --out MODEL [options]\n"
		"  --out PATH            model file to write (text, docs/jobmix.md); '-' = stdout\n"
		"  --node-unit U         map node unit [nodes] (default 1; the paper's K used 12)\n"
		"  --time-unit S         map walltime unit [s], >= 100 (default 300 = 5 min; the\n"
		"                        paper's K used 600 = 10 min)\n"
		"  --max-walltime S      walltime cap [s] = queue limit (default: largest request);\n"
		"                        longer requests go to the last cell\n"
		"  --groups G            normal-model groups per parameter, 1..16 (default 4)\n"
		"  --procs-per-node P    SWF processors per node (default 1)\n"
		"Jobs are the SWF records kept by the SWF filter defaults (docs/batch.md\n"
		"\"Filtering\"): requested processors, estimate = run time when unknown or shorter.\n"
		EXIT_TEXT, prog);
}

static void
usage_generate(FILE *f)
{
	fprintf(f,
		"usage: %s generate MODEL --jobs N --seed S --method map|normal --out MIX.swf\n"
		"  --jobs N              jobs to draw (>= 1)\n"
		"  --seed S              RNG seed (same seed, same file; default 1)\n"
		"  --method M            map (probability-distribution map, Uno et al. §4.1.2) or\n"
		"                        normal (normal groups, §4.1.1); default map\n"
		"  --rate R              overall submit rate [jobs/day] (default: the learned rate)\n"
		"  --out PATH            SWF to write ('.gz' = gzip; '-' = stdout)\n" EXIT_TEXT, prog);
}

static void
usage_compare(FILE *f)
{
	fprintf(f,
		"usage: %s compare A.swf B.swf [C.swf ...] [options]\n"
		"  --node-unit U, --time-unit S, --wall-cells W\n"
		"                        map resolution of the distances (default: the Jobmix* header\n"
		"                        of B, else of A, else 1 node, 300 s, cap = largest request)\n"
		"  --procs-per-node P    SWF processors per node (default 1)\n"
		"  --plot DIR            write CSVs and scatter/CDF PNGs (gnuplot) into DIR\n"
		"Prints per-parameter statistics, KS distances at full and at map resolution and the\n"
		"total-variation distance of the joint (node, walltime, run-time) cell histograms;\n"
		"one line per other trace:\n"
		"  SUMMARY ks_nodes=.. ks_walltime=.. ks_runtime=.. ks_submit=.. joint=..\n"
		"(map resolution; ks_submit on the hour of the week of local submit time; every key:\n"
		"docs/output.md).\n" EXIT_TEXT, prog);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool
parse_u64(const char *s, uint64_t *out)
{
	char *e;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno != 0 || *e != '\0')
		return false;
	*out = v;
	return true;
}

static int
bad_num(const char *opt, const char *v)
{
	fprintf(stderr, "%s: %s: '%s' is not a valid number\n", prog, opt, v ? v : "");
	return EXIT_BAD;
}

/* A trace turned into model jobs. */
struct trace {
	const char *path;
	struct nl_swf *swf;
	struct nl_jobmix_job *job;
	size_t n;
	int64_t start_unix_s;
	char zone[64];
	uint64_t procs_per_node; /* the one applied: 1 for a generated mix (it counts nodes) */
};

/* What find_line() looks for: the index-th record, or the header entry "; key:". */
struct line_want {
	size_t index;    /* record index (0-based), key == NULL */
	const char *key; /* header key, or NULL */
	size_t rec;      /* records seen so far */
};

/* Whether the line at p (its leading blanks skipped) is the one wanted. */
static bool
line_is(const char *p, struct line_want *w)
{
	if (w->key == NULL) {
		if (*p == '\0' || *p == '\n' || *p == '\r' || *p == ';')
			return false; /* blank or comment */
		return w->rec++ == w->index;
	}
	if (*p++ != ';')
		return false;
	while (*p == ' ' || *p == '\t')
		p++;
	return strncmp(p, w->key, strlen(w->key)) == 0 && p[strlen(w->key)] == ':';
}

/*
 * Line number of a line of an SWF file, plain or gzip, for error messages (nl_swf does not
 * keep line numbers): lines classified the way its reader does (blank after leading
 * blanks/tabs: skipped; ';': comment; anything else: a record). @return the 1-based line, or
 * 0 when it cannot be found.
 */
static unsigned long
find_line(const char *path, struct line_want *w)
{
	gzFile z = gzopen(path, "rb");
	char buf[4096];
	unsigned long line = 0, found = 0;
	bool at_start = true;

	if (z == NULL)
		return 0;
	while (gzgets(z, buf, sizeof(buf)) != NULL) {
		size_t l = strlen(buf);
		bool ends = l > 0 && buf[l - 1] == '\n';

		if (at_start) {
			const char *p = buf;

			line++;
			while (*p == ' ' || *p == '\t')
				p++;
			if (line_is(p, w)) {
				found = line;
				break;
			}
		}
		at_start = ends;
	}
	gzclose(z);
	return found;
}

/* Line of the index-th job record (0-based). */
static unsigned long
record_line(const char *path, size_t index)
{
	struct line_want w = { .index = index };

	return find_line(path, &w);
}

/* Line of the header entry KEY ("; KEY: value"). */
static unsigned long
header_line(const char *path, const char *key)
{
	struct line_want w = { .key = key };

	return find_line(path, &w);
}

/*
 * UnixStartTime of a trace: 0 when absent; else it must be an integer in
 * 0..NL_JOBMIX_START_MAX_S (years 1970 to 9999; a value in ms or ns is refused, not taken as
 * a date 50,000 or 50 billion years away). @return 0, or EXIT_BAD after a FILE:LINE message.
 */
static int
start_of(const struct nl_swf *swf, const char *path, int64_t *out)
{
	const char *v = nl_swf_header_get(swf, "UnixStartTime");
	unsigned long line;
	char *e;
	long long x;

	*out = 0;
	if (v == NULL)
		return 0;
	errno = 0;
	x = strtoll(v, &e, 10);
	while (*e == ' ' || *e == '\t' || *e == '\r')
		e++;
	if (e != v && *e == '\0' && errno == 0 && x >= 0 && x <= NL_JOBMIX_START_MAX_S) {
		*out = x;
		return 0;
	}
	line = header_line(path, "UnixStartTime");
	if (line > 0)
		fprintf(stderr, "%s: %s:%lu: ", prog, path, line);
	else
		fprintf(stderr, "%s: %s: ", prog, path);
	fprintf(stderr, "UnixStartTime '%s' is not a time in seconds in 0..%" PRId64 " (1970 to "
		"9999)%s\n", v, NL_JOBMIX_START_MAX_S,
		e != v && (x > NL_JOBMIX_START_MAX_S || errno == ERANGE) ? "; milliseconds or "
		"nanoseconds?" : "");
	return EXIT_BAD;
}

/* A byte of a time zone: an IANA name (Asia/Tokyo, Etc/GMT-9) or a POSIX TZ string
 * (JST-9, CET-1CEST,M3.5.0,M10.5.0/3, <+09>-9, :Asia/Tokyo). */
static bool
zone_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       strchr("/_+-:,.<>", ch) != NULL;
}

/*
 * The zone of a TimeZoneString header value: its first word (logs add remarks such as
 * "Asia/Tokyo (JST)"), when the system knows it (a tzdata file, or a POSIX TZ string with an
 * offset such as JST-9); else UTC, with a warning naming the value. No value: UTC.
 */
static void
zone_of(const char *v, const char *path, char *zone, size_t len)
{
	char w[64], f[128];
	size_t n = 0;

	snprintf(zone, len, "UTC");
	if (v == NULL)
		return;
	while (*v == ' ' || *v == '\t')
		v++;
	while (v[n] != '\0' && v[n] != ' ' && v[n] != '\t' && n + 1 < sizeof(w) && n + 1 < len) {
		w[n] = v[n];
		n++;
	}
	w[n] = '\0';
	if (n == 0)
		return;
	for (size_t k = 0; k < n; k++)
		if (!zone_char(w[k]))
			goto unknown;
	snprintf(f, sizeof(f), "%s/%s", getenv("TZDIR") ? getenv("TZDIR") : "/usr/share/zoneinfo",
		 w);
	if (w[0] != '.' && strstr(w, "/.") == NULL &&
	    (access(f, R_OK) == 0 || strpbrk(w, "0123456789") != NULL)) {
		snprintf(zone, len, "%s", w);
		return;
	}
unknown:
	fprintf(stderr, "%s: warning: %s: TimeZoneString '%s' is not a time zone this system knows "
			"(tzdata); submit times of week are taken in UTC\n", prog, path, v);
}

static int
trace_load(struct trace *t, const char *path, uint64_t procs_per_node)
{
	char err[NL_SWF_ERR_LEN];
	size_t drops[NL_SWF_DROP__COUNT] = { 0 };
	const char *z;
	int rc;

	memset(t, 0, sizeof(*t));
	t->path = path;
	rc = nl_swf_load(&t->swf, path, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return EXIT_BAD;
	}
	if (t->swf->n_job == 0) {
		fprintf(stderr, "%s: %s: no job records (empty trace: only %zu header lines)\n",
			prog, path, t->swf->n_hdr);
		return EXIT_BAD;
	}
	t->job = calloc(t->swf->n_job, sizeof(*t->job));
	if (t->job == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	if (procs_per_node > 1 && nl_swf_header_int(t->swf, "JobmixNodeUnit") >= 1) {
		/* a mix written by generate counts nodes already */
		fprintf(stderr, "%s: %s: a generated job mix (Jobmix header): its processor counts "
				"are nodes, --procs-per-node not applied to it\n", prog, path);
		procs_per_node = 1;
	}
	t->procs_per_node = procs_per_node;
	for (size_t i = 0; i < t->swf->n_job; i++) {
		struct nl_swf_rigid r;
		enum nl_swf_drop d = nl_swf_rigid(&t->swf->job[i], NULL, &r);
		struct nl_jobmix_job *j;

		drops[d]++;
		if (d != NL_SWF_KEEP)
			continue;
		j = &t->job[t->n++];
		j->submit_s = t->swf->job[i].submit_s;
		j->nodes = (r.procs + (int64_t)procs_per_node - 1) / (int64_t)procs_per_node;
		j->run_s = r.run_s;
		j->wall_s = r.est_s > 0 ? r.est_s : 1;
	}
	if (t->n == 0) {
		/* Name the first record and why it went (no line numbers in nl_swf: record index). */
		enum nl_swf_drop d0 = nl_swf_rigid(&t->swf->job[0], NULL, &(struct nl_swf_rigid){ 0 });

		unsigned long line = record_line(path, 0);

		if (line > 0)
			fprintf(stderr, "%s: %s:%lu: no usable job in %zu records (record 1, job "
				"%" PRId64 ": %s", prog, path, line, t->swf->n_job, t->swf->job[0].id,
				nl_swf_drop_name(d0));
		else
			fprintf(stderr, "%s: %s: no usable job in %zu records (record 1, job %" PRId64
				": %s", prog, path, t->swf->n_job, t->swf->job[0].id,
				nl_swf_drop_name(d0));
		nl_swf_drops_fprint(stderr, drops, "; ");
		fprintf(stderr, ")\n");
		return EXIT_BAD;
	}
	if (t->n < t->swf->n_job) {
		fprintf(stderr, "%s: %s: %zu of %zu records kept (dropped:", prog, path, t->n,
			t->swf->n_job);
		nl_swf_drops_fprint(stderr, drops, " ");
		fprintf(stderr, ")\n");
	}
	rc = start_of(t->swf, path, &t->start_unix_s);
	if (rc != 0)
		return rc;
	z = nl_swf_header_get(t->swf, "TimeZoneString");
	zone_of(z, path, t->zone, sizeof(t->zone));
	return 0;
}

static void
trace_free(struct trace *t)
{
	nl_swf_free(t->swf);
	free(t->job);
}

/* ---- learn ---- */

static int
cmd_learn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "node-unit", required_argument, NULL, 'u' },
		{ "time-unit", required_argument, NULL, 't' },
		{ "max-walltime", required_argument, NULL, 'w' },
		{ "groups", required_argument, NULL, 'g' },
		{ "procs-per-node", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nl_jobmix_units u;
	struct nl_jobmix_model m;
	struct trace t;
	const char *out = NULL;
	uint64_t v, ppn = 1, max_wall = 0;
	char err[NL_JOBMIX_ERR_LEN];
	double t_read, t_learn;
	FILE *f;
	int c, rc;

	nl_jobmix_units_default(&u);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'u':
			if (!parse_u64(optarg, &v) || v < 1 || v > UINT32_MAX)
				return bad_num("--node-unit", optarg);
			u.node_unit = (uint32_t)v;
			break;
		case 't':
			if (!parse_u64(optarg, &v) || v > UINT32_MAX)
				return bad_num("--time-unit", optarg);
			u.time_unit_s = (uint32_t)v;
			break;
		case 'w':
			if (!parse_u64(optarg, &max_wall) || max_wall < 1)
				return bad_num("--max-walltime", optarg);
			break;
		case 'g':
			if (!parse_u64(optarg, &v) || v < 1 || v > NL_JOBMIX_MAX_GROUPS) {
				fprintf(stderr, "%s: --groups: '%s' is not a group count in 1..%u\n",
					prog, optarg, NL_JOBMIX_MAX_GROUPS);
				return EXIT_BAD;
			}
			u.groups = (uint32_t)v;
			break;
		case 'p':
			if (!parse_u64(optarg, &ppn) || ppn < 1)
				return bad_num("--procs-per-node", optarg);
			break;
		case 'h':
			usage_learn(stdout);
			return 0;
		default:
			usage_learn(stderr);
			return EXIT_BAD;
		}
	}
	if (optind + 1 != argc || out == NULL) {
		fprintf(stderr, "%s learn: need one TRACE and --out MODEL\n", prog);
		usage_learn(stderr);
		return EXIT_BAD;
	}
	if (u.time_unit_s < NL_JOBMIX_MIN_TIME_UNIT_S) {
		fprintf(stderr, "%s: --time-unit must be >= %u s\n", prog, NL_JOBMIX_MIN_TIME_UNIT_S);
		return EXIT_BAD;
	}
	if (max_wall > 0) {
		uint64_t w = (max_wall + u.time_unit_s - 1) / u.time_unit_s;

		if (w > 0xffffffu)
			return bad_num("--max-walltime", "(too many cells)");
		u.wall_cells = (uint32_t)w;
	}
	t_read = now_s();
	rc = trace_load(&t, argv[optind], ppn);
	t_read = now_s() - t_read;
	if (rc != 0) {
		trace_free(&t);
		return rc;
	}
	nl_jobmix_set_zone(t.zone);
	t_learn = now_s();
	rc = nl_jobmix_learn(&m, &u, t.job, t.n, t.start_unix_s, err, sizeof(err));
	t_learn = now_s() - t_learn;
	if (rc != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, t.path, err);
		trace_free(&t);
		return rc == -ENOMEM ? 1 : EXIT_BAD;
	}
	snprintf(m.zone, sizeof(m.zone), "%s", t.zone);
	{
		const char *b = strrchr(t.path, '/');
		/* the machine in nodes: MaxProcs / P, else MaxNodes (nodes already) */
		int64_t mx = nl_swf_header_int(t.swf, "MaxProcs"), p = (int64_t)t.procs_per_node;

		mx = mx >= 1 ? (mx + p - 1) / p : nl_swf_header_int(t.swf, "MaxNodes");
		if (mx > m.max_nodes)
			m.max_nodes = mx;
		/* nl_jobmix_model_write() turns blanks, control characters and '#' into '_' */
		snprintf(m.source, sizeof(m.source), "%s", b ? b + 1 : t.path);
	}
	f = strcmp(out, "-") == 0 ? stdout : fopen(out, "w");
	if (f == NULL) {
		fprintf(stderr, "%s: %s: %s\n", prog, out, strerror(errno));
		rc = 1;
	} else {
		rc = nl_jobmix_model_write(&m, f);
		if (f != stdout && fclose(f) != 0)
			rc = -EIO;
		if (rc == -EINVAL) {
			/* zone_of() only keeps zone characters; kept for other callers' zones */
			fprintf(stderr, "%s: %s: zone '%s' cannot be written in a model\n", prog,
				out, m.zone);
			rc = EXIT_BAD;
		} else if (rc != 0) {
			fprintf(stderr, "%s: %s: write error\n", prog, out);
			rc = 1;
		}
	}
	if (rc == 0)
		printf("learned %" PRIu64 " jobs from %s: %zu map cells (node unit %u, walltime "
		       "unit %u s, %u walltime cells, %" PRIu64 " clamped), %u normal groups per "
		       "parameter, rate %.2f jobs/day, zone %s; SWF reading %.3f s, learning %.3f s\n",
		       m.n_jobs, t.path, m.n_cell, m.u.node_unit, m.u.time_unit_s, m.u.wall_cells,
		       m.n_clamped, m.u.groups, m.rate_per_s * 86400, m.zone, t_read, t_learn);
	nl_jobmix_model_free(&m);
	trace_free(&t);
	return rc;
}

/* ---- generate ---- */

/* Right-aligned decimal of v in at least width columns, after a blank unless first. */
static char *
put_int(char *p, int64_t v, int width, bool first)
{
	char tmp[24];
	int n = 0;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	if (!first)
		*p++ = ' ';
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		tmp[n++] = '-';
	for (int k = n; k < width; k++)
		*p++ = ' ';
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

/*
 * Write the mix: the header with nl_swf_write_file() (swf holds the header only), then the job
 * lines. A ".gz" path goes through nl_swf_write() (jobs appended to swf). A plain file gets
 * the job lines formatted here, in nl_swf's column layout, because the generic writer's one
 * printf per field takes ~2 s for a million jobs (docs/benchmarks.md (Job-mix generator)); the result is
 * the same text (tests/jobmix: it reads back with nl_swf_load()).
 */
static int
write_mix(struct nl_swf *swf, const struct nl_jobmix_job *jobs, uint64_t n, const char *out)
{
	static const int width[NL_SWF_FIELDS] = { 5, 8, 6, 6, 4, 6, 5, 4, 6, 5, 2, 3, 3, 3, 2, 2,
						  2, 2 };
	size_t l = strlen(out);
	char *buf, *p;
	FILE *f;
	int rc = 0;

	if (l > 3 && strcmp(out + l - 3, ".gz") == 0) {
		for (uint64_t i = 0; i < n; i++) {
			struct nl_swf_job j;

			nl_swf_job_init(&j);
			j.id = (int64_t)i + 1;
			j.submit_s = jobs[i].submit_s;
			j.run_s = jobs[i].run_s;
			j.alloc_procs = jobs[i].nodes;
			j.req_procs = jobs[i].nodes;
			j.req_time_s = jobs[i].wall_s;
			j.status = NL_SWF_STATUS_COMPLETED;
			if (nl_swf_append(swf, &j) != 0)
				return -ENOMEM;
		}
		return nl_swf_write(swf, out);
	}
	f = strcmp(out, "-") == 0 ? stdout : fopen(out, "w");
	if (f == NULL)
		return -errno;
	rc = nl_swf_write_file(swf, f);
	buf = malloc(1u << 20);
	if (buf == NULL)
		rc = -ENOMEM;
	p = buf;
	for (uint64_t i = 0; i < n && rc == 0; i++) {
		const int64_t v[NL_SWF_FIELDS] = { (int64_t)i + 1, jobs[i].submit_s, -1,
						   jobs[i].run_s, jobs[i].nodes, -1, -1,
						   jobs[i].nodes, jobs[i].wall_s, -1,
						   NL_SWF_STATUS_COMPLETED, -1, -1, -1, -1, -1, -1, -1 };

		for (unsigned int k = 0; k < NL_SWF_FIELDS; k++)
			p = put_int(p, v[k], width[k], k == 0);
		*p++ = '\n';
		if ((size_t)(p - buf) > (1u << 20) - 512 || i + 1 == n) {
			if (fwrite(buf, 1, (size_t)(p - buf), f) != (size_t)(p - buf))
				rc = -EIO;
			p = buf;
		}
	}
	free(buf);
	if (f != stdout) {
		if (fclose(f) != 0 && rc == 0)
			rc = -EIO;
	} else if (fflush(f) != 0 && rc == 0) {
		rc = -EIO;
	}
	return rc;
}

static int
cmd_generate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "jobs", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "method", required_argument, NULL, 'm' },
		{ "rate", required_argument, NULL, 'r' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nl_jobmix_gen g = { .method = NL_JOBMIX_MAP, .seed = 1 };
	struct nl_jobmix_model m;
	struct nl_jobmix_job *jobs = NULL;
	struct nl_swf *swf = NULL;
	const char *out = NULL, *model;
	uint64_t n = 0;
	char err[NL_JOBMIX_ERR_LEN], buf[1024];
	double t_gen = 0, t_out = 0;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!parse_u64(optarg, &n) || n < 1 || n > (UINT64_C(1) << 32))
				return bad_num("--jobs", optarg);
			break;
		case 's':
			if (!parse_u64(optarg, &g.seed))
				return bad_num("--seed", optarg);
			break;
		case 'm':
			if (strcmp(optarg, "map") == 0) {
				g.method = NL_JOBMIX_MAP;
			} else if (strcmp(optarg, "normal") == 0) {
				g.method = NL_JOBMIX_NORMAL;
			} else {
				fprintf(stderr, "%s: --method: '%s' is not map or normal\n", prog,
					optarg);
				return EXIT_BAD;
			}
			break;
		case 'r': {
			char *e;

			errno = 0;
			g.rate_per_s = strtod(optarg, &e) / 86400.0;
			if (errno != 0 || *e != '\0' || !(g.rate_per_s > 0) || !isfinite(g.rate_per_s))
				return bad_num("--rate", optarg);
			if (g.rate_per_s * NL_JOBMIX_WEEK_S < 1e-3) { /* nl_jobmix_generate()'s floor */
				fprintf(stderr, "%s: --rate: %s jobs/day is less than one job per 1,000 "
						"weeks (%.6f jobs/day)\n", prog, optarg,
					1e-3 / NL_JOBMIX_WEEK_S * 86400.0);
				return EXIT_BAD;
			}
			break;
		}
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage_generate(stdout);
			return 0;
		default:
			usage_generate(stderr);
			return EXIT_BAD;
		}
	}
	if (optind + 1 != argc || out == NULL || n == 0) {
		fprintf(stderr, "%s generate: need one MODEL, --jobs N and --out MIX.swf\n", prog);
		usage_generate(stderr);
		return EXIT_BAD;
	}
	model = argv[optind];
	rc = nl_jobmix_model_load(&m, model, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return EXIT_BAD;
	}
	nl_jobmix_set_zone(m.zone);
	jobs = calloc(n, sizeof(*jobs));
	if (jobs == NULL) {
		fprintf(stderr, "%s: out of memory for %" PRIu64 " jobs\n", prog, n);
		nl_jobmix_model_free(&m);
		return 1;
	}
	t_gen = now_s();
	rc = nl_jobmix_generate(&m, &g, jobs, n);
	t_gen = now_s() - t_gen;
	if (rc == -ERANGE) {
		fprintf(stderr, "%s: %s: submit times stopped advancing (no non-empty slot of the "
			"profile reached)\n", prog, model);
		rc = EXIT_BAD;
		goto out;
	} else if (rc != 0) {
		fprintf(stderr, "%s: %s: the model has no %s part, an all-zero submit profile or no "
			"rate\n", prog, model, g.method == NL_JOBMIX_MAP ? "map" : "normal");
		rc = EXIT_BAD;
		goto out;
	}
	t_out = now_s();
	if (nl_swf_new(&swf) != 0)
		goto oom;
	snprintf(buf, sizeof(buf), "%s", "2.2");
	rc = nl_swf_header_set(swf, "Version", buf);
	rc |= nl_swf_header_set(swf, "Computer", "synthetic job mix (nlevel-jobmix)");
	snprintf(buf, sizeof(buf), "%" PRIu64, n);
	rc |= nl_swf_header_set(swf, "MaxJobs", buf);
	rc |= nl_swf_header_set(swf, "MaxRecords", buf);
	snprintf(buf, sizeof(buf), "%" PRId64, m.max_nodes);
	rc |= nl_swf_header_set(swf, "MaxNodes", buf);
	rc |= nl_swf_header_set(swf, "MaxProcs", buf);
	snprintf(buf, sizeof(buf), "%" PRId64, m.start_unix_s);
	rc |= nl_swf_header_set(swf, "UnixStartTime", buf);
	rc |= nl_swf_header_set(swf, "TimeZoneString", m.zone);
	snprintf(buf, sizeof(buf),
		 "generated by nlevel-jobmix generate %s --jobs %" PRIu64 " --seed %" PRIu64
		 " --method %s --rate %.6g\nmodel learned from %s (%" PRIu64 " jobs); Uno et al. (K computer job mix) %s",
		 model, n, g.seed, g.method == NL_JOBMIX_MAP ? "map" : "normal",
		 (g.rate_per_s > 0 ? g.rate_per_s : m.rate_per_s) * 86400, m.source, m.n_jobs,
		 g.method == NL_JOBMIX_MAP ? "§4.1.2 probability-distribution map"
					   : "§4.1.1 normal groups");
	rc |= nl_swf_header_set(swf, "Note", buf);
	rc |= nl_swf_header_set(swf, "JobmixMethod", g.method == NL_JOBMIX_MAP ? "map" : "normal");
	snprintf(buf, sizeof(buf), "%" PRIu64, g.seed);
	rc |= nl_swf_header_set(swf, "JobmixSeed", buf);
	snprintf(buf, sizeof(buf), "%u", m.u.node_unit);
	rc |= nl_swf_header_set(swf, "JobmixNodeUnit", buf);
	snprintf(buf, sizeof(buf), "%u", m.u.time_unit_s);
	rc |= nl_swf_header_set(swf, "JobmixTimeUnit", buf);
	snprintf(buf, sizeof(buf), "%u", m.u.wall_cells);
	rc |= nl_swf_header_set(swf, "JobmixWallCells", buf);
	if (rc != 0)
		goto oom;
	rc = write_mix(swf, jobs, n, out);
	if (rc != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, out, strerror(-rc));
		rc = 1;
		goto out;
	}
	t_out = now_s() - t_out;
	if (strcmp(out, "-") != 0)
		printf("generated %" PRIu64 " jobs (%s, seed %" PRIu64 ") spanning %.1f days into "
		       "%s; sampling %.3f s, SWF writing %.3f s\n", n,
		       g.method == NL_JOBMIX_MAP ? "map" : "normal", g.seed,
		       (double)jobs[n - 1].submit_s / 86400.0, out, t_gen, t_out);
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "%s: out of memory\n", prog);
	rc = 1;
out:
	nl_swf_free(swf);
	free(jobs);
	nl_jobmix_model_free(&m);
	return rc;
}

/* ---- compare ---- */

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
pct(const double *s, size_t n, double p)
{
	size_t i = (size_t)ceil(p / 100.0 * (double)n);

	return s[i == 0 ? 0 : (i > n ? n - 1 : i - 1)];
}

enum { V_NODES, V_WALL, V_RUN, V_SUBMIT, V__COUNT };

static const char *const v_name[V__COUNT] = { "nodes", "walltime_s", "runtime_s",
					       "submit_tow_h" };
static const char *const v_key[V__COUNT] = { "ks_nodes", "ks_walltime", "ks_runtime",
					      "ks_submit" };

/* Per-trace arrays: raw values and values at map resolution, for each marginal. */
struct cols {
	double *raw[V__COUNT];
	double *map[V__COUNT];
	size_t n;
};

static int
cols_fill(struct cols *c, const struct trace *t, const struct nl_jobmix_units *u)
{
	memset(c, 0, sizeof(*c));
	c->n = t->n;
	for (int v = 0; v < V__COUNT; v++) {
		c->raw[v] = malloc(t->n * sizeof(double));
		c->map[v] = malloc(t->n * sizeof(double));
		if (c->raw[v] == NULL || c->map[v] == NULL)
			return -ENOMEM;
	}
	nl_jobmix_set_zone(t->zone);
	for (size_t i = 0; i < t->n; i++) {
		const struct nl_jobmix_job *j = &t->job[i];
		uint32_t wc = nl_jobmix_wall_cell(j->wall_s, u->time_unit_s, u->wall_cells);
		uint32_t rc = nl_jobmix_ratio_cell(j->run_s, j->wall_s);
		int64_t tow = nl_jobmix_tow_at_s(t->start_unix_s, j->submit_s);

		c->raw[V_NODES][i] = (double)j->nodes;
		c->raw[V_WALL][i] = (double)j->wall_s;
		c->raw[V_RUN][i] = (double)j->run_s;
		c->raw[V_SUBMIT][i] = (double)tow / 3600.0;
		c->map[V_NODES][i] = nl_jobmix_node_cell(j->nodes, u->node_unit);
		c->map[V_WALL][i] = wc;
		c->map[V_RUN][i] = (double)wc * u->time_unit_s * rc / 100.0;
		c->map[V_SUBMIT][i] = (double)(tow / 3600);
	}
	return 0;
}

static void
cols_free(struct cols *c)
{
	for (int v = 0; v < V__COUNT; v++) {
		free(c->raw[v]);
		free(c->map[v]);
	}
}

static void
print_stats(const char *label, double *x, size_t n)
{
	double s = 0;

	qsort(x, n, sizeof(*x), cmp_dbl);
	for (size_t i = 0; i < n; i++)
		s += x[i];
	printf("  %-28.28s %8zu %12.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", label, n,
	       s / (double)n, pct(x, n, 10), pct(x, n, 25), pct(x, n, 50), pct(x, n, 75),
	       pct(x, n, 90), x[n - 1]);
}

static double
ks_copy(const double *a, size_t na, const double *b, size_t nb)
{
	double *ca = malloc(na * sizeof(double)), *cb = malloc(nb * sizeof(double)), d;

	if (ca == NULL || cb == NULL) {
		free(ca);
		free(cb);
		return NAN;
	}
	memcpy(ca, a, na * sizeof(double));
	memcpy(cb, b, nb * sizeof(double));
	d = nl_jobmix_ks(ca, na, cb, nb);
	free(ca);
	free(cb);
	return d;
}

static const char *
base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/* CSVs (one per trace, subsampled to 20,000 rows by a fixed stride) and gnuplot PNGs in the
 * style of seed 001 Fig. 11 (marginal distributions) and Fig. 12 (scatter of the jobs). */
static int
write_plots(const char *dir, const struct trace *t, const struct cols *c, size_t nt)
{
	char path[4096];
	double max_h = 1, max_n = 1;
	FILE *f;
	int rc;

	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: %s: %s\n", prog, dir, strerror(errno));
		return 1;
	}
	for (size_t k = 0; k < nt; k++) {
		size_t stride = t[k].n > 20000 ? (t[k].n + 19999) / 20000 : 1;

		snprintf(path, sizeof(path), "%s/jobs-%zu.csv", dir, k);
		f = fopen(path, "w");
		if (f == NULL) {
			fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
			return 1;
		}
		fprintf(f, "# %s (every %zu-th job)\nnodes,walltime_h,runtime_h,ratio_pct\n",
			t[k].path, stride);
		for (size_t i = 0; i < t[k].n; i += stride) {
			const struct nl_jobmix_job *j = &t[k].job[i];

			fprintf(f, "%" PRId64 ",%.4f,%.4f,%.2f\n", j->nodes, j->wall_s / 3600.0,
				j->run_s / 3600.0, 100.0 * (double)j->run_s / (double)j->wall_s);
		}
		fclose(f);
	}
	for (size_t k = 0; k < nt; k++)
		for (size_t i = 0; i < t[k].n; i++) {
			if (t[k].job[i].wall_s / 3600.0 > max_h)
				max_h = t[k].job[i].wall_s / 3600.0;
			if ((double)t[k].job[i].nodes > max_n)
				max_n = (double)t[k].job[i].nodes;
		}
	snprintf(path, sizeof(path), "%s/jobmix.gp", dir);
	f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return 1;
	}
	fprintf(f, "# gnuplot script written by nlevel-jobmix compare; run from %s\n"
		   "set datafile separator ','\nset terminal pngcairo size %zu,700 font ',9'\n"
		   "set output 'fig12-scatter.png'\nset multiplot layout 2,%zu\n", dir,
		420 * nt, nt);
	for (size_t k = 0; k < nt; k++)
		fprintf(f, "set title '%s' noenhanced\nset logscale x\nset xlabel 'nodes'\n"
			   "set ylabel 'requested walltime [h]'\nunset key\n"
			   "set xrange [0.8:%g]\nset yrange [0:%g]\n"
			   "plot 'jobs-%zu.csv' every ::1 using 1:2 with dots lc rgb '#1f4e9e'\n",
			base_name(t[k].path), max_n * 1.25, max_h * 1.05, k);
	for (size_t k = 0; k < nt; k++)
		fprintf(f, "set title '%s' noenhanced\nunset logscale x\nset xlabel "
			   "'requested walltime [h]'\nset ylabel 'run time / walltime [%%]'\n"
			   "set xrange [0:%g]\nset yrange [0:105]\nplot 'jobs-%zu.csv' every ::1 using 2:4 with dots lc rgb '#9e1f1f'\n",
			base_name(t[k].path), max_h * 1.05, k);
	fprintf(f, "unset multiplot\nset output 'fig11-cdf.png'\nset terminal pngcairo size "
		   "1260,400 font ',9'\nset multiplot layout 1,3\nset key bottom right\n"
		   "set ylabel 'fraction of jobs'\nset xrange [*:*]\nset yrange [0:1]\n");
	{
		static const char *const col[3] = { "1", "2", "3" };
		static const char *const lab[3] = { "nodes", "requested walltime [h]",
						    "run time [h]" };

		for (int c = 0; c < 3; c++) {
			fprintf(f, "set title 'CDF of %s'\nset xlabel '%s'\n%s\nplot ", lab[c],
				lab[c], c == 0 ? "set logscale x" : "unset logscale x");
			for (size_t k = 0; k < nt; k++)
				fprintf(f, "%s'jobs-%zu.csv' every ::1 using %s:(1.0) smooth cnormal "
					   "title '%s' noenhanced", k ? ", " : "", k, col[c],
					base_name(t[k].path));
			fprintf(f, "\n");
		}
	}
	fprintf(f, "unset multiplot\n");
	/* Fig. 10: share of submits by weekday and by hour of day (local time), one line per trace */
	{
		char p2[4096];
		FILE *g;

		snprintf(p2, sizeof(p2), "%s/submit.csv", dir);
		g = fopen(p2, "w");
		if (g != NULL) {
			fprintf(g, "# share of jobs submitted per weekday (0 = Monday) and hour of day, "
				   "local time; columns = traces\nkind,index");
			for (size_t k = 0; k < nt; k++)
				fprintf(g, ",t%zu", k);
			fprintf(g, "\n");
			for (int kind = 0; kind < 2; kind++)
				for (int i = 0; i < (kind == 0 ? 7 : 24); i++) {
					fprintf(g, "%s,%d", kind == 0 ? "weekday" : "hour", i);
					for (size_t k = 0; k < nt; k++) {
						size_t cnt = 0;

						for (size_t j = 0; j < c[k].n; j++) {
							int slot = (int)c[k].map[V_SUBMIT][j];

							if ((kind == 0 ? slot / 24 : slot % 24) == i)
								cnt++;
						}
						fprintf(g, ",%.5f", (double)cnt / (double)c[k].n);
					}
					fprintf(g, "\n");
				}
			fclose(g);
			fprintf(f, "set output 'fig10-submit.png'\nset terminal pngcairo size 1000,380 "
				   "font ',9'\nset multiplot layout 1,2\nunset logscale x\n"
				   "set key top right\nset ylabel 'share of jobs'\nset yrange [0:*]\n");
			for (int kind = 0; kind < 2; kind++) {
				fprintf(f, "set title 'submits by %s'\nset xlabel '%s'\nset xrange "
					   "[-0.5:%g]\nplot ", kind ? "hour of day" : "weekday",
					kind ? "hour (local time)" : "weekday (0 = Monday)",
					kind ? 23.5 : 6.5);
				for (size_t k = 0; k < nt; k++)
					fprintf(f, "%s'submit.csv' using (strcol(1) eq '%s' ? $2 : 1/0):%zu "
						   "with linespoints title '%s' noenhanced", k ? ", " : "",
						kind ? "hour" : "weekday", k + 3, base_name(t[k].path));
				fprintf(f, "\n");
			}
			fprintf(f, "unset multiplot\n");
		}
	}
	fclose(f);
	rc = nl_gnuplot_run(dir, "jobmix.gp", "gnuplot.log"); /* no shell: dir is only a name */
	if (rc != 0)
		fprintf(stderr, "%s: gnuplot failed or missing (see %s/gnuplot.log); CSVs kept\n",
			prog, dir);
	else
		printf("plots: %s/fig10-submit.png %s/fig11-cdf.png %s/fig12-scatter.png (from "
		       "%s/jobs-*.csv, %s/submit.csv)\n", dir, dir, dir, dir, dir);
	return 0;
}

static void
units_from_header(const struct nl_swf *s, struct nl_jobmix_units *u, bool *have)
{
	int64_t nu = nl_swf_header_int(s, "JobmixNodeUnit");
	int64_t tu = nl_swf_header_int(s, "JobmixTimeUnit");
	int64_t wc = nl_swf_header_int(s, "JobmixWallCells");

	if (*have || nu < 1 || tu < NL_JOBMIX_MIN_TIME_UNIT_S || nu > UINT32_MAX ||
	    tu > UINT32_MAX)
		return;
	u->node_unit = (uint32_t)nu;
	u->time_unit_s = (uint32_t)tu;
	if (wc >= 1 && wc <= 0xffffff)
		u->wall_cells = (uint32_t)wc;
	*have = true;
}

static int
cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "node-unit", required_argument, NULL, 'u' },
		{ "time-unit", required_argument, NULL, 't' },
		{ "wall-cells", required_argument, NULL, 'w' },
		{ "procs-per-node", required_argument, NULL, 'p' },
		{ "plot", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nl_jobmix_units u;
	bool have_u = false, set_nu = false, set_tu = false, set_wc = false;
	uint64_t v, ppn = 1;
	uint32_t nu = 1, tu = 300, wcap = 0;
	const char *plot = NULL;
	struct trace *t = NULL;
	struct cols *c = NULL;
	size_t nt;
	int ch, rc = 0;

	nl_jobmix_units_default(&u);
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'u':
			if (!parse_u64(optarg, &v) || v < 1 || v > UINT32_MAX)
				return bad_num("--node-unit", optarg);
			nu = (uint32_t)v;
			set_nu = true;
			break;
		case 't':
			if (!parse_u64(optarg, &v) || v < NL_JOBMIX_MIN_TIME_UNIT_S || v > UINT32_MAX)
				return bad_num("--time-unit", optarg);
			tu = (uint32_t)v;
			set_tu = true;
			break;
		case 'w':
			if (!parse_u64(optarg, &v) || v < 1 || v > 0xffffff)
				return bad_num("--wall-cells", optarg);
			wcap = (uint32_t)v;
			set_wc = true;
			break;
		case 'p':
			if (!parse_u64(optarg, &ppn) || ppn < 1)
				return bad_num("--procs-per-node", optarg);
			break;
		case 'P':
			plot = optarg;
			break;
		case 'h':
			usage_compare(stdout);
			return 0;
		default:
			usage_compare(stderr);
			return EXIT_BAD;
		}
	}
	nt = (size_t)(argc - optind);
	if (nt < 2) {
		fprintf(stderr, "%s compare: need at least two traces\n", prog);
		usage_compare(stderr);
		return EXIT_BAD;
	}
	t = calloc(nt, sizeof(*t));
	c = calloc(nt, sizeof(*c));
	if (t == NULL || c == NULL) {
		rc = 1;
		goto out;
	}
	for (size_t k = 0; k < nt; k++) {
		rc = trace_load(&t[k], argv[optind + (int)k], ppn);
		if (rc != 0)
			goto out;
	}
	/* Units: flags, else the Jobmix header of B, C, ..., else of A, else defaults. */
	for (size_t k = 1; k < nt; k++)
		units_from_header(t[k].swf, &u, &have_u);
	units_from_header(t[0].swf, &u, &have_u);
	if (set_nu)
		u.node_unit = nu;
	if (set_tu)
		u.time_unit_s = tu;
	if (set_wc)
		u.wall_cells = wcap;
	if (u.wall_cells == 0) {
		int64_t mx = 1;

		for (size_t k = 0; k < nt; k++)
			for (size_t i = 0; i < t[k].n; i++)
				if (t[k].job[i].wall_s > mx)
					mx = t[k].job[i].wall_s;
		u.wall_cells = nl_jobmix_wall_cell(mx, u.time_unit_s, 0xffffff);
	}
	for (size_t k = 0; k < nt; k++)
		if (cols_fill(&c[k], &t[k], &u) != 0) {
			fprintf(stderr, "%s: out of memory\n", prog);
			rc = 1;
			goto out;
		}
	printf("map resolution: node unit %u, walltime unit %u s, %u walltime cells (cap %.1f h), "
	       "run time in 1 %% of walltime; submit on the hour of the week (local time)\n",
	       u.node_unit, u.time_unit_s, u.wall_cells,
	       (double)u.wall_cells * u.time_unit_s / 3600.0);
	for (size_t k = 0; k < nt; k++)
		printf("trace %zu: %s, %zu jobs, zone %s\n", k, t[k].path, t[k].n, t[k].zone);
	printf("\nstatistics (full resolution)\n  %-28s %8s %12s %10s %10s %10s %10s %10s %10s\n",
	       "parameter / trace", "jobs", "mean", "p10", "p25", "median", "p75", "p90", "max");
	for (int vv = 0; vv < V__COUNT; vv++)
		for (size_t k = 0; k < nt; k++) {
			char label[64];
			double *x = malloc(c[k].n * sizeof(double));

			if (x == NULL)
				continue;
			memcpy(x, c[k].raw[vv], c[k].n * sizeof(double));
			snprintf(label, sizeof(label), "%s [%zu]", v_name[vv], k);
			print_stats(label, x, c[k].n);
			free(x);
		}
	for (size_t k = 1; k < nt; k++) {
		double ks_raw[V__COUNT], ks_map[V__COUNT], joint;

		for (int vv = 0; vv < V__COUNT; vv++) {
			ks_raw[vv] = ks_copy(c[0].raw[vv], c[0].n, c[k].raw[vv], c[k].n);
			ks_map[vv] = ks_copy(c[0].map[vv], c[0].n, c[k].map[vv], c[k].n);
		}
		joint = nl_jobmix_joint_tv(t[0].job, t[0].n, t[k].job, t[k].n, &u);
		printf("\n[0] %s vs [%zu] %s\n", base_name(t[0].path), k, base_name(t[k].path));
		printf("  %-14s %12s %12s\n", "KS distance", "full-res", "map-res");
		for (int vv = 0; vv < V__COUNT; vv++)
			printf("  %-14s %12.4f %12.4f\n", v_name[vv], ks_raw[vv], ks_map[vv]);
		printf("  joint (node, walltime, run-time) cell histograms: total variation %.4f\n",
		       joint);
		printf("SUMMARY");
		for (int vv = 0; vv < V__COUNT; vv++)
			printf(" %s=%.4f", v_key[vv], ks_map[vv]);
		printf(" joint=%.4f\n", joint);
	}
	if (plot != NULL)
		rc = write_plots(plot, t, c, nt);
out:
	for (size_t k = 0; t != NULL && k < nt; k++) {
		if (c != NULL)
			cols_free(&c[k]);
		trace_free(&t[k]);
	}
	free(t);
	free(c);
	return rc;
}

#ifdef NL_HAVE_BATCH
/* ---- waits: a mix through the batch engine, wait by node-count and walltime class ---- */

static void
usage_waits(FILE *f)
{
	fprintf(f,
		"usage: %s waits MIX.swf --config CONFIG.ini [options]\n"
		"Runs MIX through the batch engine of nlevel-sim (the [batch] sections of CONFIG,\n"
		"first scenario unless --scenario) and prints the mean and median wait time by\n"
		"node-count class x requested-walltime class (Uno et al., K computer jobs, Fig. 9).\n"
		"  --config PATH         batch configuration (config/k-computer.ini)\n"
		"  --scenario NAME       scenario to run (default: the first)\n"
		"  --node-classes LIST   upper bounds of the node classes [nodes, engine CPUs]\n"
		"                        (default 384,1152,12288,36864,82944)\n"
		"  --wall-classes LIST   upper bounds of the walltime classes [h] (default 0.5,6,12,24)\n"
		"  --csv PATH            also write the table as CSV\n" EXIT_TEXT, prog);
}

#define MAX_CLS 16

static int
parse_list(const char *s, double *out, unsigned int *n)
{
	char *dup = strdup(s), *save = NULL;
	int rc = 0;

	*n = 0;
	if (dup == NULL)
		return -1;
	for (char *t = strtok_r(dup, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
		char *e;
		double v = strtod(t, &e);

		if (*e != '\0' || !(v > 0) || *n == MAX_CLS || (*n > 0 && v <= out[*n - 1])) {
			rc = -1;
			break;
		}
		out[(*n)++] = v;
	}
	free(dup);
	return (rc == 0 && *n > 0) ? 0 : -1;
}

static int
cmp_dbl_w(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
cmd_waits(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "scenario", required_argument, NULL, 's' },
		{ "node-classes", required_argument, NULL, 'n' },
		{ "wall-classes", required_argument, NULL, 'w' },
		{ "csv", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double ncls[MAX_CLS] = { 384, 1152, 12288, 36864, 82944 }, wcls[MAX_CLS] = { 0.5, 6, 12, 24 };
	unsigned int nn = 5, nw = 4, sc_i = 0;
	const char *config = NULL, *scen = NULL, *csv = NULL;
	struct nl_cfg *cfg = NULL;
	struct nl_batch_cfg c;
	struct nl_swf *t = NULL;
	struct nl_batch_job *jobs = NULL;
	struct nl_batch_stats st;
	size_t n = 0, drops[NL_SWF_DROP__COUNT] = { 0 };
	char err[NL_SWF_ERR_LEN > NL_CFG_ERR_LEN ? NL_SWF_ERR_LEN : NL_CFG_ERR_LEN];
	double *cell[MAX_CLS + 1][MAX_CLS + 1];
	size_t cnt[MAX_CLS + 1][MAX_CLS + 1];
	FILE *f = NULL;
	int ch, rc;

	memset(cell, 0, sizeof(cell));
	memset(cnt, 0, sizeof(cnt));
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			config = optarg;
			break;
		case 's':
			scen = optarg;
			break;
		case 'n':
			if (parse_list(optarg, ncls, &nn) != 0)
				return bad_num("--node-classes", optarg);
			break;
		case 'w':
			if (parse_list(optarg, wcls, &nw) != 0)
				return bad_num("--wall-classes", optarg);
			break;
		case 'o':
			csv = optarg;
			break;
		case 'h':
			usage_waits(stdout);
			return 0;
		default:
			usage_waits(stderr);
			return EXIT_BAD;
		}
	}
	if (optind + 1 != argc || config == NULL) {
		fprintf(stderr, "%s waits: need one MIX.swf and --config\n", prog);
		usage_waits(stderr);
		return EXIT_BAD;
	}
	if (nl_cfg_load(&cfg, config, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return EXIT_BAD;
	}
	if (nl_swf_load(&t, argv[optind], err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		rc = EXIT_BAD;
		goto out;
	}
	if (nl_batch_cfg_cpus_auto(cfg, t, argv[optind], NULL) != 0 ||
	    nl_batch_cfg_parse(cfg, &c) != 0 || nl_cfg_check_unused(cfg) != 0) {
		fprintf(stderr, "%s: %s\n", prog, cfg->err);
		rc = EXIT_BAD;
		goto out;
	}
	if (scen != NULL) {
		for (sc_i = 0; sc_i < c.n_sc; sc_i++)
			if (strcmp(c.sc[sc_i].name, scen) == 0)
				break;
		if (sc_i == c.n_sc) {
			fprintf(stderr, "%s: %s: no scenario '%s'\n", prog, config, scen);
			rc = EXIT_BAD;
			goto out;
		}
	}
	if (nl_batch_jobs_from_swf(t, &c, &jobs, &n, drops) != 0 || n == 0) {
		fprintf(stderr, "%s: %s: no job to run\n", prog, argv[optind]);
		rc = EXIT_BAD;
		goto out;
	}
	if (n < t->n_job) {
		fprintf(stderr, "%s: %s: %zu of %zu records kept (dropped:", prog, argv[optind], n,
			t->n_job);
		nl_swf_drops_fprint(stderr, drops, " ");
		fprintf(stderr, ")\n");
	}
	if (c.rsv.on)
		fprintf(stderr, "%s: warning: %s: waits runs the jobs only; the [reservations] "
				"stream is not drawn (nlevel-sim runs it)\n", prog, config);
	rc = nl_batch_run(&c.sys, &c.sc[sc_i], jobs, n, &st, NULL);
	if (rc != 0) {
		fprintf(stderr, "%s: batch run failed: %s\n", prog, strerror(-rc));
		rc = 1;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned int a = 0, b = 0;

		if (jobs[i].start_s < 0)
			continue;
		while (a < nn && (double)jobs[i].cpus > ncls[a])
			a++;
		while (b < nw && jobs[i].est_s > wcls[b] * 3600.0)
			b++;
		if (cell[a][b] == NULL) {
			cell[a][b] = malloc(n * sizeof(double));
			if (cell[a][b] == NULL) {
				rc = 1;
				goto out;
			}
		}
		cell[a][b][cnt[a][b]++] = jobs[i].start_s - jobs[i].submit_s;
	}
	printf("%s through %s (scenario %s, %s, %u nodes): %zu jobs ran, %zu unrunnable, "
	       "makespan %.1f days\n", argv[optind], config, c.sc[sc_i].name,
	       nl_batch_policy_name(c.sc[sc_i].policy), c.sys.cpus, st.jobs, st.unrunnable,
	       st.makespan_s / 86400.0);
	printf("wait time [h] by node count (rows) and requested walltime (columns): mean / median "
	       "(jobs)\n%-16s", "nodes \\ walltime");
	for (unsigned int b = 0; b <= nw; b++) {
		char h[32];

		if (b < nw)
			snprintf(h, sizeof(h), "<= %g h", wcls[b]);
		else
			snprintf(h, sizeof(h), "> %g h", wcls[nw - 1]);
		printf(" %24s", h);
	}
	printf("\n");
	if (csv != NULL) {
		f = fopen(csv, "w");
		if (f == NULL)
			fprintf(stderr, "%s: %s: %s\n", prog, csv, strerror(errno));
		else
			fprintf(f, "# %s through %s, scenario %s\nnodes_max,walltime_max_h,jobs,"
				   "wait_mean_h,wait_median_h\n", argv[optind], config,
				c.sc[sc_i].name);
	}
	for (unsigned int a = 0; a <= nn; a++) {
		char h[32];

		if (a < nn)
			snprintf(h, sizeof(h), "<= %g", ncls[a]);
		else
			snprintf(h, sizeof(h), "> %g", ncls[nn - 1]);
		printf("%-16s", h);
		for (unsigned int b = 0; b <= nw; b++) {
			size_t k = cnt[a][b];
			double s = 0, med = 0;
			char v[48];

			if (k == 0) {
				printf(" %24s", "-");
				continue;
			}
			qsort(cell[a][b], k, sizeof(double), cmp_dbl_w);
			for (size_t i = 0; i < k; i++)
				s += cell[a][b][i];
			med = k % 2 ? cell[a][b][k / 2] : (cell[a][b][k / 2 - 1] + cell[a][b][k / 2]) / 2;
			snprintf(v, sizeof(v), "%.2f / %.2f (%zu)", s / (double)k / 3600.0,
				 med / 3600.0, k);
			printf(" %24s", v);
			if (f != NULL)
				fprintf(f, "%g,%g,%zu,%.4f,%.4f\n", a < nn ? ncls[a] : -1.0,
					b < nw ? wcls[b] : -1.0, k, s / (double)k / 3600.0,
					med / 3600.0);
		}
		printf("\n");
	}
	rc = 0;
out:
	if (f != NULL)
		fclose(f);
	for (unsigned int a = 0; a <= MAX_CLS; a++)
		for (unsigned int b = 0; b <= MAX_CLS; b++)
			free(cell[a][b]);
	free(jobs);
	nl_swf_free(t);
	nl_cfg_free(cfg);
	return rc;
}
#endif /* NL_HAVE_BATCH */

int
main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage_main(stderr);
		return EXIT_BAD;
	}
	cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage_main(stdout);
		return 0;
	}
	/* Sub-command parsing: argv[1..] with the command as argv[0]. */
	if (strcmp(cmd, "learn") == 0)
		return cmd_learn(argc - 1, argv + 1);
	if (strcmp(cmd, "generate") == 0)
		return cmd_generate(argc - 1, argv + 1);
	if (strcmp(cmd, "compare") == 0)
		return cmd_compare(argc - 1, argv + 1);
#ifdef NL_HAVE_BATCH
	if (strcmp(cmd, "waits") == 0)
		return cmd_waits(argc - 1, argv + 1);
#endif
	fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
	usage_main(stderr);
	return EXIT_BAD;
}
