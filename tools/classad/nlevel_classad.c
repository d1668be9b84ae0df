/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-classad: evaluate ClassAd expressions and test reservation policies (seed 004).
 *
 *   nlevel-classad [-r RECORDS] [--now T] [--htcondor-calls] -e EXPR [-e EXPR ...]
 *   nlevel-classad --policy POLICY --nodes NODES --owner U --start T --end T -n N [--now T]
 *   nlevel-classad --check POLICY
 *
 * Exit status: 0 ok (admission accepted), 1 admission refused, 2 bad input (FILE:LINE:COL).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nl_classad.h"
#include "nl_plus.h"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nlevel-classad [-r RECORDS] [--now T] [--htcondor-calls] -e EXPR [-e EXPR ...]\n"
		"       nlevel-classad --policy POLICY --nodes NODES --owner USER --start T --end T\n"
		"                      -n COUNT [--now T]\n"
		"       nlevel-classad --check POLICY\n"
		"\n"
		"Evaluate ClassAd expressions (HTCondor syntax, see docs/classad.md), or run the\n"
		"PluS admission (Nakada et al., Policy-based Control of Advance Reservation)\n"
		"with a policy defining PLUS_NODE_RESERVABLE.\n"
		"\n"
		"  -r, --records FILE  record ([a = 1; b = 2] or a = 1; b = 2) giving the scope of -e\n"
		"  -e, --expr EXPR     expression to evaluate; prints VALUE (TYPE); repeatable\n"
		"  -p, --policy FILE   admission policy (e.g. config/policies/fig4-simple.cad)\n"
		"  -N, --nodes FILE    node list: { [name = \"n1\"; isAlive = true; loadavg = 0.1;\n"
		"                      jobs = { [id = \"j\"; owner = \"u\"; state = \"Running\";\n"
		"                      priority = 0; startTime = absTime(...); wallTime = relTime(...)] }],\n"
		"                      ... }   (nRunJobs is the number of Running jobs)\n"
		"  -o, --owner USER    PLUS_RSV_OWNER\n"
		"  -s, --start T       PLUS_RSV_START: ISO 8601, seconds since the epoch, or +RELTIME\n"
		"                      (relative to --now, e.g. +2h, +00:30:00)\n"
		"  -E, --end T         PLUS_RSV_END, same forms\n"
		"  -n, --count N       nodes requested\n"
		"  -t, --now T         what time() returns (default: the clock)\n"
		"  -c, --check FILE    parse a policy or record file, list its attributes\n"
		"  -H, --htcondor-calls  unknown functions and wrong argument counts evaluate to\n"
		"                      error, as in HTCondor (default: refused when parsing)\n"
		"  -h, --help          this text\n"
		"\n"
		"Exit status: 0 ok or accepted, 1 refused, 2 bad input (FILE:LINE:COL: message).\n");
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			char *b = realloc(buf, cap + 1);

			if (b == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = b;
		}
		size_t k = fread(buf + n, 1, cap - n, f);

		n += k;
		if (k == 0)
			break;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static int
parse_time(const char *s, int64_t now, int64_t *out)
{
	char *end;
	double rel;
	int32_t off;

	if (s[0] == '+') {
		if (s[1] == 0 || nl_cad_parse_reltime(s + 1, (uint32_t)strlen(s + 1), &rel) < 0 ||
		    !(rel <= NL_CAD_RELTIME_MAX_S) ||
		    __builtin_add_overflow(now, (int64_t)rel, out))
			return -EINVAL;
		return 0;
	}
	errno = 0;
	long long v = strtoll(s, &end, 10);

	if (*end == 0 && end != s) {
		if (errno == ERANGE)
			return -ERANGE;
		*out = v;
		return 0;
	}
	return nl_cad_parse_abstime(s, (uint32_t)strlen(s), out, &off);
}

#define MAX_COUNT 1000000u /* --count: nodes requested */

/* A node count: decimal digits only (no sign, no suffix, no blanks), 1..MAX_COUNT. */
static int
parse_count(const char *s, unsigned int *out)
{
	unsigned long v = 0;

	if (s[0] == 0)
		return -EINVAL;
	for (const char *c = s; *c != 0; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*c - '0');
		if (v > MAX_COUNT)
			return -ERANGE;
	}
	if (v == 0)
		return -ERANGE;
	*out = (unsigned int)v;
	return 0;
}

static void
get_str(struct nl_cad_ctx *c, const struct nl_cad_val *r, const char *name, char *dst,
	size_t n)
{
	struct nl_cad_val v;

	dst[0] = 0;
	if (nl_cad_rec_get(c, r, name, &v) == 0 && v.type == NL_CAD_STRING)
		snprintf(dst, n, "%s", v.u.s);
}

static double
get_num(struct nl_cad_ctx *c, const struct nl_cad_val *r, const char *name, double dflt)
{
	struct nl_cad_val v;

	if (nl_cad_rec_get(c, r, name, &v) < 0)
		return dflt;
	if (v.type == NL_CAD_INT)
		return (double)v.u.i;
	if (v.type == NL_CAD_REAL)
		return v.u.r;
	if (v.type == NL_CAD_BOOL)
		return v.u.b;
	if (v.type == NL_CAD_ABSTIME)
		return (double)v.u.abs_s;
	if (v.type == NL_CAD_RELTIME)
		return v.u.rel_s;
	return dflt;
}

static int
load_nodes(const char *path, int64_t now, struct nl_plus_node **out, unsigned int *n_out,
	   struct nl_plus_job **jobs_out)
{
	size_t len;
	char *src = slurp(path, &len);
	struct nl_cad_prog *p = NULL;
	struct nl_cad_ctx *c = NULL;
	struct nl_cad_err e;
	struct nl_cad_val l;
	int slot, rc = -EINVAL;

	if (src == NULL)
		return -ENOENT;
	if (nl_cad_parse("", 0, &p, &e) < 0)
		goto out;
	slot = nl_cad_parse_expr(p, src, len, &e);
	if (slot < 0) {
		fprintf(stderr, "%s:%u:%u: error: %s\n", path, e.line, e.col, e.msg);
		goto out;
	}
	nl_cad_ctx_create(p, &c);
	nl_cad_ctx_set_now(c, now);
	nl_cad_eval(c, slot, &l);
	if (l.type != NL_CAD_LIST || l.aux == 0) {
		fprintf(stderr, "%s:1:1: error: expected a non-empty list of node records, got %s\n",
			path, nl_cad_type_name((enum nl_cad_type)l.type));
		goto out;
	}
	unsigned int n = (unsigned int)l.aux, n_jobs = 0;
	struct nl_plus_node *nodes = calloc(n, sizeof(*nodes));

	/* count jobs first */
	for (unsigned int i = 0; i < n; i++) {
		struct nl_cad_val j;

		if (l.u.l[i].type != NL_CAD_RECORD) {
			fprintf(stderr, "%s: error: element %u of the node list is not a record\n",
				path, i);
			free(nodes);
			goto out;
		}
		if (nl_cad_rec_get(c, &l.u.l[i], "jobs", &j) == 0 && j.type == NL_CAD_LIST)
			n_jobs += (unsigned int)j.aux;
	}
	struct nl_plus_job *jobs = calloc(n_jobs + 1, sizeof(*jobs));
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		const struct nl_cad_val *r = &l.u.l[i];
		struct nl_cad_val v, j;

		get_str(c, r, "name", nodes[i].name, sizeof(nodes[i].name));
		if (nodes[i].name[0] == 0)
			snprintf(nodes[i].name, sizeof(nodes[i].name), "node%u", i);
		nodes[i].alive = nl_cad_rec_get(c, r, "isAlive", &v) == 0 &&
				 nl_cad_is_true(&v);
		nodes[i].loadavg = get_num(c, r, "loadavg", 0);
		nodes[i].jobs = &jobs[k];
		if (nl_cad_rec_get(c, r, "jobs", &j) == 0 && j.type == NL_CAD_LIST) {
			for (int32_t q = 0; q < j.aux; q++) {
				const struct nl_cad_val *jr = &j.u.l[q];
				struct nl_plus_job *jb = &jobs[k++];

				if (jr->type != NL_CAD_RECORD)
					continue;
				get_str(c, jr, "id", jb->id, sizeof(jb->id));
				get_str(c, jr, "owner", jb->owner, sizeof(jb->owner));
				get_str(c, jr, "state", jb->state, sizeof(jb->state));
				jb->priority = (int64_t)get_num(c, jr, "priority", 0);
				jb->start_s = (int64_t)get_num(c, jr, "startTime", (double)now);
				jb->wall_s = get_num(c, jr, "wallTime", 0);
				nodes[i].n_jobs++;
			}
		}
	}
	*out = nodes;
	*n_out = n;
	*jobs_out = jobs;
	rc = 0;
out:
	nl_cad_ctx_free(c);
	nl_cad_prog_free(p);
	free(src);
	return rc;
}

static int
run_policy(const char *policy, const char *nodes_path, const char *owner, const char *start,
	   const char *end, unsigned int count, int64_t now)
{
	size_t len;
	char *src = slurp(policy, &len);
	struct nl_plus_node *nodes = NULL;
	struct nl_plus_job *jobs = NULL;
	unsigned int n = 0;
	struct nl_plus *pl = NULL;
	struct nl_cad_err e;
	struct nl_plus_req q = { owner, 0, 0, count };
	int rc = 2;

	if (src == NULL)
		return 2;
	if (owner == NULL || start == NULL || end == NULL || count == 0) {
		fprintf(stderr, "nlevel-classad: --policy needs --nodes, --owner, --start, --end, -n\n");
		goto out;
	}
	if (parse_time(start, now, &q.start_s) < 0 || parse_time(end, now, &q.end_s) < 0) {
		fprintf(stderr, "nlevel-classad: bad time in --start/--end\n");
		goto out;
	}
	if (load_nodes(nodes_path, now, &nodes, &n, &jobs) < 0)
		goto out;
	if (nl_plus_create(src, len, n, &pl, &e) < 0) {
		fprintf(stderr, "%s:%u:%u: error: %s\n", policy, e.line, e.col, e.msg);
		goto out;
	}
	nl_plus_set_now(pl, now);
	for (unsigned int i = 0; i < n; i++)
		nl_plus_node_set(pl, i, &nodes[i]);
	uint32_t *got = calloc(count, sizeof(*got));
	struct nl_plus_refusal why;
	int r = nl_plus_admit(pl, &q, got, &why);

	if (r > 0) {
		printf("accepted %u node%s:", count, count == 1 ? "" : "s");
		for (int i = 0; i < r; i++)
			printf(" %s", nodes[got[i]].name);
		printf("\n");
		rc = 0;
	} else {
		printf("refused: %s\n", why.msg);
		if (why.clause[0])
			printf("%s:%u:%u: refused by this clause (value %s)\n", policy, why.line,
			       why.col, why.value);
		rc = r == -EINVAL ? 2 : 1;
	}
	free(got);
out:
	nl_plus_free(pl);
	free(nodes);
	free(jobs);
	free(src);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "records", required_argument, NULL, 'r' }, { "expr", required_argument, NULL, 'e' },
		{ "policy", required_argument, NULL, 'p' }, { "nodes", required_argument, NULL, 'N' },
		{ "owner", required_argument, NULL, 'o' }, { "start", required_argument, NULL, 's' },
		{ "end", required_argument, NULL, 'E' }, { "count", required_argument, NULL, 'n' },
		{ "now", required_argument, NULL, 't' }, { "check", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' }, { "htcondor-calls", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *records = NULL, *policy = NULL, *nodes = NULL, *owner = NULL;
	const char *start = NULL, *end = NULL, *check = NULL, *now_s = NULL;
	const char *exprs[64];
	unsigned int n_expr = 0, count = 0;
	uint32_t flags = 0;
	int o;

	while ((o = getopt_long(argc, argv, "r:e:p:N:o:s:E:n:t:c:hH", opts, NULL)) != -1) {
		switch (o) {
		case 'r': records = optarg; break;
		case 'e':
			if (n_expr == 64) {
				fprintf(stderr, "nlevel-classad: too many -e\n");
				return 2;
			}
			exprs[n_expr++] = optarg;
			break;
		case 'p': policy = optarg; break;
		case 'N': nodes = optarg; break;
		case 'o': owner = optarg; break;
		case 's': start = optarg; break;
		case 'E': end = optarg; break;
		case 'n':
			if (parse_count(optarg, &count) < 0) {
				fprintf(stderr, "nlevel-classad: bad --count '%s' (want a whole number "
					"of nodes, 1 to %u)\n", optarg, MAX_COUNT);
				return 2;
			}
			break;
		case 't': now_s = optarg; break;
		case 'c': check = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'H': flags |= NL_CAD_PARSE_HTCONDOR_CALLS; break;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nlevel-classad: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	int64_t now = INT64_MIN;

	if (now_s != NULL && parse_time(now_s, 0, &now) < 0) {
		fprintf(stderr, "nlevel-classad: bad --now '%s'\n", now_s);
		return 2;
	}
	if (policy != NULL) {
		if (nodes == NULL) {
			fprintf(stderr, "nlevel-classad: --policy needs --nodes\n");
			return 2;
		}
		if (now == INT64_MIN)
			now = (int64_t)time(NULL);
		return run_policy(policy, nodes, owner, start, end, count, now);
	}
	const char *file = check != NULL ? check : records;
	char *src = NULL;
	size_t len = 0;
	struct nl_cad_prog *p = NULL;
	struct nl_cad_ctx *c = NULL;
	struct nl_cad_err e;
	int slots[64];
	int rc = 0;

	if (check == NULL && n_expr == 0) {
		usage(stderr);
		return 2;
	}
	if (file != NULL && (src = slurp(file, &len)) == NULL)
		return 2;
	if (nl_cad_parse_flags(src ? src : "", len, flags, &p, &e) < 0) {
		fprintf(stderr, "%s:%u:%u: error: %s\n", file, e.line, e.col, e.msg);
		free(src);
		return 2;
	}
	for (unsigned int i = 0; i < n_expr; i++) {
		slots[i] = nl_cad_parse_expr(p, exprs[i], strlen(exprs[i]), &e);
		if (slots[i] < 0) {
			fprintf(stderr, "-e '%s':%u:%u: error: %s\n", exprs[i], e.line, e.col, e.msg);
			rc = 2;
		}
	}
	if (rc == 0 && nl_cad_ctx_create(p, &c) == 0) {
		if (now != INT64_MIN)
			nl_cad_ctx_set_now(c, now);
		if (check != NULL) {
			for (unsigned int s = 0; s < nl_cad_n_slots(p); s++)
				if (nl_cad_slot_name(p, s)[0])
					printf("%s %s\n", nl_cad_slot_name(p, s),
					       nl_cad_slot_defined(p, s) ? "defined" : "external");
		}
		for (unsigned int i = 0; i < n_expr; i++) {
			struct nl_cad_val v;
			char buf[4096];

			nl_cad_eval(c, slots[i], &v);
			nl_cad_format(c, &v, buf, sizeof(buf));
			printf("%s (%s)\n", buf, nl_cad_type_name((enum nl_cad_type)v.type));
		}
	}
	nl_cad_ctx_free(c);
	nl_cad_prog_free(p);
	free(src);
	return rc;
}
