/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Authentication of the wire protocol (version 2, dataplane/wire/nl_proto.h, docs/protocol.md
 * "Authentication"): the site key file's permission rules; sealed frames of every type round
 * trip; forged (wrong key), altered (any byte), truncated-MAC, unauthenticated (version 1) and
 * replayed frames of every type a sender without the key could inject are refused with
 * bad_mac or replay; the replay window against a plain model (random sequences). TAP;
 * NL_TEST_SEED for the random part.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nl_proto.h"
#include "nl_tap.h"

#define NOW 1700000000000000000ull /* a CLOCK_REALTIME [ns] in 2023 */

static uint64_t rs;

static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static const uint8_t in_types[] = { NL_MSG_SUBMIT, NL_MSG_HELLO, NL_MSG_LOAD, NL_MSG_DONE,
				    NL_MSG_BYE };

static struct nl_msg
sample(uint8_t type)
{
	struct nl_msg m = { .type = type };

	switch (type) {
	case NL_MSG_SUBMIT:
		m.u.submit.task_id = 42;
		m.u.submit.need = 3;
		m.u.submit.instr = 1000000;
		m.u.submit.n_split = 2;
		m.u.submit.cmd_id = 1;
		m.u.submit.args_len = 4;
		memcpy(m.u.submit.args, "a\0bc", 4);
		break;
	case NL_MSG_HELLO:
	case NL_MSG_LOAD:
		m.u.hello.worker_id = 7;
		m.u.hello.n_mach = 2;
		for (int i = 0; i < 2; i++) {
			m.u.hello.mach[i].speed_ips = 100000000;
			m.u.hello.mach[i].link_bps = 10000000;
			m.u.hello.mach[i].res_set = (uint64_t)i;
			m.u.hello.mach[i].n_sub = type == NL_MSG_LOAD ? 3 : 0;
		}
		break;
	case NL_MSG_DONE:
		m.u.done.task_id = 42;
		m.u.done.mach = 1;
		m.u.done.token = 99;
		m.u.done.sub = 1;
		break;
	case NL_MSG_BYE:
		m.u.bye.worker_id = 7;
		break;
	case NL_MSG_ACCEPT:
	case NL_MSG_COMPLETE:
		m.u.reply.task_id = 42;
		m.u.reply.client_ts_ns = 5;
		break;
	case NL_MSG_REJECT:
		m.u.reply.task_id = 42;
		m.u.reply.reason = 3;
		break;
	case NL_MSG_DISPATCH:
		m.u.dispatch.task_id = 42;
		m.u.dispatch.n_split = 2;
		m.u.dispatch.sub = 1;
		m.u.dispatch.args_len = 2;
		memcpy(m.u.dispatch.args, "xy", 2);
		break;
	}
	return m;
}

/* Version-1 bytes of m: equal for two messages means equal messages. */
static int
v1(const struct nl_msg *m, uint8_t *buf)
{
	return nl_proto_encode(m, buf, NL_PROTO_MAX_LEN);
}

static const struct nl_auth_key key = { { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
					  0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xf0, 0x01 } };

static void
test_key_file_rules(void)
{
	char dir[] = "/tmp/nl-test-auth.XXXXXX", path[64], err[512];
	struct nl_auth_key k1, k2, k3;
	FILE *f;

	if (mkdtemp(dir) == NULL) {
		nl_tap_check(false, "test_key_tmpdir");
		return;
	}
	snprintf(path, sizeof(path), "%s/key", dir);
	f = fopen(path, "w");
	fputs("0123456789abcdef0123456789abcdef-site-key", f);
	fclose(f);
	chmod(path, 0644);
	err[0] = '\0';
	nl_tap_check(nl_auth_key_load(path, &k1, err, sizeof(err)) == -EPERM &&
			     strstr(err, path) != NULL && strstr(err, "0644") != NULL,
		     "test_key_readable_by_others_refused_naming_file_and_mode");
	printf("# %s\n", err);
	chmod(path, 0640);
	nl_tap_check(nl_auth_key_load(path, &k1, err, sizeof(err)) == -EPERM,
		     "test_key_readable_by_group_refused");
	chmod(path, 0600);
	nl_tap_check(nl_auth_key_load(path, &k1, err, sizeof(err)) == 0 &&
			     nl_auth_key_load(path, &k2, err, sizeof(err)) == 0 &&
			     memcmp(&k1, &k2, sizeof(k1)) == 0,
		     "test_key_owner_only_loads_the_same_key_twice");
	chmod(path, 0400);
	f = fopen(path, "r");
	nl_tap_check(f != NULL && nl_auth_key_load(path, &k2, err, sizeof(err)) == 0,
		     "test_key_read_only_owner_loads");
	if (f != NULL)
		fclose(f);
	chmod(path, 0600);
	f = fopen(path, "a");
	fputs("!", f);
	fclose(f);
	nl_tap_check(nl_auth_key_load(path, &k3, err, sizeof(err)) == 0 &&
			     memcmp(&k1, &k3, sizeof(k1)) != 0,
		     "test_key_other_content_other_key");
	f = fopen(path, "w");
	fputs("short", f);
	fclose(f);
	nl_tap_check(nl_auth_key_load(path, &k3, err, sizeof(err)) == -EINVAL,
		     "test_key_shorter_than_32_bytes_refused");
	unlink(path);
	nl_tap_check(nl_auth_key_load(path, &k3, err, sizeof(err)) == -ENOENT &&
			     strstr(err, path) != NULL,
		     "test_key_missing_file_refused");
	rmdir(dir);
}

static void
test_seal_round_trip_every_type(void)
{
	struct nl_auth_tx tx;
	struct nl_replay rp;
	bool all = true;

	nl_auth_tx_init(&tx, &key);
	nl_replay_init(&rp, 16);
	for (uint8_t t = 1; t < NL_MSG_TYPE_MAX; t++) {
		struct nl_msg m = sample(t), back;
		uint8_t buf[NL_PROTO_MAX_LEN], a[NL_PROTO_MAX_LEN], b[NL_PROTO_MAX_LEN];
		int n = nl_proto_seal(&m, &tx, NOW, buf, sizeof(buf));
		int na = v1(&m, a);

		/* version 2's DISPATCH has 4 more bytes: the submitter's principal id */
		all &= n == na + (int)NL_AUTH_TRAILER_LEN + (t == NL_MSG_DISPATCH ? 4 : 0) &&
		       buf[2] == NL_PROTO_VERSION_AUTH &&
		       nl_proto_open(&key, &rp, buf, (size_t)n, NOW, &back) == NL_PROTO_OK &&
		       v1(&back, b) == na && memcmp(a, b, (size_t)na) == 0;
		/* a version-1 end refuses version 2 rather than guess */
		all &= nl_proto_open(NULL, NULL, buf, (size_t)n, NOW, &back) == NL_PROTO_E_VERSION;
	}
	nl_tap_check(all, "test_sealed_frames_of_every_type_round_trip");
	nl_replay_free(&rp);
}

/* DISPATCH's principal id (issue #35: the worker's per-principal command policy) is version
 * 2's: sealed it round-trips; version 1 has no such field (the decoder gives 0). */
static void
test_dispatch_principal_version_2_only(void)
{
	struct nl_auth_tx tx;
	struct nl_replay rp;
	struct nl_msg m = sample(NL_MSG_DISPATCH), back;
	uint8_t buf[NL_PROTO_MAX_LEN], a[NL_PROTO_MAX_LEN];
	bool all = true;
	int n, na;

	nl_auth_tx_init(&tx, &key);
	nl_replay_init(&rp, 16);
	m.u.dispatch.principal = 0xa11ce000u;
	n = nl_proto_seal(&m, &tx, NOW, buf, sizeof(buf));
	all &= n > 0 && nl_proto_open(&key, &rp, buf, (size_t)n, NOW, &back) == NL_PROTO_OK &&
	       back.u.dispatch.principal == 0xa11ce000u;
	na = v1(&m, a);
	all &= na > 0 && nl_proto_decode(a, (size_t)na, &back) == NL_PROTO_OK &&
	       back.u.dispatch.principal == 0;
	nl_tap_check(all, "test_dispatch_principal_round_trips_in_version_2_only");
	nl_replay_free(&rp);
}

/* Issue #33: the time limit follows the principal in version 2 (the last 4 body bytes). */
static void
test_dispatch_time_limit_after_principal(void)
{
	struct nl_auth_tx tx;
	struct nl_replay rp;
	struct nl_msg m = sample(NL_MSG_DISPATCH), back;
	uint8_t buf[NL_PROTO_MAX_LEN];
	bool all = true;
	int n, n0;

	nl_auth_tx_init(&tx, &key);
	nl_replay_init(&rp, 16);
	m.u.dispatch.principal = 0xa11ce000u;
	n0 = nl_proto_seal(&m, &tx, NOW, buf, sizeof(buf));
	m.u.dispatch.time_limit_ms = 0x01020304u;
	n = nl_proto_seal(&m, &tx, NOW, buf, sizeof(buf));
	all &= n == n0 + 4 && buf[n - 32 - 8] == 0xa1 && buf[n - 32 - 4] == 1 &&
	       buf[n - 32 - 1] == 4 &&
	       nl_proto_open(&key, &rp, buf, (size_t)n, NOW, &back) == NL_PROTO_OK &&
	       back.u.dispatch.principal == 0xa11ce000u &&
	       back.u.dispatch.time_limit_ms == 0x01020304u;
	nl_tap_check(all, "test_dispatch_time_limit_follows_the_principal_sealed");
	nl_replay_free(&rp);
}

/* SUBMIT flags (reroute) are version 2's: sealed they round-trip; a version-1 frame with one
 * set is refused bad_field; unknown bits are refused by the encoder (docs/protocol.md). The
 * resend flag (#36) is both versions': a version-1 frame with it round-trips, with reroute
 * beside it is refused. */
static void
test_submit_flags_version_2_only(void)
{
	struct nl_auth_tx tx;
	struct nl_replay rp;
	struct nl_msg m = sample(NL_MSG_SUBMIT), back;
	uint8_t buf[NL_PROTO_MAX_LEN];
	bool all = true;
	int n;

	nl_auth_tx_init(&tx, &key);
	nl_replay_init(&rp, 16);
	m.u.submit.flags = NL_SUBMIT_F_REROUTE;
	n = nl_proto_seal(&m, &tx, NOW, buf, sizeof(buf));
	all &= n > 0 && nl_proto_open(&key, &rp, buf, (size_t)n, NOW, &back) == NL_PROTO_OK &&
	       back.u.submit.flags == NL_SUBMIT_F_REROUTE;
	n = nl_proto_encode(&m, buf, sizeof(buf)); /* the bytes a version-1 client would send */
	all &= n > 0 && buf[53] == NL_SUBMIT_F_REROUTE &&
	       nl_proto_decode(buf, (size_t)n, &back) == NL_PROTO_E_FIELD;
	m.u.submit.flags = 0;
	n = nl_proto_encode(&m, buf, sizeof(buf));
	all &= n > 0 && nl_proto_decode(buf, (size_t)n, &back) == NL_PROTO_OK && back.u.submit.flags == 0;
	m.u.submit.flags = NL_SUBMIT_F_RESEND;
	n = nl_proto_encode(&m, buf, sizeof(buf));
	all &= n > 0 && buf[53] == NL_SUBMIT_F_RESEND &&
	       nl_proto_decode(buf, (size_t)n, &back) == NL_PROTO_OK &&
	       back.u.submit.flags == NL_SUBMIT_F_RESEND;
	m.u.submit.flags = NL_SUBMIT_F_RESEND | NL_SUBMIT_F_REROUTE;
	n = nl_proto_encode(&m, buf, sizeof(buf));
	all &= n > 0 && nl_proto_decode(buf, (size_t)n, &back) == NL_PROTO_E_FIELD;
	n = nl_proto_seal(&m, &tx, NOW + 1, buf, sizeof(buf));
	all &= n > 0 && nl_proto_open(&key, &rp, buf, (size_t)n, NOW + 1, &back) == NL_PROTO_OK &&
	       back.u.submit.flags == (NL_SUBMIT_F_RESEND | NL_SUBMIT_F_REROUTE);
	m.u.submit.flags = 0x80;
	all &= nl_proto_encode(&m, buf, sizeof(buf)) == -EINVAL &&
	       nl_proto_seal(&m, &tx, NOW, buf, sizeof(buf)) < 0;
	nl_tap_check(all, "test_submit_flags_are_version_2_only");
	nl_replay_free(&rp);
}

static void
test_sequence_strictly_increases(void)
{
	struct nl_auth_tx tx;
	struct nl_msg m = sample(NL_MSG_BYE);
	uint8_t buf[NL_PROTO_MAX_LEN];
	uint64_t last = 0, snd, seq;
	bool ok = true;
	const uint64_t clock[] = { NOW, NOW, NOW - 1000, NOW + 5, NOW + 5000, NOW };

	nl_auth_tx_init(&tx, &key);
	for (unsigned int i = 0; i < sizeof(clock) / sizeof(clock[0]); i++) {
		int n = nl_proto_seal(&m, &tx, clock[i], buf, sizeof(buf));

		ok &= n > 0 && nl_auth_verify(&key, buf, (size_t)n, &snd, &seq) == NL_PROTO_OK &&
		      seq > last && snd == tx.sender && seq >= clock[i];
		last = seq;
	}
	nl_tap_check(ok && tx.sender != 0, "test_seq_strictly_increases_even_if_clock_steps_back");
}

static void
test_attacks_on_every_inbound_type(void)
{
	static const struct nl_auth_key wrong = { { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
						    0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xf0,
						    0x02 } };
	bool forged = true, altered = true, trunc = true, plain = true, replay = true,
	     altered_any = true;
	struct nl_auth_tx tx, atk;
	struct nl_replay rp;
	unsigned long n_alt = 0;

	nl_auth_tx_init(&tx, &key);
	nl_auth_tx_init(&atk, &wrong);
	nl_replay_init(&rp, 16);
	for (unsigned int i = 0; i < sizeof(in_types); i++) {
		struct nl_msg m = sample(in_types[i]), out;
		uint8_t good[NL_PROTO_MAX_LEN], bad[NL_PROTO_MAX_LEN];
		int n = nl_proto_seal(&m, &tx, NOW + i * 1000, good, sizeof(good));
		int nb;

		/* forged: a sender with another key */
		nb = nl_proto_seal(&m, &atk, NOW + i * 1000, bad, sizeof(bad));
		forged &= nl_proto_open(&key, &rp, bad, (size_t)nb, NOW, &out) == NL_PROTO_E_MAC;
		/* altered: every bit of every byte; the header's own checks may fire first, but
		 * nothing passes, and every flip after the header is a bad MAC */
		for (int p = 0; p < n; p++) {
			for (int bit = 0; bit < 8; bit++) {
				enum nl_proto_err e;

				memcpy(bad, good, (size_t)n);
				bad[p] ^= (uint8_t)(1u << bit);
				e = nl_proto_open(&key, &rp, bad, (size_t)n, NOW, &out);
				altered_any &= e != NL_PROTO_OK;
				if (p >= (int)NL_PROTO_HDR_LEN)
					altered &= e == NL_PROTO_E_MAC;
				n_alt++;
			}
		}
		/* truncated MAC: 1..16 bytes cut, length field told (else: truncated) */
		for (int cut = 1; cut <= (int)NL_AUTH_TAG_LEN; cut++) {
			memcpy(bad, good, (size_t)n);
			bad[4] = (uint8_t)((n - cut) >> 8);
			bad[5] = (uint8_t)(n - cut);
			/* (below header + trailer the frame is merely too short to be version 2) */
			trunc &= nl_proto_open(&key, &rp, bad, (size_t)(n - cut), NOW, &out) ==
				 (n - cut >= (int)(NL_PROTO_HDR_LEN + NL_AUTH_TRAILER_LEN) ?
					  NL_PROTO_E_MAC : NL_PROTO_E_TRUNC);
			trunc &= nl_proto_open(&key, &rp, good, (size_t)(n - cut), NOW, &out) !=
				 NL_PROTO_OK;
		}
		/* unauthenticated (version 1) */
		nb = v1(&m, bad);
		plain &= nl_proto_open(&key, &rp, bad, (size_t)nb, NOW, &out) == NL_PROTO_E_MAC;
		/* replayed: the genuine frame passes once, then never again */
		replay &= nl_proto_open(&key, &rp, good, (size_t)n, NOW, &out) == NL_PROTO_OK;
		for (int k = 0; k < 3; k++)
			replay &= nl_proto_open(&key, &rp, good, (size_t)n, NOW + k, &out) ==
				  NL_PROTO_E_REPLAY;
	}
	nl_tap_check(forged, "test_forged_frames_of_every_type_are_bad_mac");
	nl_tap_ok(altered_any && altered,
		  "test_altered_frames_of_every_type_refused_%lu_bit_flips", n_alt);
	nl_tap_check(trunc, "test_truncated_mac_of_every_type_refused");
	nl_tap_check(plain, "test_unauthenticated_v1_frames_to_a_keyed_end_are_bad_mac");
	nl_tap_check(replay, "test_replayed_frames_of_every_type_refused");
	nl_replay_free(&rp);
}

static void
test_replay_window_edges(void)
{
	struct nl_replay rp;
	const uint64_t s = 77, top = NOW;

	nl_replay_init(&rp, 4);
	nl_tap_check(nl_replay_check(&rp, s, top, NOW) == NL_PROTO_OK &&
			     nl_replay_check(&rp, s, top - 5, NOW) == NL_PROTO_OK &&
			     nl_replay_check(&rp, s, top - 5, NOW) == NL_PROTO_E_REPLAY,
		     "test_reordered_frame_inside_window_accepted_once");
	nl_replay_free(&rp);
	/* seq is the sender's clock in ns: a datagram delivered after one its sender sent 4 ms
	 * later (a veth's two CPU backlogs) is no replay (the bitmap of 1024 numbers refused it) */
	nl_replay_init(&rp, 4);
	nl_tap_check(nl_replay_check(&rp, s, NOW, NOW) == NL_PROTO_OK &&
			     nl_replay_check(&rp, s, NOW + 4000000, NOW) == NL_PROTO_OK &&
			     nl_replay_check(&rp, s, NOW + 2000000, NOW) == NL_PROTO_OK &&
			     nl_replay_check(&rp, s, NOW + 2000000, NOW) == NL_PROTO_E_REPLAY &&
			     nl_replay_check(&rp, s, NOW, NOW) == NL_PROTO_E_REPLAY,
		     "test_frame_reordered_by_ms_accepted_once");
	nl_replay_free(&rp);
	/* depth: NL_REPLAY_DEPTH + 1 frames 1 ms apart; the lowest is the mark (refused again),
	 * the rest remembered (refused again), an unseen seq above the mark accepted once and the
	 * new mark, below the mark refused */
	nl_replay_init(&rp, 4);
	bool in = true;

	for (uint64_t k = 1; k <= NL_REPLAY_DEPTH + 1; k++)
		in &= nl_replay_check(&rp, s, NOW + k * 1000000, NOW) == NL_PROTO_OK;
	bool again = false;

	for (uint64_t k = 1; k <= NL_REPLAY_DEPTH + 1; k++)
		again |= nl_replay_check(&rp, s, NOW + k * 1000000, NOW) == NL_PROTO_OK;
	nl_tap_check(in && !again &&
			     nl_replay_check(&rp, s, NOW + 1500000, NOW) == NL_PROTO_OK &&
			     nl_replay_check(&rp, s, NOW + 1500000, NOW) == NL_PROTO_E_REPLAY &&
			     nl_replay_check(&rp, s, NOW + 1250000, NOW) == NL_PROTO_E_REPLAY &&
			     nl_replay_check(&rp, s, NOW + 2500000, NOW) == NL_PROTO_OK,
		     "test_window_remembers_the_64_highest_seqs_and_a_mark_below");
	nl_tap_check(nl_replay_check(&rp, s, NOW - NL_REPLAY_SKEW_NS - 1, NOW) ==
			     NL_PROTO_E_REPLAY &&
			     nl_replay_check(&rp, 78, NOW + NL_REPLAY_SKEW_NS + 1, NOW) ==
				     NL_PROTO_E_REPLAY &&
			     nl_replay_check(&rp, 79, NOW - NL_REPLAY_SKEW_NS + 1, NOW) ==
				     NL_PROTO_OK,
		     "test_seq_beyond_60s_clock_tolerance_refused");
	nl_tap_check(nl_replay_check(&rp, 0, NOW, NOW) == NL_PROTO_E_REPLAY,
		     "test_sender_zero_refused");
	nl_replay_free(&rp);
	/* 4 entries: a fifth sender takes the least recently heard one's entry; the forgotten
	 * sender's frames (replays) stay refused: the floor is its highest seq */
	nl_replay_init(&rp, 4);
	for (uint64_t k = 1; k <= 4; k++)
		nl_replay_check(&rp, k, NOW + k, NOW);
	nl_replay_check(&rp, 1, NOW + 10, NOW); /* 1 heard again: 2 is now the oldest */
	nl_tap_check(nl_replay_check(&rp, 5, NOW + 20, NOW) == NL_PROTO_OK && rp.evicted == 1 &&
			     nl_replay_evicted(&rp, 0) == 1,
		     "test_full_table_takes_least_recently_heard_senders_entry_and_counts");
	nl_tap_check(nl_replay_check(&rp, 2, NOW + 2, NOW) == NL_PROTO_E_REPLAY &&
			     nl_replay_check(&rp, 1, NOW + 10, NOW) == NL_PROTO_E_REPLAY &&
			     nl_replay_check(&rp, 1, NOW + 11, NOW) == NL_PROTO_OK,
		     "test_forgotten_senders_old_frame_refused_known_senders_window_kept");
	nl_tap_check(nl_replay_check(&rp, 6, NOW + 1, NOW) == NL_PROTO_E_REPLAY &&
			     nl_replay_check(&rp, 6, NOW + 3, NOW) == NL_PROTO_OK,
		     "test_new_sender_at_or_below_the_floor_refused_above_accepted");
	nl_replay_free(&rp);
}

/* The window against a plain model: every seq ever accepted (sorted), and the highest. */
static void
test_replay_window_matches_model(uint64_t seed)
{
	struct nl_replay rp;
	static uint64_t seen[20000];
	unsigned int n_seen = 0, n_ok = 0, n_bad = 0;
	uint64_t top = 0;
	bool same = true;
	/* the model: every seq accepted, sorted; the mark is the (NL_REPLAY_DEPTH + 1)-th
	 * highest of them (0 while fewer): accepted iff above the mark and never accepted */
	static uint64_t acc[20000];
	unsigned int n_acc = 0;

	rs = seed * 0x9e3779b97f4a7c15ull | 1;
	nl_replay_init(&rp, 4);
	for (unsigned int i = 0; i < 20000; i++) {
		/* mostly forward, with jumps, replays and reorders around the window's depth */
		uint64_t base = top == 0 ? NOW : top, seq;
		unsigned int r = (unsigned int)(rnd() % 8);

		if (r < 2)
			seq = base + 1 + rnd() % 100;
		else if (r == 2)
			seq = base + rnd() % 3000;
		else if (r == 3 && n_seen > 0)
			seq = seen[rnd() % n_seen]; /* a replay */
		else /* reordered: up to about 150 frames back, beyond the depth as often */
			seq = base - rnd() % 30000;
		bool dup = false;

		for (unsigned int k = 0; k < n_seen; k++)
			dup |= seen[k] == seq;
		uint64_t mark = n_acc > NL_REPLAY_DEPTH ? acc[n_acc - NL_REPLAY_DEPTH - 1] : 0;
		bool want = !dup && seq > mark;
		bool got = nl_replay_check(&rp, 9, seq, NOW) == NL_PROTO_OK;

		same &= want == got;
		if (want) {
			unsigned int j = n_acc++;

			for (; j > 0 && acc[j - 1] > seq; j--)
				acc[j] = acc[j - 1];
			acc[j] = seq;
		}
		if (got) {
			seen[n_seen++] = seq;
			if (seq > top)
				top = seq;
			n_ok++;
		} else {
			n_bad++;
		}
	}
	printf("# %u accepted, %u refused, model %s\n", n_ok, n_bad, same ? "agrees" : "DIFFERS");
	nl_tap_check(same && n_ok > 1000 && n_bad > 1000, "test_replay_window_matches_model_20000");
	nl_replay_free(&rp);
}

int
main(void)
{
	const char *s = getenv("NL_TEST_SEED");
	uint64_t seed = s != NULL ? strtoull(s, NULL, 0) : 0x5eed;

	printf("# seed %llu (NL_TEST_SEED)\n", (unsigned long long)seed);
	test_key_file_rules();
	test_seal_round_trip_every_type();
	test_submit_flags_version_2_only();
	test_dispatch_principal_version_2_only();
	test_dispatch_time_limit_after_principal();
	test_sequence_strictly_increases();
	test_attacks_on_every_inbound_type();
	test_replay_window_edges();
	test_replay_window_matches_model(seed);
	return nl_tap_done();
}
