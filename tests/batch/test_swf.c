/* SPDX-License-Identifier: BSD-3-Clause */
/* SWF v2.2 reader/writer: header forms, -1 cases, gzip, round trip, malformed lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nl_swf.h"
#include "nl_tap.h"


static const char hdr_text[] =
	"; Version: 2.2\n"
	"; Computer: IBM SP2\n"
	";Installation:Somewhere\n"
	"; Information: http://a.example/\n"
	";              http://b.example/x\n"
	"; MaxJobs: 28490\n"
	"; MaxRecords: 4\n"
	"; MaxNodes: 338 (batch partition; 512 total)\n"
	"; MaxProcs: 512\n"
	"; Queues: 1 = batch\n"
	";         2 = interactive\n"
	"; Partitions: 1\n"
	"; UnixStartTime: 843480031\n"
	";\n"
	";\n"
	"; Note: THIS IS A CLEANED VERSION\n"
	";       The filter used was\n"
	";         job<=14 (14 jobs removed)\n"
	"; just a remark, no key\n"
	"\n"
	"   15   599850 192180   3477    4     -1    -1    4  53940    -1  1  12  12  -1 -1 -1 -1 -1\n"
	"16 600022 11940 2488 25 12.5 -1 -1 3600 -1 1 13 13 -1 2 -1 -1 -1\r\n"
	"\t17 600476 -1 -1 5 -1 -1 5 -1 -1 5 14 14 -1 1 -1 -1 -1\n"
	"; a comment between jobs\n"
	"18 600836 32100 35373 -1 -1 -1 -1 36000 -1 0 15 15 -1 1 -1 15 7";

static void
test_header_forms_are_parsed(void)
{
	struct nl_swf *t = NULL;
	char err[NL_SWF_ERR_LEN] = "";
	int rc = nl_swf_load_string(&t, "hdr", hdr_text, err, sizeof(err));
	const char *v;

	nl_tap_check(rc == 0 && t != NULL, "test_header_text_loads");
	if (rc != 0) {
		printf("# %s\n", err);
		return;
	}
	nl_tap_check(t->n_job == 4, "test_four_jobs_including_crlf_tab_and_last_line_without_newline");
	v = nl_swf_header_get(t, "Version");
	nl_tap_check(v != NULL && strcmp(v, "2.2") == 0, "test_version");
	v = nl_swf_header_get(t, "Computer");
	nl_tap_check(v != NULL && strcmp(v, "IBM SP2") == 0, "test_computer");
	v = nl_swf_header_get(t, "Installation");
	nl_tap_check(v != NULL && strcmp(v, "Somewhere") == 0, "test_key_without_blanks");
	v = nl_swf_header_get(t, "Information");
	nl_tap_check(v != NULL && strcmp(v, "http://a.example/\nhttp://b.example/x") == 0,
	   "test_continuation_with_colon_is_not_a_key");
	nl_tap_check(nl_swf_header_int(t, "MaxJobs") == 28490, "test_maxjobs");
	nl_tap_check(nl_swf_header_int(t, "MaxRecords") == 4, "test_maxrecords");
	nl_tap_check(nl_swf_header_int(t, "MaxNodes") == 338, "test_number_with_trailing_text");
	v = nl_swf_header_get(t, "MaxNodes");
	nl_tap_check(v != NULL && strcmp(v, "338 (batch partition; 512 total)") == 0,
	   "test_trailing_text_kept_in_value");
	nl_tap_check(nl_swf_header_int(t, "MaxProcs") == 512, "test_maxprocs");
	v = nl_swf_header_get(t, "Queues");
	nl_tap_check(v != NULL && strcmp(v, "1 = batch\n2 = interactive") == 0, "test_queues_multiline");
	nl_tap_check(nl_swf_header_int(t, "Partitions") == 1, "test_partitions");
	nl_tap_check(nl_swf_header_int(t, "UnixStartTime") == 843480031, "test_unixstarttime");
	v = nl_swf_header_get(t, "Note");
	nl_tap_check(v != NULL &&
		   strcmp(v, "THIS IS A CLEANED VERSION\nThe filter used was\n"
			     "job<=14 (14 jobs removed)") == 0,
	   "test_note_after_bare_semicolons_with_two_continuations");
	nl_tap_check(nl_swf_header_get(t, "Preemption") == NULL && nl_swf_header_int(t, "Preemption") == -1,
	   "test_absent_key_is_null_and_minus_one");
	unsigned int bare = 0, free_c = 0;

	for (size_t i = 0; i < t->n_hdr; i++) {
		if (t->hdr[i].key == NULL && t->hdr[i].value[0] == '\0')
			bare++;
		if (t->hdr[i].key == NULL && strstr(t->hdr[i].value, "remark") != NULL)
			free_c++;
	}
	nl_tap_check(bare == 2 && free_c == 1, "test_bare_semicolons_and_free_comments_kept");
	nl_tap_check(t->job[0].id == 15 && t->job[0].submit_s == 599850 && t->job[0].wait_s == 192180 &&
		   t->job[0].run_s == 3477 && t->job[0].alloc_procs == 4 && t->job[0].req_procs == 4 &&
		   t->job[0].req_time_s == 53940 && t->job[0].status == 1 && t->job[0].user == 12,
	   "test_fields_in_order");
	nl_tap_check(t->job[1].avg_cpu_s == 12.5 && t->job[1].queue == 2, "test_fractional_cpu_time");
	nl_tap_check(t->job[3].prev_job == 15 && t->job[3].think_s == 7, "test_last_fields");
	nl_swf_free(t);
}

static void
test_minus_one_cases_follow_filter_rules(void)
{
	struct nl_swf *t = NULL;
	struct nl_swf_rigid r;
	struct nl_swf_filter f = { 0 };
	char err[NL_SWF_ERR_LEN];

	if (nl_swf_load_string(&t, "hdr", hdr_text, err, sizeof(err)) != 0) {
		nl_tap_check(0, "test_minus_one_load");
		return;
	}
	/* job 16: requested procs -1 -> allocated 25 */
	nl_tap_check(nl_swf_rigid(&t->job[1], NULL, &r) == NL_SWF_KEEP && r.procs == 25 && r.run_s == 2488 &&
		   r.est_s == 3600,
	   "test_requested_procs_minus_one_falls_back_to_allocated");
	/* job 17: run -1 */
	nl_tap_check(nl_swf_rigid(&t->job[2], NULL, &r) == NL_SWF_DROP_NO_RUNTIME,
	   "test_run_time_minus_one_dropped");
	/* job 18: both procs -1 */
	nl_tap_check(nl_swf_rigid(&t->job[3], NULL, &r) == NL_SWF_DROP_NO_PROCS,
	   "test_no_processors_dropped");
	struct nl_swf_job j = t->job[0];

	j.req_time_s = -1;
	nl_tap_check(nl_swf_rigid(&j, NULL, &r) == NL_SWF_KEEP && r.est_s == r.run_s,
	   "test_requested_time_minus_one_estimate_is_run_time");
	j = t->job[0];
	j.status = NL_SWF_STATUS_CANCELLED;
	j.run_s = 0;
	nl_tap_check(nl_swf_rigid(&j, NULL, &r) == NL_SWF_DROP_CANCELLED, "test_cancelled_never_ran_dropped");
	j.run_s = 100;
	nl_tap_check(nl_swf_rigid(&j, NULL, &r) == NL_SWF_KEEP, "test_cancelled_after_start_kept");
	f.drop_cancelled = true;
	nl_tap_check(nl_swf_rigid(&j, &f, &r) == NL_SWF_DROP_CANCELLED, "test_drop_cancelled_option");
	f = (struct nl_swf_filter){ 0 };
	j = t->job[0];
	j.run_s = 60000; /* > 53940 requested */
	nl_tap_check(nl_swf_rigid(&j, NULL, &r) == NL_SWF_KEEP && r.run_s == 60000 && r.est_s == 60000,
	   "test_overrun_extend_raises_estimate");
	f.overrun = NL_SWF_OVERRUN_KILL;
	nl_tap_check(nl_swf_rigid(&j, &f, &r) == NL_SWF_KEEP && r.run_s == 53940 && r.est_s == 53940,
	   "test_overrun_kill_cuts_run");
	f = (struct nl_swf_filter){ .max_procs = 3 };
	nl_tap_check(nl_swf_rigid(&t->job[0], &f, &r) == NL_SWF_DROP_TOO_WIDE, "test_too_wide_dropped");
	j = t->job[0];
	j.alloc_procs = 9;
	j.req_procs = 8;
	f = (struct nl_swf_filter){ .procs_src = NL_SWF_PROCS_ALLOCATED };
	nl_tap_check(nl_swf_rigid(&j, NULL, &r) == NL_SWF_KEEP && r.procs == 8, "test_default_uses_requested");
	nl_tap_check(nl_swf_rigid(&j, &f, &r) == NL_SWF_KEEP && r.procs == 9, "test_allocated_option");
	j.status = NL_SWF_STATUS_PARTIAL;
	nl_tap_check(nl_swf_rigid(&j, NULL, &r) == NL_SWF_DROP_PARTIAL, "test_partial_records_dropped");
	nl_swf_free(t);
}

static int
same_jobs(const struct nl_swf *a, const struct nl_swf *b)
{
	if (a->n_job != b->n_job)
		return 0;
	for (size_t i = 0; i < a->n_job; i++)
		if (memcmp(&a->job[i], &b->job[i], sizeof(a->job[i])) != 0)
			return 0;
	return 1;
}

static int
same_header(const struct nl_swf *a, const struct nl_swf *b)
{
	if (a->n_hdr != b->n_hdr)
		return 0;
	for (size_t i = 0; i < a->n_hdr; i++) {
		const struct nl_swf_hdr *x = &a->hdr[i], *y = &b->hdr[i];

		if ((x->key == NULL) != (y->key == NULL))
			return 0;
		if (x->key != NULL && strcmp(x->key, y->key) != 0)
			return 0;
		if (strcmp(x->value, y->value) != 0)
			return 0;
	}
	return 1;
}

static void
test_round_trip_plain_and_gzip(void)
{
	struct nl_swf *a = NULL, *b = NULL, *c = NULL;
	char err[NL_SWF_ERR_LEN] = "", p1[64], p2[80];
	int fd;

	snprintf(p1, sizeof(p1), "/tmp/nl_swf_XXXXXX");
	fd = mkstemp(p1);
	if (fd >= 0)
		close(fd);
	snprintf(p2, sizeof(p2), "%s.gz", p1);
	nl_swf_load_string(&a, "hdr", hdr_text, err, sizeof(err));
	a->job[1].avg_cpu_s = 0.1; /* not representable exactly: 15 digits must give it back */
	nl_tap_check(a != NULL && nl_swf_write(a, p1) == 0, "test_write_plain");
	nl_tap_check(nl_swf_load(&b, p1, err, sizeof(err)) == 0 && same_jobs(a, b) && same_header(a, b),
	   "test_round_trip_plain_same_jobs_and_header");
	nl_tap_check(nl_swf_write(a, p2) == 0, "test_write_gzip");
	FILE *f = fopen(p2, "rb");
	unsigned char magic[2] = { 0, 0 };

	if (f != NULL) {
		if (fread(magic, 1, 2, f) != 2)
			magic[0] = 0;
		fclose(f);
	}
	nl_tap_check(magic[0] == 0x1f && magic[1] == 0x8b, "test_gz_suffix_writes_gzip");
	nl_tap_check(nl_swf_load(&c, p2, err, sizeof(err)) == 0 && same_jobs(a, c) && same_header(a, c),
	   "test_round_trip_gzip_same_jobs_and_header");
	unlink(p1);
	unlink(p2);
	nl_swf_free(a);
	nl_swf_free(b);
	nl_swf_free(c);

	/* generated trace: header_set + append */
	struct nl_swf *g = NULL, *h = NULL;
	struct nl_swf_job j;

	nl_swf_new(&g);
	nl_swf_header_set(g, "Version", "2.2");
	nl_swf_header_set(g, "MaxProcs", "100");
	nl_swf_header_set(g, "MaxProcs", "128");
	nl_swf_header_set(g, "Note", "line one\nline two");
	nl_tap_check(nl_swf_header_set(g, "bad key", "x") == -EINVAL, "test_header_set_refuses_bad_key");
	nl_swf_job_init(&j);
	nl_tap_check(j.id == -1 && j.think_s == -1 && j.avg_cpu_s == -1, "test_job_init_all_unknown");
	for (int i = 1; i <= 1000; i++) {
		j.id = i;
		j.submit_s = i * 7;
		j.run_s = i % 13;
		j.req_procs = 1 + i % 64;
		nl_swf_append(g, &j);
	}
	snprintf(p1, sizeof(p1), "/tmp/nl_swf_XXXXXX");
	fd = mkstemp(p1);
	if (fd >= 0)
		close(fd);
	nl_swf_write(g, p1);
	nl_tap_check(nl_swf_load(&h, p1, err, sizeof(err)) == 0 && same_jobs(g, h) &&
		   nl_swf_header_int(h, "MaxProcs") == 128 &&
		   strcmp(nl_swf_header_get(h, "Note"), "line one\nline two") == 0,
	   "test_generated_trace_round_trip");
	unlink(p1);
	nl_swf_free(g);
	nl_swf_free(h);
}

/* Write a trace to a temporary file and read it back. @return the copy, NULL on failure. */
static struct nl_swf *
write_read(const struct nl_swf *a)
{
	struct nl_swf *b = NULL;
	char err[NL_SWF_ERR_LEN] = "", p[64];
	int fd;

	snprintf(p, sizeof(p), "/tmp/nl_swf_XXXXXX");
	fd = mkstemp(p);
	if (fd < 0)
		return NULL;
	close(fd);
	if (nl_swf_write(a, p) != 0 || nl_swf_load(&b, p, err, sizeof(err)) != 0)
		printf("# write_read: %s\n", err);
	unlink(p);
	return b;
}

/* Inputs the SWF fuzz target (tests/batch/fuzz_swf.c) found whose round trip changed. */
static void
test_round_trip_of_what_the_fuzzer_found(void)
{
	struct nl_swf *a = NULL, *b;
	char err[NL_SWF_ERR_LEN] = "";

	/* an indented comment that a blank line keeps apart from the keyed entry before it */
	nl_swf_load_string(&a, "fz", "; Information: first line\n\n;   not a continuation\n", err,
			   sizeof(err));
	b = a ? write_read(a) : NULL;
	nl_tap_check(a && a->n_hdr == 2 && a->hdr[1].key == NULL && b && same_header(a, b),
	   "test_indented_comment_after_a_key_stays_a_comment");
	nl_swf_free(a);
	nl_swf_free(b);
	/* ';' two blanks and a vertical tab: only white space, a bare ';', not an empty
	 * continuation line */
	a = NULL;
	nl_swf_load_string(&a, "fz", "; Installation: x\n;  \v\n", err, sizeof(err));
	b = a ? write_read(a) : NULL;
	nl_tap_check(a && a->n_hdr == 2 && strcmp(a->hdr[0].value, "x") == 0 && b &&
			     same_header(a, b),
	   "test_white_space_only_comment_is_bare_not_a_continuation");
	nl_swf_free(a);
	nl_swf_free(b);
	/* a header line longer than the writer's line buffer (1 KiB) is written whole */
	{
		char text[4200];

		memcpy(text, "; Note: ", 8);
		memset(text + 8, 'x', 3000);
		snprintf(text + 3008, sizeof(text) - 3008, "\n;          and more\n");
		a = NULL;
		nl_swf_load_string(&a, "fz", text, err, sizeof(err));
	}
	b = a ? write_read(a) : NULL;
	nl_tap_check(a && a->n_hdr == 1 && strlen(a->hdr[0].value) == 3009 && b &&
			     same_header(a, b),
	   "test_round_trip_keeps_a_header_line_of_3000_bytes");
	nl_swf_free(a);
	nl_swf_free(b);
	/* integers beyond 2^53 and fractions that need 17 digits come back the same */
	a = NULL;
	nl_swf_load_string(&a, "fz",
			   "1 1234567890123456789 0 8999999999999999999 1 0.12345678901234567 "
			   "-1 1 -1 3.0000000000000004 1 1 1 1 1 -1 -1 -1\n",
			   err, sizeof(err));
	b = a ? write_read(a) : NULL;
	nl_tap_check(a && b && same_jobs(a, b) && a->job[0].run_s == b->job[0].run_s,
	   "test_round_trip_keeps_every_digit_of_big_integers_and_fractions");
	nl_swf_free(a);
	nl_swf_free(b);
}

static void
expect_error(const char *text, const char *want, const char *name)
{
	struct nl_swf *t = NULL;
	char err[NL_SWF_ERR_LEN] = "";
	int rc = nl_swf_load_string(&t, "bad.swf", text, err, sizeof(err));

	nl_tap_check(rc == -EINVAL && t == NULL && strstr(err, want) != NULL, name);
	if (rc != -EINVAL || strstr(err, want) == NULL)
		printf("# rc=%d err='%s' want '%s'\n", rc, err, want);
}

static void
test_malformed_lines_name_their_line(void)
{
	expect_error("; Version: 2.2\n1 0 1 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n"
		     "2 0 1 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1\n",
		     "bad.swf:3: expected 18 fields, found 17", "test_short_line_rejected_with_line");
	expect_error("1 0 1 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1 9\n",
		     "bad.swf:1: expected 18 fields, found 19", "test_long_line_rejected_with_line");
	expect_error(";\n;\n\n1 0 1 x 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n",
		     "bad.swf:4: field 4 (run time): 'x' is not a number",
		     "test_not_a_number_rejected_with_line_and_field");
	expect_error("1 0 1 1.5 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n",
		     "bad.swf:1: field 4 (run time): '1.5' is not an integer",
		     "test_fraction_in_integer_field_rejected");
	expect_error("1 0 1 12abc 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n",
		     "bad.swf:1: field 4", "test_number_glued_to_text_rejected");

	struct nl_swf *t = NULL;
	char err[NL_SWF_ERR_LEN] = "";

	nl_tap_check(nl_swf_load(&t, "/nonexistent/x.swf", err, sizeof(err)) == -ENOENT &&
		   strstr(err, "/nonexistent/x.swf") != NULL,
	   "test_missing_file_is_enoent");
	/* a corrupt gzip stream */
	char p[64];
	int fd;

	snprintf(p, sizeof(p), "/tmp/nl_swf_XXXXXX");
	fd = mkstemp(p);
	if (fd >= 0) {
		static const unsigned char junk[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3,
						      0xff, 0xfe, 0xfd, 0x00, 0x11, 0x22 };

		if (write(fd, junk, sizeof(junk)) != (ssize_t)sizeof(junk))
			printf("# short write\n");
		close(fd);
	}
	nl_tap_check(nl_swf_load(&t, p, err, sizeof(err)) != 0 && t == NULL, "test_corrupt_gzip_rejected");
	unlink(p);
}

/* Random mutations of a valid trace: the reader returns 0 or -EINVAL with a line number,
 * never crashes (ASan), never leaks. */
static void
test_mutated_input_is_accepted_or_refused_cleanly(unsigned long seed)
{
	size_t len = strlen(hdr_text);
	char *buf = malloc(len + 1);
	unsigned int bad = 0, refused = 0;
	unsigned long x = seed * 2654435761ul + 1;

	for (int it = 0; it < 2000 && buf != NULL; it++) {
		struct nl_swf *t = NULL;
		char err[NL_SWF_ERR_LEN] = "";
		int rc;

		memcpy(buf, hdr_text, len + 1);
		for (int k = 0; k < 1 + it % 4; k++) {
			x = x * 6364136223846793005ul + 1442695040888963407ul;
			size_t pos = (size_t)(x >> 33) % len;
			char c = (char)(1 + (x >> 20) % 127);

			buf[pos] = c;
		}
		rc = nl_swf_load_string(&t, "m", buf, err, sizeof(err));
		if (rc == -EINVAL) {
			refused++;
			if (strncmp(err, "m:", 2) != 0 || t != NULL)
				bad++;
		} else if (rc != 0 || t == NULL) {
			bad++;
		}
		nl_swf_free(t);
	}
	free(buf);
	printf("# mutation seed %lu: %u of 2000 refused\n", seed, refused);
	nl_tap_check(bad == 0 && refused > 0, "test_mutated_input_is_accepted_or_refused_cleanly");
}

static void
test_kth_trace_header_and_jobs(void)
{
	const char *root = getenv("NL_SRC_ROOT");
	char path[4096], err[NL_SWF_ERR_LEN] = "";
	struct nl_swf *t = NULL;

	snprintf(path, sizeof(path), "%s/../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz",
		 root != NULL ? root : ".");
	if (access(path, R_OK) != 0) {
		nl_tap_skip("test_kth_trace", "trace absent (%s)", path);
		return;
	}
	int rc = nl_swf_load(&t, path, err, sizeof(err));

	nl_tap_check(rc == 0, "test_kth_trace_loads");
	if (rc != 0) {
		printf("# %s\n", err);
		return;
	}
	const char *note = nl_swf_header_get(t, "Note");

	nl_tap_check(t->n_job == 28476 && nl_swf_header_int(t, "MaxRecords") == 28476 &&
		   nl_swf_header_int(t, "MaxJobs") == 28490 && nl_swf_header_int(t, "MaxProcs") == 100 &&
		   t->job[0].id == 15,
	   "test_kth_counts_match_header");
	nl_tap_check(note != NULL && strstr(note, "EASY") != NULL, "test_kth_note_easy");
	nl_tap_check(strstr(nl_swf_header_get(t, "Information"), "\nhttp://www.cs.huji.ac.il") != NULL,
	   "test_kth_information_continuation");
	size_t kept = 0;

	for (size_t i = 0; i < t->n_job; i++) {
		struct nl_swf_rigid r;

		kept += nl_swf_rigid(&t->job[i], NULL, &r) == NL_SWF_KEEP;
	}
	nl_tap_check(kept == 28475, "test_kth_one_job_without_processors_dropped");
	nl_swf_free(t);
}

/* Copy the first `keep` bytes of src to dst, with byte `flip_at` (if < keep) inverted. */
static int
copy_cut(const char *src, const char *dst, long keep, long flip_at)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	int c, rc = 0;

	if (in == NULL || out == NULL)
		rc = -1;
	for (long i = 0; rc == 0 && i < keep && (c = fgetc(in)) != EOF; i++)
		fputc(i == flip_at ? c ^ 0xff : c, out);
	if (in != NULL)
		fclose(in);
	if (out != NULL)
		fclose(out);
	return rc;
}

/* A truncated .gz, one without its CRC/length trailer and a corrupt one are refused as such
 * (zlib's verdict), never read as a shorter trace or a field-count error. */
static void
test_truncated_and_corrupt_gzip_are_refused(void)
{
	struct nl_swf *g = NULL, *r = NULL;
	struct nl_swf_job j;
	char err[NL_SWF_ERR_LEN] = "", p[64], gz[80], bad[96];
	long size = 0;
	int fd;

	snprintf(p, sizeof(p), "/tmp/nl_swf_gz_XXXXXX");
	fd = mkstemp(p);
	if (fd >= 0)
		close(fd);
	snprintf(gz, sizeof(gz), "%s.gz", p);
	snprintf(bad, sizeof(bad), "%s.bad.gz", p);
	nl_swf_new(&g);
	nl_swf_header_set(g, "MaxProcs", "64");
	for (unsigned int i = 0; i < 5000; i++) {
		nl_swf_job_init(&j);
		j.id = i + 1;
		j.submit_s = i * 17 + (i * 7919) % 13;
		j.wait_s = (i * 31) % 1000;
		j.run_s = 1 + (i * 104729) % 86400;
		j.alloc_procs = 1 + (i * 13) % 64;
		j.req_procs = j.alloc_procs;
		j.req_time_s = j.run_s * 2;
		j.status = 1;
		nl_swf_append(g, &j);
	}
	nl_tap_check(nl_swf_write(g, gz) == 0, "test_gz_written");
	FILE *f = fopen(gz, "rb");

	if (f != NULL) {
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		fclose(f);
	}
	nl_tap_check(size > 1000 && nl_swf_load(&r, gz, err, sizeof(err)) == 0 && r->n_job == 5000,
	   "test_gz_whole_reads_back");
	nl_swf_free(r);
	r = NULL;
	copy_cut(gz, bad, size / 2, -1);
	nl_tap_check(nl_swf_load(&r, bad, err, sizeof(err)) != 0 && r == NULL &&
		   strstr(err, "truncated compressed file") != NULL,
	   "test_gz_truncated_half_refused_as_truncated");
	printf("# %s\n", err);
	nl_swf_free(r);
	r = NULL;
	copy_cut(gz, bad, size - 8, -1);
	nl_tap_check(nl_swf_load(&r, bad, err, sizeof(err)) != 0 && r == NULL &&
		   strstr(err, "truncated compressed file") != NULL,
	   "test_gz_without_trailer_refused_as_truncated");
	printf("# %s\n", err);
	nl_swf_free(r);
	r = NULL;
	copy_cut(gz, bad, size, size / 2);
	nl_tap_check(nl_swf_load(&r, bad, err, sizeof(err)) != 0 && r == NULL &&
		   (strstr(err, "corrupt compressed") != NULL ||
		    strstr(err, "truncated compressed file") != NULL),
	   "test_gz_corrupt_refused_as_corrupt");
	printf("# %s\n", err);
	nl_swf_free(r);
	unlink(p);
	unlink(gz);
	unlink(bad);
	nl_swf_free(g);
}

int
main(void)
{
	test_header_forms_are_parsed();
	test_minus_one_cases_follow_filter_rules();
	test_round_trip_plain_and_gzip();
	test_round_trip_of_what_the_fuzzer_found();
	test_truncated_and_corrupt_gzip_are_refused();
	test_malformed_lines_name_their_line();
	test_mutated_input_is_accepted_or_refused_cleanly(
		getenv("NL_TEST_SEED") ? strtoul(getenv("NL_TEST_SEED"), NULL, 0) : 1);
	test_kth_trace_header_and_jobs();
	return nl_tap_done();
}
