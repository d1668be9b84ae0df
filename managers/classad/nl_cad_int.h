/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * nl_classad internals shared by the compiler (nl_cad_parse.c), the evaluator
 * (nl_cad_eval.c), the built-ins (nl_cad_fn.c), the operators (nl_cad_ops.c) and the value
 * helpers (nl_cad_val.c). Not installed, not public.
 *
 * Dependencies go one way only (a file calls only the files after it):
 *   nl_cad_eval.c -> nl_cad_parse.c (eval() compiles text) -> nl_cad_fn.c -> nl_cad_ops.c ->
 *   nl_cad_val.c.
 * The value unparser (nl_cad_val.c) evaluates the attributes of record instances through the
 * context's attr_fn hook, which the evaluator installs, so it never calls the evaluator.
 */
#ifndef NL_CAD_INT_H
#define NL_CAD_INT_H

#include <stdint.h>

#include "nl_classad.h"

/** Opcodes of the flat instruction array. */
enum nl_cad_op {
	NL_CAD_OP_ENTER = 0, /* c = stack depth the block needs */
	NL_CAD_OP_RET,
	NL_CAD_OP_CONST,     /* c = constant index */
	NL_CAD_OP_LEX,       /* a = scope depth (0 = current record), c = slot */
	NL_CAD_OP_ROOTREF,   /* c = root slot */
	NL_CAD_OP_SELF,
	NL_CAD_OP_PARENT,
	NL_CAD_OP_ROOT,
	NL_CAD_OP_SELECT,    /* c = name index */
	NL_CAD_OP_INDEX,
	NL_CAD_OP_UN,        /* a = enum nl_cad_unop */
	NL_CAD_OP_BIN,       /* a = enum nl_cad_binop */
	NL_CAD_OP_ANDL,      /* c = end */
	NL_CAD_OP_ANDR,
	NL_CAD_OP_ORL,       /* c = end */
	NL_CAD_OP_ORR,
	NL_CAD_OP_COND,      /* c = else; ins[c - 1] is the JMP to the end */
	NL_CAD_OP_JMP,       /* c = target */
	NL_CAD_OP_ELVIS,     /* c = end */
	NL_CAD_OP_CALL,      /* a = enum nl_cad_fn, c = argc, b = 1 + regex index (0: none) */
	NL_CAD_OP_EVLIST,    /* b = variable root slot, c = attribute root slot */
	NL_CAD_OP_RECORD,    /* c = record definition index */
	NL_CAD_OP_LIST,      /* c = element count; a = 1: c lists on the stack, joined into one;
			      * b = 1 + constant index of the literal's text (0: none) */
	NL_CAD_OP_ROOTSEL,   /* ROOTREF c then SELECT b (fused) */
	NL_CAD_OP_BINK,      /* CONST c then BIN a (fused): top = top a consts[c] */
};

enum nl_cad_unop { NL_CAD_U_NEG, NL_CAD_U_POS, NL_CAD_U_NOT, NL_CAD_U_BNOT };

enum nl_cad_binop {
	NL_CAD_B_ADD, NL_CAD_B_SUB, NL_CAD_B_MUL, NL_CAD_B_DIV, NL_CAD_B_MOD,
	NL_CAD_B_LT, NL_CAD_B_LE, NL_CAD_B_GT, NL_CAD_B_GE, NL_CAD_B_EQ, NL_CAD_B_NE,
	NL_CAD_B_IS, NL_CAD_B_ISNT,
	NL_CAD_B_BAND, NL_CAD_B_BOR, NL_CAD_B_BXOR,
	NL_CAD_B_SHL, NL_CAD_B_SHR, NL_CAD_B_USHR,
};

/** Built-in functions; nl_cad_fn_table[] (nl_cad_eval.c) gives names and arities. */
enum nl_cad_fn {
	NL_CAD_F_ISUNDEFINED, NL_CAD_F_ISERROR, NL_CAD_F_ISINTEGER, NL_CAD_F_ISREAL,
	NL_CAD_F_ISSTRING, NL_CAD_F_ISBOOLEAN, NL_CAD_F_ISLIST, NL_CAD_F_ISCLASSAD,
	NL_CAD_F_ISABSTIME, NL_CAD_F_ISRELTIME,
	NL_CAD_F_MEMBER, NL_CAD_F_IDENTICALMEMBER, NL_CAD_F_SIZE, NL_CAD_F_IFTHENELSE,
	NL_CAD_F_TIME, NL_CAD_F_ABSTIME, NL_CAD_F_RELTIME, NL_CAD_F_INT, NL_CAD_F_REAL,
	NL_CAD_F_STRING, NL_CAD_F_FLOOR, NL_CAD_F_CEILING, NL_CAD_F_ROUND, NL_CAD_F_STRCAT,
	NL_CAD_F_SUBSTR, NL_CAD_F_TOUPPER, NL_CAD_F_TOLOWER, NL_CAD_F_MIN, NL_CAD_F_MAX,
	NL_CAD_F_SUM, NL_CAD_F_AVG, NL_CAD_F_LINEAR, NL_CAD_F_EVALUATELIST,
	NL_CAD_F_PLUS_RSVUTIL,
	/* HTCondor's "Predefined Functions" added for issue #17 */
	NL_CAD_F_BOOL, NL_CAD_F_CEIL, NL_CAD_F_POW, NL_CAD_F_QUANTIZE, NL_CAD_F_JOIN,
	NL_CAD_F_SPLIT, NL_CAD_F_SPLITUSERNAME, NL_CAD_F_SPLITSLOTNAME, NL_CAD_F_STRCMP,
	NL_CAD_F_STRICMP, NL_CAD_F_VERSIONCMP, NL_CAD_F_VERSIONGT, NL_CAD_F_VERSIONLT,
	NL_CAD_F_VERSIONGE, NL_CAD_F_VERSIONLE, NL_CAD_F_VERSIONEQ, NL_CAD_F_VERSION_IN_RANGE,
	NL_CAD_F_SPLITTIME, NL_CAD_F_FORMATTIME, NL_CAD_F_INTERVAL, NL_CAD_F_ANYCOMPARE,
	NL_CAD_F_ALLCOMPARE, NL_CAD_F_REGEXP, NL_CAD_F_REGEXPS, NL_CAD_F_REGEXPMEMBER,
	NL_CAD_F_REPLACE, NL_CAD_F_REPLACEALL, NL_CAD_F_SL_REGEXPMEMBER, NL_CAD_F_SL_SIZE,
	NL_CAD_F_SL_SUM, NL_CAD_F_SL_AVG, NL_CAD_F_SL_MIN, NL_CAD_F_SL_MAX, NL_CAD_F_SL_MEMBER,
	NL_CAD_F_SL_IMEMBER, NL_CAD_F_SL_INTERSECT, NL_CAD_F_SL_SUBSETMATCH,
	NL_CAD_F_SL_ISUBSETMATCH, NL_CAD_F_EVAL, NL_CAD_F_UNPARSE, NL_CAD_F_DEBUG,
	NL_CAD_F_CURRENTTIME, NL_CAD_F_EVALINEACH, NL_CAD_F_COUNTMATCHES,
	/* issue #38: the rest of the HTCondor manual's list */
	NL_CAD_F_RANDOM, NL_CAD_F_USERHOME, NL_CAD_F_TZOFFSET, NL_CAD_F_DAYTIME,
	NL_CAD_F_GETYEAR, NL_CAD_F_GETMONTH, NL_CAD_F_GETDAYOFYEAR, NL_CAD_F_GETDAYOFMONTH,
	NL_CAD_F_GETDAYOFWEEK, NL_CAD_F_GETDAYS, NL_CAD_F_GETHOURS, NL_CAD_F_GETMINUTES,
	NL_CAD_F_GETSECONDS, NL_CAD_F_ENVV1TOV2, NL_CAD_F_MERGEENV, NL_CAD_F_UNRESOLVED,
	NL_CAD_F_USERMAP,
	NL_CAD_F_COUNT
};

/** A call HTCondor evaluates to error (an unknown function, a wrong argument count) under
 *  NL_CAD_PARSE_HTCONDOR_CALLS; compiled to the constant error, never called. */
#define NL_CAD_F_BADCALL 255u

/** kind of a NL_CAD_LIST value made by a list literal whose elements are not all
 *  constants: u.l[-1] is a string value, the literal's text as HTCondor prints the list
 *  value (an ExprList prints its elements' expressions: "{ 1,2 + 3 }"), followed after its
 *  NUL by the text with reals as "%1.15E" (empty when the list holds no real). */
#define NL_CAD_LIST_EXPR 1

struct nl_cad_fn_desc {
	const char *name;
	uint8_t min_args;
	uint8_t max_args;  /* 255 = any */
};

extern const struct nl_cad_fn_desc nl_cad_fn_table[NL_CAD_F_COUNT];

struct nl_cad_ins {
	uint8_t op;
	uint8_t a;
	uint16_t b;
	uint32_t c;
};

/** A name used by SELECT, and attribute names of record definitions. */
struct nl_cad_name {
	const char *s;  /* NUL-terminated, in the program arena */
	uint32_t len;
	uint32_t hash;
};

/** One top-level && operand of a root attribute (for nl_cad_explain()). */
struct nl_cad_clause {
	uint32_t code;         /* start of its block */
	uint32_t line, col;
	uint32_t text_off, text_len;
};

/** A record literal of the program; index 0 is the root. */
struct nl_cad_def {
	uint32_t n;                 /* attributes (root: defined + external) */
	int32_t parent;             /* enclosing definition, -1 for the root */
	struct nl_cad_name *names;  /* [n] */
	uint32_t *code;             /* [n] block start; UINT32_MAX = external (no definition) */
	const char **text;          /* [n] unparsed expression of each attribute, or NULL */
	const char **text_e;        /* [n] the same with reals as "%1.15E" (string(), unparse()),
				     * NULL where it holds no real */
	struct nl_cad_clause **clauses; /* root only: [n] arrays, or NULL */
	uint32_t *n_clauses;        /* root only: [n] */
	uint32_t cap;
	uint32_t *hidx;             /* [hcap] 1 + slot by name hash (0: empty), or NULL */
	uint32_t hcap;              /* power of two > 2 n, once n > DEF_HASH_MIN */
};

struct nl_cad_prog {
	struct nl_cad_ins *ins;
	uint32_t n_ins, cap_ins;
	struct nl_cad_val *consts;
	uint32_t n_consts, cap_consts;
	struct nl_cad_name *sel;    /* SELECT names */
	uint32_t n_sel, cap_sel;
	struct nl_cad_def *defs;
	uint32_t n_defs, cap_defs;
	char *src;                  /* copy of all source texts, for clause texts */
	uint32_t src_len, src_cap;
	void **rx;                  /* [n_rx] regexes of constant patterns (pcre2_code *) */
	uint32_t n_rx, cap_rx;
	struct nl_cad_chunk *arena; /* strings, constant lists (stable addresses) */
	struct nl_cad_chunk *arena_cur;
	uint32_t flags;             /* NL_CAD_PARSE_* of nl_cad_parse_flags() */
};

/** Memo entry of one attribute of one record instance. */
struct nl_cad_memo {
	uint64_t gen;   /* valid when == ctx->gen */
	uint32_t busy;  /* being evaluated (I2) */
	uint32_t rsvd;
	struct nl_cad_val val;
};

/**
 * A record instance. Its def belongs to the program of its owner context, whose arena holds
 * it (I5): its attributes are evaluated only by that context (eval() binds a caller's frames
 * into the context of its own program; they are evaluated back in the owner).
 */
struct nl_cad_frame {
	const struct nl_cad_def *def;
	struct nl_cad_frame *parent;  /* same owner */
	struct nl_cad_ctx *ctx;       /* owner: def is in ctx->prog, memo stamped with ctx->gen */
	struct nl_cad_memo memo[];
};

struct nl_cad_chunk {
	struct nl_cad_chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

/** Inline cache of one SELECT instruction: the last host schema seen and its slot. */
struct nl_cad_selc {
	const struct nl_cad_schema *schema;
	uint32_t idx;
};

/** Evaluate attribute slot of frame f (installed by the evaluator in every context). */
typedef struct nl_cad_val (*nl_cad_attr_fn)(struct nl_cad_ctx *ctx, struct nl_cad_frame *f,
					    uint32_t slot);

struct nl_cad_evc;

struct nl_cad_ctx {
	const struct nl_cad_prog *prog;
	nl_cad_attr_fn attr_fn;
	struct nl_cad_frame *root;
	struct nl_cad_val *bind;    /* [root n] */
	uint8_t *bound;             /* [root n] */
	struct nl_cad_val *stack;
	uint32_t stack_cap;
	uint32_t depth;             /* nested attribute evaluations */
	uint64_t gen, gen_next;
	uint64_t steps, budget;
	int64_t now_s;              /* INT64_MIN = wall clock */
	nl_cad_rsvutil_fn rsvutil;
	void *rsvutil_arg;
	struct nl_cad_chunk *arena_head, *arena_cur;
	struct nl_cad_val *ext_base; /* stack base for evaluations started by string() */
	struct nl_cad_selc *selc;    /* [prog->n_sel] SELECT inline caches */
	struct nl_cad_val scratch;   /* nl_cad_bind_ref() of a slot the program lacks */
	struct nl_cad_evc *evc;      /* eval(): programs compiled from strings, by text */
	uint32_t eval_nest;          /* eval() nesting of this context (0: a host's context) */
};

/*
 * Library-internal helpers (not installed, not for callers of nl_classad.h). All are pure or
 * touch only the evaluation context they are given: Context = the thread owning that context.
 * Source: ClassAd Language Reference Manual v2.4 (names, times), HTCondor 23.0 (formats).
 */

/* nl_cad_val.c */

/**
 * Case-insensitive hash of an attribute name (ClassAd names ignore case).
 * @param s, len  Name [bytes], not NUL-terminated.
 * @return 32-bit hash. @par Context Pure.
 */
uint32_t nl_cad_hash(const char *s, uint32_t len);

/**
 * Case-insensitive equality of two names.
 * @return true when equal ignoring ASCII case. @par Context Pure.
 */
bool nl_cad_name_eq(const char *a, uint32_t alen, const char *b, uint32_t blen);

/**
 * Bump-allocate n bytes (16-byte aligned) from a chunk list, reusing chunks after a reset.
 * @param head, cur  The list and its current chunk (updated).
 * @param n          Bytes wanted.
 * @return The memory, or NULL when a new chunk cannot be allocated.
 * @par Context  Owner of the list; allocates only when every chunk is full.
 */
void *nl_cad_chunk_alloc(struct nl_cad_chunk **head, struct nl_cad_chunk **cur, size_t n);

/** Free a whole chunk list; NULL accepted. @par Context Owner of the list. */
void nl_cad_chunk_free(struct nl_cad_chunk *head);

/** Days from 1970-01-01 to y-m-d (proleptic Gregorian; m 1..12). @par Context Pure. */
int64_t nl_cad_days_from_civil(int64_t y, unsigned int m, unsigned int d);

/**
 * Parse an absTime() literal ("2024-01-02T03:04:05+09:00", offset optional).
 * @param out_s    Seconds since the Unix epoch [s].
 * @param out_off  Time-zone offset [s].
 * @return 0, or -EINVAL for text that is not an absolute time. @par Context Pure.
 */
int nl_cad_parse_abstime(const char *s, uint32_t len, int64_t *out_s, int32_t *out_off);

/**
 * Parse a relTime() literal, in either form ("[-][D+]HH:MM:SS[.frac]" or "1d2h3m4s").
 * @param out_s  Duration [s].
 * @return 0, or -EINVAL. @par Context Pure.
 */
int nl_cad_parse_reltime(const char *s, uint32_t len, double *out_s);

/**
 * Format an absolute time as HTCondor prints it, into buf[n].
 * @param s    Seconds since the epoch [s]. @param off  Offset [s].
 * @return As snprintf (characters that the full text needs). @par Context Pure.
 */
int nl_cad_fmt_abstime(int64_t s, int32_t off, char *buf, size_t n);

/** Format a relative time [s] as HTCondor prints it. @return As snprintf. @par Context Pure. */
int nl_cad_fmt_reltime(double s, char *buf, size_t n);

/** Format a real so it reads back as the same real (NaN, INF spelled real("...")).
 * @return As snprintf. @par Context Pure. */
int nl_cad_fmt_real(double r, char *buf, size_t n);

/** Format a real as HTCondor's new-syntax unparser does (string(), strcat(), unparse()):
 * "%1.15E", except 0.0, -0.0, real("NaN"), real("INF"), real("-INF").
 * @return As snprintf. @par Context Pure. */
int nl_cad_fmt_real_e(double r, char *buf, size_t n);

/** nl_cad_format() with reals as nl_cad_fmt_real_e() prints them (string() of a value).
 * @return As snprintf. @par Context Owner of ctx. */
int nl_cad_format_e(struct nl_cad_ctx *ctx, const struct nl_cad_val *v, char *buf, size_t n);

/** Sort ord[0..m) (indexes into names) in HTCondor's attribute order (23.4 on,
 * ClassAdFlatMapOrder): by length, then case-insensitively. @par Context Pure; allocates. */
void nl_cad_sort_names(const struct nl_cad_name *names, uint32_t *ord, uint32_t m);

/** Does an attribute name need 'quotes' to parse back as the name of a definition (not an
 * identifier, or a literal keyword; Self, Parent, Root may name definitions)?
 * @par Context Pure. */
bool nl_cad_name_needs_quotes(const char *s, uint32_t len);

/** Append a quoted, escaped string (delimiter q: '"' literal, '\'' name) to buf[n] at *len
 * (snprintf-like: *len counts the full text). @par Context Pure. */
void nl_cad_put_string(char *buf, size_t n, size_t *len, const char *s, size_t slen, char q);

static const struct nl_cad_val NL_CAD_ERRV = { .type = NL_CAD_ERROR };
static const struct nl_cad_val NL_CAD_UNDEFV = { .type = NL_CAD_UNDEFINED };

/* absTime of s [s since the epoch] with zone offset off [s]; error when the local time it
 * prints (s + off) leaves the years 0000..9999 (NL_CAD_ABSTIME_MIN_S..MAX_S), which the
 * printer's "YYYY-MM-DDThh:mm:ss" cannot write so that it reads back. */
static inline struct nl_cad_val
nl_cad_mkabs(int64_t s, int32_t off)
{
	struct nl_cad_val v = nl_cad_abstime(0);

	if (s < NL_CAD_ABSTIME_MIN_S - 1000000 || s > NL_CAD_ABSTIME_MAX_S + 1000000 ||
	    s + off < NL_CAD_ABSTIME_MIN_S || s + off > NL_CAD_ABSTIME_MAX_S)
		return NL_CAD_ERRV;
	v.u.abs_s = s;
	v.aux = off;
	return v;
}

/* Boolean equivalence (HTCondor IsBooleanValueEquiv): 1 true, 0 false, -1 undefined, -2 error */
static inline int
nl_cad_tv(const struct nl_cad_val *v)
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
nl_cad_num(const struct nl_cad_val *v, int64_t *i, double *r, bool *is_real)
{
	switch (v->type) {
	case NL_CAD_BOOL: *i = v->u.b; *r = v->u.b; *is_real = false; return true;
	case NL_CAD_INT: *i = v->u.i; *r = (double)v->u.i; *is_real = false; return true;
	case NL_CAD_REAL: *i = 0; *r = v->u.r; *is_real = true; return true;
	default: return false;
	}
}

/* nl_cad_ops.c: operators and conversions. Context: owner of ctx (arena); else pure. */

/** n bytes (16-aligned) of the context's arena, live until the next evaluation; NULL: ENOMEM. */
void *nl_cad_arena(struct nl_cad_ctx *ctx, size_t n);
/** Start a new evaluation's arena (keeps the chunks). */
void nl_cad_arena_reset(struct nl_cad_ctx *ctx);
/** time() of the context: the fixed time, or the wall clock [s since the epoch]. */
int64_t nl_cad_now_s(const struct nl_cad_ctx *ctx);
/** Real to integer when it fits int64 (truncation); false for NaN and out of range. */
bool nl_cad_d2i(double d, int64_t *out);
/** A string value copied into the arena (error value when out of memory). */
struct nl_cad_val nl_cad_mkstr(struct nl_cad_ctx *ctx, const char *s, size_t n);
/** Case-insensitive three-way compare of two string values. */
int nl_cad_strcmp_ci(const struct nl_cad_val *a, const struct nl_cad_val *b);
/** Meta-equality =?= of two values that are not both lists or both records (same type and
 *  value; nl_cad_binop() makes =?= of those error, as HTCondor). */
bool nl_cad_identical(const struct nl_cad_val *a, const struct nl_cad_val *b);
/** A binary operator (enum nl_cad_binop) on two values, HTCondor's rules. */
struct nl_cad_val nl_cad_binop(int op, const struct nl_cad_val *a, const struct nl_cad_val *b);
/** A unary operator (enum nl_cad_unop). */
struct nl_cad_val nl_cad_unop(int op, const struct nl_cad_val *a);
/** string(v): strings as they are, other values unparsed; base = stack top for evaluations. */
struct nl_cad_val nl_cad_to_string(struct nl_cad_ctx *ctx, const struct nl_cad_val *v,
				   struct nl_cad_val *base);
/** Number from a whole string (C strtod syntax, INF and NaN included). */
bool nl_cad_str_num(const struct nl_cad_val *s, double *out);

/* nl_cad_fn.c: the built-ins */

/**
 * Built-in function by name (case-insensitive).
 * @return Its NL_CAD_F_* index, or -1 when there is no such built-in. @par Context Pure.
 */
int nl_cad_fn_lookup(const char *name, uint32_t len);

/**
 * Evaluate built-in fn on n evaluated arguments a[] (those the evaluator handles itself —
 * ifThenElse, evaluateList, eval, unparse — never come here).
 * @return The result (values live in the context's arena, I4). @par Context Owner of ctx.
 */
struct nl_cad_val nl_cad_call(struct nl_cad_ctx *ctx, int fn, const struct nl_cad_val *a,
			      uint32_t n, uint32_t site);

/**
 * Compile a regular expression (PCRE2) with HTCondor's option letters (i, m, s, x).
 * @return the compiled code (pcre2_code *), or NULL for an invalid pattern.
 * @par Context Any thread; allocates. The code is read-only afterwards (shareable).
 */
void *nl_cad_rx_compile(const char *pat, uint32_t len, const char *opts, uint32_t olen);

/** Free a compiled regular expression; NULL accepted. */
void nl_cad_rx_free(void *rx);

/**
 * The option string of a regex built-in call with n arguments, when it has one: the index of
 * that argument, or -1. @par Context Pure.
 */
int nl_cad_rx_opt_arg(int fn, uint32_t n);

#endif /* NL_CAD_INT_H */
