/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The built-in functions of the ClassAd language (HTCondor's "Predefined Functions"): the
 * table of names and argument counts the parser checks, and nl_cad_call(), which evaluates a
 * built-in on already-evaluated arguments. Depends on nl_cad_ops.c and nl_cad_val.c (and
 * PCRE2 for the regular expressions), never on the evaluator.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>

#include "nl_cad_int.h"

#define ERRV NL_CAD_ERRV
#define UNDEFV NL_CAD_UNDEFV

const struct nl_cad_fn_desc nl_cad_fn_table[NL_CAD_F_COUNT] = {
	[NL_CAD_F_ISUNDEFINED] = { "isUndefined", 1, 1 },
	[NL_CAD_F_ISERROR] = { "isError", 1, 1 },
	[NL_CAD_F_ISINTEGER] = { "isInteger", 1, 1 },
	[NL_CAD_F_ISREAL] = { "isReal", 1, 1 },
	[NL_CAD_F_ISSTRING] = { "isString", 1, 1 },
	[NL_CAD_F_ISBOOLEAN] = { "isBoolean", 1, 1 },
	[NL_CAD_F_ISLIST] = { "isList", 1, 1 },
	[NL_CAD_F_ISCLASSAD] = { "isClassAd", 1, 1 },
	[NL_CAD_F_ISABSTIME] = { "isAbsTime", 1, 1 },
	[NL_CAD_F_ISRELTIME] = { "isRelTime", 1, 1 },
	[NL_CAD_F_MEMBER] = { "member", 2, 2 },
	[NL_CAD_F_IDENTICALMEMBER] = { "identicalMember", 2, 2 },
	[NL_CAD_F_SIZE] = { "size", 1, 1 },
	[NL_CAD_F_IFTHENELSE] = { "ifThenElse", 3, 3 },
	[NL_CAD_F_TIME] = { "time", 0, 0 },
	[NL_CAD_F_ABSTIME] = { "absTime", 0, 2 },
	[NL_CAD_F_RELTIME] = { "relTime", 1, 1 },
	[NL_CAD_F_INT] = { "int", 1, 1 },
	[NL_CAD_F_REAL] = { "real", 1, 1 },
	[NL_CAD_F_STRING] = { "string", 1, 1 },
	[NL_CAD_F_FLOOR] = { "floor", 1, 1 },
	[NL_CAD_F_CEILING] = { "ceiling", 1, 1 },
	[NL_CAD_F_ROUND] = { "round", 1, 1 },
	[NL_CAD_F_STRCAT] = { "strcat", 0, 255 },
	[NL_CAD_F_SUBSTR] = { "substr", 2, 3 },
	[NL_CAD_F_TOUPPER] = { "toUpper", 1, 1 },
	[NL_CAD_F_TOLOWER] = { "toLower", 1, 1 },
	[NL_CAD_F_MIN] = { "min", 1, 1 },
	[NL_CAD_F_MAX] = { "max", 1, 1 },
	[NL_CAD_F_SUM] = { "sum", 1, 1 },
	[NL_CAD_F_AVG] = { "avg", 1, 1 },
	[NL_CAD_F_LINEAR] = { "linear", 5, 5 },
	[NL_CAD_F_EVALUATELIST] = { "evaluateList", 3, 3 },
	[NL_CAD_F_PLUS_RSVUTIL] = { "plus_rsvutil", 3, 3 },
	[NL_CAD_F_BOOL] = { "bool", 1, 1 },
	[NL_CAD_F_CEIL] = { "ceil", 1, 1 },
	[NL_CAD_F_POW] = { "pow", 2, 2 },
	[NL_CAD_F_QUANTIZE] = { "quantize", 2, 2 },
	[NL_CAD_F_JOIN] = { "join", 1, 255 },
	[NL_CAD_F_SPLIT] = { "split", 1, 2 },
	[NL_CAD_F_SPLITUSERNAME] = { "splitUserName", 1, 1 },
	[NL_CAD_F_SPLITSLOTNAME] = { "splitSlotName", 1, 1 },
	[NL_CAD_F_STRCMP] = { "strcmp", 2, 2 },
	[NL_CAD_F_STRICMP] = { "stricmp", 2, 2 },
	[NL_CAD_F_VERSIONCMP] = { "versioncmp", 2, 2 },
	[NL_CAD_F_VERSIONGT] = { "versionGT", 2, 2 },
	[NL_CAD_F_VERSIONLT] = { "versionLT", 2, 2 },
	[NL_CAD_F_VERSIONGE] = { "versionGE", 2, 2 },
	[NL_CAD_F_VERSIONLE] = { "versionLE", 2, 2 },
	[NL_CAD_F_VERSIONEQ] = { "versionEQ", 2, 2 },
	[NL_CAD_F_VERSION_IN_RANGE] = { "version_in_range", 3, 3 },
	[NL_CAD_F_SPLITTIME] = { "splitTime", 1, 1 },
	[NL_CAD_F_FORMATTIME] = { "formatTime", 0, 2 },
	[NL_CAD_F_INTERVAL] = { "interval", 1, 1 },
	[NL_CAD_F_ANYCOMPARE] = { "anyCompare", 3, 3 },
	[NL_CAD_F_ALLCOMPARE] = { "allCompare", 3, 3 },
	[NL_CAD_F_REGEXP] = { "regexp", 2, 3 },
	[NL_CAD_F_REGEXPS] = { "regexps", 3, 4 },
	[NL_CAD_F_REGEXPMEMBER] = { "regexpMember", 2, 3 },
	[NL_CAD_F_REPLACE] = { "replace", 3, 4 },
	[NL_CAD_F_REPLACEALL] = { "replaceAll", 3, 4 },
	[NL_CAD_F_SL_REGEXPMEMBER] = { "stringList_regexpMember", 2, 4 },
	[NL_CAD_F_SL_SIZE] = { "stringListSize", 1, 2 },
	[NL_CAD_F_SL_SUM] = { "stringListSum", 1, 2 },
	[NL_CAD_F_SL_AVG] = { "stringListAvg", 1, 2 },
	[NL_CAD_F_SL_MIN] = { "stringListMin", 1, 2 },
	[NL_CAD_F_SL_MAX] = { "stringListMax", 1, 2 },
	[NL_CAD_F_SL_MEMBER] = { "stringListMember", 2, 3 },
	[NL_CAD_F_SL_IMEMBER] = { "stringListIMember", 2, 3 },
	[NL_CAD_F_SL_INTERSECT] = { "stringListsIntersect", 2, 3 },
	[NL_CAD_F_SL_SUBSETMATCH] = { "stringListSubsetMatch", 2, 3 },
	[NL_CAD_F_SL_ISUBSETMATCH] = { "stringListISubsetMatch", 2, 3 },
	[NL_CAD_F_EVAL] = { "eval", 1, 1 },
	[NL_CAD_F_UNPARSE] = { "unparse", 1, 1 },
	[NL_CAD_F_DEBUG] = { "debug", 1, 1 },
	[NL_CAD_F_CURRENTTIME] = { "currentTime", 0, 0 },
	[NL_CAD_F_EVALINEACH] = { "evalInEachContext", 2, 2 },
	[NL_CAD_F_COUNTMATCHES] = { "countMatches", 2, 2 },
	[NL_CAD_F_RANDOM] = { "random", 0, 1 },
	[NL_CAD_F_USERHOME] = { "userHome", 1, 2 },
	[NL_CAD_F_TZOFFSET] = { "timeZoneOffset", 0, 0 },
	[NL_CAD_F_DAYTIME] = { "dayTime", 0, 0 },
	[NL_CAD_F_GETYEAR] = { "getYear", 1, 1 },
	[NL_CAD_F_GETMONTH] = { "getMonth", 1, 1 },
	[NL_CAD_F_GETDAYOFYEAR] = { "getDayOfYear", 1, 1 },
	[NL_CAD_F_GETDAYOFMONTH] = { "getDayOfMonth", 1, 1 },
	[NL_CAD_F_GETDAYOFWEEK] = { "getDayOfWeek", 1, 1 },
	[NL_CAD_F_GETDAYS] = { "getDays", 1, 1 },
	[NL_CAD_F_GETHOURS] = { "getHours", 1, 1 },
	[NL_CAD_F_GETMINUTES] = { "getMinutes", 1, 1 },
	[NL_CAD_F_GETSECONDS] = { "getSeconds", 1, 1 },
	[NL_CAD_F_ENVV1TOV2] = { "envV1ToV2", 1, 1 },
	[NL_CAD_F_MERGEENV] = { "mergeEnvironment", 0, 255 },
	[NL_CAD_F_UNRESOLVED] = { "unresolved", 1, 2 },
	[NL_CAD_F_USERMAP] = { "userMap", 2, 4 },
};

int
nl_cad_fn_lookup(const char *name, uint32_t len)
{
	for (int i = 0; i < NL_CAD_F_COUNT; i++)
		if (nl_cad_name_eq(name, len, nl_cad_fn_table[i].name,
				   (uint32_t)strlen(nl_cad_fn_table[i].name)))
			return i;
	return -1;
}


/* ------------------------------------------------------------------ conversions */

/* A strict built-in's verdict on its arguments: error when one is error, else undefined when
 * one is undefined (*out set, true); false when every argument is a value. */
static bool
strict_args(const struct nl_cad_val *a, uint32_t n, struct nl_cad_val *out)
{
	for (uint32_t k = 0; k < n; k++)
		if (a[k].type == NL_CAD_ERROR) {
			*out = ERRV;
			return true;
		}
	for (uint32_t k = 0; k < n; k++)
		if (a[k].type == NL_CAD_UNDEFINED) {
			*out = UNDEFV;
			return true;
		}
	return false;
}


/* isspace() in the C locale (-1, no character, is not) */
static bool
is_space_c(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* (long long) of a double as HTCondor's conversions do it on x86-64 (cvttsd2si): truncation,
 * and INT64_MIN for NaN and for values beyond 64 bits (int(1e30) is -9223372036854775808). */
static int64_t
d2ll(double d)
{
	int64_t i;

	return nl_cad_d2i(d, &i) ? i : INT64_MIN;
}

/* A string's leading number, as HTCondor's conversions read it (value.cpp): strtod(), leading
 * white space skipped and trailing text ignored; nothing read at all (and a value of 0) is a
 * failure. No size suffix since HTCondor 23.9 (HTCONDOR-2455): int("1K") is 1. */
static bool
str_prefix(const struct nl_cad_val *v, double *r)
{
	char tmp[128], *end;
	size_t n = (size_t)v->aux < sizeof(tmp) - 1 ? (size_t)v->aux : sizeof(tmp) - 1;

	memcpy(tmp, v->u.s, n);
	tmp[n] = 0;
	*r = strtod(tmp, &end);
	return !(end == tmp && *r == 0);
}

/* real(x) as HTCondor's convertValueToRealValue: false when not convertible. A relTime is
 * read as whole seconds (Value::IsRelativeTimeValue(time_t &)). */
static bool
to_real(const struct nl_cad_val *v, double *out)
{
	switch (v->type) {
	case NL_CAD_INT: *out = (double)v->u.i; return true;
	case NL_CAD_REAL: *out = v->u.r; return true;
	case NL_CAD_BOOL: *out = v->u.b; return true;
	case NL_CAD_ABSTIME: *out = (double)v->u.abs_s; return true;
	case NL_CAD_RELTIME: *out = (double)d2ll(v->u.rel_s); return true;
	case NL_CAD_STRING: return str_prefix(v, out);
	default: return false;
	}
}

/* int(x) as HTCondor's convertValueToIntegerValue: false when not convertible. */
static bool
to_int(const struct nl_cad_val *v, int64_t *out)
{
	double r;

	switch (v->type) {
	case NL_CAD_INT: *out = v->u.i; return true;
	case NL_CAD_BOOL: *out = v->u.b; return true;
	case NL_CAD_ABSTIME: *out = v->u.abs_s; return true;
	case NL_CAD_REAL: *out = d2ll(v->u.r); return true;
	case NL_CAD_RELTIME: *out = d2ll(v->u.rel_s); return true;
	case NL_CAD_STRING:
		if (!str_prefix(v, &r))
			return false;
		*out = d2ll(r);
		return true;
	default: return false;
	}
}

/* string(x) as HTCondor's convertValueToStringValue: undefined and error pass through. */
static struct nl_cad_val
to_str(struct nl_cad_ctx *ctx, const struct nl_cad_val *v, const struct nl_cad_val *base)
{
	if (v->type == NL_CAD_UNDEFINED || v->type == NL_CAD_ERROR)
		return *v;
	return nl_cad_to_string(ctx, v, (struct nl_cad_val *)(uintptr_t)base);
}

static struct nl_cad_val
fn_round(int fn, const struct nl_cad_val *a)
{
	double r;

	if (a->type == NL_CAD_INT)
		return *a;
	if (!to_real(a, &r))
		return ERRV;
	/* round(): to nearest, halves to even (rint under the default rounding mode); HTCondor
	 * (doRound) returns (long long) of the result: NaN and beyond 64 bits are INT64_MIN */
	r = fn == NL_CAD_F_FLOOR ? floor(r) : fn == NL_CAD_F_ROUND ? rint(r) : ceil(r);
	return nl_cad_int(d2ll(r));
}

/* HTCondor's Operation::coerceToNumber on two numbers, in place (Operate() takes its operands
 * by reference, so sum/avg/min/max see the promoted values): booleans become integers, and an
 * integer beside a real becomes a real. */
static void
coerce_pair(struct nl_cad_val *x, struct nl_cad_val *y)
{
	if (x->type == NL_CAD_BOOL)
		*x = nl_cad_int(x->u.b);
	if (y->type == NL_CAD_BOOL)
		*y = nl_cad_int(y->u.b);
	if (x->type == NL_CAD_INT && y->type == NL_CAD_REAL)
		*x = nl_cad_real((double)x->u.i);
	else if (x->type == NL_CAD_REAL && y->type == NL_CAD_INT)
		*y = nl_cad_real((double)y->u.i);
}

/* sum, avg, min, max of a list (HTCondor's sumAvg and minMax): undefined members are skipped,
 * the others must be numbers (booleans count as 0 and 1); sum({}) and avg({}) are 0, min({})
 * and max({}) undefined. min and max keep the winning member as the comparison left it:
 * max({3, 2.5}) is 3.0, a real, because comparing 2.5 with 3 made 3 a real. Extension: min/max
 * of a list of absTimes or of relTimes (Fig. 8). */
static struct nl_cad_val
fn_minmax(int fn, const struct nl_cad_val *l)
{
	if (l->type == NL_CAD_UNDEFINED)
		return UNDEFV;
	if (l->type != NL_CAD_LIST)
		return ERRV;
	bool sum = fn == NL_CAD_F_SUM || fn == NL_CAD_F_AVG;
	struct nl_cad_val acc = sum ? nl_cad_int(0) : UNDEFV;
	bool first = true;
	int32_t len = 0;

	for (int32_t i = 0; i < l->aux; i++) {
		struct nl_cad_val e = l->u.l[i];

		if (e.type == NL_CAD_UNDEFINED)
			continue;
		bool num = e.type == NL_CAD_INT || e.type == NL_CAD_REAL || e.type == NL_CAD_BOOL;
		bool timeok = !sum && (e.type == NL_CAD_ABSTIME || e.type == NL_CAD_RELTIME);

		if (!num && !timeok)
			return ERRV;
		len++;
		if (first) {
			acc = e;
			first = false;
			continue;
		}
		if (sum) {
			acc = nl_cad_binop(NL_CAD_B_ADD, &acc, &e);
			continue;
		}
		if (num && (acc.type == NL_CAD_INT || acc.type == NL_CAD_REAL ||
			    acc.type == NL_CAD_BOOL))
			coerce_pair(&e, &acc);
		struct nl_cad_val c = nl_cad_binop(fn == NL_CAD_F_MIN ? NL_CAD_B_LT : NL_CAD_B_GT,
						   &e, &acc);

		if (c.type == NL_CAD_ERROR && timeok)
			return ERRV;
		if (nl_cad_is_true(&c))
			acc = e;
	}
	if (fn == NL_CAD_F_AVG && len > 0) {
		struct nl_cad_val d = nl_cad_real(len);

		return nl_cad_binop(NL_CAD_B_DIV, &acc, &d);
	}
	return acc;
}

static bool
as_double(const struct nl_cad_val *v, double *out)
{
	int64_t i;
	bool isr;

	if (v->type == NL_CAD_RELTIME) {
		*out = v->u.rel_s;
		return true;
	}
	if (v->type == NL_CAD_ABSTIME) {
		*out = (double)v->u.abs_s;
		return true;
	}
	return nl_cad_num(v, &i, out, &isr);
}

/* ------------------------------------------------------------------ strings */

/* A growing string in the context's arena. */
struct sbuf {
	struct nl_cad_ctx *ctx;
	char *s;
	size_t len, cap;
	bool oom;
};

static void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 64;

		while (nc < b->len + n + 1)
			nc *= 2;
		char *ns = nl_cad_arena(b->ctx, nc);

		if (ns == NULL || nc > INT32_MAX) {
			b->oom = true;
			return;
		}
		if (b->len)
			memcpy(ns, b->s, b->len);
		b->s = ns;
		b->cap = nc;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

static struct nl_cad_val
sb_val(struct sbuf *b)
{
	if (b->oom)
		return ERRV;
	if (b->s == NULL)
		return nl_cad_str("", 0);
	return nl_cad_str(b->s, (uint32_t)b->len);
}

/* strcat(...) and join(sep, ...) / join(sep, list) / join(list) (HTCondor 23). */
static struct nl_cad_val
fn_strcat(struct nl_cad_ctx *ctx, int fn, const struct nl_cad_val *a, uint32_t n,
	  const struct nl_cad_val *base)
{
	bool join = fn == NL_CAD_F_JOIN;
	const struct nl_cad_val *items = a;
	uint32_t ni = n;
	struct nl_cad_val sep = nl_cad_str("", 0);
	struct sbuf b = { .ctx = ctx };
	bool undef = false, def = false;

	if (join && n >= 1 && n <= 2 && a[n - 1].type == NL_CAD_LIST) {
		items = a[n - 1].u.l;
		ni = (uint32_t)a[n - 1].aux;
		if (n == 2) {
			sep = to_str(ctx, &a[0], base);
			if (sep.type == NL_CAD_UNDEFINED)
				sep = nl_cad_str("", 0);
			else if (sep.type != NL_CAD_STRING)
				return ERRV;
		}
	} else if (join) {
		sep = to_str(ctx, &a[0], base);
		if (sep.type == NL_CAD_ERROR)
			return ERRV;
		if (sep.type != NL_CAD_STRING)
			sep = nl_cad_str("", 0);
		items = a + 1;
		ni = n - 1;
	}
	for (uint32_t k = 0; k < ni; k++) {
		struct nl_cad_val s = to_str(ctx, &items[k], base);

		if (s.type == NL_CAD_UNDEFINED) {
			undef = true;
			if (join)
				continue;
			def = false;
			break;
		}
		if (s.type != NL_CAD_STRING)
			return ERRV;
		if (join && b.len > 0)
			sb_add(&b, sep.u.s, (size_t)sep.aux);
		sb_add(&b, s.u.s, (size_t)s.aux);
		def = true;
	}
	if (undef && !def)
		return UNDEFV;
	return sb_val(&b);
}

/* split(s [, separators]), HTCondor's splitArb_func (compat_classad.cpp): the pieces of s
 * between separator characters (default: comma, blank and tab); leading and trailing
 * separators are ignored, runs of white space (alone or around one other separator) are one
 * separator, and a repeated non-blank separator gives an empty piece ("a,,b" has 3). */
static struct nl_cad_val
fn_split(struct nl_cad_ctx *ctx, const struct nl_cad_val *a, uint32_t n)
{
	const char *seps = ", \t";
	uint32_t nseps = 3;

	if (a[0].type != NL_CAD_STRING || (n == 2 && a[1].type != NL_CAD_STRING))
		return ERRV;
	if (n == 2) {
		seps = a[1].u.s;
		nseps = (uint32_t)a[1].aux;
	}
	const char *s = a[0].u.s;
	uint32_t len = (uint32_t)a[0].aux, cnt = 0, last = 0;
	struct nl_cad_val *out = nl_cad_arena(ctx, ((size_t)len + 1) * sizeof(*out));
	int ch = -1;

	if (out == NULL)
		return ERRV;
	for (uint32_t ix = 0; nseps > 0 && ix < len; ix++) {
		if (memchr(seps, s[ix], nseps) == NULL)
			continue;
		if (ix > last)
			out[cnt++] = nl_cad_mkstr(ctx, s + last, ix - last);
		else if (!is_space_c(ch) && ch == (unsigned char)s[ix])
			out[cnt++] = nl_cad_str("", 0);
		if (!is_space_c((unsigned char)s[ix]))
			ch = (unsigned char)s[ix];
		last = ix + 1;
	}
	if (len > last)
		out[cnt++] = nl_cad_mkstr(ctx, s + last, len - last);
	for (uint32_t k = 0; k < cnt; k++)
		if (out[k].type != NL_CAD_STRING)
			return ERRV;
	return nl_cad_list(out, cnt);
}

/* splitUserName / splitSlotName: {before '@', after '@'}. */
static struct nl_cad_val
fn_split_at(struct nl_cad_ctx *ctx, int fn, const struct nl_cad_val *a)
{
	if (a[0].type != NL_CAD_STRING)
		return ERRV;
	struct nl_cad_val *out = nl_cad_arena(ctx, 2 * sizeof(*out));
	const char *s = a[0].u.s, *at = memchr(s, '@', (size_t)a[0].aux);

	if (out == NULL)
		return ERRV;
	if (at != NULL) {
		out[0] = nl_cad_mkstr(ctx, s, (size_t)(at - s));
		out[1] = nl_cad_mkstr(ctx, at + 1, (size_t)(s + a[0].aux - at - 1));
	} else if (fn == NL_CAD_F_SPLITUSERNAME) {
		out[0] = a[0];
		out[1] = nl_cad_str("", 0);
	} else {
		out[0] = nl_cad_str("", 0);
		out[1] = a[0];
	}
	return nl_cad_list(out, 2);
}

/* Version compare (strverscmp-like, HTCondor's natural_cmp): digits compare as numbers,
 * more leading zeros sort first. Returns <0, 0, >0 with HTCondor's magnitudes. */
static int
natural_cmp(const char *s1, const char *s2)
{
	const char *b1 = s1;
	const char *n1, *n2, *z1, *z2, *e1, *e2;
	int d = 0;

	while (*s1 && *s1 == *s2) {
		s1++;
		s2++;
	}
	if (*s1 == *s2)
		return 0;
	for (n1 = s1; n1 > b1 && isdigit((unsigned char)n1[-1]); n1--)
		;
	n2 = s2 - (s1 - n1);
	if (n1 == s1 && (!isdigit((unsigned char)*s1) || !isdigit((unsigned char)*s2)))
		return (unsigned char)*s1 - (unsigned char)*s2;
	for (z1 = n1; *z1 == '0'; z1++)
		;
	for (z2 = n2; *z2 == '0'; z2++)
		;
	if (z1 > n1 && !isdigit((unsigned char)*z1))
		z1--;
	if (z2 > n2 && !isdigit((unsigned char)*z2))
		z2--;
	if (z1 - n1 != z2 - n2)
		return (int)((z2 - n2) - (z1 - n1));
	if (z1 > n1)
		return (unsigned char)*s1 - (unsigned char)*s2;
	for (e1 = z1; isdigit((unsigned char)*e1); e1++)
		;
	for (e2 = z2; isdigit((unsigned char)*e2); e2++)
		;
	d = (int)((e1 - n1) - (e2 - n2));
	return d != 0 ? d : (unsigned char)*s1 - (unsigned char)*s2;
}

static struct nl_cad_val
fn_version(struct nl_cad_ctx *ctx, int fn, const struct nl_cad_val *a, uint32_t n,
	   const struct nl_cad_val *base)
{
	struct nl_cad_val s[3] = { UNDEFV, UNDEFV, UNDEFV };

	if (fn == NL_CAD_F_VERSION_IN_RANGE) {
		if (a[1].type == NL_CAD_UNDEFINED || a[2].type == NL_CAD_UNDEFINED)
			return UNDEFV;
	} else if (a[0].type == NL_CAD_UNDEFINED || a[1].type == NL_CAD_UNDEFINED) {
		return UNDEFV;
	}
	for (uint32_t k = 0; k < n; k++) {
		s[k] = to_str(ctx, &a[k], base);
		if (s[k].type != NL_CAD_STRING)
			return ERRV;
	}
	if (s[0].type != NL_CAD_STRING || s[1].type != NL_CAD_STRING ||
	    (n == 3 && s[2].type != NL_CAD_STRING))
		return ERRV;
	if (fn == NL_CAD_F_VERSION_IN_RANGE)
		return nl_cad_bool(natural_cmp(s[1].u.s, s[0].u.s) <= 0 &&
				   natural_cmp(s[0].u.s, s[2].u.s) <= 0);
	int r = natural_cmp(s[0].u.s, s[1].u.s);

	switch (fn) {
	case NL_CAD_F_VERSIONGT: return nl_cad_bool(r > 0);
	case NL_CAD_F_VERSIONLT: return nl_cad_bool(r < 0);
	case NL_CAD_F_VERSIONGE: return nl_cad_bool(r >= 0);
	case NL_CAD_F_VERSIONLE: return nl_cad_bool(r <= 0);
	case NL_CAD_F_VERSIONEQ: return nl_cad_bool(r == 0);
	default: return nl_cad_int(r);
	}
}

/* ------------------------------------------------------------------ string lists */

/* Iterate the items of a string list: pieces between delimiter characters (default ", "),
 * trimmed of white space (HTCondor's StringList), empty pieces skipped when skip_empty. */
struct slit {
	const char *s, *d;
	uint32_t len, dlen, pos;
	bool trim;
};

static bool
sl_next(struct slit *it, const char **item, uint32_t *ilen)
{
	while (it->pos <= it->len) {
		uint32_t i = it->pos, j = i;

		while (j < it->len && memchr(it->d, it->s[j], it->dlen) == NULL)
			j++;
		it->pos = j + 1;
		uint32_t a = i, b = j;

		if (it->trim) {
			while (a < b && isspace((unsigned char)it->s[a]))
				a++;
			while (b > a && isspace((unsigned char)it->s[b - 1]))
				b--;
		}
		if (b > a) {
			*item = it->s + a;
			*ilen = b - a;
			return true;
		}
	}
	return false;
}

static void
sl_init(struct slit *it, const struct nl_cad_val *list, const struct nl_cad_val *delim, bool trim)
{
	it->s = list->u.s;
	it->len = (uint32_t)list->aux;
	it->d = ", ";
	it->dlen = 2;
	if (delim != NULL && delim->aux > 0) {
		it->d = delim->u.s;
		it->dlen = (uint32_t)delim->aux;
	}
	it->pos = 0;
	it->trim = trim;
}

static bool
sl_member(const struct nl_cad_val *list, const struct nl_cad_val *delim, const char *x,
	  uint32_t xlen, bool icase, bool trim)
{
	struct slit it;
	const char *item;
	uint32_t ilen;

	sl_init(&it, list, delim, trim);
	while (sl_next(&it, &item, &ilen)) {
		if (ilen != xlen)
			continue;
		if (icase ? nl_cad_name_eq(item, ilen, x, xlen) : memcmp(item, x, xlen) == 0)
			return true;
	}
	return false;
}

/* One item as a number: integer when it reads whole as one, else real. */
static bool
sl_num(const char *s, uint32_t len, struct nl_cad_val *out)
{
	char tmp[64], *end;

	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = 0;
	errno = 0;
	long long i = strtoll(tmp, &end, 10);

	if (*end == 0 && errno == 0) {
		*out = nl_cad_int(i);
		return true;
	}
	double r = strtod(tmp, &end);

	if (*end != 0)
		return false;
	*out = nl_cad_real(r);
	return true;
}

static struct nl_cad_val
fn_stringlist(int fn, const struct nl_cad_val *a, uint32_t n)
{
	struct slit it;
	const char *item;
	uint32_t ilen;

	switch (fn) {
	case NL_CAD_F_SL_SUBSETMATCH:
	case NL_CAD_F_SL_ISUBSETMATCH: {
		bool u0 = a[0].type == NL_CAD_UNDEFINED, u1 = a[1].type == NL_CAD_UNDEFINED;

		if ((!u0 && a[0].type != NL_CAD_STRING) || (!u1 && a[1].type != NL_CAD_STRING) ||
		    (n == 3 && a[2].type != NL_CAD_STRING))
			return ERRV;
		if (u0 && u1)
			return UNDEFV;
		if (u0)
			return nl_cad_bool(true);
		sl_init(&it, &a[0], n == 3 ? &a[2] : NULL, true);
		if (u1)
			return nl_cad_bool(!sl_next(&it, &item, &ilen));
		while (sl_next(&it, &item, &ilen))
			if (!sl_member(&a[1], n == 3 ? &a[2] : NULL, item, ilen,
				       fn == NL_CAD_F_SL_ISUBSETMATCH, true))
				return nl_cad_bool(false);
		return nl_cad_bool(true);
	}
	case NL_CAD_F_SL_INTERSECT: {
		/* the classad library's own: error, then undefined, then types; no trimming */
		struct nl_cad_val sv;

		if (strict_args(a, n, &sv))
			return sv;
		for (uint32_t k = 0; k < n; k++)
			if (a[k].type != NL_CAD_STRING)
				return ERRV;
		struct nl_cad_val dflt = nl_cad_str(" ,", 2);

		sl_init(&it, &a[0], n == 3 && a[2].aux > 0 ? &a[2] : &dflt, false);
		while (sl_next(&it, &item, &ilen))
			if (sl_member(&a[1], n == 3 && a[2].aux > 0 ? &a[2] : &dflt, item, ilen,
				      false, false))
				return nl_cad_bool(true);
		return nl_cad_bool(false);
	}
	default:
		break;
	}
	/* HTCondor's compatibility-layer string list functions: every argument a string */
	for (uint32_t k = 0; k < n; k++)
		if (a[k].type != NL_CAD_STRING)
			return ERRV;
	switch (fn) {
	case NL_CAD_F_SL_MEMBER:
	case NL_CAD_F_SL_IMEMBER:
		return nl_cad_bool(sl_member(&a[1], n == 3 ? &a[2] : NULL, a[0].u.s,
					     (uint32_t)a[0].aux, fn == NL_CAD_F_SL_IMEMBER, true));
	case NL_CAD_F_SL_SIZE: {
		int64_t cnt = 0;

		sl_init(&it, &a[0], n == 2 ? &a[1] : NULL, true);
		while (sl_next(&it, &item, &ilen))
			cnt++;
		return nl_cad_int(cnt);
	}
	default: {
		/* sum, avg, min, max */
		struct nl_cad_val acc = nl_cad_int(0), x;
		int64_t cnt = 0;

		sl_init(&it, &a[0], n == 2 ? &a[1] : NULL, true);
		while (sl_next(&it, &item, &ilen)) {
			if (!sl_num(item, ilen, &x))
				return ERRV;
			if (cnt++ == 0) {
				acc = x;
			} else if (fn == NL_CAD_F_SL_SUM || fn == NL_CAD_F_SL_AVG) {
				acc = nl_cad_binop(NL_CAD_B_ADD, &acc, &x);
			} else {
				struct nl_cad_val c = nl_cad_binop(fn == NL_CAD_F_SL_MIN ? NL_CAD_B_LT
										: NL_CAD_B_GT, &x, &acc);

				if (nl_cad_is_true(&c))
					acc = x;
			}
		}
		if (fn == NL_CAD_F_SL_AVG) {
			double r;

			if (cnt == 0)
				return nl_cad_real(0);
			to_real(&acc, &r);
			return nl_cad_real(r / (double)cnt);
		}
		if (cnt == 0 && (fn == NL_CAD_F_SL_MIN || fn == NL_CAD_F_SL_MAX))
			return UNDEFV;
		if (acc.type == NL_CAD_INT || acc.type == NL_CAD_REAL)
			return acc;
		return ERRV;
	}
	}
}

/* ------------------------------------------------------------------ regular expressions */

void *
nl_cad_rx_compile(const char *pat, uint32_t len, const char *opts, uint32_t olen)
{
	uint32_t o = 0;
	int err;
	PCRE2_SIZE off;

	for (uint32_t i = 0; i < olen; i++) {
		switch (opts[i]) {
		case 'i': case 'I': o |= PCRE2_CASELESS; break;
		case 'm': case 'M': o |= PCRE2_MULTILINE; break;
		case 's': case 'S': o |= PCRE2_DOTALL; break;
		case 'x': case 'X': o |= PCRE2_EXTENDED; break;
		default: break;
		}
	}
	return pcre2_compile((PCRE2_SPTR)pat, len, o, &err, &off, NULL);
}

void
nl_cad_rx_free(void *rx)
{
	pcre2_code_free(rx);
}

int
nl_cad_rx_opt_arg(int fn, uint32_t n)
{
	switch (fn) {
	case NL_CAD_F_REGEXP:
	case NL_CAD_F_REGEXPMEMBER: return n == 3 ? 2 : -1;
	case NL_CAD_F_REGEXPS:
	case NL_CAD_F_REPLACE:
	case NL_CAD_F_REPLACEALL: return n == 4 ? 3 : -1;
	case NL_CAD_F_SL_REGEXPMEMBER: return n == 4 ? 3 : -1;
	default: return -2; /* not a regex built-in */
	}
}

static bool
has_opt(const struct nl_cad_val *o, char c)
{
	return o != NULL && (memchr(o->u.s, c, (size_t)o->aux) != NULL ||
			     memchr(o->u.s, c - 32, (size_t)o->aux) != NULL);
}

/* Match (repl == NULL: true/false) or substitute (regexps; 'f' whole target, 'g' all). */
static struct nl_cad_val
rx_run(struct nl_cad_ctx *ctx, pcre2_code *re, const struct nl_cad_val *target,
       const struct nl_cad_val *repl, const struct nl_cad_val *opts)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	const char *t = target->u.s;
	size_t tlen = (size_t)target->aux, idx = 0;
	struct sbuf b = { .ctx = ctx };
	bool full = repl != NULL && has_opt(opts, 'f');
	bool all = repl != NULL && has_opt(opts, 'g');
	bool empty = false;
	int rc;
	struct nl_cad_val res = ERRV;

	if (md == NULL)
		return ERRV;
	do {
		rc = pcre2_match(re, (PCRE2_SPTR)t, tlen, idx,
				 empty ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0, md, NULL);
		if (empty && rc == PCRE2_ERROR_NOMATCH) {
			/* after an empty match, step one character and search again */
			if (idx >= tlen)
				break;
			if (full)
				sb_add(&b, t + idx, 1);
			idx++;
			empty = false;
			rc = 0;
			continue;
		}
		if (rc < 0 || repl == NULL)
			break;
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);

		if (full)
			sb_add(&b, t + idx, ov[0] - idx);
		for (int32_t k = 0; k < repl->aux; k++) {
			char c = repl->u.s[k];

			if (c == '\\' && k + 1 < repl->aux && isdigit((unsigned char)repl->u.s[k + 1])) {
				int g = repl->u.s[++k] - '0';

				if (g >= rc)
					goto out; /* a group the match does not have: error */
				if (ov[2 * g] != PCRE2_UNSET)
					sb_add(&b, t + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
			} else {
				sb_add(&b, &c, 1);
			}
		}
		idx = ov[1];
		empty = ov[0] == ov[1];
	} while (all && idx <= tlen);
	if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
		goto out;
	if (repl == NULL) {
		res = nl_cad_bool(rc >= 0);
	} else {
		if (full && idx < tlen)
			sb_add(&b, t + idx, tlen - idx);
		res = sb_val(&b);
	}
out:
	pcre2_match_data_free(md);
	return res;
}

static struct nl_cad_val
fn_regex(struct nl_cad_ctx *ctx, int fn, const struct nl_cad_val *a, uint32_t n, uint32_t site)
{
	int oa = nl_cad_rx_opt_arg(fn, n);
	const struct nl_cad_val *opts = oa >= 0 ? &a[oa] : NULL;
	const struct nl_cad_val *delim = NULL;
	struct nl_cad_val rv;

	if (fn == NL_CAD_F_SL_REGEXPMEMBER && n >= 3)
		delim = &a[2];
	/* error first, then undefined, then types (HTCondor's order) */
	for (uint32_t k = 0; k < n; k++)
		if (a[k].type == NL_CAD_ERROR)
			return ERRV;
	for (uint32_t k = 0; k < n; k++)
		if (a[k].type == NL_CAD_UNDEFINED)
			return UNDEFV;
	if ((opts != NULL && opts->type != NL_CAD_STRING) || a[0].type != NL_CAD_STRING ||
	    (delim != NULL && delim->type != NL_CAD_STRING))
		return ERRV;
	if (fn == NL_CAD_F_REGEXPMEMBER ? a[1].type != NL_CAD_LIST : a[1].type != NL_CAD_STRING)
		return ERRV;
	if ((fn == NL_CAD_F_REGEXPS || fn == NL_CAD_F_REPLACE || fn == NL_CAD_F_REPLACEALL) &&
	    a[2].type != NL_CAD_STRING)
		return ERRV;
	pcre2_code *re = site > 0 ? ctx->prog->rx[site - 1] : NULL;
	bool own = re == NULL;

	if (own) {
		re = nl_cad_rx_compile(a[0].u.s, (uint32_t)a[0].aux, opts ? opts->u.s : "",
				       opts ? (uint32_t)opts->aux : 0);
		if (re == NULL)
			return ERRV;
	}
	switch (fn) {
	case NL_CAD_F_REGEXP:
		rv = rx_run(ctx, re, &a[1], NULL, opts);
		break;
	case NL_CAD_F_REGEXPS:
	case NL_CAD_F_REPLACE:
	case NL_CAD_F_REPLACEALL: {
		char o[8];
		struct nl_cad_val ov;
		uint32_t k = 0;

		if (opts != NULL && has_opt(opts, 'f'))
			o[k++] = 'f';
		if (opts != NULL && has_opt(opts, 'g'))
			o[k++] = 'g';
		if (fn != NL_CAD_F_REGEXPS)
			o[k++] = 'f';
		if (fn == NL_CAD_F_REPLACEALL)
			o[k++] = 'g';
		o[k] = 0;
		ov = nl_cad_str(o, k);
		rv = rx_run(ctx, re, &a[1], &a[2], &ov);
		break;
	}
	case NL_CAD_F_REGEXPMEMBER: {
		bool undef = false;

		rv = nl_cad_bool(false);
		for (int32_t k = 0; k < a[1].aux; k++) {
			const struct nl_cad_val *e = &a[1].u.l[k];

			if (e->type == NL_CAD_UNDEFINED) {
				undef = true;
				continue;
			}
			if (e->type != NL_CAD_STRING) {
				rv = ERRV;
				break;
			}
			struct nl_cad_val m = rx_run(ctx, re, e, NULL, NULL);

			if (m.type == NL_CAD_ERROR || nl_cad_is_true(&m)) {
				rv = m;
				break;
			}
		}
		if (rv.type == NL_CAD_BOOL && !rv.u.b && undef)
			rv = UNDEFV;
		break;
	}
	default: { /* stringList_regexpMember(pattern, list [, delimiter] [, options]) */
		struct slit it;
		const char *item;
		uint32_t ilen;

		rv = nl_cad_bool(false);
		sl_init(&it, &a[1], delim, true);
		while (sl_next(&it, &item, &ilen)) {
			struct nl_cad_val s = nl_cad_mkstr(ctx, item, ilen);
			struct nl_cad_val m = s.type == NL_CAD_STRING ? rx_run(ctx, re, &s, NULL, NULL)
								     : ERRV;

			if (m.type == NL_CAD_ERROR || nl_cad_is_true(&m)) {
				rv = m;
				break;
			}
		}
		break;
	}
	}
	if (own)
		pcre2_code_free(re);
	return rv;
}

/* ------------------------------------------------------------------ time */

struct split_schema {
	pthread_once_t once;
	struct nl_cad_schema abs, rel;
};

static struct split_schema split_sc = { .once = PTHREAD_ONCE_INIT };

static void
split_init(void)
{
	static const char *const an[] = {
		"Type", "Year", "Month", "Day", "Hours", "Minutes", "Seconds", "Offset",
	};
	static const char *const rn[] = { "Type", "Days", "Hours", "Minutes", "Seconds" };

	nl_cad_schema_init(&split_sc.abs, an, 8);
	nl_cad_schema_init(&split_sc.rel, rn, 5);
}

/* Calendar fields of an absolute time in its own zone (offset [s]). */
static void
abs_fields(int64_t secs, int32_t off, struct tm *tm)
{
	time_t t = (time_t)(secs + off);

	memset(tm, 0, sizeof(*tm));
	gmtime_r(&t, tm);
}

/* The local zone's offset at an instant [s east of UTC] (tzdata, TZ). */
static int32_t
local_offset(int64_t secs)
{
	time_t t = (time_t)secs;
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL)
		return 0;
	return (int32_t)tm.tm_gmtoff;
}

/* splitTime(t): a record of the fields of an absTime (or seconds, local zone) or relTime. */
static struct nl_cad_val
fn_splittime(struct nl_cad_ctx *ctx, const struct nl_cad_val *a)
{
	struct nl_cad_rec *r = nl_cad_arena(ctx, sizeof(*r));
	struct nl_cad_val *v = nl_cad_arena(ctx, 8 * sizeof(*v));
	int64_t secs;
	int32_t off;

	pthread_once(&split_sc.once, split_init);
	if (r == NULL || v == NULL)
		return ERRV;
	switch (a->type) {
	case NL_CAD_RELTIME: {
		double rs = fabs(a->u.rel_s);
		int64_t w;

		if (!nl_cad_d2i(rs, &w))
			return ERRV;
		int64_t days = w / 86400, hrs = w % 86400 / 3600, mins = w % 3600 / 60;
		double secs_r = (double)(w % 60) + (rs - floor(rs));

		if (a->u.rel_s < 0) {
			if (days > 0)
				days = -days;
			else if (hrs > 0)
				hrs = -hrs;
			else if (mins > 0)
				mins = -mins;
			else
				secs_r = -secs_r;
		}
		v[0] = nl_cad_str("RelativeTime", 12);
		v[1] = nl_cad_int(days);
		v[2] = nl_cad_int(hrs);
		v[3] = nl_cad_int(mins);
		v[4] = nl_cad_real(secs_r);
		r->schema = &split_sc.rel;
		r->vals = v;
		return nl_cad_record(r);
	}
	case NL_CAD_ABSTIME:
		secs = a->u.abs_s;
		off = a->aux;
		break;
	case NL_CAD_INT:
		secs = a->u.i;
		off = local_offset(secs);
		break;
	case NL_CAD_REAL:
		if (!nl_cad_d2i(a->u.r, &secs))
			return ERRV;
		off = local_offset(secs);
		break;
	default:
		return ERRV;
	}
	struct tm tm;

	abs_fields(secs, off, &tm);
	v[0] = nl_cad_str("AbsoluteTime", 12);
	v[1] = nl_cad_int(tm.tm_year + 1900);
	v[2] = nl_cad_int(tm.tm_mon + 1);
	v[3] = nl_cad_int(tm.tm_mday);
	v[4] = nl_cad_int(tm.tm_hour);
	v[5] = nl_cad_int(tm.tm_min);
	v[6] = nl_cad_int(tm.tm_sec);
	v[7] = nl_cad_int(off);
	r->schema = &split_sc.abs;
	r->vals = v;
	return nl_cad_record(r);
}

/* Attribute of a record value by name (frames evaluated through the context's hook). */
static struct nl_cad_val
rec_attr(struct nl_cad_ctx *ctx, const struct nl_cad_val *r, const char *name)
{
	uint32_t len = (uint32_t)strlen(name);

	if (r->kind == NL_CAD_REC_HOST) {
		const struct nl_cad_schema *sc = r->u.rec->schema;

		for (unsigned int i = 0; i < sc->n; i++)
			if (nl_cad_name_eq(sc->names[i], sc->len[i], name, len))
				return r->u.rec->vals[i];
		return UNDEFV;
	}
	const struct nl_cad_def *d = r->u.fr->def;

	for (uint32_t i = 0; i < d->n; i++)
		if (nl_cad_name_eq(d->names[i].s, d->names[i].len, name, len))
			return ctx->attr_fn(ctx, r->u.fr, i);
	return UNDEFV;
}

/* formatTime([t] [, format]): strftime() of t's fields (seconds: the local zone, from
 * tzdata; absTime: its own zone); default format "%c". */
static struct nl_cad_val
fn_formattime(struct nl_cad_ctx *ctx, const struct nl_cad_val *a, uint32_t n)
{
	struct tm tm;
	int64_t secs;
	int32_t off;
	const char *fmt = "%c";
	char out[1024];

	if (n == 0) {
		secs = nl_cad_now_s(ctx);
		off = local_offset(secs);
	} else {
		switch (a[0].type) {
		case NL_CAD_ABSTIME: secs = a[0].u.abs_s; off = a[0].aux; break;
		case NL_CAD_INT: secs = a[0].u.i; off = local_offset(secs); break;
		case NL_CAD_REAL:
			if (!nl_cad_d2i(a[0].u.r, &secs))
				return ERRV;
			off = local_offset(secs);
			break;
		case NL_CAD_RECORD: {
			/* a splitTime() record: its fields, as HTCondor's formatTime() reads them */
			static const char *const fld[] = {
				"Year", "Month", "Day", "Hours", "Minutes", "Seconds",
			};
			int64_t x[6] = { 1900, 1, 0, 0, 0, 0 };

			for (int k = 0; k < 6; k++) {
				struct nl_cad_val v = rec_attr(ctx, &a[0], fld[k]);

				if (v.type == NL_CAD_INT)
					x[k] = v.u.i;
				else if (v.type == NL_CAD_REAL && !nl_cad_d2i(v.u.r, &x[k]))
					x[k] = 0;
			}
			if (x[1] < 1 || x[1] > 12 || x[0] < 1 || x[0] > 9999)
				return ERRV;
			secs = (int64_t)nl_cad_days_from_civil(x[0], (unsigned int)x[1], 1) * 86400 +
			       (x[2] - 1) * 86400 + x[3] * 3600 + x[4] * 60 + x[5];
			off = 0;
			break;
		}
		default: return ERRV;
		}
		if (n == 2) {
			if (a[1].type != NL_CAD_STRING)
				return ERRV;
			fmt = a[1].u.s;
		}
	}
	if (secs > INT64_C(253402300799) || secs < INT64_C(-62135596800))
		return ERRV; /* outside years 1..9999 */
	abs_fields(secs, off, &tm);
	tm.tm_isdst = 0;
	tm.tm_gmtoff = 0;
	tm.tm_zone = NULL;
	out[0] = 0;
	size_t k = strftime(out, sizeof(out) - 1, fmt, &tm);

	out[k] = 0;
	return nl_cad_mkstr(ctx, out, k);
}

/* interval(seconds): "days+hh:mm:ss" with leading zero fields omitted ("1:07"). */
static struct nl_cad_val
fn_interval(struct nl_cad_ctx *ctx, const struct nl_cad_val *a)
{
	int64_t t, days, hrs, mins, secs;
	char buf[80];

	if (!to_int(a, &t))
		return ERRV;
	days = t / 86400;
	t %= 86400;
	hrs = t / 3600;
	t %= 3600;
	mins = t / 60;
	secs = t % 60;
	if (days != 0)
		snprintf(buf, sizeof(buf), "%lld+%02lld:%02lld:%02lld", (long long)days,
			 (long long)llabs(hrs), (long long)llabs(mins), (long long)llabs(secs));
	else if (hrs != 0)
		snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", (long long)hrs,
			 (long long)llabs(mins), (long long)llabs(secs));
	else if (mins != 0)
		snprintf(buf, sizeof(buf), "%lld:%02lld", (long long)mins, (long long)llabs(secs));
	else
		snprintf(buf, sizeof(buf), "%lld", (long long)secs);
	return nl_cad_mkstr(ctx, buf, strlen(buf));
}

/* ------------------------------------------------------------------ numbers */

static struct nl_cad_val
fn_pow(const struct nl_cad_val *a)
{
	double x, y;
	int64_t i;

	if (a[0].type == NL_CAD_INT && a[1].type == NL_CAD_INT && a[1].u.i >= 0) {
		/* HTCondor: (long long)(pow(base, exp) + 0.5), in doubles (so pow(-2, 3) is -7) */
		double d = pow((double)a[0].u.i, (double)a[1].u.i) + 0.5;

		return nl_cad_int(nl_cad_d2i(d, &i) ? i : INT64_MIN);
	}
	if (!to_real(&a[0], &x) || !to_real(&a[1], &y))
		return ERRV;
	return nl_cad_real(pow(x, y));
}

static struct nl_cad_val
fn_quantize(struct nl_cad_ctx *ctx, const struct nl_cad_val *a)
{
	double x, b = 0;
	struct nl_cad_val base = a[1];

	(void)ctx;
	if (!to_real(&a[0], &x))
		return ERRV;
	if (a[1].type == NL_CAD_LIST) {
		base = nl_cad_real(0);
		for (int32_t k = 0; k < a[1].aux; k++) {
			base = a[1].u.l[k];
			if (!to_real(&base, &b) || base.type == NL_CAD_STRING ||
			    base.type == NL_CAD_BOOL)
				return ERRV;
			if (b >= x)
				return base;
		}
	} else if (!to_real(&base, &b) || base.type == NL_CAD_STRING) {
		return ERRV;
	}
	if (base.type == NL_CAD_INT) {
		int64_t ib = base.u.i;

		if (ib == 0)
			return a[0];
		if (a[0].type == NL_CAD_INT) {
			/* the smallest multiple of ib >= a (ceil(a / ib) * ib, as for reals);
			 * error when it does not fit 64 bits (quantize(INT64_MAX, 2)) */
			int64_t ia = a[0].u.i, q, r;

			if (ib == -1 || ib == 1)
				return a[0];
			q = ia / ib;
			r = ia % ib;
			if (r != 0 && (r > 0) == (ib > 0))
				q++;
			if (__builtin_mul_overflow(q, ib, &r))
				return ERRV;
			return nl_cad_int(r);
		}
		return nl_cad_real(ceil(x / (double)ib) * (double)ib);
	}
	if (b >= -1e-8 && b <= 1e-8)
		return a[0];
	return nl_cad_real(ceil(x / b) * b);
}

/* anyCompare / allCompare(op, list, value). */
static struct nl_cad_val
fn_listcompare(int fn, const struct nl_cad_val *a)
{
	static const struct { const char *s; int op; } ops[] = {
		{ "<", NL_CAD_B_LT }, { "<=", NL_CAD_B_LE }, { "!=", NL_CAD_B_NE },
		{ "==", NL_CAD_B_EQ }, { ">", NL_CAD_B_GT }, { ">=", NL_CAD_B_GE },
		{ "is", NL_CAD_B_IS }, { "isnt", NL_CAD_B_ISNT },
	};
	bool all = fn == NL_CAD_F_ALLCOMPARE;
	int op = -1;

	if (a[0].type == NL_CAD_UNDEFINED)
		return UNDEFV;
	if (a[0].type != NL_CAD_STRING)
		return ERRV;
	for (unsigned int k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (strlen(ops[k].s) == (size_t)a[0].aux && memcmp(ops[k].s, a[0].u.s, (size_t)a[0].aux) == 0)
			op = ops[k].op;
	if (op < 0)
		return ERRV;
	if (a[1].type == NL_CAD_UNDEFINED)
		return UNDEFV;
	if (a[1].type != NL_CAD_LIST)
		return ERRV;
	for (int32_t k = 0; k < a[1].aux; k++) {
		struct nl_cad_val c = nl_cad_binop(op, &a[1].u.l[k], &a[2]);

		if (c.type == NL_CAD_UNDEFINED)
			return nl_cad_bool(!all ? false : false);
		if (c.type != NL_CAD_BOOL)
			return ERRV;
		if (c.u.b && !all)
			return nl_cad_bool(true);
		if (!c.u.b && all)
			return nl_cad_bool(false);
	}
	return nl_cad_bool(all);
}

/* bool(x): HTCondor's convBool. */
/* An absolute time given as absTime or as seconds since the epoch (plus_rsvutil's bounds).
 * @return false for any other type. */
static bool
time_arg(const struct nl_cad_val *v, int64_t *out_s)
{
	if (v->type == NL_CAD_ABSTIME)
		*out_s = v->u.abs_s;
	else if (v->type == NL_CAD_INT)
		*out_s = v->u.i;
	else
		return false;
	return true;
}

static struct nl_cad_val
fn_bool(const struct nl_cad_val *a)
{
	switch (a->type) {
	case NL_CAD_UNDEFINED: return UNDEFV;
	case NL_CAD_BOOL: return *a;
	case NL_CAD_INT: return nl_cad_bool(a->u.i != 0);
	case NL_CAD_REAL: return nl_cad_bool(a->u.r != 0);
	case NL_CAD_RELTIME: return nl_cad_bool(d2ll(a->u.rel_s) != 0); /* whole seconds */
	case NL_CAD_STRING:
		if (nl_cad_name_eq(a->u.s, (uint32_t)a->aux, "true", 4))
			return nl_cad_bool(true);
		if (nl_cad_name_eq(a->u.s, (uint32_t)a->aux, "false", 5))
			return nl_cad_bool(false);
		return UNDEFV;
	default: return ERRV;
	}
}

/* ------------------------------------------------------------------ issue #38 additions */

/* random([x]) (HTCondor's FunctionCall::random): an integer in [0, x) for an integer x (read
 * as an int) > 0, a real in [0, x) for a real x > 0, random(1.0) without an argument; error
 * otherwise. xorshift64* per thread, seeded from the clock: not for cryptography. */
static _Thread_local uint64_t rnd_state;

static uint64_t
rnd_next(void)
{
	if (rnd_state == 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		rnd_state = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^
			    (uint64_t)(uintptr_t)&ts;
		if (rnd_state == 0)
			rnd_state = 0x9E3779B97F4A7C15u;
	}
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 2685821657736338717u;
}

static struct nl_cad_val
fn_random(const struct nl_cad_val *a, uint32_t n)
{
	if (n == 0)
		return nl_cad_real((double)(rnd_next() >> 11) * 0x1p-53);
	if (a[0].type == NL_CAD_INT || a[0].type == NL_CAD_BOOL) {
		int32_t max = (int32_t)(uint32_t)(uint64_t)(a[0].type == NL_CAD_BOOL ? a[0].u.b
											: a[0].u.i);

		if (max <= 0)
			return ERRV;
		return nl_cad_int((int64_t)((rnd_next() >> 33) % (uint64_t)max));
	}
	if (a[0].type == NL_CAD_REAL) {
		if (!(a[0].u.r > 0))
			return ERRV;
		return nl_cad_real(a[0].u.r * ((double)(rnd_next() >> 11) * 0x1p-53));
	}
	return ERRV;
}

/* getYear() ... getSeconds() (HTCondor's FunctionCall::getField): fields of an absTime in the
 * local zone of the evaluating host (TZ), or days/hours/minutes/seconds of a relTime (whole
 * seconds); a field that does not apply, or another argument, is error. */
static struct nl_cad_val
fn_getfield(int fn, const struct nl_cad_val *a)
{
	if (a->type == NL_CAD_ABSTIME) {
		time_t clock = (time_t)a->u.abs_s;
		struct tm tm;

		if (localtime_r(&clock, &tm) == NULL)
			return ERRV;
		switch (fn) {
		case NL_CAD_F_GETYEAR: return nl_cad_int((int64_t)tm.tm_year + 1900);
		case NL_CAD_F_GETMONTH: return nl_cad_int(tm.tm_mon + 1);
		case NL_CAD_F_GETDAYOFYEAR: return nl_cad_int(tm.tm_yday);
		case NL_CAD_F_GETDAYOFMONTH: return nl_cad_int(tm.tm_mday);
		case NL_CAD_F_GETDAYOFWEEK: return nl_cad_int(tm.tm_wday);
		case NL_CAD_F_GETHOURS: return nl_cad_int(tm.tm_hour);
		case NL_CAD_F_GETMINUTES: return nl_cad_int(tm.tm_min);
		case NL_CAD_F_GETSECONDS: return nl_cad_int(tm.tm_sec);
		default: return ERRV; /* getDays */
		}
	}
	if (a->type == NL_CAD_RELTIME) {
		int64_t r = d2ll(a->u.rel_s);

		switch (fn) {
		case NL_CAD_F_GETDAYS: return nl_cad_int(r / 86400);
		case NL_CAD_F_GETHOURS: return nl_cad_int(r % 86400 / 3600);
		case NL_CAD_F_GETMINUTES: return nl_cad_int(r % 3600 / 60);
		case NL_CAD_F_GETSECONDS: return nl_cad_int(r % 60);
		default: return ERRV;
		}
	}
	return ERRV;
}

/* userHome(name [, default]) as HTCondor evaluates it with its default configuration
 * (CLASSAD_ENABLE_USER_HOME false: no user lookup): the default when it is a non-empty
 * string; else undefined, or error when name is neither a string nor undefined. */
static struct nl_cad_val
fn_userhome(const struct nl_cad_val *a, uint32_t n)
{
	if (n == 2 && a[1].type == NL_CAD_STRING && a[1].aux > 0)
		return a[1];
	if (a[0].type == NL_CAD_STRING || a[0].type == NL_CAD_UNDEFINED)
		return UNDEFV;
	return ERRV;
}

/* relTime(x) at evaluation (HTCondor's FunctionCall::convTime; a string literal was read by
 * the parser): an integer (all 64 bits; HTCondor reads an int) or a real is seconds, an absTime its seconds, a
 * string relTime(0) (the library's fall-through), undefined undefined, the rest error. */
static struct nl_cad_val
fn_reltime(const struct nl_cad_val *a, uint32_t n)
{
	if (n != 1)
		return ERRV;
	switch (a[0].type) {
	case NL_CAD_UNDEFINED: return UNDEFV;
	case NL_CAD_RELTIME: return a[0];
	case NL_CAD_INT: return nl_cad_reltime((double)a[0].u.i);
	case NL_CAD_REAL: return nl_cad_reltime(a[0].u.r);
	case NL_CAD_ABSTIME: return nl_cad_reltime((double)a[0].u.abs_s);
	case NL_CAD_STRING: return nl_cad_reltime(0);
	default: return ERRV;
	}
}

/* absTime([t [, z]]) at evaluation (HTCondor's convTime): no argument is currentTime(); an
 * integer (all 64 bits; HTCondor reads an int, wrong after 2038), a real (truncated) or a
 * relTime (whole seconds) is seconds since
 * the epoch, at offset z (an integer, a real or a relTime [s]; default UTC here, the local
 * zone in HTCondor); an absTime is returned as it is, a string too (the library's
 * fall-through; a string literal was read by the parser). */
static struct nl_cad_val
fn_abstime(struct nl_cad_ctx *ctx, const struct nl_cad_val *a, uint32_t n)
{
	int64_t secs, off = 0;

	if (n == 0) {
		int64_t now = nl_cad_now_s(ctx);

		return nl_cad_mkabs(now, local_offset(now));
	}
	if (n == 2) {
		if (a[1].type == NL_CAD_INT)
			off = (int32_t)(uint32_t)(uint64_t)a[1].u.i;
		else if (a[1].type == NL_CAD_REAL)
			off = (int32_t)d2ll(a[1].u.r);
		else if (a[1].type == NL_CAD_RELTIME)
			off = (int32_t)d2ll(a[1].u.rel_s);
		else
			return ERRV;
	}
	switch (a[0].type) {
	case NL_CAD_UNDEFINED: return UNDEFV;
	case NL_CAD_STRING:
	case NL_CAD_ABSTIME: return a[0];
	case NL_CAD_INT: secs = a[0].u.i; break;
	case NL_CAD_REAL:
		if (!nl_cad_d2i(a[0].u.r, &secs))
			return ERRV;
		break;
	case NL_CAD_RELTIME: secs = d2ll(a[0].u.rel_s); break;
	default: return ERRV;
	}
	if (off < -86400 || off > 86400)
		return ERRV;
	return nl_cad_mkabs(secs, (int32_t)off);
}

/* ------------------------------------------------------------------ environments */

/*
 * envV1ToV2() and mergeEnvironment(), HTCondor's compat_classad.cpp over its Env class
 * (condor_utils/env.cpp, condor_arglist.cpp): an environment is a map NAME -> value sorted by
 * name (bytes), a later setting of a name replacing an earlier one. V1 text: entries separated
 * by ';' (or by the first character when it is one of !#$%&*+,-/:;<>?@^`|~ and \x1F) or a
 * line break, leading blanks dropped, NAME=value each ("$$(X)" without '=' kept as it is).
 * V2 text: blank-separated arguments, '...' quoting with '' for a quote. Printed as V2:
 * NAME=value joined by blanks, quoted where they hold a blank or a quote.
 */
struct env_ent {
	const char *name, *val; /* val NULL: a "$$(...)" entry without a value */
	uint32_t nlen, vlen;
};

struct env {
	struct nl_cad_ctx *ctx;
	struct env_ent *e;
	uint32_t n, cap;
	bool bad;
};

static int
env_name_cmp(const char *a, uint32_t al, const char *b, uint32_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);

	return c != 0 ? c : al < bl ? -1 : al > bl;
}

/* Env::SetEnvWithErrorMessage(): false for an entry that is no NAME=value */
static bool
env_set(struct env *v, const char *s, uint32_t len)
{
	const char *eq = memchr(s, '=', len);
	uint32_t nlen = eq != NULL ? (uint32_t)(eq - s) : len;

	if (eq == NULL) {
		bool macro = false;

		for (uint32_t i = 0; i + 1 < len; i++)
			macro = macro || (s[i] == '$' && s[i + 1] == '$');
		if (!macro)
			return false;
	}
	if (nlen == 0)
		return false;
	uint32_t k = 0;

	while (k < v->n && env_name_cmp(v->e[k].name, v->e[k].nlen, s, nlen) < 0)
		k++;
	if (k == v->n || env_name_cmp(v->e[k].name, v->e[k].nlen, s, nlen) != 0) {
		if (v->n == v->cap) {
			uint32_t nc = v->cap ? v->cap * 2 : 16;
			struct env_ent *ne = nl_cad_arena(v->ctx, nc * sizeof(*ne));

			if (ne == NULL)
				return false;
			if (v->n)
				memcpy(ne, v->e, v->n * sizeof(*ne));
			v->e = ne;
			v->cap = nc;
		}
		memmove(&v->e[k + 1], &v->e[k], (v->n - k) * sizeof(*v->e));
		v->n++;
	}
	v->e[k] = (struct env_ent){ s, eq != NULL ? eq + 1 : NULL, nlen,
				    eq != NULL ? len - nlen - 1 : 0 };
	return true;
}

/* Env::MergeFromV1AutoDelim() */
static bool
env_v1(struct env *v, const char *s, uint32_t len)
{
	char delim = ';';
	uint32_t i = 0;

	if (len > 0 && s[0] == delim) {
		i = 1;
	} else if (len > 0 && s[0] != 0 && strchr("!#$%&*+,-/:;<>?@^`|~\x1F", s[0]) != NULL) {
		delim = s[0];
		i = 1;
	}
	while (i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
			i++;
		uint32_t b = i;

		while (i < len && s[i] != '\n' && s[i] != delim)
			i++;
		uint32_t e = i;

		if (i < len)
			i++;
		if (e > b && !env_set(v, s + b, e - b))
			return false;
	}
	return true;
}

/* Env::MergeFromV2Raw(): split_args() then each argument NAME=value */
static bool
env_v2(struct env *v, const char *s, uint32_t len)
{
	char *buf = nl_cad_arena(v->ctx, (size_t)len + 1);
	uint32_t i = 0, n = 0;
	bool tok = false;

	if (buf == NULL)
		return false;
	while (i <= len) {
		char c = i < len ? s[i] : ' ';

		if (c == '\'') {
			tok = true;
			for (i++;; i++) {
				if (i >= len)
					return false; /* unbalanced quote */
				if (s[i] == '\'') {
					if (i + 1 < len && s[i + 1] == '\'') {
						buf[n++] = '\'';
						i++;
						continue;
					}
					break;
				}
				buf[n++] = s[i];
			}
			i++;
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			i++;
			if (tok) {
				if (!env_set(v, buf, n))
					return false;
				buf = nl_cad_arena(v->ctx, (size_t)len + 1);
				if (buf == NULL)
					return false;
				n = 0;
				tok = false;
			}
		} else {
			tok = true;
			buf[n++] = c;
			i++;
		}
	}
	return true;
}

/* append_arg(): one argument, quoted where it holds a blank or a quote */
static void
env_put_arg(struct sbuf *b, const char *s, uint32_t len)
{
	if (b->len > 0)
		sb_add(b, " ", 1);
	if (len == 0)
		sb_add(b, "''", 2);
	for (uint32_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\'') {
			if (b->len > 0 && !b->oom && b->s[b->len - 1] == '\'')
				b->len--; /* join this quoted part with the one before */
			else
				sb_add(b, "'", 1);
			if (c == '\'')
				sb_add(b, "'", 1);
			sb_add(b, &c, 1);
			sb_add(b, "'", 1);
		} else {
			sb_add(b, &c, 1);
		}
	}
}

static struct nl_cad_val
env_text(struct env *v)
{
	struct sbuf b = { .ctx = v->ctx };

	sb_add(&b, "", 0);
	for (uint32_t k = 0; k < v->n; k++) {
		const struct env_ent *e = &v->e[k];
		char *t = nl_cad_arena(v->ctx, (size_t)e->nlen + e->vlen + 2);

		if (t == NULL)
			return ERRV;
		memcpy(t, e->name, e->nlen);
		if (e->val != NULL) {
			t[e->nlen] = '=';
			memcpy(t + e->nlen + 1, e->val, e->vlen);
		}
		env_put_arg(&b, t, e->nlen + (e->val != NULL ? e->vlen + 1 : 0));
	}
	return sb_val(&b);
}

/* envV1ToV2(s): undefined for undefined, error for a non-string or text that does not read */
static struct nl_cad_val
fn_envv1tov2(struct nl_cad_ctx *ctx, const struct nl_cad_val *a)
{
	struct env v = { .ctx = ctx };

	if (a->type == NL_CAD_UNDEFINED)
		return UNDEFV;
	if (a->type != NL_CAD_STRING || !env_v1(&v, a->u.s, (uint32_t)a->aux))
		return ERRV;
	return env_text(&v);
}

/* mergeEnvironment(s...): V2 texts merged left to right, undefined ones skipped */
static struct nl_cad_val
fn_mergeenv(struct nl_cad_ctx *ctx, const struct nl_cad_val *a, uint32_t n)
{
	struct env v = { .ctx = ctx };

	for (uint32_t k = 0; k < n; k++) {
		if (a[k].type == NL_CAD_UNDEFINED)
			continue;
		if (a[k].type != NL_CAD_STRING || !env_v2(&v, a[k].u.s, (uint32_t)a[k].aux))
			return ERRV;
	}
	return env_text(&v);
}

/* unresolved(attr, pattern) when evaluated (hasRefs): a[0] is the list of the attribute's
 * external names the compiler found; true when the pattern (PCRE2, caseless) matches one of
 * them, false when none; error for a pattern that is no string or no regular expression. */
static struct nl_cad_val
fn_unresolved(const struct nl_cad_val *a)
{
	if (a[1].type != NL_CAD_STRING)
		return ERRV;
	pcre2_code *re = nl_cad_rx_compile(a[1].u.s, (uint32_t)a[1].aux, "i", 1);

	if (re == NULL)
		return ERRV;
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	bool hit = false;

	for (int32_t k = 0; md != NULL && !hit && k < a[0].aux; k++)
		hit = pcre2_match(re, (PCRE2_SPTR)a[0].u.l[k].u.s, (PCRE2_SIZE)a[0].u.l[k].aux, 0,
				  PCRE2_NOTEMPTY, md, NULL) > 0;
	pcre2_match_data_free(md);
	nl_cad_rx_free(re);
	return nl_cad_bool(hit);
}

/* ------------------------------------------------------------------ dispatch */

struct nl_cad_val
nl_cad_call(struct nl_cad_ctx *ctx, int fn, const struct nl_cad_val *a, uint32_t n, uint32_t site)
{
	const struct nl_cad_val *base = a + n; /* stack above the arguments: free for string() */
	double r;
	int64_t i;

	/* built-ins that look at undefined/error arguments themselves */
	switch (fn) {
	case NL_CAD_F_ISUNDEFINED: return nl_cad_bool(a[0].type == NL_CAD_UNDEFINED);
	case NL_CAD_F_ISERROR: return nl_cad_bool(a[0].type == NL_CAD_ERROR);
	case NL_CAD_F_ISINTEGER: return nl_cad_bool(a[0].type == NL_CAD_INT);
	case NL_CAD_F_ISREAL: return nl_cad_bool(a[0].type == NL_CAD_REAL);
	case NL_CAD_F_ISSTRING: return nl_cad_bool(a[0].type == NL_CAD_STRING);
	case NL_CAD_F_ISBOOLEAN: return nl_cad_bool(a[0].type == NL_CAD_BOOL);
	case NL_CAD_F_ISLIST: return nl_cad_bool(a[0].type == NL_CAD_LIST);
	case NL_CAD_F_ISCLASSAD: return nl_cad_bool(a[0].type == NL_CAD_RECORD);
	case NL_CAD_F_ISABSTIME: return nl_cad_bool(a[0].type == NL_CAD_ABSTIME);
	case NL_CAD_F_ISRELTIME: return nl_cad_bool(a[0].type == NL_CAD_RELTIME);
	case NL_CAD_F_DEBUG: return a[0];
	case NL_CAD_F_IDENTICALMEMBER:
		if (a[1].type == NL_CAD_UNDEFINED)
			return UNDEFV;
		if (a[1].type != NL_CAD_LIST || a[0].type == NL_CAD_LIST ||
		    a[0].type == NL_CAD_RECORD)
			return ERRV;
		for (int32_t k = 0; k < a[1].aux; k++)
			if (nl_cad_identical(&a[0], &a[1].u.l[k]))
				return nl_cad_bool(true);
		return nl_cad_bool(false);
	case NL_CAD_F_MEMBER: {
		const struct nl_cad_val *x = &a[0], *l = &a[1];

		if (l->type == NL_CAD_UNDEFINED || x->type == NL_CAD_UNDEFINED)
			return UNDEFV;
		if (l->type != NL_CAD_LIST || x->type == NL_CAD_LIST || x->type == NL_CAD_RECORD ||
		    x->type == NL_CAD_ERROR)
			return ERRV;
		for (int32_t k = 0; k < l->aux; k++) {
			const struct nl_cad_val *e = &l->u.l[k];

			/* fast path (Fig. 4's name list): == on two strings ignores case */
			if (x->type == NL_CAD_STRING && e->type == NL_CAD_STRING) {
				if (nl_cad_name_eq(x->u.s, (uint32_t)x->aux, e->u.s, (uint32_t)e->aux))
					return nl_cad_bool(true);
				continue;
			}
			struct nl_cad_val c = nl_cad_binop(NL_CAD_B_EQ, e, x);

			if (nl_cad_is_true(&c))
				return c;
		}
		return nl_cad_bool(false);
	}
	case NL_CAD_F_TIME: return nl_cad_int(nl_cad_now_s(ctx));
	case NL_CAD_F_CURRENTTIME: {
		int64_t now = nl_cad_now_s(ctx);

		return nl_cad_mkabs(now, local_offset(now));
	}
	case NL_CAD_F_STRCAT:
	case NL_CAD_F_JOIN:
		for (uint32_t k = 0; k < n; k++)
			if (a[k].type == NL_CAD_ERROR)
				return ERRV;
		return fn_strcat(ctx, fn, a, n, base);
	case NL_CAD_F_TOUPPER:
	case NL_CAD_F_TOLOWER: {
		struct nl_cad_val s = to_str(ctx, &a[0], base);

		if (s.type != NL_CAD_STRING)
			return s;
		struct nl_cad_val v = nl_cad_mkstr(ctx, s.u.s, (size_t)s.aux);

		if (v.type != NL_CAD_STRING)
			return v;
		char *c = (char *)(uintptr_t)v.u.s;

		for (int32_t k = 0; k < v.aux; k++) {
			if (fn == NL_CAD_F_TOUPPER && c[k] >= 'a' && c[k] <= 'z')
				c[k] = (char)(c[k] - 32);
			if (fn == NL_CAD_F_TOLOWER && c[k] >= 'A' && c[k] <= 'Z')
				c[k] = (char)(c[k] + 32);
		}
		return v;
	}
	case NL_CAD_F_STRCMP:
	case NL_CAD_F_STRICMP: {
		if (a[0].type == NL_CAD_UNDEFINED || a[1].type == NL_CAD_UNDEFINED)
			return UNDEFV;
		struct nl_cad_val x = to_str(ctx, &a[0], base), y = to_str(ctx, &a[1], base);

		if (x.type != NL_CAD_STRING || y.type != NL_CAD_STRING)
			return ERRV;
		int c = fn == NL_CAD_F_STRCMP ? strcmp(x.u.s, y.u.s) : strcasecmp(x.u.s, y.u.s);

		return nl_cad_int(c < 0 ? -1 : c > 0);
	}
	case NL_CAD_F_VERSIONCMP:
	case NL_CAD_F_VERSIONGT:
	case NL_CAD_F_VERSIONLT:
	case NL_CAD_F_VERSIONGE:
	case NL_CAD_F_VERSIONLE:
	case NL_CAD_F_VERSIONEQ:
	case NL_CAD_F_VERSION_IN_RANGE:
		return fn_version(ctx, fn, a, n, base);
	case NL_CAD_F_SL_SIZE:
	case NL_CAD_F_SL_SUM:
	case NL_CAD_F_SL_AVG:
	case NL_CAD_F_SL_MIN:
	case NL_CAD_F_SL_MAX:
	case NL_CAD_F_SL_MEMBER:
	case NL_CAD_F_SL_IMEMBER:
	case NL_CAD_F_SL_INTERSECT:
	case NL_CAD_F_SL_SUBSETMATCH:
	case NL_CAD_F_SL_ISUBSETMATCH:
		return fn_stringlist(fn, a, n);
	case NL_CAD_F_REGEXP:
	case NL_CAD_F_REGEXPS:
	case NL_CAD_F_REGEXPMEMBER:
	case NL_CAD_F_REPLACE:
	case NL_CAD_F_REPLACEALL:
	case NL_CAD_F_SL_REGEXPMEMBER:
		return fn_regex(ctx, fn, a, n, site);
	case NL_CAD_F_FORMATTIME: return fn_formattime(ctx, a, n);
	case NL_CAD_F_INTERVAL: return fn_interval(ctx, a);
	case NL_CAD_F_POW: return fn_pow(a);
	case NL_CAD_F_QUANTIZE: return fn_quantize(ctx, a);
	case NL_CAD_F_ANYCOMPARE:
	case NL_CAD_F_ALLCOMPARE: return fn_listcompare(fn, a);
	case NL_CAD_F_BOOL: return fn_bool(&a[0]);
	case NL_CAD_F_FLOOR:
	case NL_CAD_F_CEILING:
	case NL_CAD_F_CEIL:
	case NL_CAD_F_ROUND: return fn_round(fn, &a[0]);
	case NL_CAD_F_INT:
		if (a[0].type == NL_CAD_UNDEFINED)
			return UNDEFV;
		return to_int(&a[0], &i) ? nl_cad_int(i) : ERRV;
	case NL_CAD_F_REAL:
		if (a[0].type == NL_CAD_UNDEFINED)
			return UNDEFV;
		return to_real(&a[0], &r) ? nl_cad_real(r) : ERRV;
	case NL_CAD_F_STRING: return to_str(ctx, &a[0], base);
	/* split*() of anything but a string, undefined too, is error (compat_classad.cpp) */
	case NL_CAD_F_SPLIT: return fn_split(ctx, a, n);
	case NL_CAD_F_SPLITUSERNAME:
	case NL_CAD_F_SPLITSLOTNAME: return fn_split_at(ctx, fn, a);
	case NL_CAD_F_SUBSTR: {
		/* HTCondor (subString): undefined first, then the types */
		for (uint32_t k = 0; k < n; k++)
			if (a[k].type == NL_CAD_UNDEFINED)
				return UNDEFV;
		if (a[0].type != NL_CAD_STRING || a[1].type != NL_CAD_INT ||
		    (n == 3 && a[2].type != NL_CAD_INT))
			return ERRV;
		int64_t len = a[0].aux, off = a[1].u.i, cnt;

		if (off < 0)
			off = len + off;
		if (off < 0)
			off = 0;
		if (off > len)
			off = len;
		cnt = len - off;
		if (n == 3) {
			int64_t c = a[2].u.i;

			cnt = c >= 0 ? (c < cnt ? c : cnt) : (cnt + c > 0 ? cnt + c : 0);
		}
		return nl_cad_mkstr(ctx, a[0].u.s + off, (size_t)cnt);
	}
	case NL_CAD_F_RANDOM: return fn_random(a, n);
	case NL_CAD_F_ENVV1TOV2: return fn_envv1tov2(ctx, &a[0]);
	case NL_CAD_F_UNRESOLVED: return fn_unresolved(a);
	case NL_CAD_F_MERGEENV: return fn_mergeenv(ctx, a, n);
	case NL_CAD_F_USERHOME: return fn_userhome(a, n);
	case NL_CAD_F_USERMAP:
		/* HTCondor's userMap_func without map files (no CLASSAD_USER_MAP_NAMES): no user
		 * maps, so undefined, or the 4th argument; error when the map or user name is */
		if ((a[0].type != NL_CAD_STRING || a[1].type != NL_CAD_STRING) &&
		    (a[0].type == NL_CAD_ERROR || a[1].type == NL_CAD_ERROR))
			return ERRV;
		return n == 4 ? a[3] : UNDEFV;
	case NL_CAD_F_TZOFFSET: {
		int64_t now = nl_cad_now_s(ctx);

		return nl_cad_reltime((double)local_offset(now));
	}
	case NL_CAD_F_DAYTIME: {
		time_t now = (time_t)nl_cad_now_s(ctx);
		struct tm tm;

		if (localtime_r(&now, &tm) == NULL)
			return ERRV;
		return nl_cad_reltime((double)(tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec));
	}
	case NL_CAD_F_GETYEAR:
	case NL_CAD_F_GETMONTH:
	case NL_CAD_F_GETDAYOFYEAR:
	case NL_CAD_F_GETDAYOFMONTH:
	case NL_CAD_F_GETDAYOFWEEK:
	case NL_CAD_F_GETDAYS:
	case NL_CAD_F_GETHOURS:
	case NL_CAD_F_GETMINUTES:
	case NL_CAD_F_GETSECONDS: return fn_getfield(fn, &a[0]);
	case NL_CAD_F_RELTIME: return fn_reltime(a, n);
	case NL_CAD_F_ABSTIME:
		if (n == 2 && a[1].type == NL_CAD_ERROR)
			return ERRV;
		if (n == 2 && a[1].type == NL_CAD_UNDEFINED)
			return ERRV;
		return fn_abstime(ctx, a, n);
	default: break;
	}
	/* the rest are strict in every argument: error first, then undefined */
	struct nl_cad_val sv;

	if (strict_args(a, n, &sv))
		return sv;
	switch (fn) {
	case NL_CAD_F_SPLITTIME:
		return fn_splittime(ctx, &a[0]);
	case NL_CAD_F_SIZE:
		switch (a[0].type) {
		case NL_CAD_LIST:
		case NL_CAD_STRING: return nl_cad_int(a[0].aux);
		case NL_CAD_RECORD:
			return nl_cad_int(a[0].kind == NL_CAD_REC_HOST ? a[0].u.rec->schema->n
								      : a[0].u.fr->def->n);
		default: return ERRV;
		}
	case NL_CAD_F_MIN:
	case NL_CAD_F_MAX:
	case NL_CAD_F_SUM:
	case NL_CAD_F_AVG: return fn_minmax(fn, &a[0]);
	case NL_CAD_F_LINEAR: {
		double x, x1, y1, x2, y2;

		if (!as_double(&a[0], &x) || !as_double(&a[1], &x1) || !as_double(&a[2], &y1) ||
		    !as_double(&a[3], &x2) || !as_double(&a[4], &y2) || x1 == x2)
			return ERRV;
		return nl_cad_real(y1 + (x - x1) * (y2 - y1) / (x2 - x1));
	}
	case NL_CAD_F_PLUS_RSVUTIL: {
		int64_t from, to;

		if (a[0].type != NL_CAD_STRING || !time_arg(&a[1], &from) || !time_arg(&a[2], &to))
			return ERRV;
		if (ctx->rsvutil == NULL)
			return UNDEFV;
		struct nl_cad_val *out = nl_cad_arena(ctx, 3 * sizeof(*out));

		if (out == NULL)
			return ERRV;
		if (ctx->rsvutil(ctx->rsvutil_arg, a[0].u.s, (uint32_t)a[0].aux, from, to, out) < 0)
			return ERRV;
		return nl_cad_list(out, 3);
	}
	default:
		return ERRV;
	}
}
