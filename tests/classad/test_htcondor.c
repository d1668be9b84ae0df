/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTCondor semantics of nl_classad, rule by rule (TAP). Each row is one documented behaviour of
 * the HTCondor ClassAd reference ("ClassAd Syntax" and "Predefined Functions" of the HTCondor
 * manual; src/classad of HTCondor 23 where the manual is silent), with the value as HTCondor's
 * unparser prints it. docs/classad.md's rule table points at the groups of this file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_classad.h"
#include "nl_tap.h"

struct row {
	const char *rec;   /* record the expression is evaluated in ("" = empty) */
	const char *expr;
	const char *want;  /* unparsed value; "!parse" = refused at parse time */
};

static void
run_rows(const char *group, const struct row *r, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct nl_cad_prog *p = NULL;
		struct nl_cad_ctx *c = NULL;
		struct nl_cad_err e = { 0 };
		struct nl_cad_val v;
		char buf[1024] = "!parse";
		int rc = nl_cad_parse(r[i].rec, strlen(r[i].rec), &p, &e);
		int slot = rc == 0 ? nl_cad_parse_expr(p, r[i].expr, strlen(r[i].expr), &e) : rc;

		if (slot >= 0 && nl_cad_ctx_create(p, &c) == 0) {
			nl_cad_ctx_set_now(c, 1704067200); /* 2024-01-01T00:00:00Z */
			nl_cad_eval(c, slot, &v);
			nl_cad_format(c, &v, buf, sizeof(buf));
		}
		nl_tap_ok(strcmp(buf, r[i].want) == 0, "%s: [%s] %s => %s (want %s)", group, r[i].rec,
			  r[i].expr, buf, r[i].want);
		nl_cad_ctx_free(c);
		nl_cad_prog_free(p);
	}
}

#define RUN(name, rows) run_rows(name, rows, sizeof(rows) / sizeof(rows[0]))

/* ClassAd Syntax: records, lists, names */
static const struct row syntax[] = {
	{ "", "[;; a = 3;; b = 4;;]", "[ a = 3; b = 4 ]" },
	{ "", "[;; a = 3;; b = 4;;].b", "4" },
	{ "", "{1,}", "!parse" },
	{ "", "{ 1, 2 }", "{ 1,2 }" },
	{ "", "{}", "{  }" },
	{ "", "[]", "[  ]" },
	{ "[ Self = 1; Parent = 2; Root = 3 ]", "'Root'", "3" },
	{ "[ Self = 1; Parent = 2; Root = 3 ]", "Root + Self", "4" }, /* the attribute wins */
	{ "", "[ Root = 3; x = Root ].x", "3" },
	{ "a = 1; r = [ b = root.a; c = toplevel.a ]", "r.c", "1" },
	{ "", "[ a = 1; r = [ b = root.a; c = toplevel.a; d = parent.a ] ].r.d", "1" },
	{ "", "[ Self = 1; Parent = 2; Root = 3 ]", "[ Self = 1; Parent = 2; Root = 3 ]" },
	{ "", "[ Self = 1; Parent = 2 ].Parent", "2" },
	{ "", "[ 'a b' = 1; 'c.d' = 2 ]", "[ 'a b' = 1; 'c.d' = 2 ]" },
	{ "", "[ 'true' = 1 ]", "[ 'true' = 1 ]" },
	{ "", "[ a = 1 + 2; b = a * 2 ]", "[ a = 1 + 2; b = a * 2 ]" },
	{ "", "[ a = 1 + 2; b = a * 2 ].b", "6" },
	{ "", "\"tab\\there\\\\ \\\"q\\\"\"", "\"tab\\there\\\\ \\\"q\\\"\"" },
	{ "", "self", "[  ]" },
	{ "a = 1", "self", "[ a = 1 ]" },
	{ "r = [ x = self ]", "r", "[ x = self ]" },
	{ "a = 1; b = 2", "MY.a + TARGET.b", "3" },
	{ "a = 1", "my.A", "1" },
};

/* Operators: arithmetic, comparison, logic, bitwise */
static const struct row ops[] = {
	{ "", "7 / 2", "3" },
	{ "", "-7 / 2", "-3" },
	{ "", "7 % 3", "1" },
	{ "", "-7 % 3", "-1" },
	{ "", "7 % 2.5", "error" },
	{ "", "7.5 % 2", "error" },
	{ "", "1 / 0", "error" },
	{ "", "1 % 0", "error" },
	{ "", "1.0 / 0", "error" },
	{ "", "-1.0 / 0", "real(\"-INF\")" },
	{ "", "0.0 / 0", "real(\"NaN\")" },
	{ "", "(-9223372036854775807 - 1) / -1", "9223372036854775807" },
	{ "", "(-9223372036854775807 - 1) % -1", "0" },
	{ "", "9223372036854775807 + 1", "-9223372036854775808" },
	{ "", "1 + 2.5", "3.5" },
	{ "", "true + 1", "2" },
	{ "", "\"a\" + 1", "error" },
	{ "", "undefined + 1", "undefined" },
	{ "", "error + undefined", "error" },
	{ "", "6 & 3", "2" },
	{ "", "6 | 3", "7" },
	{ "", "6 ^ 3", "5" },
	{ "", "~0", "-1" },
	{ "", "true & false", "error" },
	{ "", "true | 1", "error" },
	{ "", "~true", "error" },
	{ "", "1 << 4", "16" },
	{ "", "-16 >> 2", "-4" },
	{ "", "-1 >>> 60", "15" },
	{ "", "\"abc\" == \"ABC\"", "true" },
	{ "", "\"abc\" =?= \"ABC\"", "false" },
	{ "", "\"abc\" < \"ABD\"", "true" },
	{ "", "1 == 1.0", "true" },
	{ "", "1 =?= 1.0", "false" },
	{ "", "undefined =?= undefined", "true" },
	{ "", "error =!= undefined", "true" },
	{ "", "[ a = 1; b = \"x\" ] =?= [ b = \"x\"; a = 1 ]", "true" },
	{ "", "[ a = 1 ] =?= [ a = 2 ]", "false" },
	{ "", "[ a = 1 ] =?= [ a = 1; b = 2 ]", "false" },
	{ "", "{ 1, \"a\", { 2 } } =?= { 1, \"a\", { 2 } }", "true" },
	{ "", "{ 1, \"a\" } =?= { 1, \"A\" }", "false" },
	{ "", "real(\"NaN\") =?= real(\"NaN\")", "false" },
	{ "", "real(\"NaN\") == real(\"NaN\")", "false" },
	{ "", "1 < \"a\"", "error" },
	{ "", "false && error", "false" },
	{ "", "error && false", "error" },
	{ "", "undefined && false", "false" },
	{ "", "undefined || true", "true" },
	{ "", "true || error", "true" },
	{ "", "\"s\" && true", "error" },
	{ "", "1 ? \"y\" : \"n\"", "\"y\"" },
	{ "", "undefined ? 1 : 2", "undefined" },
	{ "", "undefined ?: 7", "7" },
	{ "", "absTime(\"2024-01-01T00:00:00Z\") + relTime(\"1:30\")",
	  "absTime(\"2024-01-01T00:01:30-00:00\")" },
	{ "", "absTime(\"2024-01-01T00:00:00+09:00\")", "absTime(\"2024-01-01T00:00:00+09:00\")" },
	{ "", "absTime(\"2024-01-02T00:00:00Z\") - absTime(\"2024-01-01T00:00:00Z\")",
	  "relTime(\"1+00:00:00\")" },
	{ "", "relTime(90.5)", "relTime(\"01:30.5\")" },
	{ "", "relTime(3600 * 5 + 7)", "relTime(\"05:00:07\")" },
	{ "", "-relTime(5)", "relTime(\"-05\")" },
};

/* Reals as HTCondor prints them */
static const struct row reals[] = {
	{ "", "1.5", "1.5" },
	{ "", "2.0", "2.0" },
	{ "", "1.0 / 3", "0.3333333333333333" },
	{ "", "1e20", "1E+20" },
	{ "", "1.5e-7", "1.5E-07" },
	{ "", "0.0", "0.0" },
	{ "", "-0.0", "-0.0" },
	{ "", "real(\"INF\")", "real(\"INF\")" },
	{ "", "real(\"-INF\")", "real(\"-INF\")" },
	{ "", "real(\"NaN\")", "real(\"NaN\")" },
	{ "", "-real(\"INF\")", "real(\"-INF\")" },
	{ "", "string(2.5)", "\"2.5\"" },
};

/* Predefined functions: types, conversions */
static const struct row conv[] = {
	{ "", "isUndefined(undefined)", "true" },
	{ "", "isError(1/0)", "true" },
	{ "", "isBoolean(1)", "false" },
	{ "", "int(3.9)", "3" },
	{ "", "int(-3.9)", "-3" },
	{ "", "int(\"42\")", "42" },
	{ "", "int(\"4x\")", "4" }, /* strtoll: trailing text ignored */
	{ "", "int(\"3.9\")", "3" },
	{ "", "int(\"1e3\")", "1000" },
	{ "", "int(\"2K\")", "2048" },
	{ "", "real(\"1.5M\")", "1572864.0" },
	{ "", "string(relTime(90.5))", "\"01:30\"" },
	{ "", "int(\"x\")", "error" },
	{ "", "real(\" 2.5e1x\")", "25.0" },
	{ "", "int(true)", "1" },
	{ "", "real(3)", "3.0" },
	{ "", "real(\"2.5\")", "2.5" },
	{ "", "string(12)", "\"12\"" },
	{ "", "string({1, 2})", "\"{ 1,2 }\"" },
	{ "", "bool(\"TRUE\")", "true" },
	{ "", "bool(\"maybe\")", "undefined" },
	{ "", "bool(0.0)", "false" },
	{ "", "bool({})", "error" },
	{ "", "toUpper(12)", "\"12\"" },
	{ "", "toLower(\"AbC\")", "\"abc\"" },
	{ "", "toUpper(undefined)", "undefined" },
	{ "", "toUpper(true)", "\"TRUE\"" },
	{ "", "floor(2.7)", "2" },
	{ "", "floor(-2.5)", "-3" },
	{ "", "ceiling(2.1)", "3" },
	{ "", "ceil(2.1)", "3" },
	{ "", "floor(\"2.7\")", "2" },
	{ "", "floor(undefined)", "error" },
	{ "", "round(2.5)", "2" },
	{ "", "round(3.5)", "4" },
	{ "", "round(-2.5)", "-2" },
	{ "", "round(2.6)", "3" },
	{ "", "round(7)", "7" },
	{ "", "pow(2, 10)", "1024" },
	{ "", "pow(2, -1)", "0.5" },
	{ "", "pow(2.0, 3)", "8.0" },
	{ "", "pow(0, 0)", "1" },
	{ "", "pow(\"a\", 2)", "error" },
	{ "", "quantize(3, 8)", "8" },
	{ "", "quantize(3, 2)", "4" },
	{ "", "quantize(0, 4)", "0" },
	{ "", "quantize(1.5, 6.8)", "6.8" },
	{ "", "quantize(6.8, 1.2)", "7.199999999999999" }, /* ceil(6.8 / 1.2) * 1.2 in doubles */
	{ "", "quantize(10, 5.1)", "10.2" },
	{ "", "quantize(0, {4})", "4" },
	{ "", "quantize(2, {1, 2, \"A\"})", "2" },
	{ "", "quantize(3, {1, 2, 0.5})", "3.0" },
	{ "", "quantize(2.7, {1, 2, 0.5})", "3.0" },
	{ "", "quantize(3, {1, 2, \"A\"})", "error" },
	{ "", "absTime(0, 3600)", "absTime(\"1970-01-01T01:00:00+01:00\")" },
	{ "", "relTime(absTime(60))", "relTime(\"01:00\")" },
	{ "", "interval(67)", "\"1:07\"" },
	{ "", "interval(1472523)", "\"17+01:02:03\"" },
	{ "", "interval(5)", "\"5\"" },
	{ "", "interval(3600)", "\"1:00:00\"" },
	{ "", "interval(undefined)", "error" },
	{ "", "time()", "1704067200" },
	{ "", "currentTime() == absTime(time())", "true" },
};

/* Predefined functions: strings */
static const struct row strs[] = {
	{ "", "strcat(\"a\", 1, 2.5, true)", "\"a12.5true\"" },
	{ "", "strcat(\"a\", undefined)", "undefined" },
	{ "", "strcat(\"a\", error)", "error" },
	{ "", "strcat()", "\"\"" },
	{ "", "join(\", \", \"a\", \"b\", \"c\")", "\"a, b, c\"" },
	{ "", "join(split(\"a b c\"))", "\"abc\"" },
	{ "", "join(\";\", split(\"a b c\"))", "\"a;b;c\"" },
	{ "", "join(\"-\", \"a\", undefined, \"b\")", "\"a-b\"" },
	{ "", "split(\"a b  c\")", "{ \"a\",\"b\",\"c\" }" },
	{ "", "split(\"a,b;c\", \",;\")", "{ \"a\",\"b\",\"c\" }" },
	{ "", "splitUserName(\"user@domain\")", "{ \"user\",\"domain\" }" },
	{ "", "splitUserName(\"username\")", "{ \"username\",\"\" }" },
	{ "", "splitSlotName(\"slot1@machine\")", "{ \"slot1\",\"machine\" }" },
	{ "", "splitSlotName(\"machinename\")", "{ \"\",\"machinename\" }" },
	{ "", "substr(\"abcdef\", 2)", "\"cdef\"" },
	{ "", "substr(\"abcdef\", -2)", "\"ef\"" },
	{ "", "substr(\"abcdef\", 1, 2)", "\"bc\"" },
	{ "", "substr(\"abcdef\", 1, -2)", "\"bcd\"" },
	{ "", "substr(\"abc\", 10)", "\"\"" },
	{ "", "strcmp(\"a\", \"b\")", "-1" },
	{ "", "strcmp(\"b\", \"a\")", "1" },
	{ "", "strcmp(\"a\", \"A\")", "1" },
	{ "", "stricmp(\"a\", \"A\")", "0" },
	{ "", "strcmp(1, \"1\")", "0" },
	{ "", "strcmp(undefined, \"a\")", "undefined" },
	{ "", "size(\"abc\")", "3" },
	{ "", "size({1, 2})", "2" },
	{ "", "size([ a = 1; b = 2 ])", "2" },
	{ "", "size(1)", "error" },
	{ "", "versioncmp(\"7.9\", \"7.10\")", "-1" },
	{ "", "versioncmp(\"7.10\", \"7.9\")", "1" },
	{ "", "versioncmp(\"1.0\", \"1.0\")", "0" },
	{ "", "versioncmp(\"a\", \"b\")", "-1" },
	{ "", "versionGT(\"8.1.0\", \"8.0.9\")", "true" },
	{ "", "versionLT(\"000\", \"00\")", "true" },
	{ "", "versionLT(\"09\", \"0\")", "true" },
	{ "", "versionLE(\"1\", \"1\")", "true" },
	{ "", "versionGE(\"10\", \"9\")", "true" },
	{ "", "versionEQ(\"1.0\", \"1.00\")", "false" },
	{ "", "version_in_range(\"8.5\", \"8.0\", \"8.10\")", "true" },
	{ "", "versioncmp(undefined, \"1\")", "undefined" },
	{ "", "unparse(b)", "\"\"" },
	{ "a = x + 3; b = [ c = a ]", "unparse(a)", "\"x + 3\"" },
	{ "a = pow(x,y)", "unparse(a)", "\"pow(x,y)\"" },
	{ "a = strcat(x,\"y\") == 'q r'", "unparse(a)", "\"strcat(x,\\\"y\\\") == 'q r'\"" },
	{ "", "unparse(1)", "error" },
	{ "a = 2", "eval(\"a + 1\")", "3" },
	{ "slot15_State = \"Idle\"; SlotID = 5", "eval(strcat(\"slot\", SlotID + 10, \"_State\"))",
	  "\"Idle\"" },
	{ "", "eval(\"1 +\")", "error" },
	{ "", "eval(\"[ a = 1; b = a + 1 ]\").b", "2" },
	{ "a = eval(\"a\")", "a", "undefined" },
};

/* Predefined functions: lists */
static const struct row lists[] = {
	{ "", "member(1, {1, 2})", "true" },
	{ "", "member(\"A\", {\"a\"})", "true" },
	{ "", "member(undefined, {1})", "undefined" },
	{ "", "member(1, undefined)", "undefined" },
	{ "", "member(1, 2)", "error" },
	{ "", "identicalMember(\"A\", {\"a\"})", "false" },
	{ "", "identicalMember(undefined, {undefined})", "true" },
	{ "", "sum({1, 2, 3})", "6" },
	{ "", "sum({1, 2.5})", "3.5" },
	{ "", "sum({})", "0" },
	{ "", "sum({1, undefined})", "1" },
	{ "", "sum({1, \"a\"})", "error" },
	{ "", "avg({1, 2})", "1.5" },
	{ "", "avg({})", "0" },
	{ "", "min({3, 1.5, 2})", "1.5" },
	{ "", "max({3, 1.5, 2})", "3" },
	{ "", "min({})", "undefined" },
	{ "", "max({undefined})", "undefined" },
	{ "", "max(undefined)", "undefined" },
	{ "", "max(3)", "error" },
	{ "", "anyCompare(\"<\", {1, 2}, 2)", "true" },
	{ "", "anyCompare(\"<\", {3, 4}, 2)", "false" },
	{ "", "allCompare(\">=\", {1, 2}, 1)", "true" },
	{ "", "allCompare(\"==\", {1, 2}, 1)", "false" },
	{ "", "anyCompare(\"is\", {undefined}, undefined)", "true" },
	{ "", "anyCompare(\"like\", {1}, 1)", "error" },
	{ "", "allCompare(\"<\", {}, 1)", "true" },
	{ "", "anyCompare(\"<\", undefined, 1)", "undefined" },
	{ "", "{ 1, 2, 3 }[1]", "2" },
	{ "", "{ 1 }[5]", "error" },
	{ "", "{ [ n = 1 ], [ n = 2 ] }.n", "{ 1,2 }" },
	/* the manual's examples of evalInEachContext() and countMatches() */
	{ "", "evalInEachContext(Prio > 2, { [Prio=3;], [Prio=1;] })", "{ true,false }" },
	{ "", "evalInEachContext(Prio, { [Prio=3;], [Prio=1;] })", "{ 3,1 }" },
	{ "", "evalInEachContext(Prio > 2, { [Prio=3;], UNDEFINED })", "error" },
	{ "", "evalInEachContext(Prio > 2, UNDEFINED)", "error" },
	{ "", "countMatches(Prio > 2, { [Prio=3;], [Prio=1;] })", "1" },
	{ "", "countMatches(Prio > 2, { [Prio=3;], UNDEFINED })", "1" },
	{ "", "countMatches(Prio > 2, UNDEFINED)", "0" },
	{ "Limit = 2", "countMatches(Prio > Limit, { [Prio=3;], [Prio=1;] })", "1" },
};

/* Predefined functions: string lists */
static const struct row slist[] = {
	{ "", "stringListSize(\"a, b ,c\")", "3" },
	{ "", "stringListSize(\"\")", "0" },
	{ "", "stringListSize(\"a;b;c\", \";\")", "3" },
	{ "", "stringListSize(1)", "error" },
	{ "", "stringListSum(\"1,2,3\")", "6" },
	{ "", "stringListSum(\"1,2,3.5\")", "6.5" },
	{ "", "stringListSum(\"1,x\")", "error" },
	{ "", "stringListAvg(\"1,2\")", "1.5" },
	{ "", "stringListAvg(\"\")", "0.0" },
	{ "", "stringListMin(\"3,1,2\")", "1" },
	{ "", "stringListMax(\"3,1.5,2\")", "3" },
	{ "", "stringListMin(\"\")", "undefined" },
	{ "", "stringListMember(\"b\", \"a, b, c\")", "true" },
	{ "", "stringListMember(\"B\", \"a, b, c\")", "false" },
	{ "", "stringListIMember(\"B\", \"a, b, c\")", "true" },
	{ "", "stringListMember(\"b\", \"a;b\", \";\")", "true" },
	{ "", "stringListMember(1, \"1\")", "error" },
	{ "", "stringListsIntersect(\"a b\", \"b c\")", "true" },
	{ "", "stringListsIntersect(\"a,b\", \"c,d\")", "false" },
	{ "", "stringListsIntersect(\"a;b\", \"b;c\", \";\")", "true" },
	{ "", "stringListsIntersect(undefined, \"a\")", "undefined" },
	{ "", "stringListSubsetMatch(\"a,b\", \"b,a,c\")", "true" },
	{ "", "stringListSubsetMatch(\"a,d\", \"b,a,c\")", "false" },
	{ "", "stringListSubsetMatch(undefined, \"a\")", "true" },
	{ "", "stringListSubsetMatch(\"a\", undefined)", "false" },
	{ "", "stringListSubsetMatch(undefined, undefined)", "undefined" },
	{ "", "stringListSubsetMatch(\"\", \"a\")", "true" },
	{ "", "stringListISubsetMatch(\"A\", \"a,b\")", "true" },
	{ "", "stringListSubsetMatch(1, \"a\")", "error" },
	{ "", "stringList_regexpMember(\"^b\", \"a, bc\")", "true" },
	{ "", "stringList_regexpMember(\"^B\", \"a, bc\", \", \", \"i\")", "true" },
	{ "", "stringList_regexpMember(\"^z\", \"a, bc\")", "false" },
};

/* Predefined functions: regular expressions (PCRE2) */
static const struct row regex[] = {
	{ "", "regexp(\"^a.*b$\", \"aXXb\")", "true" },
	{ "", "regexp(\"^A\", \"abc\")", "false" },
	{ "", "regexp(\"^A\", \"abc\", \"i\")", "true" },
	{ "", "regexp(\"(\", \"abc\")", "error" },
	{ "", "regexp(\"a\", 1)", "error" },
	{ "", "regexp(undefined, \"a\")", "undefined" },
	{ "", "regexp(\"a\", \"b\", undefined)", "undefined" },
	{ "", "regexp(\"^b\", \"a\\nb\", \"m\")", "true" },
	{ "", "regexp(\"a.b\", \"a\\nb\", \"s\")", "true" },
	{ "", "regexps(\"(a)(b)\", \"xaby\", \"\\\\2\\\\1\")", "\"ba\"" },
	{ "", "regexps(\"(a)(b)\", \"xaby\", \"\\\\2\\\\1\", \"f\")", "\"xbay\"" },
	{ "", "regexps(\"z\", \"xaby\", \"q\")", "\"\"" },
	{ "", "regexps(\"z\", \"xaby\", \"q\", \"f\")", "\"xaby\"" },
	{ "", "regexps(\"(a)\", \"xaby\", \"\\\\3\")", "error" },
	{ "", "replace(\"o\", \"foo\", \"0\")", "\"f0o\"" },
	{ "", "replaceAll(\"o\", \"foo\", \"0\")", "\"f00\"" },
	{ "", "replaceAll(\"O\", \"foo\", \"0\", \"i\")", "\"f00\"" },
	{ "", "replaceAll(\"(\\\\w+)@(\\\\w+)\", \"a@b c@d\", \"\\\\2@\\\\1\")", "\"b@a d@c\"" },
	{ "", "replaceAll(\"x*\", \"ab\", \"-\")", "\"-a-b-\"" },
	{ "", "regexpMember(\"x\", {\"y\", \"X\"}, \"i\")", "true" },
	{ "", "regexpMember(\"x\", {\"y\", undefined})", "undefined" },
	{ "", "regexpMember(\"x\", {\"x\", undefined})", "true" },
	{ "", "regexpMember(\"x\", {1, \"x\"})", "error" },
	{ "s = \"abc\"", "regexp(\"b\", s)", "true" },
};

/* Predefined functions: time */
static const struct row times[] = {
	/* absTime's and relTime's string forms (HTCondor's Literal::MakeAbsTime/MakeRelTime) */
	{ "", "absTime(\"20240102T030405Z\")", "absTime(\"2024-01-02T03:04:05-00:00\")" },
	{ "", "absTime(\"2024-01-02 03:04\")", "absTime(\"2024-01-02T03:04:00-00:00\")" },
	{ "", "absTime(\"2024-01-02T03:04:05+0130\")", "absTime(\"2024-01-02T03:04:05+01:30\")" },
	{ "", "absTime(\"2024-01-02T03:04:05-05:00\")", "absTime(\"2024-01-02T03:04:05-05:00\")" },
	{ "", "absTime(\"2024-03-00\")", "absTime(\"2024-02-29T00:00:00-00:00\")" },
	{ "", "absTime(\"2024-01-02T03:04:05:06\")", "error" },
	{ "", "absTime(\"24\")", "error" },
	{ "", "relTime(\"1:30\")", "relTime(\"01:30\")" },
	{ "", "relTime(\"1+02:03:04\")", "relTime(\"1+02:03:04\")" },
	{ "", "relTime(\"1h 30m\")", "relTime(\"01:30:00\")" },
	{ "", "relTime(\"2d\")", "relTime(\"2+00:00:00\")" },
	{ "", "relTime(\"-5.25s\")", "relTime(\"-5.25\")" },
	{ "", "relTime(\"x\")", "error" },
	{ "", "splitTime(relTime(3723.5))",
	  "[ Type = \"RelativeTime\"; Days = 0; Hours = 1; Minutes = 2; Seconds = 3.5 ]" },
	{ "", "splitTime(relTime(-90))",
	  "[ Type = \"RelativeTime\"; Days = 0; Hours = 0; Minutes = -1; Seconds = 30.0 ]" },
	{ "", "splitTime(absTime(\"2024-03-04T05:06:07+09:00\"))",
	  "[ Type = \"AbsoluteTime\"; Year = 2024; Month = 3; Day = 4; Hours = 5; Minutes = 6; "
	  "Seconds = 7; Offset = 32400 ]" },
	{ "", "splitTime(absTime(\"2024-03-04T05:06:07+09:00\")).Hours", "5" },
	{ "", "splitTime(undefined)", "undefined" },
	{ "", "splitTime(\"x\")", "error" },
	{ "", "splitTime([ a = 1 ])", "error" },
	{ "", "formatTime(absTime(\"2024-03-04T05:06:07+09:00\"), \"%Y-%m-%d %H:%M:%S\")",
	  "\"2024-03-04 05:06:07\"" },
	{ "", "formatTime(absTime(\"2024-03-04T05:06:07Z\"), \"%a %b %j %w %y %%\")",
	  "\"Mon Mar 064 1 24 %\"" },
	{ "", "formatTime(relTime(5))", "error" },
	/* HTCondor's functional tests (src/classad/functional_tests.txt) */
	{ "", "formatTime(absTime(\"1997-08-30T16:04:05-0500\"), \"%m %d %Y\")", "\"08 30 1997\"" },
	{ "", "formatTime(absTime(\"1997-08-30T16:04:05-0500\"), \"%A %a\")", "\"Saturday Sat\"" },
	{ "", "formatTime(absTime(\"1997-08-30T16:04:05-0500\"))", "\"Sat Aug 30 16:04:05 1997\"" },
	{ "", "formatTime(splitTime(absTime(\"1997-08-30T16:04:05-0500\")), \"%H:%M:%S\")",
	  "\"16:04:05\"" },
	{ "", "splitTime(absTime(\"1970-01-02T:03:04:05-06:00\")).offset", "-21600" },
	{ "", "splitTime(relTime(\"1d2h3m4.5s\")).seconds", "4.5" },
	{ "", "int(absTime(\"1970-01-01T:00:00:01Z\"))", "1" },
	{ "", "real(reltime(\"01:00:01\"))", "3601.0" },
	{ "", "[ a = 3; b = \"alain\"; ab = 4 ][\"c\"]", "error" },
	{ "", "[ a = 3; b = \"alain\"; ab = 4 ][strcat(\"a\", \"b\")]", "4" },
	{ "", "{}.a", "{  }" },
	{ "", "regexps(\"[abc]*([def]*)[ghi]*\", \"aaaabbbbcccccdddeeefffggghhhiii\", \"\\\\1\")", "\"dddeeefff\"" },
	{ "", "regexps(\"[abc]*([def]*)[ghi]*\", \"abcdefghi\", \"\\\\0\")", "\"abcdefghi\"" },
	{ "", "regexps(\"[abc]*([def]*)[ghi]*\", \"abcdefghi\", \"\\\\2\")", "error" },
	{ "", "regexps(\"[abc]*([def]*)[ghi]*\", \"NO\", \"\\\\0\")", "\"\"" },
	{ "", "eval(1 + 1)", "2" },
	{ "", "[ A = 1; B = 2; C = eval(\"A+B\") ].C", "3" },
	{ "", "string(-0.0)", "\"-0.0\"" },
	{ "", "formatTime(1, 2)", "error" },
	{ "", "formatTime(undefined)", "error" },
};

int
main(void)
{
	/* formatTime() of seconds uses the local zone: pin it so the rows are exact */
	setenv("TZ", "UTC", 1);
	RUN("syntax", syntax);
	RUN("operators", ops);
	RUN("reals", reals);
	RUN("conversions", conv);
	RUN("strings", strs);
	RUN("lists", lists);
	RUN("stringlists", slist);
	RUN("regex", regex);
	RUN("time", times);
	{
		struct nl_cad_prog *p = NULL;
		struct nl_cad_err e = { 0 };
		int rc = nl_cad_parse("x = regexp(\"a\")", 15, &p, &e);

		nl_tap_ok(rc == -EINVAL && strstr(e.msg, "regexp() takes 2") != NULL,
			  "argument counts are checked at parse time: %s", e.msg);
		nl_cad_prog_free(p);
	}
	return nl_tap_done();
}
