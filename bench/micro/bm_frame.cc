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

#include "nl_proto.h"

static void
BM_frame_parse(benchmark::State &st)
{
	const bool done = st.range(0) != 0;
	constexpr unsigned int n_frame = 64;
	std::vector<std::vector<uint8_t>> fr(n_frame);
	struct nl_frame_addr addr = {};
	uint64_t n = 0, sink = 0;

	addr.src_ip = htonl(0x0a000002);
	addr.dst_ip = htonl(0x0a000001);
	addr.src_port = 40000;
	addr.dst_port = NL_PROTO_PORT;
	for (unsigned int i = 0; i < n_frame; i++) {
		struct nl_msg m;

		memset(&m, 0, sizeof(m));
		if (done) {
			m.type = NL_MSG_DONE;
			m.u.done.task_id = 1000 + i;
			m.u.done.mach = i % 8;
			m.u.done.token = i;
		} else {
			m.type = NL_MSG_SUBMIT;
			m.u.submit.task_id = 1000 + i;
			m.u.submit.need = i & 15;
			m.u.submit.instr = 8000000000ULL;
			m.u.submit.data_bits = 100000000ULL;
			m.u.submit.n_split = 4;
		}
		fr[i].assign(NL_FRAME_HDR_LEN + NL_PROTO_MAX_LEN, 0);
		int plen = nl_proto_encode(&m, fr[i].data() + NL_FRAME_HDR_LEN, NL_PROTO_MAX_LEN);
		int flen = plen < 0 ? plen : nl_frame_build(fr[i].data(), &addr, (size_t)plen);

		if (flen < 0) {
			st.SkipWithError("nl_proto_encode / nl_frame_build failed");
			return;
		}
		fr[i].resize((size_t)flen);
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
