/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Value operators and conversions (no evaluator state beyond the context's arena): HTCondor's
 * strict arithmetic, comparisons, meta-equality (=?=), bitwise and shift operators, time
 * arithmetic, the string form of a value. Used by the evaluator (nl_cad_eval.c) and the
 * built-ins (nl_cad_fn.c); depends only on nl_cad_val.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nl_cad_int.h"

#define ERRV NL_CAD_ERRV
#define UNDEFV NL_CAD_UNDEFV

void *
nl_cad_arena(struct nl_cad_ctx *ctx, size_t n)
{
	return nl_cad_chunk_alloc(&ctx->arena_head, &ctx->arena_cur, n ? n : 1);
}

void
nl_cad_arena_reset(struct nl_cad_ctx *ctx)
{
	ctx->arena_cur = ctx->arena_head;
	if (ctx->arena_head != NULL)
		ctx->arena_head->used = 0;
}

int64_t
nl_cad_now_s(const struct nl_cad_ctx *ctx)
{
	return ctx->now_s != INT64_MIN ? ctx->now_s : (int64_t)time(NULL);
}

bool
nl_cad_d2i(double d, int64_t *out)
{
	if (!(d > -9.2233720368547758e18 && d < 9.2233720368547758e18))
		return false;
	*out = (int64_t)d;
	return true;
}

struct nl_cad_val
nl_cad_mkstr(struct nl_cad_ctx *ctx, const char *s, size_t n)
{
	char *c = nl_cad_arena(ctx, n + 1);

	if (c == NULL || n > INT32_MAX)
		return ERRV;
	memcpy(c, s, n);
	c[n] = 0;
	return nl_cad_str(c, (uint32_t)n);
}

/* Case-insensitive three-way compare of two strings (HTCondor's == and < on strings). */
int
nl_cad_strcmp_ci(const struct nl_cad_val *a, const struct nl_cad_val *b)
{
	uint32_t n = (uint32_t)(a->aux < b->aux ? a->aux : b->aux);

	for (uint32_t i = 0; i < n; i++) {
		unsigned char x = (unsigned char)a->u.s[i], y = (unsigned char)b->u.s[i];

		if (x >= 'A' && x <= 'Z')
			x += 32;
		if (y >= 'A' && y <= 'Z')
			y += 32;
		if (x != y)
			return x < y ? -1 : 1;
	}
	return a->aux < b->aux ? -1 : a->aux > b->aux ? 1 : 0;
}

bool
nl_cad_identical(const struct nl_cad_val *a, const struct nl_cad_val *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case NL_CAD_UNDEFINED:
	case NL_CAD_ERROR: return true;
	case NL_CAD_BOOL: return a->u.b == b->u.b;
	case NL_CAD_INT: return a->u.i == b->u.i;
	case NL_CAD_REAL: return a->u.r == b->u.r; /* HTCondor: NaN =?= NaN is false */
	case NL_CAD_STRING:
		return a->aux == b->aux && memcmp(a->u.s, b->u.s, (size_t)a->aux) == 0;
	case NL_CAD_ABSTIME: return a->u.abs_s == b->u.abs_s && a->aux == b->aux;
	case NL_CAD_RELTIME: return a->u.rel_s == b->u.rel_s;
	default:
		/* two lists or two records: =?= is error (nl_cad_binop), never identical */
		return false;
	}
}

static struct nl_cad_val
time_arith(int op, const struct nl_cad_val *a, const struct nl_cad_val *b)
{
	int64_t i;
	double r;
	bool isr;

	switch (op) {
	case NL_CAD_B_ADD:
	case NL_CAD_B_SUB:
		if (a->type == NL_CAD_ABSTIME && b->type == NL_CAD_RELTIME) {
			int64_t d;

			/* HTCondor: abs.secs +/- (int)rel, the relTime truncated to whole seconds */
			if (!nl_cad_d2i(b->u.rel_s, &d))
				return ERRV;
			i = (int64_t)((uint64_t)a->u.abs_s + (op == NL_CAD_B_ADD ? (uint64_t)d
									    : 0 - (uint64_t)d));
			return nl_cad_mkabs(i, a->aux); /* error beyond the years 0000..9999 */
		}
		if (op == NL_CAD_B_ADD && a->type == NL_CAD_RELTIME && b->type == NL_CAD_ABSTIME)
			return time_arith(op, b, a);
		if (op == NL_CAD_B_SUB && a->type == NL_CAD_ABSTIME && b->type == NL_CAD_ABSTIME)
			return nl_cad_reltime((double)a->u.abs_s - (double)b->u.abs_s);
		if (a->type == NL_CAD_RELTIME && b->type == NL_CAD_RELTIME)
			return nl_cad_reltime(op == NL_CAD_B_ADD ? a->u.rel_s + b->u.rel_s
								 : a->u.rel_s - b->u.rel_s);
		return ERRV;
	case NL_CAD_B_MUL:
		/* HTCondor (doTimeArithmetic): relTime * or / an integer or a real (booleans:
		 * error) */
		if (a->type == NL_CAD_RELTIME && b->type != NL_CAD_BOOL &&
		    nl_cad_num(b, &i, &r, &isr))
			return nl_cad_reltime(a->u.rel_s * r);
		if (b->type == NL_CAD_RELTIME && a->type != NL_CAD_BOOL &&
		    nl_cad_num(a, &i, &r, &isr))
			return nl_cad_reltime(b->u.rel_s * r);
		return ERRV;
	case NL_CAD_B_DIV:
		if (a->type == NL_CAD_RELTIME && b->type != NL_CAD_BOOL &&
		    nl_cad_num(b, &i, &r, &isr) && r != 0)
			return nl_cad_reltime(a->u.rel_s / r);
		return ERRV;
	}
	return ERRV;
}

struct nl_cad_val
nl_cad_binop(int op, const struct nl_cad_val *a, const struct nl_cad_val *b)
{
	int64_t ai = 0, bi = 0;
	double ar = 0, br = 0;
	bool arl = false, brl = false;

	if (op == NL_CAD_B_IS || op == NL_CAD_B_ISNT) {
		/* HTCondor (Operation::doComparison): =?= and =!= of two lists or two records is
		 * error; of different types false (true for =!=) */
		if (a->type == b->type && (a->type == NL_CAD_LIST || a->type == NL_CAD_RECORD))
			return ERRV;
		bool same = nl_cad_identical(a, b);

		return nl_cad_bool(op == NL_CAD_B_IS ? same : !same);
	}
	/* strict: error first, then undefined */
	if (a->type == NL_CAD_ERROR || b->type == NL_CAD_ERROR)
		return ERRV;
	if (a->type == NL_CAD_UNDEFINED || b->type == NL_CAD_UNDEFINED)
		return UNDEFV;
	bool an = nl_cad_num(a, &ai, &ar, &arl), bn = nl_cad_num(b, &bi, &br, &brl);

	switch (op) {
	case NL_CAD_B_ADD:
	case NL_CAD_B_SUB:
	case NL_CAD_B_MUL:
	case NL_CAD_B_DIV:
	case NL_CAD_B_MOD:
		if (!an || !bn) {
			if (op == NL_CAD_B_MOD)
				return ERRV;
			return time_arith(op, a, b);
		}
		if (!arl && !brl) {
			uint64_t x = (uint64_t)ai, y = (uint64_t)bi;

			switch (op) {
			case NL_CAD_B_ADD: return nl_cad_int((int64_t)(x + y));
			case NL_CAD_B_SUB: return nl_cad_int((int64_t)(x - y));
			case NL_CAD_B_MUL: return nl_cad_int((int64_t)(x * y));
			case NL_CAD_B_DIV:
				if (bi == 0)
					return ERRV;
				if (bi == -1 && ai == INT64_MIN)
					return nl_cad_int(INT64_MAX); /* HTCondor: no SIGFPE, INT64_MAX */
				return nl_cad_int(ai / bi);
			default:
				if (bi == 0)
					return ERRV;
				if (bi == -1)
					return nl_cad_int(0);
				return nl_cad_int(ai % bi);
			}
		}
		{
			double r;

			/* HTCondor: % on reals is error; a result of +HUGE_VAL (1.0 / 0, overflow
			 * upward) is error, while -INF and NaN are values */
			switch (op) {
			case NL_CAD_B_ADD: r = ar + br; break;
			case NL_CAD_B_SUB: r = ar - br; break;
			case NL_CAD_B_MUL: r = ar * br; break;
			case NL_CAD_B_DIV: r = ar / br; break;
			default: return ERRV;
			}
			return r == HUGE_VAL ? ERRV : nl_cad_real(r);
		}
	case NL_CAD_B_LT:
	case NL_CAD_B_LE:
	case NL_CAD_B_GT:
	case NL_CAD_B_GE:
	case NL_CAD_B_EQ:
	case NL_CAD_B_NE: {
		int c;

		if (an && bn) {
			if (!arl && !brl)
				c = ai < bi ? -1 : ai > bi;
			else if (ar < br)
				c = -1;
			else if (ar > br)
				c = 1;
			else if (ar == br)
				c = 0;
			else
				return nl_cad_bool(op == NL_CAD_B_NE); /* NaN */
		} else if (a->type == NL_CAD_STRING && b->type == NL_CAD_STRING) {
			c = nl_cad_strcmp_ci(a, b);
		} else if (a->type == NL_CAD_ABSTIME && b->type == NL_CAD_ABSTIME) {
			c = a->u.abs_s < b->u.abs_s ? -1 : a->u.abs_s > b->u.abs_s;
		} else if (a->type == NL_CAD_RELTIME && b->type == NL_CAD_RELTIME) {
			c = a->u.rel_s < b->u.rel_s ? -1 : a->u.rel_s > b->u.rel_s;
		} else {
			return ERRV;
		}
		switch (op) {
		case NL_CAD_B_LT: return nl_cad_bool(c < 0);
		case NL_CAD_B_LE: return nl_cad_bool(c <= 0);
		case NL_CAD_B_GT: return nl_cad_bool(c > 0);
		case NL_CAD_B_GE: return nl_cad_bool(c >= 0);
		case NL_CAD_B_EQ: return nl_cad_bool(c == 0);
		default: return nl_cad_bool(c != 0);
		}
	}
	case NL_CAD_B_BAND:
	case NL_CAD_B_BOR:
	case NL_CAD_B_BXOR:
		/* HTCondor: bitwise operators are defined on integers only (booleans: error) */
		if (a->type != NL_CAD_INT || b->type != NL_CAD_INT)
			return ERRV;
		return nl_cad_int(op == NL_CAD_B_BAND ? (ai & bi) :
				  op == NL_CAD_B_BOR ? (ai | bi) : (ai ^ bi));
	default: /* shifts */
		if (a->type != NL_CAD_INT || b->type != NL_CAD_INT)
			return ERRV;
		if (op == NL_CAD_B_SHL)
			return nl_cad_int((int64_t)((uint64_t)ai << (bi & 63)));
		/* HTCondor (doBitwise) on x86-64: a shift count is taken modulo 64; >>> of a
		 * negative number shifts by 1, clears the sign, then shifts by count - 1; >> of a
		 * negative number shifts in ones min(64, count) times */
		if (ai >= 0)
			return nl_cad_int((int64_t)((uint64_t)ai >> (bi & 63)));
		if (op == NL_CAD_B_USHR)
			return nl_cad_int((int64_t)((((uint64_t)ai >> 1) & (uint64_t)INT64_MAX) >>
						    ((uint64_t)(bi - 1) & 63)));
		if (bi <= 0)
			return nl_cad_int(ai);
		if (bi >= 64)
			return nl_cad_int(-1);
		return nl_cad_int((int64_t)~(~(uint64_t)ai >> bi));
	}
}

struct nl_cad_val
nl_cad_unop(int op, const struct nl_cad_val *a)
{
	if (a->type == NL_CAD_UNDEFINED)
		return UNDEFV;
	switch (op) {
	case NL_CAD_U_NOT: {
		int t = nl_cad_tv(a);

		return t >= 0 ? nl_cad_bool(!t) : ERRV;
	}
	case NL_CAD_U_BNOT:
		if (a->type == NL_CAD_INT)
			return nl_cad_int(~a->u.i);
		return ERRV;
	default:
		switch (a->type) {
		case NL_CAD_INT:
			return nl_cad_int(op == NL_CAD_U_NEG ? (int64_t)(0 - (uint64_t)a->u.i) : a->u.i);
		case NL_CAD_REAL:
			return nl_cad_real(op == NL_CAD_U_NEG ? -a->u.r : a->u.r);
		case NL_CAD_RELTIME:
			return nl_cad_reltime(op == NL_CAD_U_NEG ? -a->u.rel_s : a->u.rel_s);
		default:
			return ERRV;
		}
	}
}

/* Text of a value for string() and strcat(): strings raw, the rest unparsed. */
struct nl_cad_val
nl_cad_to_string(struct nl_cad_ctx *ctx, const struct nl_cad_val *v, struct nl_cad_val *base)
{
	char tmp[128];
	int n;

	switch (v->type) {
	case NL_CAD_STRING: return *v;
	case NL_CAD_ABSTIME: n = nl_cad_fmt_abstime(v->u.abs_s, v->aux, tmp, sizeof(tmp)); break;
	case NL_CAD_RELTIME:
		/* HTCondor's convertValueToStringValue reads the relTime as whole seconds */
		n = nl_cad_fmt_reltime(trunc(v->u.rel_s), tmp, sizeof(tmp));
		break;
	case NL_CAD_LIST:
	case NL_CAD_RECORD: {
		struct nl_cad_val *old = ctx->ext_base;

		ctx->ext_base = base;
		int need = nl_cad_format_e(ctx, v, NULL, 0);
		char *s = nl_cad_arena(ctx, (size_t)need + 1);

		if (s != NULL)
			nl_cad_format_e(ctx, v, s, (size_t)need + 1);
		ctx->ext_base = old;
		return s != NULL ? nl_cad_str(s, (uint32_t)need) : ERRV;
	}
	case NL_CAD_REAL:
		/* HTCondor (convertValueToStringValue): ClassAdUnParser in new-syntax mode,
		 * "%1.15E" (string(1.5) is "1.500000000000000E+00") */
		n = nl_cad_fmt_real_e(v->u.r, tmp, sizeof(tmp));
		break;
	default: n = nl_cad_format(NULL, v, tmp, sizeof(tmp)); break;
	}
	if (n < 0)
		return ERRV;
	return nl_cad_mkstr(ctx, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Number from a string for int()/real(): the whole text must parse. */
bool
nl_cad_str_num(const struct nl_cad_val *s, double *out)
{
	char tmp[64];
	char *end;

	if (s->aux <= 0 || (size_t)s->aux >= sizeof(tmp))
		return false;
	memcpy(tmp, s->u.s, (size_t)s->aux);
	tmp[s->aux] = 0;
	*out = strtod(tmp, &end);
	while (*end == ' ')
		end++;
	return *end == 0 && end != tmp;
}
