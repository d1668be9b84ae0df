/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frames the frame benchmarks replay (bm_frame.cc, bm_principal.cc): the i-th body of a
 * run, a SUBMIT as loadgen sends or a worker's DONE, from a client at 10.0.0.2:40000 to the
 * appliance at 10.0.0.1, built into whole Ethernet/IPv4/UDP frames.
 */
#ifndef BM_FRAME_H
#define BM_FRAME_H

#include <cstring>
#include <vector>

#include <arpa/inet.h>

#include "nl_proto.h"

/* The i-th frame body of a run: a SUBMIT as loadgen sends, or a worker's DONE. */
static inline struct nl_msg
bm_frame_msg(bool done, unsigned int i)
{
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
	return m;
}

/* fr.size() whole frames of bm_frame_msg(done, i): version 1 when tx is NULL, else sealed by
 * tx at t_base [ns] (version 2). false when a body or frame cannot be built. */
static inline bool
bm_frames_build(struct nl_auth_tx *tx, uint64_t t_base, bool done,
		std::vector<std::vector<uint8_t>> &fr)
{
	struct nl_frame_addr addr = {};

	addr.src_ip = htonl(0x0a000002);
	addr.dst_ip = htonl(0x0a000001);
	addr.src_port = 40000;
	addr.dst_port = NL_PROTO_PORT;
	for (unsigned int i = 0; i < fr.size(); i++) {
		struct nl_msg m = bm_frame_msg(done, i);

		fr[i].assign(NL_FRAME_HDR_LEN + NL_PROTO_MAX_LEN, 0);
		int plen = nl_proto_seal(&m, tx, t_base, fr[i].data() + NL_FRAME_HDR_LEN,
					 NL_PROTO_MAX_LEN);
		int flen = plen < 0 ? plen : nl_frame_build(fr[i].data(), &addr, (size_t)plen);

		if (flen < 0)
			return false;
		fr[i].resize((size_t)flen);
	}
	return true;
}

#endif /* BM_FRAME_H */
