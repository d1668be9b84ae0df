/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nl_model_cfg.h"

const char *
nl_scheme_name(enum nl_scheme s)
{
	return s == NL_SCHEME_2LSC ? "2lsc" : "nlsc";
}

double
nl_model_arrival_rate(const struct nl_model_cfg *m, double load_pct)
{
	double es = 0, bg = 1;

	if (m->n_mach % m->n_speed == 0) { /* equal blocks: the mean over the classes */
		for (unsigned int i = 0; i < m->n_speed; i++)
			es += m->instr / m->n_split / m->speed_ips[i];
		es /= m->n_speed;
	} else { /* unequal blocks (machine i has class i * n_speed / M): weigh each by its machines */
		for (unsigned int i = 0; i < m->n_speed; i++) {
			uint64_t lo = ((uint64_t)i * m->n_mach + m->n_speed - 1) / m->n_speed;
			uint64_t hi = ((uint64_t)(i + 1) * m->n_mach + m->n_speed - 1) / m->n_speed;

			es += (double)(hi - lo) * (m->instr / m->n_split / m->speed_ips[i]);
		}
		es /= m->n_mach;
	}
	es += m->data_bits / m->n_split / m->link_bps;
	if (m->bg_load_max > 0)
		bg = -log1p(-m->bg_load_max) / m->bg_load_max; /* E[1 / (1 - b)], b ~ U[0,max] */
	return load_pct / 100.0 * m->n_mach / (m->n_split * es * bg);
}

bool
nl_model_mgr_name_ok(const struct nl_model_cfg *m, const char *name)
{
	for (unsigned int i = 0; i < m->n_variant; i++) {
		const struct nl_variant *v = &m->variant[i];

		if (v->scheme == NL_SCHEME_NLSC) {
			const char *p = name + 2;
			unsigned int k = 0, nb = 0;

			if (strcmp(name, "M(0,root)") == 0)
				return true;
			if (strncmp(name, "M(", 2) != 0 || *p < '1' || *p > '9')
				continue;
			while (*p >= '0' && *p <= '9' && k <= 64)
				k = k * 10 + (unsigned int)(*p++ - '0');
			if (*p++ != ',')
				continue;
			while (p[nb] == '0' || p[nb] == '1')
				nb++;
			if (k >= 1 && k <= m->n_res && nb == k && strcmp(p + nb, ")") == 0)
				return true;
		} else {
			const char *p = name + 5;
			unsigned long g = 0;

			if (strcmp(name, "global") == 0)
				return true;
			if (strncmp(name, "group", 5) != 0 || *p < '0' || *p > '9' ||
			    (p[0] == '0' && p[1] != '\0'))
				continue;
			while (*p >= '0' && *p <= '9' && g < v->n_groups)
				g = g * 10 + (unsigned long)(*p++ - '0');
			if (*p == '\0' && g < v->n_groups)
				return true;
		}
	}
	return false;
}

int
nl_model_cfg_parse(struct nl_cfg *c, struct nl_model_cfg *m)
{
	static const char *const vec_names[] = { "balanced", "random", NULL };
	static const char *const match_names[] = { "exact", "subset", NULL };
	static const char *const work_names[] = { "fixed", "exponential", NULL };
	double list[NL_MODEL_MAX_VARIANTS];
	unsigned int n, u;
	uint64_t v;

	memset(m, 0, sizeof(*m));
	NL_CFG_TRY(nl_cfg_require_section(c, "system"));
	NL_CFG_TRY(nl_cfg_require_section(c, "task"));
	NL_CFG_TRY(nl_cfg_require_section(c, "run"));

	/* [system] */
	NL_CFG_TRY(nl_cfg_get_u64(c, "system", "machines", &v, 1, NL_MODEL_MAX_MACH, true));
	m->n_mach = (unsigned int)v;
	NL_CFG_TRY(nl_cfg_get_u64(c, "system", "resources", &v, 1, 64, true));
	m->n_res = (unsigned int)v;
	u = NL_VECTORS_BALANCED;
	NL_CFG_TRY(nl_cfg_get_enum(c, "system", "vectors", vec_names, &u, false));
	m->vectors = (enum nl_vectors_mode)u;
	m->res_prob = 0.5;
	NL_CFG_TRY(nl_cfg_get_double(c, "system", "res_prob", &m->res_prob, 0, 1, false));
	NL_CFG_TRY(nl_cfg_get_double(c, "system", "star_prob", &m->star_prob, 0, 1, false));
	if (m->star_prob > 0 && m->vectors != NL_VECTORS_RANDOM)
		return nl_cfg_error(c, nl_cfg_find(c, "system", "star_prob"),
				    "'*' entries need vectors = random");
	NL_CFG_TRY(nl_cfg_get_list(c, "system", "speeds_ips", m->speed_ips, NL_MODEL_MAX_SPEEDS,
				   &m->n_speed, 1, 1e18, true));
	NL_CFG_TRY(nl_cfg_get_double(c, "system", "link_bps", &m->link_bps, 1, 1e18, true));
	NL_CFG_TRY(nl_cfg_get_double(c, "system", "bg_load_max", &m->bg_load_max, 0, 0.95, false));
	m->bg_period_vt = 1000;
	NL_CFG_TRY(nl_cfg_get_double(c, "system", "bg_period_vt", &m->bg_period_vt, 1e-9, 1e18, false));
	u = 0;
	NL_CFG_TRY(nl_cfg_get_enum(c, "system", "match", match_names, &u, false));
	m->subset = u == 1;
	if (m->vectors == NL_VECTORS_BALANCED && m->n_res < 32 &&
	    (m->n_mach % (1u << m->n_res)) != 0) {
		const struct nl_cfg_entry *e = nl_cfg_find(c, "system", "vectors");

		if (e == NULL)
			e = nl_cfg_find(c, "system", "machines");
		return nl_cfg_error(c, e, "balanced vectors need machines (%u) divisible by 2^N (%u)",
				    m->n_mach, 1u << m->n_res);
	}
	if (m->vectors == NL_VECTORS_BALANCED && m->n_res >= 32) {
		const struct nl_cfg_entry *e = nl_cfg_find(c, "system", "resources");

		return nl_cfg_error(c, e, "balanced vectors need N < 32; use vectors = random");
	}

	/* [task] */
	NL_CFG_TRY(nl_cfg_get_u64(c, "task", "split", &v, 1, 64, true));
	m->n_split = (unsigned int)v;
	NL_CFG_TRY(nl_cfg_get_double(c, "task", "instr", &m->instr, 1, 1e21, true));
	NL_CFG_TRY(nl_cfg_get_double(c, "task", "data_bits", &m->data_bits, 0, 1e21, false));
	u = NL_WORK_FIXED;
	NL_CFG_TRY(nl_cfg_get_enum(c, "task", "work", work_names, &u, false));
	m->work_dist = (enum nl_work_dist)u;
	m->need_prob = 0.5;
	NL_CFG_TRY(nl_cfg_get_double(c, "task", "need_prob", &m->need_prob, 0, 1, false));

	/* [network] */
	NL_CFG_TRY(nl_cfg_get_double(c, "network", "transfer_delay_vt", &m->transfer_delay_vt, 0, 1e18,
					     false));
	NL_CFG_TRY(nl_cfg_get_double(c, "network", "dispatch_delay_vt", &m->dispatch_delay_vt, 0, 1e18,
					     false));

	/* [split] */
	if (nl_cfg_has_section(c, "split")) {
		const char *v = NULL;
		const struct nl_cfg_entry *e;

		NL_CFG_TRY(nl_cfg_get_str(c, "split", "cut", &v, true));
		e = nl_cfg_find(c, "split", "cut");
		for (;;) { /* names between commas; a comma inside M(K,bits) is part of it */
			size_t len = 0;

			while (*v == ' ')
				v++;
			while (v[len] != '\0' && (v[len] != ',' || (len > 0 && memchr(v, '(', len) &&
								     !memchr(v, ')', len))))
				len++;
			while (len > 0 && v[len - 1] == ' ')
				len--;
			if (len == 0) /* "a,,b", "a," or ",a": an empty item, as in number lists */
				return nl_cfg_error(c, e, "empty item in the list (two commas, or a comma "
						    "at an end)");
			if (m->n_cut == 16 || len >= sizeof(m->cut[0]))
				return nl_cfg_error(c, e, "at most 16 names of at most 31 characters");
			memcpy(m->cut[m->n_cut], v, len);
			m->cut[m->n_cut][len] = '\0';
			m->n_cut++;
			v += len;
			while (*v == ' ')
				v++;
			if (*v == '\0')
				break;
			v++; /* the comma */
		}
		NL_CFG_TRY(nl_cfg_get_double(c, "split", "cut_delay_vt", &m->cut_delay_vt, 0, 1e18, false));
		NL_CFG_TRY(nl_cfg_get_double(c, "split", "cut_datagram_vt", &m->cut_datagram_vt, 0, 1e18,
					     false));
		NL_CFG_TRY(nl_cfg_get_double(c, "split", "summary_period_vt", &m->summary_period_vt, 0,
					     1e18, false));
	}

	/* [scheduler] */
	m->sp.n_res = m->n_res;
	m->sp.subset = m->subset;
	NL_CFG_TRY(nl_cfg_get_double(c, "scheduler", "mgr_service_vt", &m->sp.mgr_service_vt, 0, 1e18,
					     false));
	NL_CFG_TRY(nl_cfg_get_double(c, "scheduler", "pick_service_vt", &m->sp.pick_service_vt, 0, 1e18,
					     false));

	/* [nlsc]: one curve per static_known value */
	if (nl_cfg_has_section(c, "nlsc")) {
		bool on = true;

		NL_CFG_TRY(nl_cfg_get_bool(c, "nlsc", "enabled", &on, false));
		list[0] = 0;
		n = 1;
		NL_CFG_TRY(nl_cfg_get_list(c, "nlsc", "static_known", list, NL_MODEL_MAX_VARIANTS, &n, 0,
					   m->n_res < NL_STATIC_KNOWN_MAX ? m->n_res : NL_STATIC_KNOWN_MAX,
					   false));
		for (unsigned int i = 0; on && i < n; i++) {
			if (list[i] != floor(list[i]))
				return nl_cfg_error(c, nl_cfg_find(c, "nlsc", "static_known"),
						    "%g is not an integer", list[i]);
			for (unsigned int j = 0; j < i; j++)
				if (list[j] == list[i])
					return nl_cfg_error(c, nl_cfg_find(c, "nlsc", "static_known"),
							    "%g is listed twice (one curve per value)",
							    list[i]);
			m->variant[m->n_variant].scheme = NL_SCHEME_NLSC;
			m->variant[m->n_variant].static_known = (unsigned int)list[i];
			m->n_variant++;
		}
	}
	/* [2lsc]: one curve per G */
	if (nl_cfg_has_section(c, "2lsc")) {
		bool on = true;

		NL_CFG_TRY(nl_cfg_get_bool(c, "2lsc", "enabled", &on, false));
		NL_CFG_TRY(nl_cfg_get_list(c, "2lsc", "groups", list, NL_MODEL_MAX_VARIANTS / 2, &n, 1,
					   m->n_mach, true));
		NL_CFG_TRY(nl_cfg_get_double(c, "2lsc", "global_base_vt", &m->sp.global_base_vt, 0, 1e18, true));
		NL_CFG_TRY(nl_cfg_get_double(c, "2lsc", "global_per_group_vt", &m->sp.global_per_group_vt, 0,
					     1e18, false));
		m->sp.measure_period_vt = 0;
		NL_CFG_TRY(nl_cfg_get_double(c, "2lsc", "measure_period_vt", &m->sp.measure_period_vt, 0,
					     1e18, false));
		m->sp.grp_threshold = 1.0;
		NL_CFG_TRY(nl_cfg_get_double(c, "2lsc", "group_threshold", &m->sp.grp_threshold, 0, 1e9, false));
		for (unsigned int i = 0; on && i < n; i++) {
			if (list[i] != floor(list[i]))
				return nl_cfg_error(c, nl_cfg_find(c, "2lsc", "groups"),
						    "%g is not an integer", list[i]);
			for (unsigned int j = 0; j < i; j++)
				if (list[j] == list[i])
					return nl_cfg_error(c, nl_cfg_find(c, "2lsc", "groups"),
							    "%g is listed twice (one curve per value)",
							    list[i]);
			if (m->n_variant >= NL_MODEL_MAX_VARIANTS)
				return nl_cfg_error(c, nl_cfg_find(c, "2lsc", "groups"),
						    "too many curves (max %u)", NL_MODEL_MAX_VARIANTS);
			m->variant[m->n_variant].scheme = NL_SCHEME_2LSC;
			m->variant[m->n_variant].n_groups = (unsigned int)list[i];
			m->n_variant++;
		}
	}
	if (m->n_variant == 0) {
		snprintf(c->err, sizeof(c->err), "%s: no scheme to run: add an [nlsc] or [2lsc] section",
			 c->path);
		return -EINVAL;
	}
	for (unsigned int k = 0; k < m->n_cut; k++)
		if (!nl_model_mgr_name_ok(m, m->cut[k]))
			return nl_cfg_error(c, nl_cfg_find(c, "split", "cut"),
					    "'%s' names no manager of the curves this file runs (NLSC: "
					    "M(0,root) or M(K,bits) with K = 1..%u and K bits 0/1, e.g. "
					    "M(1,0); 2LSC: global or groupG, G below its groups)",
					    m->cut[k], m->n_res);

	/* [run] */
	NL_CFG_TRY(nl_cfg_get_double(c, "run", "horizon_vt", &m->horizon_vt, 1e-9, 1e18, true));
	NL_CFG_TRY(nl_cfg_get_double(c, "run", "warmup_vt", &m->warmup_vt, 0, 1e18, false));
	if (m->warmup_vt >= m->horizon_vt)
		return nl_cfg_error(c, nl_cfg_find(c, "run", "warmup_vt"),
				    "must be below horizon_vt (%g)", m->horizon_vt);
	NL_CFG_TRY(nl_cfg_get_list(c, "run", "loads_pct", m->load_pct, NL_MODEL_MAX_LOADS, &m->n_load,
				   0.001, 1000, true));
	v = 5;
	NL_CFG_TRY(nl_cfg_get_u64(c, "run", "seeds", &v, 1, 1000, false));
	m->n_seeds = (unsigned int)v;
	m->seed = 1;
	NL_CFG_TRY(nl_cfg_get_u64(c, "run", "seed", &m->seed, 0, UINT64_MAX, false));
	m->max_in_system = 20000;
	NL_CFG_TRY(nl_cfg_get_u64(c, "run", "max_in_system", &m->max_in_system, 10, 1u << 30, false));
	v = 0;
	NL_CFG_TRY(nl_cfg_get_u64(c, "run", "threads", &v, 0, 256, false));
	m->threads = (unsigned int)v;
	return nl_model_match_cfg_parse(c, m); /* issue #15: machine records, task classes */
}
