/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Value helpers: case-insensitive names, the chunk arena, absTime/relTime text forms and the
 * unparser (nl_cad_format).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_cad_int.h"

static inline unsigned char
lc(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

uint32_t
nl_cad_hash(const char *s, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ lc((unsigned char)s[i])) * 16777619u;
	return h;
}

bool
nl_cad_name_eq(const char *a, uint32_t alen, const char *b, uint32_t blen)
{
	if (alen != blen)
		return false;
	for (uint32_t i = 0; i < alen; i++)
		if (lc((unsigned char)a[i]) != lc((unsigned char)b[i]))
			return false;
	return true;
}

void *
nl_cad_chunk_alloc(struct nl_cad_chunk **head, struct nl_cad_chunk **cur, size_t n)
{
	struct nl_cad_chunk *c = *cur;

	n = (n + 15) & ~(size_t)15;
	while (c != NULL && c->size - c->used < n) {
		c = c->next;
		if (c != NULL)
			c->used = 0;
	}
	if (c == NULL) {
		size_t sz = n > 16384 ? n : 16384;

		c = malloc(sizeof(*c) + sz);
		if (c == NULL)
			return NULL;
		c->next = NULL;
		c->size = sz;
		c->used = 0;
		if (*head == NULL) {
			*head = c;
		} else {
			struct nl_cad_chunk *t = *cur != NULL ? *cur : *head;

			/* append after the current chunk, keeping later (reused) chunks */
			c->next = t->next;
			t->next = c;
		}
	}
	*cur = c;
	void *p = c->data + c->used;
	c->used += n;
	return p;
}

void
nl_cad_chunk_free(struct nl_cad_chunk *head)
{
	while (head != NULL) {
		struct nl_cad_chunk *n = head->next;

		free(head);
		head = n;
	}
}

/* Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian). */
int64_t
nl_cad_days_from_civil(int64_t y, unsigned int m, unsigned int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned int yoe = (unsigned int)(y - era * 400);
	unsigned int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

static void
civil_from_days(int64_t z, int64_t *y, unsigned int *m, unsigned int *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned int doe = (unsigned int)(z - era * 146097);
	unsigned int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned int mp = (5 * doy + 2) / 153;

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* atoi() of up to n characters at s (HTCondor reads fixed-width fields with atoi). */
static int64_t
atoi_n(const char *s, uint32_t n)
{
	int64_t v = 0;
	uint32_t i = 0;
	bool neg = false;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	while (i < n && is_digit(s[i]))
		v = v * 10 + (s[i++] - '0');
	return neg ? -v : v;
}

/*
 * HTCondor's absTime("...") reading (Literal::MakeAbsTime): an optional zone at the end ('Z',
 * "+hhmm" or "+hh:mm"), then fixed-width digit fields separated by any non-digits: yyyy [mm
 * [dd [hh [mm [ss]]]]]; missing fields are 0 and fields are normalised like mktime() (day 0
 * is the last day of the previous month). No zone: UTC here (HTCondor: the local zone).
 */
int
nl_cad_parse_abstime(const char *str, uint32_t len, int64_t *out_s, int32_t *out_off)
{
	char s[128];
	int64_t f[6] = { 0, 1, 0, 0, 0, 0 };
	int32_t off = 0;
	int32_t i;

	if (len >= sizeof(s) || len == 0)
		return -EINVAL;
	memcpy(s, str, len);
	s[len] = 0;
	i = (int32_t)len - 1;
	while (i >= 0 && (s[i] == ' ' || s[i] == '\t'))
		i--;
	if (i > 0 && (s[i] == 'z' || s[i] == 'Z')) {
		memmove(s + i, s + i + 1, len - (uint32_t)i);
		len--;
	} else if ((len > 5 && (s[len - 5] == '+' || s[len - 5] == '-')) ||
		   (len > 6 && (s[len - 6] == '+' || s[len - 6] == '-') && s[len - 3] == ':')) {
		if (s[len - 3] == ':' && (s[len - 6] == '+' || s[len - 6] == '-')) {
			memmove(s + len - 3, s + len - 2, 3);
			len--;
		}
		const char *z = s + len - 5;

		if (!is_digit(z[1]) || !is_digit(z[2]) || !is_digit(z[3]) || !is_digit(z[4]))
			return -EINVAL;
		off = (int32_t)(atoi_n(z + 1, 2) * 3600 + atoi_n(z + 3, 2) * 60);
		if (z[0] == '-')
			off = -off;
		len -= 5;
		s[len] = 0;
	}
	uint32_t p = 0;

	while (p < len && !is_digit(s[p]))
		p++;
	if ((int64_t)p > (int64_t)len - 4)
		return -EINVAL; /* the year has four digits */
	f[0] = atoi_n(s + p, 4);
	p += 4;
	for (int k = 1; k < 6; k++) {
		while (p < len && !is_digit(s[p]))
			p++;
		if (p + 2 <= len) { /* absent: month 1 (tm_mon 0), day 0, time 0 */
			f[k] = atoi_n(s + p, 2);
			p += 2;
		}
	}
	while (p < len && !is_digit(s[p]))
		p++;
	if (p < len)
		return -EINVAL; /* digits left over */
	/* mktime-like normalisation: month, then day offset, then h:m:s as seconds */
	int64_t mon0 = f[1] - 1, y = f[0] + (mon0 >= 0 ? mon0 / 12 : -((11 - mon0) / 12));

	mon0 -= (y - f[0]) * 12;
	*out_s = (nl_cad_days_from_civil(y, (unsigned int)mon0 + 1, 1) + f[2] - 1) * 86400 +
		 f[3] * 3600 + f[4] * 60 + f[5] - off;
	*out_off = off;
	return 0;
}

/*
 * HTCondor's relTime("...") reading (Literal::MakeRelTime), right to left:
 * [-][days(d|+)][hours(h|:)][minutes(m|:)][seconds[.frac][s]], spaces anywhere between
 * fields: "1:30" is 90 s, "1+02:03:04", "7d", "1h30m", "90" all read.
 */
int
nl_cad_parse_reltime(const char *s, uint32_t len, double *out_s)
{
	int64_t i = (int64_t)len - 1;
	double secs = 0;
	int64_t mins = 0, hrs = 0, days = 0;
	bool neg = false;

#define SKIPSP() while (i >= 0 && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) i--
	SKIPSP();
	if (i >= 0 && (s[i] == 's' || s[i] == 'S' || is_digit(s[i]))) {
		if (s[i] == 's' || s[i] == 'S')
			i--;
		SKIPSP();
		int64_t e = i;

		while (i >= 0 && is_digit(s[i]))
			i--;
		if (i >= 0 && s[i] == '.') {
			i--;
			while (i >= 0 && is_digit(s[i]))
				i--;
		}
		if (e > i) {
			char tmp[64];
			size_t n = (size_t)(e - i);

			if (n >= sizeof(tmp))
				return -EINVAL;
			memcpy(tmp, s + i + 1, n);
			tmp[n] = 0;
			secs = strtod(tmp, NULL);
		}
	}
	int64_t *fld[3] = { &mins, &hrs, &days };
	const char *mark[3] = { "mM:", "hH:", "dD+" };

	for (int k = 0; k < 3; k++) {
		SKIPSP();
		if (i >= 0 && strchr(mark[k], s[i]) != NULL && s[i] != 0) {
			i--;
			SKIPSP();
			int64_t v = 0, mul = 1;

			while (i >= 0 && is_digit(s[i])) {
				if (mul <= INT64_C(100000000000000))
					v += (s[i] - '0') * mul;
				mul *= mul <= INT64_C(100000000000000) ? 10 : 1;
				i--;
			}
			*fld[k] = v;
		}
	}
	SKIPSP();
	if (i >= 0 && s[i] == '-') {
		neg = true;
		i--;
	}
	SKIPSP();
#undef SKIPSP
	if (i >= 0)
		return -EINVAL;
	*out_s = (neg ? -1 : 1) * ((double)days * 86400 + (double)hrs * 3600 + (double)mins * 60 + secs);
	return 0;
}

int
nl_cad_fmt_abstime(int64_t s, int32_t off, char *buf, size_t n)
{
	int64_t local = s + off;
	int64_t days = local >= 0 ? local / 86400 : -((-local + 86399) / 86400);
	int64_t sod = local - days * 86400;
	int64_t y;
	unsigned int m, d;
	int32_t ao = off < 0 ? -off : off;

	civil_from_days(days, &y, &m, &d);
	/* HTCondor's absTimeToString(): '+' only for a positive offset (UTC prints -00:00) */
	return snprintf(buf, n, "%04lld-%02u-%02uT%02lld:%02lld:%02lld%c%02d:%02d", (long long)y,
			m, d, (long long)(sod / 3600), (long long)(sod / 60 % 60),
			(long long)(sod % 60), off > 0 ? '+' : '-', (int)(ao / 3600),
			(int)(ao / 60 % 60));
}

/* relTime text of fields (sign, days, hours, minutes, seconds text), leading zero fields
 * omitted, HTCondor's relTimeToString() layout. */
static int
fmt_rel_fields(char *buf, size_t n, const char *sign, int64_t days, int64_t hrs, int64_t mins,
	       const char *sb)
{
	if (days != 0)
		return snprintf(buf, n, "%s%lld+%02lld:%02lld:%s", sign, (long long)days,
				(long long)hrs, (long long)mins, sb);
	if (hrs != 0)
		return snprintf(buf, n, "%s%02lld:%02lld:%s", sign, (long long)hrs, (long long)mins,
				sb);
	if (mins != 0)
		return snprintf(buf, n, "%s%02lld:%s", sign, (long long)mins, sb);
	return snprintf(buf, n, "%s%s", sign, sb);
}

int
nl_cad_fmt_reltime(double s, char *buf, size_t n)
{
	/* HTCondor's relTimeToString(): [-][D+]HH:MM:SS, leading zero fields omitted, the
	 * seconds with %g when fractional. Every relTime (|s| <= NL_CAD_RELTIME_MAX_S, finite)
	 * prints so that relTime("...") reads it back: fractional seconds get more digits than
	 * %g's 6 when needed (fixed notation, never an exponent, at most 20 decimals). */
	const char *sign = s < 0 ? "-" : "";
	double a = fabs(s);

	if (!(a <= NL_CAD_RELTIME_MAX_S))
		a = isnan(a) ? 0 : NL_CAD_RELTIME_MAX_S; /* not a relTime value: never made */
	double frac = a - floor(a);
	int64_t whole = (int64_t)a;
	int64_t days = whole / 86400, hrs = whole % 86400 / 3600, mins = whole % 3600 / 60;
	double secs = (double)(whole % 60) + frac;
	char sb[48], txt[96];
	double back;

	if (frac == 0) {
		snprintf(sb, sizeof(sb), "%02d", (int)secs);
		return fmt_rel_fields(buf, n, sign, days, hrs, mins, sb);
	}
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(sb, sizeof(sb), "%.*g", prec, secs);
		if (strchr(sb, 'e') != NULL)
			break; /* below 1e-4 s: fixed notation */
		fmt_rel_fields(txt, sizeof(txt), sign, days, hrs, mins, sb);
		if (nl_cad_parse_reltime(txt, (uint32_t)strlen(txt), &back) == 0 && back == s)
			return snprintf(buf, n, "%s", txt);
	}
	for (int dec = 1; dec <= 20; dec++) {
		snprintf(sb, sizeof(sb), "%.*f", dec, secs);
		fmt_rel_fields(txt, sizeof(txt), sign, days, hrs, mins, sb);
		if (nl_cad_parse_reltime(txt, (uint32_t)strlen(txt), &back) == 0 && back == s)
			return snprintf(buf, n, "%s", txt);
	}
	/* a fraction below 1e-20 s: dropped (the text then reads back as whole seconds) */
	snprintf(sb, sizeof(sb), "%02d", (int)secs);
	return fmt_rel_fields(buf, n, sign, days, hrs, mins, sb);
}

int
nl_cad_fmt_real(double r, char *buf, size_t n)
{
	char tmp[64];

	/* HTCondor's unparser: 0.0 / -0.0, real("NaN"), real("INF"), real("-INF"), else %.16G
	 * with ".0" added when the text would read back as an integer */
	if (r == 0)
		return snprintf(buf, n, "%s", signbit(r) ? "-0.0" : "0.0");
	if (isnan(r))
		return snprintf(buf, n, "real(\"NaN\")");
	if (isinf(r))
		return snprintf(buf, n, "real(\"%sINF\")", r < 0 ? "-" : "");
	snprintf(tmp, sizeof(tmp), "%.16G", r);
	if (tmp[strcspn(tmp, ".Ee")] == 0)
		strcat(tmp, ".0");
	return snprintf(buf, n, "%s", tmp);
}

int
nl_cad_fmt_real_e(double r, char *buf, size_t n)
{
	/* ClassAdUnParser::UnparseReal in new-syntax mode (string(), strcat(), unparse()) */
	if (r == 0 || isnan(r) || isinf(r))
		return nl_cad_fmt_real(r, buf, n);
	return snprintf(buf, n, "%1.15E", r);
}

/* HTCondor 23.4 on (ClassAdFlatMapOrder): shorter names first, then strcasecmp(). */
static int
name_order(const struct nl_cad_name *a, const struct nl_cad_name *b)
{
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	for (uint32_t i = 0; i < a->len; i++) {
		unsigned char x = lc((unsigned char)a->s[i]), y = lc((unsigned char)b->s[i]);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

void
nl_cad_sort_names(const struct nl_cad_name *names, uint32_t *ord, uint32_t m)
{
	/* bottom-up merge sort (stable, O(m log m): a root of 65535 names prints quickly) */
	uint32_t *tmp = m > 1 ? malloc(m * sizeof(*tmp)) : NULL;

	if (tmp == NULL) {
		/* insertion sort: small inputs, or no memory for the merge */
		for (uint32_t i = 1; i < m; i++) {
			uint32_t x = ord[i], j = i;

			for (; j > 0 && name_order(&names[ord[j - 1]], &names[x]) > 0; j--)
				ord[j] = ord[j - 1];
			ord[j] = x;
		}
		return;
	}
	for (uint32_t w = 1; w < m; w *= 2) {
		for (uint32_t lo = 0; lo < m; lo += 2 * w) {
			uint32_t mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m;
			uint32_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				tmp[k++] = name_order(&names[ord[j]], &names[ord[i]]) < 0 ? ord[j++]
											  : ord[i++];
			while (i < mid)
				tmp[k++] = ord[i++];
			while (j < hi)
				tmp[k++] = ord[j++];
		}
		memcpy(ord, tmp, m * sizeof(*ord));
	}
	free(tmp);
}

bool
nl_cad_name_needs_quotes(const char *s, uint32_t len)
{
	/* HTCondor's unparser (sink.cpp reserved_words) also quotes 'parent' */
	static const char *const reserved[] = {
		"true", "false", "undefined", "error", "is", "isnt", "parent",
	};

	if (len == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
			  s[0] == '_'))
		return true;
	for (uint32_t i = 1; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return true;
	}
	for (unsigned int k = 0; k < sizeof(reserved) / sizeof(reserved[0]); k++)
		if (nl_cad_name_eq(s, len, reserved[k], (uint32_t)strlen(reserved[k])))
			return true;
	return false;
}

const char *
nl_cad_type_name(enum nl_cad_type t)
{
	static const char *const names[] = {
		"undefined", "error", "boolean", "integer", "real",
		"string", "absTime", "relTime", "list", "classad",
	};
	return (unsigned int)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

int
nl_cad_schema_init(struct nl_cad_schema *sc, const char *const *names, unsigned int n)
{
	if (n > NL_CAD_SCHEMA_MAX)
		return -E2BIG;
	sc->n = n;
	for (unsigned int i = 0; i < n; i++) {
		sc->names[i] = names[i];
		sc->len[i] = (uint32_t)strlen(names[i]);
		sc->hash[i] = nl_cad_hash(names[i], sc->len[i]);
	}
	return 0;
}

/* Unparser: appends to buf like snprintf, tracking the length the full text needs. */
struct fmt {
	char *buf;
	size_t n, len;
	bool real_e; /* reals as %1.15E (nl_cad_format_e) */
};

static void
put(struct fmt *f, const char *fmtstr, ...)
{
	va_list ap;
	size_t room = f->len < f->n ? f->n - f->len : 0;

	va_start(ap, fmtstr);
	int k = vsnprintf(room ? f->buf + f->len : NULL, room, fmtstr, ap);
	va_end(ap);
	if (k > 0)
		f->len += (size_t)k;
}

/* The body of a string literal or quoted name, HTCondor's escapes; q = the delimiter. */
static void
put_escaped(struct fmt *f, const char *s, size_t len, char q)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '\a': put(f, "\\a"); break;
		case '\b': put(f, "\\b"); break;
		case '\f': put(f, "\\f"); break;
		case '\n': put(f, "\\n"); break;
		case '\r': put(f, "\\r"); break;
		case '\t': put(f, "\\t"); break;
		case '\v': put(f, "\\v"); break;
		case '\\': put(f, "\\\\"); break;
		default:
			if (c == (unsigned char)q)
				put(f, "\\%c", c);
			else if (c < 32 || c >= 127) /* !isprint(): octal, non-ASCII bytes too */
				put(f, "\\%03o", c);
			else
				put(f, "%c", c);
		}
	}
}

void
nl_cad_put_string(char *buf, size_t n, size_t *len, const char *s, size_t slen, char q)
{
	struct fmt f = { .buf = buf, .n = n, .len = *len };

	put(&f, "%c", q);
	put_escaped(&f, s, slen, q);
	put(&f, "%c", q);
	*len = f.len;
}

static void
put_name(struct fmt *f, const char *s, uint32_t len)
{
	if (nl_cad_name_needs_quotes(s, len)) {
		put(f, "'");
		put_escaped(f, s, len, '\'');
		put(f, "'");
	} else {
		put(f, "%.*s", (int)len, s);
	}
}

static void
fmt_val(struct nl_cad_ctx *ctx, const struct nl_cad_val *v, struct fmt *f, int depth)
{
	char tmp[96];

	if (depth > NL_CAD_MAX_VALUE_DEPTH) {
		put(f, "error");
		return;
	}
	switch (v->type) {
	case NL_CAD_UNDEFINED: put(f, "undefined"); break;
	case NL_CAD_ERROR: put(f, "error"); break;
	case NL_CAD_BOOL: put(f, v->u.b ? "true" : "false"); break;
	case NL_CAD_INT: put(f, "%lld", (long long)v->u.i); break;
	case NL_CAD_REAL:
		if (f->real_e)
			nl_cad_fmt_real_e(v->u.r, tmp, sizeof(tmp));
		else
			nl_cad_fmt_real(v->u.r, tmp, sizeof(tmp));
		put(f, "%s", tmp);
		break;
	case NL_CAD_STRING:
		put(f, "\"");
		put_escaped(f, v->u.s, (size_t)v->aux, '"');
		put(f, "\"");
		break;
	case NL_CAD_ABSTIME:
		nl_cad_fmt_abstime(v->u.abs_s, v->aux, tmp, sizeof(tmp));
		put(f, "absTime(\"%s\")", tmp);
		break;
	case NL_CAD_RELTIME:
		nl_cad_fmt_reltime(v->u.rel_s, tmp, sizeof(tmp));
		put(f, "relTime(\"%s\")", tmp);
		break;
	case NL_CAD_LIST:
		/* a list literal's value prints its elements' expressions, as HTCondor's (an
		 * ExprList) does: the text the compiler kept in front of the elements */
		if (v->kind == NL_CAD_LIST_EXPR && v->u.l[-1].type == NL_CAD_STRING) {
			const char *t = v->u.l[-1].u.s, *e = t + v->u.l[-1].aux + 1;

			put(f, "%s", f->real_e && *e != 0 ? e : t);
			break;
		}
		/* HTCondor: "{ " elements joined by "," " }" */
		put(f, "{ ");
		for (int32_t i = 0; i < v->aux; i++) {
			if (i)
				put(f, ",");
			fmt_val(ctx, &v->u.l[i], f, depth + 1);
		}
		put(f, " }");
		break;
	case NL_CAD_RECORD:
		/* HTCondor: "[ " name = expression, joined by "; ", " ]" */
		put(f, "[ ");
		if (v->kind == NL_CAD_REC_HOST) {
			const struct nl_cad_rec *r = v->u.rec;
			struct nl_cad_name nm[NL_CAD_SCHEMA_MAX];
			uint32_t ord[NL_CAD_SCHEMA_MAX];

			for (unsigned int i = 0; i < r->schema->n; i++) {
				nm[i] = (struct nl_cad_name){ r->schema->names[i], r->schema->len[i], 0 };
				ord[i] = i;
			}
			nl_cad_sort_names(nm, ord, r->schema->n);
			for (unsigned int j = 0; j < r->schema->n; j++) {
				if (j)
					put(f, "; ");
				put_name(f, nm[ord[j]].s, nm[ord[j]].len);
				put(f, " = ");
				fmt_val(ctx, &r->vals[ord[j]], f, depth + 1);
			}
		} else {
			struct nl_cad_frame *fr = v->u.fr;
			const struct nl_cad_def *d = fr->def;
			const struct nl_cad_ctx *o = fr->ctx;
			uint32_t *ord = d->n > 0 ? malloc(d->n * sizeof(*ord)) : NULL;
			uint32_t m = 0;

			/* a record literal prints its attributes' expressions, as HTCondor does
			 * (never their values: a record holding itself prints finitely), in
			 * HTCondor's attribute order; a binding of the root prints as its value */
			if (d->n > 0 && ord == NULL) {
				put(f, "error ]");
				break;
			}
			for (uint32_t i = 0; i < d->n; i++) {
				bool bound = fr->parent == NULL && o != NULL && fr == o->root &&
					     o->bound[i];

				if (d->names[i].s[0] == ' ' || (d->code[i] == UINT32_MAX && !bound))
					continue;
				ord[m++] = i;
			}
			nl_cad_sort_names(d->names, ord, m);
			for (uint32_t j = 0; j < m; j++) {
				uint32_t i = ord[j];
				bool bound = fr->parent == NULL && o != NULL && fr == o->root &&
					     o->bound[i];

				if (j)
					put(f, "; ");
				put_name(f, d->names[i].s, d->names[i].len);
				put(f, " = ");
				if (bound)
					fmt_val(ctx, &o->bind[i], f, depth + 1);
				else if (f->real_e && d->text_e != NULL && d->text_e[i] != NULL)
					put(f, "%s", d->text_e[i]);
				else if (d->text != NULL && d->text[i] != NULL)
					put(f, "%s", d->text[i]);
				else
					put(f, "undefined");
			}
			free(ord);
		}
		put(f, " ]");
		break;
	default: put(f, "error"); break;
	}
}

static int
format_as(struct nl_cad_ctx *ctx, const struct nl_cad_val *v, char *buf, size_t n, bool real_e)
{
	struct fmt f = { .buf = buf, .n = n, .len = 0, .real_e = real_e };

	if (n > 0)
		buf[0] = 0;
	fmt_val(ctx, v, &f, 0);
	if (n > 0 && f.len >= n)
		buf[n - 1] = 0;
	return (int)f.len;
}

int
nl_cad_format_e(struct nl_cad_ctx *ctx, const struct nl_cad_val *v, char *buf, size_t n)
{
	return format_as(ctx, v, buf, n, true);
}

int
nl_cad_format(struct nl_cad_ctx *ctx, const struct nl_cad_val *v, char *buf, size_t n)
{
	return format_as(ctx, v, buf, n, false);
}
