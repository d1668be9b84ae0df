/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rights and replay state of an appliance with principals (issue #35; docs/security.md
 * "Rights", docs/protocol.md "Replay window"), through the receive path itself,
 * nl_principals_open():
 *   - the rights table of docs/security.md, read from the document, cell by cell against the
 *     code (one TAP line per cell), and a row for every message type the codec knows;
 *   - the lock-out attack of issue #35: a principal's 8,192 frames from 4,096 of its sender ids
 *     with seq = now + 59 s, as a submitter (denied, no state) and as a worker (it evicts only
 *     its own senders): a new sender of another principal, a restarted worker and the site
 *     key's holder still get in;
 *   - random frame sequences from principals with random roles, right and wrong keys, fresh,
 *     replayed, reordered, old and future sequence numbers, against a small model of the
 *     documented rules (rights table, clock tolerance, window, per-principal bound, eviction
 *     of the principal's least recently heard sender, floor).
 * TAP; randomized parts print their seed and take NL_TEST_SEED.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nl_principal.h"
#include "nl_proto.h"
#include "nl_sample.h"
#include "nl_tap.h"

#define S NL_PRINCIPAL_SUBMITTER
#define W NL_PRINCIPAL_WORKER
#define O NL_PRINCIPAL_OPERATOR
#define NOW 1700000000000000000ull
#define SEC 1000000000ull

static uint64_t rs;

static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* ---- the table of docs/security.md "Rights" ---- */

static uint8_t doc_rights[256];
static bool doc_row[256];

static char *
cell(char **p)
{
	char *c = *p, *bar = strchr(c, '|');

	if (bar == NULL)
		return NULL;
	*bar = '\0';
	*p = bar + 1;
	while (*c == ' ')
		c++;
	for (char *e = c + strlen(c); e > c && e[-1] == ' ';)
		*--e = '\0';
	return c;
}

/* Read the rights table; 0 or -1 (diagnostic printed). */
static int
read_doc_table(const char *path)
{
	static const char head[] = "| type | message | submitter | worker | operator |";
	FILE *f = fopen(path, "r");
	char line[512];
	bool in = false;
	int rows = 0;

	if (f == NULL) {
		nl_tap_diag("%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, *c[5];
		unsigned long lo, hi;
		char *end;

		line[strcspn(line, "\n")] = '\0';
		if (!in) {
			in = strcmp(line, head) == 0;
			continue;
		}
		if (strncmp(line, "|---", 4) == 0)
			continue;
		if (line[0] != '|')
			break;
		p++;
		for (int k = 0; k < 5; k++)
			if ((c[k] = cell(&p)) == NULL) {
				nl_tap_diag("%s: bad row '%s'", path, line);
				fclose(f);
				return -1;
			}
		lo = strtoul(c[0], &end, 10);
		hi = *end == '-' ? strtoul(end + 1, &end, 10) : lo;
		if (*end != '\0' || hi < lo || hi > 255) {
			nl_tap_diag("%s: bad type '%s'", path, c[0]);
			fclose(f);
			return -1;
		}
		for (unsigned long t = lo; t <= hi; t++) {
			doc_row[t] = true;
			for (int k = 0; k < 3; k++) {
				if (strcmp(c[2 + k], "yes") == 0)
					doc_rights[t] |= (uint8_t)(1u << k);
				else if (strcmp(c[2 + k], "no") != 0) {
					nl_tap_diag("%s: cell '%s' is neither yes nor no", path, c[2 + k]);
					fclose(f);
					return -1;
				}
			}
		}
		rows++;
	}
	fclose(f);
	return in && rows > 0 ? 0 : -1;
}

static void
test_rights_table_matches_the_document(void)
{
	static const char *const role[3] = { "submitter", "worker", "operator" };
	char path[1024];
	const char *root = getenv("NL_SRC_ROOT");

	snprintf(path, sizeof(path), "%s/docs/security.md", root != NULL ? root : ".");
	if (!nl_tap_ok(read_doc_table(path) == 0, "test_rights_table_read_from_docs_security_md"))
		return;
	for (unsigned int t = 0; t < 256; t++) {
		if (!doc_row[t])
			continue;
		for (unsigned int k = 0; k < 3; k++) {
			bool want = (doc_rights[t] >> k) & 1;

			nl_tap_ok(nl_principal_may_send(1u << k, t) == want,
				  "test_rights_cell_type_%u_%s_%s_%s", t, nl_msg_type_name(t), role[k],
				  want ? "allowed" : "refused");
		}
		/* a name with both sections has the rights of each */
		nl_tap_ok(nl_principal_may_send(S | W, t) == ((doc_rights[t] & (S | W)) != 0),
			  "test_rights_type_%u_submitter_and_worker_is_the_union", t);
	}
	/* every type the codec knows has a row; nobody may send a type without one */
	bool all = true, none = true;

	for (unsigned int t = 0; t < 256; t++) {
		bool known = strcmp(nl_msg_type_name(t), "?") != 0 || (t >= 16 && t <= 23);

		if (known && !doc_row[t]) {
			nl_tap_diag("type %u (%s) has no row in the table", t, nl_msg_type_name(t));
			all = false;
		}
		if (!doc_row[t] && nl_principal_may_send(S | W | O, t))
			none = false;
	}
	nl_tap_check(all, "test_every_message_type_the_codec_knows_has_a_row");
	nl_tap_check(none, "test_a_type_without_a_row_is_refused_to_every_role");
}

/* ---- principals for the receive path ---- */

static struct nl_principals ps;
static struct nl_auth_key site;

/* Load a principals file of `text`; 0 or -1. */
static int
load(const char *text)
{
	char path[] = "/tmp/nl_rights_XXXXXX", err[512];
	int fd = mkstemp(path), rc;
	FILE *f;

	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	rc = nl_principals_load(&ps, path, &site, 16, err, sizeof(err));
	unlink(path);
	if (rc != 0)
		nl_tap_diag("principals: %s", err);
	return rc;
}

static int
idx(const char *name)
{
	for (unsigned int i = 0; i < ps.n; i++)
		if (strcmp(ps.p[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Seal m as `sender` with seq under key; length or -1. */
static int
seal(const struct nl_msg *m, const struct nl_auth_key *key, uint64_t sender, uint64_t seq,
     uint8_t *buf)
{
	struct nl_auth_tx tx;

	nl_auth_tx_init(&tx, key);
	tx.sender = sender;
	tx.seq = seq - 1; /* nl_proto_seal(now 0): seq = tx.seq + 1 */
	return nl_proto_seal(m, &tx, 0, buf, NL_PROTO_MAX_LEN);
}

static enum nl_rx_verdict
rx(struct nl_replay *rp, const struct nl_msg *m, const struct nl_auth_key *key, uint64_t sender,
   uint64_t seq, uint64_t now, unsigned int *who, enum nl_proto_err *why)
{
	uint8_t buf[NL_PROTO_MAX_LEN];
	struct nl_msg out;
	int n = seal(m, key, sender, seq, buf);

	if (n < 0) {
		*why = NL_PROTO_E_MAX;
		return NL_RX_DROP;
	}
	return nl_principals_open(&ps, &site, rp, buf, (size_t)n, now, &out, who, why);
}

/* ---- the lock-out attack of issue #35 ---- */

static void
test_lockout_attack(void)
{
	struct nl_replay rp;
	struct nl_msg load_m, sub_m, hello_m;
	unsigned int who, denied = 0, own_ok = 0;
	enum nl_proto_err why;
	bool in = true;
	int m, a, w;

	if (load("[submitter mallory]\n[submitter alice]\n[worker node]\nslots = *\n"
		 "[worker mallet]\nslots = *\n") != 0 ||
	    nl_principals_replay_init(&ps, &rp) != 0) {
		nl_tap_check(false, "test_lockout_setup");
		return;
	}
	nl_sample_msg(NL_MSG_LOAD, 1, &load_m);
	nl_sample_msg(NL_MSG_SUBMIT, 0, &sub_m);
	nl_sample_msg(NL_MSG_HELLO, 1, &hello_m);
	m = idx("mallory");
	a = idx("alice");
	w = idx("node");
	/* the node worker is known before the attack */
	in &= rx(&rp, &hello_m, &ps.p[w].key, (uint64_t)ps.p[w].id << 32 | 1, NOW, NOW, &who,
		 &why) == NL_RX_ACCEPT;
	/* a submitter's 8,192 LOAD frames: denied by its role, before any replay state */
	for (uint64_t k = 0; k < 8192; k++)
		denied += rx(&rp, &load_m, &ps.p[m].key, (uint64_t)ps.p[m].id << 32 | (1 + k % 4096),
			     NOW + 59 * SEC - k, NOW, &who, &why) == NL_RX_DENIED;
	nl_tap_ok(denied == 8192 && rp.evicted == 0 && nl_replay_evicted(&rp, (unsigned int)m) == 0,
		  "test_lockout_submitters_8192_loads_denied_and_create_no_replay_state");
	/* a worker principal (mallet) does the same with frames its role allows */
	int ml = idx("mallet");

	for (uint64_t k = 0; k < 8192; k++)
		own_ok += rx(&rp, &load_m, &ps.p[ml].key,
			     (uint64_t)ps.p[ml].id << 32 | (1 + k % 4096), NOW + 59 * SEC - k, NOW,
			     &who, &why) == NL_RX_ACCEPT;
	nl_tap_diag("mallet: %u of 8192 LOADs accepted, %llu of its senders evicted (bound %u)",
		    own_ok, (unsigned long long)nl_replay_evicted(&rp, (unsigned int)ml),
		    ps.p[ml].senders);
	nl_tap_ok(nl_replay_evicted(&rp, (unsigned int)ml) > 0 &&
			  rp.evicted == nl_replay_evicted(&rp, (unsigned int)ml),
		  "test_lockout_workers_flood_evicts_only_its_own_senders");
	/* the others get in: 50 tasks of a new client of alice, a restarted node worker (new
	 * sender id), the node worker it was, and a site-key sender */
	unsigned int ok = 0;

	for (uint64_t k = 0; k < 50; k++)
		ok += rx(&rp, &sub_m, &ps.p[a].key, (uint64_t)ps.p[a].id << 32 | 77, NOW + k, NOW,
			 &who, &why) == NL_RX_ACCEPT;
	nl_tap_ok(ok == 50, "test_lockout_new_client_of_another_principal_gets_50_of_50_in");
	nl_tap_ok(rx(&rp, &hello_m, &ps.p[w].key, (uint64_t)ps.p[w].id << 32 | 2, NOW + 1, NOW, &who,
		     &why) == NL_RX_ACCEPT &&
			  rx(&rp, &load_m, &ps.p[w].key, (uint64_t)ps.p[w].id << 32 | 1, NOW + 2,
			     NOW, &who, &why) == NL_RX_ACCEPT,
		  "test_lockout_restarted_worker_rejoins_at_once_and_the_old_one_keeps_its_window");
	nl_tap_ok(rx(&rp, &sub_m, &site, 0x00000000deadbeefull, NOW, NOW, &who, &why) ==
			  NL_RX_ACCEPT && who == ps.n,
		  "test_lockout_site_key_sender_gets_in");
	/* mallet locked itself out (its floor is now + 59 s): its own business, documented */
	nl_tap_ok(rx(&rp, &load_m, &ps.p[ml].key, (uint64_t)ps.p[ml].id << 32 | 9999, NOW, NOW,
		     &who, &why) == NL_RX_DROP && why == NL_PROTO_E_REPLAY,
		  "test_lockout_flooder_only_locks_out_its_own_new_senders");
	nl_replay_free(&rp);
	(void)in;
}

/* ---- random sequences against a model of the documented rules ---- */

#define N_SLOT 6u              /* sender ids per identity */
#define MAX_ID (NL_PRINCIPAL_MAX + 1)

struct m_snd {                 /* the model's knowledge of one sender */
	bool held;
	uint64_t top, stamp;
	uint64_t low0;             /* the owner's floor when it was (re)entered */
	uint64_t *seen;            /* seqs accepted since it was (re)entered, ascending */
	unsigned int n_seen, cap_seen;
	uint64_t last_sent;        /* what the test last sent as it (for replays) */
	uint64_t sent[64];
	unsigned int n_sent;
};

struct m_own {
	uint32_t cap, n;
	uint64_t floor;
	struct m_snd s[N_SLOT];
};

static struct m_own mo[MAX_ID];
static unsigned int m_evicted;

static void
m_seen_add(struct m_snd *x, uint64_t seq)
{
	if (x->n_seen == x->cap_seen) {
		x->cap_seen = x->cap_seen ? 2 * x->cap_seen : 64;
		x->seen = realloc(x->seen, x->cap_seen * sizeof(*x->seen));
		if (x->seen == NULL)
			abort();
	}
	unsigned int j = x->n_seen++;

	for (; j > 0 && x->seen[j - 1] > seq; j--)
		x->seen[j] = x->seen[j - 1];
	x->seen[j] = seq;
}

/* Its low-water mark: the (NL_REPLAY_DEPTH + 1)-th highest seq accepted since it was entered,
 * or the owner's floor then (docs/protocol.md "Replay window") */
static uint64_t
m_mark(const struct m_snd *x)
{
	uint64_t m = x->n_seen > NL_REPLAY_DEPTH ? x->seen[x->n_seen - NL_REPLAY_DEPTH - 1] : 0;

	return m > x->low0 ? m : x->low0;
}

static bool
m_seen(const struct m_snd *x, uint64_t seq)
{
	for (unsigned int i = 0; i < x->n_seen; i++)
		if (x->seen[i] == seq)
			return true;
	return false;
}

/* The documented replay rules for (owner o, slot j, seq) at now; updates the model. */
static enum nl_proto_err
m_replay(unsigned int o, unsigned int j, uint64_t seq, uint64_t now, uint64_t *stamp)
{
	struct m_own *w = &mo[o];
	struct m_snd *x = &w->s[j];

	if (seq + NL_REPLAY_SKEW_NS < now || seq > now + NL_REPLAY_SKEW_NS)
		return NL_PROTO_E_REPLAY;
	if (x->held) {
		if (seq > x->top)
			x->top = seq;
		else if (seq <= m_mark(x) || m_seen(x, seq))
			return NL_PROTO_E_REPLAY;
		m_seen_add(x, seq);
		x->stamp = ++*stamp;
		return NL_PROTO_OK;
	}
	if (seq <= w->floor)
		return NL_PROTO_E_REPLAY;
	x->low0 = w->floor; /* before an eviction raises it for another sender */
	if (w->n == w->cap) { /* forget the least recently heard of its own */
		struct m_snd *v = NULL;

		for (unsigned int k = 0; k < N_SLOT; k++)
			if (w->s[k].held && (v == NULL || w->s[k].stamp < v->stamp))
				v = &w->s[k];
		if (v->top > w->floor)
			w->floor = v->top;
		v->held = false;
		w->n--;
		m_evicted++;
	}
	x->held = true;
	x->top = seq;
	x->n_seen = 0;
	m_seen_add(x, seq);
	x->stamp = ++*stamp;
	w->n++;
	return NL_PROTO_OK;
}

static void
test_random_sequences_match_the_model(uint64_t seed)
{
	char text[4096];
	size_t off = 0;
	struct nl_replay rp;
	unsigned int n_p = 2 + (unsigned int)(rnd() % 5), n_steps = 30000, site_ok;
	unsigned int cnt[4] = { 0 }, n_floor = 0, bad = 0;
	uint64_t site_ids[N_SLOT], now = NOW, stamp = 0;
	struct nl_auth_key other;

	rs = seed * 0x9e3779b97f4a7c15ull | 1;
	n_p = 2 + (unsigned int)(rnd() % 5);
	site_ok = (unsigned int)(rnd() % 4) != 0;
	off += (size_t)snprintf(text + off, sizeof(text) - off,
				"[admission]\nsite_key = %s\nsite_senders = %u\n",
				site_ok ? "operator" : "refuse", 1 + (unsigned int)(rnd() % 4));
	for (unsigned int i = 0; i < n_p; i++) {
		unsigned int kind = 1 + (unsigned int)(rnd() % 3); /* S, W or both */
		unsigned int cap = 1 + (unsigned int)(rnd() % 4);

		if (kind & S)
			off += (size_t)snprintf(text + off, sizeof(text) - off,
						"[submitter p%u]\nsenders = %u\n", i, cap);
		if (kind & W)
			off += (size_t)snprintf(text + off, sizeof(text) - off,
						"[worker p%u]\nslots = *\n", i);
		if (!(kind & S))
			off += (size_t)snprintf(text + off, sizeof(text) - off, "senders = %u\n",
						cap);
	}
	if (load(text) != 0 || nl_principals_replay_init(&ps, &rp) != 0) {
		nl_tap_check(false, "test_random_sequences_setup");
		return;
	}
	memset(mo, 0, sizeof(mo));
	for (unsigned int o = 0; o <= ps.n; o++)
		mo[o].cap = o < ps.n ? ps.p[o].senders : ps.site_senders;
	for (unsigned int j = 0; j < N_SLOT; j++) {
		do
			site_ids[j] = rnd();
		while (site_ids[j] == 0 || nl_principals_find(&ps, site_ids[j]) >= 0);
	}
	for (unsigned int i = 0; i < sizeof(other.k); i++)
		other.k[i] = (uint8_t)rnd();
	nl_tap_diag("seed %llu: %u principals, site_key %s, %u steps", (unsigned long long)seed,
		    ps.n, site_ok ? "operator" : "refuse", n_steps);
	for (unsigned int step = 0; step < n_steps && bad < 5; step++) {
		unsigned int o = (unsigned int)(rnd() % (ps.n + 1)), j = (unsigned int)(rnd() % N_SLOT);
		uint64_t sender = o < ps.n ? (uint64_t)ps.p[o].id << 32 | (j + 1) : site_ids[j];
		const struct nl_auth_key *key = o < ps.n ? &ps.p[o].key : &site;
		struct m_snd *x = &mo[o].s[j];
		unsigned int type = nl_sample_types[rnd() % sizeof(nl_sample_types)];
		bool wrong = rnd() % 10 == 0;
		uint64_t seq, r = rnd() % 100;
		struct nl_msg m;
		enum nl_rx_verdict want, got;
		enum nl_proto_err want_why = NL_PROTO_OK, why;
		unsigned int who;

		if (rnd() % 50 == 0)
			now += rnd() % (3 * SEC);                 /* time passes */
		if (rnd() % 3000 == 0)
			now += NL_REPLAY_SKEW_NS + rnd() % SEC;  /* long silence */
		if (r < 45 || x->n_sent == 0)
			seq = (x->last_sent > now ? x->last_sent : now) + 1 + rnd() % 1000;
		else if (r < 60)
			seq = x->sent[rnd() % x->n_sent];         /* a replay */
		else if (r < 72)
			seq = x->last_sent - rnd() % 1500;        /* reordered, or too old */
		else if (r < 80)
			seq = now + NL_REPLAY_SKEW_NS - rnd() % SEC; /* from 59..60 s ahead */
		else if (r < 84)
			seq = now + NL_REPLAY_SKEW_NS + 1 + rnd() % SEC; /* beyond the tolerance */
		else if (r < 88)
			seq = now - NL_REPLAY_SKEW_NS - 1 - rnd() % SEC; /* too old */
		else
			seq = now - rnd() % (10 * SEC);           /* a slow clock */
		if (x->n_sent < 64)
			x->sent[x->n_sent++] = seq;
		else
			x->sent[rnd() % 64] = seq;
		if (seq > x->last_sent)
			x->last_sent = seq;
		nl_sample_msg(type, 1, &m);
		/* the documented rules, in order */
		if (wrong || (o == ps.n && !site_ok)) {
			want = NL_RX_DROP;
			want_why = NL_PROTO_E_MAC;
		} else if (!(doc_rights[type] & nl_principals_kind(&ps, o))) {
			want = NL_RX_DENIED;
		} else {
			uint64_t fl = mo[o].floor;

			want_why = m_replay(o, j, seq, now, &stamp);
			want = want_why == NL_PROTO_OK ? NL_RX_ACCEPT : NL_RX_DROP;
			n_floor += want_why == NL_PROTO_E_REPLAY && !x->held && seq <= fl &&
				   seq + NL_REPLAY_SKEW_NS >= now && seq <= now + NL_REPLAY_SKEW_NS;
		}
		got = rx(&rp, &m, wrong ? &other : key, sender, seq, now, &who, &why);
		if (got != want || (want == NL_RX_DROP && why != want_why) ||
		    (want != NL_RX_DROP && who != o)) {
			nl_tap_diag("step %u: owner %u slot %u type %u seq now%+lld: got %d/%s who %u, "
				    "model %d/%s", step, o, j, type,
				    (long long)(seq - now), got, nl_proto_err_name(why), who, want,
				    nl_proto_err_name(want_why));
			bad++;
		}
		cnt[want]++;
	}
	nl_tap_diag("accepted %u, dropped %u, denied %u; evictions %u (the code's %llu), new "
		    "senders at or under the floor %u", cnt[NL_RX_ACCEPT], cnt[NL_RX_DROP],
		    cnt[NL_RX_DENIED], m_evicted, (unsigned long long)rp.evicted, n_floor);
	nl_tap_ok(bad == 0 && rp.evicted == m_evicted && cnt[NL_RX_ACCEPT] > 1000 &&
			  cnt[NL_RX_DROP] > 1000 && cnt[NL_RX_DENIED] > 1000 && m_evicted > 100 &&
			  n_floor > 10,
		  "test_random_frame_sequences_match_the_model_of_the_rules_%u_steps", n_steps);
	for (unsigned int o = 0; o <= ps.n; o++)
		for (unsigned int j = 0; j < N_SLOT; j++)
			free(mo[o].s[j].seen);
	nl_replay_free(&rp);
}

int
main(void)
{
	uint64_t seed = nl_tap_seed(0x71647);

	for (unsigned int i = 0; i < sizeof(site.k); i++)
		site.k[i] = (uint8_t)(i * 37 + 11);
	test_rights_table_matches_the_document();
	test_lockout_attack();
	test_random_sequences_match_the_model(seed);
	return nl_tap_done();
}
