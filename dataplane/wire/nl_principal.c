/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Principals: names, ids, derived keys and the principals file (nl_principal.h,
 * docs/security.md).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "nl_principal.h"

static const char id_label[] = "nlevel principal id v1";
static const char kdf_label[] = "nlevel principal key v1";
static const char site_label[] = "nlevel site key v2"; /* nl_auth_key_load()'s */

uint32_t
nl_principal_id(const char *name)
{
	uint8_t h[16];
	crypto_generichash_state st;
	uint32_t id;

	if (sodium_init() < 0)
		abort();
	crypto_generichash_init(&st, NULL, 0, sizeof(h));
	crypto_generichash_update(&st, (const uint8_t *)id_label, sizeof(id_label));
	crypto_generichash_update(&st, (const uint8_t *)name, strlen(name));
	crypto_generichash_final(&st, h, sizeof(h));
	id = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	return id != 0 ? id : 1;
}

bool
nl_principal_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > NL_PRINCIPAL_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '.' && name[i] != '_' &&
		    name[i] != '-')
			return false;
	return true;
}

int
nl_principal_derive(const struct nl_auth_key *site, const char *name,
		    uint8_t out[NL_PRINCIPAL_DERIVED_LEN])
{
	crypto_generichash_state st;

	if (sodium_init() < 0)
		return -EIO;
	if (!nl_principal_name_ok(name))
		return -EINVAL;
	crypto_generichash_init(&st, site->k, sizeof(site->k), NL_PRINCIPAL_DERIVED_LEN);
	crypto_generichash_update(&st, (const uint8_t *)kdf_label, sizeof(kdf_label));
	crypto_generichash_update(&st, (const uint8_t *)name, strlen(name));
	crypto_generichash_final(&st, out, NL_PRINCIPAL_DERIVED_LEN);
	sodium_memzero(&st, sizeof(st));
	return 0;
}

int
nl_auth_key_from_bytes(const uint8_t *raw, size_t n, struct nl_auth_key *key)
{
	crypto_generichash_state st;

	if (n < 32 || n > 4096 || sodium_init() < 0)
		return -EINVAL;
	crypto_generichash_init(&st, NULL, 0, NL_AUTH_KEY_LEN);
	crypto_generichash_update(&st, (const uint8_t *)site_label, sizeof(site_label));
	crypto_generichash_update(&st, raw, n);
	crypto_generichash_final(&st, key->k, NL_AUTH_KEY_LEN);
	sodium_memzero(&st, sizeof(st));
	return 0;
}

void
nl_auth_tx_init_principal(struct nl_auth_tx *tx, const struct nl_auth_key *key, const char *name)
{
	uint32_t lo;

	nl_auth_tx_init(tx, key);
	do
		randombytes_buf(&lo, sizeof(lo));
	while (lo == 0);
	tx->sender = (uint64_t)nl_principal_id(name) << 32 | lo;
}

/* ---- the principals file ---- */

struct ld {
	const char *path;
	unsigned int line;
	char *err;
	size_t errlen;
};

static int
fail(struct ld *l, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (l->err == NULL || l->errlen == 0)
		return -EINVAL;
	k = snprintf(l->err, l->errlen, "%s:%u: ", l->path, l->line);
	if (k > 0 && (size_t)k < l->errlen) {
		va_start(ap, fmt);
		vsnprintf(l->err + k, l->errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int
num(struct ld *l, const char *key, const char *v, double lo, double hi, double *out)
{
	char *end;
	double x = strtod(v, &end);

	if (end == v || *trim(end) != '\0' || !(x >= lo && x <= hi))
		return fail(l, "%s = '%s': want a number %g..%g", key, v, lo, hi);
	*out = x;
	return 0;
}

/* "0-7, 12, 14-15" into p->slots */
static int
parse_slots(struct ld *l, struct nl_principal *p, char *v, unsigned int n_slots)
{
	char *save = NULL;

	memset(p->slots, 0, sizeof(p->slots));
	for (char *tok = strtok_r(v, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *t = trim(tok), *end, *dash;
		unsigned long a, b;

		if (strcmp(t, "*") == 0) {
			for (unsigned int m = 0; m < n_slots; m++)
				p->slots[m / 64] |= UINT64_C(1) << (m % 64);
			continue;
		}
		a = strtoul(t, &end, 10);
		b = a;
		dash = end;
		if (end == t || (*dash != '\0' && *dash != '-'))
			return fail(l, "slots: '%s' is not a slot number or a range A-B", t);
		if (*dash == '-') {
			b = strtoul(dash + 1, &end, 10);
			if (end == dash + 1 || *end != '\0' || b < a)
				return fail(l, "slots: '%s' is not a range A-B with A <= B", t);
		}
		if (b >= n_slots)
			return fail(l, "slots: slot %lu does not exist (the configuration has %u "
				       "machine slots, 0..%u)", b, n_slots, n_slots - 1);
		for (unsigned long m = a; m <= b; m++)
			p->slots[m / 64] |= UINT64_C(1) << (m % 64);
	}
	return 0;
}

static struct nl_principal *
find_name(struct nl_principals *ps, const char *name)
{
	for (unsigned int i = 0; i < ps->n; i++)
		if (strcmp(ps->p[i].name, name) == 0)
			return &ps->p[i];
	return NULL;
}

static int
section(struct ld *l, struct nl_principals *ps, char *s, struct nl_principal **cur,
	const struct nl_auth_key *site)
{
	char *sp = strchr(s, ' ');
	unsigned int kind;
	struct nl_principal *p;
	char *name;

	*cur = NULL;
	if (strcmp(s, "admission") == 0)
		return 0;
	if (sp == NULL)
		return fail(l, "[%s]: want [submitter NAME], [worker NAME] or [admission]", s);
	*sp = '\0';
	name = trim(sp + 1);
	if (strcmp(s, "submitter") == 0)
		kind = NL_PRINCIPAL_SUBMITTER;
	else if (strcmp(s, "worker") == 0)
		kind = NL_PRINCIPAL_WORKER;
	else
		return fail(l, "[%s %s]: want [submitter NAME], [worker NAME] or [admission]", s,
			    name);
	if (!nl_principal_name_ok(name))
		return fail(l, "principal name '%s': 1..%u characters of A-Z a-z 0-9 . _ -", name,
			    NL_PRINCIPAL_NAME_MAX);
	p = find_name(ps, name);
	if (p != NULL) {
		if (p->kind & kind)
			return fail(l, "[%s %s] given twice (first at line %u)", s, name, p->line);
		p->kind |= kind;
		*cur = p;
		return 0;
	}
	if (ps->n == NL_PRINCIPAL_MAX)
		return fail(l, "more than %u principals", NL_PRINCIPAL_MAX);
	p = &ps->p[ps->n];
	memset(p, 0, sizeof(*p));
	strcpy(p->name, name);
	p->id = nl_principal_id(name);
	for (unsigned int i = 0; i < ps->n; i++)
		if (ps->p[i].id == p->id)
			return fail(l, "principal '%s' has the id of '%s' (line %u): rename one", name,
				    ps->p[i].name, ps->p[i].line);
	p->kind = kind;
	p->line = l->line;
	p->weight = 1;
	{
		uint8_t raw[NL_PRINCIPAL_DERIVED_LEN];

		if (nl_principal_derive(site, name, raw) != 0 ||
		    nl_auth_key_from_bytes(raw, sizeof(raw), &p->key) != 0)
			return fail(l, "cannot derive the key of '%s'", name);
		sodium_memzero(raw, sizeof(raw));
	}
	ps->n++;
	*cur = p;
	return 0;
}

static int
keyval(struct ld *l, struct nl_principals *ps, struct nl_principal *p, bool in_adm, char *k,
       char *v, unsigned int n_slots, double *burst_set)
{
	double x;
	int rc;

	if (in_adm) {
		if (strcmp(k, "max_in_flight") == 0) {
			rc = num(l, k, v, 0, 1e8, &x);
			ps->max_in_flight = (uint32_t)x;
			return rc;
		}
		if (strcmp(k, "queue") == 0) {
			rc = num(l, k, v, 1, 65536, &x);
			ps->queue = (uint32_t)x;
			return rc;
		}
		if (strcmp(k, "senders") == 0 || strcmp(k, "site_senders") == 0) {
			uint32_t *dst = strcmp(k, "senders") == 0 ? &ps->senders : &ps->site_senders;

			rc = num(l, k, v, 1, 65536, &x);
			if (rc != 0)
				return rc;
			*dst = (uint32_t)x;
			if (x != (double)*dst)
				return fail(l, "%s = '%s': want an integer 1..65536", k, v);
			return 0;
		}
		if (strcmp(k, "reserve") == 0) {
			rc = num(l, k, v, 0, 1e8, &x);
			if (rc != 0)
				return rc;
			ps->reserve = (uint32_t)x;
			ps->has_reserve = true;
			if (x != (double)ps->reserve)
				return fail(l, "reserve = '%s': want an integer 0..100000000", v);
			return 0;
		}
		if (strcmp(k, "site_key") == 0) {
			if (strcmp(v, "operator") == 0)
				ps->site_key_ok = true;
			else if (strcmp(v, "refuse") == 0)
				ps->site_key_ok = false;
			else
				return fail(l, "site_key = '%s': want operator or refuse", v);
			return 0;
		}
		return fail(l, "[admission]: unknown key '%s' (max_in_flight, reserve, queue, "
			       "senders, site_senders, site_key)", k);
	}
	if (p == NULL)
		return fail(l, "'%s' outside a section", k);
	if (strcmp(k, "key_file") == 0) {
		char e[400];

		rc = nl_auth_key_load(v, &p->key, e, sizeof(e));
		return rc != 0 ? fail(l, "key_file: %s", e) : 0;
	}
	if (strcmp(k, "weight") == 0) {
		rc = num(l, k, v, 1, 1000, &x);
		p->weight = (uint32_t)x;
		if (rc == 0 && x != (double)p->weight)
			return fail(l, "weight = '%s': want an integer 1..1000", v);
		return rc;
	}
	if (strcmp(k, "max_in_flight") == 0) {
		rc = num(l, k, v, 0, 1e8, &x);
		p->max_in_flight = (uint32_t)x;
		return rc;
	}
	if (strcmp(k, "max_rate") == 0)
		return num(l, k, v, 0, 1e9, &p->max_rate_tps);
	if (strcmp(k, "burst") == 0) {
		rc = num(l, k, v, 1, 1e9, &p->burst);
		*burst_set = p->burst;
		return rc;
	}
	if (strcmp(k, "queue") == 0) {
		rc = num(l, k, v, 1, 65536, &x);
		p->queue = (uint32_t)x;
		return rc;
	}
	if (strcmp(k, "senders") == 0) {
		rc = num(l, k, v, 1, 65536, &x);
		if (rc != 0)
			return rc;
		p->senders = (uint32_t)x;
		if (x != (double)p->senders)
			return fail(l, "senders = '%s': want an integer 1..65536", v);
		return 0;
	}
	if (strcmp(k, "slots") == 0)
		return parse_slots(l, p, v, n_slots);
	if (strcmp(k, "worker_id") == 0) {
		rc = num(l, k, v, 0, 4294967295.0, &x);
		p->worker_id = (uint32_t)x;
		p->has_worker_id = true;
		return rc;
	}
	return fail(l, "unknown key '%s' (weight, max_in_flight, max_rate, burst, queue, senders, "
		       "slots, worker_id, key_file)", k);
}

int
nl_principals_load(struct nl_principals *ps, const char *path, const struct nl_auth_key *site,
		   unsigned int n_slots, char *err, size_t errlen)
{
	struct ld l = { .path = path, .line = 0, .err = err, .errlen = errlen };
	struct nl_principal *cur = NULL;
	bool in_adm = false;
	char buf[1024];
	double burst_set[NL_PRINCIPAL_MAX];
	FILE *f;
	int rc = 0;

	memset(ps, 0, sizeof(*ps));
	ps->queue = 64;
	ps->site_key_ok = true;
	ps->senders = NL_PRINCIPAL_SENDERS_DEF;
	ps->site_senders = NL_PRINCIPAL_SITE_SENDERS_DEF;
	for (unsigned int i = 0; i < NL_PRINCIPAL_MAX; i++)
		burst_set[i] = 0;
	if (n_slots > NL_PRINCIPAL_MAX_SLOTS)
		n_slots = NL_PRINCIPAL_MAX_SLOTS;
	f = fopen(path, "r");
	if (f == NULL) {
		int e = errno;

		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	while (rc == 0 && fgets(buf, sizeof(buf), f) != NULL) {
		char *s, *eq;

		l.line++;
		if (strchr(buf, '\n') == NULL && !feof(f)) {
			rc = fail(&l, "line longer than %zu characters", sizeof(buf) - 2);
			break;
		}
		s = trim(buf);
		if (*s == '\0' || *s == ';' || *s == '#')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');

			if (e == NULL || *trim(e + 1) != '\0') {
				rc = fail(&l, "section header without ']'");
				break;
			}
			*e = '\0';
			s = trim(s + 1);
			in_adm = strcmp(s, "admission") == 0;
			rc = section(&l, ps, s, &cur, site);
			continue;
		}
		eq = strchr(s, '=');
		if (eq == NULL) {
			rc = fail(&l, "want KEY = VALUE, got '%s'", s);
			break;
		}
		*eq = '\0';
		{
			char *v = trim(eq + 1), *c = strpbrk(v, ";#");

			if (c != NULL)
				*c = '\0';
			rc = keyval(&l, ps, cur, in_adm, trim(s), trim(v), n_slots,
				    cur != NULL ? &burst_set[cur - ps->p] : &burst_set[0]);
		}
	}
	fclose(f);
	if (rc != 0)
		return rc;
	if (ps->n == 0) {
		l.line = 0;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: no [submitter NAME] or [worker NAME] section", path);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < ps->n; i++) {
		struct nl_principal *p = &ps->p[i];
		unsigned int h = (p->id * 2654435761u) >> 22;

		if (p->queue == 0)
			p->queue = ps->queue;
		if (p->senders == 0)
			p->senders = ps->senders;
		if (burst_set[i] == 0)
			p->burst = p->max_rate_tps / 10 > 1 ? p->max_rate_tps / 10 : 1;
		while (ps->tab[h] != 0)
			h = (h + 1) & 1023u;
		ps->tab[h] = (uint16_t)(i + 1);
	}
	return 0;
}

int
nl_principals_find(const struct nl_principals *ps, uint64_t sender)
{
	uint32_t id = (uint32_t)(sender >> 32);
	unsigned int h = (id * 2654435761u) >> 22;

	for (;;) {
		unsigned int k = ps->tab[h];

		if (k == 0)
			return -1;
		if (ps->p[k - 1].id == id)
			return (int)k - 1;
		h = (h + 1) & 1023u;
	}
}

/* ---- rights and receiving (docs/security.md "Rights") ---- */

#define S NL_PRINCIPAL_SUBMITTER
#define W NL_PRINCIPAL_WORKER
#define O NL_PRINCIPAL_OPERATOR

/* Per message type, the roles that may send it to an appliance. Every type the codec knows
 * has an entry (tests/dataplane/test_rights.c checks this table against the one in
 * docs/security.md, cell by cell); the rest is 0: nobody. */
static const uint8_t rights[256] = {
	[NL_MSG_SUBMIT] = S | O,
	[NL_MSG_ACCEPT] = 0,     /* the appliance's replies and orders: it sends them */
	[NL_MSG_REJECT] = 0,
	[NL_MSG_COMPLETE] = 0,
	[NL_MSG_DISPATCH] = 0,
	[NL_MSG_DONE] = W | O,
	[NL_MSG_LOAD] = W | O,
	[NL_MSG_HELLO] = W | O,
	[NL_MSG_BYE] = W | O,
	[16] = O, [17] = O, [18] = O, [19] = O, /* between appliances (nl_xa_proto.h): the site */
	[20] = O, [21] = O, [22] = O, [23] = O, /* key only, checked by the scale-out layer */
	[NL_MSG_CMDS] = W | O,
	[NL_MSG_MACHAD] = W | O,
	[NL_MSG_REGISTER] = S | O,
	[NL_MSG_REGISTERED] = 0,
	[NL_MSG_FSUBMIT] = S | O,
	[NL_MSG_STATUS_Q] = S | O,
	[NL_MSG_STATUS] = 0,
	[NL_MSG_TASKINFO] = 0,
	[NL_MSG_CANCEL] = S | O,  /* #33: a batch's own principal (or the operator) only */
	[NL_MSG_CANCELLED] = 0,
	[NL_MSG_TASKS_Q] = S | O,
	[NL_MSG_TASKS] = 0,
	[NL_MSG_KILL] = 0,
	[NL_MSG_DONE_ACK] = 0,
};

#undef S
#undef W
#undef O

bool
nl_principal_may_send(unsigned int kind, unsigned int type)
{
	return type < 256 && (rights[type] & kind) != 0;
}

unsigned int
nl_principals_kind(const struct nl_principals *ps, unsigned int who)
{
	return who < ps->n ? ps->p[who].kind : NL_PRINCIPAL_OPERATOR;
}

int
nl_principals_replay_init(const struct nl_principals *ps, struct nl_replay *rp)
{
	uint32_t cap[NL_PRINCIPAL_MAX + 1];

	for (unsigned int i = 0; i < ps->n; i++)
		cap[i] = ps->p[i].senders != 0 ? ps->p[i].senders : NL_PRINCIPAL_SENDERS_DEF;
	cap[ps->n] = ps->site_senders != 0 ? ps->site_senders : NL_PRINCIPAL_SITE_SENDERS_DEF;
	return nl_replay_init_owners(rp, ps->n + 1, cap, ps->n);
}

enum nl_rx_verdict
nl_principals_open(const struct nl_principals *ps, const struct nl_auth_key *site,
		   struct nl_replay *rp, const void *buf, size_t len, uint64_t now_ns,
		   struct nl_msg *out, unsigned int *who, enum nl_proto_err *why)
{
	const struct nl_auth_key *key = site;
	const uint8_t *p = buf;
	uint64_t sender = 0, seq;
	int k = -1;

	*who = ps->n;
	/* The sender id (in the trailer, under the MAC) names the key to verify with: a frame
	 * that claims principal P and verifies under P's key came from a holder of P's key. */
	if (len >= NL_PROTO_HDR_LEN + NL_AUTH_TRAILER_LEN && len <= NL_PROTO_MAX_LEN) {
		const uint8_t *t = p + len - NL_AUTH_TRAILER_LEN;

		for (unsigned int i = 0; i < 8; i++)
			sender = sender << 8 | t[i];
		k = nl_principals_find(ps, sender);
		if (k >= 0)
			key = &ps->p[k].key;
	}
	*why = nl_auth_verify(key, buf, len, &sender, &seq);
	if (*why == NL_PROTO_OK && k < 0 && !ps->site_key_ok)
		*why = NL_PROTO_E_MAC; /* site_key = refuse: only principals' keys are accepted */
	if (*why == NL_PROTO_OK)
		*why = nl_proto_decode_sealed(buf, len, out);
	if (*why != NL_PROTO_OK)
		return NL_RX_DROP;
	*who = k >= 0 ? (unsigned int)k : ps->n;
	if (!nl_principal_may_send(nl_principals_kind(ps, *who), out->type))
		return NL_RX_DENIED; /* before the window: no state for what it may not send */
	*why = nl_replay_check_own(rp, *who, sender, seq, now_ns);
	return *why == NL_PROTO_OK ? NL_RX_ACCEPT : NL_RX_DROP;
}
