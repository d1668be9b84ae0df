/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Property tests of nl_classad (TAP), over random expressions (NL_TEST_SEED replays a run):
 *  - round trip: the unparser's text parses back, unparses to the same text (a fixed point)
 *    and evaluates to the same value as the source, in a record with attributes to refer to;
 *  - invariants of HTCondor's three-valued logic over every pair of false, true, undefined,
 *    error, 0, 1, 2.5, "s", {}: De Morgan both ways, double negation of booleans,
 *    commutativity of == and of meta-equality, x =?= x for every non-NaN scalar (error for
 *    lists, as HTCondor).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_classad.h"
#include "nl_tap.h"

static uint64_t rng;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct sb {
	char s[8192];
	size_t n;
};

static void
add(struct sb *b, const char *s)
{
	size_t l = strlen(s);

	if (b->n + l < sizeof(b->s)) {
		memcpy(b->s + b->n, s, l);
		b->n += l;
		b->s[b->n] = 0;
	}
}

static const char *const lits[] = {
	"0", "1", "-3", "42", "9223372036854775807", "2.5", "-0.125", "1e10", "3.0E-5", "0.0",
	"true", "false", "undefined", "error", "\"\"", "\"abc\"", "\"A b\\tc\\n\\\"q\\\"\\\\\"",
	"relTime(\"1:30\")", "absTime(\"2024-01-02T03:04:05+09:00\")", "real(\"INF\")",
	"real(\"-INF\")", "real(\"NaN\")",
};
static const char *const refs[] = {
	"a", "b", "s", "l", "r", "'x y'", "MY.a", "TARGET.b", "r.c", "l[1]", "nosuch", "self.a",
};
static const char *const bins[] = {
	" + ", " - ", " * ", " / ", " % ", " < ", " <= ", " > ", " >= ", " == ", " != ", " =?= ",
	" =!= ", " is ", " isnt ", " & ", " | ", " ^ ", " << ", " >> ", " >>> ", " && ", " || ",
};
static const char *const un[] = { "-", "+", "!", "~" };
static const char *const fns1[] = {
	"isUndefined", "isError", "int", "real", "string", "floor", "round", "size", "toUpper",
	"toLower", "sum", "max", "bool", "splitTime", "interval",
};
static const char *const fns2[] = {
	"strcmp", "stricmp", "pow", "quantize", "member", "regexp", "split", "versioncmp",
	"stringListMember", "substr", "join",
};

static void
gen(struct sb *b, int depth)
{
	uint32_t k = depth <= 0 ? rnd(2) : rnd(12);

	switch (k) {
	case 0: add(b, lits[rnd(sizeof(lits) / sizeof(lits[0]))]); break;
	case 1: add(b, refs[rnd(sizeof(refs) / sizeof(refs[0]))]); break;
	case 2:
	case 3:
	case 4:
		gen(b, depth - 1);
		add(b, bins[rnd(sizeof(bins) / sizeof(bins[0]))]);
		gen(b, depth - 1);
		break;
	case 5:
		add(b, un[rnd(4)]);
		add(b, "(");
		gen(b, depth - 1);
		add(b, ")");
		break;
	case 6:
		add(b, "(");
		gen(b, depth - 1);
		add(b, ")");
		break;
	case 7:
		gen(b, depth - 1);
		add(b, " ? ");
		gen(b, depth - 1);
		add(b, " : ");
		gen(b, depth - 1);
		break;
	case 8:
		add(b, fns1[rnd(sizeof(fns1) / sizeof(fns1[0]))]);
		add(b, "(");
		gen(b, depth - 1);
		add(b, ")");
		break;
	case 9:
		add(b, fns2[rnd(sizeof(fns2) / sizeof(fns2[0]))]);
		add(b, "(");
		gen(b, depth - 1);
		add(b, ", ");
		gen(b, depth - 1);
		add(b, ")");
		break;
	case 10: {
		uint32_t n = rnd(4);

		add(b, "{");
		for (uint32_t i = 0; i < n; i++) {
			if (i)
				add(b, ", ");
			gen(b, depth - 1);
		}
		add(b, "}");
		break;
	}
	default:
		add(b, "[ p = ");
		gen(b, depth - 1);
		add(b, "; 'q r' = ");
		gen(b, depth - 1);
		add(b, " ]");
		break;
	}
}

#define SCOPE "a = 7; b = 2.5; s = \"Str\"; l = { 1, \"two\", 3.0 }; r = [ c = 4 ]; 'x y' = 9; "

/* Value of expression e in the scope record, unparsed; "(parse error)" when it does not parse. */
static void
value_of(const char *e, char *out, size_t n)
{
	struct nl_cad_prog *p = NULL;
	struct nl_cad_ctx *c = NULL;
	struct nl_cad_val v;
	int slot = -1;

	snprintf(out, n, "(parse error)");
	if (nl_cad_parse(SCOPE, strlen(SCOPE), &p, NULL) == 0)
		slot = nl_cad_parse_expr(p, e, strlen(e), NULL);
	if (slot >= 0 && nl_cad_ctx_create(p, &c) == 0) {
		if (getenv("RT_DEBUG") != NULL)
			fprintf(stderr, "eval %s\n", e);
		nl_cad_ctx_set_now(c, 1704067200);
		nl_cad_eval(c, slot, &v);
		nl_cad_format(c, &v, out, n);
	}
	nl_cad_ctx_free(c);
	nl_cad_prog_free(p);
}

static void
test_roundtrip(unsigned int runs)
{
	unsigned int fixed = 0, same = 0, parsed = 0, bad_report = 0;
	static char t1[16384], t2[16384], v0[16384], v1[16384];

	for (unsigned int i = 0; i < runs; i++) {
		struct sb b = { .n = 0 };

		b.s[0] = 0;
		gen(&b, 1 + (int)rnd(4));
		int n1 = nl_cad_unparse(b.s, b.n, t1, sizeof(t1), NULL);

		if (n1 < 0)
			continue; /* e.g. nesting of records in lists the generator made invalid */
		parsed++;
		int n2 = nl_cad_unparse(t1, (size_t)n1, t2, sizeof(t2), NULL);

		if (n2 == n1 && strcmp(t1, t2) == 0)
			fixed++;
		else if (bad_report++ < 5)
			nl_tap_diag("not a fixed point: %s -> %s -> %s", b.s, t1, t2);
		value_of(b.s, v0, sizeof(v0));
		value_of(t1, v1, sizeof(v1));
		if (strcmp(v0, v1) == 0)
			same++;
		else if (bad_report++ < 5)
			nl_tap_diag("value differs: %s = %s but %s = %s", b.s, v0, t1, v1);
	}
	nl_tap_ok(parsed > runs / 2, "round trip: %u of %u random expressions parse", parsed, runs);
	nl_tap_ok(fixed == parsed, "round trip: unparse(parse(unparse(e))) == unparse(e) for %u of %u",
		  fixed, parsed);
	nl_tap_ok(same == parsed, "round trip: e and unparse(e) evaluate alike for %u of %u", same,
		  parsed);
}

static const char *const vals[] = {
	"false", "true", "undefined", "error", "0", "1", "2.5", "\"s\"", "{}",
};

static bool
is_true(const char *e)
{
	char out[256];

	value_of(e, out, sizeof(out));
	return strcmp(out, "true") == 0;
}

static void
test_invariants(void)
{
	const unsigned int nv = sizeof(vals) / sizeof(vals[0]);
	unsigned int dm1 = 0, dm2 = 0, eqc = 0, isc = 0, self = 0, nn = 0, pairs = 0;
	char e[512];

	for (unsigned int i = 0; i < nv; i++) {
		/* HTCondor: =?= of two lists (or records) is error, of anything else a boolean */
		snprintf(e, sizeof(e), "isList(%s) ? isError((%s) =?= (%s)) : (%s) =?= (%s)",
			 vals[i], vals[i], vals[i], vals[i], vals[i]);
		self += is_true(e);
		snprintf(e, sizeof(e), "isBoolean(%s) ? (!!(%s) =?= (%s)) : true", vals[i], vals[i],
			 vals[i]);
		nn += is_true(e);
		for (unsigned int j = 0; j < nv; j++) {
			const char *x = vals[i], *y = vals[j];

			pairs++;
			snprintf(e, sizeof(e), "!(%s && %s) =?= (!%s || !%s)", x, y, x, y);
			dm1 += is_true(e);
			snprintf(e, sizeof(e), "!(%s || %s) =?= (!%s && !%s)", x, y, x, y);
			dm2 += is_true(e);
			snprintf(e, sizeof(e), "(%s == %s) =?= (%s == %s)", x, y, y, x);
			eqc += is_true(e);
			snprintf(e, sizeof(e), "(%s =?= %s) =?= (%s =?= %s)", x, y, y, x);
			isc += is_true(e);
		}
	}
	nl_tap_ok(self == nv, "x =?= x for every scalar, error for lists (%u of %u)", self, nv);
	nl_tap_ok(nn == nv, "!!x =?= x for booleans (%u of %u)", nn, nv);
	nl_tap_ok(dm1 == pairs, "De Morgan !(x && y) =?= !x || !y, three-valued (%u of %u)", dm1,
		  pairs);
	nl_tap_ok(dm2 == pairs, "De Morgan !(x || y) =?= !x && !y, three-valued (%u of %u)", dm2,
		  pairs);
	nl_tap_ok(eqc == pairs, "x == y =?= y == x (%u of %u)", eqc, pairs);
	nl_tap_ok(isc == pairs, "x =?= y is symmetric (%u of %u)", isc, pairs);
	nl_tap_ok(is_true("!(real(\"NaN\") =?= real(\"NaN\"))"),
		  "NaN =?= NaN is false (HTCondor compares reals with ==)");
}

/* Texts fuzzing found that once printed something that did not parse back. */
static void
test_regressions(void)
{
	static const char *const cases[][2] = {
		{ "3\n.s", "3 .s" },                 /* select on an integer literal */
		{ "'a\\vb'", "'a\\vb'" },           /* \v escape in a quoted name */
		{ "\"x\\ay\"", "\"x\\ay\"" },     /* \a escape in a string */
	};
	char out[256], back[256];

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = nl_cad_unparse(cases[i][0], strlen(cases[i][0]), out, sizeof(out), NULL);
		int m = n >= 0 ? nl_cad_unparse(out, (size_t)n, back, sizeof(back), NULL) : -1;

		nl_tap_ok(n >= 0 && strcmp(out, cases[i][1]) == 0 && m == n && strcmp(back, out) == 0,
			  "unparse %s -> %s, parses back to itself", cases[i][1], n >= 0 ? out : "?");
	}
}

int
main(void)
{
	test_regressions();
	rng = nl_tap_seed(0x9e3779b97f4a7c15ull) | 1;
	test_roundtrip(3000);
	test_invariants();
	return nl_tap_done();
}
