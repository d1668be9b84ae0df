/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * INI store on top of libinih. inih does not report line numbers to the handler in Debian's
 * build (INI_HANDLER_LINENO = 0), so we feed it through our own reader, which counts the
 * lines it hands out; the handler runs right after the reader returned its line.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <ini.h>

#include "nl_cfg.h"

struct reader {
	FILE *f;           /* file input, or NULL */
	const char *text;  /* string input */
	unsigned int line; /* line of the chunk last returned */
	bool at_bol;       /* next chunk starts a new line */
	bool too_long;
	struct nl_cfg *cfg;
	int rc;
};

static int add_section(struct nl_cfg *c, const char *name, size_t len, unsigned int line);

/* A `[name]` header at the start of line `s` (what inih takes for one: leading blanks skipped,
 * the name up to the first ']'): register the section, so that one without keys exists too. */
static void
note_header(struct reader *r, const char *s)
{
	const char *end;

	if (r->line == 1 && (unsigned char)s[0] == 0xef && (unsigned char)s[1] == 0xbb &&
	    (unsigned char)s[2] == 0xbf)
		s += 3; /* UTF-8 byte order mark, as inih skips it */
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\f' || *s == '\v')
		s++;
	if (*s != '[' || (end = strchr(s + 1, ']')) == NULL)
		return; /* not a header, or a broken one inih refuses */
	if (r->rc == 0 && add_section(r->cfg, s + 1, (size_t)(end - s - 1), r->line) != 0) {
		r->rc = -ENOMEM;
		snprintf(r->cfg->err, sizeof(r->cfg->err), "%s: out of memory", r->cfg->path);
	}
}

static char *
read_line(char *str, int num, void *stream)
{
	struct reader *r = stream;
	char *s;

	if (r->f != NULL) {
		s = fgets(str, num, r->f);
	} else {
		const char *nl;
		size_t len;

		if (*r->text == '\0')
			return NULL;
		nl = strchr(r->text, '\n');
		len = nl != NULL ? (size_t)(nl - r->text) + 1 : strlen(r->text);
		if (len > (size_t)num - 1)
			len = (size_t)num - 1;
		memcpy(str, r->text, len);
		str[len] = '\0';
		r->text += len;
		s = str;
	}
	if (s == NULL)
		return NULL;
	if (r->at_bol) {
		r->line++;
		note_header(r, s);
	} else {
		r->too_long = true;
	}
	r->at_bol = strchr(s, '\n') != NULL || (r->f != NULL ? feof(r->f) : *r->text == '\0');
	return s;
}

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
find_section(const struct nl_cfg *c, const char *sec)
{
	for (unsigned int i = 0; i < c->n_section; i++)
		if (strcmp(c->section[i], sec) == 0)
			return (int)i;
	return -1;
}

/* Register section name[0..len) first met on `line` (nothing if it is known). @return 0, or
 * -ENOMEM. */
static int
add_section(struct nl_cfg *c, const char *name, size_t len, unsigned int line)
{
	char *n = malloc(len + 1), **sec;
	unsigned int *l;
	bool *rd;

	if (n == NULL)
		return -ENOMEM;
	memcpy(n, name, len);
	n[len] = '\0';
	if (find_section(c, n) >= 0) {
		free(n);
		return 0;
	}
	sec = realloc(c->section, (c->n_section + 1) * sizeof(*sec));
	if (sec != NULL)
		c->section = sec;
	l = realloc(c->section_line, (c->n_section + 1) * sizeof(*l));
	if (l != NULL)
		c->section_line = l;
	rd = realloc(c->section_read, (c->n_section + 1) * sizeof(*rd));
	if (rd != NULL)
		c->section_read = rd;
	if (sec == NULL || l == NULL || rd == NULL) {
		free(n);
		return -ENOMEM;
	}
	c->section[c->n_section] = n;
	c->section_line[c->n_section] = line;
	c->section_read[c->n_section] = false;
	c->n_section++;
	return 0;
}

static int
on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct reader *r = user;
	struct nl_cfg *c = r->cfg;
	int rc;

	if (r->rc != 0)
		return 0;
	if (r->too_long) {
		snprintf(c->err, sizeof(c->err), "%s:%u: line longer than %d characters", c->path,
			 r->line, INI_MAX_LINE - 2);
		r->rc = -EINVAL;
		return 0;
	}
	if (section[0] == '\0') {
		snprintf(c->err, sizeof(c->err), "%s:%u: key '%s' outside any [section]", c->path,
			 r->line, name);
		r->rc = -EINVAL;
		return 0;
	}
	/* `#` after a value, preceded by a blank, starts a comment as `;` does (libinih, as
	 * Debian builds it, strips only `;`) */
	char val[INI_MAX_LINE];
	size_t vl = 0;

	for (const char *h = value; *h != '\0' && vl + 1 < sizeof(val); h++) {
		if (*h == '#' && vl > 0 && (val[vl - 1] == ' ' || val[vl - 1] == '\t'))
			break;
		val[vl++] = *h;
	}
	while (vl > 0 && (val[vl - 1] == ' ' || val[vl - 1] == '\t'))
		vl--;
	val[vl] = '\0';
	rc = nl_cfg_add(c, section, name, val, r->line);
	if (rc == -ENOMEM)
		goto nomem;
	if (rc != 0) {
		r->rc = rc;
		return 0;
	}
	return 1;
nomem:
	r->rc = -ENOMEM;
	snprintf(c->err, sizeof(c->err), "%s: out of memory", c->path);
	return 0;
}

int
nl_cfg_add(struct nl_cfg *c, const char *section, const char *key, const char *value,
	   unsigned int line)
{
	struct nl_cfg_entry *e;

	for (unsigned int i = 0; i < c->n_entry; i++) {
		if (strcmp(c->entry[i].section, section) == 0 && strcmp(c->entry[i].key, key) == 0) {
			snprintf(c->err, sizeof(c->err),
				 "%s:%u: [%s] %s: duplicate key (first set on line %u)", c->path,
				 line, section, key, c->entry[i].line);
			return -EINVAL;
		}
	}
	e = realloc(c->entry, (c->n_entry + 1) * sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	c->entry = e;
	e = &c->entry[c->n_entry];
	e->section = xstrdup(section);
	e->key = xstrdup(key);
	e->value = xstrdup(value);
	e->line = line;
	e->used = false;
	c->n_entry++;
	if (e->section == NULL || e->key == NULL || e->value == NULL)
		return -ENOMEM;
	return add_section(c, section, strlen(section), line);
}

int
nl_cfg_new(struct nl_cfg **out, const char *name)
{
	struct nl_cfg *c = calloc(1, sizeof(*c));

	if (c == NULL || (c->path = xstrdup(name)) == NULL) {
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

static int
load(struct nl_cfg **out, const char *name, FILE *f, const char *text, char *err, size_t len)
{
	struct nl_cfg *c = calloc(1, sizeof(*c));
	struct reader r = { .f = f, .text = text, .at_bol = true };
	int rc;

	if (c == NULL || (c->path = xstrdup(name)) == NULL) {
		free(c);
		return -ENOMEM;
	}
	r.cfg = c;
	rc = ini_parse_stream(read_line, &r, on_entry, &r);
	if (r.rc == 0 && rc > 0) {
		snprintf(c->err, sizeof(c->err), "%s:%d: syntax error (expected [section] or key = value)",
			 name, rc);
		r.rc = -EINVAL;
	}
	if (r.rc == 0 && r.too_long) {
		snprintf(c->err, sizeof(c->err), "%s: a line is longer than %d characters", name,
			 INI_MAX_LINE - 2);
		r.rc = -EINVAL;
	}
	if (r.rc != 0) {
		if (err != NULL && len > 0)
			snprintf(err, len, "%s", c->err);
		nl_cfg_free(c);
		return r.rc;
	}
	*out = c;
	return 0;
}

int
nl_cfg_load(struct nl_cfg **out, const char *path, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	struct stat st;
	int rc;

	if (f != NULL && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f); /* fopen() takes a folder; reading it fails as if it were empty */
		f = NULL;
		errno = EISDIR;
	}
	if (f == NULL) {
		rc = -errno;
		if (err != NULL && len > 0)
			snprintf(err, len, "%s: cannot open: %s", path, strerror(-rc));
		return rc;
	}
	rc = load(out, path, f, NULL, err, len);
	fclose(f);
	return rc;
}

int
nl_cfg_load_string(struct nl_cfg **out, const char *name, const char *text, char *err, size_t len)
{
	return load(out, name, NULL, text, err, len);
}

void
nl_cfg_free(struct nl_cfg *c)
{
	if (c == NULL)
		return;
	for (unsigned int i = 0; i < c->n_entry; i++) {
		free(c->entry[i].section);
		free(c->entry[i].key);
		free(c->entry[i].value);
	}
	for (unsigned int i = 0; i < c->n_section; i++)
		free(c->section[i]);
	free(c->entry);
	free(c->section);
	free(c->section_line);
	free(c->section_read);
	free(c->path);
	free(c);
}

bool
nl_cfg_has_section(const struct nl_cfg *c, const char *sec)
{
	int i = find_section(c, sec);

	if (i < 0)
		return false;
	c->section_read[i] = true; /* the flags, not the store, change */
	return true;
}

int
nl_cfg_require_section(struct nl_cfg *c, const char *sec)
{
	if (nl_cfg_has_section(c, sec))
		return 0;
	snprintf(c->err, sizeof(c->err), "%s: missing section [%s]", c->path, sec);
	return -EINVAL;
}

const struct nl_cfg_entry *
nl_cfg_find(struct nl_cfg *c, const char *sec, const char *key)
{
	(void)nl_cfg_has_section(c, sec); /* a section asked for is a known one */
	for (unsigned int i = 0; i < c->n_entry; i++) {
		if (strcmp(c->entry[i].section, sec) == 0 && strcmp(c->entry[i].key, key) == 0) {
			c->entry[i].used = true;
			return &c->entry[i];
		}
	}
	return NULL;
}

int
nl_cfg_set_value(struct nl_cfg *c, const char *sec, const char *key, const char *value)
{
	for (unsigned int i = 0; i < c->n_entry; i++) {
		struct nl_cfg_entry *e = &c->entry[i];

		if (strcmp(e->section, sec) == 0 && strcmp(e->key, key) == 0) {
			char *v = xstrdup(value);

			if (v == NULL)
				return -ENOMEM;
			free(e->value);
			e->value = v;
			return 0;
		}
	}
	return -ENOENT;
}

int
nl_cfg_error(struct nl_cfg *c, const struct nl_cfg_entry *e, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->err, sizeof(c->err), "%s:%u: [%s] %s: ", c->path, e->line, e->section,
			 e->key);

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(c->err))
		vsnprintf(c->err + n, sizeof(c->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Optimal string alignment distance (edits: insert, delete, substitute, swap), capped at 9. */
static unsigned int
edit_distance(const char *a, const char *b)
{
	enum { MAXL = 48 };
	unsigned int d[MAXL + 1][MAXL + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > MAXL || lb > MAXL)
		return 9;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned int cost = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb] < 9 ? d[la][lb] : 9;
}

static int
missing(struct nl_cfg *c, const char *sec, const char *key, bool required)
{
	const struct nl_cfg_entry *typo = NULL;
	unsigned int line = 0, best = 3;

	if (!required)
		return 0;
	for (unsigned int i = 0; i < c->n_section; i++)
		if (strcmp(c->section[i], sec) == 0)
			line = c->section_line[i];
	/* an unread key of the same section a few edits away is the likely misspelling */
	for (unsigned int i = 0; i < c->n_entry; i++) {
		const struct nl_cfg_entry *e = &c->entry[i];
		unsigned int d;

		if (e->used || strcmp(e->section, sec) != 0)
			continue;
		d = edit_distance(e->key, key);
		if (d < best && d <= (strlen(key) + 2) / 3) {
			best = d;
			typo = e;
		}
	}
	if (typo != NULL)
		snprintf(c->err, sizeof(c->err),
			 "%s:%u: unknown key '%s' in [%s] (a misspelling of '%s'?); [%s] %s: "
			 "required key missing", c->path, typo->line, typo->key, sec, key, sec, key);
	else if (line != 0)
		snprintf(c->err, sizeof(c->err), "%s:%u: [%s] %s: required key missing", c->path, line,
			 sec, key);
	else
		snprintf(c->err, sizeof(c->err), "%s: missing section [%s] (needed for key %s)",
			 c->path, sec, key);
	return -EINVAL;
}

static int
parse_real(const char *s, double *out)
{
	char *end;
	double v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0')
		return -EINVAL;
	if (strpbrk(s, "xX") != NULL)
		return -EINVAL; /* strtod's hexadecimal forms (0x60) are no number of ours */
	errno = 0;
	v = strtod(s, &end);
	while (*end == ' ' || *end == '\t')
		end++;
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

/* A non-negative integer: digits exactly (the whole uint64_t range), or a number in another
 * notation (1e6) whose value is an integer up to 2^53 (beyond, a double cannot tell). */
static int
parse_uint(const char *s, uint64_t *out)
{
	const char *d = s;
	double v;

	while (*d == ' ' || *d == '\t')
		d++;
	if (*d >= '0' && *d <= '9' && d[strspn(d, "0123456789")] == '\0') {
		char *end;

		errno = 0;
		*out = strtoull(d, &end, 10);
		return errno == ERANGE ? -EINVAL : 0;
	}
	if (parse_real(s, &v) != 0 || v != floor(v) || v < 0 || v > 9007199254740992.0)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

int
nl_cfg_get_double(struct nl_cfg *c, const char *sec, const char *key, double *out, double min,
		  double max, bool required)
{
	const struct nl_cfg_entry *e = nl_cfg_find(c, sec, key);
	double v;

	if (e == NULL)
		return missing(c, sec, key, required);
	if (parse_real(e->value, &v) != 0)
		return nl_cfg_error(c, e, "'%s' is not a number", e->value);
	if (v < min || v > max)
		return nl_cfg_error(c, e, "%s is out of range [%g, %g]", e->value, min, max);
	*out = v;
	return 1;
}

int
nl_cfg_get_u64(struct nl_cfg *c, const char *sec, const char *key, uint64_t *out, uint64_t min,
	       uint64_t max, bool required)
{
	const struct nl_cfg_entry *e = nl_cfg_find(c, sec, key);
	uint64_t v;

	if (e == NULL)
		return missing(c, sec, key, required);
	if (parse_uint(e->value, &v) != 0)
		return nl_cfg_error(c, e, "'%s' is not a non-negative integer", e->value);
	if (v < min || v > max)
		return nl_cfg_error(c, e, "%s is out of range [%llu, %llu]", e->value,
				    (unsigned long long)min, (unsigned long long)max);
	*out = v;
	return 1;
}

int
nl_cfg_get_bool(struct nl_cfg *c, const char *sec, const char *key, bool *out, bool required)
{
	static const char *const t[] = { "true", "yes", "on", "1" };
	static const char *const f[] = { "false", "no", "off", "0" };
	const struct nl_cfg_entry *e = nl_cfg_find(c, sec, key);

	if (e == NULL)
		return missing(c, sec, key, required);
	for (unsigned int i = 0; i < 4; i++) {
		if (strcasecmp(e->value, t[i]) == 0) {
			*out = true;
			return 1;
		}
		if (strcasecmp(e->value, f[i]) == 0) {
			*out = false;
			return 1;
		}
	}
	return nl_cfg_error(c, e, "'%s' is not a boolean (true/false)", e->value);
}

int
nl_cfg_get_str(struct nl_cfg *c, const char *sec, const char *key, const char **out, bool required)
{
	const struct nl_cfg_entry *e = nl_cfg_find(c, sec, key);

	if (e == NULL)
		return missing(c, sec, key, required);
	if (e->value[0] == '\0')
		return nl_cfg_error(c, e, "empty value");
	*out = e->value;
	return 1;
}

int
nl_cfg_get_enum(struct nl_cfg *c, const char *sec, const char *key, const char *const *names,
		unsigned int *out, bool required)
{
	const struct nl_cfg_entry *e = nl_cfg_find(c, sec, key);
	char list[256] = "";

	if (e == NULL)
		return missing(c, sec, key, required);
	for (unsigned int i = 0; names[i] != NULL; i++) {
		if (strcmp(e->value, names[i]) == 0) {
			*out = i;
			return 1;
		}
		if (strlen(list) + strlen(names[i]) + 3 < sizeof(list)) {
			if (i > 0)
				strcat(list, ", ");
			strcat(list, names[i]);
		}
	}
	return nl_cfg_error(c, e, "'%s' is not one of: %s", e->value, list);
}

int
nl_cfg_get_list(struct nl_cfg *c, const char *sec, const char *key, double *out,
		unsigned int max_n, unsigned int *n, double min, double max, bool required)
{
	const struct nl_cfg_entry *e = nl_cfg_find(c, sec, key);
	char buf[1024], *save = NULL, *tok;
	unsigned int k = 0;

	if (e == NULL)
		return missing(c, sec, key, required);
	if (strlen(e->value) >= sizeof(buf))
		return nl_cfg_error(c, e, "value too long");
	strcpy(buf, e->value);
	/* items between commas; an empty one ("5,,6", "5,") is a typo, not nothing */
	for (tok = buf; tok != NULL; tok = save) {
		char *c1, *comma = strchr(tok, ',');
		double a, b, step;

		save = comma != NULL ? comma + 1 : NULL;
		if (comma != NULL)
			*comma = '\0';
		if (tok[strspn(tok, " \t")] == '\0')
			return nl_cfg_error(c, e, "empty item in the list (two commas, or a comma at an end)");
		c1 = strchr(tok, ':');
		if (c1 == NULL) {
			if (parse_real(tok, &a) != 0)
				return nl_cfg_error(c, e, "'%s' is not a number", tok);
			b = a;
			step = 1;
		} else {
			char *c2 = strchr(c1 + 1, ':');

			if (c2 == NULL || strchr(c2 + 1, ':') != NULL)
				return nl_cfg_error(c, e, "range '%s' must be from:to:step", tok);
			*c1 = '\0';
			*c2 = '\0';
			if (parse_real(tok, &a) != 0 || parse_real(c1 + 1, &b) != 0 ||
			    parse_real(c2 + 1, &step) != 0 || step <= 0 || b < a)
				return nl_cfg_error(c, e, "range must be from:to:step with step > 0 and from <= to");
		}
		if (c1 != NULL && a + step == a)
			return nl_cfg_error(c, e, "range: the step %g is below the precision of %g",
					    step, a);
		/* a single value is the range a:a:1 walked once (a + 1 may equal a: 1e17) */
		for (unsigned int j = 0; j == 0 || (c1 != NULL && a + j * step <= b + 1e-9 * fabs(step));
		     j++) {
			double v = a + j * step;

			if (k >= max_n)
				return nl_cfg_error(c, e, "more than %u values", max_n);
			if (v < min || v > max)
				return nl_cfg_error(c, e, "%g is out of range [%g, %g]", v, min, max);
			out[k++] = v;
		}
	}
	if (k == 0)
		return nl_cfg_error(c, e, "empty list");
	*n = k;
	return 1;
}

int
nl_cfg_check_unused(struct nl_cfg *c)
{
	for (unsigned int i = 0; i < c->n_entry; i++) {
		const struct nl_cfg_entry *e = &c->entry[i];
		int s = find_section(c, e->section);

		if (e->used)
			continue;
		if (s >= 0 && c->section_read[s])
			snprintf(c->err, sizeof(c->err), "%s:%u: unknown key '%s' in [%s]", c->path,
				 e->line, e->key, e->section);
		else
			snprintf(c->err, sizeof(c->err), "%s:%u: unknown section [%s]", c->path,
				 e->line, e->section);
		return -EINVAL;
	}
	/* sections without keys nobody asked for ("[bogus]" alone, a misspelt "[2lcs]") */
	for (unsigned int s = 0; s < c->n_section; s++)
		if (!c->section_read[s]) {
			snprintf(c->err, sizeof(c->err), "%s:%u: unknown section [%s]", c->path,
				 c->section_line[s], c->section[s]);
			return -EINVAL;
		}
	return 0;
}

int
nl_cfg_option_number(const char *prog, const char *opt, const char *v, double lo, double hi,
		     uint64_t *u, double *d)
{
	struct nl_cfg *c = NULL;
	int rc;

	if (v == NULL)
		return 0;
	rc = nl_cfg_new(&c, opt);
	if (rc == 0)
		rc = nl_cfg_add(c, "option", opt + 2, v, 0);
	if (rc == 0)
		rc = u != NULL ? nl_cfg_get_u64(c, "option", opt + 2, u, (uint64_t)lo, (uint64_t)hi,
						true)
			       : nl_cfg_get_double(c, "option", opt + 2, d, lo, hi, true);
	if (rc < 0) {
		const char *msg = c != NULL ? strstr(c->err, "] ") : NULL;

		/* "--seeds: '2x' is not a non-negative integer", without the made-up line */
		fprintf(stderr, "%s: %s: %s\n", prog, opt,
			rc == -ENOMEM ? "out of memory" : msg != NULL ? msg + 2 + strlen(opt + 2) + 2 : v);
		nl_cfg_free(c);
		return -EINVAL;
	}
	nl_cfg_free(c);
	return 0;
}
