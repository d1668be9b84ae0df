/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the ClassAd parser and evaluator: parse the input as a record (and as an
 * expression), evaluate and explain every root attribute under a small budget, with the
 * candidate-node slot bound to a host record, and unparse every value; unparse the input as an
 * expression and check that the text parses back to the same text (the round trip). Must never
 * crash, hang or leak. Run by tests/classad/fuzz.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nl_classad.h"

static void
exercise(struct nl_cad_prog *p)
{
	static const char *const names[] = { "name", "isAlive", "loadavg", "nRunJobs", "jobs" };
	struct nl_cad_schema sc;
	struct nl_cad_val vals[5] = {
		nl_cad_str("n1", 2), nl_cad_bool(true), nl_cad_real(0.25), nl_cad_int(0),
		nl_cad_list(NULL, 0),
	};
	struct nl_cad_rec rec = { &sc, vals };
	struct nl_cad_val rv = nl_cad_record(&rec);
	struct nl_cad_ctx *c;
	char buf[256];

	nl_cad_schema_init(&sc, names, 5);
	if (nl_cad_ctx_create(p, &c) != 0)
		return;
	nl_cad_ctx_set_now(c, 1704067200);
	nl_cad_ctx_set_budget(c, 2000);
	nl_cad_bind(c, nl_cad_slot(p, "PLUS_CANDIDATE_NODE"), &rv);
	for (unsigned int s = 0; s < nl_cad_n_slots(p) && s < 64; s++) {
		struct nl_cad_val v;
		struct nl_cad_why why;

		nl_cad_eval(c, (int)s, &v);
		nl_cad_format(c, &v, buf, sizeof(buf));
		if (nl_cad_explain(c, (int)s, &why) == 0)
			nl_cad_format(c, &why.val, buf, sizeof(buf));
	}
	nl_cad_ctx_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nl_cad_prog *p = NULL;
	struct nl_cad_err e;

	if (nl_cad_parse((const char *)data, size, &p, &e) == 0) {
		exercise(p);
		nl_cad_prog_free(p);
	}
	if (nl_cad_parse("", 0, &p, &e) == 0) {
		if (nl_cad_parse_expr(p, (const char *)data, size, &e) >= 0)
			exercise(p);
		nl_cad_prog_free(p);
	}
	/* round trip: the unparsed text parses, and unparses to itself after one more pass
	 * (reals print with 16 digits, so the second text is the fixed point) */
	int n1 = nl_cad_unparse((const char *)data, size, NULL, 0, &e);

	if (n1 >= 0 && n1 < (1 << 20)) {
		char *t1 = malloc((size_t)n1 + 1), *t2 = malloc((size_t)n1 * 2 + 64);
		char *t3 = malloc((size_t)n1 * 2 + 64);

		if (t1 != NULL && t2 != NULL && t3 != NULL) {
			nl_cad_unparse((const char *)data, size, t1, (size_t)n1 + 1, &e);
			int n2 = nl_cad_unparse(t1, (size_t)n1, t2, (size_t)n1 * 2 + 64, &e);

			if (n2 < 0)
				__builtin_trap(); /* the unparser wrote text that does not parse */
			int n3 = nl_cad_unparse(t2, (size_t)n2, t3, (size_t)n1 * 2 + 64, &e);

			if (n3 != n2 || strcmp(t2, t3) != 0)
				__builtin_trap(); /* not a fixed point */
		}
		free(t1);
		free(t2);
		free(t3);
	}
	return 0;
}
