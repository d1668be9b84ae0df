/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BM_frame_parse: the appliance's ingress work per frame with the wire parser of dataplane/
 * (nl_proto.h): nl_frame_parse() (Ethernet, IPv4 with checksum, UDP, port) then
 * nl_proto_decode() of the payload. msg 0 = SUBMIT (a task, no command arguments),
 * 1 = DONE (a sub-task finished, from a worker). 64 distinct frames are replayed round
 * robin; items = frames. Built only when dataplane/ is in the build (nl_proto_dep).
 */
#include <cstring>
#include <vector>

#include <arpa/inet.h>

#include "bm_common.h"

#include <sodium.h>

#include "bm_frame.h"
#include "nl_proto.h"

static void
BM_frame_parse(benchmark::State &st)
{
	const bool done = st.range(0) != 0;
	constexpr unsigned int n_frame = 64;
	std::vector<std::vector<uint8_t>> fr(n_frame);
	uint64_t n = 0, sink = 0;

	if (!bm_frames_build(nullptr, 0, done, fr)) {
		st.SkipWithError("nl_proto_seal / nl_frame_build failed");
		return;
	}
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		const std::vector<uint8_t> &f = fr[n & (n_frame - 1)];
		struct nl_frame_addr a;
		const uint8_t *pl;
		size_t plen;
		struct nl_msg m;

		if (nl_frame_parse(f.data(), f.size(), NL_PROTO_PORT, &a, &pl, &plen) != NL_PROTO_OK ||
		    nl_proto_decode(pl, plen, &m) != NL_PROTO_OK) {
			st.SkipWithError("a valid frame did not parse");
			break;
		}
		sink += m.type;
		n++;
	}
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, nl_bm_tsc() - t0, n);
}
BENCHMARK(BM_frame_parse)->ArgName("msg")->DenseRange(0, 1);

/*
 * BM_frame_auth: what --key adds per received frame (docs/protocol.md "Authentication"):
 * nl_auth_verify() (SipHash-2-4-128 over header and body, constant-time compare) then
 * nl_replay_check() (the sender's window). msg 0 = SUBMIT, 1 = DONE, as sealed frames (UDP
 * payloads) of one sender; each iteration checks a fresh sequence number (as live traffic
 * does: a repeated one would be refused). BM_frame_parse_auth: the whole keyed ingress,
 * nl_frame_parse() + verify + replay check + nl_proto_decode_sealed(). items = frames.
 */
static void
frame_auth(benchmark::State &st, bool whole)
{
	const bool done = st.range(0) != 0;
	constexpr unsigned int n_frame = 64;
	constexpr uint64_t t_base = 1700000000000000000ULL;
	std::vector<std::vector<uint8_t>> fr(n_frame);
	struct nl_auth_key key;
	struct nl_auth_tx tx;
	struct nl_replay rp;
	uint64_t n = 0, sink = 0;

	for (unsigned int i = 0; i < NL_AUTH_KEY_LEN; i++)
		key.k[i] = (uint8_t)(i * 37 + 1);
	nl_auth_tx_init(&tx, &key);
	if (nl_replay_init(&rp, 4096) != 0) {
		st.SkipWithError("nl_replay_init failed");
		return;
	}
	if (!bm_frames_build(&tx, t_base, done, fr)) {
		st.SkipWithError("nl_proto_seal / nl_frame_build failed");
		nl_replay_free(&rp);
		return;
	}
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		const std::vector<uint8_t> &f = fr[n & (n_frame - 1)];
		const uint8_t *pl = f.data() + NL_FRAME_HDR_LEN;
		size_t plen = f.size() - NL_FRAME_HDR_LEN;
		struct nl_frame_addr a;
		uint64_t sender, seq;
		struct nl_msg m;
		bool ok;

		if (whole && nl_frame_parse(f.data(), f.size(), NL_PROTO_PORT, &a, &pl, &plen) !=
				     NL_PROTO_OK) {
			st.SkipWithError("a valid frame did not parse");
			break;
		}
		ok = nl_auth_verify(&key, pl, plen, &sender, &seq) == NL_PROTO_OK &&
		     nl_replay_check(&rp, sender, t_base + n, t_base + n) == NL_PROTO_OK;
		if (ok && whole)
			ok = nl_proto_decode_sealed(pl, plen, &m) == NL_PROTO_OK;
		if (!ok) {
			st.SkipWithError("a sealed frame did not verify");
			break;
		}
		sink += seq + (whole ? m.type : 0);
		n++;
	}
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, nl_bm_tsc() - t0, n);
	nl_replay_free(&rp);
}

static void
BM_frame_auth(benchmark::State &st)
{
	frame_auth(st, false);
}
BENCHMARK(BM_frame_auth)->ArgName("msg")->DenseRange(0, 1);

static void
BM_frame_parse_auth(benchmark::State &st)
{
	frame_auth(st, true);
}
BENCHMARK(BM_frame_parse_auth)->ArgName("msg")->DenseRange(0, 1);

/*
 * BM_mac: the MAC alone over the bytes a sealed SUBMIT authenticates (72 = 56-byte message +
 * sender + seq): kind 0 = SipHash-2-4-128 (what version 2 uses), 1 = keyed BLAKE2b-128
 * (libsodium crypto_generichash with a key, the alternative the issue names). Why the
 * protocol uses SipHash: docs/protocol.md "Authentication".
 */
static void
BM_mac(benchmark::State &st)
{
	const bool blake = st.range(0) != 0;
	uint8_t key[32], msg[72], tag[16];
	uint64_t n = 0, sink = 0;

	for (unsigned int i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 7 + 3);
	for (unsigned int i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		msg[0] = (uint8_t)n;
		if (blake)
			crypto_generichash(tag, sizeof(tag), msg, sizeof(msg), key, 16);
		else
			crypto_shorthash_siphashx24(tag, msg, sizeof(msg), key);
		sink += tag[0];
		n++;
	}
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, nl_bm_tsc() - t0, n);
}
BENCHMARK(BM_mac)->ArgName("blake2b")->DenseRange(0, 1);

/*
 * BM_frame_seal: the appliance's cost per frame it sends, a DISPATCH (no arguments): auth 0 =
 * nl_proto_encode() (version 1), 1 = nl_proto_seal() (version 2: encode + trailer + MAC).
 * items = frames.
 */
static void
BM_frame_seal(benchmark::State &st)
{
	const bool auth = st.range(0) != 0;
	struct nl_auth_key key;
	struct nl_auth_tx tx;
	struct nl_msg m;
	uint8_t out[NL_PROTO_MAX_LEN];
	uint64_t n = 0, sink = 0;

	for (unsigned int i = 0; i < NL_AUTH_KEY_LEN; i++)
		key.k[i] = (uint8_t)(i * 37 + 1);
	nl_auth_tx_init(&tx, &key);
	memset(&m, 0, sizeof(m));
	m.type = NL_MSG_DISPATCH;
	m.u.dispatch.instr = 2000000000ULL;
	m.u.dispatch.n_split = 4;
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		int len;

		m.u.dispatch.task_id = n;
		m.u.dispatch.sub = (uint16_t)(n & 3);
		len = auth ? nl_proto_seal(&m, &tx, 1700000000000000000ULL + n, out, sizeof(out)) :
			     nl_proto_encode(&m, out, sizeof(out));
		if (len <= 0) {
			st.SkipWithError("encode failed");
			break;
		}
		sink += out[len - 1];
		n++;
	}
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, nl_bm_tsc() - t0, n);
}
BENCHMARK(BM_frame_seal)->ArgName("auth")->DenseRange(0, 1);
