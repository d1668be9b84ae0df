/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the frame and message parsers (dataplane/wire/nl_proto.c): any input is
 * parsed as an Ethernet frame, as a bare version-1 message and as a version-2 (authenticated)
 * message. Whatever the parsers accept must re-encode to the same bytes, so a field the parser
 * does not check cannot slip through. Version 2: the body re-encodes to the input's bytes but
 * for version and length, and a frame whose MAC verifies under the fuzzer's key re-seals to
 * the same bytes; the replay window refuses the same (sender, seq) twice.
 *
 * Built with -DNL_FUZZ_SEEDS it is instead a program writing seed inputs into the folder given
 * as its argument (tests/dataplane/test_fuzz.sh): one version-1 and one sealed frame (under the
 * fuzzer's key) of every type, so the fuzzer mutates genuine MACs: any mutation that still
 * verifies would be a forgery and aborts.
 *
 * Scale-out (nl_xa_proto.h): the same input is also decoded as an inter-appliance message
 * (HANDOVER, HANDBACK, SUMMARY, ACK; versions 1 and 2) and must re-encode to the same bytes;
 * a sealed one that verifies must re-seal (nl_xa_seal) to the same frame. Seeds hold
 * genuine messages of the four types.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nl_proto.h"
#include "nl_xa_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct nl_auth_key key = { { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
					  16 } };

static struct nl_xa_msg xm; /* large: not on the fuzzer's stack */

/* Inter-appliance messages: canonical in both versions; a verifying MAC re-seals the same. */
static void
fuzz_xa(const uint8_t *data, size_t size)
{
	uint8_t re[NL_PROTO_MAX_LEN], sealed[NL_PROTO_MAX_LEN];
	uint64_t sender, seq;

	if (nl_xa_decode(data, size, NL_PROTO_VERSION, &xm) == NL_PROTO_OK) {
		int n = nl_xa_encode(&xm, re, sizeof(re));

		if (n != (int)size || memcmp(re, data, size) != 0)
			abort();
	}
	if (nl_xa_decode(data, size, NL_PROTO_VERSION_AUTH, &xm) == NL_PROTO_OK) {
		int n = nl_xa_encode(&xm, re, sizeof(re));

		if (n != (int)(size - NL_AUTH_TRAILER_LEN) || memcmp(re, data, 2) != 0 ||
		    re[3] != data[3] || memcmp(re + 6, data + 6, (size_t)n - 6) != 0)
			abort();
		if (nl_auth_verify(&key, data, size, &sender, &seq) == NL_PROTO_OK) {
			struct nl_auth_tx tx = { .key = key, .sender = sender, .seq = seq - 1 };

			if (seq == 0 || nl_xa_seal(re, (size_t)n, &tx, 0, sealed,
							    sizeof(sealed)) != (int)size ||
			    memcmp(sealed, data, size) != 0)
				abort();
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nl_frame_addr a;
	const uint8_t *pl;
	size_t plen;
	struct nl_msg m;
	uint8_t re[NL_PROTO_MAX_LEN];
	uint64_t sender, seq;

	if (nl_frame_parse(data, size, 0, &a, &pl, &plen) == NL_PROTO_OK &&
	    (pl < data || pl + plen > data + size))
		abort();
	if (nl_proto_decode(data, size, &m) == NL_PROTO_OK) {
		int n = nl_proto_encode(&m, re, sizeof(re));

		if (n != (int)size || memcmp(re, data, size) != 0)
			abort();
	}
	if (nl_proto_decode_sealed(data, size, &m) == NL_PROTO_OK) {
		int n = nl_proto_encode(&m, re, sizeof(re));
		/* version 2's DISPATCH carries 4 more bytes (the principal id) than version 1,
		 * before its time limit (issue #33: 4 bytes when not 0) and its origin block
		 * (issue #36: 16 bytes when there), the last bytes of both */
		size_t extra = m.type == NL_MSG_DISPATCH ? 4 : 0;
		size_t tl = m.type == NL_MSG_DISPATCH ?
				    (m.u.dispatch.time_limit_ms != 0 ? 4u : 0u) +
					    (m.u.dispatch.has_origin ? 16u : 0u) :
				    0;

		if (n != (int)(size - NL_AUTH_TRAILER_LEN - extra) || memcmp(re, data, 2) != 0 ||
		    re[3] != data[3] || memcmp(re + 6, data + 6, (size_t)n - 6 - tl) != 0)
			abort();
	}
	if (nl_auth_verify(&key, data, size, &sender, &seq) == NL_PROTO_OK &&
	    !nl_xa_is_xa(data)) { /* (inter-appliance types: fuzz_xa()) */
		struct nl_auth_tx tx = { .key = key, .sender = sender, .seq = seq - 1 };
		struct nl_replay rp;

		if (seq == 0 || nl_proto_decode_sealed(data, size, &m) != NL_PROTO_OK ||
		    nl_proto_seal(&m, &tx, 0, re, sizeof(re)) != (int)size ||
		    memcmp(re, data, size) != 0)
			abort();
		if (nl_replay_init(&rp, 4) != 0)
			abort();
		if (sender != 0 &&
		    (nl_replay_check(&rp, sender, seq, seq) != NL_PROTO_OK ||
		     nl_replay_check(&rp, sender, seq, seq) != NL_PROTO_E_REPLAY))
			abort();
		nl_replay_free(&rp);
	}
	fuzz_xa(data, size);
	return 0;
}

#ifdef NL_FUZZ_SEEDS
#include <stdio.h>

int
main(int argc, char **argv)
{
	struct nl_auth_tx tx;

	if (argc != 2)
		return 2;
	nl_auth_tx_init(&tx, &key);
	for (unsigned int t = 1; t < NL_MSG_TYPE_MAX; t++) {
		struct nl_msg m;
		uint8_t b[NL_PROTO_MAX_LEN];
		char path[4096];

		memset(&m, 0, sizeof(m));
		m.type = (uint8_t)t;
		m.u.submit.n_split = 1; /* also dispatch's task_id etc.: any value */
		if (t == NL_MSG_DISPATCH)
			m.u.dispatch.n_split = 1;
		if (t == NL_MSG_REJECT)
			m.u.reply.reason = 1;
		if (t == NL_MSG_HELLO || t == NL_MSG_LOAD) {
			m.u.hello.n_mach = 1;
			m.u.hello.mach[0].speed_ips = 1;
			m.u.hello.mach[0].link_bps = 1;
		}
		for (int sealed = 0; sealed < 4; sealed++) {
			int n;
			FILE *f;

			if (sealed >= 2) { /* #36: DISPATCH's origin block, DONE's relay block */
				if (t != NL_MSG_DISPATCH && t != NL_MSG_DONE)
					break;
				if (t == NL_MSG_DISPATCH) {
					m.u.dispatch.time_limit_ms = 1000;
					m.u.dispatch.has_origin = 1;
					m.u.dispatch.origin_seq = 9;
				} else {
					m.u.done.relay = NL_RELAY_RUNNING;
					m.u.done.run_ms = 5;
				}
			}
			n = sealed % 2 ? nl_proto_seal(&m, &tx, 1700000000000000000ull + t, b, sizeof(b)) :
					 nl_proto_encode(&m, b, sizeof(b));
			if (n <= 0)
				return 1;
			snprintf(path, sizeof(path), "%s/seed-%u-v%d%s", argv[1], t, sealed % 2 + 1,
				 sealed >= 2 ? "-origin" : "");
			f = fopen(path, "wb");
			if (f == NULL || fwrite(b, 1, (size_t)n, f) != (size_t)n)
				return 1;
			fclose(f);
		}
	}
	for (unsigned int t = NL_XA_MSG_HANDOVER; t <= NL_XA_MSG_HOLD; t++) {
		uint8_t b[NL_PROTO_MAX_LEN], s[NL_PROTO_MAX_LEN];
		char path[4096];
		int n;

		memset(&xm, 0, sizeof(xm));
		xm.type = (uint8_t)t;
		xm.from_app = 1;
		xm.n = 2;
		xm.incarnation = 42;
		xm.dgram_seq = t == NL_XA_MSG_HANDOVER || t == NL_XA_MSG_HANDBACK ? 7 : 0;
		for (unsigned int i = 0; i < 2; i++) {
			xm.u.task[i].n_split = 2; /* HANDOVER; harmless for the others' layouts */
			xm.u.task[i].args_len = (uint8_t)(3 * i);
			xm.u.task[i].args[0] = 'x';
			xm.u.task[i].flags = (uint8_t)(i * NL_XA_TF_REROUTE);
		}
		if (t != NL_XA_MSG_HANDOVER)
			memset(&xm.u, 0, sizeof(xm.u));
		if (t == NL_XA_MSG_SUMMARY)
			for (unsigned int i = 0; i < 2; i++) {
				xm.u.sum[i].src = 64 + i;
				xm.u.sum[i].created_s = 1.7e9;
				xm.u.sum[i].lifetime_s = 2;
			}
		if (t == NL_XA_MSG_HANDBACK)
			xm.u.back[1].reason = NL_XA_REASON_MOVED;
		if (t == NL_XA_MSG_ACK)
			xm.u.ack[0] = 7, xm.u.ack[1] = 8;
		if (t == NL_XA_MSG_SWIM) { /* a PING carrying one suspicion (n = 1 + updates) */
			xm.u.swim.type = 1;
			xm.u.swim.n_upd = 1;
			xm.u.swim.target = 2;
			xm.u.swim.seq = 9;
			xm.u.swim.upd[0].id = 2;
			xm.u.swim.upd[0].incarnation = 3;
			xm.u.swim.upd[0].from = 1;
			xm.u.swim.upd[0].state = 1;
		}
		if (t == NL_XA_MSG_HOLD) { /* a standby holding appliance 2's subtree and its own */
			xm.n = 1;
			xm.u.hold.held = 0x6;
		}
		n = nl_xa_encode(&xm, b, sizeof(b));
		if (n <= 0)
			return 1;
		for (int sl = 0; sl < 2; sl++) {
			int k = sl ? nl_xa_seal(b, (size_t)n, &tx, 1700000000000000000ull + t, s,
							 sizeof(s)) :
				     n;
			FILE *f;

			if (k <= 0)
				return 1;
			snprintf(path, sizeof(path), "%s/seed-xa-%u-v%d", argv[1], t, sl + 1);
			f = fopen(path, "wb");
			if (f == NULL || fwrite(sl ? s : b, 1, (size_t)k, f) != (size_t)k)
				return 1;
			fclose(f);
		}
	}
	return 0;
}
#endif
