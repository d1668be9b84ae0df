/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The evaluator: a switch over the flat instruction array with an explicit value stack,
 * HTCondor's strict operators (error first, then undefined), the three-valued && and || with
 * left-to-right short-circuit, numeric promotion, time arithmetic and the built-ins.
 * Attribute references go through eval_attr(): binding, constant fast path, memo (I1), busy
 * mark (I2), depth limit (I3).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nl_cad_int.h"

#define STACK_CAP 4096u /* values; deeper evaluations yield error */

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

static const struct nl_cad_val ERRV = { .type = NL_CAD_ERROR };
static const struct nl_cad_val UNDEFV = { .type = NL_CAD_UNDEFINED };

static void *
arena(struct nl_cad_ctx *ctx, size_t n)
{
	return nl_cad_chunk_alloc(&ctx->arena_head, &ctx->arena_cur, n ? n : 1);
}

static void
arena_reset(struct nl_cad_ctx *ctx)
{
	ctx->arena_cur = ctx->arena_head;
	if (ctx->arena_head != NULL)
		ctx->arena_head->used = 0;
}

static int64_t
now_s(const struct nl_cad_ctx *ctx)
{
	return ctx->now_s != INT64_MIN ? ctx->now_s : (int64_t)time(NULL);
}

/* Boolean equivalence (HTCondor IsBooleanValueEquiv): 1 true, 0 false, -1 undefined, -2 error */
static inline int
tv(const struct nl_cad_val *v)
{
	switch (v->type) {
	case NL_CAD_BOOL: return v->u.b;
	case NL_CAD_INT: return v->u.i != 0;
	case NL_CAD_REAL: return v->u.r != 0;
	case NL_CAD_UNDEFINED: return -1;
	default: return -2;
	}
}

/* Numeric view: bool and int as integers, real as real. */
static inline bool
num(const struct nl_cad_val *v, int64_t *i, double *r, bool *is_real)
{
	switch (v->type) {
	case NL_CAD_BOOL: *i = v->u.b; *r = v->u.b; *is_real = false; return true;
	case NL_CAD_INT: *i = v->u.i; *r = (double)v->u.i; *is_real = false; return true;
	case NL_CAD_REAL: *i = 0; *r = v->u.r; *is_real = true; return true;
	default: return false;
	}
}

static bool
d2i(double d, int64_t *out)
{
	if (!(d > -9.2233720368547758e18 && d < 9.2233720368547758e18))
		return false;
	*out = (int64_t)d;
	return true;
}

static struct nl_cad_val
mkstr(struct nl_cad_ctx *ctx, const char *s, size_t n)
{
	char *c = arena(ctx, n + 1);

	if (c == NULL || n > INT32_MAX)
		return ERRV;
	memcpy(c, s, n);
	c[n] = 0;
	return nl_cad_str(c, (uint32_t)n);
}

/* Case-insensitive three-way compare of two strings (HTCondor's == and < on strings). */
static int
strcmp_ci(const struct nl_cad_val *a, const struct nl_cad_val *b)
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

static bool
identical(const struct nl_cad_val *a, const struct nl_cad_val *b, int depth)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case NL_CAD_UNDEFINED:
	case NL_CAD_ERROR: return true;
	case NL_CAD_BOOL: return a->u.b == b->u.b;
	case NL_CAD_INT: return a->u.i == b->u.i;
	case NL_CAD_REAL: return a->u.r == b->u.r || (isnan(a->u.r) && isnan(b->u.r));
	case NL_CAD_STRING:
		return a->aux == b->aux && memcmp(a->u.s, b->u.s, (size_t)a->aux) == 0;
	case NL_CAD_ABSTIME: return a->u.abs_s == b->u.abs_s;
	case NL_CAD_RELTIME: return a->u.rel_s == b->u.rel_s;
	case NL_CAD_LIST:
		if (a->aux != b->aux || depth > 32)
			return false;
		for (int32_t i = 0; i < a->aux; i++)
			if (!identical(&a->u.l[i], &b->u.l[i], depth + 1))
				return false;
		return true;
	case NL_CAD_RECORD: return a->kind == b->kind && a->u.fr == b->u.fr;
	}
	return false;
}

static struct nl_cad_val
time_arith(int op, const struct nl_cad_val *a, const struct nl_cad_val *b)
{
	int64_t i;
	double r;
	bool isr;
	struct nl_cad_val v;

	switch (op) {
	case NL_CAD_B_ADD:
	case NL_CAD_B_SUB:
		if (a->type == NL_CAD_ABSTIME && b->type == NL_CAD_RELTIME) {
			double s = (double)a->u.abs_s + (op == NL_CAD_B_ADD ? b->u.rel_s : -b->u.rel_s);

			if (!d2i(floor(s), &i))
				return ERRV;
			v = nl_cad_abstime(i);
			v.aux = a->aux;
			return v;
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
		if (a->type == NL_CAD_RELTIME && num(b, &i, &r, &isr))
			return nl_cad_reltime(a->u.rel_s * r);
		if (b->type == NL_CAD_RELTIME && num(a, &i, &r, &isr))
			return nl_cad_reltime(b->u.rel_s * r);
		return ERRV;
	case NL_CAD_B_DIV:
		if (a->type == NL_CAD_RELTIME && num(b, &i, &r, &isr) && r != 0)
			return nl_cad_reltime(a->u.rel_s / r);
		return ERRV;
	}
	return ERRV;
}

static struct nl_cad_val
binop(int op, const struct nl_cad_val *a, const struct nl_cad_val *b)
{
	int64_t ai = 0, bi = 0;
	double ar = 0, br = 0;
	bool arl = false, brl = false;

	if (op == NL_CAD_B_IS)
		return nl_cad_bool(identical(a, b, 0));
	if (op == NL_CAD_B_ISNT)
		return nl_cad_bool(!identical(a, b, 0));
	/* strict: error first, then undefined */
	if (a->type == NL_CAD_ERROR || b->type == NL_CAD_ERROR)
		return ERRV;
	if (a->type == NL_CAD_UNDEFINED || b->type == NL_CAD_UNDEFINED)
		return UNDEFV;
	bool an = num(a, &ai, &ar, &arl), bn = num(b, &bi, &br, &brl);

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
				if (bi == -1)
					return nl_cad_int((int64_t)(0 - x));
				return nl_cad_int(ai / bi);
			default:
				if (bi == 0)
					return ERRV;
				if (bi == -1)
					return nl_cad_int(0);
				return nl_cad_int(ai % bi);
			}
		}
		switch (op) {
		case NL_CAD_B_ADD: return nl_cad_real(ar + br);
		case NL_CAD_B_SUB: return nl_cad_real(ar - br);
		case NL_CAD_B_MUL: return nl_cad_real(ar * br);
		case NL_CAD_B_DIV: return br == 0 ? ERRV : nl_cad_real(ar / br);
		default: return br == 0 ? ERRV : nl_cad_real(fmod(ar, br));
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
			c = strcmp_ci(a, b);
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
		if (a->type == NL_CAD_BOOL && b->type == NL_CAD_BOOL) {
			bool x = a->u.b, y = b->u.b;

			return nl_cad_bool(op == NL_CAD_B_BAND ? (x && y) :
					   op == NL_CAD_B_BOR ? (x || y) : (x != y));
		}
		if (!an || !bn || arl || brl)
			return ERRV;
		return nl_cad_int(op == NL_CAD_B_BAND ? (ai & bi) :
				  op == NL_CAD_B_BOR ? (ai | bi) : (ai ^ bi));
	default: /* shifts */
		if (a->type != NL_CAD_INT || b->type != NL_CAD_INT)
			return ERRV;
		if (op == NL_CAD_B_SHL)
			return nl_cad_int((int64_t)((uint64_t)ai << (bi & 63)));
		if (op == NL_CAD_B_USHR)
			return nl_cad_int((int64_t)((uint64_t)ai >> (bi & 63)));
		return nl_cad_int(ai < 0 ? (int64_t)~(~(uint64_t)ai >> (bi & 63))
				  : (int64_t)((uint64_t)ai >> (bi & 63)));
	}
}

static struct nl_cad_val
unop(int op, const struct nl_cad_val *a)
{
	if (a->type == NL_CAD_UNDEFINED)
		return UNDEFV;
	switch (op) {
	case NL_CAD_U_NOT: {
		int t = tv(a);

		return t >= 0 ? nl_cad_bool(!t) : ERRV;
	}
	case NL_CAD_U_BNOT:
		if (a->type == NL_CAD_INT)
			return nl_cad_int(~a->u.i);
		if (a->type == NL_CAD_BOOL)
			return nl_cad_bool(!a->u.b);
		return ERRV;
	default:
		switch (a->type) {
		case NL_CAD_BOOL:
			return nl_cad_int(op == NL_CAD_U_NEG ? -(int64_t)a->u.b : a->u.b);
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

static struct nl_cad_val run(struct nl_cad_ctx *ctx, uint32_t pc, struct nl_cad_frame *f,
			     struct nl_cad_val *base);

static struct nl_cad_val
eval_attr(struct nl_cad_ctx *ctx, struct nl_cad_frame *f, uint32_t slot,
	  struct nl_cad_val *base)
{
	const struct nl_cad_prog *p = ctx->prog;

	if (f == ctx->root && ctx->bound[slot])
		return ctx->bind[slot];
	uint32_t code = f->def->code[slot];

	if (code == UINT32_MAX)
		return UNDEFV;
	/* constant attribute: ENTER, CONST, RET */
	if (p->ins[code + 1].op == NL_CAD_OP_CONST && p->ins[code + 2].op == NL_CAD_OP_RET)
		return p->consts[p->ins[code + 1].c];
	struct nl_cad_memo *m = &f->memo[slot];

	if (m->gen == ctx->gen)
		return m->val;
	if (m->busy)
		return UNDEFV; /* I2: circular reference */
	if (ctx->depth >= NL_CAD_MAX_EVAL_DEPTH)
		return ERRV;
	m->busy = 1;
	ctx->depth++;
	struct nl_cad_val v = run(ctx, code, f, base);

	ctx->depth--;
	m->busy = 0;
	m->gen = ctx->gen;
	m->val = v;
	return v;
}

struct nl_cad_val
nl_cad_eval_attr(struct nl_cad_ctx *ctx, struct nl_cad_frame *f, uint32_t slot)
{
	return eval_attr(ctx, f, slot, ctx->ext_base != NULL ? ctx->ext_base : ctx->stack);
}

static struct nl_cad_val
lookup(struct nl_cad_ctx *ctx, const struct nl_cad_val *r, const char *s, uint32_t len,
       uint32_t h, struct nl_cad_val *base)
{
	if (r->kind == NL_CAD_REC_HOST) {
		const struct nl_cad_schema *sc = r->u.rec->schema;

		for (unsigned int i = 0; i < sc->n; i++)
			if (sc->hash[i] == h && nl_cad_name_eq(sc->names[i], sc->len[i], s, len))
				return r->u.rec->vals[i];
		return UNDEFV;
	}
	const struct nl_cad_def *d = r->u.fr->def;

	for (uint32_t i = 0; i < d->n; i++)
		if (d->names[i].hash == h && nl_cad_name_eq(d->names[i].s, d->names[i].len, s, len))
			return eval_attr(ctx, r->u.fr, i, base);
	return UNDEFV;
}

static struct nl_cad_val
select_name(struct nl_cad_ctx *ctx, const struct nl_cad_val *b, const struct nl_cad_name *nm,
	    struct nl_cad_val *base)
{
	switch (b->type) {
	case NL_CAD_RECORD:
		return lookup(ctx, b, nm->s, nm->len, nm->hash, base);
	case NL_CAD_UNDEFINED:
		return UNDEFV;
	case NL_CAD_LIST: {
		/* list.attr maps the selection over the list */
		struct nl_cad_val *out = arena(ctx, (size_t)b->aux * sizeof(*out));

		if (out == NULL)
			return ERRV;
		for (int32_t i = 0; i < b->aux; i++) {
			const struct nl_cad_val *e = &b->u.l[i];

			out[i] = e->type == NL_CAD_RECORD ? lookup(ctx, e, nm->s, nm->len, nm->hash, base)
				 : e->type == NL_CAD_UNDEFINED ? UNDEFV : ERRV;
		}
		return nl_cad_list(out, (uint32_t)b->aux);
	}
	default:
		return ERRV;
	}
}

static struct nl_cad_val
subscript(struct nl_cad_ctx *ctx, const struct nl_cad_val *b, const struct nl_cad_val *i,
	  struct nl_cad_val *base)
{
	if (b->type == NL_CAD_ERROR || i->type == NL_CAD_ERROR)
		return ERRV;
	if (b->type == NL_CAD_UNDEFINED || i->type == NL_CAD_UNDEFINED)
		return UNDEFV;
	if (b->type == NL_CAD_LIST && i->type == NL_CAD_INT) {
		if (i->u.i < 0 || i->u.i >= b->aux)
			return ERRV;
		return b->u.l[i->u.i];
	}
	if (b->type == NL_CAD_RECORD && i->type == NL_CAD_STRING)
		return lookup(ctx, b, i->u.s, (uint32_t)i->aux, nl_cad_hash(i->u.s, (uint32_t)i->aux),
			      base);
	return ERRV;
}

/* Text of a value for string() and strcat(): strings raw, the rest unparsed. */
static struct nl_cad_val
to_string(struct nl_cad_ctx *ctx, const struct nl_cad_val *v, struct nl_cad_val *base)
{
	char tmp[128];
	int n;

	switch (v->type) {
	case NL_CAD_STRING: return *v;
	case NL_CAD_ABSTIME: n = nl_cad_fmt_abstime(v->u.abs_s, v->aux, tmp, sizeof(tmp)); break;
	case NL_CAD_RELTIME: n = nl_cad_fmt_reltime(v->u.rel_s, tmp, sizeof(tmp)); break;
	case NL_CAD_LIST:
	case NL_CAD_RECORD: {
		struct nl_cad_val *old = ctx->ext_base;

		ctx->ext_base = base;
		int need = nl_cad_format(ctx, v, NULL, 0);
		char *s = arena(ctx, (size_t)need + 1);

		if (s != NULL)
			nl_cad_format(ctx, v, s, (size_t)need + 1);
		ctx->ext_base = old;
		return s != NULL ? nl_cad_str(s, (uint32_t)need) : ERRV;
	}
	default: n = nl_cad_format(NULL, v, tmp, sizeof(tmp)); break;
	}
	if (n < 0)
		return ERRV;
	return mkstr(ctx, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Number from a string for int()/real(): the whole text must parse. */
static bool
str_num(const struct nl_cad_val *s, double *out)
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

static struct nl_cad_val
fn_round(int fn, const struct nl_cad_val *a)
{
	double r;
	int64_t i;

	switch (a->type) {
	case NL_CAD_INT: return *a;
	case NL_CAD_BOOL: return nl_cad_int(a->u.b);
	case NL_CAD_REAL: r = a->u.r; break;
	case NL_CAD_STRING:
		if (!str_num(a, &r))
			return ERRV;
		break;
	default: return ERRV;
	}
	r = fn == NL_CAD_F_FLOOR ? floor(r) : fn == NL_CAD_F_CEILING ? ceil(r) : round(r);
	return d2i(r, &i) ? nl_cad_int(i) : ERRV;
}

static struct nl_cad_val
fn_minmax(int fn, const struct nl_cad_val *l)
{
	if (l->type == NL_CAD_UNDEFINED)
		return UNDEFV;
	if (l->type != NL_CAD_LIST)
		return ERRV;
	if (l->aux == 0)
		return fn == NL_CAD_F_SUM ? nl_cad_int(0) : UNDEFV;
	int64_t isum = 0, ibest = 0;
	double rsum = 0, rbest = 0;
	bool any_real = false, undef = false;
	uint8_t ttype = l->u.l[0].type;

	/* extension: min/max of absTimes or of relTimes (all of one type) */
	if ((ttype == NL_CAD_ABSTIME || ttype == NL_CAD_RELTIME) &&
	    (fn == NL_CAD_F_MIN || fn == NL_CAD_F_MAX)) {
		struct nl_cad_val best = l->u.l[0];

		for (int32_t i = 0; i < l->aux; i++) {
			const struct nl_cad_val *e = &l->u.l[i];

			if (e->type == NL_CAD_ERROR)
				return ERRV;
			if (e->type == NL_CAD_UNDEFINED) {
				undef = true;
				continue;
			}
			if (e->type != ttype)
				return ERRV;
			double x = ttype == NL_CAD_ABSTIME ? (double)e->u.abs_s : e->u.rel_s;
			double y = ttype == NL_CAD_ABSTIME ? (double)best.u.abs_s : best.u.rel_s;

			if (fn == NL_CAD_F_MIN ? x < y : x > y)
				best = *e;
		}
		return undef ? UNDEFV : best;
	}
	for (int32_t i = 0; i < l->aux; i++) {
		const struct nl_cad_val *e = &l->u.l[i];
		int64_t x;
		double r;
		bool isr;

		if (e->type == NL_CAD_ERROR)
			return ERRV;
		if (e->type == NL_CAD_UNDEFINED) {
			undef = true;
			continue;
		}
		if (!num(e, &x, &r, &isr))
			return ERRV;
		if (isr)
			any_real = true;
		else
			r = (double)x;
		isum = (int64_t)((uint64_t)isum + (uint64_t)x * !isr);
		rsum += r;
		if (i == 0 || (fn == NL_CAD_F_MIN ? r < rbest : r > rbest)) {
			rbest = r;
			ibest = isr ? 0 : x;
		}
	}
	if (undef)
		return UNDEFV;
	switch (fn) {
	case NL_CAD_F_SUM: return any_real ? nl_cad_real(rsum) : nl_cad_int(isum);
	case NL_CAD_F_AVG: return nl_cad_real(rsum / l->aux);
	default: return any_real ? nl_cad_real(rbest) : nl_cad_int(ibest);
	}
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
	return num(v, &i, out, &isr);
}

static struct nl_cad_val
call(struct nl_cad_ctx *ctx, int fn, const struct nl_cad_val *a, uint32_t n)
{
	double r;
	int64_t i;

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
	case NL_CAD_F_IDENTICALMEMBER:
		if (a[1].type == NL_CAD_ERROR)
			return ERRV;
		if (a[1].type == NL_CAD_UNDEFINED)
			return UNDEFV;
		if (a[1].type != NL_CAD_LIST)
			return ERRV;
		for (int32_t k = 0; k < a[1].aux; k++)
			if (identical(&a[0], &a[1].u.l[k], 0))
				return nl_cad_bool(true);
		return nl_cad_bool(false);
	case NL_CAD_F_TIME: return nl_cad_int(now_s(ctx));
	default: break;
	}
	/* the rest are strict in every argument: error first, then undefined */
	for (uint32_t k = 0; k < n; k++)
		if (a[k].type == NL_CAD_ERROR)
			return ERRV;
	if (fn == NL_CAD_F_STRCAT) {
		size_t tot = 0;
		struct nl_cad_val s[255];

		for (uint32_t k = 0; k < n; k++) {
			if (a[k].type == NL_CAD_UNDEFINED)
				return ERRV;
			s[k] = to_string(ctx, &a[k], (struct nl_cad_val *)(uintptr_t)(a + n));
			if (s[k].type != NL_CAD_STRING)
				return ERRV;
			tot += (size_t)s[k].aux;
		}
		char *c = arena(ctx, tot + 1);

		if (c == NULL || tot > INT32_MAX)
			return ERRV;
		tot = 0;
		for (uint32_t k = 0; k < n; k++) {
			memcpy(c + tot, s[k].u.s, (size_t)s[k].aux);
			tot += (size_t)s[k].aux;
		}
		c[tot] = 0;
		return nl_cad_str(c, (uint32_t)tot);
	}
	for (uint32_t k = 0; k < n; k++)
		if (a[k].type == NL_CAD_UNDEFINED)
			return UNDEFV;
	switch (fn) {
	case NL_CAD_F_MEMBER: {
		const struct nl_cad_val *x = &a[0], *l = &a[1];

		if (l->type != NL_CAD_LIST || x->type == NL_CAD_LIST || x->type == NL_CAD_RECORD)
			return ERRV;
		for (int32_t k = 0; k < l->aux; k++) {
			const struct nl_cad_val *e = &l->u.l[k];

			if (x->type == NL_CAD_STRING && e->type == NL_CAD_STRING) {
				if (x->aux == e->aux && nl_cad_name_eq(x->u.s, (uint32_t)x->aux, e->u.s,
								      (uint32_t)e->aux))
					return nl_cad_bool(true);
				continue;
			}
			struct nl_cad_val c = binop(NL_CAD_B_EQ, x, e);

			if (nl_cad_is_true(&c))
				return c;
		}
		return nl_cad_bool(false);
	}
	case NL_CAD_F_SIZE:
		switch (a[0].type) {
		case NL_CAD_LIST:
		case NL_CAD_STRING: return nl_cad_int(a[0].aux);
		case NL_CAD_RECORD:
			return nl_cad_int(a[0].kind == NL_CAD_REC_HOST ? a[0].u.rec->schema->n
								      : a[0].u.fr->def->n);
		default: return ERRV;
		}
	case NL_CAD_F_ABSTIME: {
		struct nl_cad_val v;

		if (n == 0) {
			return nl_cad_abstime(now_s(ctx));
		}
		if (a[0].type == NL_CAD_ABSTIME) {
			v = a[0];
		} else if (a[0].type == NL_CAD_STRING) {
			int32_t off;

			if (nl_cad_parse_abstime(a[0].u.s, (uint32_t)a[0].aux, &i, &off) < 0)
				return ERRV;
			v = nl_cad_abstime(i);
			v.aux = off;
		} else if (a[0].type == NL_CAD_INT) {
			v = nl_cad_abstime(a[0].u.i);
		} else if (a[0].type == NL_CAD_REAL && d2i(floor(a[0].u.r), &i)) {
			v = nl_cad_abstime(i);
		} else {
			return ERRV;
		}
		if (n == 2) {
			if (a[1].type != NL_CAD_INT || a[1].u.i < -86400 || a[1].u.i > 86400)
				return ERRV;
			v.aux = (int32_t)a[1].u.i;
		}
		return v;
	}
	case NL_CAD_F_RELTIME:
		switch (a[0].type) {
		case NL_CAD_RELTIME: return a[0];
		case NL_CAD_INT: return nl_cad_reltime((double)a[0].u.i);
		case NL_CAD_REAL: return nl_cad_reltime(a[0].u.r);
		case NL_CAD_STRING:
			if (nl_cad_parse_reltime(a[0].u.s, (uint32_t)a[0].aux, &r) < 0)
				return ERRV;
			return nl_cad_reltime(r);
		default: return ERRV;
		}
	case NL_CAD_F_INT:
		switch (a[0].type) {
		case NL_CAD_INT: return a[0];
		case NL_CAD_BOOL: return nl_cad_int(a[0].u.b);
		case NL_CAD_REAL: return d2i(a[0].u.r, &i) ? nl_cad_int(i) : ERRV;
		case NL_CAD_ABSTIME: return nl_cad_int(a[0].u.abs_s);
		case NL_CAD_RELTIME: return d2i(a[0].u.rel_s, &i) ? nl_cad_int(i) : ERRV;
		case NL_CAD_STRING:
			return str_num(&a[0], &r) && d2i(r, &i) ? nl_cad_int(i) : ERRV;
		default: return ERRV;
		}
	case NL_CAD_F_REAL:
		switch (a[0].type) {
		case NL_CAD_REAL: return a[0];
		case NL_CAD_INT: return nl_cad_real((double)a[0].u.i);
		case NL_CAD_BOOL: return nl_cad_real(a[0].u.b);
		case NL_CAD_ABSTIME: return nl_cad_real((double)a[0].u.abs_s);
		case NL_CAD_RELTIME: return nl_cad_real(a[0].u.rel_s);
		case NL_CAD_STRING: return str_num(&a[0], &r) ? nl_cad_real(r) : ERRV;
		default: return ERRV;
		}
	case NL_CAD_F_STRING: return to_string(ctx, &a[0], (struct nl_cad_val *)(uintptr_t)(a + n));
	case NL_CAD_F_FLOOR:
	case NL_CAD_F_CEILING:
	case NL_CAD_F_ROUND: return fn_round(fn, &a[0]);
	case NL_CAD_F_SUBSTR: {
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
		return mkstr(ctx, a[0].u.s + off, (size_t)cnt);
	}
	case NL_CAD_F_TOUPPER:
	case NL_CAD_F_TOLOWER: {
		if (a[0].type != NL_CAD_STRING)
			return ERRV;
		struct nl_cad_val v = mkstr(ctx, a[0].u.s, (size_t)a[0].aux);

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

		if (a[0].type != NL_CAD_STRING)
			return ERRV;
		if (a[1].type == NL_CAD_ABSTIME)
			from = a[1].u.abs_s;
		else if (a[1].type == NL_CAD_INT)
			from = a[1].u.i;
		else
			return ERRV;
		if (a[2].type == NL_CAD_ABSTIME)
			to = a[2].u.abs_s;
		else if (a[2].type == NL_CAD_INT)
			to = a[2].u.i;
		else
			return ERRV;
		if (ctx->rsvutil == NULL)
			return UNDEFV;
		struct nl_cad_val *out = arena(ctx, 3 * sizeof(*out));

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

/* evaluateList(list, "var", "attr"): bind var to each element, evaluate attr (seed 004 §5.4). */
static struct nl_cad_val
evaluate_list(struct nl_cad_ctx *ctx, const struct nl_cad_val *l, uint32_t var, uint32_t attr,
	      struct nl_cad_val *base)
{
	if (l->type == NL_CAD_UNDEFINED)
		return UNDEFV;
	if (l->type != NL_CAD_LIST)
		return ERRV;
	struct nl_cad_val *out = arena(ctx, (size_t)l->aux * sizeof(*out));

	if (out == NULL)
		return ERRV;
	uint8_t old_bound = ctx->bound[var];
	struct nl_cad_val old_val = ctx->bind[var];
	uint64_t old_gen = ctx->gen;

	for (int32_t i = 0; i < l->aux; i++) {
		/* a fresh generation: attributes depending on var are recomputed (I1) */
		if (++ctx->steps > ctx->budget) {
			out[i] = ERRV;
			continue;
		}
		ctx->gen = ++ctx->gen_next;
		ctx->bound[var] = 1;
		ctx->bind[var] = l->u.l[i];
		out[i] = eval_attr(ctx, ctx->root, attr, base);
	}
	ctx->bound[var] = old_bound;
	ctx->bind[var] = old_val;
	ctx->gen = old_gen;
	return nl_cad_list(out, (uint32_t)l->aux);
}

/*
 * Write a result in place, field by field: building a value in a temporary and copying it
 * (16-byte load after narrower stores) defeats store-to-load forwarding on x86 and costs
 * more than the operation itself.
 */
static inline void
put_type(struct nl_cad_val *d, uint8_t t)
{
	d->type = t;
	d->kind = 0;
	d->rsvd = 0;
	d->aux = 0;
	d->u.i = 0;
}

static inline void
put_bool(struct nl_cad_val *d, bool b)
{
	put_type(d, NL_CAD_BOOL);
	d->u.b = b;
}

/* Comparisons of numbers without the generic machinery; false when not applicable. The
 * generic path gives the same results (NaN compares unequal and unordered). */
static inline bool
bin_fast(int op, const struct nl_cad_val *a, const struct nl_cad_val *b, struct nl_cad_val *out)
{
	if (op < NL_CAD_B_LT || op > NL_CAD_B_NE)
		return false;
	bool r;

	if (a->type == NL_CAD_INT && b->type == NL_CAD_INT) {
		int64_t x = a->u.i, y = b->u.i;

		switch (op) {
		case NL_CAD_B_LT: r = x < y; break;
		case NL_CAD_B_LE: r = x <= y; break;
		case NL_CAD_B_GT: r = x > y; break;
		case NL_CAD_B_GE: r = x >= y; break;
		case NL_CAD_B_EQ: r = x == y; break;
		default: r = x != y; break;
		}
	} else if ((a->type == NL_CAD_REAL || a->type == NL_CAD_INT) &&
		   (b->type == NL_CAD_REAL || b->type == NL_CAD_INT)) {
		double x = a->type == NL_CAD_REAL ? a->u.r : (double)a->u.i;
		double y = b->type == NL_CAD_REAL ? b->u.r : (double)b->u.i;

		switch (op) {
		case NL_CAD_B_LT: r = x < y; break;
		case NL_CAD_B_LE: r = x <= y; break;
		case NL_CAD_B_GT: r = x > y; break;
		case NL_CAD_B_GE: r = x >= y; break;
		case NL_CAD_B_EQ: r = x == y; break;
		default: r = !(x == y); break;
		}
	} else {
		return false;
	}
	put_bool(out, r);
	return true;
}

/* SELECT with the host-record inline cache keyed by schema. */
static inline struct nl_cad_val
sel(struct nl_cad_ctx *ctx, uint32_t si, const struct nl_cad_val *b, struct nl_cad_val *base)
{
	const struct nl_cad_prog *p = ctx->prog;

	if (b->type == NL_CAD_RECORD && b->kind == NL_CAD_REC_HOST) {
		const struct nl_cad_rec *r = b->u.rec;
		struct nl_cad_selc *sc = &ctx->selc[si];

		if (sc->schema == r->schema)
			return r->vals[sc->idx];
		const struct nl_cad_name *nm = &p->sel[si];

		for (unsigned int k = 0; k < r->schema->n; k++) {
			if (r->schema->hash[k] == nm->hash &&
			    nl_cad_name_eq(r->schema->names[k], r->schema->len[k], nm->s, nm->len)) {
				sc->schema = r->schema;
				sc->idx = k;
				return r->vals[k];
			}
		}
		return UNDEFV;
	}
	return select_name(ctx, b, &p->sel[si], base);
}

/*
 * Dispatch: with GCC/Clang, direct threading (a computed goto per instruction, one indirect
 * branch per opcode site for the predictor); otherwise a plain switch.
 */
#if defined(__GNUC__)
#define NL_CAD_THREADED 1
#define CASE(x) case NL_CAD_OP_##x: l_##x
#define NEXT                                   \
	do {                                   \
		in = &ins[pc++];               \
		goto *tbl[in->op];             \
	} while (0)
#define NEXT_FIRST goto *tbl[in->op]
#else
#define CASE(x) case NL_CAD_OP_##x
#define NEXT break
#define NEXT_FIRST do { } while (0)
#endif

static struct nl_cad_val
run(struct nl_cad_ctx *ctx, uint32_t pc, struct nl_cad_frame *f, struct nl_cad_val *base)
{
	const struct nl_cad_prog *p = ctx->prog;
	const struct nl_cad_ins *ins = p->ins;
	struct nl_cad_val *sp = base;
#ifdef NL_CAD_THREADED
	static const void *const tbl[] = {
		[NL_CAD_OP_ENTER] = &&l_BAD,
		[NL_CAD_OP_RET] = &&l_RET,
		[NL_CAD_OP_CONST] = &&l_CONST,
		[NL_CAD_OP_LEX] = &&l_LEX,
		[NL_CAD_OP_ROOTREF] = &&l_ROOTREF,
		[NL_CAD_OP_SELF] = &&l_SELF,
		[NL_CAD_OP_PARENT] = &&l_PARENT,
		[NL_CAD_OP_ROOT] = &&l_ROOT,
		[NL_CAD_OP_SELECT] = &&l_SELECT,
		[NL_CAD_OP_INDEX] = &&l_INDEX,
		[NL_CAD_OP_UN] = &&l_UN,
		[NL_CAD_OP_BIN] = &&l_BIN,
		[NL_CAD_OP_ANDL] = &&l_ANDL,
		[NL_CAD_OP_ANDR] = &&l_ANDR,
		[NL_CAD_OP_ORL] = &&l_ORL,
		[NL_CAD_OP_ORR] = &&l_ORR,
		[NL_CAD_OP_COND] = &&l_COND,
		[NL_CAD_OP_JMP] = &&l_JMP,
		[NL_CAD_OP_ELVIS] = &&l_ELVIS,
		[NL_CAD_OP_CALL] = &&l_CALL,
		[NL_CAD_OP_EVLIST] = &&l_EVLIST,
		[NL_CAD_OP_RECORD] = &&l_RECORD,
		[NL_CAD_OP_LIST] = &&l_LIST,
		[NL_CAD_OP_ROOTSEL] = &&l_ROOTSEL,
		[NL_CAD_OP_BINK] = &&l_BINK,
	};
#endif

	/* a block has no backward jump: its cost is bounded by its length, so the budget
	 * counts blocks run (I2) */
	if (base + ins[pc].c > ctx->stack + ctx->stack_cap || ++ctx->steps > ctx->budget)
		return ERRV;
	pc++;
	for (;;) {
		const struct nl_cad_ins *in = &ins[pc++];

		NEXT_FIRST;
		switch (in->op) {
		CASE(RET):
			return sp[-1];
		CASE(CONST):
			*sp++ = p->consts[in->c];
			NEXT;
		CASE(LEX): {
			struct nl_cad_frame *fr = f;

			for (unsigned int d = 0; d < in->a; d++)
				fr = fr->parent;
			struct nl_cad_val v = eval_attr(ctx, fr, in->c, sp);

			*sp++ = v;
			NEXT;
		}
		CASE(ROOTREF): {
			if (ctx->bound[in->c]) {
				*sp++ = ctx->bind[in->c];
				NEXT;
			}
			uint32_t code = p->defs[0].code[in->c];

			if (code != UINT32_MAX && ins[code + 1].op == NL_CAD_OP_CONST &&
			    ins[code + 2].op == NL_CAD_OP_RET) {
				*sp++ = p->consts[ins[code + 1].c];
				NEXT;
			}
			struct nl_cad_val v = eval_attr(ctx, ctx->root, in->c, sp);

			*sp++ = v;
			NEXT;
		}
		CASE(SELF):
			sp->type = NL_CAD_RECORD;
			sp->kind = NL_CAD_REC_FRAME;
			sp->u.fr = f;
			sp++;
			NEXT;
		CASE(PARENT):
			if (f->parent == NULL) {
				*sp++ = UNDEFV;
				NEXT;
			}
			sp->type = NL_CAD_RECORD;
			sp->kind = NL_CAD_REC_FRAME;
			sp->u.fr = f->parent;
			sp++;
			NEXT;
		CASE(ROOT):
			sp->type = NL_CAD_RECORD;
			sp->kind = NL_CAD_REC_FRAME;
			sp->u.fr = ctx->root;
			sp++;
			NEXT;
		CASE(SELECT): {
			struct nl_cad_val v = sel(ctx, in->c, &sp[-1], sp);

			sp[-1] = v;
			NEXT;
		}
		CASE(ROOTSEL): {
			struct nl_cad_val v;

			if (ctx->bound[in->c]) {
				v = sel(ctx, in->b, &ctx->bind[in->c], sp);
			} else {
				struct nl_cad_val r = eval_attr(ctx, ctx->root, in->c, sp);

				v = sel(ctx, in->b, &r, sp);
			}
			*sp++ = v;
			NEXT;
		}
		CASE(INDEX): {
			struct nl_cad_val v = subscript(ctx, &sp[-2], &sp[-1], sp);

			sp[-2] = v;
			sp--;
			NEXT;
		}
		CASE(UN): {
			int t = tv(&sp[-1]);

			if (in->a == NL_CAD_U_NOT && t >= 0)
				put_bool(&sp[-1], !t);
			else
				sp[-1] = unop(in->a, &sp[-1]);
			NEXT;
		}
		CASE(BINK):
			if (!bin_fast(in->a, &sp[-1], &p->consts[in->c], &sp[-1]))
				sp[-1] = binop(in->a, &sp[-1], &p->consts[in->c]);
			NEXT;
		CASE(BIN):
			if (bin_fast(in->a, &sp[-2], &sp[-1], &sp[-2])) {
				sp--;
				NEXT;
			}
			sp[-2] = binop(in->a, &sp[-2], &sp[-1]);
			sp--;
			NEXT;
		CASE(ANDL): {
			int t = tv(&sp[-1]);

			if (t == 0) {
				put_bool(&sp[-1], false);
				pc = in->c;
			} else if (t == -2) {
				put_type(&sp[-1], NL_CAD_ERROR);
				pc = in->c;
			}
			NEXT;
		}
		CASE(ANDR): {
			int l = tv(&sp[-2]), r = tv(&sp[-1]);

			sp--;
			if (r == -2)
				put_type(&sp[-1], NL_CAD_ERROR);
			else if (l == 1 && r >= 0)
				put_bool(&sp[-1], r);
			else if (l == 1 || r != 0)
				put_type(&sp[-1], NL_CAD_UNDEFINED);
			else /* left undefined, right false */
				put_bool(&sp[-1], false);
			NEXT;
		}
		CASE(ORL): {
			int t = tv(&sp[-1]);

			if (t == 1) {
				put_bool(&sp[-1], true);
				pc = in->c;
			} else if (t == -2) {
				put_type(&sp[-1], NL_CAD_ERROR);
				pc = in->c;
			}
			NEXT;
		}
		CASE(ORR): {
			int l = tv(&sp[-2]), r = tv(&sp[-1]);

			sp--;
			if (r == -2)
				put_type(&sp[-1], NL_CAD_ERROR);
			else if (l == 0 && r >= 0)
				put_bool(&sp[-1], r);
			else if (l == 0 || r != 1)
				put_type(&sp[-1], NL_CAD_UNDEFINED);
			else /* left undefined, right true */
				put_bool(&sp[-1], true);
			NEXT;
		}
		CASE(COND): {
			int t = tv(&sp[-1]);

			sp--;
			if (t == 1)
				NEXT;
			if (t == 0) {
				pc = in->c;
				NEXT;
			}
			*sp++ = t == -1 ? UNDEFV : ERRV;
			pc = ins[in->c - 1].c;
			NEXT;
		}
		CASE(JMP):
			pc = in->c;
			NEXT;
		CASE(ELVIS):
			if (sp[-1].type != NL_CAD_UNDEFINED)
				pc = in->c;
			else
				sp--;
			NEXT;
		CASE(CALL): {
			struct nl_cad_val v = call(ctx, in->a, sp - in->c, in->c);

			sp -= in->c;
			*sp++ = v;
			NEXT;
		}
		CASE(EVLIST): {
			struct nl_cad_val v = evaluate_list(ctx, &sp[-1], in->b, in->c, sp);

			sp[-1] = v;
			NEXT;
		}
		CASE(RECORD): {
			const struct nl_cad_def *d = &p->defs[in->c];
			struct nl_cad_frame *fr =
				arena(ctx, sizeof(*fr) + d->n * sizeof(struct nl_cad_memo));

			if (fr == NULL) {
				*sp++ = ERRV;
				NEXT;
			}
			fr->def = d;
			fr->parent = f;
			memset(fr->memo, 0, d->n * sizeof(struct nl_cad_memo));
			sp->type = NL_CAD_RECORD;
			sp->kind = NL_CAD_REC_FRAME;
			sp->u.fr = fr;
			sp++;
			NEXT;
		}
		CASE(LIST): {
			struct nl_cad_val *items = arena(ctx, in->c * sizeof(*items));

			if (items == NULL) {
				sp -= in->c;
				*sp++ = ERRV;
				NEXT;
			}
			sp -= in->c;
			memcpy(items, sp, in->c * sizeof(*items));
			*sp++ = nl_cad_list(items, in->c);
			NEXT;
		}
		default:
		l_BAD:
			return ERRV;
		}
	}
}

int
nl_cad_ctx_create(const struct nl_cad_prog *prog, struct nl_cad_ctx **out)
{
	uint32_t n = prog->defs[0].n;
	struct nl_cad_ctx *ctx = calloc(1, sizeof(*ctx));

	*out = NULL;
	if (ctx == NULL)
		return -ENOMEM;
	ctx->prog = prog;
	ctx->root = calloc(1, sizeof(*ctx->root) + (n + 1) * sizeof(struct nl_cad_memo));
	ctx->bind = calloc(n + 1, sizeof(*ctx->bind));
	ctx->bound = calloc(n + 1, 1);
	ctx->stack_cap = STACK_CAP;
	ctx->stack = calloc(STACK_CAP, sizeof(*ctx->stack));
	ctx->selc = calloc(prog->n_sel + 1, sizeof(*ctx->selc));
	if (ctx->root == NULL || ctx->bind == NULL || ctx->bound == NULL || ctx->stack == NULL ||
	    ctx->selc == NULL) {
		nl_cad_ctx_free(ctx);
		return -ENOMEM;
	}
	ctx->root->def = &prog->defs[0];
	ctx->gen = ctx->gen_next = 1;
	ctx->budget = NL_CAD_DEF_STEP_BUDGET;
	ctx->now_s = INT64_MIN;
	*out = ctx;
	return 0;
}

void
nl_cad_ctx_free(struct nl_cad_ctx *ctx)
{
	if (ctx == NULL)
		return;
	free(ctx->root);
	free(ctx->bind);
	free(ctx->bound);
	free(ctx->stack);
	free(ctx->selc);
	nl_cad_chunk_free(ctx->arena_head);
	free(ctx);
}

void
nl_cad_ctx_set_now(struct nl_cad_ctx *ctx, int64_t now)
{
	ctx->now_s = now;
}

void
nl_cad_ctx_set_budget(struct nl_cad_ctx *ctx, uint64_t steps)
{
	ctx->budget = steps ? steps : NL_CAD_DEF_STEP_BUDGET;
}

void
nl_cad_ctx_set_rsvutil(struct nl_cad_ctx *ctx, nl_cad_rsvutil_fn fn, void *arg)
{
	ctx->rsvutil = fn;
	ctx->rsvutil_arg = arg;
}

void
nl_cad_bind(struct nl_cad_ctx *ctx, int slot, const struct nl_cad_val *v)
{
	if (slot < 0 || (uint32_t)slot >= ctx->prog->defs[0].n)
		return;
	ctx->bound[slot] = 1;
	ctx->bind[slot] = *v;
}

struct nl_cad_val *
nl_cad_bind_ref(struct nl_cad_ctx *ctx, int slot)
{
	if (slot < 0 || (uint32_t)slot >= ctx->prog->defs[0].n)
		return &ctx->scratch;
	ctx->bound[slot] = 1;
	return &ctx->bind[slot];
}

void
nl_cad_unbind(struct nl_cad_ctx *ctx, int slot)
{
	if (slot < 0 || (uint32_t)slot >= ctx->prog->defs[0].n)
		return;
	ctx->bound[slot] = 0;
}

static void
begin(struct nl_cad_ctx *ctx)
{
	arena_reset(ctx);
	ctx->gen = ++ctx->gen_next;
	ctx->steps = 0;
	ctx->depth = 0;
}

int
nl_cad_eval(struct nl_cad_ctx *ctx, int slot, struct nl_cad_val *out)
{
	if (slot < 0 || (uint32_t)slot >= ctx->prog->defs[0].n) {
		*out = ERRV;
		return -EINVAL;
	}
	begin(ctx);
	*out = eval_attr(ctx, ctx->root, (uint32_t)slot, ctx->stack);
	if (ctx->steps > ctx->budget)
		*out = ERRV; /* I2: over budget, the whole evaluation is error */
	return 0;
}

int
nl_cad_explain(struct nl_cad_ctx *ctx, int slot, struct nl_cad_why *why)
{
	const struct nl_cad_def *d = &ctx->prog->defs[0];

	if (slot < 0 || (uint32_t)slot >= d->n || d->code[slot] == UINT32_MAX ||
	    d->n_clauses[slot] == 0)
		return -EINVAL;
	begin(ctx);
	for (uint32_t j = 0; j < d->n_clauses[slot]; j++) {
		const struct nl_cad_clause *c = &d->clauses[slot][j];
		struct nl_cad_val v = run(ctx, c->code, ctx->root, ctx->stack);

		if (ctx->steps > ctx->budget)
			v = ERRV;
		if (nl_cad_is_true(&v))
			continue;
		why->clause = (int)j;
		why->n_clauses = (int)d->n_clauses[slot];
		why->line = c->line;
		why->col = c->col;
		why->text = ctx->prog->src + c->text_off;
		why->text_len = c->text_len;
		why->val = v;
		return 0;
	}
	return -ENOENT;
}

int
nl_cad_rec_get(struct nl_cad_ctx *ctx, const struct nl_cad_val *rec, const char *name,
	       struct nl_cad_val *out)
{
	uint32_t len = (uint32_t)strlen(name);

	if (rec->type != NL_CAD_RECORD || (rec->kind == NL_CAD_REC_FRAME && ctx == NULL)) {
		*out = ERRV;
		return -EINVAL;
	}
	*out = lookup(ctx, rec, name, len, nl_cad_hash(name, len), ctx ? ctx->stack : NULL);
	return 0;
}
