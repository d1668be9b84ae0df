/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nl_classad language tests (TAP): truth tables of &&, || and ! over
 * false/undefined/error/true, strictness, string case rules, promotion, time arithmetic,
 * scoping (parent/self/root, nested records), list mapping by select, built-ins' undefined and
 * error behaviour, circular references, precedence/associativity, parse error positions and
 * refusal of pathological nesting.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nl_classad.h"
#include "nl_tap.h"


/* 2024-01-01T00:00:00Z */
#define NOW 1704067200

/* Evaluate expr in the scope of record rec; compare the unparsed value with want. */
static void
ckr(const char *rec, const char *expr, const char *want)
{
	struct nl_cad_prog *p = NULL;
	struct nl_cad_ctx *c = NULL;
	struct nl_cad_err e;
	struct nl_cad_val v;
	char buf[512] = "(parse error)";
	int rc = nl_cad_parse(rec, strlen(rec), &p, &e);
	int slot = rc == 0 ? nl_cad_parse_expr(p, expr, strlen(expr), &e) : rc;

	if (slot >= 0 && nl_cad_ctx_create(p, &c) == 0) {
		nl_cad_ctx_set_now(c, NOW);
		nl_cad_eval(c, slot, &v);
		nl_cad_format(c, &v, buf, sizeof(buf));
	} else {
		snprintf(buf, sizeof(buf), "(parse error %u:%u %s)", e.line, e.col, e.msg);
	}
	nl_tap_ok(strcmp(buf, want) == 0, "[%s] %s => %s (want %s)", rec, expr, buf, want);
	nl_cad_ctx_free(c);
	nl_cad_prog_free(p);
}

static void
ck(const char *expr, const char *want)
{
	ckr("", expr, want);
}

/* Parse must fail at line:col with a message containing msg. */
static void
ck_perr(const char *src, bool as_expr, unsigned int line, unsigned int col, const char *msg,
	int want_rc)
{
	struct nl_cad_prog *p = NULL;
	struct nl_cad_err e = { 0 };
	int rc;

	if (as_expr) {
		rc = nl_cad_parse("", 0, &p, &e);
		rc = rc == 0 ? nl_cad_parse_expr(p, src, strlen(src), &e) : rc;
	} else {
		rc = nl_cad_parse(src, strlen(src), &p, &e);
	}
	bool good = rc == want_rc && e.line == line && e.col == col && strstr(e.msg, msg) != NULL;

	nl_tap_ok(good, "parse error %.40s: rc %d at %u:%u '%s' (want %d at %u:%u '%s')", src, rc,
	   e.line, e.col, e.msg, want_rc, line, col, msg);
	nl_cad_prog_free(p);
}

static const char *const tv_src[4] = { "false", "undefined", "error", "true" };

static void
test_truth_tables(void)
{
	/* HTCondor 23.0: left to right, short-circuit; undefined && false = false, ... */
	static const char *const and_tab[4][4] = {
		/* right: false undefined error true */
		{ "false", "false", "false", "false" },         /* left false */
		{ "false", "undefined", "error", "undefined" }, /* left undefined */
		{ "error", "error", "error", "error" },         /* left error */
		{ "false", "undefined", "error", "true" },      /* left true */
	};
	static const char *const or_tab[4][4] = {
		{ "false", "undefined", "error", "true" },
		{ "undefined", "undefined", "error", "true" },
		{ "error", "error", "error", "error" },
		{ "true", "true", "true", "true" },
	};
	static const char *const not_tab[4] = { "true", "undefined", "error", "false" };
	char e[64];

	for (int l = 0; l < 4; l++) {
		for (int r = 0; r < 4; r++) {
			snprintf(e, sizeof(e), "%s && %s", tv_src[l], tv_src[r]);
			ck(e, and_tab[l][r]);
			snprintf(e, sizeof(e), "%s || %s", tv_src[l], tv_src[r]);
			ck(e, or_tab[l][r]);
		}
		snprintf(e, sizeof(e), "!%s", tv_src[l]);
		ck(e, not_tab[l]);
	}
	/* non-boolean operands: numbers are boolean-equivalent, the rest are error */
	ck("1 && true", "true");
	ck("0 || 0.0", "false");
	ck("\"a\" && true", "error");
	ck("true && \"a\"", "error");
	ck("!3", "false");
	ck("!\"x\"", "error");
	/* short circuit really skips the right side (its error never shows) */
	ck("false && 1/0", "false");
	ck("true || 1/0", "true");
}

static void
test_strict(void)
{
	ck("1 + undefined", "undefined");
	ck("undefined + error", "error");
	ck("error + undefined", "error");
	ck("undefined == undefined", "undefined");
	ck("undefined < 1", "undefined");
	ck("-undefined", "undefined");
	ck("-error", "error");
	ck("\"a\" + 1", "error");
	ck("1 == \"1\"", "error");
	ck("undefined is undefined", "true");
	ck("undefined =?= undefined", "true");
	ck("error is error", "true");
	ck("undefined isnt 1", "true");
	ck("1 =!= undefined", "true");
	ck("1 is 1.0", "false");
	ck("1 == 1.0", "true");
	ck("true ? 1 : 2", "1");
	ck("false ? 1 : 2", "2");
	ck("undefined ? 1 : 2", "undefined");
	ck("error ? 1 : 2", "error");
	ck("\"s\" ? 1 : 2", "error");
	ck("undefined ?: 7", "7");
	ck("3 ?: 7", "3");
	ck("error ?: 7", "error");
	ck("isUndefined(nosuch)", "true");
}

static void
test_strings(void)
{
	ck("\"ABC\" == \"abc\"", "true");
	ck("\"ABC\" != \"abc\"", "false");
	ck("\"ABC\" is \"abc\"", "false");
	ck("\"abc\" is \"abc\"", "true");
	ck("\"ABC\" isnt \"abc\"", "true");
	ck("\"a\" < \"B\"", "true");
	ck("\"b\" > \"A\"", "true");
	ck("\"ab\" < \"abc\"", "true");
	ck("member(\"USERA\", {\"userA\", \"userB\"})", "true");
	ck("identicalMember(\"USERA\", {\"userA\", \"userB\"})", "false");
	ck("identicalMember(\"userA\", {\"userA\", \"userB\"})", "true");
	ck("\"tab\\tq\\\"\"", "\"tab\\tq\\\"\"");
	ck("size(\"h\\n\")", "2");
}

static void
test_numbers(void)
{
	ck("7 / 2", "3");
	ck("-7 / 2", "-3");
	ck("7 % 3", "1");
	ck("7.0 / 2", "3.5");
	ck("7 / 2.0", "3.5");
	ck("1 / 0", "error");
	ck("1 % 0", "error");
	ck("1.0 / 0", "error");
	ck("1 + 2.5", "3.5");
	ck("true + 1", "2");
	ck("3 * 0.5", "1.5");
	ck("2 < 2.5", "true");
	ck("0.1 + 0.2 == 0.3", "false");
	ck("9223372036854775807 + 1", "-9223372036854775808");
	ck("-9223372036854775807 - 1", "-9223372036854775808");
	ck("(-9223372036854775807 - 1) / -1", "9223372036854775807"); /* HTCondor: INT64_MAX */
	ck("0x10", "0");   /* HTCondor 23.3 on: integers read base 10 (std::from_chars) */
	ck("010", "10");
	ck("1e3", "1000.0");
	ck(".5", "0.5");
	ck("1 << 4", "16");
	ck("-16 >> 2", "-4");
	ck("-1 >>> 60", "15");
	ck("6 & 3", "2");
	ck("6 | 3", "7");
	ck("6 ^ 3", "5");
	ck("~0", "-1");
	ck("true & false", "error"); /* HTCondor: bitwise on integers only */
	ck("6 & 3", "2");
	ck("~true", "error");
	ck("1.5 & 1", "error");
}

/* quantize() of integers: ceil(a / b) * b without overflow; error when it does not fit */
static void
test_quantize_ints(void)
{
	ck("quantize(9223372036854775807, 2)", "error");
	ck("quantize(9223372036854775807, 1)", "9223372036854775807");
	ck("quantize(9223372036854775806, 2)", "9223372036854775806");
	ck("quantize(9223372036854775807, 9223372036854775807)", "9223372036854775807");
	ck("quantize(-9223372036854775807 - 1, -1)", "-9223372036854775808");
	ck("quantize(-9223372036854775807 - 1, 2)", "-9223372036854775808");
	ck("quantize(-9223372036854775807 - 1, 3)", "-9223372036854775806");
	ck("quantize(-4, 2)", "-4"); /* as quantize(-4.0, 2) */
	ck("quantize(-5, 2)", "-4");
	ck("quantize(5, -2)", "4"); /* ceil(5 / -2) * -2, as quantize(5.0, -2) */
	ck("quantize(7, 7)", "7");
}

static void
test_time(void)
{
	ck("absTime(\"2024-01-01T00:00:00Z\")", "absTime(\"2024-01-01T00:00:00-00:00\")");
	ck("absTime(\"2024-01-01T09:00:00+09:00\") == absTime(\"2024-01-01T00:00:00Z\")", "true");
	ck("absTime(\"2024-01-01T00:00:00Z\") + relTime(\"1d\")",
	   "absTime(\"2024-01-02T00:00:00-00:00\")");
	ck("relTime(\"1h\") + absTime(\"2024-01-01T00:00:00Z\")",
	   "absTime(\"2024-01-01T01:00:00-00:00\")");
	ck("absTime(\"2024-01-01T00:00:00Z\") - relTime(\"00:30:00\")",
	   "absTime(\"2023-12-31T23:30:00-00:00\")");
	ck("absTime(\"2024-01-02T00:00:00Z\") - absTime(\"2024-01-01T00:00:00Z\")",
	   "relTime(\"1+00:00:00\")");
	ck("relTime(\"00:30:00\") * 2", "relTime(\"01:00:00\")");
	ck("3 * relTime(\"10s\")", "relTime(\"30\")");
	ck("relTime(\"1h\") / 2", "relTime(\"30:00\")");
	ck("relTime(\"2d\") - relTime(\"1d12h\")", "relTime(\"12:00:00\")");
	ck("relTime(\"1+02:03:04\")", "relTime(\"1+02:03:04\")");
	ck("relTime(\"-00:00:10\")", "relTime(\"-10\")");
	ck("relTime(\"7d\") == relTime(\"7+00:00:00\")", "true");
	ck("relTime(\"0\") < relTime(\"1s\")", "true");
	ck("relTime(90)", "relTime(\"01:30\")");
	ck("absTime(\"2024-01-01T00:00:00Z\") + absTime(\"2024-01-01T00:00:00Z\")", "error");
	ck("absTime(\"2024-01-01T00:00:00Z\") * 2", "error");
	ck("absTime(\"2024-01-01T00:00:00Z\") < 5", "error");
	ck("relTime(\"1h\") + 1", "error");
	/* HTCondor's parser reads a time literal; text that is no time is a parse error */
	ck_perr("absTime(\"garbage\")", true, 1, 1, "is not a time", -EINVAL);
	ck_perr("relTime(\"3x\")", true, 1, 1, "is not a time", -EINVAL);
	ck("relTime(strcat(\"3\"))", "relTime(\"00\")"); /* convTime: a string value is 0 */
	ck("time()", "1704067200");
	ck("absTime(time())", "absTime(\"2024-01-01T00:00:00-00:00\")");
	ck("absTime()", "absTime(\"2024-01-01T00:00:00-00:00\")");
	ck("absTime(0, 3600)", "absTime(\"1970-01-01T01:00:00+01:00\")");
	ck("int(absTime(\"1970-01-02T00:00:00Z\"))", "86400");
	ck("isAbsTime(absTime(1))", "true");
	ck("isRelTime(relTime(1))", "true");
	ck("isRelTime(absTime(2) - absTime(1))", "true");
}

/* Parse text as an expression and evaluate it (no names); type error when it does not parse. */
static struct nl_cad_val
eval_text(const char *text, struct nl_cad_prog **p, struct nl_cad_ctx **c)
{
	struct nl_cad_val v = { .type = NL_CAD_ERROR };
	int slot = -1;

	*p = NULL;
	*c = NULL;
	if (nl_cad_parse("", 0, p, NULL) == 0)
		slot = nl_cad_parse_expr(*p, text, strlen(text), NULL);
	if (slot >= 0 && nl_cad_ctx_create(*p, c) == 0)
		nl_cad_eval(*c, slot, &v);
	return v;
}

/* A printed relTime / absTime reads back as the same value and prints the same text. */
static bool
time_reads_back(const struct nl_cad_val *v, char *text, size_t n)
{
	struct nl_cad_prog *p;
	struct nl_cad_ctx *c;
	char again[256];

	nl_cad_format(NULL, v, text, n);
	struct nl_cad_val w = eval_text(text, &p, &c);
	bool ok = w.type == v->type &&
		  (v->type == NL_CAD_RELTIME ? memcmp(&w.u.rel_s, &v->u.rel_s, sizeof(double)) == 0
		   : w.u.abs_s == v->u.abs_s && w.aux == v->aux);

	nl_cad_format(c, &w, again, sizeof(again));
	ok = ok && strcmp(again, text) == 0;
	nl_cad_ctx_free(c);
	nl_cad_prog_free(p);
	return ok;
}

/*
 * Every relTime and absTime value prints as text that reads back (relTime: finite, |s| <=
 * NL_CAD_RELTIME_MAX_S; absTime: local time in the years 0000..9999); values beyond are error.
 */
static void
test_time_text(void)
{
	static const double rel[] = {
		0, 1, -1, 0.5, 90.5, 1.0 / 3, -2.0 / 3, 1e-7, 1e-20, 59.999999999, 86399.75,
		-86400 * 3 - 0.1, 123456.789012345, 1e15 + 0.5, 9.0e15, NL_CAD_RELTIME_MAX_S,
		-NL_CAD_RELTIME_MAX_S, 4503599627370495.5,
	};
	char text[256];
	bool all = true;

	for (unsigned int i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		struct nl_cad_val v = nl_cad_reltime(rel[i]);
		bool ok = v.type == NL_CAD_RELTIME && time_reads_back(&v, text, sizeof(text));

		nl_tap_ok(ok, "relTime %.17g prints %s and reads back", rel[i], text);
	}
	/* pseudo-random durations, whole and fractional */
	uint64_t x = 88172645463325252u;

	for (int i = 0; i < 3000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double d = (double)(x >> 11) / (double)(UINT64_C(1) << (x % 50));
		struct nl_cad_val v = nl_cad_reltime((x & 1) ? -d : d);

		if (v.type != NL_CAD_RELTIME || !time_reads_back(&v, text, sizeof(text))) {
			nl_tap_ok(false, "relTime %.17g prints %s and reads back", d, text);
			all = false;
			break;
		}
	}
	nl_tap_ok(all, "3000 random relTimes print text that reads back");
	ck("relTime(1e16)", "error");
	ck("relTime(real(\"INF\"))", "error");
	ck("relTime(-real(\"INF\"))", "error");
	ck("relTime(real(\"NaN\"))", "error");
	ck_perr("relTime(\"inf\")", true, 1, 1, "is not a time", -EINVAL);
	ck("relTime(9223372036854775807) + relTime(9223372036854775807)", "error");
	ck("relTime(9007199254740991) + relTime(1)", "error");
	ck("relTime(9007199254740991) * 2", "error");
	ck("relTime(9007199254740991)", "relTime(\"104249991374+07:36:31\")");
	ck("relTime(1e-7)", "relTime(\"0.0000001\")");
	ck("relTime(1e-300)", "relTime(\"00\")"); /* below 1e-20 s: whole seconds */
	ck("relTime(1.0 / 3)", "relTime(\"0.3333333333333333\")");
	ck("relTime(\"0.3333333333333333\") == relTime(1.0 / 3)", "true");
	/* absTime: years 0000..9999 of the printed (local) time */
	static const int64_t abs_s[] = {
		0, NOW, NL_CAD_ABSTIME_MIN_S, NL_CAD_ABSTIME_MAX_S, -1, -86400 * 365,
	};

	for (unsigned int i = 0; i < sizeof(abs_s) / sizeof(abs_s[0]); i++) {
		struct nl_cad_val v = nl_cad_abstime(abs_s[i]);
		bool ok = v.type == NL_CAD_ABSTIME && time_reads_back(&v, text, sizeof(text));

		nl_tap_ok(ok, "absTime %lld prints %s and reads back", (long long)abs_s[i], text);
	}
	ck("absTime(253402300799)", "absTime(\"9999-12-31T23:59:59-00:00\")");
	ck("absTime(253402300800)", "error");
	ck("absTime(-62167219200)", "absTime(\"0000-01-01T00:00:00-00:00\")");
	ck("absTime(-62167219201)", "error");
	ck_perr("absTime(\"10000-01-01T00:00:00-00:00\")", true, 1, 1, "is not a time", -EINVAL);
	ck("absTime(\"9999-12-31T23:59:59Z\") + relTime(1)", "error");
	ck("absTime(\"0000-01-01T00:00:00Z\") - relTime(1)", "error");
	ck("absTime(253402300799, 3600)", "error");
	ck("absTime(\"9999-12-31T23:00:00-02:00\")", "absTime(\"9999-12-31T23:00:00-02:00\")");
	ck("absTime(\"9999-12-31T23:00:00-02:00\") - absTime(0)", "relTime(\"2932897+01:00:00\")");
	nl_tap_ok(nl_cad_reltime(1e300).type == NL_CAD_ERROR &&
		  nl_cad_abstime(INT64_MAX).type == NL_CAD_ERROR, "constructors refuse out of range");
}

static void
test_scoping(void)
{
	/* seed 004 Fig. 2: b.g refers to the inner a (2), not the outer one (1) */
	const char *fig2 = "[ a = 1; b = [ a = 2; g = a ]; c = { 10, 20, 30 }; d = c[1]; "
			   "e = b.a; f = isInteger(a) ]";

	ckr(fig2, "b.g", "2");
	ckr(fig2, "a", "1");
	ckr(fig2, "d", "20");
	ckr(fig2, "e", "2");
	ckr(fig2, "f", "true");
	ckr(fig2, "b", "[ a = 2; g = a ]"); /* records print expressions */
	ckr(fig2, "b.g", "2");
	/* inner first, then outward */
	ckr("x = 5; r = [ y = x + 1; s = [ z = y * x ] ]", "r.s.z", "30");
	ckr("x = 5; r = [ x = 7; y = parent.x ]", "r.y", "5");
	ckr("x = 5; r = [ x = 7; y = self.x ]", "r.y", "7");
	ckr("x = 5; r = [ x = 7; s = [ y = root.x ] ]", "r.s.y", "5");
	ckr("x = 5; r = [ x = 7; s = [ y = .x ] ]", "r.s.y", "5");
	ckr("x = 5; r = [ x = 7; s = [ y = x ] ]", "r.s.y", "7");
	ckr("x = 5", "parent", "undefined");
	ckr("x = 5", "root.x", "5");
	ckr("A = 1", "a", "1");
	ckr("a = 1; A = 2", "a", "2"); /* case-insensitive; later definition wins */
	ckr("r = [ q = 1 ]", "r.nosuch", "undefined");
	ckr("r = [ q = 1 ]", "r[\"Q\"]", "1");
	ckr("", "undefined.x", "undefined");
	ckr("", "3 .x", "error");
	/* list mapping by select */
	ckr("L = { [ n = 1 ], [ n = 2 ], [ m = 3 ] }", "L.n", "{ 1,2,undefined }");
	ckr("L = { [ n = 1 ], 4 }", "L.n", "{ 1,error }");
	ckr("L = { [ j = [ k = 1 ] ], [ j = [ k = 2 ] ] }", "sum(L.j.k)", "3");
	/* list subscripts */
	ck("{1, 2, 3}[0]", "1");
	ck("{1, 2, 3}[3]", "error");
	ck("{1, 2, 3}[-1]", "error");
	ck("{1, 2}[undefined]", "undefined");
	ck("{1, 2}[\"a\"]", "error");
	ck("{}", "{  }");
	ck("{ 1, 2 }", "{ 1,2 }");
}

static void
test_circular(void)
{
	ckr("a = b; b = a", "a", "undefined");
	ckr("a = a + 1", "a", "undefined");
	ckr("a = b + 1; b = c; c = a", "isUndefined(a)", "true");
	ckr("r = [ x = y; y = x ]", "r.x", "undefined");
	ckr("a = self.a", "a", "undefined");
	ckr("a = evaluateList({1, 2}, \"v\", \"a\")", "a", "{ undefined,undefined }");
	/* linear, not exponential: 60 levels of doubling each reference each twice */
	char src[4096];
	size_t n = 0;

	for (int i = 0; i < 60; i++)
		n += (size_t)snprintf(src + n, sizeof(src) - n, "a%d = a%d + a%d; ", i, i + 1, i + 1);
	snprintf(src + n, sizeof(src) - n, "a60 = 1");
	ckr(src, "a0", "1152921504606846976"); /* 2^60, computed in 61 steps */
	ckr(src, "a50", "1024");
}

/*
 * eval(), evalInEachContext() and countMatches() run their text in a context of their own
 * program; a record of the caller they select (r.a) is evaluated back in the caller's context
 * (I5). Before the fix these read the caller's record definitions with the eval() program's
 * instructions: undefined, error, endless printing, wild jumps and heap overflows under ASan.
 */
static void
test_eval_scope(void)
{
	const char *rec = "r = [ a = 1; b = a + 1 ]; lim = [ max = 3 ]";

	ckr(rec, "eval(\"r.a\")", "1");
	ckr(rec, "eval(\"r.b\")", "2");
	ckr(rec, "eval(\"r\")", "[ a = 1; b = a + 1 ]");
	ckr(rec, "eval(\"r.a + r.b\")", "3");
	ckr(rec, "eval(\"size({r.b, r.a})\")", "2");
	ckr(rec, "eval(\"2 < lim.max\")", "true");
	ckr(rec, "eval(\"r\").b", "2");
	ckr(rec, "eval(\"{ r, lim }\")[1].max", "3");
	ckr(rec, "eval(\"r =?= r\")", "error"); /* HTCondor: =?= of two records is error */
	ckr(rec, "eval(\"r\") is r", "error");
	ckr(rec, "string(eval(\"r\"))", "\"[ a = 1; b = a + 1 ]\"");
	/* the record's attributes keep their own scope (x of the root) */
	ckr("x = 5; r = [ a = x + 1 ]", "eval(\"r.a\")", "6");
	ckr("r = [ a = eval(\"s.b\") ]; s = [ b = 7 ]", "eval(\"r.a\")", "7");
	/* a record of the caller whose attribute evals the same text (a second context) */
	ckr("x = [ a = eval(\"x.a\"); x = [ a = 9 ] ]", "eval(\"x.a\")", "9");
	ckr("r = [ a = eval(\"r.a\") ]", "eval(\"r.a\")", "undefined"); /* circular */
	/* evalInEachContext / countMatches: names the records lack come from the caller */
	ckr("r = [ a = 1 ]", "evalInEachContext(r.a, { [ q = 1 ] })", "{ 1 }");
	ckr("r = [ a = 1 ]", "evalInEachContext(r, { [ q = 1 ] })", "{ [ a = 1 ] }");
	const char *pol = "jobs = { [ id = 1 ], [ id = 2 ] }; limit = [ max = 1 ]";

	ckr(pol, "countMatches(id <= limit.max, jobs)", "1");
	ckr(pol, "evalInEachContext(limit.max, jobs)", "{ 1,1 }");
	ckr(pol, "evalInEachContext(id + limit.max, jobs)", "{ 2,3 }");
	ckr("r = [ b = { 1, 2 } ]",
	    "countMatches(identicalMember(a, r.b), { [ a = 1 ], [ a = 2 ], [ a = 3 ] })", "2");
	ckr("l = { 1, \"two\" }; r = [ a = 1 ]",
	    "countMatches(identicalMember(l[1], r.a), { [ a = 1 ], [ a = 2 ] })", "0");
	/* a policy in the form the PluS manager evaluates */
	ckr("jobs = { [ id = 1 ], [ id = 2 ] }; limit = [ max = 1 ]; "
	    "ok = countMatches(id <= limit.max, jobs) >= 1", "ok", "true");
}

static void
test_builtins(void)
{
	static const char *const unary_fns[] = {
		"size", "int", "real", "string", "toUpper", "toLower",
		"relTime", "absTime", "min", "max", "sum", "avg",
	};
	char e[128];

	/* strict built-ins: undefined in, undefined out; error in, error out */
	for (unsigned int i = 0; i < sizeof(unary_fns) / sizeof(unary_fns[0]); i++) {
		snprintf(e, sizeof(e), "%s(undefined)", unary_fns[i]);
		ck(e, "undefined");
		snprintf(e, sizeof(e), "%s(error)", unary_fns[i]);
		ck(e, "error");
	}
	/* HTCondor: floor/ceiling/round go through real(), which gives error for undefined */
	ck("floor(undefined)", "error");
	ck("ceiling(undefined)", "error");
	ck("round(undefined)", "error");
	/* type tests never yield undefined */
	static const char *const tests[] = {
		"isUndefined", "isError", "isInteger", "isReal", "isString", "isBoolean",
		"isList", "isClassAd", "isAbsTime", "isRelTime",
	};
	static const char *const args[] = {
		"undefined", "error", "1", "1.5", "\"s\"", "true", "{1}", "[a=1]",
		"absTime(0)", "relTime(0)",
	};
	for (unsigned int i = 0; i < 10; i++) {
		for (unsigned int j = 0; j < 10; j++) {
			snprintf(e, sizeof(e), "%s(%s)", tests[i], args[j]);
			ck(e, i == j ? "true" : "false");
		}
	}
	ck("member(1, {1, 2})", "true");
	ck("member(3, {1, 2})", "false");
	ck("member(1.0, {1, 2})", "true");
	ck("member(undefined, {1})", "undefined");
	ck("member(1, undefined)", "undefined");
	ck("member(error, {1})", "error");
	ck("member(1, 2)", "error");
	ck("member({1}, {1})", "error");
	ck("member(\"a\", {1, \"A\"})", "true");
	ck("identicalMember(undefined, {undefined})", "true");
	ck("identicalMember(1, {1.0})", "false");
	ck("size({1, 2, 3})", "3");
	ck("size(\"abc\")", "3");
	ck("size([a = 1; b = 2])", "2");
	ck("size(1)", "error");
	ck("ifThenElse(true, 1, 1/0)", "1");
	ck("ifThenElse(false, 1/0, 2)", "2");
	ck("ifThenElse(undefined, 1, 2)", "undefined");
	ck("ifThenElse(error, 1, 2)", "error");
	ck("ifThenElse(\"x\", 1, 2)", "error");
	ck("int(3.7)", "3");
	ck("int(-3.7)", "-3");
	ck("int(\"42\")", "42");
	ck("int(\"4x\")", "4");
	ck("int(true)", "1");
	ck("int({1})", "error");
	ck("int(1e300)", "-9223372036854775808"); /* HTCondor: (long long) on x86-64 */
	ck("real(3)", "3.0");
	ck("real(\"2.5\")", "2.5");
	ck("real(\"zz\")", "error");
	ck("string(3)", "\"3\"");
	ck("string(true)", "\"true\"");
	ck("string(\"s\")", "\"s\"");
	ck("string(0.5)", "\"5.000000000000000E-01\""); /* HTCondor: "%1.15E" */
	ck("floor(2.5)", "2");
	ck("ceiling(2.1)", "3");
	ck("round(2.5)", "2"); /* half to even */
	ck("round(3.5)", "4");
	ck("round(-2.5)", "-2");
	ck("floor(7)", "7");
	ck("floor(\"2.7\")", "2");
	ck("floor(\"x\")", "error");
	ck("round(true)", "1");
	ck("floor({})", "error");
	ck("strcat(\"a\", 1, true, 2.5)", "\"a1true2.500000000000000E+00\"");
	ck("strcat()", "\"\"");
	ck("strcat(\"a\", undefined)", "undefined");
	ck("strcat(\"a\", error)", "error");
	ck("substr(\"abcdef\", 2)", "\"cdef\"");
	ck("substr(\"abcdef\", 2, 2)", "\"cd\"");
	ck("substr(\"abcdef\", -2)", "\"ef\"");
	ck("substr(\"abcdef\", 1, -2)", "\"bcd\"");
	ck("substr(\"abc\", 10)", "\"\"");
	ck("substr(\"abc\", undefined)", "undefined");
	ck("substr(1, 0)", "error");
	ck("toUpper(\"aBc\")", "\"ABC\"");
	ck("toLower(\"aBc\")", "\"abc\"");
	ck("toUpper(1)", "\"1\"");
	ck("min({3, 1, 2})", "1");
	ck("max({3, 1.5, 2})", "3.0"); /* HTCondor: the comparison made 3 a real */
	ck("max({})", "undefined");
	ck("min({1, undefined})", "1");
	ck("min({1, error})", "error");
	ck("min({1, \"a\"})", "error");
	ck("min(3)", "error");
	ck("sum({1, 2, 3})", "6");
	ck("sum({1, 2.5})", "3.5");
	ck("sum({})", "0");
	ck("avg({1, 2})", "1.5");
	ck("avg({})", "0");
	ck("max({absTime(5), absTime(9), absTime(7)})", "absTime(\"1970-01-01T00:00:09-00:00\")");
	ck("max({relTime(5), absTime(9)})", "error");
	ck("linear(5, 0, 0, 10, 100)", "50.0");
	ck("linear(relTime(\"01:00:00\"), relTime(\"00:30:00\"), 90, relTime(\"02:00:00\"), 50)",
	   "76.66666666666667");
	ck("linear(1, 1, 0, 1, 5)", "error");
	ck("linear(undefined, 0, 0, 1, 1)", "undefined");
	ck("linear(\"a\", 0, 0, 1, 1)", "error");
	ckr("f = v * 10", "evaluateList({1, 2, 3}, \"v\", \"f\")", "{ 10,20,30 }");
	ckr("f = v * 10", "evaluateList(undefined, \"v\", \"f\")", "undefined");
	ckr("f = v * 10", "evaluateList(3, \"v\", \"f\")", "error");
	ckr("f = v * 10; v = 1", "evaluateList({2}, \"v\", \"f\")[0] + f", "30");
	ck("plus_rsvutil(\"u\", 0, 1)", "undefined"); /* no host hook */
	ck("plus_rsvutil(\"u\", undefined, 1)", "undefined");
	ck("plus_rsvutil(1, 0, 1)", "error");
}

static void
test_precedence(void)
{
	ck("1 + 2 * 3", "7");
	ck("(1 + 2) * 3", "9");
	ck("10 - 4 - 3", "3");          /* left associative */
	ck("100 / 10 / 5", "2");
	ck("2 * 3 % 4", "2");
	ck("1 + 2 << 1", "6");          /* + binds tighter than << */
	ck("1 << 2 < 5", "true");       /* << tighter than < */
	ck("1 < 2 == true", "true");    /* < tighter than == */
	ck("1 == 1 is true", "true");   /* == and is same level, left assoc */
	ck("3 & 1 == 1", "error");          /* == tighter than & : 3 & true */
	ck("(3 & 1) == 1", "true");
	ck("1 | 2 ^ 3", "1");           /* ^ tighter than | : 1 | (2^3)=1|1 */
	ck("4 ^ 6 & 3", "6");           /* & tighter than ^ : 4 ^ (6&3) */
	ck("true || false && false", "true"); /* && tighter than || */
	ck("(true || false) && false", "false");
	ck("true ? 1 : false ? 2 : 3", "1"); /* right associative */
	ck("false ? 1 : false ? 2 : 3", "3");
	ck("false ? 1 : true ? 2 : 3", "2");
	ck("true || false ? 4 : 5", "4");    /* ?: lowest */
	ck("undefined ?: undefined ?: 9", "9");
	ck("-2 * 3", "-6");
	ck("- 2 + 3", "1");
	ck("!true || true", "true");         /* unary tighter than || */
	ck("-{1}[0]", "-1");                 /* postfix tighter than unary */
	ck("!!true", "true");
	ck("--3", "3");
	ck("~1 + 1", "-1");
	ck("[a = 3].a * 2", "6");
	ck("TRUE && False", "false");        /* case-insensitive keywords */
	ck("UNDEFINED", "undefined");
	ck("1 /* comment */ + // line\n 2", "3");
	ck("MEMBER(1, {1})", "true");        /* case-insensitive function names */
}

static void
test_parse_errors(void)
{
	ck_perr("1 +", true, 1, 4, "expected an expression", -EINVAL);
	ck_perr("a = 1;\nb = (2 + ;", false, 2, 10, "expected an expression", -EINVAL);
	ck_perr("a = 1\n  b 2", false, 2, 5, "expected '='", -EINVAL);
	ck_perr("x = \"abc", false, 1, 5, "unterminated string", -EINVAL);
	ck_perr("x = 1 /* open", false, 1, 7, "unterminated comment", -EINVAL);
	ck_perr("x = nosuchfn(1)", false, 1, 5, "unknown function", -EINVAL);
	ck_perr("x = member(1)", false, 1, 5, "member() takes 2", -EINVAL);
	ck_perr("x = 1 $ 2", false, 1, 7, "unexpected character '$'", -EINVAL);
	ck_perr("x = {1, 2", false, 1, 10, "expected '}'", -EINVAL);
	ck_perr("[ a = 1 ", false, 1, 9, "expected ';' or ']'", -EINVAL);
	ck_perr("x = 0x", false, 1, 5, "malformed number", -EINVAL);
	ck_perr("x = 5.", false, 1, 5, "malformed number", -EINVAL);
	ck_perr("x = 09", false, 1, 5, "malformed number", -EINVAL);
	ck_perr("x = 12ab", false, 1, 5, "malformed number", -EINVAL);
	ck_perr("x = 1 ? 2", false, 1, 10, "expected ':'", -EINVAL);
	ck_perr("x = \"a\\0\"", false, 1, 7, "NUL byte", -EINVAL);
	ck_perr("x = evaluateList({1}, y, \"f\")", false, 1, 5, "string literals", -EINVAL);
	ck_perr("x = 1 2", false, 1, 7, "expected ';'", -EINVAL);
	ck_perr("1 2", true, 1, 3, "unexpected text", -EINVAL);
	/* ';' may be left out at a line break only (HTCondor refuses "a = 1 b = 2") */
	ck_perr("a = 1 b = 2", false, 1, 7, "expected ';'", -EINVAL);
	ck_perr("[ a = 1 b = 2 ]", false, 1, 9, "expected ';' or ']'", -EINVAL);
	ck_perr("a = 1\nb = 2 c = 3", false, 2, 7, "expected ';'", -EINVAL);
	ckr("a = 1\nb = a + 1", "b", "2");
	ckr("a = 1 // one\nb = a + 1", "b", "2");
	ckr("[ a = 1\n  b = a + 1 ]", "b", "2");
	/* ... before Self, Parent and Root naming attributes, and quoted names, too */
	ckr("a = 1\nSelf = 2", "self", "2");
	ckr("a = 1\nparent = 2", "parent", "2");
	ckr("a = 1\nroot = 2", "root", "2");
	ckr("a = 1\nToplevel = 2", "toplevel", "2");
	ckr("a = 1\n'b c' = 2", "self", "[ a = 1; 'b c' = 2 ]");
}

static void
test_nesting(void)
{
	/* pathological nesting is refused with an error, never a stack overflow */
	static const char open[] = "([{!-";
	size_t n = 200000;
	char *s = malloc(n * 2 + 16);

	for (int k = 0; k < 3; k++) {
		size_t len = 0;

		memcpy(s, "x = ", 4);
		len = 4;
		for (size_t i = 0; i < n / 4; i++) {
			if (open[k] == '[') {
				memcpy(s + len, "[a=", 3);
				len += 3;
			} else {
				s[len++] = open[k];
			}
		}
		s[len++] = '1';
		s[len] = 0;
		struct nl_cad_prog *p = NULL;
		struct nl_cad_err e = { 0 };
		int rc = nl_cad_parse(s, len, &p, &e);

		nl_tap_ok(rc == -E2BIG && strstr(e.msg, "deeper") != NULL,
		   "deep nesting '%c' refused: rc %d %u:%u %s", open[k], rc, e.line, e.col, e.msg);
		nl_cad_prog_free(p);
	}
	/* a left-deep chain (1+1+...+1) is also depth, built without recursion */
	size_t len = 4;

	memcpy(s, "x = ", 4);
	for (size_t i = 0; i < 5000; i++) {
		memcpy(s + len, "1+", 2);
		len += 2;
	}
	s[len++] = '1';
	s[len] = 0;
	{
		struct nl_cad_prog *p = NULL;
		struct nl_cad_err e = { 0 };
		int rc = nl_cad_parse(s, len, &p, &e);

		nl_tap_ok(rc == -E2BIG, "long left-deep chain refused: rc %d %s", rc, e.msg);
		nl_cad_prog_free(p);
	}
	/* moderate nesting is fine */
	ck("((((((((((((((((((((1))))))))))))))))))))", "1");
	/* huge input refused */
	{
		size_t big = NL_CAD_MAX_SRC_BYTES + 10;
		char *b = malloc(big);
		struct nl_cad_prog *p = NULL;
		struct nl_cad_err e = { 0 };

		memset(b, ' ', big);
		nl_tap_ok(nl_cad_parse(b, big, &p, &e) == -E2BIG, "input over %u bytes refused",
		   NL_CAD_MAX_SRC_BYTES);
		free(b);
		nl_cad_prog_free(p);
	}
	/* deep attribute chains evaluate to error (depth limit), not a crash */
	{
		size_t cap = 64 * 1024, k = 0;
		char *src = malloc(cap);

		for (int i = 0; i < 1000; i++)
			k += (size_t)snprintf(src + k, cap - k, "a%d = a%d; ", i, i + 1);
		snprintf(src + k, cap - k, "a1000 = 1");
		ckr(src, "a0", "error");
		ckr(src, "a900", "1");
		free(src);
	}
	free(s);
}

/* A matchmaker's ad (nl_cad_parse_match): TARGET.x reads the bound record, MY.x the ad's own;
 * the same text through nl_cad_parse() reads TARGET.x as the ad's own x (single ad). */
/* Limits: long non-constant lists evaluate; attribute counts past the documented limits are
 * parse errors that say so; compiling n records is linear (a node list of 20 000 records). */
static void
test_limits(void)
{
	size_t cap = 200000, n = 0;
	char *src = malloc(cap);

	if (src == NULL)
		return;
	n += (size_t)snprintf(src + n, cap - n, "y = 1; x = {");
	for (int i = 0; i < 5000; i++)
		n += (size_t)snprintf(src + n, cap - n, "%sy + %d", i ? "," : "", i);
	snprintf(src + n, cap - n, "}");
	ckr(src, "size(x)", "5000");
	ckr(src, "x[4095] + x[4999]", "9096");
	ckr(src, "sum(x)", "12502500");
	/* exactly one chunk, and one more element */
	n = (size_t)snprintf(src, cap, "y = 1; x = {");
	for (int i = 0; i < 257; i++)
		n += (size_t)snprintf(src + n, cap - n, "%sy", i ? "," : "");
	snprintf(src + n, cap - n, "}");
	ckr(src, "size(x)", "257");
	ckr(src, "x =?= x", "error"); /* HTCondor: =?= of two lists is error */
	/* a record of 4096 attributes, then 4097 */
	n = (size_t)snprintf(src, cap, "r = [");
	for (int i = 0; i < 4096; i++)
		n += (size_t)snprintf(src + n, cap - n, "a%d = %d;", i, i);
	snprintf(src + n, cap - n, "]");
	ckr(src, "r.a4095", "4095");
	n = (size_t)snprintf(src, cap, "r = [");
	for (int i = 0; i < 4097; i++)
		n += (size_t)snprintf(src + n, cap - n, "a%d = %d;", i, i);
	snprintf(src + n, cap - n, "]");
	ck_perr(src, false, 1, (unsigned int)(strstr(src, "a4096 =") - src) + 1,
		"record with more than 4096 attributes", -E2BIG);
	free(src);

	/* the root: 65535 names (definitions, external names, parsed expressions together) */
	cap = 1200000;
	src = malloc(cap);
	if (src == NULL)
		return;
	n = 0;
	for (int i = 0; i < 65534; i++)
		n += (size_t)snprintf(src + n, cap - n, "a%d=%d\n", i, i % 10);
	struct nl_cad_prog *p = NULL;
	struct nl_cad_err e = { 0 };
	int rc = nl_cad_parse(src, n, &p, &e);
	int s1 = rc == 0 ? nl_cad_parse_expr(p, "a65533", 6, &e) : rc;
	int s2 = rc == 0 ? nl_cad_parse_expr(p, "a1", 2, &e) : rc;

	nl_tap_ok(rc == 0 && s1 == 65534 && s2 == -E2BIG &&
		  strstr(e.msg, "more than 65535 attributes at the root") != NULL,
		  "65534 root attributes + 1 expression; the next is refused (%d %d %d '%s')", rc,
		  s1, s2, e.msg);
	nl_cad_prog_free(p);
	n += (size_t)snprintf(src + n, cap - n, "b=1\nc=2\n");
	ck_perr(src, false, 65536, 1, "more than 65535 attributes at the root", -E2BIG);
	n = 0;
	for (int i = 0; i < 65535; i++)
		n += (size_t)snprintf(src + n, cap - n, "a%d=x%d\n", i, i);
	ck_perr(src, false, 1, 4, "more than 65535 attributes at the root (external", -E2BIG);
	free(src);

	/* 20 000 node records compile in linear time (it was quadratic: minutes) */
	cap = 1000000;
	src = malloc(cap);
	if (src == NULL)
		return;
	n = (size_t)snprintf(src, cap, "nodes = {");
	for (int i = 0; i < 20000; i++)
		n += (size_t)snprintf(src + n, cap - n, "%s[n=\"n%d\";a=%d<1]", i ? "," : "", i, i);
	snprintf(src + n, cap - n, "}");
	clock_t t0 = clock();

	ckr(src, "size(nodes.n)", "20000");
	ckr(src, "nodes[19999].n", "\"n19999\"");
	double cpu_s = (double)(clock() - t0) / CLOCKS_PER_SEC;

	nl_tap_ok(cpu_s < 20.0, "20000 records parse and evaluate in %.2f s CPU (< 20 s)", cpu_s);
	free(src);
}

/* Values as deep as the parser accepts print in full (and read back) and are =?= to
 * themselves; only values deeper than NL_CAD_MAX_VALUE_DEPTH (built by several attributes)
 * are cut. It was 32: a list 33 deep printed `error` inside and was not =?= itself. */
static void
test_deep_values(void)
{
	size_t cap = 40000, n;
	char *src = malloc(cap), *want = malloc(cap);

	if (src == NULL || want == NULL) {
		free(src);
		free(want);
		return;
	}
	for (int depth = 33; depth <= 399; depth += 366) {
		n = (size_t)snprintf(src, cap, "x = ");
		for (int i = 0; i < depth; i++)
			n += (size_t)snprintf(src + n, cap - n, "{");
		n += (size_t)snprintf(src + n, cap - n, "1");
		for (int i = 0; i < depth; i++)
			n += (size_t)snprintf(src + n, cap - n, "}");
		snprintf(src + n, cap - n, "; y = x");
		ckr(src, "size(x)", "1");
		ckr(src, "x =?= y", "error");
		ckr(src, "x =?= 1", "false");
		/* the printed value is the list itself */
		n = 0;
		for (int i = 0; i < depth; i++)
			n += (size_t)snprintf(want + n, cap - n, "{ ");
		n += (size_t)snprintf(want + n, cap - n, "1");
		for (int i = 0; i < depth; i++)
			n += (size_t)snprintf(want + n, cap - n, " }");
		struct nl_cad_prog *p = NULL;
		struct nl_cad_ctx *c = NULL;
		struct nl_cad_val v;
		char *buf = malloc(cap);
		int slot = nl_cad_parse(src, strlen(src), &p, NULL) == 0 ? nl_cad_slot(p, "x") : -1;
		bool ok = buf != NULL && slot >= 0 && nl_cad_ctx_create(p, &c) == 0 &&
			  nl_cad_eval(c, slot, &v) == 0 &&
			  nl_cad_format(c, &v, buf, cap) == (int)strlen(want) && strcmp(buf, want) == 0;

		nl_tap_ok(ok, "a list %d deep prints in full", depth);
		nl_cad_ctx_free(c);
		nl_cad_prog_free(p);
		free(buf);
	}
	/* records, 200 deep */
	n = (size_t)snprintf(src, cap, "x = ");
	for (int i = 0; i < 200; i++)
		n += (size_t)snprintf(src + n, cap - n, "[a = ");
	n += (size_t)snprintf(src + n, cap - n, "1");
	for (int i = 0; i < 200; i++)
		n += (size_t)snprintf(src + n, cap - n, "]");
	snprintf(src + n, cap - n, "; y = x");
	ckr(src, "x =?= y", "error");
	ckr(src, "size(eval(\"x\"))", "1");
	/* deeper than NL_CAD_MAX_VALUE_DEPTH: three attributes of 350 levels each */
	n = 0;
	for (int k = 0; k < 3; k++) {
		n += (size_t)snprintf(src + n, cap - n, "x%d = ", k);
		for (int i = 0; i < 350; i++)
			n += (size_t)snprintf(src + n, cap - n, "{");
		n += (size_t)snprintf(src + n, cap - n, k < 2 ? "x%d" : "1", k + 1);
		for (int i = 0; i < 350; i++)
			n += (size_t)snprintf(src + n, cap - n, "}");
		n += (size_t)snprintf(src + n, cap - n, ";\n");
	}
	ckr(src, "size(string(x1)) > 1400", "true"); /* 700 deep */
	ckr(src, "size(x0)", "1");                  /* 1050 deep */
	free(src);
	free(want);
}

static void
test_match_target(void)
{
	const char *src = "Memory = 1; Req = TARGET.Memory >= 8 && MY.Memory == 1; R = TARGET.Memory";
	static const char *const names[] = { "Memory" };
	struct nl_cad_schema sc;
	struct nl_cad_val vals[1] = { nl_cad_int(16) };
	struct nl_cad_rec r = { &sc, vals };
	struct nl_cad_prog *p, *q;
	struct nl_cad_ctx *c, *d;
	struct nl_cad_val v, rv;

	nl_cad_schema_init(&sc, names, 1);
	rv = nl_cad_record(&r);
	if (!nl_tap_ok(nl_cad_parse_match(src, strlen(src), &p, NULL) == 0 &&
			       nl_cad_parse(src, strlen(src), &q, NULL) == 0 &&
			       nl_cad_ctx_create(p, &c) == 0 && nl_cad_ctx_create(q, &d) == 0,
		       "match ad and single ad parse"))
		return;
	nl_cad_eval(c, nl_cad_slot(p, "R"), &v);
	nl_tap_ok(v.type == NL_CAD_UNDEFINED, "match ad: TARGET unbound -> TARGET.Memory undefined");
	nl_cad_bind(c, nl_cad_slot(p, "TARGET"), &rv);
	nl_cad_eval(c, nl_cad_slot(p, "R"), &v);
	nl_tap_ok(v.type == NL_CAD_INT && v.u.i == 16, "match ad: TARGET.Memory is the bound record's");
	nl_cad_eval(c, nl_cad_slot(p, "Req"), &v);
	nl_tap_ok(nl_cad_is_true(&v), "match ad: TARGET.Memory >= 8 && MY.Memory == 1");
	nl_cad_eval(d, nl_cad_slot(q, "R"), &v);
	nl_tap_ok(v.type == NL_CAD_UNDEFINED, "single ad: TARGET.Memory is undefined (no target)");
	nl_cad_ctx_free(c);
	nl_cad_ctx_free(d);
	nl_cad_prog_free(p);
	nl_cad_prog_free(q);
}

static void
test_bindings(void)
{
	/* external slots bound by the host; a binding overrides a definition */
	const char *src = "ok = N.load < 0.5 && member(N.name, Bad) == false; Bad = {\"b\"}; "
			  "owner = \"def\"";
	struct nl_cad_prog *p;
	struct nl_cad_ctx *c;
	struct nl_cad_err e;
	struct nl_cad_val v;
	static const char *const names[] = { "name", "load" };
	struct nl_cad_schema sc;
	struct nl_cad_val vals[2] = { nl_cad_str("a", 1), nl_cad_real(0.2) };
	struct nl_cad_rec r = { &sc, vals };

	nl_cad_schema_init(&sc, names, 2);
	nl_tap_ok(nl_cad_parse(src, strlen(src), &p, &e) == 0, "parse binding program");
	nl_tap_ok(nl_cad_ctx_create(p, &c) == 0, "context");
	int sn = nl_cad_slot(p, "n"), sok = nl_cad_slot(p, "OK"), so = nl_cad_slot(p, "owner");

	nl_tap_ok(sn >= 0 && !nl_cad_slot_defined(p, (unsigned int)sn), "N is external");
	nl_tap_ok(nl_cad_slot(p, "nosuch") == -ENOENT, "unknown slot");
	nl_cad_eval(c, sok, &v);
	nl_tap_ok(v.type == NL_CAD_UNDEFINED, "unbound external -> undefined");
	struct nl_cad_val rv = nl_cad_record(&r);

	nl_cad_bind(c, sn, &rv);
	nl_cad_eval(c, sok, &v);
	nl_tap_ok(nl_cad_is_true(&v), "bound record: true");
	vals[0] = nl_cad_str("B", 1);
	nl_cad_eval(c, sok, &v);
	nl_tap_ok(v.type == NL_CAD_BOOL && !v.u.b, "changed record, no re-parse: false");
	vals[0] = nl_cad_str("c", 1);
	vals[1] = nl_cad_real(0.7);
	nl_cad_eval(c, sok, &v);
	nl_tap_ok(v.type == NL_CAD_BOOL && !v.u.b, "load 0.7: false");
	struct nl_cad_why why;

	nl_tap_ok(nl_cad_explain(c, sok, &why) == 0 && why.clause == 0 && why.n_clauses == 2 &&
	   strncmp(why.text, "N.load < 0.5", why.text_len) == 0,
	   "explain: clause 0 '%.*s'", (int)why.text_len, why.text);
	struct nl_cad_val o = nl_cad_str("host", 4);

	nl_cad_eval(c, so, &v);
	nl_tap_ok(v.type == NL_CAD_STRING && strcmp(v.u.s, "def") == 0, "definition before binding");
	nl_cad_bind(c, so, &o);
	nl_cad_eval(c, so, &v);
	nl_tap_ok(v.type == NL_CAD_STRING && strcmp(v.u.s, "host") == 0, "binding overrides");
	nl_cad_unbind(c, so);
	nl_cad_eval(c, so, &v);
	nl_tap_ok(v.type == NL_CAD_STRING && strcmp(v.u.s, "def") == 0, "unbind restores");
	/* budget: a runaway evaluateList nest yields error, never hangs */
	nl_cad_ctx_free(c);
	nl_cad_prog_free(p);
	const char *bomb = "L = {1,2,3,4,5,6,7,8,9,10}; a = evaluateList(L, \"x\", \"b\"); "
			   "b = evaluateList(L, \"y\", \"c\"); c = evaluateList(L, \"z\", \"d\"); "
			   "d = evaluateList(L, \"w\", \"e\"); e = evaluateList(L, \"v\", \"f\"); "
			   "f = evaluateList(L, \"u\", \"g\"); g = evaluateList(L, \"t\", \"h\"); "
			   "h = evaluateList(L, \"s\", \"i\"); i = x + y + z + w + v + u + t + s";
	nl_tap_ok(nl_cad_parse(bomb, strlen(bomb), &p, &e) == 0, "parse bomb");
	nl_cad_ctx_create(p, &c);
	nl_cad_ctx_set_budget(c, 100000);
	nl_cad_eval(c, nl_cad_slot(p, "a"), &v);
	nl_tap_ok(v.type == NL_CAD_ERROR, "10^8 evaluations stop at the step budget: %s",
	   nl_cad_type_name((enum nl_cad_type)v.type));
	nl_cad_ctx_free(c);
	nl_cad_prog_free(p);
}

/*
 * Regression (issue #17): a policy attribute with 65 or more top-level && clauses in a
 * left-leaning chain wrote past a 64-entry array in collect_clauses(). Every clause must be
 * kept, and nl_cad_explain() must name the first false one, whatever its index.
 */
static void
test_many_clauses(void)
{
	static const unsigned int counts[] = { 63, 64, 65, 66, 130, 390 };

	for (unsigned int t = 0; t < sizeof(counts) / sizeof(counts[0]); t++) {
		unsigned int nc = counts[t], bad = nc - 2;
		size_t cap = 32 + (size_t)nc * 16, k = 0;
		char *src = malloc(cap);
		struct nl_cad_prog *p = NULL;
		struct nl_cad_ctx *c = NULL;
		struct nl_cad_err e = { 0 };
		struct nl_cad_why why = { 0 };
		struct nl_cad_val v;

		k += (size_t)snprintf(src + k, cap - k, "ok = ");
		for (unsigned int i = 0; i < nc; i++)
			k += (size_t)snprintf(src + k, cap - k, "%sx != %u", i ? " && " : "", i);
		int rc = nl_cad_parse(src, k, &p, &e);

		nl_tap_ok(rc == 0, "%u-clause && chain parses (rc %d %s)", nc, rc, e.msg);
		if (rc == 0 && nl_cad_ctx_create(p, &c) == 0) {
			struct nl_cad_val x = nl_cad_int(bad);

			nl_cad_bind(c, nl_cad_slot(p, "x"), &x);
			nl_cad_eval(c, nl_cad_slot(p, "ok"), &v);
			nl_tap_ok(v.type == NL_CAD_BOOL && !v.u.b, "%u clauses: x = %u is refused", nc, bad);
			rc = nl_cad_explain(c, nl_cad_slot(p, "ok"), &why);
			nl_tap_ok(rc == 0 && why.n_clauses == (int)nc && why.clause == (int)bad,
			   "%u clauses: explain names clause %d of %d (want %u of %u)", nc,
			   why.clause, why.n_clauses, bad, nc);
			x = nl_cad_int(-1);
			nl_cad_bind(c, nl_cad_slot(p, "x"), &x);
			nl_tap_ok(nl_cad_explain(c, nl_cad_slot(p, "ok"), &why) == -ENOENT,
			   "%u clauses: all true", nc);
		}
		nl_cad_ctx_free(c);
		nl_cad_prog_free(p);
		free(src);
	}
	/* a mixed tree: (a && b) && (c && (d && e)) has five clauses */
	{
		const char *src = "ok = (x != 1 && x != 2) && (x != 3 && (x != 4 && x != 5))";
		struct nl_cad_prog *p = NULL;
		struct nl_cad_ctx *c = NULL;
		struct nl_cad_err e;
		struct nl_cad_why why = { 0 };
		struct nl_cad_val x = nl_cad_int(4);

		nl_tap_ok(nl_cad_parse(src, strlen(src), &p, &e) == 0 && nl_cad_ctx_create(p, &c) == 0,
		   "nested && tree parses");
		nl_cad_bind(c, nl_cad_slot(p, "x"), &x);
		nl_tap_ok(nl_cad_explain(c, nl_cad_slot(p, "ok"), &why) == 0 && why.n_clauses == 5 &&
		   why.clause == 3 && strncmp(why.text, "x != 4", why.text_len) == 0,
		   "nested && tree: clause %d of %d '%.*s'", why.clause, why.n_clauses,
		   (int)why.text_len, why.text ? why.text : "");
		nl_cad_ctx_free(c);
		nl_cad_prog_free(p);
	}
}

int
main(void)
{
	test_truth_tables();
	test_strict();
	test_strings();
	test_numbers();
	test_quantize_ints();
	test_time();
	test_time_text();
	test_scoping();
	test_circular();
	test_eval_scope();
	test_builtins();
	test_precedence();
	test_parse_errors();
	test_nesting();
	test_bindings();
	test_limits();
	test_deep_values();
	test_match_target();
	test_many_clauses();
	return nl_tap_done();
}
