/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ClassAd lexer (HTCondor's lexer.cpp: base-10 integers, string escapes, adjacent literals),
 * recursive-descent parser (HTCondor's precedence, lowest first: ?:, ||, &&, |, ^, &,
 * == != =?= =!= is isnt, < <= > >=, << >> >>>, + -, * / %, unary - + ! ~, postfix . [] ?:
 * (elvis, HTCondor 23.10) and calls), unparser (HTCondor's sink.cpp) and compiler from the AST
 * to the flat instruction array, resolving bare attribute references to (scope depth, slot)
 * at compile time (Self, Parent, Root, MY, currentTime: LookupInScope's special names).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_cad_int.h"

enum tok_type {
	T_EOF, T_INT, T_REAL, T_STR, T_ID, T_LBRACK, T_RBRACK, T_LBRACE, T_RBRACE, T_LPAR, T_RPAR,
	T_SEMI, T_COMMA, T_DOT, T_QUEST, T_COLON, T_ASSIGN, T_EQ, T_NE, T_IS, T_ISNT, T_LT, T_LE,
	T_GT, T_GE, T_SHL, T_SHR, T_USHR, T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PCT, T_NOT, T_TILDE,
	T_AMP, T_BAR, T_CARET, T_AND, T_OR,
	/* keywords */
	T_TRUE, T_FALSE, T_UNDEF, T_ERROR,
	T_ELVIS, /* '?' ':' with only white space between (HTCondor's lexer, LEX_ELVIS) */
};

struct tok {
	enum tok_type t;
	uint32_t off, end, line, col;
	int64_t i;
	double r;
	const char *s; /* T_STR (decoded, in prog arena), T_ID (in source) */
	uint32_t len;
	bool nl_before; /* a line break between the previous token and this one */
};

enum ast_kind {
	A_CONST, A_ATTR, A_ABSATTR, A_SELECT, A_INDEX, A_UN, A_BIN,
	A_AND, A_OR, A_COND, A_ELVIS, A_CALL, A_LIST, A_RECORD, A_PAREN,
};

struct ast {
	uint8_t kind;
	uint8_t op;
	uint16_t depth;
	uint32_t line, col, off, end;
	uint32_t kid0, n_kids;
	struct nl_cad_val val;
	const char *name;
	uint32_t name_len;
	uint32_t def;   /* A_RECORD: definition; A_CALL: function */
};

struct pending {
	uint32_t def, slot, node;
};

struct ps {
	const char *src;
	uint32_t len, pos, line, col;
	struct tok tk;
	struct ast *nodes;
	uint32_t n_nodes, cap_nodes;
	uint32_t *kids;
	uint32_t n_kids, cap_kids;
	struct pending *pend;
	uint32_t n_pend, cap_pend;
	uint32_t *pmap;      /* (def, slot) -> 1 + index in pend (0: empty), open addressing */
	uint32_t cap_pmap;   /* power of two, > 2 n_pend */
	struct nl_cad_prog *p;
	struct nl_cad_err *err;
	int rc;
	uint32_t nest;
	uint32_t src_base;   /* offset of src in p->src */
	/* compiler state */
	uint32_t cur_sp, max_sp;
};

#define NONE UINT32_MAX
#define LIST_CHUNK 256u /* elements of a non-constant list built at once on the stack */

static int
grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	uint32_t nc = *cap ? *cap : 16;

	while (nc < need)
		nc *= 2;
	void *n = realloc(*arr, (size_t)nc * elem);

	if (n == NULL)
		return -ENOMEM;
	*arr = n;
	*cap = nc;
	return 0;
}

static void
fail_at(struct ps *ps, int rc, uint32_t line, uint32_t col, const char *fmt, ...)
{
	va_list ap;

	if (ps->rc != 0)
		return;
	ps->rc = rc;
	if (ps->err != NULL) {
		ps->err->line = line;
		ps->err->col = col;
		va_start(ap, fmt);
		vsnprintf(ps->err->msg, sizeof(ps->err->msg), fmt, ap);
		va_end(ap);
	}
}

#define FAIL(ps, fmt, ...) fail_at(ps, -EINVAL, (ps)->tk.line, (ps)->tk.col, fmt, ##__VA_ARGS__)

/* ---------------------------------------------------------------- lexer */

static void
adv(struct ps *ps)
{
	if (ps->src[ps->pos] == '\n') {
		ps->line++;
		ps->col = 1;
	} else {
		ps->col++;
	}
	ps->pos++;
}

static int
peekc(struct ps *ps, uint32_t k)
{
	return ps->pos + k < ps->len ? (unsigned char)ps->src[ps->pos + k] : -1;
}

static bool
is_id0(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
is_hex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool
is_id(int c)
{
	return is_id0(c) || (c >= '0' && c <= '9');
}

static const struct {
	const char *kw;
	enum tok_type t;
} keywords[] = {
	{ "true", T_TRUE }, { "false", T_FALSE }, { "undefined", T_UNDEF }, { "error", T_ERROR },
	{ "is", T_IS }, { "isnt", T_ISNT },
};

/* Is c one of C's white-space characters (isspace() in the C locale)? */
static bool
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/*
 * A string literal ("...") or a quoted attribute name ('...'), HTCondor's lexer
 * (Lexer::tokenizeString, convert_escapes in util.cpp): literals with only white space between
 * them are one literal ("a" "b" is "ab"); the escapes \a \b \f \n \r \t \v \\ \" \' \?, octal
 * \d, \dd and \ddd (a third digit only while the value is below 040, so "\400" is a blank
 * then '0'), and a backslash before any other character stands for that character ("\." is
 * "."). A NUL byte, raw or escaped, is refused (HTCondor: a token error).
 */
static void
lex_string(struct ps *ps, int quote)
{
	uint32_t line = ps->line, col = ps->col;
	uint32_t q = ps->pos, raw = 0;
	char *buf;
	uint32_t n = 0;

	/* pass 1: the extent of the literal and its pieces; decoded length <= raw length */
	for (;;) {
		q++; /* the opening quote */
		while (q < ps->len && ps->src[q] != quote) {
			if (ps->src[q] == '\\' && q + 1 < ps->len) {
				q++;
				raw++;
			}
			q++;
			raw++;
		}
		if (q >= ps->len) {
			fail_at(ps, -EINVAL, line, col, "unterminated %s",
				quote == '"' ? "string" : "quoted attribute name");
			return;
		}
		uint32_t k = q + 1;

		while (k < ps->len && is_space((unsigned char)ps->src[k]))
			k++;
		if (k >= ps->len || ps->src[k] != quote)
			break;
		q = k;
	}
	buf = nl_cad_chunk_alloc(&ps->p->arena, &ps->p->arena_cur, raw + 1);
	if (buf == NULL) {
		fail_at(ps, -ENOMEM, line, col, "out of memory");
		return;
	}
	/* pass 2: decode, piece by piece */
	for (;;) {
		adv(ps); /* opening quote */
		while (ps->src[ps->pos] != quote) {
			int c = (unsigned char)ps->src[ps->pos];
			uint32_t el = ps->line, ec = ps->col;

			if (c == 0) {
				fail_at(ps, -EINVAL, el, ec, "NUL byte in %s",
					quote == '"' ? "string" : "quoted attribute name");
				return;
			}
			adv(ps);
			if (c != '\\') {
				buf[n++] = (char)c;
				continue;
			}
			c = (unsigned char)ps->src[ps->pos];
			adv(ps);
			switch (c) {
			case 'a': c = '\a'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'v': c = '\v'; break;
			default:
				if (c >= '0' && c <= '7') {
					int v = c - '0';

					if (peekc(ps, 0) >= '0' && peekc(ps, 0) <= '7') {
						v = v * 8 + (peekc(ps, 0) - '0');
						adv(ps);
						if (v < 040 && peekc(ps, 0) >= '0' && peekc(ps, 0) <= '7') {
							v = v * 8 + (peekc(ps, 0) - '0');
							adv(ps);
						}
					}
					if (v == 0) {
						fail_at(ps, -EINVAL, el, ec, "NUL byte (\\0) in %s",
							quote == '"' ? "string" : "quoted attribute name");
						return;
					}
					c = v;
				} else if (c == 0) {
					fail_at(ps, -EINVAL, el, ec, "NUL byte in %s",
						quote == '"' ? "string" : "quoted attribute name");
					return;
				}
				/* any other character stands for itself: \\ \" \' \? \. ... */
				break;
			}
			buf[n++] = (char)c;
		}
		adv(ps); /* closing quote */
		uint32_t k = ps->pos;

		while (k < ps->len && is_space((unsigned char)ps->src[k]))
			k++;
		if (k >= ps->len || ps->src[k] != quote)
			break;
		while (ps->pos < k)
			adv(ps);
	}
	buf[n] = 0;
	ps->tk.s = buf;
	ps->tk.len = n;
}

static bool
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* HTCondor's lexer reads '-' followed by a digit (or '.' and a digit) as the sign of a number
 * unless the previous token ends an operand (a value, a name, '.', ')', ']' or '}'): "x -1"
 * is a subtraction, "{-1}" and "f(-1)" hold the literal -1, "- 1" is unary minus. */
static bool
minus_starts_number(struct ps *ps, enum tok_type prev)
{
	switch (prev) {
	case T_INT: case T_REAL: case T_STR: case T_ID: case T_TRUE: case T_FALSE: case T_UNDEF:
	case T_ERROR: case T_DOT: case T_RBRACK: case T_RPAR: case T_RBRACE:
		return false;
	default:
		return is_digit(peekc(ps, 1)) || (peekc(ps, 1) == '.' && is_digit(peekc(ps, 2)));
	}
}

/*
 * A number, as HTCondor's Lexer::tokenizeNumber reads it: [-] digits, 0 then octal digits,
 * 0x then hex digits, or a real [-] digits . digits [e[+-]digits] / digits e[+-]digits. An
 * integer's value is its leading decimal digits (std::from_chars, base 10): 0x1F is 0, 010
 * is 10, and a value beyond 64 bits is 0. A 0 followed by non-octal digits and no '.' or 'e'
 * (09), a '.' without a digit after it (5.), 0x without a hex digit and an exponent without
 * digits are errors.
 */
static void
lex_number(struct ps *ps)
{
	struct tok *t = &ps->tk;
	uint32_t s = ps->pos;
	enum { NUM_NONE, NUM_INT, NUM_REAL } kind = NUM_NONE;
	int och = peekc(ps, 0);

	adv(ps);
	if (och == '-') {
		if (is_digit(peekc(ps, 0))) {
			och = peekc(ps, 0);
			adv(ps);
		}
		/* else '.' and a digit follow (minus_starts_number) */
	}
	if (och == '0' && (peekc(ps, 0) == 'x' || peekc(ps, 0) == 'X')) {
		kind = NUM_INT;
		adv(ps);
		if (!is_hex(peekc(ps, 0)))
			goto bad;
		while (is_hex(peekc(ps, 0)))
			adv(ps);
	} else if (och == '0') {
		bool octal = true;

		kind = NUM_INT;
		while (is_digit(peekc(ps, 0))) {
			octal = octal && peekc(ps, 0) <= '7';
			adv(ps);
		}
		if (peekc(ps, 0) == '.' || peekc(ps, 0) == 'e' || peekc(ps, 0) == 'E')
			kind = NUM_REAL;
		else if (!octal)
			goto bad;
	} else if (is_digit(och)) {
		while (is_digit(peekc(ps, 0)))
			adv(ps);
		kind = peekc(ps, 0) == '.' || peekc(ps, 0) == 'e' || peekc(ps, 0) == 'E' ? NUM_REAL
											: NUM_INT;
	}
	if (och == '.' || peekc(ps, 0) == '.') {
		if (peekc(ps, 0) == '.')
			adv(ps);
		if (!is_digit(peekc(ps, 0)))
			goto bad; /* "5." (och '.' always has a digit: the caller checked) */
		kind = NUM_REAL;
		while (is_digit(peekc(ps, 0)))
			adv(ps);
	}
	if (kind == NUM_REAL && (peekc(ps, 0) == 'e' || peekc(ps, 0) == 'E')) {
		adv(ps);
		if (peekc(ps, 0) == '+' || peekc(ps, 0) == '-')
			adv(ps);
		if (!is_digit(peekc(ps, 0)))
			goto bad;
		while (is_digit(peekc(ps, 0)))
			adv(ps);
	}
	if (is_id(peekc(ps, 0)))
		goto bad;
	uint32_t n = ps->pos - s;
	const char *txt = ps->src + s;

	t->end = ps->pos;
	if (kind == NUM_REAL) {
		char tmp[128];

		if (n >= sizeof(tmp)) {
			fail_at(ps, -EINVAL, t->line, t->col, "number too long");
			t->t = T_EOF;
			return;
		}
		memcpy(tmp, txt, n);
		tmp[n] = 0;
		t->t = T_REAL;
		t->r = strtod(tmp, NULL);
		return;
	}
	/* std::from_chars(base 10): optional '-', the leading digits; out of range: 0 */
	bool neg = txt[0] == '-';
	uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	bool over = false;

	for (uint32_t i = neg; i < n && is_digit(txt[i]); i++) {
		unsigned d = (unsigned)(txt[i] - '0');

		if (v > (lim - d) / 10)
			over = true;
		else
			v = v * 10 + d;
	}
	t->t = T_INT;
	t->i = over ? 0 : neg ? (int64_t)(0 - v) : (int64_t)v;
	return;
bad:
	fail_at(ps, -EINVAL, t->line, t->col, "malformed number");
	t->t = T_EOF;
}

static void
next(struct ps *ps)
{
	struct tok *t = &ps->tk;
	uint32_t line0 = ps->line; /* where the previous token ended (tokens are one line) */
	enum tok_type prev = t->t;

	if (ps->rc != 0) {
		t->t = T_EOF;
		return;
	}
	for (;;) {
		int c = peekc(ps, 0);

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			adv(ps);
		} else if (c == '/' && peekc(ps, 1) == '/') {
			while (ps->pos < ps->len && ps->src[ps->pos] != '\n')
				adv(ps);
		} else if (c == '/' && peekc(ps, 1) == '*') {
			uint32_t l = ps->line, co = ps->col;

			adv(ps);
			adv(ps);
			while (ps->pos < ps->len && !(peekc(ps, 0) == '*' && peekc(ps, 1) == '/'))
				adv(ps);
			if (ps->pos >= ps->len) {
				fail_at(ps, -EINVAL, l, co, "unterminated comment");
				t->t = T_EOF;
				return;
			}
			adv(ps);
			adv(ps);
		} else {
			break;
		}
	}
	t->off = ps->pos;
	t->line = ps->line;
	t->col = ps->col;
	t->nl_before = ps->line != line0;
	int c = peekc(ps, 0);

	if (c < 0) {
		t->t = T_EOF;
		t->end = ps->pos;
		return;
	}
	if ((c >= '0' && c <= '9') || (c == '.' && is_digit(peekc(ps, 1))) ||
	    (c == '-' && minus_starts_number(ps, prev))) {
		lex_number(ps);
		return;
	}
	if (is_id0(c)) {
		uint32_t s = ps->pos;

		while (is_id(peekc(ps, 0)))
			adv(ps);
		t->t = T_ID;
		t->s = ps->src + s;
		t->len = ps->pos - s;
		t->end = ps->pos;
		for (unsigned int k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
			if (nl_cad_name_eq(t->s, t->len, keywords[k].kw,
					   (uint32_t)strlen(keywords[k].kw)))
				t->t = keywords[k].t;
		return;
	}
	if (c == '"' || c == '\'') {
		lex_string(ps, c);
		t->t = c == '"' ? T_STR : T_ID;
		t->end = ps->pos;
		if (ps->rc == 0 && c == '\'' && t->len == 0)
			fail_at(ps, -EINVAL, t->line, t->col, "empty attribute name");
		if (ps->rc != 0)
			t->t = T_EOF;
		return;
	}
	int c1 = peekc(ps, 1), c2 = peekc(ps, 2);
	enum tok_type tt;
	int n = 1;

	switch (c) {
	case '[': tt = T_LBRACK; break;
	case ']': tt = T_RBRACK; break;
	case '{': tt = T_LBRACE; break;
	case '}': tt = T_RBRACE; break;
	case '(': tt = T_LPAR; break;
	case ')': tt = T_RPAR; break;
	case ';': tt = T_SEMI; break;
	case ',': tt = T_COMMA; break;
	case '.': tt = T_DOT; break;
	case '?': {
		/* HTCondor: '?' then ':' with only white space between is the elvis operator */
		uint32_t k = 1;

		while (is_space(peekc(ps, k)))
			k++;
		tt = T_QUEST;
		if (peekc(ps, k) == ':') {
			tt = T_ELVIS;
			n = (int)k + 1;
		}
		break;
	}
	case ':': tt = T_COLON; break;
	case '+': tt = T_PLUS; break;
	case '-': tt = T_MINUS; break;
	case '*': tt = T_STAR; break;
	case '/': tt = T_SLASH; break;
	case '%': tt = T_PCT; break;
	case '~': tt = T_TILDE; break;
	case '^': tt = T_CARET; break;
	case '=':
		if (c1 == '=') { tt = T_EQ; n = 2; }
		else if (c1 == '?' && c2 == '=') { tt = T_IS; n = 3; }
		else if (c1 == '!' && c2 == '=') { tt = T_ISNT; n = 3; }
		else tt = T_ASSIGN;
		break;
	case '!':
		if (c1 == '=') { tt = T_NE; n = 2; } else tt = T_NOT;
		break;
	case '<':
		if (c1 == '=') { tt = T_LE; n = 2; }
		else if (c1 == '<') { tt = T_SHL; n = 2; }
		else tt = T_LT;
		break;
	case '>':
		if (c1 == '=') { tt = T_GE; n = 2; }
		else if (c1 == '>' && c2 == '>') { tt = T_USHR; n = 3; }
		else if (c1 == '>') { tt = T_SHR; n = 2; }
		else tt = T_GT;
		break;
	case '&':
		if (c1 == '&') { tt = T_AND; n = 2; } else tt = T_AMP;
		break;
	case '|':
		if (c1 == '|') { tt = T_OR; n = 2; } else tt = T_BAR;
		break;
	default:
		if (c >= 32 && c < 127)
			fail_at(ps, -EINVAL, t->line, t->col, "unexpected character '%c'", c);
		else
			fail_at(ps, -EINVAL, t->line, t->col, "unexpected byte 0x%02x", c);
		t->t = T_EOF;
		return;
	}
	while (n-- > 0)
		adv(ps);
	t->t = tt;
	t->end = ps->pos;
}

/* ---------------------------------------------------------------- AST */

static uint32_t
node(struct ps *ps, enum ast_kind k, const struct tok *at)
{
	if (ps->rc != 0)
		return NONE;
	if (grow((void **)&ps->nodes, &ps->cap_nodes, ps->n_nodes + 1, sizeof(struct ast))) {
		fail_at(ps, -ENOMEM, at->line, at->col, "out of memory");
		return NONE;
	}
	struct ast *a = &ps->nodes[ps->n_nodes];

	memset(a, 0, sizeof(*a));
	a->kind = (uint8_t)k;
	a->line = at->line;
	a->col = at->col;
	a->off = at->off;
	a->end = at->end;
	a->depth = 1;
	a->kid0 = ps->n_kids;
	return ps->n_nodes++;
}

/* Attach children (already parsed) to node n; they must be appended in order right after. */
static void
kids(struct ps *ps, uint32_t n, const uint32_t *k, uint32_t nk)
{
	if (ps->rc != 0)
		return;
	if (grow((void **)&ps->kids, &ps->cap_kids, ps->n_kids + nk, sizeof(uint32_t))) {
		fail_at(ps, -ENOMEM, 1, 1, "out of memory");
		return;
	}
	struct ast *a = &ps->nodes[n];
	uint32_t depth = 0;

	a->kid0 = ps->n_kids;
	a->n_kids = nk;
	for (uint32_t i = 0; i < nk; i++) {
		struct ast *c = &ps->nodes[k[i]];

		ps->kids[ps->n_kids++] = k[i];
		if (c->depth > depth)
			depth = c->depth;
		if (c->off < a->off)
			a->off = c->off, a->line = c->line, a->col = c->col;
		if (c->end > a->end)
			a->end = c->end;
	}
	if (depth + 1 > NL_CAD_MAX_DEPTH) {
		fail_at(ps, -E2BIG, a->line, a->col, "expression nested deeper than %d",
			NL_CAD_MAX_DEPTH);
		return;
	}
	a->depth = (uint16_t)(depth + 1);
}

static uint32_t parse_expr(struct ps *ps);

static bool
accept(struct ps *ps, enum tok_type t)
{
	if (ps->tk.t != t)
		return false;
	next(ps);
	return true;
}

static const char *
tok_desc(const struct tok *t)
{
	switch (t->t) {
	case T_EOF: return "end of input";
	case T_INT: case T_REAL: return "number";
	case T_STR: return "string";
	case T_ID: return "name";
	default: return "token";
	}
}

static bool
expect(struct ps *ps, enum tok_type t, const char *what)
{
	if (ps->rc != 0)
		return false;
	if (ps->tk.t != t) {
		uint32_t n = ps->tk.end > ps->tk.off ? ps->tk.end - ps->tk.off : 0;

		if (n > 20)
			n = 20;
		if (ps->tk.t == T_EOF)
			FAIL(ps, "expected %s, found end of input", what);
		else
			FAIL(ps, "expected %s, found %s '%.*s'", what, tok_desc(&ps->tk), (int)n,
			     ps->src + ps->tk.off);
		return false;
	}
	next(ps);
	return true;
}

/* Bucket of (def, slot) in the pending map: its entry, or the empty bucket to fill. */
static uint32_t *
pmap_bucket(const struct ps *ps, uint32_t def, uint32_t slot)
{
	uint32_t mask = ps->cap_pmap - 1;
	uint32_t h = (def * 0x9E3779B1u) ^ (slot * 0x85EBCA77u);

	for (h &= mask;; h = (h + 1) & mask) {
		uint32_t e = ps->pmap[h];

		if (e == 0 || (ps->pend[e - 1].def == def && ps->pend[e - 1].slot == slot))
			return &ps->pmap[h];
	}
}

/* The pending definition of slot of def (unique per pair: a redefinition replaces it), found
 * in O(1) so that compiling and unparsing n records is linear in n. */
static struct pending *
find_pending_mut(const struct ps *ps, uint32_t def, uint32_t slot)
{
	if (ps->cap_pmap == 0)
		return NULL;
	uint32_t e = *pmap_bucket(ps, def, slot);

	return e != 0 ? &ps->pend[e - 1] : NULL;
}

static int
add_pending(struct ps *ps, uint32_t def, uint32_t slot, uint32_t n, bool redef)
{
	struct pending *pe = redef ? find_pending_mut(ps, def, slot) : NULL;

	if (pe != NULL) {
		pe->node = n; /* a later definition replaces an earlier one */
		return 0;
	}
	if (grow((void **)&ps->pend, &ps->cap_pend, ps->n_pend + 1, sizeof(struct pending)))
		return -ENOMEM;
	if (2 * (ps->n_pend + 1) >= ps->cap_pmap) {
		uint32_t nc = ps->cap_pmap ? ps->cap_pmap * 2 : 64;
		uint32_t *m = calloc(nc, sizeof(*m));

		if (m == NULL)
			return -ENOMEM;
		free(ps->pmap);
		ps->pmap = m;
		ps->cap_pmap = nc;
		for (uint32_t i = 0; i < ps->n_pend; i++)
			*pmap_bucket(ps, ps->pend[i].def, ps->pend[i].slot) = i + 1;
	}
	ps->pend[ps->n_pend] = (struct pending){ def, slot, n };
	*pmap_bucket(ps, def, slot) = ++ps->n_pend;
	return 0;
}

#define DEF_HASH_MIN 16 /* a definition with more names gets a hash index */

/* The bucket of a name in df's hash index: its 1 + slot, or the empty bucket. */
static uint32_t *
def_bucket(const struct nl_cad_def *df, const char *name, uint32_t len, uint32_t h)
{
	uint32_t mask = df->hcap - 1;

	for (uint32_t b = h & mask;; b = (b + 1) & mask) {
		uint32_t e = df->hidx[b];

		if (e == 0 || (df->names[e - 1].hash == h &&
			       nl_cad_name_eq(df->names[e - 1].s, df->names[e - 1].len, name, len)))
			return &df->hidx[b];
	}
}

/* Add (or find) an attribute name in a definition; returns its slot or -errno (-E2BIG: more
 * than 65535 names at the root, 4096 in a record). O(1) per name: a 65535-attribute root
 * compiles in linear time. */
static int
def_slot(struct nl_cad_prog *p, uint32_t d, const char *name, uint32_t len, bool copy)
{
	struct nl_cad_def *df = &p->defs[d];
	uint32_t h = nl_cad_hash(name, len);

	if (df->hidx != NULL) {
		uint32_t e = *def_bucket(df, name, len, h);

		if (e != 0)
			return (int)(e - 1);
	} else {
		for (uint32_t i = 0; i < df->n; i++)
			if (df->names[i].hash == h &&
			    nl_cad_name_eq(df->names[i].s, df->names[i].len, name, len))
				return (int)i;
	}
	if (df->n >= (d == 0 ? NL_CAD_MAX_ROOT_ATTRS : NL_CAD_MAX_REC_ATTRS))
		return -E2BIG;
	if (df->n + 1 > DEF_HASH_MIN && 2 * (df->n + 1) >= df->hcap) {
		uint32_t nc = df->hcap ? df->hcap * 2 : 64;
		uint32_t *m = calloc(nc, sizeof(*m));

		if (m == NULL)
			return -ENOMEM;
		free(df->hidx);
		df->hidx = m;
		df->hcap = nc;
		for (uint32_t i = 0; i < df->n; i++)
			*def_bucket(df, df->names[i].s, df->names[i].len, df->names[i].hash) = i + 1;
	}
	if (df->n == df->cap) {
		uint32_t nc = df->cap ? df->cap * 2 : 8;
		void *a = realloc(df->names, nc * sizeof(*df->names));

		if (a == NULL)
			return -ENOMEM;
		df->names = a;
		a = realloc(df->code, nc * sizeof(*df->code));
		if (a == NULL)
			return -ENOMEM;
		df->code = a;
		a = realloc(df->text, nc * sizeof(*df->text));
		if (a == NULL)
			return -ENOMEM;
		df->text = a;
		a = realloc(df->text_e, nc * sizeof(*df->text_e));
		if (a == NULL)
			return -ENOMEM;
		df->text_e = a;
		if (d == 0) {
			a = realloc(df->clauses, nc * sizeof(*df->clauses));
			if (a == NULL)
				return -ENOMEM;
			df->clauses = a;
			a = realloc(df->n_clauses, nc * sizeof(*df->n_clauses));
			if (a == NULL)
				return -ENOMEM;
			df->n_clauses = a;
		}
		df->cap = nc;
	}
	if (copy) {
		char *s = nl_cad_chunk_alloc(&p->arena, &p->arena_cur, len + 1);

		if (s == NULL)
			return -ENOMEM;
		memcpy(s, name, len);
		s[len] = 0;
		name = s;
	}
	df->names[df->n] = (struct nl_cad_name){ name, len, h };
	df->code[df->n] = UINT32_MAX;
	df->text[df->n] = NULL;
	df->text_e[df->n] = NULL;
	if (df->hidx != NULL)
		*def_bucket(df, name, len, h) = df->n + 1;
	if (d == 0) {
		df->clauses[df->n] = NULL;
		df->n_clauses[df->n] = 0;
	}
	return (int)df->n++;
}

static int
new_def(struct nl_cad_prog *p, int32_t parent)
{
	if (grow((void **)&p->defs, &p->cap_defs, p->n_defs + 1, sizeof(struct nl_cad_def)))
		return -ENOMEM;
	memset(&p->defs[p->n_defs], 0, sizeof(struct nl_cad_def));
	p->defs[p->n_defs].parent = parent;
	return (int)p->n_defs++;
}

/* attrlist := { name '=' expr [';'] } until `until`. Attributes go to definition d. */
static void
parse_attrs(struct ps *ps, uint32_t d, enum tok_type until, uint32_t *max_depth)
{
	while (ps->rc == 0 && ps->tk.t != until) {
		struct tok name = ps->tk;

		/* HTCondor: empty statements (";;") between definitions are allowed */
		if (accept(ps, T_SEMI))
			continue;
		if (name.t != T_ID) {
			expect(ps, T_ID, "attribute name");
			return;
		}
		next(ps);
		if (!expect(ps, T_ASSIGN, "'='"))
			return;
		uint32_t e = parse_expr(ps);

		if (ps->rc != 0)
			return;
		uint32_t old_n = ps->p->defs[d].n;
		int s = def_slot(ps->p, d, name.s, name.len, true);

		if (s < 0 || add_pending(ps, d, (uint32_t)s, e, (uint32_t)s < old_n) < 0) {
			if (s == -E2BIG)
				fail_at(ps, -E2BIG, name.line, name.col,
					d == 0 ? "more than %u attributes at the root"
					       : "record with more than %u attributes",
					d == 0 ? NL_CAD_MAX_ROOT_ATTRS : NL_CAD_MAX_REC_ATTRS);
			else
				fail_at(ps, -ENOMEM, name.line, name.col, "out of memory");
			return;
		}
		if (ps->nodes[e].depth > *max_depth)
			*max_depth = ps->nodes[e].depth;
		if (accept(ps, T_SEMI))
			continue;
		/* HTCondor old-style files separate definitions by newlines only: ';' may be left
		 * out where the next definition starts a new line (never within a line) */
		if (ps->tk.t != until && !(ps->tk.t == T_ID && ps->tk.nl_before)) {
			expect(ps, T_SEMI, until == T_RBRACK ? "';' or ']'" : "';'");
			return;
		}
	}
}

/* The parser tracks the definition being filled so nested records know their parent. */
struct defstack {
	uint32_t d[NL_CAD_MAX_DEPTH + 8];
	uint32_t n;
};

static struct defstack *
dstack(struct ps *ps)
{
	return (struct defstack *)(void *)((char *)ps + sizeof(*ps));
}

static uint32_t
ps_def(struct ps *ps)
{
	struct defstack *ds = dstack(ps);

	return ds->n ? ds->d[ds->n - 1] : 0;
}

/* record literal: its attributes' parent scope is the enclosing definition */
static uint32_t
parse_record(struct ps *ps)
{
	struct tok at = ps->tk;
	uint32_t nn = node(ps, A_RECORD, &at);
	int d = nn == NONE ? -ENOMEM : new_def(ps->p, (int32_t)ps_def(ps));
	uint32_t md = 0;
	struct defstack *ds = dstack(ps);

	if (d < 0) {
		fail_at(ps, -ENOMEM, at.line, at.col, "out of memory");
		return NONE;
	}
	ps->nodes[nn].def = (uint32_t)d;
	ds->d[ds->n++] = (uint32_t)d;
	next(ps);
	parse_attrs(ps, (uint32_t)d, T_RBRACK, &md);
	ds->n--;
	if (ps->rc != 0)
		return NONE;
	ps->nodes[nn].end = ps->tk.end;
	if (!expect(ps, T_RBRACK, "']'"))
		return NONE;
	if (md + 1 > NL_CAD_MAX_DEPTH) {
		fail_at(ps, -E2BIG, at.line, at.col, "record nested deeper than %d",
			NL_CAD_MAX_DEPTH);
		return NONE;
	}
	ps->nodes[nn].depth = (uint16_t)(md + 1);
	return nn;
}

static uint32_t
parse_primary(struct ps *ps)
{
	struct tok t = ps->tk;
	uint32_t n;

	switch (t.t) {
	case T_INT:
		n = node(ps, A_CONST, &t);
		if (n != NONE)
			ps->nodes[n].val = nl_cad_int(t.i);
		next(ps);
		return n;
	case T_REAL:
		n = node(ps, A_CONST, &t);
		if (n != NONE)
			ps->nodes[n].val = nl_cad_real(t.r);
		next(ps);
		return n;
	case T_STR:
		n = node(ps, A_CONST, &t);
		if (n != NONE)
			ps->nodes[n].val = nl_cad_str(t.s, t.len);
		next(ps);
		return n;
	case T_TRUE:
	case T_FALSE:
		n = node(ps, A_CONST, &t);
		if (n != NONE)
			ps->nodes[n].val = nl_cad_bool(t.t == T_TRUE);
		next(ps);
		return n;
	case T_UNDEF:
	case T_ERROR:
		n = node(ps, A_CONST, &t);
		if (n != NONE)
			ps->nodes[n].val.type = t.t == T_UNDEF ? NL_CAD_UNDEFINED : NL_CAD_ERROR;
		next(ps);
		return n;
	case T_DOT: {
		next(ps);
		struct tok nm = ps->tk;

		if (!expect(ps, T_ID, "attribute name after '.'"))
			return NONE;
		n = node(ps, A_ABSATTR, &t);
		if (n != NONE) {
			ps->nodes[n].name = nm.s;
			ps->nodes[n].name_len = nm.len;
			ps->nodes[n].end = nm.end;
		}
		return n;
	}
	case T_ID:
		next(ps);
		if (ps->tk.t == T_LPAR) {
			int fn = nl_cad_fn_lookup(t.s, t.len);
			uint32_t args[256];
			uint32_t na = 0;
			bool late = (ps->p->flags & NL_CAD_PARSE_HTCONDOR_CALLS) != 0;

			if (fn < 0 && !late) {
				fail_at(ps, -EINVAL, t.line, t.col, "unknown function '%.*s'",
					(int)(t.len > 40 ? 40 : t.len), t.s);
				return NONE;
			}
			next(ps);
			if (ps->tk.t != T_RPAR) {
				for (;;) {
					if (na == 255) {
						FAIL(ps, "too many arguments");
						return NONE;
					}
					args[na++] = parse_expr(ps);
					if (ps->rc != 0)
						return NONE;
					if (!accept(ps, T_COMMA))
						break;
				}
			}
			struct tok close = ps->tk;

			if (!expect(ps, T_RPAR, "')' or ','"))
				return NONE;
			const struct nl_cad_fn_desc *fd = fn >= 0 ? &nl_cad_fn_table[fn] : NULL;

			if (fd != NULL &&
			    (na < fd->min_args || (fd->max_args != 255 && na > fd->max_args))) {
				if (!late) {
					fail_at(ps, -EINVAL, t.line, t.col,
						"%s() takes %u%s argument%s, given %u", fd->name,
						fd->min_args,
						fd->max_args == 255 ? " or more"
						: fd->max_args != fd->min_args ? " to n" : "",
						fd->min_args == 1 && fd->max_args == 1 ? "" : "s", na);
					return NONE;
				}
				/* HTCondor: each built-in yields error for a count it does not take */
				fn = NL_CAD_F_BADCALL;
			}
			if (fn < 0)
				fn = NL_CAD_F_BADCALL; /* HTCondor: an unknown function is error */
			/* HTCondor's parser (ClassAdParser::evaluateFunction) turns absTime("...") and
			 * relTime("...") of a string literal into a time literal; text that does not
			 * read as a time is a parse error */
			if ((fn == NL_CAD_F_RELTIME || fn == NL_CAD_F_ABSTIME) && na == 1 &&
			    ps->nodes[args[0]].kind == A_CONST &&
			    ps->nodes[args[0]].val.type == NL_CAD_STRING) {
				const struct nl_cad_val *sv = &ps->nodes[args[0]].val;
				struct nl_cad_val v;
				int64_t as;
				int32_t off;
				double rs;
				int rc = fn == NL_CAD_F_RELTIME
					 ? nl_cad_parse_reltime(sv->u.s, (uint32_t)sv->aux, &rs)
					 : nl_cad_parse_abstime(sv->u.s, (uint32_t)sv->aux, &as, &off);

				if (rc == 0)
					v = fn == NL_CAD_F_RELTIME ? nl_cad_reltime(rs) : nl_cad_mkabs(as, off);
				if (rc != 0 || v.type == NL_CAD_ERROR) {
					fail_at(ps, -EINVAL, t.line, t.col, "%s(\"%.*s\") is not a %s",
						fn == NL_CAD_F_RELTIME ? "relTime" : "absTime",
						(int)(sv->aux > 40 ? 40 : sv->aux), sv->u.s,
						rc != 0 ? "time" : "time in range");
					return NONE;
				}
				n = node(ps, A_CONST, &t);
				if (n != NONE) {
					ps->nodes[n].val = v;
					ps->nodes[n].end = close.end;
				}
				return n;
			}
			n = node(ps, A_CALL, &t);
			if (n == NONE)
				return NONE;
			ps->nodes[n].def = (uint32_t)fn;
			ps->nodes[n].name = t.s;
			ps->nodes[n].name_len = t.len;
			ps->nodes[n].end = close.end;
			kids(ps, n, args, na);
			return n;
		}
		n = node(ps, A_ATTR, &t);
		if (n != NONE) {
			ps->nodes[n].name = t.s;
			ps->nodes[n].name_len = t.len;
		}
		return n;
	case T_LPAR: {
		next(ps);
		n = parse_expr(ps);
		struct tok close = ps->tk;

		if (!expect(ps, T_RPAR, "')'"))
			return NONE;
		/* kept as a node (the unparser prints the parentheses back); its span includes
		 * the parentheses */
		uint32_t pn = node(ps, A_PAREN, &t);

		if (pn == NONE)
			return NONE;
		kids(ps, pn, &n, 1);
		ps->nodes[pn].off = t.off;
		ps->nodes[pn].line = t.line;
		ps->nodes[pn].col = t.col;
		ps->nodes[pn].end = close.end;
		return pn;
	}
	case T_LBRACE: {
		uint32_t *el = NULL;
		uint32_t ne = 0, cap = 0;

		next(ps);
		while (ps->rc == 0 && ps->tk.t != T_RBRACE) {
			uint32_t e = parse_expr(ps);

			if (ps->rc != 0)
				break;
			if (grow((void **)&el, &cap, ne + 1, sizeof(uint32_t))) {
				FAIL(ps, "out of memory");
				break;
			}
			el[ne++] = e;
			if (!accept(ps, T_COMMA))
				break;
			if (ps->tk.t == T_RBRACE) {
				FAIL(ps, "expected an expression after ',' (HTCondor refuses '{1,}')");
				break;
			}
		}
		struct tok close = ps->tk;

		if (ps->rc != 0 || !expect(ps, T_RBRACE, "'}' or ','")) {
			free(el);
			return NONE;
		}
		n = node(ps, A_LIST, &t);
		if (n != NONE) {
			ps->nodes[n].end = close.end;
			kids(ps, n, el, ne);
		}
		free(el);
		return n;
	}
	case T_LBRACK:
		return parse_record(ps);
	default:
		if (t.t == T_EOF)
			FAIL(ps, "expected an expression, found end of input");
		else
			FAIL(ps, "expected an expression, found '%.*s'",
			     (int)(t.end - t.off > 20 ? 20 : t.end - t.off), ps->src + t.off);
		return NONE;
	}
}

static bool
enter(struct ps *ps)
{
	if (++ps->nest > NL_CAD_MAX_DEPTH) {
		fail_at(ps, -E2BIG, ps->tk.line, ps->tk.col, "expression nested deeper than %d",
			NL_CAD_MAX_DEPTH);
		return false;
	}
	return true;
}

static uint32_t
parse_postfix(struct ps *ps)
{
	uint32_t n;

	n = parse_primary(ps);
	while (ps->rc == 0) {
		struct tok t = ps->tk;

		if (t.t == T_DOT) {
			next(ps);
			struct tok nm = ps->tk;

			if (!expect(ps, T_ID, "attribute name after '.'"))
				return NONE;
			uint32_t s = node(ps, A_SELECT, &t);

			if (s == NONE)
				return NONE;
			ps->nodes[s].name = nm.s;
			ps->nodes[s].name_len = nm.len;
			kids(ps, s, &n, 1);
			ps->nodes[s].end = nm.end;
			n = s;
		} else if (t.t == T_LBRACK) {
			next(ps);
			if (!enter(ps))
				return NONE;
			uint32_t k[2] = { n, parse_expr(ps) };

			ps->nest--;
			struct tok close = ps->tk;

			if (!expect(ps, T_RBRACK, "']'"))
				return NONE;
			uint32_t s = node(ps, A_INDEX, &t);

			if (s == NONE)
				return NONE;
			kids(ps, s, k, 2);
			ps->nodes[s].end = close.end;
			n = s;
		} else if (t.t == T_ELVIS) {
			/* HTCondor (23.10 on): a ?: b binds like . and [], its right operand a
			 * postfix expression (x + y ?: 1 is x + (y ?: 1)) */
			next(ps);
			if (!enter(ps))
				return NONE;
			uint32_t k[2] = { n, parse_postfix(ps) };

			ps->nest--;
			if (ps->rc != 0)
				return NONE;
			uint32_t s = node(ps, A_ELVIS, &t);

			if (s == NONE)
				return NONE;
			kids(ps, s, k, 2);
			n = s;
		} else {
			break;
		}
	}
	return n;
}

static uint32_t
parse_unary(struct ps *ps)
{
	struct tok t = ps->tk;
	int op;

	switch (t.t) {
	case T_MINUS: op = NL_CAD_U_NEG; break;
	case T_PLUS: op = NL_CAD_U_POS; break;
	case T_NOT: op = NL_CAD_U_NOT; break;
	case T_TILDE: op = NL_CAD_U_BNOT; break;
	default: return parse_postfix(ps);
	}
	next(ps);
	if (!enter(ps))
		return NONE;
	uint32_t a = parse_unary(ps);

	ps->nest--;
	if (ps->rc != 0)
		return NONE;
	/* '- 5' (a blank between): HTCondor keeps a unary minus and prints it " -5", which its
	 * lexer reads back as the literal -5; fold it here, so that the text prints as it reads
	 * back (the unparser's fixed point) */
	if (op == NL_CAD_U_NEG && ps->nodes[a].kind == A_CONST &&
	    (ps->nodes[a].val.type == NL_CAD_INT || ps->nodes[a].val.type == NL_CAD_REAL)) {
		struct nl_cad_val *v = &ps->nodes[a].val;

		if (v->type == NL_CAD_INT)
			v->u.i = (int64_t)(0 - (uint64_t)v->u.i);
		else
			v->u.r = -v->u.r;
		ps->nodes[a].off = t.off;
		ps->nodes[a].line = t.line;
		ps->nodes[a].col = t.col;
		return a;
	}
	uint32_t n = node(ps, A_UN, &t);

	if (n == NONE)
		return NONE;
	ps->nodes[n].op = (uint8_t)op;
	kids(ps, n, &a, 1);
	return n;
}

/* Binary levels, lowest first after && (the logical ones are handled apart). */
enum { L_BOR, L_BXOR, L_BAND, L_EQ, L_REL, L_SHIFT, L_ADD, L_MUL, L_COUNT };

static int
binop_of(enum tok_type t, int level)
{
	switch (level) {
	case L_BOR: return t == T_BAR ? NL_CAD_B_BOR : -1;
	case L_BXOR: return t == T_CARET ? NL_CAD_B_BXOR : -1;
	case L_BAND: return t == T_AMP ? NL_CAD_B_BAND : -1;
	case L_EQ:
		return t == T_EQ ? NL_CAD_B_EQ : t == T_NE ? NL_CAD_B_NE : t == T_IS ? NL_CAD_B_IS :
		       t == T_ISNT ? NL_CAD_B_ISNT : -1;
	case L_REL:
		return t == T_LT ? NL_CAD_B_LT : t == T_LE ? NL_CAD_B_LE : t == T_GT ? NL_CAD_B_GT :
		       t == T_GE ? NL_CAD_B_GE : -1;
	case L_SHIFT:
		return t == T_SHL ? NL_CAD_B_SHL : t == T_SHR ? NL_CAD_B_SHR :
		       t == T_USHR ? NL_CAD_B_USHR : -1;
	case L_ADD: return t == T_PLUS ? NL_CAD_B_ADD : t == T_MINUS ? NL_CAD_B_SUB : -1;
	case L_MUL:
		return t == T_STAR ? NL_CAD_B_MUL : t == T_SLASH ? NL_CAD_B_DIV :
		       t == T_PCT ? NL_CAD_B_MOD : -1;
	}
	return -1;
}

static uint32_t
parse_bin(struct ps *ps, int level)
{
	if (level == L_COUNT)
		return parse_unary(ps);
	uint32_t l = parse_bin(ps, level + 1);

	while (ps->rc == 0) {
		struct tok t = ps->tk;
		int op = binop_of(t.t, level);

		if (op < 0)
			break;
		next(ps);
		uint32_t k[2] = { l, parse_bin(ps, level + 1) };

		if (ps->rc != 0)
			return NONE;
		uint32_t n = node(ps, A_BIN, &t);

		if (n == NONE)
			return NONE;
		ps->nodes[n].op = (uint8_t)op;
		kids(ps, n, k, 2);
		l = n;
	}
	return l;
}

static uint32_t
parse_and(struct ps *ps)
{
	uint32_t l = parse_bin(ps, L_BOR);

	while (ps->rc == 0 && ps->tk.t == T_AND) {
		struct tok t = ps->tk;

		next(ps);
		uint32_t k[2] = { l, parse_bin(ps, L_BOR) };
		uint32_t n = node(ps, A_AND, &t);

		if (n == NONE)
			return NONE;
		kids(ps, n, k, 2);
		l = n;
	}
	return l;
}

static uint32_t
parse_or(struct ps *ps)
{
	uint32_t l = parse_and(ps);

	while (ps->rc == 0 && ps->tk.t == T_OR) {
		struct tok t = ps->tk;

		next(ps);
		uint32_t k[2] = { l, parse_and(ps) };
		uint32_t n = node(ps, A_OR, &t);

		if (n == NONE)
			return NONE;
		kids(ps, n, k, 2);
		l = n;
	}
	return l;
}

static uint32_t
parse_expr(struct ps *ps)
{
	if (!enter(ps))
		return NONE;
	uint32_t c = parse_or(ps);

	if (ps->rc == 0 && ps->tk.t == T_QUEST) {
		struct tok t = ps->tk;
		uint32_t k[3];

		next(ps);
		k[0] = c;
		k[1] = parse_expr(ps);
		c = NONE;
		if (expect(ps, T_COLON, "':'")) {
			k[2] = parse_expr(ps);
			uint32_t n = node(ps, A_COND, &t);

			if (n != NONE)
				kids(ps, n, k, 3);
			c = n;
		}
	}
	ps->nest--;
	return ps->rc == 0 ? c : NONE;
}

/* ---------------------------------------------------------------- compiler */

static uint32_t
emit(struct ps *ps, uint8_t op, uint8_t a, uint16_t b, uint32_t c, int sp_delta)
{
	struct nl_cad_prog *p = ps->p;

	if (ps->rc != 0)
		return 0;
	if (p->n_ins >= (1u << 30) ||
	    grow((void **)&p->ins, &p->cap_ins, p->n_ins + 1, sizeof(struct nl_cad_ins))) {
		fail_at(ps, -ENOMEM, 1, 1, "out of memory");
		return 0;
	}
	p->ins[p->n_ins] = (struct nl_cad_ins){ op, a, b, c };
	ps->cur_sp = (uint32_t)((int)ps->cur_sp + sp_delta);
	if (ps->cur_sp > ps->max_sp)
		ps->max_sp = ps->cur_sp;
	return p->n_ins++;
}

static uint32_t
add_const(struct ps *ps, const struct nl_cad_val *v)
{
	struct nl_cad_prog *p = ps->p;

	if (grow((void **)&p->consts, &p->cap_consts, p->n_consts + 1, sizeof(*v))) {
		fail_at(ps, -ENOMEM, 1, 1, "out of memory");
		return 0;
	}
	p->consts[p->n_consts] = *v;
	return p->n_consts++;
}

static uint32_t
add_sel(struct ps *ps, const char *s, uint32_t len)
{
	struct nl_cad_prog *p = ps->p;
	uint32_t h = nl_cad_hash(s, len);

	for (uint32_t i = 0; i < p->n_sel; i++)
		if (p->sel[i].hash == h && nl_cad_name_eq(p->sel[i].s, p->sel[i].len, s, len))
			return i;
	char *c = nl_cad_chunk_alloc(&p->arena, &p->arena_cur, len + 1);

	if (c == NULL ||
	    grow((void **)&p->sel, &p->cap_sel, p->n_sel + 1, sizeof(struct nl_cad_name))) {
		fail_at(ps, -ENOMEM, 1, 1, "out of memory");
		return 0;
	}
	memcpy(c, s, len);
	c[len] = 0;
	p->sel[p->n_sel] = (struct nl_cad_name){ c, len, h };
	return p->n_sel++;
}

/* The node under any parentheses. */
static uint32_t
strip(const struct ps *ps, uint32_t n)
{
	while (ps->nodes[n].kind == A_PAREN)
		n = ps->kids[ps->nodes[n].kid0];
	return n;
}

static bool
is_const_node(const struct ps *ps, uint32_t n)
{
	return ps->nodes[strip(ps, n)].kind == A_CONST;
}

/* ---------------------------------------------------------------- unparser */

struct ubuf {
	char *buf;
	size_t n, len;
	bool real_e; /* reals as "%1.15E" (ClassAdUnParser's new-syntax form, unparse()) */
	bool oom;
};

static void
uput(struct ubuf *u, const char *s, size_t len)
{
	if (u->len < u->n) {
		size_t room = u->n - u->len;

		memcpy(u->buf + u->len, s, len < room ? len : room);
	}
	u->len += len;
}

static void
uputs(struct ubuf *u, const char *s)
{
	uput(u, s, strlen(s));
}

static void
uname(struct ubuf *u, const char *s, uint32_t len)
{
	if (nl_cad_name_needs_quotes(s, len)) {
		size_t l = u->len;
		char *b = u->len < u->n ? u->buf : NULL;

		nl_cad_put_string(b, b ? u->n : 0, &l, s, len, '\'');
		u->len = l;
	} else {
		uput(u, s, len);
	}
}

static const char *const binop_text[] = {
	[NL_CAD_B_ADD] = " + ", [NL_CAD_B_SUB] = " - ", [NL_CAD_B_MUL] = " * ",
	[NL_CAD_B_DIV] = " / ", [NL_CAD_B_MOD] = " % ", [NL_CAD_B_LT] = " < ",
	[NL_CAD_B_LE] = " <= ", [NL_CAD_B_GT] = " > ", [NL_CAD_B_GE] = " >= ",
	[NL_CAD_B_EQ] = " == ", [NL_CAD_B_NE] = " != ", [NL_CAD_B_IS] = " is ",
	[NL_CAD_B_ISNT] = " isnt ", [NL_CAD_B_BAND] = " & ", [NL_CAD_B_BOR] = " | ",
	[NL_CAD_B_BXOR] = " ^ ", [NL_CAD_B_SHL] = " << ", [NL_CAD_B_SHR] = " >> ",
	[NL_CAD_B_USHR] = " >>> ",
};

static const struct pending *
find_pending(const struct ps *ps, uint32_t def, uint32_t slot)
{
	return find_pending_mut(ps, def, slot);
}

/* HTCondor's unparser (ClassAdUnParser): operators with spaces, calls "f(a,b)", lists
 * "{ a,b }", records "[ a = 1; b = 2 ]", parentheses as written. */
static void
unparse(const struct ps *ps, uint32_t n, struct ubuf *u)
{
	const struct ast *a = &ps->nodes[n];
	const uint32_t *k = ps->kids != NULL ? &ps->kids[a->kid0] : NULL;
	/* ClassAdUnParser::opString: unary operators carry a blank before them */
	static const char *const un[] = { " -", " +", " !", " ~" };

	switch (a->kind) {
	case A_CONST: {
		int (*fmt)(struct nl_cad_ctx *, const struct nl_cad_val *, char *, size_t) =
			u->real_e ? nl_cad_format_e : nl_cad_format;
		size_t need = (size_t)fmt(NULL, &a->val, NULL, 0);

		if (u->len < u->n)
			fmt(NULL, &a->val, u->buf + u->len, u->n - u->len);
		/* nl_cad_format NUL-terminates; the byte is overwritten or cut by the caller */
		u->len += need;
		break;
	}
	case A_ATTR: uname(u, a->name, a->name_len); break;
	case A_ABSATTR: uputs(u, "."); uname(u, a->name, a->name_len); break;
	case A_SELECT:
		unparse(ps, k[0], u);
		/* "3.s" would read back as the real 3. and a name: keep a space after an integer */
		if (ps->nodes[k[0]].kind == A_CONST && ps->nodes[k[0]].val.type == NL_CAD_INT)
			uputs(u, " ");
		uputs(u, ".");
		uname(u, a->name, a->name_len);
		break;
	case A_INDEX:
		unparse(ps, k[0], u);
		uputs(u, "[");
		unparse(ps, k[1], u);
		uputs(u, "]");
		break;
	case A_UN: uputs(u, un[a->op & 3]); unparse(ps, k[0], u); break;
	case A_BIN:
		unparse(ps, k[0], u);
		uputs(u, binop_text[a->op]);
		unparse(ps, k[1], u);
		break;
	case A_AND:
	case A_OR:
		unparse(ps, k[0], u);
		uputs(u, a->kind == A_AND ? " && " : " || ");
		unparse(ps, k[1], u);
		break;
	case A_COND:
		unparse(ps, k[0], u);
		uputs(u, " ? ");
		unparse(ps, k[1], u);
		uputs(u, " : ");
		unparse(ps, k[2], u);
		break;
	case A_ELVIS:
		unparse(ps, k[0], u);
		uputs(u, " ?: ");
		unparse(ps, k[1], u);
		break;
	case A_CALL:
		uput(u, a->name, a->name_len);
		uputs(u, "(");
		for (uint32_t i = 0; i < a->n_kids; i++) {
			if (i)
				uputs(u, ",");
			unparse(ps, k[i], u);
		}
		uputs(u, ")");
		break;
	case A_LIST:
		uputs(u, "{ ");
		for (uint32_t i = 0; i < a->n_kids; i++) {
			if (i)
				uputs(u, ",");
			unparse(ps, k[i], u);
		}
		uputs(u, " }");
		break;
	case A_RECORD: {
		/* HTCondor 23.4 on keeps a record's attributes sorted (ClassAdFlatMap: by length,
		 * then case-insensitively); they print in that order */
		const struct nl_cad_def *d = &ps->p->defs[a->def];
		uint32_t *ord = d->n > 0 ? malloc(d->n * sizeof(*ord)) : NULL;
		uint32_t m = 0;

		if (d->n > 0 && ord == NULL) {
			u->oom = true;
			break;
		}
		for (uint32_t i = 0; i < d->n; i++)
			if (find_pending(ps, a->def, i) != NULL)
				ord[m++] = i;
		nl_cad_sort_names(d->names, ord, m);
		uputs(u, "[ ");
		for (uint32_t j = 0; j < m; j++) {
			uint32_t s = ord[j];

			if (j)
				uputs(u, "; ");
			uname(u, d->names[s].s, d->names[s].len);
			uputs(u, " = ");
			unparse(ps, find_pending(ps, a->def, s)->node, u);
		}
		uputs(u, " ]");
		free(ord);
		break;
	}
	case A_PAREN:
		uputs(u, "(");
		unparse(ps, k[0], u);
		uputs(u, ")");
		break;
	}
}

/* The unparsed text of node n in the program's arena (NULL when out of memory); real_e:
 * reals as "%1.15E" (what HTCondor's unparse() gives). */
static const char *
unparse_text_as(struct ps *ps, uint32_t n, bool real_e)
{
	struct ubuf u = { .real_e = real_e };

	unparse(ps, n, &u);
	char *t = u.oom ? NULL : nl_cad_chunk_alloc(&ps->p->arena, &ps->p->arena_cur, u.len + 1);

	if (t == NULL)
		return NULL;
	u.buf = t;
	u.n = u.len + 1;
	u.len = 0;
	unparse(ps, n, &u);
	t[u.len] = 0;
	return u.oom ? NULL : t;
}

static const char *
unparse_text(struct ps *ps, uint32_t n)
{
	return unparse_text_as(ps, n, false);
}

static bool has_real(const struct ps *ps, uint32_t n);

/* A list literal's text as its value prints (NL_CAD_LIST_EXPR): the text, its NUL, then the
 * text with reals as "%1.15E" (empty when it holds no real) and a NUL. */
static const char *
list_text(struct ps *ps, uint32_t n)
{
	const char *t = unparse_text(ps, n);
	const char *e = t != NULL && has_real(ps, n) ? unparse_text_as(ps, n, true) : "";

	if (t == NULL || e == NULL)
		return NULL;
	size_t lt = strlen(t), le = strlen(e);
	char *b = nl_cad_chunk_alloc(&ps->p->arena, &ps->p->arena_cur, lt + le + 2);

	if (b == NULL)
		return NULL;
	memcpy(b, t, lt + 1);
	memcpy(b + lt + 1, e, le + 1);
	return b;
}

/* Does the expression hold a real literal (its "%1.15E" text differs)? */
static bool
has_real(const struct ps *ps, uint32_t n)
{
	const struct ast *a = &ps->nodes[n];

	if (a->kind == A_CONST)
		return a->val.type == NL_CAD_REAL;
	if (a->kind == A_RECORD) {
		const struct nl_cad_def *d = &ps->p->defs[a->def];

		for (uint32_t i = 0; i < d->n; i++) {
			const struct pending *pe = find_pending(ps, a->def, i);

			if (pe != NULL && has_real(ps, pe->node))
				return true;
		}
		return false;
	}
	for (uint32_t i = 0; i < a->n_kids; i++)
		if (has_real(ps, ps->kids[a->kid0 + i]))
			return true;
	return false;
}

static void compile(struct ps *ps, uint32_t n, uint32_t def);

/* Does definition def itself define name? */
static bool
def_defines(const struct ps *ps, uint32_t def, const char *name, uint32_t len)
{
	const struct nl_cad_def *df = &ps->p->defs[def];

	for (uint32_t i = 0; i < df->n; i++)
		if ((df->code[i] != UINT32_MAX || find_pending(ps, def, i) != NULL) &&
		    nl_cad_name_eq(df->names[i].s, df->names[i].len, name, len))
			return true;
	return false;
}

/* unparse(attr): the attribute's expression as text, found at compile time (HTCondor looks
 * it up in the evaluating ad; "" when there is none, error for a non-attribute argument). */
static struct nl_cad_val
unparse_attr(struct ps *ps, uint32_t arg, uint32_t def)
{
	const struct ast *a = &ps->nodes[arg];
	struct nl_cad_val v = { .type = NL_CAD_ERROR };

	if (a->kind != A_ATTR && a->kind != A_ABSATTR)
		return v;
	for (int32_t d = a->kind == A_ABSATTR ? 0 : (int32_t)def; d >= 0;
	     d = ps->p->defs[d].parent) {
		const struct nl_cad_def *df = &ps->p->defs[d];

		for (uint32_t i = 0; i < df->n; i++) {
			if (!nl_cad_name_eq(df->names[i].s, df->names[i].len, a->name, a->name_len))
				continue;
			const struct pending *pe = find_pending(ps, (uint32_t)d, i);
			const char *t = df->text_e != NULL && df->text_e[i] != NULL ? df->text_e[i]
					: df->text != NULL ? df->text[i] : NULL;

			if (pe != NULL)
				t = unparse_text_as(ps, pe->node, true);
			else if (t == NULL)
				break;

			return t != NULL ? nl_cad_str(t, (uint32_t)strlen(t)) : v;
		}
	}
	return nl_cad_str("", 0);
}

enum { SP_NONE, SP_SELF, SP_PARENT, SP_ROOT, SP_TIME };

/* HTCondor's special attribute names (ClassAd::LookupInScope, getSpecialAttrNames()). */
static int
special_name(const char *s, uint32_t len)
{
	if (nl_cad_name_eq(s, len, "self", 4) || nl_cad_name_eq(s, len, "my", 2))
		return SP_SELF;
	if (nl_cad_name_eq(s, len, "parent", 6))
		return SP_PARENT;
	if (nl_cad_name_eq(s, len, "root", 4) || nl_cad_name_eq(s, len, "toplevel", 8))
		return SP_ROOT;
	if (nl_cad_name_eq(s, len, "currenttime", 11))
		return SP_TIME;
	return SP_NONE;
}

static int ps_init(struct ps **out, struct nl_cad_prog *p, const char *src, size_t len,
		   struct nl_cad_err *err);
static int ps_finish(struct ps *ps);

/*
 * unresolved(attr [, pattern]) (HTCondor's FunctionCall::hasRefs over
 * ClassAd::_GetExternalReferences), found when the policy is compiled: the names an
 * attribute's expression uses that no record around it defines, following the attributes it
 * uses that are defined (transitively); `X.y` with X undefined counts as "X.y" ("TARGET."
 * dropped when printed). Sorted and merged case-insensitively, joined by ','. A circular use or
 * an X.y whose X is neither a record nor undefined fails the search: "". The attribute not
 * found: undefined.
 */
#define REFS_MAX_DEPTH 64

struct refs {
	struct nl_cad_prog *p;     /* the program being compiled */
	const struct ps *cur;      /* its parser: pending definitions of this source */
	struct nl_cad_name *names; /* malloc'd, names[i].s malloc'd */
	uint32_t n, cap;
	uint32_t busy[REFS_MAX_DEPTH][2]; /* (def, slot) being followed */
	uint32_t depth;
	bool fail;
};

static void refs_node(struct refs *r, const struct ps *tps, uint32_t node, uint32_t cur);

static void
refs_add(struct refs *r, const char *s, uint32_t len, const char *s2, uint32_t len2)
{
	uint32_t tl = len + (s2 != NULL ? 1 + len2 : 0);

	if (r->fail)
		return;
	for (uint32_t i = 0; i < r->n; i++)
		if (r->names[i].len == tl && strncasecmp(r->names[i].s, s, len) == 0 &&
		    (s2 == NULL || strncasecmp(r->names[i].s + len + 1, s2, len2) == 0))
			return;
	char *c = malloc(tl + 1);

	if (c == NULL || grow((void **)&r->names, &r->cap, r->n + 1, sizeof(*r->names))) {
		free(c);
		r->fail = true;
		return;
	}
	memcpy(c, s, len);
	if (s2 != NULL) {
		c[len] = '.';
		memcpy(c + len + 1, s2, len2);
	}
	c[tl] = 0;
	r->names[r->n++] = (struct nl_cad_name){ c, tl, 0 };
}

/* The slot of name in definition d when d defines it (code or pending), else -1. */
static int
refs_defined(const struct refs *r, uint32_t d, const char *name, uint32_t len)
{
	const struct nl_cad_def *df = &r->p->defs[d];

	for (uint32_t i = 0; i < df->n; i++)
		if ((df->code[i] != UINT32_MAX || find_pending(r->cur, d, i) != NULL) &&
		    nl_cad_name_eq(df->names[i].s, df->names[i].len, name, len))
			return (int)i;
	return -1;
}

/* The definition of the record literal attribute (d, slot) holds, or -1. */
static int32_t
refs_record_of(const struct refs *r, uint32_t d, uint32_t slot)
{
	const struct pending *pe = find_pending(r->cur, d, slot);

	if (pe != NULL) {
		uint32_t m = strip(r->cur, pe->node);

		return r->cur->nodes[m].kind == A_RECORD ? (int32_t)r->cur->nodes[m].def : -1;
	}
	uint32_t code = r->p->defs[d].code[slot];

	if (code != UINT32_MAX && r->p->ins[code + 1].op == NL_CAD_OP_RECORD &&
	    r->p->ins[code + 2].op == NL_CAD_OP_RET)
		return (int32_t)r->p->ins[code + 1].c;
	return -1;
}

/* Follow the expression of attribute (d, slot), looked up from record cur. */
static void
refs_attr(struct refs *r, uint32_t d, uint32_t slot, uint32_t cur)
{
	if (r->fail)
		return;
	for (uint32_t i = 0; i < r->depth; i++)
		if (r->busy[i][0] == d && r->busy[i][1] == slot) {
			r->fail = true; /* HTCondor: recursion until its depth limit, then failure */
			return;
		}
	if (r->depth == REFS_MAX_DEPTH) {
		r->fail = true;
		return;
	}
	r->busy[r->depth][0] = d;
	r->busy[r->depth][1] = slot;
	r->depth++;
	const struct pending *pe = find_pending(r->cur, d, slot);

	if (pe != NULL) {
		refs_node(r, r->cur, pe->node, cur);
	} else if (r->p->defs[d].text != NULL && r->p->defs[d].text[slot] != NULL) {
		/* compiled by an earlier source: read its text again, in a scratch program */
		const char *t = r->p->defs[d].text[slot];
		struct nl_cad_prog *sp = NULL;
		struct ps *tps = NULL;

		if (nl_cad_parse("", 0, &sp, NULL) != 0 ||
		    ps_init(&tps, sp, t, strlen(t), NULL) != 0) {
			r->fail = true;
		} else {
			next(tps);
			uint32_t e = parse_expr(tps);

			if (tps->rc == 0)
				refs_node(r, tps, e, cur);
			else
				r->fail = true;
		}
		if (tps != NULL)
			ps_finish(tps);
		nl_cad_prog_free(sp);
	}
	r->depth--;
}

/* Every attribute of definition d (a record met whole: self, parent, root, a literal). */
static void
refs_record(struct refs *r, uint32_t d, uint32_t cur)
{
	for (uint32_t i = 0; i < r->p->defs[d].n && !r->fail; i++)
		if (refs_defined(r, d, r->p->defs[d].names[i].s, r->p->defs[d].names[i].len) ==
		    (int)i)
			refs_attr(r, d, i, cur);
}

/* LookupInScope(name) from record `from`: follow it where defined, else note it. */
static void
refs_lookup(struct refs *r, uint32_t from, const char *name, uint32_t len)
{
	int sp = refs_defined(r, from, name, len) < 0 ? special_name(name, len) : SP_NONE;

	if (sp == SP_SELF) {
		refs_record(r, from, from);
		return;
	}
	if (sp == SP_ROOT || (sp == SP_PARENT && r->p->defs[from].parent >= 0)) {
		refs_record(r, sp == SP_ROOT ? 0 : (uint32_t)r->p->defs[from].parent, from);
		return;
	}
	if (sp == SP_TIME)
		return;
	for (int32_t d = (int32_t)from; d >= 0; d = r->p->defs[d].parent) {
		int s = refs_defined(r, (uint32_t)d, name, len);

		if (s >= 0) {
			refs_attr(r, (uint32_t)d, (uint32_t)s, (uint32_t)d);
			return;
		}
	}
	refs_add(r, name, len, NULL, 0);
}

static void
refs_node(struct refs *r, const struct ps *tps, uint32_t node, uint32_t cur)
{
	const struct ast *a = &tps->nodes[node];
	const uint32_t *k = tps->kids != NULL ? &tps->kids[a->kid0] : NULL;

	if (r->fail)
		return;
	switch (a->kind) {
	case A_CONST:
		return;
	case A_ATTR:
	case A_ABSATTR:
		refs_lookup(r, a->kind == A_ABSATTR ? 0 : cur, a->name, a->name_len);
		return;
	case A_SELECT: {
		const struct ast *b = &tps->nodes[strip(tps, k[0])];

		if (b->kind == A_ATTR && special_name(b->name, b->name_len) == SP_SELF &&
		    refs_defined(r, cur, b->name, b->name_len) < 0) {
			refs_lookup(r, cur, a->name, a->name_len); /* MY.x */
			return;
		}
		if (b->kind == A_ATTR) {
			for (int32_t d = (int32_t)cur; d >= 0; d = r->p->defs[d].parent) {
				int s = refs_defined(r, (uint32_t)d, b->name, b->name_len);

				if (s < 0)
					continue;
				int32_t rd = refs_record_of(r, (uint32_t)d, (uint32_t)s);

				if (rd < 0)
					r->fail = true; /* not a record: HTCondor fails the search */
				else
					refs_lookup(r, (uint32_t)rd, a->name, a->name_len);
				return;
			}
			/* X undefined: the reference is "X.y" */
			refs_add(r, b->name, b->name_len, a->name, a->name_len);
			return;
		}
		refs_node(r, tps, k[0], cur);
		return;
	}
	case A_RECORD: {
		const struct nl_cad_def *d = &tps->p->defs[a->def];

		for (uint32_t i = 0; i < d->n && !r->fail; i++) {
			const struct pending *pe = find_pending(tps, a->def, i);

			if (pe != NULL)
				refs_node(r, tps, pe->node, cur);
		}
		return;
	}
	default:
		for (uint32_t i = 0; i < a->n_kids; i++)
			refs_node(r, tps, k[i], cur);
		return;
	}
}

/* Case-insensitive order of two names (CaseIgnLTStr: strcasecmp). */
static int
refs_cmp(const void *x, const void *y)
{
	const struct nl_cad_name *a = x, *b = y;

	return strcasecmp(a->s, b->s);
}

/*
 * unresolved(attr [, pattern]) at compile time: pushes the value (1 argument) or the list of
 * names for the run-time pattern match (2 arguments). Returns false when nothing was pushed
 * (the caller then compiles the call on: the pattern and NL_CAD_F_UNRESOLVED).
 */
static struct nl_cad_val
unresolved_attr(struct ps *ps, const struct ast *call, const uint32_t *k, uint32_t def)
{
	const struct ast *a = &ps->nodes[k[0]];
	struct refs r = { .p = ps->p, .cur = ps };
	struct nl_cad_val v = NL_CAD_UNDEFV;

	if (a->kind != A_ATTR && a->kind != A_ABSATTR)
		return NL_CAD_ERRV;
	uint32_t from = a->kind == A_ABSATTR ? 0 : def;
	int32_t d;
	int s = -1;

	for (d = (int32_t)from; d >= 0; d = ps->p->defs[d].parent)
		if ((s = refs_defined(&r, (uint32_t)d, a->name, a->name_len)) >= 0)
			break;
	if (d < 0)
		return v; /* no such attribute: undefined */
	refs_attr(&r, (uint32_t)d, (uint32_t)s, (uint32_t)d);
	if (!r.fail && r.n > 1)
		qsort(r.names, r.n, sizeof(*r.names), refs_cmp);
	/* the text (1 argument) or the list of names (2), "TARGET." dropped */
	size_t tl = 0;
	struct nl_cad_val *items = NULL;
	uint32_t alloc_n = r.n;

	if (r.fail)
		r.n = 0;
	if (call->n_kids == 2 && r.n > 0) {
		items = nl_cad_chunk_alloc(&ps->p->arena, &ps->p->arena_cur, r.n * sizeof(*items));
		if (items == NULL)
			r.fail = true;
	}
	for (uint32_t i = 0; i < r.n; i++)
		tl += r.names[i].len + 1;
	char *t = nl_cad_chunk_alloc(&ps->p->arena, &ps->p->arena_cur, tl + 1);
	size_t o = 0;

	if (t != NULL) {
		for (uint32_t i = 0; i < r.n; i++) {
			const char *nm = r.names[i].s;
			size_t len = r.names[i].len;

			if (len >= 7 && strncasecmp(nm, "target.", 7) == 0) {
				nm += 7;
				len -= 7;
			}
			if (items != NULL)
				items[i] = nl_cad_str(t + o, (uint32_t)len);
			else if (i > 0)
				t[o++] = ',';
			memcpy(t + o, nm, len);
			o += len;
			if (items != NULL)
				t[o++] = 0;
		}
		t[o] = 0;
	}
	for (uint32_t i = 0; i < alloc_n; i++)
		free((void *)(uintptr_t)r.names[i].s);
	free(r.names);
	if (t == NULL || (call->n_kids == 2 && r.n > 0 && items == NULL))
		return NL_CAD_ERRV;
	if (call->n_kids == 2)
		return nl_cad_list(items, r.n);
	return nl_cad_str(t, (uint32_t)o);
}

/* A regex built-in with a constant pattern (and constant or no options): compile the
 * pattern once, into the program. Returns 1 + its index, 0 when not applicable. */
static uint16_t
regex_site(struct ps *ps, const struct ast *a, const uint32_t *k)
{
	int oa = nl_cad_rx_opt_arg((int)a->def, a->n_kids);
	struct nl_cad_prog *p = ps->p;

	if (oa == -2 || !is_const_node(ps, k[0]))
		return 0;
	const struct nl_cad_val *pat = &ps->nodes[strip(ps, k[0])].val;
	const struct nl_cad_val *opt = oa >= 0 ? &ps->nodes[strip(ps, k[oa])].val : NULL;

	if (pat->type != NL_CAD_STRING || (oa >= 0 && (!is_const_node(ps, k[oa]) ||
						       opt->type != NL_CAD_STRING)))
		return 0;
	if (p->n_rx >= UINT16_MAX - 1 ||
	    grow((void **)&p->rx, &p->cap_rx, p->n_rx + 1, sizeof(*p->rx)))
		return 0;
	void *re = nl_cad_rx_compile(pat->u.s, (uint32_t)pat->aux, opt ? opt->u.s : "",
				     opt ? (uint32_t)opt->aux : 0);

	if (re == NULL)
		return 0; /* invalid: evaluation compiles it again and yields error */
	p->rx[p->n_rx++] = re;
	return (uint16_t)p->n_rx;
}

/* Resolve a bare name from definition def outward; external root slot when not found. */
static void
compile_ref(struct ps *ps, const struct ast *a, uint32_t def, bool absolute)
{
	struct nl_cad_prog *p = ps->p;
	uint32_t h = nl_cad_hash(a->name, a->name_len);
	uint32_t depth = 0;
	int32_t d = absolute ? 0 : (int32_t)def;

	for (; d >= 0; d = p->defs[d].parent, depth++) {
		const struct nl_cad_def *df = &p->defs[d];

		for (uint32_t i = 0; i < df->n; i++) {
			if (df->names[i].hash != h ||
			    !nl_cad_name_eq(df->names[i].s, df->names[i].len, a->name, a->name_len))
				continue;
			if (d == 0)
				emit(ps, NL_CAD_OP_ROOTREF, 0, 0, i, 1);
			else if (depth > 255)
				fail_at(ps, -E2BIG, a->line, a->col, "scope too deep");
			else
				emit(ps, NL_CAD_OP_LEX, (uint8_t)depth, 0, i, 1);
			return;
		}
	}
	int s = def_slot(p, 0, a->name, a->name_len, true);

	if (s < 0) {
		fail_at(ps, s, a->line, a->col,
			s == -E2BIG ? "more than %u attributes at the root (external names included)"
				    : "out of memory", NL_CAD_MAX_ROOT_ATTRS);
		return;
	}
	emit(ps, NL_CAD_OP_ROOTREF, 0, 0, (uint32_t)s, 1);
}

static int
root_slot_of_string(struct ps *ps, const struct ast *a)
{
	/* evaluateList's variable and attribute names are root slots */
	int s = def_slot(ps->p, 0, a->val.u.s, (uint32_t)a->val.aux, true);

	if (s < 0)
		fail_at(ps, s, a->line, a->col,
			s == -E2BIG ? "more than %u attributes at the root (external names included)"
				    : "out of memory", NL_CAD_MAX_ROOT_ATTRS);
	return s;
}

static void
compile(struct ps *ps, uint32_t n, uint32_t def)
{
	if (ps->rc != 0)
		return;
	const struct ast *a = &ps->nodes[n];
	const uint32_t *k = ps->kids != NULL ? &ps->kids[a->kid0] : NULL;

	switch (a->kind) {
	case A_CONST:
		emit(ps, NL_CAD_OP_CONST, 0, 0, add_const(ps, &a->val), 1);
		break;
	case A_ATTR:
	case A_ABSATTR: {
		/* HTCondor (ClassAd::LookupInScope): self, my, parent, root, toplevel and
		 * currentTime not defined by the record a name is looked up in (the innermost
		 * one, the root for .name) are that record, its parent, the root record and
		 * time(); defined there, they are its attributes */
		uint32_t at = a->kind == A_ABSATTR ? 0 : def;
		int sp = special_name(a->name, a->name_len);

		if (sp != SP_NONE && !def_defines(ps, at, a->name, a->name_len)) {
			if (sp == SP_SELF && at == 0)
				sp = SP_ROOT;
			if (sp == SP_PARENT && at == 0) {
				emit(ps, NL_CAD_OP_CONST, 0, 0, add_const(ps, &NL_CAD_UNDEFV), 1);
				break;
			}
			if (sp == SP_TIME) {
				emit(ps, NL_CAD_OP_CALL, NL_CAD_F_TIME, 0, 0, 1);
				break;
			}
			emit(ps, sp == SP_SELF ? NL_CAD_OP_SELF : sp == SP_PARENT ? NL_CAD_OP_PARENT
				 : NL_CAD_OP_ROOT, 0, 0, 0, 1);
			break;
		}
		compile_ref(ps, a, def, a->kind == A_ABSATTR);
		break;
	}
	case A_PAREN:
		compile(ps, k[0], def);
		break;
	case A_SELECT: {
		const struct ast *b = &ps->nodes[k[0]];

		/* MY.x: x of the record itself (HTCondor: MY is self unless the record defines
		 * it, and a select looks outward from there), which is the bare x. TARGET is
		 * an ordinary name: undefined in a single ad, the bound record in a
		 * matchmaker's (nl_cad_parse_match()) */
		if (b->kind == A_ATTR && nl_cad_name_eq(b->name, b->name_len, "my", 2) &&
		    !def_defines(ps, def, b->name, b->name_len) &&
		    special_name(a->name, a->name_len) == SP_NONE) {
			struct ast r = *a;

			r.kind = A_ATTR;
			compile_ref(ps, &r, def, false);
			break;
		}
		compile(ps, k[0], def);
		uint32_t si = add_sel(ps, a->name, a->name_len);
		struct nl_cad_ins *last = ps->rc == 0 ? &ps->p->ins[ps->p->n_ins - 1] : NULL;

		/* peephole: root attribute then select (PLUS_CANDIDATE_NODE.name) */
		if (last != NULL && last->op == NL_CAD_OP_ROOTREF && si <= UINT16_MAX) {
			last->op = NL_CAD_OP_ROOTSEL;
			last->b = (uint16_t)si;
			break;
		}
		emit(ps, NL_CAD_OP_SELECT, 0, 0, si, 0);
		break;
	}
	case A_INDEX:
		compile(ps, k[0], def);
		compile(ps, k[1], def);
		emit(ps, NL_CAD_OP_INDEX, 0, 0, 0, -1);
		break;
	case A_UN:
		compile(ps, k[0], def);
		emit(ps, NL_CAD_OP_UN, a->op, 0, 0, 0);
		break;
	case A_BIN: {
		compile(ps, k[0], def);
		uint32_t before = ps->p->n_ins;

		compile(ps, k[1], def);
		struct nl_cad_ins *last = ps->rc == 0 ? &ps->p->ins[ps->p->n_ins - 1] : NULL;

		/* peephole: a constant right operand (x <= 0.3) */
		if (last != NULL && ps->p->n_ins == before + 1 && last->op == NL_CAD_OP_CONST) {
			last->op = NL_CAD_OP_BINK;
			last->a = a->op;
			ps->cur_sp--;
			break;
		}
		emit(ps, NL_CAD_OP_BIN, a->op, 0, 0, -1);
		break;
	}
	case A_AND:
	case A_OR: {
		compile(ps, k[0], def);
		uint32_t j = emit(ps, a->kind == A_AND ? NL_CAD_OP_ANDL : NL_CAD_OP_ORL, 0, 0, 0, 0);

		compile(ps, k[1], def);
		emit(ps, a->kind == A_AND ? NL_CAD_OP_ANDR : NL_CAD_OP_ORR, 0, 0, 0, -1);
		if (ps->rc == 0)
			ps->p->ins[j].c = ps->p->n_ins;
		break;
	}
	case A_COND:
	case A_CALL:
		if (a->kind == A_CALL && a->def == NL_CAD_F_BADCALL) {
			/* HTCondor: an unknown function, or a wrong argument count, is error */
			emit(ps, NL_CAD_OP_CONST, 0, 0, add_const(ps, &NL_CAD_ERRV), 1);
			return;
		}
		if (a->kind == A_CALL && a->def != NL_CAD_F_IFTHENELSE) {
			if (a->def == NL_CAD_F_EVALUATELIST) {
				const struct ast *v = &ps->nodes[k[1]], *f = &ps->nodes[k[2]];

				if (v->kind != A_CONST || v->val.type != NL_CAD_STRING ||
				    f->kind != A_CONST || f->val.type != NL_CAD_STRING) {
					fail_at(ps, -EINVAL, a->line, a->col,
						"evaluateList() needs string literals as its 2nd and 3rd arguments");
					return;
				}
				int vs = root_slot_of_string(ps, v), fs = root_slot_of_string(ps, f);

				if (ps->rc != 0)
					return;
				compile(ps, k[0], def);
				emit(ps, NL_CAD_OP_EVLIST, 0, (uint16_t)vs, (uint32_t)fs, 0);
				return;
			}
			if (a->def == NL_CAD_F_EVALINEACH || a->def == NL_CAD_F_COUNTMATCHES) {
				/* the expression is evaluated in each record's scope at run time:
				 * pass its text (evaluated like eval()) and the list */
				const char *t = unparse_text(ps, k[0]);
				struct nl_cad_val v = t != NULL ? nl_cad_str(t, (uint32_t)strlen(t))
							      : (struct nl_cad_val){ .type = NL_CAD_ERROR };

				emit(ps, NL_CAD_OP_CONST, 0, 0, add_const(ps, &v), 1);
				compile(ps, k[1], def);
				emit(ps, NL_CAD_OP_CALL, (uint8_t)a->def, 0, 2, -1);
				return;
			}
			if (a->def == NL_CAD_F_UNPARSE) {
				struct nl_cad_val v = unparse_attr(ps, k[0], def);

				emit(ps, NL_CAD_OP_CONST, 0, 0, add_const(ps, &v), 1);
				return;
			}
			if (a->def == NL_CAD_F_UNRESOLVED) {
				struct nl_cad_val v = unresolved_attr(ps, a, k, def);

				emit(ps, NL_CAD_OP_CONST, 0, 0, add_const(ps, &v), 1);
				if (a->n_kids == 1 || v.type != NL_CAD_LIST)
					return;
				/* the pattern is matched when evaluated */
				compile(ps, k[1], def);
				emit(ps, NL_CAD_OP_CALL, NL_CAD_F_UNRESOLVED, 0, 2, -1);
				return;
			}
			uint16_t site = regex_site(ps, a, k);

			for (uint32_t i = 0; i < a->n_kids; i++)
				compile(ps, k[i], def);
			emit(ps, NL_CAD_OP_CALL, (uint8_t)a->def, site, a->n_kids,
			     1 - (int)a->n_kids);
			return;
		}
		{
			/* cond ? x : y, ifThenElse(cond, x, y) */
			compile(ps, k[0], def);
			uint32_t jc = emit(ps, NL_CAD_OP_COND, 0, 0, 0, -1);
			uint32_t sp = ps->cur_sp;

			compile(ps, k[1], def);
			uint32_t je = emit(ps, NL_CAD_OP_JMP, 0, 0, 0, 0);

			ps->cur_sp = sp;
			if (ps->rc == 0)
				ps->p->ins[jc].c = ps->p->n_ins;
			compile(ps, k[2], def);
			if (ps->rc == 0)
				ps->p->ins[je].c = ps->p->n_ins;
			/* the COND itself may push its verdict (undefined/error) */
			if (ps->max_sp < sp + 1)
				ps->max_sp = sp + 1;
		}
		break;
	case A_ELVIS: {
		compile(ps, k[0], def);
		uint32_t j = emit(ps, NL_CAD_OP_ELVIS, 0, 0, 0, -1);

		compile(ps, k[1], def);
		if (ps->rc == 0)
			ps->p->ins[j].c = ps->p->n_ins;
		break;
	}
	case A_LIST: {
		bool all_const = true;

		for (uint32_t i = 0; i < a->n_kids; i++)
			all_const = all_const && is_const_node(ps, k[i]);
		if (all_const) {
			struct nl_cad_val *items = NULL;

			if (a->n_kids > 0) {
				items = nl_cad_chunk_alloc(&ps->p->arena, &ps->p->arena_cur,
							   a->n_kids * sizeof(*items));
				if (items == NULL) {
					fail_at(ps, -ENOMEM, a->line, a->col, "out of memory");
					return;
				}
				for (uint32_t i = 0; i < a->n_kids; i++)
					items[i] = ps->nodes[strip(ps, k[i])].val;
			}
			struct nl_cad_val v = nl_cad_list(items, a->n_kids);

			emit(ps, NL_CAD_OP_CONST, 0, 0, add_const(ps, &v), 1);
			return;
		}
		/* the list value keeps the literal's text: HTCondor prints a list value as its
		 * elements' expressions ({1, 2+3} prints { 1,2 + 3 }) */
		const char *lt = list_text(ps, n);
		struct nl_cad_val ltv = lt != NULL ? nl_cad_str(lt, (uint32_t)strlen(lt)) : NL_CAD_ERRV;
		uint32_t ltc = add_const(ps, &ltv);
		uint16_t ltb = lt != NULL && ltc < UINT16_MAX ? (uint16_t)(ltc + 1) : 0;

		if (a->n_kids <= LIST_CHUNK) {
			for (uint32_t i = 0; i < a->n_kids; i++)
				compile(ps, k[i], def);
			emit(ps, NL_CAD_OP_LIST, 0, ltb, a->n_kids, 1 - (int)a->n_kids);
			break;
		}
		/* a long list is built LIST_CHUNK elements at a time, then the chunks are joined,
		 * so it needs at most LIST_CHUNK + n / LIST_CHUNK stack values (a 1 MiB source has
		 * fewer than 2^19 elements: < 2400 values, under the 4096 of a context's stack) */
		uint32_t n_chunks = 0;

		for (uint32_t i = 0; i < a->n_kids; i += LIST_CHUNK, n_chunks++) {
			uint32_t m = a->n_kids - i < LIST_CHUNK ? a->n_kids - i : LIST_CHUNK;

			for (uint32_t j = 0; j < m; j++)
				compile(ps, k[i + j], def);
			emit(ps, NL_CAD_OP_LIST, 0, 0, m, 1 - (int)m);
		}
		emit(ps, NL_CAD_OP_LIST, 1, ltb, n_chunks, 1 - (int)n_chunks);
		break;
	}
	case A_RECORD:
		emit(ps, NL_CAD_OP_RECORD, 0, 0, a->def, 1);
		break;
	}
}

/* Compile one attribute's expression as a block: ENTER maxdepth, code, RET. */
static uint32_t
compile_block(struct ps *ps, uint32_t n, uint32_t def)
{
	uint32_t start = emit(ps, NL_CAD_OP_ENTER, 0, 0, 0, 0);

	ps->cur_sp = 0;
	ps->max_sp = 0;
	compile(ps, n, def);
	emit(ps, NL_CAD_OP_RET, 0, 0, 0, 0);
	if (ps->rc == 0)
		ps->p->ins[start].c = ps->max_sp + 1;
	return start;
}

/*
 * Top-level && operands of expression n, left to right, into out[]. Iterative with an explicit
 * stack: every node of the expression is pushed at most once, so stack[] and out[] of
 * ps->n_nodes entries can never overflow, whatever the shape of the && tree (a left-leaning
 * chain a && b && c parses as ((a && b) && c)). Returns the number of operands.
 */
static uint32_t
collect_clauses(const struct ps *ps, uint32_t n, uint32_t *out, uint32_t *stack)
{
	uint32_t nout = 0, ns = 0;

	stack[ns++] = n;
	while (ns > 0) {
		uint32_t m = stack[--ns];

		if (ps->nodes[strip(ps, m)].kind == A_AND)
			m = strip(ps, m);
		const struct ast *a = &ps->nodes[m];

		if (a->kind == A_AND) {
			/* right pushed first: the left operand comes out first */
			stack[ns++] = ps->kids[a->kid0 + 1];
			stack[ns++] = ps->kids[a->kid0];
		} else {
			out[nout++] = (uint32_t)(a - ps->nodes);
		}
	}
	return nout;
}

static void
compile_pending(struct ps *ps)
{
	struct nl_cad_prog *p = ps->p;
	/* scratch of collect_clauses(), shared by all root attributes (one per attribute made
	 * compiling a 65535-attribute root quadratic) */
	uint32_t *cl = malloc((2 * (size_t)ps->n_nodes + 1) * sizeof(*cl));

	if (cl == NULL) {
		fail_at(ps, -ENOMEM, 1, 1, "out of memory");
		return;
	}
	for (uint32_t i = 0; i < ps->n_pend && ps->rc == 0; i++) {
		struct pending *pe = &ps->pend[i];
		uint32_t start = compile_block(ps, pe->node, pe->def);

		if (ps->rc != 0)
			break;
		p->defs[pe->def].code[pe->slot] = start;
		p->defs[pe->def].text[pe->slot] = unparse_text(ps, pe->node);
		p->defs[pe->def].text_e[pe->slot] =
			has_real(ps, pe->node) ? unparse_text_as(ps, pe->node, true) : NULL;
		if (pe->def != 0)
			continue;
		/* root attribute: its top-level && operands, for nl_cad_explain() */
		uint32_t ncl = collect_clauses(ps, pe->node, cl, cl + ps->n_nodes);
		struct nl_cad_clause *c = nl_cad_chunk_alloc(&p->arena, &p->arena_cur,
							    ncl * sizeof(*c));

		if (c == NULL) {
			fail_at(ps, -ENOMEM, 1, 1, "out of memory");
			break;
		}
		for (uint32_t j = 0; j < ncl; j++) {
			const struct ast *a = &ps->nodes[cl[j]];

			c[j].code = ncl == 1 ? start : compile_block(ps, cl[j], 0);
			c[j].line = a->line;
			c[j].col = a->col;
			c[j].text_off = ps->src_base + a->off;
			c[j].text_len = a->end > a->off ? a->end - a->off : 0;
		}
		p->defs[0].clauses[pe->slot] = c;
		p->defs[0].n_clauses[pe->slot] = ncl;
	}
	free(cl);
}

static int
ps_init(struct ps **out, struct nl_cad_prog *p, const char *src, size_t len,
	struct nl_cad_err *err)
{
	struct ps *ps;

	if (err != NULL) {
		err->line = 1;
		err->col = 1;
		err->msg[0] = 0;
	}
	if (len > NL_CAD_MAX_SRC_BYTES) {
		if (err != NULL)
			snprintf(err->msg, sizeof(err->msg), "input larger than %u bytes",
				 NL_CAD_MAX_SRC_BYTES);
		return -E2BIG;
	}
	ps = calloc(1, sizeof(*ps) + sizeof(struct defstack));
	if (ps == NULL)
		return -ENOMEM;
	/* keep a copy of the text: clause texts point into it */
	if (grow((void **)&p->src, &p->src_cap, p->src_len + (uint32_t)len + 1, 1)) {
		free(ps);
		return -ENOMEM;
	}
	ps->src_base = p->src_len;
	memcpy(p->src + p->src_len, src, len);
	p->src_len += (uint32_t)len;
	p->src[p->src_len] = 0;
	ps->src = p->src + ps->src_base;
	ps->len = (uint32_t)len;
	ps->line = 1;
	ps->col = 1;
	ps->p = p;
	ps->err = err;
	*out = ps;
	return 0;
}

static int
ps_finish(struct ps *ps)
{
	int rc = ps->rc;

	free(ps->nodes);
	free(ps->kids);
	free(ps->pend);
	free(ps->pmap);
	free(ps);
	return rc;
}

int
nl_cad_parse_flags(const char *src, size_t len, uint32_t flags, struct nl_cad_prog **out,
		   struct nl_cad_err *err)
{
	struct nl_cad_prog *p = calloc(1, sizeof(*p));
	struct ps *ps;
	int rc;

	*out = NULL;
	if (p == NULL)
		return -ENOMEM;
	if (new_def(p, -1) < 0) {
		nl_cad_prog_free(p);
		return -ENOMEM;
	}
	p->flags = flags;
	rc = ps_init(&ps, p, src, len, err);
	if (rc < 0) {
		nl_cad_prog_free(p);
		return rc;
	}
	next(ps);
	uint32_t md = 0;

	if (ps->tk.t == T_LBRACK) {
		/* a bracketed root record */
		next(ps);
		parse_attrs(ps, 0, T_RBRACK, &md);
		expect(ps, T_RBRACK, "']'");
	} else {
		parse_attrs(ps, 0, T_EOF, &md);
	}
	if (ps->rc == 0 && ps->tk.t != T_EOF)
		FAIL(ps, "unexpected text after the record");
	compile_pending(ps);
	rc = ps_finish(ps);
	if (rc < 0) {
		nl_cad_prog_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int
nl_cad_parse(const char *src, size_t len, struct nl_cad_prog **out, struct nl_cad_err *err)
{
	return nl_cad_parse_flags(src, len, 0, out, err);
}

int
nl_cad_parse_match(const char *src, size_t len, struct nl_cad_prog **out,
		   struct nl_cad_err *err)
{
	/* TARGET is an ordinary name, external unless the ad defines it: the matchmaker binds
	 * it to the other record (in a single ad it stays undefined) */
	return nl_cad_parse_flags(src, len, 0, out, err);
}

int
nl_cad_parse_expr(struct nl_cad_prog *p, const char *src, size_t len, struct nl_cad_err *err)
{
	struct ps *ps;
	int rc = ps_init(&ps, p, src, len, err);
	char anon[32];

	if (rc < 0)
		return rc;
	next(ps);
	uint32_t e = parse_expr(ps);

	if (ps->rc == 0 && ps->tk.t != T_EOF)
		FAIL(ps, "unexpected text after the expression");
	int slot = -1;

	if (ps->rc == 0) {
		/* anonymous root attribute: a name no source can spell */
		snprintf(anon, sizeof(anon), " expr%u", p->defs[0].n);
		slot = def_slot(p, 0, anon, (uint32_t)strlen(anon), true);
		if (slot == -E2BIG)
			fail_at(ps, -E2BIG, 1, 1, "more than %u attributes at the root (the "
				"expression needs one of its own)", NL_CAD_MAX_ROOT_ATTRS);
		else if (slot < 0 || add_pending(ps, 0, (uint32_t)slot, e, false) < 0)
			fail_at(ps, -ENOMEM, 1, 1, "out of memory");
	}
	compile_pending(ps);
	rc = ps_finish(ps);
	return rc < 0 ? rc : slot;
}

int
nl_cad_unparse(const char *src, size_t len, char *buf, size_t n, struct nl_cad_err *err)
{
	struct nl_cad_prog *p = NULL;
	struct ps *ps;
	int rc = nl_cad_parse("", 0, &p, err);

	if (rc < 0)
		return rc;
	rc = ps_init(&ps, p, src, len, err);
	if (rc < 0) {
		nl_cad_prog_free(p);
		return rc;
	}
	next(ps);
	uint32_t e = parse_expr(ps);

	if (ps->rc == 0 && ps->tk.t != T_EOF)
		FAIL(ps, "unexpected text after the expression");
	if (ps->rc == 0) {
		struct ubuf u = { .buf = buf, .n = n };

		unparse(ps, e, &u);
		if (n > 0)
			buf[u.len < n ? u.len : n - 1] = 0;
		rc = u.len > INT32_MAX ? -E2BIG : (int)u.len;
	}
	int prc = ps_finish(ps);

	nl_cad_prog_free(p);
	return prc < 0 ? prc : rc;
}

void
nl_cad_prog_free(struct nl_cad_prog *p)
{
	if (p == NULL)
		return;
	for (uint32_t i = 0; i < p->n_defs; i++) {
		free(p->defs[i].names);
		free(p->defs[i].code);
		free(p->defs[i].text);
		free(p->defs[i].text_e);
		free(p->defs[i].clauses);
		free(p->defs[i].n_clauses);
		free(p->defs[i].hidx);
	}
	free(p->defs);
	free(p->ins);
	free(p->consts);
	free(p->sel);
	for (uint32_t i = 0; i < p->n_rx; i++)
		nl_cad_rx_free(p->rx[i]);
	free(p->rx);
	free(p->src);
	nl_cad_chunk_free(p->arena);
	free(p);
}

int
nl_cad_slot(const struct nl_cad_prog *p, const char *name)
{
	const struct nl_cad_def *d = &p->defs[0];
	uint32_t len = (uint32_t)strlen(name), h = nl_cad_hash(name, len);

	for (uint32_t i = 0; i < d->n; i++)
		if (d->names[i].hash == h && nl_cad_name_eq(d->names[i].s, d->names[i].len, name, len))
			return (int)i;
	return -ENOENT;
}

unsigned int
nl_cad_n_slots(const struct nl_cad_prog *p)
{
	return p->defs[0].n;
}

const char *
nl_cad_slot_name(const struct nl_cad_prog *p, unsigned int slot)
{
	if (slot >= p->defs[0].n)
		return "";
	const char *s = p->defs[0].names[slot].s;

	return s[0] == ' ' ? "" : s;
}

bool
nl_cad_slot_defined(const struct nl_cad_prog *p, unsigned int slot)
{
	return slot < p->defs[0].n && p->defs[0].code[slot] != UINT32_MAX;
}
