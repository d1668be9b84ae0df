/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [machine NAME] and [class NAME] sections of a model configuration (issue #15; nl_model_cfg.h,
 * docs/config.md "Machine records and task classes"). Shapes only: the ClassAd texts are
 * compiled by managers/match/nl_match_model.c, which reports their errors at the same lines.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_model_cfg.h"

/* A ClassAd attribute name: [A-Za-z_][A-Za-z0-9_]*, below 32 bytes. */
static bool
attr_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= 32 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

/* "0-47, 90, 92-95" into inclusive ranges below n_mach. */
static int
parse_ranges(struct nl_cfg *c, const struct nl_cfg_entry *e, unsigned int n_mach,
	     struct nl_model_mclass *mc)
{
	const char *p = e->value;

	while (*p != '\0') {
		unsigned long lo, hi;
		char *end;

		while (*p == ' ' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		if (!isdigit((unsigned char)*p))
			return nl_cfg_error(c, e, "want machine ids and ranges like '0-47, 90', got '%s'",
					    p);
		lo = strtoul(p, &end, 10);
		hi = lo;
		p = end;
		while (*p == ' ')
			p++;
		if (*p == '-') {
			p++;
			while (*p == ' ')
				p++;
			if (!isdigit((unsigned char)*p))
				return nl_cfg_error(c, e, "range without an end");
			hi = strtoul(p, &end, 10);
			p = end;
		}
		while (*p == ' ')
			p++;
		if (*p != ',' && *p != '\0')
			return nl_cfg_error(c, e, "unexpected '%c' (ids and ranges, comma-separated)", *p);
		if (lo > hi || hi >= n_mach)
			return nl_cfg_error(c, e, "range %lu-%lu is not within machines 0-%u", lo, hi,
					    n_mach - 1);
		if (mc->n_range == NL_MODEL_MAX_MRANGE)
			return nl_cfg_error(c, e, "at most %u ranges", NL_MODEL_MAX_MRANGE);
		mc->range[mc->n_range][0] = (uint32_t)lo;
		mc->range[mc->n_range][1] = (uint32_t)hi;
		mc->n_range++;
	}
	if (mc->n_range == 0)
		return nl_cfg_error(c, e, "no machine id");
	return 0;
}

static int
parse_machine(struct nl_cfg *c, struct nl_model_cfg *m, const char *sec, const char *name,
	      unsigned int line)
{
	struct nl_model_mclass *mc;
	const struct nl_cfg_entry *sel = NULL;

	if (m->n_mclass == NL_MODEL_MAX_MCLASS) {
		snprintf(c->err, sizeof(c->err), "%s:%u: more than %u [machine NAME] sections",
			 c->path, line, NL_MODEL_MAX_MCLASS);
		return -EINVAL;
	}
	mc = &m->mclass[m->n_mclass++];
	snprintf(mc->name, sizeof(mc->name), "%s", name);
	mc->line = line; /* the header's line (a section may have no key) */
	for (unsigned int i = 0; i < c->n_entry; i++) {
		struct nl_cfg_entry *e = &c->entry[i];

		if (strcmp(e->section, sec) != 0)
			continue;
		e->used = true;
		if (strcmp(e->key, "machines") == 0 || strcmp(e->key, "speed_ips") == 0) {
			if (sel != NULL)
				return nl_cfg_error(c, e, "one selector per section: '%s' already at line %u",
						    sel->key, sel->line);
			sel = e;
			if (e->key[0] == 'm') {
				NL_CFG_TRY(parse_ranges(c, e, m->n_mach, mc));
				continue;
			}
			NL_CFG_TRY(nl_cfg_get_double(c, sec, "speed_ips", &mc->speed_ips, 1, 1e18, true));
			bool found = false;

			for (unsigned int k = 0; k < m->n_speed; k++)
				found |= m->speed_ips[k] == mc->speed_ips;
			if (!found)
				return nl_cfg_error(c, e, "%g is not one of [system] speeds_ips",
						    mc->speed_ips);
			continue;
		}
		if (!attr_name_ok(e->key))
			return nl_cfg_error(c, e, "not a ClassAd attribute name ([A-Za-z_][A-Za-z0-9_]*, "
					    "below 32 bytes)");
		if (mc->n_attr == NL_MODEL_MAX_MATTR)
			return nl_cfg_error(c, e, "at most %u attributes per machine class",
					    NL_MODEL_MAX_MATTR);
		if (strlen(e->value) == 0 || strlen(e->value) >= NL_MODEL_MATTR_TEXT)
			return nl_cfg_error(c, e, "want a ClassAd value of 1..%u bytes",
					    NL_MODEL_MATTR_TEXT - 1);
		struct nl_model_mattr *a = &mc->attr[mc->n_attr++];

		snprintf(a->name, sizeof(a->name), "%s", e->key);
		snprintf(a->value, sizeof(a->value), "%s", e->value);
		a->line = e->line;
	}
	if (sel == NULL) {
		snprintf(c->err, sizeof(c->err),
			 "%s:%u: [%s]: which machines? add 'machines = 0-47' or 'speed_ips = ...'",
			 c->path, mc->line, sec);
		return -EINVAL;
	}
	if (mc->n_attr == 0) {
		snprintf(c->err, sizeof(c->err), "%s:%u: [%s]: no ClassAd attribute", c->path,
			 mc->line, sec);
		return -EINVAL;
	}
	return 0;
}

static int
get_text(struct nl_cfg *c, const char *sec, const char *key, char *out, unsigned int *line)
{
	const struct nl_cfg_entry *e = nl_cfg_find(c, sec, key);

	if (e == NULL)
		return 0;
	if (strlen(e->value) >= NL_MODEL_MATCH_TEXT)
		return nl_cfg_error(c, e, "at most %u bytes", NL_MODEL_MATCH_TEXT - 1);
	snprintf(out, NL_MODEL_MATCH_TEXT, "%s", e->value);
	*line = e->line;
	return 1;
}

static int
parse_class(struct nl_cfg *c, struct nl_model_cfg *m, const char *sec, const char *name,
	    unsigned int line, double *sum)
{
	struct nl_model_tclass *tc;

	if (m->n_tclass == NL_MODEL_MAX_TCLASS) {
		snprintf(c->err, sizeof(c->err), "%s:%u: more than %u [class NAME] sections", c->path,
			 line, NL_MODEL_MAX_TCLASS);
		return -EINVAL;
	}
	tc = &m->tclass[m->n_tclass++];
	snprintf(tc->name, sizeof(tc->name), "%s", name);
	tc->line = line;
	NL_CFG_TRY(nl_cfg_get_double(c, sec, "share", &tc->share, 1e-9, 1, true));
	NL_CFG_TRY(get_text(c, sec, "requirements", tc->req, &tc->line_req));
	NL_CFG_TRY(get_text(c, sec, "rank", tc->rank, &tc->line_rank));
	if (tc->req[0] == '\0' && tc->rank[0] == '\0') {
		snprintf(c->err, sizeof(c->err), "%s:%u: [%s]: give requirements, rank or both",
			 c->path, line, sec);
		return -EINVAL;
	}
	*sum += tc->share;
	if (*sum > 1 + 1e-9)
		return nl_cfg_error(c, nl_cfg_find(c, sec, "share"),
				    "the [class] shares add up to %g, above 1", *sum);
	return 0;
}

int
nl_model_match_cfg_parse(struct nl_cfg *c, struct nl_model_cfg *m)
{
	double sum = 0;

	snprintf(m->path, sizeof(m->path), "%s", c->path);
	NL_CFG_TRY(nl_cfg_get_double(c, "scheduler", "match_service_vt", &m->sp.match_service_vt, 0, 1e18,
				     false));
	for (unsigned int s = 0; s < c->n_section; s++) {
		const char *sec = c->section[s], *name;
		unsigned int line = c->section_line[s];
		bool mach = strncmp(sec, "machine ", 8) == 0, cls = strncmp(sec, "class ", 6) == 0;

		if (!mach && !cls)
			continue;
		(void)nl_cfg_has_section(c, sec); /* read here, by name (marks it known) */
		name = sec + (mach ? 8 : 6);
		while (*name == ' ')
			name++;
		if (*name == '\0' || strlen(name) >= 32) {
			snprintf(c->err, sizeof(c->err), "%s:%u: [%s]: want a name of 1..31 bytes",
				 c->path, line, sec);
			return -EINVAL;
		}
		NL_CFG_TRY(mach ? parse_machine(c, m, sec, name, line) : parse_class(c, m, sec, name, line, &sum));
	}
	return 0;
}
