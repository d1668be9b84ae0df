/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requirements/Rank compiled once and machine records (nl_match_cad.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nl_classad.h"
#include "nl_match_cad.h"

struct nl_match_expr {
	struct nl_cad_prog *prog;
	struct nl_cad_ctx *ctx;
	int req_slot;            /* -1: Requirements = true */
	int rank_slot;           /* -1: no Rank */
	int target_slot;         /* external TARGET, or -1 */
	unsigned int n_ext;
	int ext_slot[NL_CAD_SCHEMA_MAX * 2];
	char *ext_name[NL_CAD_SCHEMA_MAX * 2];
};

struct nl_match_mad {
	struct nl_cad_schema sc;
	struct nl_cad_rec rec;
	struct nl_cad_val vals[NL_CAD_SCHEMA_MAX];
	char *names[NL_CAD_SCHEMA_MAX];
	char *strs[NL_CAD_SCHEMA_MAX];
};

static void
set_err(char *err, size_t errlen, const char *what, const struct nl_cad_err *e)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: line %u col %u: %s", what, e->line, e->col, e->msg);
}

void
nl_match_expr_free(struct nl_match_expr *x)
{
	if (x == NULL)
		return;
	nl_cad_ctx_free(x->ctx);
	nl_cad_prog_free(x->prog);
	free(x);
}

int
nl_match_expr_compile(const char *req, size_t req_len, const char *rank, size_t rank_len,
		      struct nl_match_expr **out, char *err, size_t errlen)
{
	struct nl_match_expr *x = calloc(1, sizeof(*x));
	struct nl_cad_err e = { 0 };
	int rc;

	if (x == NULL)
		return -ENOMEM;
	x->req_slot = x->rank_slot = x->target_slot = -1;
	rc = nl_cad_parse_match("", 0, &x->prog, &e);
	if (rc != 0) {
		set_err(err, errlen, "match", &e);
		free(x);
		return rc;
	}
	if (req_len > 0) {
		rc = nl_cad_parse_expr(x->prog, req, req_len, &e);
		if (rc < 0) {
			set_err(err, errlen, "Requirements", &e);
			nl_match_expr_free(x);
			return rc;
		}
		x->req_slot = rc;
	}
	if (rank_len > 0) {
		rc = nl_cad_parse_expr(x->prog, rank, rank_len, &e);
		if (rc < 0) {
			set_err(err, errlen, "Rank", &e);
			nl_match_expr_free(x);
			return rc == -EINVAL ? -EDOM : rc;
		}
		x->rank_slot = rc;
	}
	/* External names: TARGET is the machine record; any other is looked up in it. */
	for (unsigned int s = 0; s < nl_cad_n_slots(x->prog); s++) {
		const char *nm = nl_cad_slot_name(x->prog, s);

		if (nl_cad_slot_defined(x->prog, s) || nm[0] == '\0')
			continue;
		if (strcasecmp(nm, "TARGET") == 0) {
			x->target_slot = (int)s;
			continue;
		}
		if (x->n_ext == sizeof(x->ext_slot) / sizeof(x->ext_slot[0])) {
			if (err != NULL && errlen > 0)
				snprintf(err, errlen, "too many attribute names (at most %zu)",
					 sizeof(x->ext_slot) / sizeof(x->ext_slot[0]));
			nl_match_expr_free(x);
			return -E2BIG;
		}
		x->ext_slot[x->n_ext] = (int)s;
		x->ext_name[x->n_ext++] = (char *)nm;
	}
	rc = nl_cad_ctx_create(x->prog, &x->ctx);
	if (rc != 0) {
		nl_match_expr_free(x);
		return rc;
	}
	*out = x;
	return 0;
}

bool
nl_match_expr_has_rank(const struct nl_match_expr *x)
{
	return x->rank_slot >= 0;
}

void
nl_match_mad_free(struct nl_match_mad *ad)
{
	if (ad == NULL)
		return;
	for (unsigned int i = 0; i < ad->sc.n; i++) {
		free(ad->names[i]);
		free(ad->strs[i]);
	}
	free(ad);
}

int
nl_match_mad_parse(const char *text, size_t len, struct nl_match_mad **out, char *err,
		   size_t errlen)
{
	struct nl_cad_err e = { 0 };
	struct nl_cad_prog *p = NULL;
	struct nl_cad_ctx *c = NULL;
	struct nl_match_mad *ad;
	unsigned int n = 0;
	int rc;

	rc = nl_cad_parse(text, len, &p, &e);
	if (rc != 0) {
		set_err(err, errlen, "machine record", &e);
		return rc;
	}
	ad = calloc(1, sizeof(*ad));
	rc = ad == NULL ? -ENOMEM : nl_cad_ctx_create(p, &c);
	for (unsigned int s = 0; rc == 0 && s < nl_cad_n_slots(p); s++) {
		const char *nm = nl_cad_slot_name(p, s);
		struct nl_cad_val v;

		if (!nl_cad_slot_defined(p, s) || nm[0] == '\0')
			continue;
		if (n == NL_CAD_SCHEMA_MAX) {
			if (err != NULL && errlen > 0)
				snprintf(err, errlen, "machine record: more than %u attributes",
					 NL_CAD_SCHEMA_MAX);
			rc = -E2BIG;
			break;
		}
		ad->names[n] = strdup(nm);
		if (ad->names[n] == NULL) {
			rc = -ENOMEM;
			break;
		}
		nl_cad_eval(c, (int)s, &v);
		switch (v.type) {
		case NL_CAD_BOOL:
		case NL_CAD_INT:
		case NL_CAD_REAL:
		case NL_CAD_ABSTIME:
		case NL_CAD_RELTIME:
			ad->vals[n] = v;
			break;
		case NL_CAD_STRING:
			ad->strs[n] = malloc((size_t)v.aux + 1);
			if (ad->strs[n] == NULL) {
				rc = -ENOMEM;
				break;
			}
			memcpy(ad->strs[n], v.u.s, (size_t)v.aux);
			ad->strs[n][v.aux] = '\0';
			ad->vals[n] = nl_cad_str(ad->strs[n], (uint32_t)v.aux);
			break;
		default:
			ad->vals[n] = nl_cad_undef();
			break;
		}
		n++;
		ad->sc.n = n; /* so that a failure frees what is there */
	}
	nl_cad_ctx_free(c);
	nl_cad_prog_free(p);
	if (rc != 0) {
		nl_match_mad_free(ad);
		return rc;
	}
	nl_cad_schema_init(&ad->sc, (const char *const *)ad->names, n);
	ad->rec.schema = &ad->sc;
	ad->rec.vals = ad->vals;
	*out = ad;
	return 0;
}

static const struct nl_cad_val *
mad_find(const struct nl_match_mad *ad, const char *name)
{
	if (ad == NULL)
		return NULL;
	for (unsigned int i = 0; i < ad->sc.n; i++)
		if (strcasecmp(ad->names[i], name) == 0)
			return &ad->vals[i];
	return NULL;
}

int
nl_match_mad_get(const struct nl_match_mad *ad, const char *name, char *buf, size_t n)
{
	const struct nl_cad_val *v = mad_find(ad, name);

	if (v == NULL)
		return snprintf(buf, n, "undefined");
	switch (v->type) {
	case NL_CAD_BOOL:
		return snprintf(buf, n, "%s", v->u.b ? "true" : "false");
	case NL_CAD_INT:
		return snprintf(buf, n, "%lld", (long long)v->u.i);
	case NL_CAD_REAL:
		return snprintf(buf, n, "%.16G", v->u.r);
	case NL_CAD_STRING:
		return snprintf(buf, n, "\"%s\"", v->u.s);
	default:
		return snprintf(buf, n, "undefined");
	}
}

int
nl_match_expr_eval(struct nl_match_expr *x, const struct nl_match_mad *ad, bool *ok, double *rank)
{
	struct nl_cad_val v, rec;

	if (x == NULL || ok == NULL || rank == NULL)
		return -EINVAL;
	if (x->target_slot >= 0) {
		if (ad != NULL) {
			rec = nl_cad_record(&ad->rec);
			nl_cad_bind(x->ctx, x->target_slot, &rec);
		} else {
			nl_cad_unbind(x->ctx, x->target_slot);
		}
	}
	for (unsigned int i = 0; i < x->n_ext; i++) {
		const struct nl_cad_val *a = mad_find(ad, x->ext_name[i]);

		if (a != NULL)
			nl_cad_bind(x->ctx, x->ext_slot[i], a);
		else
			nl_cad_unbind(x->ctx, x->ext_slot[i]);
	}
	*ok = true;
	if (x->req_slot >= 0) {
		nl_cad_eval(x->ctx, x->req_slot, &v);
		*ok = nl_cad_is_true(&v);
	}
	*rank = 0;
	if (x->rank_slot >= 0) {
		nl_cad_eval(x->ctx, x->rank_slot, &v);
		if (v.type == NL_CAD_INT)
			*rank = (double)v.u.i;
		else if (v.type == NL_CAD_REAL && isfinite(v.u.r))
			*rank = v.u.r;
		else if (v.type == NL_CAD_BOOL)
			*rank = v.u.b ? 1 : 0;
	}
	return 0;
}
