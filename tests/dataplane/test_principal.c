/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Principals (dataplane/wire/nl_principal.h, docs/security.md): the principals file (sections,
 * keys, slots, FILE:LINE errors), the derived keys (what nlevel-key writes is what the
 * appliance derives; one principal's key does not verify another's frames), the principal id
 * in the sender id and its lookup. TAP.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nl_principal.h"
#include "nl_proto.h"
#include "nl_tap.h"

static char dir[] = "/tmp/nl-principal-XXXXXX";

static const char *
write_file(const char *name, const char *text, mode_t mode)
{
	static char path[4][256];
	static unsigned int k;
	char *p = path[k++ % 4];
	FILE *f;

	snprintf(p, 256, "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f == NULL)
		return p;
	fputs(text, f);
	fclose(f);
	chmod(p, mode);
	return p;
}

/* load text; on error, err holds the message */
static int
load(const char *text, const struct nl_auth_key *site, struct nl_principals *ps, char *err,
     size_t n)
{
	return nl_principals_load(ps, write_file("p.ini", text, 0644), site, 16, err, n);
}

static bool
err_has(const char *err, const char *line, const char *what)
{
	return strstr(err, line) != NULL && strstr(err, what) != NULL;
}

int
main(void)
{
	static struct nl_principals ps;
	struct nl_auth_key site, other, file_key;
	uint8_t raw[NL_PRINCIPAL_DERIVED_LEN];
	char err[512];
	int rc, ia, ib, iw;

	if (mkdtemp(dir) == NULL)
		return 1;
	rc = nl_auth_key_load(write_file("site.key", "0123456789abcdef0123456789abcdef", 0600),
			      &site, err, sizeof(err));
	nl_tap_ok(rc == 0, "site key loads (%s)", rc ? err : "ok");
	nl_auth_key_load(write_file("other.key", "ffffffffffffffffffffffffffffffffff", 0600), &other,
			 err, sizeof(err));

	/* names and ids */
	nl_tap_check(nl_principal_name_ok("alice") && nl_principal_name_ok("node-1.a_b") &&
			     !nl_principal_name_ok("") && !nl_principal_name_ok("a b") &&
			     !nl_principal_name_ok("x/y") &&
			     !nl_principal_name_ok("abcdefghijklmnopqrstuvwxyz0123456"),
		     "principal names: 1..32 of [A-Za-z0-9._-]");
	nl_tap_check(nl_principal_id("alice") == nl_principal_id("alice") &&
			     nl_principal_id("alice") != nl_principal_id("bob") &&
			     nl_principal_id("alice") != 0,
		     "principal id: a non-zero function of the name");

	/* a good file */
	rc = load("; comment\n[admission]\nmax_in_flight = 100\nqueue = 32\n\n"
		  "[submitter alice]\nweight = 3\nmax_in_flight = 50 ; inline comment\n"
		  "max_rate = 200\n\n[submitter bob]\n\n"
		  "[worker node1]\nslots = 0-3, 8\nworker_id = 7\n\n[worker alice]\nslots = *\n",
		  &site, &ps, err, sizeof(err));
	nl_tap_ok(rc == 0 && ps.n == 3, "principals file loads: 3 principals (%s)",
		  rc ? err : "ok");
	ia = nl_principals_find(&ps, (uint64_t)nl_principal_id("alice") << 32 | 1234);
	ib = nl_principals_find(&ps, (uint64_t)nl_principal_id("bob") << 32 | 99);
	iw = nl_principals_find(&ps, (uint64_t)nl_principal_id("node1") << 32 | 5);
	nl_tap_check(ia >= 0 && ib >= 0 && iw >= 0 && ia != ib && ia != iw &&
			     nl_principals_find(&ps, (uint64_t)nl_principal_id("carol") << 32) < 0 &&
			     nl_principals_find(&ps, 0x12345678ull) < 0,
		     "lookup by the sender id's high 32 bits; unknown principals not found");
	if (ia >= 0 && ib >= 0 && iw >= 0) {
		const struct nl_principal *a = &ps.p[ia], *b = &ps.p[ib], *w = &ps.p[iw];

		nl_tap_check(a->weight == 3 && a->max_in_flight == 50 && a->max_rate_tps == 200 &&
				     a->burst == 20 && a->queue == 32 && b->weight == 1 &&
				     b->max_in_flight == 0 && b->max_rate_tps == 0,
			     "submitter limits read; defaults weight 1, no caps, burst rate/10, "
			     "[admission] queue");
		nl_tap_check(ps.max_in_flight == 100, "[admission] max_in_flight read");
		nl_tap_check(a->kind == (NL_PRINCIPAL_SUBMITTER | NL_PRINCIPAL_WORKER) &&
				     b->kind == NL_PRINCIPAL_SUBMITTER && w->kind == NL_PRINCIPAL_WORKER,
			     "a name in [submitter] and [worker] has both rights");
		nl_tap_check(nl_principal_slot_ok(w, 0) && nl_principal_slot_ok(w, 3) &&
				     !nl_principal_slot_ok(w, 4) && nl_principal_slot_ok(w, 8) &&
				     !nl_principal_slot_ok(w, 15) && nl_principal_slot_ok(a, 15) &&
				     !nl_principal_slot_ok(b, 0) && w->has_worker_id &&
				     w->worker_id == 7,
			     "worker slots: ranges, lists, '*'; none unless given; worker_id");

		/* derived keys: nlevel-key's file == the appliance's derivation */
		nl_principal_derive(&site, "alice", raw);
		rc = nl_auth_key_load(write_file("alice.key", "", 0600), &file_key, err, sizeof(err));
		{
			char path[256];
			FILE *f;

			snprintf(path, sizeof(path), "%s/alice.key", dir);
			f = fopen(path, "wb");
			fwrite(raw, 1, sizeof(raw), f);
			fclose(f);
			rc = nl_auth_key_load(path, &file_key, err, sizeof(err));
		}
		nl_tap_check(rc == 0 && memcmp(file_key.k, a->key.k, sizeof(a->key.k)) == 0,
			     "alice's key file (nlevel-key) gives the key the appliance derives");
		nl_tap_check(memcmp(a->key.k, b->key.k, sizeof(a->key.k)) != 0 &&
				     memcmp(a->key.k, site.k, sizeof(a->key.k)) != 0,
			     "principals' keys differ from each other and from the site key");
		nl_principal_derive(&other, "alice", raw);
		nl_auth_key_from_bytes(raw, sizeof(raw), &file_key);
		nl_tap_check(memcmp(file_key.k, a->key.k, sizeof(a->key.k)) != 0,
			     "another site key derives another key for the same name");

		/* a frame of alice verifies under alice's key only */
		struct nl_auth_tx tx;
		struct nl_msg m = { .type = NL_MSG_SUBMIT };
		uint8_t buf[NL_PROTO_MAX_LEN];
		uint64_t snd, seq;
		int n;

		m.u.submit.n_split = 1;
		nl_auth_tx_init_principal(&tx, &a->key, "alice");
		n = nl_proto_seal(&m, &tx, 1700000000000000000ull, buf, sizeof(buf));
		nl_tap_check(n > 0 && nl_auth_verify(&a->key, buf, (size_t)n, &snd, &seq) == NL_PROTO_OK &&
				     nl_principals_find(&ps, snd) == ia && (uint32_t)snd != 0,
			     "alice's sealed frame verifies under her key; its sender names her");
		nl_tap_check(nl_auth_verify(&b->key, buf, (size_t)n, &snd, &seq) == NL_PROTO_E_MAC &&
				     nl_auth_verify(&site, buf, (size_t)n, &snd, &seq) == NL_PROTO_E_MAC,
			     "alice's frame does not verify under bob's key or the site key");
		/* bob claiming to be alice: his key, alice's id */
		nl_auth_tx_init_principal(&tx, &b->key, "alice");
		n = nl_proto_seal(&m, &tx, 1700000000000000000ull, buf, sizeof(buf));
		nl_tap_check(nl_auth_verify(&a->key, buf, (size_t)n, &snd, &seq) == NL_PROTO_E_MAC,
			     "bob's frame claiming alice's id fails under alice's key");
	}

	/* errors name FILE:LINE */
	static const struct {
		const char *text, *line, *what;
	} bad[] = {
		{ "[submitter alice]\nweight = 0\n", ":2:", "weight" },
		{ "[submitter alice]\nweight = 1.5\n", ":2:", "integer" },
		{ "[submitter alice]\ncolour = red\n", ":2:", "unknown key 'colour'" },
		{ "[group x]\n", ":1:", "want [submitter NAME]" },
		{ "[submitter al ice]\n", ":1:", "principal name" },
		{ "[submitter a]\n[submitter a]\n", ":2:", "given twice" },
		{ "[worker w]\nslots = 0-16\n", ":2:", "slot 16 does not exist" },
		{ "[worker w]\nslots = 3-1\n", ":2:", "range" },
		{ "[worker w]\nslots = x\n", ":2:", "slot number" },
		{ "weight = 1\n", ":1:", "outside a section" },
		{ "[admission]\nsite_key = maybe\n", ":2:", "operator or refuse" },
		{ "[submitter a\n", ":1:", "without ']'" },
		{ "[submitter a]\nmax_rate = -1\n", ":2:", "max_rate" },
		{ "[submitter a]\nno equals sign\n", ":2:", "KEY = VALUE" },
		{ "[worker w]\nkey_file = /nonexistent/k\n", ":2:", "key_file" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = load(bad[i].text, &site, &ps, err, sizeof(err));
		nl_tap_ok(rc == -EINVAL && err_has(err, bad[i].line, bad[i].what),
			  "bad principals file %zu refused with FILE%s %s (%s)", i, bad[i].line,
			  bad[i].what, err);
	}
	rc = load("; nothing\n", &site, &ps, err, sizeof(err));
	nl_tap_ok(rc == -EINVAL && strstr(err, "no [submitter NAME]") != NULL,
		  "a file without principals is refused (%s)", err);
	/* a key list entry: key_file instead of the derived key */
	{
		char text[512];
		const char *kp = write_file("list.key", "a key of the key list, 32+ bytes long", 0600);

		snprintf(text, sizeof(text), "[submitter carol]\nkey_file = %s\n", kp);
		rc = load(text, &site, &ps, err, sizeof(err));
		nl_auth_key_load(kp, &file_key, err, sizeof(err));
		nl_tap_check(rc == 0 && memcmp(ps.p[0].key.k, file_key.k, sizeof(file_key.k)) == 0,
			     "key_file: the principal's key comes from its own file (a key list)");
		kp = write_file("wide.key", "a key of the key list, 32+ bytes long", 0644);
		snprintf(text, sizeof(text), "[submitter carol]\nkey_file = %s\n", kp);
		rc = load(text, &site, &ps, err, sizeof(err));
		nl_tap_ok(rc == -EINVAL && strstr(err, "too wide") != NULL,
			  "key_file with group/other permissions refused (%s)", err);
	}
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			nl_tap_diag("could not remove %s", dir);
	}
	return nl_tap_done();
}
