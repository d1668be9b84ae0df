/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * nl_classad: a compiled ClassAd evaluator (seed 004 §3) of HTCondor's ClassAd language: the
 * HTCondor manual's "ClassAd Syntax" and "Predefined Functions", HTCondor 23's library where the
 * manual is silent, values printed as HTCondor's unparser prints them (docs/classad.md lists the
 * rules, the tests that pin them and the deliberate differences).
 *
 * Theory of operation. A source text (a record `[a = 1; b = a + 1]` or a bare attribute list
 * `a = 1; b = a + 1`) is parsed once into a program (struct nl_cad_prog): every record literal
 * becomes a record definition, every attribute expression a block of a flat instruction array
 * (stack code with jumps for the short-circuit operators), every bare attribute reference is
 * resolved at compile time to (scope depth, slot) or to a slot of the root record. Names that no
 * enclosing record defines become *external* root slots that the host binds (e.g.
 * PLUS_CANDIDATE_NODE): nl_cad_slot() finds the slot once, nl_cad_bind() sets its value for
 * the following evaluations, and a binding overrides a definition of the same name (the
 * "merge" of seed 004 §4.3).
 *
 * An evaluation context (struct nl_cad_ctx, one per thread) owns the value stack, the memo of
 * attribute values and a scratch arena, all allocated once: an evaluation allocates nothing
 * after the first few (the arena keeps its chunks), whatever the records bound.
 *
 * Invariants:
 *  - I1: an attribute is evaluated at most once per evaluation and per record instance (memo
 *        stamped with the evaluation's generation), so evaluation time is linear in the size of
 *        the program, except inside evaluateList, which re-evaluates per list element.
 *  - I2: an attribute met again while it is being evaluated (a circular reference) yields
 *        undefined; every evaluation also stops after a step budget (error), so none hangs.
 *  - I3: parse and compile recursion is bounded by NL_CAD_MAX_DEPTH and attribute evaluation by
 *        NL_CAD_MAX_EVAL_DEPTH; deeper input is refused (parse error) or yields error.
 *  - I4: values an evaluation returns (strings, lists, records it built) live in the context's
 *        arena until the next nl_cad_eval()/nl_cad_explain() on that context.
 *  - I5: a record instance (a record literal's frame) belongs to the context that built it: its
 *        attributes are compiled in that context's program and evaluated by that context only,
 *        whichever context selects them (eval(), evalInEachContext() and countMatches() run
 *        their text in a context of their own and hand a caller's records back to it).
 */
#ifndef NL_CLASSAD_H
#define NL_CLASSAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest source accepted by the parser [bytes]. */
#define NL_CAD_MAX_SRC_BYTES (1u << 20)
/** Deepest expression/record nesting accepted by the parser (AST depth). */
#define NL_CAD_MAX_DEPTH 400
/** Deepest value the printer, =?= and eval() follow (lists and records in lists and records):
 *  every value a literal can spell (NL_CAD_MAX_DEPTH) and more; a deeper value, which only
 *  several attributes can build, prints `error` below that depth and is not =?= to anything. */
#define NL_CAD_MAX_VALUE_DEPTH 1000
/** Deepest chain of attribute evaluations (a -> b -> c ...) before the result is error. */
#define NL_CAD_MAX_EVAL_DEPTH 200
/** Default budget of one evaluation: attribute blocks run plus evaluateList elements (each
 *  block is straight-line code, so work <= budget x longest block). Error when exceeded. */
#define NL_CAD_DEF_STEP_BUDGET (1u << 20)
/** Range of absTime values: the local time they print (seconds + zone offset) lies in years
 *  0000 to 9999, which absTime("YYYY-...") reads back; other absTimes are error [s]. */
#define NL_CAD_ABSTIME_MIN_S (-INT64_C(62167219200)) /**< 0000-01-01T00:00:00 */
#define NL_CAD_ABSTIME_MAX_S INT64_C(253402300799)   /**< 9999-12-31T23:59:59 */
/** Largest relTime magnitude, 2^53 - 1 s (about 285 million years; whole seconds are exact
 *  doubles): relTime("[-][D+]HH:MM:SS") reads back every relTime printed; larger magnitudes
 *  and non-finite durations are error [s]. */
#define NL_CAD_RELTIME_MAX_S 9007199254740991.0
/** Most attribute names of the root record: its definitions, external names and the
 *  expressions nl_cad_parse_expr() adds; more is a parse error. */
#define NL_CAD_MAX_ROOT_ATTRS 65535u
/** Most attributes of a record literal other than the root; more is a parse error. */
#define NL_CAD_MAX_REC_ATTRS 4096u
/** Most attributes in a host record schema. */
#define NL_CAD_SCHEMA_MAX 32

/** Value types (HTCondor's value kinds). */
enum nl_cad_type {
	NL_CAD_UNDEFINED = 0,
	NL_CAD_ERROR,
	NL_CAD_BOOL,
	NL_CAD_INT,
	NL_CAD_REAL,
	NL_CAD_STRING,
	NL_CAD_ABSTIME,
	NL_CAD_RELTIME,
	NL_CAD_LIST,
	NL_CAD_RECORD,
};

/** Record kinds inside a NL_CAD_RECORD value. */
enum nl_cad_rec_kind {
	NL_CAD_REC_HOST = 0, /**< struct nl_cad_rec: host data, plain values */
	NL_CAD_REC_FRAME,    /**< an instance of a record literal of a program */
};

struct nl_cad_frame;
struct nl_cad_rec;

/** A ClassAd value (16 bytes). Strings, lists and records are borrowed, never owned. */
struct nl_cad_val {
	uint8_t type;  /**< enum nl_cad_type */
	uint8_t kind;  /**< enum nl_cad_rec_kind for records; 0 otherwise */
	uint16_t rsvd;
	int32_t aux;   /**< string length [bytes], list count, or absTime zone offset [s] */
	union {
		bool b;
		int64_t i;
		double r;
		const char *s;                   /**< NUL-terminated, aux bytes */
		const struct nl_cad_val *l;      /**< aux elements */
		const struct nl_cad_rec *rec;    /**< kind NL_CAD_REC_HOST */
		struct nl_cad_frame *fr;         /**< kind NL_CAD_REC_FRAME */
		int64_t abs_s;                   /**< absTime: seconds since the epoch, UTC */
		double rel_s;                    /**< relTime: seconds */
	} u;
};

/** Attribute names of host records sharing one layout (e.g. every node record). */
struct nl_cad_schema {
	unsigned int n;                        /**< attributes, <= NL_CAD_SCHEMA_MAX */
	const char *names[NL_CAD_SCHEMA_MAX];  /**< borrowed, NUL-terminated */
	uint32_t len[NL_CAD_SCHEMA_MAX];
	uint32_t hash[NL_CAD_SCHEMA_MAX];      /**< case-insensitive name hashes */
};

/** A host record: a schema and one value per attribute (both borrowed). */
struct nl_cad_rec {
	const struct nl_cad_schema *schema;
	const struct nl_cad_val *vals;         /**< [schema->n] */
};

/** Where and why parsing failed. */
struct nl_cad_err {
	unsigned int line;  /**< 1-based */
	unsigned int col;   /**< 1-based, in bytes */
	char msg[160];
};

/** The first clause of a conjunction that was not true (nl_cad_explain()). */
struct nl_cad_why {
	int clause;              /**< 0-based index among the top-level && operands */
	int n_clauses;
	unsigned int line, col;  /**< position of the clause in the source */
	const char *text;        /**< clause source text (not NUL-terminated), in the program */
	unsigned int text_len;
	struct nl_cad_val val;   /**< its value */
};

struct nl_cad_prog;
struct nl_cad_ctx;

/** Host hook for plus_rsvutil(owner, from, to): fill out[0..2] (count, total relTime,
 *  node-hours real); return 0, or -1 for error. */
typedef int (*nl_cad_rsvutil_fn)(void *arg, const char *owner, unsigned int owner_len,
				 int64_t from_s, int64_t to_s, struct nl_cad_val out[3]);

/**
 * Parse and compile a record or a bare attribute list.
 *
 * @param src  Source text (need not be NUL-terminated).
 * @param len  Bytes of src, <= NL_CAD_MAX_SRC_BYTES.
 * @param out  Output: the program, freed by nl_cad_prog_free().
 * @param err  Output on failure: line, column and message. May be NULL.
 * @return 0; -EINVAL on a syntax error (err filled); -E2BIG if too large or too deep;
 *         -ENOMEM.
 * @par Context  Any thread; allocates. Cost O(len).
 * @par Source   ClassAd Reference Manual v2.4 §2; seed 004 §4.3 (policy files).
 */
int nl_cad_parse(const char *src, size_t len, struct nl_cad_prog **out, struct nl_cad_err *err);

/** nl_cad_parse_flags(): HTCondor's treatment of calls. A call of a function the library
 *  does not have, or with an argument count the function does not take, parses and
 *  evaluates to error (HTCondor's FunctionCall), instead of being refused at parse time
 *  with its line and column (nlevel's default, docs/classad.md "Differences"). */
#define NL_CAD_PARSE_HTCONDOR_CALLS 0x1u

/**
 * nl_cad_parse() with options.
 *
 * @param src, len, out, err  As nl_cad_parse().
 * @param flags  0 or NL_CAD_PARSE_HTCONDOR_CALLS; kept by the program for the expressions
 *               nl_cad_parse_expr() adds to it.
 * @return as nl_cad_parse().
 * @par Context  Any thread; allocates. Cost O(len).
 * @par Source   HTCondor src/classad/fnCall.cpp (FunctionCall::_Evaluate: no function, error).
 */
int nl_cad_parse_flags(const char *src, size_t len, uint32_t flags, struct nl_cad_prog **out,
		       struct nl_cad_err *err);

/**
 * nl_cad_parse() for an ad a matchmaker evaluates against another record (a job's
 * Requirements and Rank against a machine's): `TARGET.x` selects x from the external slot
 * TARGET, which the caller binds to the other record (nl_cad_bind()); unbound (a single ad,
 * as HTCondor's classad_eval without a target) it is undefined. `MY.x` is the ad's own x.
 * The same program as nl_cad_parse() gives (TARGET is an ordinary name in both since issue
 * #38); kept as the matchmakers' entry point.
 *
 * @param src, len, out, err  As nl_cad_parse().
 * @return as nl_cad_parse().
 * @par Context  Any thread; allocates.
 * @par Source   HTCondor manual, "ClassAd Syntax" (MY and TARGET in matchmaking).
 */
int nl_cad_parse_match(const char *src, size_t len, struct nl_cad_prog **out,
		       struct nl_cad_err *err);

/**
 * Compile an expression as a new anonymous attribute of the program's root record.
 *
 * References resolve against the root's attributes; unknown names become external slots.
 * Call before creating contexts of the program.
 *
 * @param prog  Program from nl_cad_parse().
 * @param src   Expression text.
 * @param len   Bytes of src.
 * @param err   Output on failure. May be NULL.
 * @return the new root slot (>= 0); -EINVAL / -E2BIG / -ENOMEM as nl_cad_parse().
 * @par Context  Control thread, no context of prog alive. Allocates.
 * @par Source   ClassAd Reference Manual v2.4 §2.
 */
int nl_cad_parse_expr(struct nl_cad_prog *prog, const char *src, size_t len,
		      struct nl_cad_err *err);

/**
 * Unparse an expression: parse it and print it back the way HTCondor's unparser does
 * (binary operators between single spaces, =?= as "is", unary ones after a blank " -x",
 * calls "f(a,b)", lists "{ a,b }", records "[ a = 1; b = 2 ]" in HTCondor's attribute order,
 * parentheses and attribute-name quotes kept, reals as %.16G or real("INF")/real("-INF")/
 * real("NaN"), non-printable bytes as octal escapes). The text parses back to an equal
 * expression.
 *
 * @param src  Expression text.
 * @param len  Bytes of src, <= NL_CAD_MAX_SRC_BYTES.
 * @param buf  Output, NUL-terminated when n > 0 (truncated like snprintf).
 * @param n    Size of buf [bytes].
 * @param err  Output on a parse error. May be NULL.
 * @return the length of the full text (>= 0); -EINVAL / -E2BIG / -ENOMEM as nl_cad_parse().
 * @par Context  Any thread; allocates temporarily.
 * @par Source   HTCondor ClassAdUnParser (src/classad/sink.cpp) behaviour.
 */
int nl_cad_unparse(const char *src, size_t len, char *buf, size_t n, struct nl_cad_err *err);

/**
 * Free a program. NULL is a no-op.
 * @param prog  Program, no context of it alive.
 * @par Context  Control thread.
 */
void nl_cad_prog_free(struct nl_cad_prog *prog);

/**
 * Find a root slot by attribute name (case-insensitive).
 *
 * @param prog  Program.
 * @param name  NUL-terminated attribute name.
 * @return slot >= 0; -ENOENT if the root neither defines nor references the name.
 * @par Context  Any thread; read-only.
 */
int nl_cad_slot(const struct nl_cad_prog *prog, const char *name);

/**
 * @param prog  Program.
 * @return the number of root slots (defined and external).
 * @par Context  Any thread.
 */
unsigned int nl_cad_n_slots(const struct nl_cad_prog *prog);

/**
 * @param prog  Program.
 * @param slot  Root slot < nl_cad_n_slots().
 * @return its attribute name (NUL-terminated), "" for anonymous expressions.
 * @par Context  Any thread.
 */
const char *nl_cad_slot_name(const struct nl_cad_prog *prog, unsigned int slot);

/**
 * @param prog  Program.
 * @param slot  Root slot.
 * @return true when the program defines the slot (false: external, host-bound only).
 * @par Context  Any thread.
 */
bool nl_cad_slot_defined(const struct nl_cad_prog *prog, unsigned int slot);

/**
 * Create an evaluation context (value stack, memo, arena) for a program.
 *
 * @param prog  Program; must outlive the context.
 * @param out   Output context.
 * @return 0; -ENOMEM.
 * @par Context  Any thread; allocates. Use a context from one thread at a time.
 */
int nl_cad_ctx_create(const struct nl_cad_prog *prog, struct nl_cad_ctx **out);

/**
 * Free a context. NULL is a no-op.
 * @param ctx  Context.
 * @par Context  Owner thread.
 */
void nl_cad_ctx_free(struct nl_cad_ctx *ctx);

/**
 * Fix what time() returns (tests, simulation); INT64_MIN restores the wall clock.
 * @param ctx    Context.
 * @param now_s  Seconds since the epoch.
 * @par Context  Owner thread.
 */
void nl_cad_ctx_set_now(struct nl_cad_ctx *ctx, int64_t now_s);

/**
 * Set the budget of each evaluation (0: default, NL_CAD_DEF_STEP_BUDGET).
 * @param ctx    Context.
 * @param steps  Budget [attribute blocks run + evaluateList elements].
 * @par Context  Owner thread.
 */
void nl_cad_ctx_set_budget(struct nl_cad_ctx *ctx, uint64_t steps);

/**
 * Install the host hook behind plus_rsvutil() (NULL: plus_rsvutil yields undefined).
 * @param ctx  Context.
 * @param fn   Hook.
 * @param arg  Its argument.
 * @par Context  Owner thread.
 */
void nl_cad_ctx_set_rsvutil(struct nl_cad_ctx *ctx, nl_cad_rsvutil_fn fn, void *arg);

/**
 * Bind a root slot to a value for the following evaluations (overrides any definition).
 *
 * @param ctx   Context.
 * @param slot  Root slot from nl_cad_slot(); out of range is ignored.
 * @param v     Value; what it points to must stay valid while bound. Host records, host
 *              strings and lists, or values returned by this context's last evaluation.
 * @par Context  Owner thread; no allocation, O(1).
 */
void nl_cad_bind(struct nl_cad_ctx *ctx, int slot, const struct nl_cad_val *v);

/**
 * Bind a root slot and return where its value lives, for updates in place between
 * evaluations (e.g. only the length of a growing list). Faster than nl_cad_bind() in loops.
 *
 * @param ctx   Context.
 * @param slot  Root slot; out of range gives a scratch value nobody reads.
 * @return the bound value (valid for the context's life). Its initial content is whatever
 *         was bound before (undefined for a new context).
 * @par Context  Owner thread; O(1).
 */
struct nl_cad_val *nl_cad_bind_ref(struct nl_cad_ctx *ctx, int slot);

/**
 * Remove a binding (the slot's definition, if any, applies again).
 * @param ctx   Context.
 * @param slot  Root slot.
 * @par Context  Owner thread.
 */
void nl_cad_unbind(struct nl_cad_ctx *ctx, int slot);

/**
 * Evaluate a root attribute against the current bindings.
 *
 * @param ctx   Context.
 * @param slot  Root slot.
 * @param out   Output value (see I4 for its lifetime).
 * @return 0; -EINVAL if slot is out of range (out = error).
 * @par Context  Owner thread; no allocation once the arena is warm. Cost linear in the
 *               program size (I1) for programs without evaluateList.
 * @par Source   seed 004 §4.3 (PLUS_NODE_RESERVABLE per candidate node).
 */
int nl_cad_eval(struct nl_cad_ctx *ctx, int slot, struct nl_cad_val *out);

/**
 * Explain a refusal: evaluate the top-level && operands of a root attribute one by one and
 * report the first that is not true (an attribute without && has one clause: itself).
 *
 * @param ctx   Context (bindings as for the refused evaluation).
 * @param slot  Root slot.
 * @param why   Output.
 * @return 0 when a clause was not true; -ENOENT if every clause is true; -EINVAL bad slot or
 *         external slot.
 * @par Context  Owner thread; cold path.
 */
int nl_cad_explain(struct nl_cad_ctx *ctx, int slot, struct nl_cad_why *why);

/**
 * Format a value in ClassAd syntax, as HTCondor's unparser prints it: 3, 0.3, "s", true,
 * undefined, { 1,2 } (a list literal's value: its elements' expressions, { 1,2 + 3 }),
 * [ a = 1 ] (a record: its attributes' expressions, in HTCondor's order),
 * absTime("2024-01-01T00:00:00-00:00"), relTime("1+02:00:00").
 *
 * @param ctx  Context that produced the value (for record instances), or NULL.
 * @param v    Value.
 * @param buf  Output buffer, always NUL-terminated when n > 0 (truncated).
 * @param n    Size of buf [bytes].
 * @return the length the full text needs (like snprintf).
 * @par Context  Owner thread of ctx.
 */
int nl_cad_format(struct nl_cad_ctx *ctx, const struct nl_cad_val *v, char *buf, size_t n);

/**
 * @param t  A type.
 * @return its name: "undefined", "error", "boolean", "integer", "real", "string",
 *         "absTime", "relTime", "list", "classad".
 */
const char *nl_cad_type_name(enum nl_cad_type t);

/**
 * Prepare a host schema: copy name pointers and hash them.
 * @param sc     Output schema.
 * @param names  [n] NUL-terminated names (borrowed; must outlive the schema).
 * @param n      <= NL_CAD_SCHEMA_MAX.
 * @return 0; -E2BIG.
 * @par Context  Any thread.
 */
int nl_cad_schema_init(struct nl_cad_schema *sc, const char *const *names, unsigned int n);

/**
 * Look an attribute up in a record value (host or frame) by name.
 * @param ctx   Context (evaluates frame attributes), or NULL for host records only.
 * @param rec   A NL_CAD_RECORD value.
 * @param name  NUL-terminated name, case-insensitive.
 * @param out   Output; undefined when missing.
 * @return 0; -EINVAL if rec is not a record.
 * @par Context  Owner thread of ctx; does not reset the arena.
 */
int nl_cad_rec_get(struct nl_cad_ctx *ctx, const struct nl_cad_val *rec, const char *name,
		   struct nl_cad_val *out);

/**
 * Parse the text of absTime("..."): YYYY-MM-DD[THH:MM[:SS]][Z|+HH[:MM]|-HH[:MM]] (UTC when no
 * zone is given).
 * @param s        Text.
 * @param len      Bytes of s.
 * @param out_s    Output seconds since the epoch (UTC).
 * @param out_off  Output zone offset [s].
 * @return 0; -EINVAL.
 * @par Context  Any thread.
 */
int nl_cad_parse_abstime(const char *s, uint32_t len, int64_t *out_s, int32_t *out_off);

/**
 * Parse the text of relTime("..."): [-][D+]HH:MM[:SS[.fff]], or [-]NdNhNmNs (any subset,
 * e.g. "7d", "1h30m"), or a number of seconds.
 * @param s      Text.
 * @param len    Bytes of s.
 * @param out_s  Output [s].
 * @return 0; -EINVAL.
 * @par Context  Any thread.
 */
int nl_cad_parse_reltime(const char *s, uint32_t len, double *out_s);

/**
 * Is a value the boolean true (what PLUS_NODE_RESERVABLE must be to accept a node)?
 * @param v  Value.
 * @return true only for the boolean true (undefined, error and numbers are not true).
 * @par Context  Any thread; pure.
 */
static inline bool
nl_cad_is_true(const struct nl_cad_val *v)
{
	return v->type == NL_CAD_BOOL && v->u.b;
}

/**
 * Make an undefined value.
 * @return the value.
 * @par Context  Any thread; pure.
 */
static inline struct nl_cad_val
nl_cad_undef(void)
{
	struct nl_cad_val v;

	memset(&v, 0, sizeof(v));
	v.type = NL_CAD_UNDEFINED;
	return v;
}

/**
 * Make a boolean value.
 * @param b  The boolean.
 * @return the value.
 * @par Context  Any thread; pure.
 */
static inline struct nl_cad_val
nl_cad_bool(bool b)
{
	struct nl_cad_val v;

	memset(&v, 0, sizeof(v));
	v.type = NL_CAD_BOOL;
	v.u.b = b;
	return v;
}

/**
 * Make an integer value.
 * @param i  The integer.
 * @return the value.
 * @par Context  Any thread; pure.
 */
static inline struct nl_cad_val
nl_cad_int(int64_t i)
{
	struct nl_cad_val v;

	memset(&v, 0, sizeof(v));
	v.type = NL_CAD_INT;
	v.u.i = i;
	return v;
}

/**
 * Make a real value.
 * @param r  The real.
 * @return the value.
 * @par Context  Any thread; pure.
 */
static inline struct nl_cad_val
nl_cad_real(double r)
{
	struct nl_cad_val v;

	memset(&v, 0, sizeof(v));
	v.type = NL_CAD_REAL;
	v.u.r = r;
	return v;
}

/**
 * Make a string value (borrowed).
 * @param s    NUL-terminated text; must outlive the value.
 * @param len  Its length [bytes].
 * @return the value.
 * @par Context  Any thread; pure.
 */
static inline struct nl_cad_val
nl_cad_str(const char *s, uint32_t len)
{
	struct nl_cad_val v;

	memset(&v, 0, sizeof(v));
	v.type = NL_CAD_STRING;
	v.aux = (int32_t)len;
	v.u.s = s;
	return v;
}

/**
 * Make an absTime value (zone offset 0).
 * @param epoch_s  Seconds since the epoch (UTC), NL_CAD_ABSTIME_MIN_S..NL_CAD_ABSTIME_MAX_S.
 * @return the value; the error value when epoch_s is out of that range.
 * @par Context  Any thread; pure.
 */
static inline struct nl_cad_val
nl_cad_abstime(int64_t epoch_s)
{
	struct nl_cad_val v;

	memset(&v, 0, sizeof(v));
	v.type = epoch_s >= NL_CAD_ABSTIME_MIN_S && epoch_s <= NL_CAD_ABSTIME_MAX_S
			 ? NL_CAD_ABSTIME : NL_CAD_ERROR;
	v.u.abs_s = v.type == NL_CAD_ABSTIME ? epoch_s : 0;
	return v;
}

/**
 * Make a relTime value.
 * @param s  Duration [s], finite, |s| <= NL_CAD_RELTIME_MAX_S.
 * @return the value; the error value when s is not finite or out of that range.
 * @par Context  Any thread; pure.
 */
static inline struct nl_cad_val
nl_cad_reltime(double s)
{
	struct nl_cad_val v;

	memset(&v, 0, sizeof(v));
	/* false for NaN too */
	v.type = s >= -NL_CAD_RELTIME_MAX_S && s <= NL_CAD_RELTIME_MAX_S ? NL_CAD_RELTIME
									 : NL_CAD_ERROR;
	v.u.rel_s = v.type == NL_CAD_RELTIME ? s : 0;
	return v;
}

/**
 * Make a list value (borrowed).
 * @param items  [n] values; must outlive the value.
 * @param n      Element count.
 * @return the value.
 * @par Context  Any thread; pure.
 */
static inline struct nl_cad_val
nl_cad_list(const struct nl_cad_val *items, uint32_t n)
{
	struct nl_cad_val v;

	memset(&v, 0, sizeof(v));
	v.type = NL_CAD_LIST;
	v.aux = (int32_t)n;
	v.u.l = items;
	return v;
}

/**
 * Make a record value from a host record (borrowed).
 * @param rec  Record; must outlive the value.
 * @return the value.
 * @par Context  Any thread; pure.
 */
static inline struct nl_cad_val
nl_cad_record(const struct nl_cad_rec *rec)
{
	struct nl_cad_val v;

	memset(&v, 0, sizeof(v));
	v.type = NL_CAD_RECORD;
	v.kind = NL_CAD_REC_HOST;
	v.u.rec = rec;
	return v;
}

#ifdef __cplusplus
}
#endif
#endif /* NL_CLASSAD_H */
