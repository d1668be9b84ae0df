/* SPDX-License-Identifier: BSD-3-Clause */
/* nlevel-jobmix end to end: learn, generate (deterministic, valid SWF read back by nl_swf),
 * compare (SUMMARY line), bad input (exit 2 with the line), and the KTH-SP2 acceptance
 * figures when the trace is present. argv[1] = the nlevel-jobmix executable. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nl_swf.h"
#include "nl_tap.h"

static const char *exe;
static char dir[256];

/* Run "exe ARGS > dir/out 2>&1"; return the exit status. */
static int
run(const char *args, const char *out)
{
	char cmd[4096];
	int st;

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s >'%s' 2>&1", dir, exe, args, out);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* As run(), killed after secs seconds (status 124): for a command that used to loop. */
static int
run_limited(const char *args, const char *out, int secs)
{
	char cmd[4096];
	int st;

	snprintf(cmd, sizeof(cmd), "cd '%s' && timeout %d '%s' %s >'%s' 2>&1", dir, secs, exe, args,
		 out);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *
slurp(const char *name)
{
	char path[512];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (f == NULL)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

static void
spit(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static bool
contains(const char *file, const char *want)
{
	char *t = slurp(file);
	bool r = strstr(t, want) != NULL;

	if (!r)
		nl_tap_diag("%s lacks '%s': %.300s", file, want, t);
	free(t);
	return r;
}

/* Value of KEY on the last SUMMARY line, or -1. */
static double
summary(const char *file, const char *key)
{
	char *t = slurp(file), *line = NULL, *p, k[64];
	double v = -1;

	for (p = t; (p = strstr(p, "SUMMARY ")) != NULL; p++)
		line = p;
	if (line != NULL) {
		snprintf(k, sizeof(k), " %s=", key);
		p = strstr(line, k);
		if (p != NULL)
			v = strtod(p + strlen(k), NULL);
	}
	free(t);
	return v;
}

static void
write_small_trace(void)
{
	FILE *f;
	char path[512];
	int64_t t = 0;

	snprintf(path, sizeof(path), "%s/small.swf", dir);
	f = fopen(path, "w");
	fprintf(f, "; Version: 2.2\n; UnixStartTime: 843480031\n; TimeZoneString: Europe/Stockholm\n"
		   "; MaxNodes: 64\n; MaxProcs: 64\n");
	for (int i = 1; i <= 400; i++) {
		int procs = 1 << (i % 7), req = (i % 5 + 1) * 900, run = (i * 37) % req;

		t += 300 + (i * 131) % 1800;
		fprintf(f, "%d %lld 0 %d %d -1 -1 %d %d -1 1 %d %d -1 -1 -1 -1 -1\n", i,
			(long long)t, run, procs, procs, req, i % 9, i % 3);
	}
	fclose(f);
}

static void
test_small(void)
{
	struct nl_swf *s = NULL;
	char err[NL_SWF_ERR_LEN] = "", path[512];
	char *a, *b;
	bool ok_fields = true, nondecr = true;
	int rc;

	write_small_trace();
	rc = run("learn small.swf --out small.model", "learn.out");
	nl_tap_ok(rc == 0 && contains("learn.out", "learned 400 jobs"), "learn exits 0 on a "
		  "small SWF (status %d)", rc);
	rc = run("generate small.model --jobs 3000 --seed 5 --method map --out g1.swf", "g1.out");
	rc |= run("generate small.model --jobs 3000 --seed 5 --method map --out g2.swf", "g2.out");
	a = slurp("g1.swf");
	b = slurp("g2.swf");
	nl_tap_ok(rc == 0 && strlen(a) > 1000 && strcmp(a, b) == 0,
		  "generate with the same seed writes the same file");
	free(a);
	free(b);
	snprintf(path, sizeof(path), "%s/g1.swf", dir);
	rc = nl_swf_load(&s, path, err, sizeof(err));
	if (rc == 0) {
		for (size_t i = 0; i < s->n_job; i++) {
			const struct nl_swf_job *j = &s->job[i];

			if (j->id != (int64_t)i + 1 || j->req_procs < 1 || j->req_procs > 64 ||
			    j->req_time_s < 1 || j->run_s < 0 || j->run_s > j->req_time_s ||
			    j->submit_s < 0)
				ok_fields = false;
			if (i > 0 && j->submit_s < s->job[i - 1].submit_s)
				nondecr = false;
		}
	}
	nl_tap_ok(rc == 0 && s->n_job == 3000 && ok_fields && nondecr &&
		  nl_swf_header_get(s, "JobmixMethod") != NULL &&
		  strcmp(nl_swf_header_get(s, "JobmixMethod"), "map") == 0 &&
		  nl_swf_header_get(s, "Note") != NULL &&
		  strstr(nl_swf_header_get(s, "Note"), "--seed 5") != NULL,
		  "generated SWF parses back with nl_swf: 3000 jobs, valid fields, submit "
		  "non-decreasing, header says how it was made (%s)", rc ? err : "ok");
	nl_swf_free(s);
	rc = run("compare small.swf g1.swf --plot plots", "cmp.out");
	nl_tap_ok(rc == 0 && summary("cmp.out", "ks_nodes") >= 0 &&
		  summary("cmp.out", "ks_walltime") >= 0 && summary("cmp.out", "ks_runtime") >= 0 &&
		  summary("cmp.out", "ks_submit") >= 0 && summary("cmp.out", "joint") >= 0 &&
		  contains("plots/jobs-1.csv", "nodes,walltime_h,runtime_h,ratio_pct") &&
		  contains("plots/submit.csv", "hour,23,"),
		  "compare prints a SUMMARY with ks_nodes, ks_walltime, ks_runtime, ks_submit, "
		  "joint, and writes the plot CSVs");
	rc = run("generate small.model --jobs 3000 --seed 5 --method normal --out n1.swf", "n1.out");
	nl_tap_ok(rc == 0, "generate --method normal exits 0");
}

static void
test_bad_input(void)
{
	char *m, *p;
	int rc;

	spit("empty.swf", "; Version: 2.2\n; MaxProcs: 4\n");
	rc = run("learn empty.swf --out x.model", "e.out");
	nl_tap_ok(rc == 2 && contains("e.out", "empty.swf: no job records"),
		  "empty trace: exit 2 and 'no job records' (status %d)", rc);
	spit("neg.swf", "; Version: 2.2\n;\n\n-1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
			"-1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
	rc = run("learn neg.swf --out x.model", "n.out");
	nl_tap_ok(rc == 2 && contains("n.out", "neg.swf:4: no usable job in 2 records (record 1"),
		  "trace with all fields -1: exit 2, names the line of the first record (status %d)",
		  rc);
	spit("short.swf", "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n1 2 3\n");
	rc = run("learn short.swf --out x.model", "s.out");
	nl_tap_ok(rc == 2 && contains("s.out", "short.swf:2:"),
		  "malformed SWF line: exit 2 with FILE:LINE (status %d)", rc);
	/* Corrupt line 6 (node_unit) of a real model. */
	m = slurp("small.model");
	p = strstr(m, "node_unit ");
	if (p != NULL)
		memcpy(p, "node_unix ", 10);
	spit("bad.model", m);
	free(m);
	rc = run("generate bad.model --jobs 10 --seed 1 --out b.swf", "b.out");
	nl_tap_ok(rc == 2 && contains("b.out", "bad.model:6: unknown keyword 'node_unix'"),
		  "model with a bad line: exit 2 with MODEL:LINE (status %d)", rc);
	rc = run("generate small.model --jobs 10 --method poisson --out b.swf", "b2.out");
	nl_tap_ok(rc == 2, "unknown --method: exit 2");
	rc = run("learn small.swf --out x.model --time-unit 30", "b3.out");
	nl_tap_ok(rc == 2 && contains("b3.out", ">= 100"), "--time-unit under 100 s: exit 2");
	rc = run("--help", "h0.out") | run("learn --help", "h1.out") |
	     run("generate --help", "h2.out") | run("compare --help", "h3.out");
	nl_tap_ok(rc == 0 && contains("h1.out", "--node-unit") && contains("h2.out", "--method") &&
		  contains("h3.out", "SUMMARY"), "--help on every command exits 0");
}

/*
 * A log of 8 processors per node (MaxNodes 16, MaxProcs 128, jobs of 8..64 processors),
 * learned with --procs-per-node 8: the model's machine is 16 nodes (MaxProcs / 8, not
 * MaxNodes / 8), the mix says MaxNodes 16, and compare of the log with its own mix under the
 * same option divides the log only (the mix counts nodes). A remark after the zone name is
 * not part of the zone.
 */
static void
test_procs_per_node(void)
{
	FILE *f;
	char path[512];
	int rc;

	snprintf(path, sizeof(path), "%s/ppn.swf", dir);
	f = fopen(path, "w");
	fprintf(f, "; Version: 2.2\n; UnixStartTime: 1000000000\n; TimeZoneString: Asia/Tokyo (JST)\n"
		   "; MaxNodes: 16\n; MaxProcs: 128\n");
	for (int i = 1; i <= 600; i++) {
		int procs = 8 * (1 + (i * 7) % 8), req = (i % 5 + 1) * 900, run = (i * 37) % req;

		fprintf(f, "%d %d 0 %d %d -1 -1 %d %d -1 1 1 1 -1 -1 -1 -1 -1\n", i, i * 600, run,
			procs, procs, req);
	}
	fclose(f);
	rc = run("learn ppn.swf --procs-per-node 8 --out ppn.model", "ppn-l.out");
	nl_tap_ok(rc == 0 && contains("ppn.model", "max_nodes 16\n") &&
		  contains("ppn.model", "zone Asia/Tokyo\n"),
		  "learn --procs-per-node 8: machine of MaxProcs / 8 = 16 nodes; zone without the "
		  "remark (status %d)", rc);
	rc = run("generate ppn.model --jobs 20000 --seed 3 --out ppn-mix.swf", "ppn-g.out");
	rc |= run("compare ppn.swf ppn-mix.swf --procs-per-node 8", "ppn-c.out");
	nl_tap_ok(rc == 0 && contains("ppn-mix.swf", "; MaxNodes: 16\n") &&
		  contains("ppn-c.out", "--procs-per-node not applied") &&
		  summary("ppn-c.out", "ks_nodes") >= 0 && summary("ppn-c.out", "ks_nodes") < 0.05,
		  "compare --procs-per-node 8 of a log with its mix: the mix is not divided again "
		  "(ks_nodes %.3f)", summary("ppn-c.out", "ks_nodes"));
}

/*
 * A machine that is not a multiple of the node unit: small.swf has MaxProcs 64 and jobs of up
 * to 64 processors; with U = 12 the top node cell holds 61..72 nodes. Its map jobs get 64
 * nodes (the cell's bound clamped to the machine), never more than the mix's MaxProcs.
 */
static void
test_map_jobs_fit_the_machine(void)
{
	struct nl_swf *s = NULL;
	char err[NL_SWF_ERR_LEN] = "", path[512];
	size_t wider = 0, top = 0;
	int rc;

	rc = run("learn small.swf --node-unit 12 --out u12.model", "u12-l.out");
	rc |= run("generate u12.model --jobs 5000 --seed 2 --method map --out u12.swf", "u12-g.out");
	snprintf(path, sizeof(path), "%s/u12.swf", dir);
	if (rc == 0 && nl_swf_load(&s, path, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < s->n_job; i++) {
			if (s->job[i].req_procs > 64 || s->job[i].alloc_procs > 64)
				wider++;
			if (s->job[i].req_procs == 64)
				top++;
		}
	} else {
		rc = rc ? rc : 1;
	}
	nl_tap_ok(rc == 0 && s != NULL && nl_swf_header_int(s, "MaxProcs") == 64 && wider == 0 &&
			  top > 0,
		  "--node-unit 12 on a 64-node log: no map job above MaxProcs 64 (%zu above, %zu "
		  "in the clamped top cell; status %d)", wider, top, rc);
	nl_swf_free(s);
}

/* Bad models and logs found by probing: each is refused with FILE:LINE and exit 2. */
static void
test_bad_counts_and_start_times(void)
{
	static const char model_head[] =
		"jobmix 1\njobs 0\nnode_unit 1\ntime_unit_s 300\nwall_cells 1\nmax_nodes 16\n";
	static const char swf_tail[] = "; TimeZoneString: UTC\n; MaxNodes: 16\n; MaxProcs: 16\n"
				       "1 0 0 10 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n";
	char text[1024];
	int rc;

	/* two counts of 2^63: their sum wraps to 0 = 'jobs' */
	snprintf(text, sizeof(text), "%sstart_unix_s 1000000000\nrate_per_s 0.0001\nslot 0 0 1\n"
		 "cell 4 1 17 9223372036854775808\ncell 4 1 18 9223372036854775808\nend\n",
		 model_head);
	spit("cellwrap.model", text);
	rc = run("generate cellwrap.model --jobs 3 --out cw.swf", "cw.out");
	nl_tap_ok(rc == 2 && contains("cw.out", "cellwrap.model:10: cells hold more than 'jobs' 0"),
		  "cell counts that wrap to 'jobs': exit 2 with MODEL:LINE, no crash (status %d)",
		  rc);
	/* a start localtime_r() cannot convert, and an empty slot 0: used to loop forever */
	snprintf(text, sizeof(text), "%sstart_unix_s 67768036191676800\nrate_per_s 0.0001\n"
		 "slot 3 4 1\ncell 4 1 17 1\nend\n", "jobmix 1\njobs 1\nnode_unit 1\n"
		 "time_unit_s 300\nwall_cells 1\nmax_nodes 16\n");
	spit("slot0empty.model", text);
	rc = run_limited("generate slot0empty.model --jobs 1 --out s0.swf", "s0.out", 60);
	nl_tap_ok(rc == 2 && contains("s0.out", "slot0empty.model:7: start_unix_s must be 0.."),
		  "model start time past year 9999: exit 2 with MODEL:LINE (status %d)", rc);
	snprintf(text, sizeof(text), "; Version: 2.2\n; UnixStartTime: 1600000000000000000\n%s",
		 swf_tail);
	spit("start-ns.swf", text);
	rc = run("learn start-ns.swf --out ns.model", "ns.out");
	nl_tap_ok(rc == 2 && contains("ns.out", "start-ns.swf:2: UnixStartTime "
				      "'1600000000000000000' is not a time in seconds") &&
			  contains("ns.out", "nanoseconds?"),
		  "learn of a log whose UnixStartTime is in ns: exit 2 with FILE:LINE (status %d)",
		  rc);
	snprintf(text, sizeof(text), "; Version: 2.2\n; UnixStartTime: 9223372036854775807\n%s",
		 swf_tail);
	spit("startmax.swf", text);
	rc = run("compare startmax.swf small.swf", "smax.out");
	rc = rc * 10 + run("learn startmax.swf --out smax.model", "smax-l.out");
	nl_tap_ok(rc == 22 && contains("smax.out", "startmax.swf:2: UnixStartTime") &&
			  contains("smax-l.out", "startmax.swf:2: UnixStartTime"),
		  "compare and learn of a log with UnixStartTime INT64_MAX: exit 2 with FILE:LINE "
		  "(status %d)", rc);
}

/* Every model learn writes loads back in generate: a log named '#hash.swf' whose
 * TimeZoneString is '#1' (not a zone: UTC, with a warning), and a log name with a newline. */
static void
test_learned_model_loads_back(void)
{
	static const char swf[] = "; Version: 2.2\n; UnixStartTime: 1000000000\n"
				  "; TimeZoneString: #1\n; MaxNodes: 16\n; MaxProcs: 16\n"
				  "1 0 0 10 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n";
	int rc, rc2;

	spit("#hash.swf", swf);
	rc = run("learn '#hash.swf' --out hash.model", "hash-l.out");
	rc = rc * 10 + run("generate hash.model --jobs 5 --out hash-mix.swf", "hash-g.out");
	nl_tap_ok(rc == 0 && contains("hash.model", "source _hash.swf\n") &&
			  contains("hash.model", "zone UTC\n") &&
			  contains("hash-l.out", "TimeZoneString '#1' is not a time zone"),
		  "learn of '#hash.swf' with TimeZoneString '#1' writes a model generate loads "
		  "(status %d)", rc);
	spit("nl\nx.swf", swf);
	rc2 = run("learn 'nl\nx.swf' --out nl.model", "nl-l.out");
	rc2 = rc2 * 10 + run("generate nl.model --jobs 5 --out nl-mix.swf", "nl-g.out");
	nl_tap_ok(rc2 == 0 && contains("nl.model", "source nl_x.swf\n"),
		  "learn of a log whose name holds a newline writes a model generate loads "
		  "(status %d)", rc2);
}

/* config/k-computer.ini through the batch engine (when nlevel-jobmix was built with it). */
static void
test_k_computer_waits(void)
{
	const char *root = getenv("NL_SRC_ROOT");
	char args[2048];
	int rc;

	if (!contains("h0.out", "waits")) {
		nl_tap_skip("waits on config/k-computer.ini", "built without the batch engine");
		return;
	}
	snprintf(args, sizeof(args), "waits g1.swf --config '%s/config/k-computer.ini' --csv w.csv",
		 root ? root : ".");
	rc = run(args, "w.out");
	nl_tap_ok(rc == 0 && contains("w.out", "scenario fcfs_backfill, easy, 82944 nodes") &&
		  contains("w.out", "3000 jobs ran, 0 unrunnable") &&
		  contains("w.csv", "nodes_max,walltime_max_h,jobs"),
		  "config/k-computer.ini runs a generated mix FCFS + backfill on 82,944 nodes and "
		  "reports wait by node and walltime class (status %d)", rc);
}

static void
test_kth(void)
{
	const char *root = getenv("NL_SRC_ROOT");
	char tr[1024], args[2048];
	double ks = 0, jm, jn;
	static const char *const k[] = { "ks_nodes", "ks_walltime", "ks_runtime", "ks_submit" };
	int rc;

	snprintf(tr, sizeof(tr), "%s/../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz",
		 root ? root : ".");
	if (access(tr, R_OK) != 0) {
		nl_tap_skip("KTH-SP2 acceptance", "trace not found at %s", tr);
		return;
	}
	snprintf(args, sizeof(args), "learn '%s' --out kth.model", tr);
	rc = run(args, "kl.out");
	rc |= run("generate kth.model --jobs 28476 --seed 7 --method map --out kmap.swf", "km.out");
	rc |= run("generate kth.model --jobs 28476 --seed 7 --method normal --out knorm.swf",
		  "kn.out");
	snprintf(args, sizeof(args), "compare '%s' kmap.swf", tr);
	rc |= run(args, "kcm.out");
	snprintf(args, sizeof(args), "compare '%s' knorm.swf", tr);
	rc |= run(args, "kcn.out");
	for (int i = 0; i < 4; i++) {
		double v = summary("kcm.out", k[i]);

		if (v < 0 || v > ks)
			ks = v < 0 ? 9 : v;
	}
	jm = summary("kcm.out", "joint");
	jn = summary("kcn.out", "joint");
	nl_tap_ok(rc == 0 && ks <= 0.05 && jm >= 0 && jm < jn,
		  "KTH-SP2: map mix KS max %.4f <= 0.05, joint map %.4f < normal %.4f", ks, jm, jn);
}

int
main(int argc, char **argv)
{
	char cmd[512];

	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH/nlevel-jobmix\n", argv[0]);
		return 2;
	}
	exe = realpath(argv[1], NULL);
	if (exe == NULL) {
		perror(argv[1]);
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/nl-jobmix-cli-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
									  : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_small();
	test_bad_input();
	test_procs_per_node();
	test_map_jobs_fit_the_machine();
	test_bad_counts_and_start_times();
	test_learned_model_loads_back();
	test_k_computer_waits();
	test_kth();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (nl_tap_fail == 0 && system(cmd) != 0)
		nl_tap_diag("could not remove %s", dir);
	else if (nl_tap_fail != 0)
		nl_tap_diag("files kept in %s", dir);
	free((char *)exe);
	return nl_tap_done();
}
