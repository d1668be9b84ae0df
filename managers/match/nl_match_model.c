/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matching in the model (nl_match_model.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nl_match_cad.h"
#include "nl_match_model.h"

static struct nl_match_tab *bound_tab;
static uint32_t bound_h[NL_MODEL_MAX_TCLASS + 1];

static bool
selects(const struct nl_model_mclass *mc, const struct nl_machine *mach, uint32_t id)
{
	if (mc->speed_ips > 0)
		return mach[id].speed_ips == mc->speed_ips;
	for (unsigned int r = 0; r < mc->n_range; r++)
		if (id >= mc->range[r][0] && id <= mc->range[r][1])
			return true;
	return false;
}

/* Machine id's record text: Machine and Mips unless a section gives them, then the selecting sections' attributes, a later
 * value replacing an earlier one (names compare as ClassAd names: case-insensitively). */
static int
record_text(const struct nl_model_cfg *m, const struct nl_machine *mach, uint32_t id, char *buf,
	    size_t cap)
{
	const struct nl_model_mattr *a[2 + NL_MODEL_MAX_MCLASS * NL_MODEL_MAX_MATTR];
	unsigned int n = 0;
	size_t len;
	bool has_m = false, has_mips = false;

	for (unsigned int c = 0; c < m->n_mclass; c++) {
		const struct nl_model_mclass *mc = &m->mclass[c];

		if (!selects(mc, mach, id))
			continue;
		for (unsigned int k = 0; k < mc->n_attr; k++) {
			unsigned int j;

			for (j = 0; j < n; j++)
				if (strcasecmp(a[j]->name, mc->attr[k].name) == 0)
					break;
			a[j] = &mc->attr[k];
			n += j == n;
			has_m |= strcasecmp(mc->attr[k].name, "Machine") == 0;
			has_mips |= strcasecmp(mc->attr[k].name, "Mips") == 0;
		}
	}
	len = (size_t)snprintf(buf, cap, "Ad_Model = true");
	if (!has_m)
		len += (size_t)snprintf(buf + len, cap - len, "; Machine = %u", id);
	if (!has_mips && len < cap)
		len += (size_t)snprintf(buf + len, cap - len, "; Mips = %.17g",
					mach[id].speed_ips / 1e6);
	for (unsigned int j = 0; j < n && len < cap; j++)
		len += (size_t)snprintf(buf + len, cap - len, "; %s = %s", a[j]->name, a[j]->value);
	return len < cap ? 0 : -E2BIG;
}

/* Every attribute value alone, so that an error names its line. */
static int
check_attrs(const struct nl_model_cfg *m, char *err, size_t errlen)
{
	char buf[NL_MODEL_MATTR_TEXT + 64], e[200];

	for (unsigned int c = 0; c < m->n_mclass; c++) {
		const struct nl_model_mclass *mc = &m->mclass[c];

		for (unsigned int k = 0; k < mc->n_attr; k++) {
			struct nl_match_mad *ad = NULL;
			int rc;

			snprintf(buf, sizeof(buf), "%s = %s", mc->attr[k].name, mc->attr[k].value);
			rc = nl_match_mad_parse(buf, strlen(buf), &ad, e, sizeof(e));
			nl_match_mad_free(ad);
			if (rc != 0) {
				snprintf(err, errlen, "%s:%u: [machine %s] %s: %s", m->path,
					 mc->attr[k].line, mc->name, mc->attr[k].name, e);
				return rc;
			}
		}
	}
	return 0;
}

static int
compile_class(const struct nl_model_cfg *m, unsigned int k, struct nl_match_expr **x, char *err,
	      size_t errlen)
{
	const struct nl_model_tclass *tc = &m->tclass[k];
	char e[256];
	int rc;

	rc = nl_match_expr_compile(tc->req, strlen(tc->req), tc->rank, strlen(tc->rank), x, e,
				   sizeof(e));
	if (rc == -EINVAL || rc == -EDOM) { /* e: "Requirements: line L col C: ..." */
		const char *msg = strchr(e, ':') != NULL ? strchr(e, ':') + 2 : e;

		snprintf(err, errlen, "%s:%u: [class %s] %s: %s", m->path,
			 rc == -EDOM ? tc->line_rank : tc->line_req, tc->name,
			 rc == -EDOM ? "rank" : "requirements", msg);
	}
	else if (rc != 0)
		snprintf(err, errlen, "%s:%u: [class %s]: %s", m->path, tc->line, tc->name,
			 strerror(-rc));
	return rc == -EDOM ? -EINVAL : rc;
}

int
nl_match_model_build(const struct nl_model_cfg *m, const struct nl_machine *mach,
		     struct nl_match_tab **out, char *err, size_t errlen)
{
	struct nl_match_expr *x[NL_MODEL_MAX_TCLASS] = { NULL };
	struct nl_match_tab *tab = NULL;
	char buf[(NL_MODEL_MATTR_TEXT + 40) * NL_MODEL_MAX_MATTR * 2 + 128], e[200];
	int rc;

	*out = NULL;
	rc = check_attrs(m, err, errlen);
	for (unsigned int k = 0; rc == 0 && k < m->n_tclass; k++)
		rc = compile_class(m, k, &x[k], err, errlen);
	if (rc == 0 && m->n_tclass > 0) {
		tab = nl_match_tab_new(m->n_mach, m->n_tclass + 1, 1);
		rc = tab == NULL ? -ENOMEM : 0;
	}
	for (unsigned int k = 0; rc == 0 && k < m->n_tclass; k++)
		if (nl_match_expr_has_rank(x[k]))
			nl_match_tab_use_rank(tab, k + 1);
	for (uint32_t id = 0; rc == 0 && tab != NULL && id < m->n_mach; id++) {
		struct nl_match_mad *ad = NULL;

		rc = record_text(m, mach, id, buf, sizeof(buf));
		if (rc == 0)
			rc = nl_match_mad_parse(buf, strlen(buf), &ad, e, sizeof(e));
		if (rc != 0) {
			snprintf(err, errlen, "%s: machine %u's record (its [machine] sections): %s",
				 m->path, id, rc == -E2BIG ? "too many attributes" : e);
			break;
		}
		for (unsigned int k = 0; k < m->n_tclass; k++) {
			bool ok = false;
			double rank = 0;

			nl_match_expr_eval(x[k], ad, &ok, &rank);
			nl_match_tab_set(tab, k + 1, id, ok, rank);
		}
		nl_match_mad_free(ad);
	}
	for (unsigned int k = 0; k < m->n_tclass; k++)
		nl_match_expr_free(x[k]);
	if (rc != 0) {
		nl_match_tab_free(tab);
		return rc;
	}
	*out = tab;
	return 0;
}

int
nl_match_model_check(const struct nl_model_cfg *m, const struct nl_machine *mach, char *err,
		     size_t errlen)
{
	struct nl_match_tab *tab = NULL;
	int rc = nl_match_model_build(m, mach, &tab, err, errlen);

	nl_match_tab_free(tab);
	return rc;
}

void
nl_match_model_unbind(void)
{
	if (bound_tab == NULL)
		return;
	__atomic_store_n(&nl_match_src.tab, NULL, __ATOMIC_RELEASE);
	nl_match_src.h_by_aux = NULL;
	nl_match_src.n_aux = 0;
	nl_match_tab_free(bound_tab);
	bound_tab = NULL;
}

int
nl_match_model_bind(const struct nl_model_cfg *m, const struct nl_machine *mach, char *err,
		    size_t errlen)
{
	struct nl_match_tab *tab = NULL;
	int rc;

	nl_match_model_unbind();
	rc = nl_match_model_build(m, mach, &tab, err, errlen);
	if (rc != 0 || tab == NULL)
		return rc;
	for (uint32_t h = 0; h <= m->n_tclass; h++)
		bound_h[h] = h;
	bound_tab = tab;
	nl_match_src.h_by_aux = bound_h;
	nl_match_src.n_aux = m->n_tclass + 1;
	__atomic_store_n(&nl_match_src.tab, tab, __ATOMIC_RELEASE);
	return 0;
}
