// SPDX-License-Identifier: BSD-3-Clause
/*
 * Issue #16: authentication of one frame when the appliance has principals (--principals):
 * what nl_principals_open() does per frame at the I/O lcore, i.e. the sender id read from the
 * trailer, its principal found (nl_principals_find(), a hash probe among 64 principals), the
 * MAC verified under that principal's key, the rights table (role x type), the replay window
 * of that principal checked (a fresh seq per frame, as a live sender's would be). msg 0 = a SUBMIT of
 * submitter "user7", 1 = a DONE of worker "user7". BM_frame_parse_auth_principal adds the
 * frame parse and the body decode (the whole keyed ingress). items = frames. Compare with
 * BM_frame_auth / BM_frame_parse (bm_frame.cc, site key only) in the same run.
 */
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include <arpa/inet.h>
#include <unistd.h>

#include "bm_common.h"

#include "nl_principal.h"
#include "bm_frame.h"
#include "nl_proto.h"

static void
frame_auth_principal(benchmark::State &st, bool whole)
{
	const bool done = st.range(0) != 0;
	constexpr unsigned int n_frame = 64;
	constexpr uint64_t t_base = 1700000000000000000ULL;
	static struct nl_principals ps;
	std::vector<std::vector<uint8_t>> fr(n_frame);
	struct nl_auth_key site;
	struct nl_auth_tx tx;
	struct nl_replay rp;
	char path[] = "/tmp/nl-bm-principals-XXXXXX", err[256];
	uint64_t n = 0, sink = 0;
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : nullptr;

	for (unsigned int i = 0; i < NL_AUTH_KEY_LEN; i++)
		site.k[i] = (uint8_t)(i * 37 + 1);
	if (f == nullptr) {
		st.SkipWithError("cannot write the principals file");
		return;
	}
	for (unsigned int i = 0; i < 64; i++)
		fprintf(f, "[submitter user%u]\n[worker user%u]\nslots = *\n", i, i);
	fclose(f);
	int rc = nl_principals_load(&ps, path, &site, 64, err, sizeof(err));
	unlink(path);
	if (rc != 0 || nl_principals_replay_init(&ps, &rp) != 0) {
		st.SkipWithError("nl_principals_load / nl_principals_replay_init failed");
		return;
	}
	const int me = nl_principals_find(&ps, (uint64_t)nl_principal_id("user7") << 32);

	nl_auth_tx_init_principal(&tx, &ps.p[me].key, "user7");
	if (!bm_frames_build(&tx, t_base, done, fr)) {
		st.SkipWithError("nl_proto_seal / nl_frame_build failed");
		nl_replay_free(&rp);
		return;
	}
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		const std::vector<uint8_t> &fv = fr[n & (n_frame - 1)];
		const uint8_t *pl = fv.data() + NL_FRAME_HDR_LEN;
		size_t plen = fv.size() - NL_FRAME_HDR_LEN;
		struct nl_frame_addr a;
		uint64_t sender = 0, seq;
		struct nl_msg m;
		bool ok;

		if (whole && nl_frame_parse(fv.data(), fv.size(), NL_PROTO_PORT, &a, &pl, &plen) !=
				     NL_PROTO_OK) {
			st.SkipWithError("a valid frame did not parse");
			break;
		}
		/* as nl_principals_open(): the sender id names the key; the MAC, the body (whole
		 * only; the type is the header's byte 3 either way), the rights table, the window
		 * of the sender's principal */
		const uint8_t *t = pl + plen - NL_AUTH_TRAILER_LEN;
		for (unsigned int i = 0; i < 8; i++)
			sender = sender << 8 | t[i];
		int k = nl_principals_find(&ps, sender);
		ok = k >= 0 &&
		     nl_auth_verify(&ps.p[k].key, pl, plen, &sender, &seq) == NL_PROTO_OK;
		if (ok && whole)
			ok = nl_proto_decode_sealed(pl, plen, &m) == NL_PROTO_OK;
		ok = ok && nl_principal_may_send(nl_principals_kind(&ps, (unsigned int)k), pl[3]) &&
		     nl_replay_check_own(&rp, (unsigned int)k, sender, t_base + n, t_base + n) ==
			     NL_PROTO_OK;
		if (!ok) {
			st.SkipWithError("a sealed frame did not verify");
			break;
		}
		sink += seq + (unsigned int)k + (whole ? m.type : 0);
		n++;
	}
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, nl_bm_tsc() - t0, n);
	nl_replay_free(&rp);
}

static void
BM_frame_auth_principal(benchmark::State &st)
{
	frame_auth_principal(st, false);
}
BENCHMARK(BM_frame_auth_principal)->ArgName("msg")->DenseRange(0, 1);

static void
BM_frame_parse_auth_principal(benchmark::State &st)
{
	frame_auth_principal(st, true);
}
BENCHMARK(BM_frame_parse_auth_principal)->ArgName("msg")->DenseRange(0, 1);
