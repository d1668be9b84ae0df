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

#define ERRV NL_CAD_ERRV
#define UNDEFV NL_CAD_UNDEFV
#define STACK_CAP 4096u /* values; deeper evaluations yield error */

static struct nl_cad_val run(struct nl_cad_ctx *ctx, uint32_t pc, struct nl_cad_frame *f,
			     struct nl_cad_val *base);

static struct nl_cad_val
eval_attr(struct nl_cad_ctx *ctx, struct nl_cad_frame *f, uint32_t slot,
	  struct nl_cad_val *base)
{
	if (__builtin_expect(f->ctx != ctx, 0)) {
		/* I5: a record of the context that called eval() (its def indexes that context's
		 * program and its memo is stamped with that context's generation): evaluate it
		 * there, above that context's stack top (it is inside the eval() call) */
		struct nl_cad_ctx *o = f->ctx;

		return eval_attr(o, f, slot, o->ext_base != NULL ? o->ext_base : o->stack);
	}
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

/* ctx->attr_fn: the unparser and meta-equality evaluate record attributes through it */
static struct nl_cad_val
attr_hook(struct nl_cad_ctx *ctx, struct nl_cad_frame *f, uint32_t slot)
{
	return eval_attr(ctx, f, slot, ctx->ext_base != NULL ? ctx->ext_base : ctx->stack);
}

static struct nl_cad_val
lookup_found(struct nl_cad_ctx *ctx, const struct nl_cad_val *r, const char *s, uint32_t len,
	     uint32_t h, struct nl_cad_val *base, bool *found)
{
	*found = true;
	if (r->kind == NL_CAD_REC_HOST) {
		const struct nl_cad_schema *sc = r->u.rec->schema;

		for (unsigned int i = 0; i < sc->n; i++)
			if (sc->hash[i] == h && nl_cad_name_eq(sc->names[i], sc->len[i], s, len))
				return r->u.rec->vals[i];
		*found = false;
		return UNDEFV;
	}
	const struct nl_cad_def *d = r->u.fr->def;

	for (uint32_t i = 0; i < d->n; i++)
		if (d->names[i].hash == h && nl_cad_name_eq(d->names[i].s, d->names[i].len, s, len))
			return eval_attr(ctx, r->u.fr, i, base);
	*found = false;
	return UNDEFV;
}

static struct nl_cad_val
lookup(struct nl_cad_ctx *ctx, const struct nl_cad_val *r, const char *s, uint32_t len,
       uint32_t h, struct nl_cad_val *base)
{
	bool found;

	return lookup_found(ctx, r, s, len, h, base, &found);
}

/* r.name (HTCondor's AttributeReference::FindExpr, then ClassAd::LookupInScope): the name
 * in the record, else, when the record does not define it, self/my (the record), parent (its
 * lexical parent), root/toplevel (the root record) and currentTime (time()), else the name in
 * the record's lexical parents outward ([a = 1; r = [b = 2]].r.a is 1). */
static struct nl_cad_val
select_rec(struct nl_cad_ctx *ctx, const struct nl_cad_val *r, const struct nl_cad_name *nm,
	   struct nl_cad_val *base)
{
	bool found;
	struct nl_cad_val v = lookup_found(ctx, r, nm->s, nm->len, nm->hash, base, &found);

	if (found)
		return v;
	if (nl_cad_name_eq(nm->s, nm->len, "self", 4) || nl_cad_name_eq(nm->s, nm->len, "my", 2))
		return *r;
	if (nl_cad_name_eq(nm->s, nm->len, "currenttime", 11))
		return nl_cad_int(nl_cad_now_s(ctx));
	bool root = nl_cad_name_eq(nm->s, nm->len, "root", 4) ||
		    nl_cad_name_eq(nm->s, nm->len, "toplevel", 8);
	bool parent = nl_cad_name_eq(nm->s, nm->len, "parent", 6);

	if (r->kind == NL_CAD_REC_HOST) {
		if (!root)
			return UNDEFV;
		v.type = NL_CAD_RECORD;
		v.kind = NL_CAD_REC_FRAME;
		v.u.fr = ctx->root;
		return v;
	}
	struct nl_cad_frame *fr = r->u.fr;

	if (root || parent) {
		struct nl_cad_frame *t = root ? fr->ctx->root : fr->parent;

		if (t == NULL)
			return UNDEFV;
		v = *r;
		v.u.fr = t;
		return v;
	}
	for (fr = fr->parent; fr != NULL; fr = fr->parent) {
		struct nl_cad_val p = *r;

		p.u.fr = fr;
		v = lookup_found(ctx, &p, nm->s, nm->len, nm->hash, base, &found);
		if (found)
			return v;
	}
	return UNDEFV;
}

/* Not inlined: the evaluator's loop selects from host records through sel()'s cache, and this
 * path's registers would crowd that loop (3 % more instructions per Fig. 4 evaluation). */
static __attribute__((noinline)) struct nl_cad_val
select_name(struct nl_cad_ctx *ctx, const struct nl_cad_val *b, const struct nl_cad_name *nm,
	    struct nl_cad_val *base, int depth)
{
	switch (b->type) {
	case NL_CAD_RECORD:
		return select_rec(ctx, b, nm, base);
	case NL_CAD_UNDEFINED:
		return UNDEFV;
	case NL_CAD_LIST: {
		/* list.attr maps the selection over the list (lists in it too) */
		struct nl_cad_val *out = nl_cad_arena(ctx, (size_t)b->aux * sizeof(*out));

		if (out == NULL || depth > NL_CAD_MAX_VALUE_DEPTH)
			return ERRV;
		for (int32_t i = 0; i < b->aux; i++)
			out[i] = select_name(ctx, &b->u.l[i], nm, base, depth + 1);
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
		/* HTCondor reads the index as an int (Value::IsIntegerValue(int &)) */
		int32_t k = (int32_t)(uint32_t)(uint64_t)i->u.i;

		if (k < 0 || k >= b->aux)
			return ERRV;
		return b->u.l[k];
	}
	if (b->type == NL_CAD_RECORD && i->type == NL_CAD_STRING) {
		/* HTCondor (Operation::_doOperation, SUBSCRIPT_OP): r["name"] of a name the record
		 * lacks is undefined */
		return lookup(ctx, b, i->u.s, (uint32_t)i->aux,
			      nl_cad_hash(i->u.s, (uint32_t)i->aux), base);
	}
	return ERRV;
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
	struct nl_cad_val *out = nl_cad_arena(ctx, (size_t)l->aux * sizeof(*out));

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
 * eval(s): s (converted to a string) parsed as an expression and evaluated in the scope of
 * the calling record. Each distinct text is compiled once per context (a cached program and
 * context of its own); the names it uses are looked up in the caller's scope (enclosing
 * records outward, then the root's bindings) and bound by value. The result is copied into
 * the caller's arena (records become host records of their attributes' values).
 */
#define EVC_MAX 256      /* distinct eval() texts per context */
#define EVAL_NEST_MAX 8  /* eval() inside eval() */

struct nl_cad_evc {
	struct nl_cad_evc *next;
	char *text;
	uint32_t len;
	int slot;                /* < 0: the text does not parse (eval gives error) */
	bool busy;               /* ctx is evaluating (a nested eval() of the text needs another) */
	struct nl_cad_prog *prog;
	struct nl_cad_ctx *ctx;
};

static struct nl_cad_val
materialize(struct nl_cad_ctx *dst, struct nl_cad_ctx *src, const struct nl_cad_val *v,
	    int depth)
{
	if (depth > NL_CAD_MAX_VALUE_DEPTH)
		return ERRV;
	switch (v->type) {
	case NL_CAD_STRING:
		return nl_cad_mkstr(dst, v->u.s, (size_t)v->aux);
	case NL_CAD_LIST: {
		struct nl_cad_val *items = nl_cad_arena(dst, ((size_t)v->aux + 1) * sizeof(*items));

		if (items == NULL)
			return ERRV;
		/* a list literal's text (NL_CAD_LIST_EXPR) comes along */
		items[0] = UNDEFV;
		if (v->kind == NL_CAD_LIST_EXPR && v->u.l[-1].type == NL_CAD_STRING) {
			const struct nl_cad_val *h = &v->u.l[-1];
			size_t n = (size_t)h->aux + 1 + strlen(h->u.s + h->aux + 1);
			struct nl_cad_val c = nl_cad_mkstr(dst, h->u.s, n); /* both texts */

			if (c.type == NL_CAD_STRING) {
				c.aux = h->aux;
				items[0] = c;
			}
		}
		items++;
		for (int32_t i = 0; i < v->aux; i++)
			items[i] = materialize(dst, src, &v->u.l[i], depth + 1);
		struct nl_cad_val l = nl_cad_list(items, (uint32_t)v->aux);

		l.kind = items[-1].type == NL_CAD_STRING ? NL_CAD_LIST_EXPR : 0;
		return l;
	}
	case NL_CAD_RECORD: {
		if (v->kind == NL_CAD_REC_FRAME && v->u.fr->ctx == dst)
			return *v; /* the caller's own record (I5): it lives in the caller's arena */
		struct nl_cad_schema *sc = nl_cad_arena(dst, sizeof(*sc));
		struct nl_cad_rec *r = nl_cad_arena(dst, sizeof(*r));
		struct nl_cad_val *vals = nl_cad_arena(dst, NL_CAD_SCHEMA_MAX * sizeof(*vals));
		unsigned int n = 0;

		if (sc == NULL || r == NULL || vals == NULL)
			return ERRV;
		if (v->kind == NL_CAD_REC_HOST) {
			*sc = *v->u.rec->schema;
			for (unsigned int i = 0; i < sc->n; i++)
				vals[i] = materialize(dst, src, &v->u.rec->vals[i], depth + 1);
		} else {
			const struct nl_cad_def *d = v->u.fr->def;

			for (uint32_t i = 0; i < d->n; i++) {
				if (d->names[i].s[0] == ' ' || d->code[i] == UINT32_MAX)
					continue;
				if (n == NL_CAD_SCHEMA_MAX)
					return ERRV;
				struct nl_cad_val a = attr_hook(src, v->u.fr, i);

				sc->names[n] = d->names[i].s;
				sc->len[n] = d->names[i].len;
				sc->hash[n] = d->names[i].hash;
				vals[n++] = materialize(dst, src, &a, depth + 1);
			}
			sc->n = n;
		}
		r->schema = sc;
		r->vals = vals;
		return nl_cad_record(r);
	}
	default:
		return *v;
	}
}

/* Value of a name seen from frame f: enclosing records outward, then the root's bindings. */
static bool
scope_lookup(struct nl_cad_ctx *ctx, struct nl_cad_frame *f, const char *name, uint32_t len,
	     struct nl_cad_val *base, struct nl_cad_val *out)
{
	uint32_t h = nl_cad_hash(name, len);

	for (struct nl_cad_frame *fr = f; fr != NULL; fr = fr->parent) {
		const struct nl_cad_def *d = fr->def;

		for (uint32_t i = 0; i < d->n; i++) {
			if (d->names[i].hash != h ||
			    !nl_cad_name_eq(d->names[i].s, d->names[i].len, name, len))
				continue;
			if (d->code[i] == UINT32_MAX && !(fr == ctx->root && ctx->bound[i]))
				break; /* external here: look further out */
			*out = eval_attr(ctx, fr, i, base);
			return true;
		}
	}
	return false;
}

static struct nl_cad_val
lookup_found(struct nl_cad_ctx *ctx, const struct nl_cad_val *r, const char *s, uint32_t len,
	     uint32_t h, struct nl_cad_val *base, bool *found);

/* eval_string() in the scope of record value rec (NULL: frame f), names rec lacks looked up
 * from f outward. */
static struct nl_cad_val
eval_in(struct nl_cad_ctx *ctx, struct nl_cad_frame *f, const struct nl_cad_val *rec,
	const struct nl_cad_val *arg, struct nl_cad_val *base)
{
	struct nl_cad_val s = arg->type == NL_CAD_STRING ? *arg : ERRV;
	struct nl_cad_evc *e;
	uint32_t cnt = 0;

	if (arg->type != NL_CAD_STRING && arg->type != NL_CAD_UNDEFINED &&
	    arg->type != NL_CAD_ERROR)
		s = nl_cad_to_string(ctx, arg, base);
	if (s.type != NL_CAD_STRING || ctx->eval_nest >= EVAL_NEST_MAX)
		return ERRV;
	for (e = ctx->evc; e != NULL; e = e->next, cnt++)
		if (!e->busy && e->len == (uint32_t)s.aux && memcmp(e->text, s.u.s, e->len) == 0)
			break;
	if (e == NULL) {
		if (cnt >= EVC_MAX)
			return ERRV;
		e = calloc(1, sizeof(*e));
		if (e == NULL || (e->text = malloc((size_t)s.aux + 1)) == NULL) {
			free(e);
			return ERRV;
		}
		memcpy(e->text, s.u.s, (size_t)s.aux);
		e->text[s.aux] = 0;
		e->len = (uint32_t)s.aux;
		e->slot = -1;
		e->next = ctx->evc;
		ctx->evc = e;
		if (nl_cad_parse("", 0, &e->prog, NULL) == 0) {
			int slot = nl_cad_parse_expr(e->prog, e->text, e->len, NULL);

			if (slot >= 0 && nl_cad_ctx_create(e->prog, &e->ctx) == 0)
				e->slot = slot;
		}
	}
	if (e->slot < 0)
		return ERRV;
	struct nl_cad_ctx *c2 = e->ctx;
	const struct nl_cad_def *d2 = &e->prog->defs[0];

	c2->now_s = ctx->now_s;
	c2->budget = ctx->budget > ctx->steps ? ctx->budget - ctx->steps : 1;
	c2->rsvutil = ctx->rsvutil;
	c2->rsvutil_arg = ctx->rsvutil_arg;
	c2->eval_nest = ctx->eval_nest + 1;
	for (uint32_t i = 0; i < d2->n; i++) {
		struct nl_cad_val v;

		c2->bound[i] = 0;
		if (d2->code[i] != UINT32_MAX)
			continue;
		if (rec != NULL) {
			bool found;

			v = lookup_found(ctx, rec, d2->names[i].s, d2->names[i].len,
					 d2->names[i].hash, base, &found);
			if (found) {
				c2->bound[i] = 1;
				c2->bind[i] = v;
				continue;
			}
		}
		if (scope_lookup(ctx, f, d2->names[i].s, d2->names[i].len, base, &v)) {
			c2->bound[i] = 1;
			c2->bind[i] = v;
		}
	}
	struct nl_cad_val r;

	/* the text may select a record of ctx whose attribute calls eval() of the same text:
	 * that call gets a context of its own (c2's stack and arena are in use) */
	e->busy = true;
	nl_cad_eval(c2, e->slot, &r);
	ctx->steps += c2->steps;
	r = materialize(ctx, c2, &r, 0);
	e->busy = false;
	return r;
}

static struct nl_cad_val
eval_string(struct nl_cad_ctx *ctx, struct nl_cad_frame *f, const struct nl_cad_val *arg,
	    struct nl_cad_val *base)
{
	return eval_in(ctx, f, NULL, arg, base);
}

/*
 * evalInEachContext(expr, list) and countMatches(expr, list): the expression (its text, made
 * by the compiler) evaluated in the scope of each record of the list (HTCondor manual).
 */
static struct nl_cad_val
eval_each(struct nl_cad_ctx *ctx, struct nl_cad_frame *f, int fn, const struct nl_cad_val *a,
	  struct nl_cad_val *base)
{
	const struct nl_cad_val *l = &a[1];
	bool count = fn == NL_CAD_F_COUNTMATCHES;
	int64_t n = 0;

	if (l->type == NL_CAD_ERROR)
		return ERRV;
	if (l->type != NL_CAD_LIST)
		return count && l->type == NL_CAD_UNDEFINED ? nl_cad_int(0) : ERRV;
	struct nl_cad_val *out = count ? NULL : nl_cad_arena(ctx, (size_t)l->aux * sizeof(*out));

	if (!count && out == NULL)
		return ERRV;
	for (int32_t i = 0; i < l->aux; i++) {
		const struct nl_cad_val *e = &l->u.l[i];

		if (e->type != NL_CAD_RECORD) {
			if (!count)
				return ERRV;
			continue;
		}
		struct nl_cad_val v = eval_in(ctx, f, e, &a[0], base);

		if (count)
			n += nl_cad_is_true(&v);
		else
			out[i] = v;
	}
	return count ? nl_cad_int(n) : nl_cad_list(out, (uint32_t)l->aux);
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
	return select_name(ctx, b, &p->sel[si], base, 0);
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
			int t = nl_cad_tv(&sp[-1]);

			if (in->a == NL_CAD_U_NOT && t >= 0)
				put_bool(&sp[-1], !t);
			else
				sp[-1] = nl_cad_unop(in->a, &sp[-1]);
			NEXT;
		}
		CASE(BINK):
			if (!bin_fast(in->a, &sp[-1], &p->consts[in->c], &sp[-1]))
				sp[-1] = nl_cad_binop(in->a, &sp[-1], &p->consts[in->c]);
			NEXT;
		CASE(BIN):
			if (!bin_fast(in->a, &sp[-2], &sp[-1], &sp[-2]))
				sp[-2] = nl_cad_binop(in->a, &sp[-2], &sp[-1]);
			sp--;
			NEXT;
		CASE(ANDL): {
			int t = nl_cad_tv(&sp[-1]);

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
			int l = nl_cad_tv(&sp[-2]), r = nl_cad_tv(&sp[-1]);

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
			int t = nl_cad_tv(&sp[-1]);

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
			int l = nl_cad_tv(&sp[-2]), r = nl_cad_tv(&sp[-1]);

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
			int t = nl_cad_tv(&sp[-1]);

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
			struct nl_cad_val *old = ctx->ext_base;
			struct nl_cad_val v;

			/* callees that evaluate attributes (=?= on records) do it above sp */
			ctx->ext_base = sp;
			if (__builtin_expect(in->a == NL_CAD_F_EVAL, 0))
				v = eval_string(ctx, f, &sp[-1], sp);
			else if (__builtin_expect(in->a == NL_CAD_F_EVALINEACH ||
						  in->a == NL_CAD_F_COUNTMATCHES, 0))
				v = eval_each(ctx, f, in->a, sp - 2, sp);
			else
				v = nl_cad_call(ctx, in->a, sp - in->c, in->c, in->b);
			ctx->ext_base = old;

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
				nl_cad_arena(ctx, sizeof(*fr) + d->n * sizeof(struct nl_cad_memo));

			if (fr == NULL) {
				*sp++ = ERRV;
				NEXT;
			}
			fr->def = d;
			fr->parent = f;
			fr->ctx = ctx;
			memset(fr->memo, 0, d->n * sizeof(struct nl_cad_memo));
			sp->type = NL_CAD_RECORD;
			sp->kind = NL_CAD_REC_FRAME;
			sp->u.fr = fr;
			sp++;
			NEXT;
		}
		CASE(LIST): {
			uint32_t n = in->c;

			sp -= in->c;
			if (in->a == 1) {
				/* chunks of a long list (the compiler's LIST_CHUNK) */
				bool ok = true;

				n = 0;
				for (uint32_t k = 0; k < in->c; k++) {
					ok = ok && sp[k].type == NL_CAD_LIST;
					n += (uint32_t)sp[k].aux;
				}
				if (!ok) { /* a chunk's arena allocation failed */
					*sp++ = ERRV;
					NEXT;
				}
			}
			/* one value in front of the elements: the literal's text (b = 1 + its
			 * constant), NL_CAD_LIST_EXPR */
			struct nl_cad_val *items = nl_cad_arena(ctx, ((size_t)n + 1) * sizeof(*items));

			if (items == NULL) {
				*sp++ = ERRV;
				NEXT;
			}
			items[0] = in->b != 0 ? p->consts[in->b - 1] : UNDEFV;
			items++;
			if (in->a == 1) {
				struct nl_cad_val *o = items;

				for (uint32_t k = 0; k < in->c; k++) {
					memcpy(o, sp[k].u.l, (size_t)sp[k].aux * sizeof(*items));
					o += sp[k].aux;
				}
			} else {
				memcpy(items, sp, (size_t)n * sizeof(*items));
			}
			*sp = nl_cad_list(items, n);
			sp->kind = in->b != 0 ? NL_CAD_LIST_EXPR : 0;
			sp++;
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
	ctx->root->ctx = ctx;
	ctx->attr_fn = attr_hook;
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
	while (ctx->evc != NULL) {
		struct nl_cad_evc *e = ctx->evc;

		ctx->evc = e->next;
		nl_cad_ctx_free(e->ctx);
		nl_cad_prog_free(e->prog);
		free(e->text);
		free(e);
	}
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
	nl_cad_arena_reset(ctx);
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
