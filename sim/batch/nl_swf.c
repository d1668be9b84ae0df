/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SWF v2.2 reader and writer. Lines come either from zlib (gzopen reads plain files
 * transparently) or from a string; each is parsed as a header comment or a job record.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

#include "nl_swf.h"

#define LINE_MAX_BYTES 65536u

struct src {
	gzFile gz;        /* file input, or NULL */
	const char *text; /* string input */
	const char *name;
	unsigned long line;
	char *err;
	size_t err_len;
};

static char *
xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	if (d != NULL)
		memcpy(d, s, n);
	return d;
}

static int
src_error(struct src *s, const char *fmt, ...)
{
	va_list ap;
	size_t off;

	if (s->err == NULL || s->err_len == 0)
		return -EINVAL;
	if (s->line > 0)
		snprintf(s->err, s->err_len, "%s:%lu: ", s->name, s->line);
	else
		snprintf(s->err, s->err_len, "%s: ", s->name);
	off = strlen(s->err);
	va_start(ap, fmt);
	vsnprintf(s->err + off, s->err_len - off, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Next line into buf (without '\n' / '\r'). 1 = a line, 0 = end, <0 = error. */
static int
src_next(struct src *s, char *buf, size_t cap)
{
	size_t n;

	if (s->gz != NULL) {
		char *got = gzgets(s->gz, buf, (int)cap);
		int zerr;
		const char *m = gzerror(s->gz, &zerr);
		size_t nl_ = strlen(s->name);

		if (strncmp(m, s->name, nl_) == 0 && strncmp(m + nl_, ": ", 2) == 0)
			m += nl_ + 2; /* zlib prefixes the path we print already */

		/* zlib reports a gzip stream that ends early (truncated, or without its
		 * CRC/length trailer) as Z_BUF_ERROR "unexpected end of file", and a corrupt one
		 * as Z_DATA_ERROR; the partial line before it is not a record */
		if (zerr == Z_BUF_ERROR) {
			s->line++;
			return src_error(s, "truncated compressed file: the gzip stream ends early "
					    "(zlib: %s)", m);
		}
		if (zerr != Z_OK) {
			s->line++;
			return src_error(s, "%s compressed data (zlib: %s)",
					 zerr == Z_DATA_ERROR ? "corrupt" : "unreadable", m);
		}
		if (got == NULL)
			return 0;
		n = strlen(buf);
		s->line++;
		if (n == cap - 1 && buf[n - 1] != '\n' && !gzeof(s->gz))
			return src_error(s, "line longer than %u bytes", LINE_MAX_BYTES - 2);
	} else {
		const char *nl;

		if (*s->text == '\0')
			return 0;
		nl = strchr(s->text, '\n');
		n = nl != NULL ? (size_t)(nl - s->text) : strlen(s->text);
		s->line++;
		if (n >= cap - 1)
			return src_error(s, "line longer than %u bytes", LINE_MAX_BYTES - 2);
		memcpy(buf, s->text, n);
		buf[n] = '\0';
		s->text += n + (nl != NULL);
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	if (memchr(buf, '\r', n) != NULL) /* else a CR-only file reads as one comment line */
		return src_error(s, "carriage return inside a line: a file with CR-only (old Mac) "
				    "line ends? convert it with tr '\\r' '\\n'");
	return 1;
}

void
nl_swf_job_init(struct nl_swf_job *j)
{
	j->id = j->submit_s = j->wait_s = j->run_s = j->alloc_procs = -1;
	j->avg_cpu_s = j->used_mem_kb = -1;
	j->req_procs = j->req_time_s = -1;
	j->req_mem_kb = -1;
	j->status = j->user = j->group = j->exe = j->queue = j->partition = -1;
	j->prev_job = j->think_s = -1;
}

int
nl_swf_new(struct nl_swf **out)
{
	*out = calloc(1, sizeof(**out));
	return *out == NULL ? -ENOMEM : 0;
}

void
nl_swf_free(struct nl_swf *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n_hdr; i++) {
		free(t->hdr[i].key);
		free(t->hdr[i].value);
	}
	free(t->hdr);
	free(t->job);
	free(t);
}

int
nl_swf_append(struct nl_swf *t, const struct nl_swf_job *j)
{
	if (t->n_job == t->cap_job) {
		size_t cap = t->cap_job ? 2 * t->cap_job : 1024;
		struct nl_swf_job *p = realloc(t->job, cap * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		t->job = p;
		t->cap_job = cap;
	}
	t->job[t->n_job++] = *j;
	return 0;
}

static int
hdr_push(struct nl_swf *t, const char *key, const char *value)
{
	struct nl_swf_hdr *h;

	if (t->n_hdr == t->cap_hdr) {
		size_t cap = t->cap_hdr ? 2 * t->cap_hdr : 32;
		struct nl_swf_hdr *p = realloc(t->hdr, cap * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		t->hdr = p;
		t->cap_hdr = cap;
	}
	h = &t->hdr[t->n_hdr];
	h->key = key != NULL ? xstrdup(key) : NULL;
	h->value = xstrdup(value);
	if ((key != NULL && h->key == NULL) || h->value == NULL) {
		free(h->key);
		free(h->value);
		return -ENOMEM;
	}
	t->n_hdr++;
	return 0;
}

static bool
key_ok(const char *k, size_t n)
{
	if (n == 0 || !isalpha((unsigned char)k[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)k[i]))
			return false;
	return true;
}

int
nl_swf_header_set(struct nl_swf *t, const char *key, const char *value)
{
	if (key != NULL) {
		if (!key_ok(key, strlen(key)))
			return -EINVAL;
		for (size_t i = 0; i < t->n_hdr; i++) {
			if (t->hdr[i].key != NULL && strcmp(t->hdr[i].key, key) == 0) {
				char *v = xstrdup(value);

				if (v == NULL)
					return -ENOMEM;
				free(t->hdr[i].value);
				t->hdr[i].value = v;
				return 0;
			}
		}
	}
	return hdr_push(t, key, value);
}

const char *
nl_swf_header_get(const struct nl_swf *t, const char *key)
{
	for (size_t i = 0; i < t->n_hdr; i++)
		if (t->hdr[i].key != NULL && strcmp(t->hdr[i].key, key) == 0)
			return t->hdr[i].value;
	return NULL;
}

int64_t
nl_swf_header_int(const struct nl_swf *t, const char *key)
{
	const char *v = nl_swf_header_get(t, key);
	char *end;
	long long x;

	if (v == NULL)
		return -1;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (end == v || errno != 0)
		return -1;
	return x;
}

/* Append a continuation line to the last keyed entry. */
static int
hdr_continue(struct nl_swf *t, const char *text)
{
	struct nl_swf_hdr *h = &t->hdr[t->n_hdr - 1];
	size_t a = strlen(h->value), b = strlen(text);
	char *v = realloc(h->value, a + b + 2);

	if (v == NULL)
		return -ENOMEM;
	v[a] = '\n';
	memcpy(v + a + 1, text, b + 1);
	h->value = v;
	return 0;
}

/* The text of a comment line after its ';': how many blanks (spaces, tabs) lead it, and
 * whether it would continue a keyed entry just before it (two or more blanks or a tab, then
 * something other than white space). Only white space after the ';' is a bare ';'. */
struct indent {
	size_t blanks;
	bool bare;
	bool continues;
};

static struct indent
comment_indent(const char *p)
{
	struct indent in = { 0, true, false };
	bool tab = false;
	const char *r;

	while (p[in.blanks] == ' ' || p[in.blanks] == '\t') {
		tab |= p[in.blanks] == '\t';
		in.blanks++;
	}
	for (r = p + in.blanks; *r != '\0' && in.bare; r++)
		in.bare = isspace((unsigned char)*r);
	in.continues = !in.bare && (in.blanks >= 2 || tab);
	return in;
}

/* One header line (starting with ';'). *cont: the last entry is a key that may continue. */
static int
parse_comment(struct nl_swf *t, const char *line, bool *cont)
{
	const char *p = line + 1, *q;
	struct indent in = comment_indent(p);

	q = p + in.blanks;
	if (in.bare) { /* bare ';' (or only white space: \v, \f, \r) */
		*cont = false;
		return hdr_push(t, NULL, p);
	}
	if (*cont && in.continues) {
		size_t n = strlen(q);
		char tmp[LINE_MAX_BYTES];

		memcpy(tmp, q, n + 1);
		while (n > 0 && isspace((unsigned char)tmp[n - 1]))
			tmp[--n] = '\0';
		return hdr_continue(t, tmp);
	}
	const char *colon = strchr(q, ':');

	if (colon != NULL && key_ok(q, (size_t)(colon - q))) {
		char key[256], val[LINE_MAX_BYTES];
		size_t kn = (size_t)(colon - q), vn;
		const char *v = colon + 1;

		if (kn < sizeof(key)) {
			memcpy(key, q, kn);
			key[kn] = '\0';
			while (*v == ' ' || *v == '\t')
				v++;
			vn = strlen(v);
			memcpy(val, v, vn + 1);
			while (vn > 0 && isspace((unsigned char)val[vn - 1]))
				val[--vn] = '\0';
			*cont = true;
			return hdr_push(t, key, val);
		}
	}
	*cont = false;
	return hdr_push(t, NULL, p);
}

static const char *const field_name[NL_SWF_FIELDS] = {
	"job number",       "submit time",     "wait time",       "run time",
	"allocated procs",  "average CPU time", "used memory",    "requested procs",
	"requested time",   "requested memory", "status",         "user id",
	"group id",         "executable",      "queue",           "partition",
	"preceding job",    "think time",
};

static int
parse_job(struct src *s, char *line, struct nl_swf_job *j)
{
	double v[NL_SWF_FIELDS];
	unsigned int n = 0;
	char *p = line;

	for (;;) {
		char *end;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		if (n == NL_SWF_FIELDS) {
			unsigned int extra = n;

			while (*p != '\0') {
				while (*p != '\0' && *p != ' ' && *p != '\t')
					p++;
				while (*p == ' ' || *p == '\t')
					p++;
				extra++;
			}
			return src_error(s, "expected %u fields, found %u", NL_SWF_FIELDS, extra);
		}
		errno = 0;
		v[n] = strtod(p, &end);
		if (end == p || (*end != '\0' && *end != ' ' && *end != '\t') || errno == ERANGE ||
		    !isfinite(v[n])) {
			char tok[32];
			size_t k = 0;

			while (p[k] != '\0' && p[k] != ' ' && p[k] != '\t' && k < sizeof(tok) - 1) {
				tok[k] = p[k];
				k++;
			}
			tok[k] = '\0';
			return src_error(s, "field %u (%s): '%s' is not a number", n + 1,
					 field_name[n], tok);
		}
		/* integer fields: all but 6, 7 and 10 (1-based) */
		if (n != 5 && n != 6 && n != 9 && v[n] != floor(v[n]))
			return src_error(s, "field %u (%s): '%.*s' is not an integer", n + 1,
					 field_name[n], (int)(end - p), p);
		if (n != 5 && n != 6 && n != 9 && fabs(v[n]) > 9.0e18)
			return src_error(s, "field %u (%s): '%.*s' is out of range (|value| <= 9e18)",
					 n + 1, field_name[n], (int)(end - p), p);
		p = end;
		n++;
	}
	if (n != NL_SWF_FIELDS)
		return src_error(s, "expected %u fields, found %u", NL_SWF_FIELDS, n);
	j->id = (int64_t)v[0];
	j->submit_s = (int64_t)v[1];
	j->wait_s = (int64_t)v[2];
	j->run_s = (int64_t)v[3];
	j->alloc_procs = (int64_t)v[4];
	j->avg_cpu_s = v[5];
	j->used_mem_kb = v[6];
	j->req_procs = (int64_t)v[7];
	j->req_time_s = (int64_t)v[8];
	j->req_mem_kb = v[9];
	j->status = (int64_t)v[10];
	j->user = (int64_t)v[11];
	j->group = (int64_t)v[12];
	j->exe = (int64_t)v[13];
	j->queue = (int64_t)v[14];
	j->partition = (int64_t)v[15];
	j->prev_job = (int64_t)v[16];
	j->think_s = (int64_t)v[17];
	return 0;
}

static int
load(struct src *s, struct nl_swf **out)
{
	struct nl_swf *t = NULL;
	char *buf = malloc(LINE_MAX_BYTES);
	bool cont = false;
	int rc;

	*out = NULL;
	if (buf == NULL || nl_swf_new(&t) != 0) {
		free(buf);
		return -ENOMEM;
	}
	while ((rc = src_next(s, buf, LINE_MAX_BYTES)) > 0) {
		const char *p = buf;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0') {
			cont = false;
			continue;
		}
		if (*p == ';') {
			rc = parse_comment(t, p, &cont);
		} else {
			struct nl_swf_job j;

			cont = false;
			rc = parse_job(s, buf, &j);
			if (rc == 0)
				rc = nl_swf_append(t, &j);
		}
		if (rc != 0) {
			if (rc == -ENOMEM)
				src_error(s, "out of memory");
			break;
		}
	}
	free(buf);
	if (rc < 0) {
		nl_swf_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int
nl_swf_load(struct nl_swf **out, const char *path, char *err, size_t len)
{
	struct src s = { .name = path, .err = err, .err_len = len };
	struct stat st = { 0 };
	int rc;

	*out = NULL;
	errno = 0;
	s.gz = stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? NULL : gzopen(path, "rb");
	if (s.gz == NULL) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : errno != 0 ? -errno : -ENOMEM;
		if (err != NULL && len > 0)
			snprintf(err, len, "%s: cannot open: %s", path, strerror(-rc));
		return rc;
	}
	gzbuffer(s.gz, 1u << 17);
	rc = load(&s, out);
	if (rc == -EINVAL && err != NULL && strstr(err, "compressed") == NULL) {
		/* A corrupt gzip stream is only certain at its CRC check, at the end: a bad line
		 * in the middle may be the first symptom. Read on; if zlib objects, say so. */
		static char sink[1 << 16];
		int zerr = Z_OK;

		while (gzread(s.gz, sink, sizeof(sink)) > 0)
			;
		const char *m = gzerror(s.gz, &zerr);
		size_t pl = strlen(path);

		if (strncmp(m, path, pl) == 0 && strncmp(m + pl, ": ", 2) == 0)
			m += pl + 2;
		if (zerr == Z_DATA_ERROR || zerr == Z_BUF_ERROR) {
			char first[NL_SWF_ERR_LEN];

			snprintf(first, sizeof(first), "%s", err);
			snprintf(err, len, "%s: %s compressed file (zlib: %s); the first line that "
					   "did not parse: %s",
				 path, zerr == Z_DATA_ERROR ? "corrupt" : "truncated", m, first);
		}
	}
	if (gzclose(s.gz) == Z_BUF_ERROR && rc == 0) {
		/* the last read ended inside a gzip stream (belt and braces: src_next sees it) */
		if (err != NULL && len > 0)
			snprintf(err, len, "%s: truncated compressed file: the gzip stream ends early",
				 path);
		nl_swf_free(*out);
		*out = NULL;
		rc = -EINVAL;
	}
	return rc;
}

int
nl_swf_load_string(struct nl_swf **out, const char *name, const char *text, char *err,
		   size_t len)
{
	struct src s = { .text = text, .name = name, .err = err, .err_len = len };

	return load(&s, out);
}

/* ---- writer ---- */

struct sink {
	FILE *f;
	gzFile gz;
	bool bad;
};

/* Format and write; a line longer than the stack buffer (header lines reach 64 KiB) is
 * formatted again into one of its size, never cut. */
static void
sink_printf(struct sink *k, const char *fmt, ...)
{
	char small[1024], *buf = small;
	va_list ap, again;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n >= sizeof(small)) {
		buf = malloc((size_t)n + 1);
		n = buf != NULL ? vsnprintf(buf, (size_t)n + 1, fmt, again) : -1;
	}
	va_end(again);
	if (n < 0)
		k->bad = true;
	else if (k->gz != NULL)
		k->bad |= gzwrite(k->gz, buf, (unsigned int)n) != n;
	else
		k->bad |= fwrite(buf, 1, (size_t)n, k->f) != (size_t)n;
	if (buf != small)
		free(buf);
}

/* A fractional field (6, 7, 10): an integral value as an integer, else the shortest of
 * %.15g / %.17g that reads back as the same double (round trip). */
static void
sink_num(struct sink *k, double v, int width)
{
	char b[40];

	if (v == floor(v) && fabs(v) < 9.0e15) {
		sink_printf(k, " %*lld", width, (long long)v);
		return;
	}
	snprintf(b, sizeof(b), "%.15g", v);
	if (strtod(b, NULL) != v)
		snprintf(b, sizeof(b), "%.17g", v);
	sink_printf(k, " %*s", width, b);
}

/* An integer field: every digit (the reader takes integers up to 9e18). */
static void
sink_int(struct sink *k, int64_t v, int width)
{
	sink_printf(k, " %*lld", width, (long long)v);
}

static int
write_all(const struct nl_swf *t, struct sink *k)
{
	for (size_t i = 0; i < t->n_hdr; i++) {
		const struct nl_swf_hdr *h = &t->hdr[i];

		if (h->key == NULL) {
			/* after a keyed entry, an empty line keeps an indented comment a comment */
			if (i > 0 && t->hdr[i - 1].key != NULL && comment_indent(h->value).continues)
				sink_printf(k, "\n");
			sink_printf(k, ";%s\n", h->value);
			continue;
		}
		const char *v = h->value, *nl;
		int pad = (int)strlen(h->key) + 3;

		nl = strchr(v, '\n');
		sink_printf(k, "; %s: %.*s\n", h->key, (int)(nl ? nl - v : (long)strlen(v)), v);
		while (nl != NULL) {
			v = nl + 1;
			nl = strchr(v, '\n');
			sink_printf(k, ";%*s%.*s\n", pad < 2 ? 2 : pad, "",
				    (int)(nl ? nl - v : (long)strlen(v)), v);
		}
	}
	for (size_t i = 0; i < t->n_job && !k->bad; i++) {
		const struct nl_swf_job *j = &t->job[i];

		sink_printf(k, "%5lld", (long long)j->id);
		sink_int(k, j->submit_s, 8);
		sink_int(k, j->wait_s, 6);
		sink_int(k, j->run_s, 6);
		sink_int(k, j->alloc_procs, 4);
		sink_num(k, j->avg_cpu_s, 6);
		sink_num(k, j->used_mem_kb, 5);
		sink_int(k, j->req_procs, 4);
		sink_int(k, j->req_time_s, 6);
		sink_num(k, j->req_mem_kb, 5);
		sink_int(k, j->status, 2);
		sink_int(k, j->user, 3);
		sink_int(k, j->group, 3);
		sink_int(k, j->exe, 3);
		sink_int(k, j->queue, 2);
		sink_int(k, j->partition, 2);
		sink_int(k, j->prev_job, 2);
		sink_int(k, j->think_s, 2);
		sink_printf(k, "\n");
	}
	return k->bad ? -EIO : 0;
}

int
nl_swf_write_file(const struct nl_swf *t, FILE *f)
{
	struct sink k = { .f = f };

	return write_all(t, &k);
}

int
nl_swf_write(const struct nl_swf *t, const char *path)
{
	size_t n = strlen(path);
	int rc;

	if (n > 3 && strcmp(path + n - 3, ".gz") == 0) {
		struct sink k = { 0 };

		k.gz = gzopen(path, "wb6");
		if (k.gz == NULL)
			return errno != 0 ? -errno : -ENOMEM;
		rc = write_all(t, &k);
		if (gzclose(k.gz) != Z_OK && rc == 0)
			rc = -EIO;
		return rc;
	}
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -errno;
	rc = nl_swf_write_file(t, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	return rc;
}

/* ---- filtering ---- */

const char *
nl_swf_drop_name(enum nl_swf_drop d)
{
	static const char *const names[NL_SWF_DROP__COUNT] = {
		"kept", "no_runtime", "no_procs", "cancelled", "zero_run", "too_wide",
		"no_submit", "partial",
	};

	return (unsigned int)d < NL_SWF_DROP__COUNT ? names[d] : "?";
}

void
nl_swf_drops_fprint(FILE *f, const size_t *drops, const char *sep)
{
	for (int d = 1; d < (int)NL_SWF_DROP__COUNT; d++)
		if (drops[d] != 0)
			fprintf(f, "%s%s %zu", sep, nl_swf_drop_name((enum nl_swf_drop)d), drops[d]);
}

enum nl_swf_drop
nl_swf_rigid(const struct nl_swf_job *j, const struct nl_swf_filter *f,
	     struct nl_swf_rigid *out)
{
	static const struct nl_swf_filter def;
	int64_t procs, run, est;

	if (f == NULL)
		f = &def;
	if (j->submit_s < 0)
		return NL_SWF_DROP_NO_SUBMIT;
	if (j->run_s < 0)
		return NL_SWF_DROP_NO_RUNTIME;
	if (j->status == NL_SWF_STATUS_CANCELLED && (j->run_s <= 0 || f->drop_cancelled))
		return NL_SWF_DROP_CANCELLED;
	if (j->status == NL_SWF_STATUS_PARTIAL || j->status == NL_SWF_STATUS_LAST_OK ||
	    j->status == NL_SWF_STATUS_LAST_FAIL)
		return NL_SWF_DROP_PARTIAL;
	switch (f->procs_src) {
	case NL_SWF_PROCS_ALLOCATED:
		procs = j->alloc_procs > 0 ? j->alloc_procs : j->req_procs;
		break;
	case NL_SWF_PROCS_MAX:
		procs = j->alloc_procs > j->req_procs ? j->alloc_procs : j->req_procs;
		break;
	default:
		procs = j->req_procs > 0 ? j->req_procs : j->alloc_procs;
		break;
	}
	if (procs <= 0)
		return NL_SWF_DROP_NO_PROCS;
	if (f->max_procs > 0 && procs > f->max_procs)
		return NL_SWF_DROP_TOO_WIDE;
	run = j->run_s;
	if (run == 0 && f->drop_zero_run)
		return NL_SWF_DROP_ZERO_RUN;
	est = j->req_time_s > 0 && !f->exact_estimates ? j->req_time_s : run;
	if (run > est) {
		if (f->overrun == NL_SWF_OVERRUN_KILL)
			run = est;
		else
			est = run;
	}
	out->procs = procs;
	out->run_s = run;
	out->est_s = est;
	return NL_SWF_KEEP;
}
