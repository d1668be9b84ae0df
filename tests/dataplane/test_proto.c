/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire protocol parser (dataplane/wire/nl_proto.h): round trips, and every kind of bad input is
 * refused with its reason: truncated, oversized, wrong version, wrong type, out-of-bound
 * fields, random bytes; frame parser on Ethernet/IPv4/UDP. TAP; NL_TEST_SEED for the random
 * part.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_proto.h"
#include "nl_tap.h"


static uint64_t rs;

static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static struct nl_msg
sample(uint8_t type)
{
	struct nl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	switch (type) {
	case NL_MSG_SUBMIT:
		m.u.submit.task_id = 0x1122334455667788ull;
		m.u.submit.need = 0x5;
		m.u.submit.instr = 32000000000ull;
		m.u.submit.data_bits = 400000000ull;
		m.u.submit.client_ts_ns = 123456789ull;
		m.u.submit.n_split = 4;
		m.u.submit.cmd_id = 3;
		m.u.submit.args_len = 4;
		memcpy(m.u.submit.args, "a\0bc", 4);
		break;
	case NL_MSG_ACCEPT:
	case NL_MSG_REJECT:
	case NL_MSG_COMPLETE:
		m.u.reply.task_id = 42;
		m.u.reply.client_ts_ns = 7;
		if (type == NL_MSG_REJECT)
			m.u.reply.reason = 3;
		if (type == NL_MSG_COMPLETE) {
			m.u.reply.n_done = 4;
			m.u.reply.status = -2;
			m.u.reply.resp_us = 1234;
		}
		break;
	case NL_MSG_DISPATCH:
		m.u.dispatch.task_id = 9;
		m.u.dispatch.instr = 8000000000ull;
		m.u.dispatch.data_bits = 100;
		m.u.dispatch.mach = 1;
		m.u.dispatch.token = 77;
		m.u.dispatch.sub = 3;
		m.u.dispatch.n_split = 4;
		m.u.dispatch.cmd_id = 2;
		m.u.dispatch.args_len = 1;
		m.u.dispatch.args[0] = 'x';
		break;
	case NL_MSG_DONE:
		m.u.done.task_id = 9;
		m.u.done.mach = 1;
		m.u.done.token = 77;
		m.u.done.sub = 3;
		m.u.done.status = 7;
		break;
	case NL_MSG_HELLO:
	case NL_MSG_LOAD:
		m.u.hello.worker_id = 5;
		m.u.hello.n_mach = 2;
		for (int i = 0; i < 2; i++) {
			m.u.hello.mach[i].speed_ips = 100000000ull * (i + 1);
			m.u.hello.mach[i].link_bps = 10000000;
			m.u.hello.mach[i].res_set = (uint64_t)i;
			m.u.hello.mach[i].res_any = 2;
			m.u.hello.mach[i].n_sub = (uint32_t)i;
			m.u.hello.mach[i].backlog_ns = 1000;
		}
		break;
	case NL_MSG_BYE:
		m.u.bye.worker_id = 5;
		break;
	}
	return m;
}

static void
test_round_trip_every_type(void)
{
	bool all = true;

	for (uint8_t t = 1; t < NL_MSG_TYPE_MAX; t++) {
		struct nl_msg m = sample(t), back;
		uint8_t buf[NL_PROTO_MAX_LEN];
		int n = nl_proto_encode(&m, buf, sizeof(buf));

		if (n <= 0 || nl_proto_decode(buf, (size_t)n, &back) != NL_PROTO_OK ||
		    memcmp(&m, &back, sizeof(m)) != 0) {
			printf("# type %s failed (n=%d)\n", nl_msg_type_name(t), n);
			all = false;
		}
	}
	nl_tap_check(all, "test_round_trip_every_type");
}

static void
test_header_is_network_order(void)
{
	struct nl_msg m = sample(NL_MSG_SUBMIT);
	uint8_t buf[NL_PROTO_MAX_LEN];
	int n = nl_proto_encode(&m, buf, sizeof(buf));

	nl_tap_check(n == 8 + 48 + 4 && buf[0] == 0x4e && buf[1] == 0x4c && buf[2] == NL_PROTO_VERSION &&
		   buf[3] == NL_MSG_SUBMIT && buf[4] == 0 && buf[5] == n && buf[8] == 0x11 &&
		   buf[15] == 0x88,
	   "test_header_is_network_order");
}

static void
test_truncated_frames_are_refused(void)
{
	bool all = true;

	for (uint8_t t = 1; t < NL_MSG_TYPE_MAX; t++) {
		struct nl_msg m = sample(t), out;
		uint8_t buf[NL_PROTO_MAX_LEN];
		int n = nl_proto_encode(&m, buf, sizeof(buf));

		for (int len = 0; len < n; len++) {
			enum nl_proto_err e = nl_proto_decode(buf, (size_t)len, &out);

			if (e != NL_PROTO_E_TRUNC) {
				printf("# %s cut to %d: %s\n", nl_msg_type_name(t), len,
				       nl_proto_err_name(e));
				all = false;
			}
		}
	}
	nl_tap_check(all, "test_truncated_frames_are_refused");
}

static void
test_oversized_frames_are_refused(void)
{
	struct nl_msg m = sample(NL_MSG_DONE), out;
	uint8_t buf[NL_PROTO_MAX_LEN + 100];
	int n = nl_proto_encode(&m, buf, sizeof(buf));

	memset(buf + n, 0, 100);
	nl_tap_check(nl_proto_decode(buf, (size_t)n + 1, &out) == NL_PROTO_E_OVERSIZE &&
		   nl_proto_decode(buf, NL_PROTO_MAX_LEN + 1, &out) == NL_PROTO_E_OVERSIZE,
	   "test_oversized_frames_are_refused");
	/* length field larger than the message body: the declared content is checked too */
	buf[5] = (uint8_t)(n + 1);
	nl_tap_check(nl_proto_decode(buf, (size_t)n + 1, &out) == NL_PROTO_E_OVERSIZE,
	   "test_length_field_beyond_body_is_oversized");
}

static void
test_wrong_version_magic_type(void)
{
	struct nl_msg m = sample(NL_MSG_BYE), out;
	uint8_t buf[64];
	int n = nl_proto_encode(&m, buf, sizeof(buf));

	buf[2] = 2;
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_VERSION, "test_wrong_version_is_refused");
	buf[2] = NL_PROTO_VERSION;
	buf[0] = 'X';
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_MAGIC, "test_wrong_magic_is_refused");
	buf[0] = 0x4e;
	bool all = true;

	for (unsigned int t = 0; t < 256; t++) {
		if ((t >= 1 && t < NL_MSG_TYPE_MAX) || nl_farm_type(t)) /* farm: test_farm_proto */
			continue;
		buf[3] = (uint8_t)t;
		all &= nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_TYPE;
	}
	nl_tap_check(all, "test_unknown_types_are_refused");
}

static void
test_out_of_bound_fields(void)
{
	struct nl_msg m;
	uint8_t buf[NL_PROTO_MAX_LEN];
	struct nl_msg out;
	int n;

	m = sample(NL_MSG_SUBMIT);
	m.u.submit.n_split = 0;
	nl_tap_check(nl_proto_encode(&m, buf, sizeof(buf)) == -22, "test_encode_refuses_split_zero");
	m.u.submit.n_split = 65;
	nl_tap_check(nl_proto_encode(&m, buf, sizeof(buf)) == -22, "test_encode_refuses_split_65");
	m = sample(NL_MSG_SUBMIT);
	n = nl_proto_encode(&m, buf, sizeof(buf));
	buf[8 + 40] = 0;
	buf[8 + 41] = 65; /* n_split = 65 on the wire */
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD, "test_split_65_is_bad_field");
	n = nl_proto_encode(&m, buf, sizeof(buf));
	buf[8 + 44] = 65; /* args_len */
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD, "test_args_len_65_is_bad_field");
	n = nl_proto_encode(&m, buf, sizeof(buf));
	buf[7] = 1; /* reserved */
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD, "test_reserved_nonzero_is_bad_field");
	m = sample(NL_MSG_DISPATCH);
	m.u.dispatch.sub = 4; /* >= n_split */
	nl_tap_check(nl_proto_encode(&m, buf, sizeof(buf)) == -22, "test_dispatch_sub_beyond_split_refused");
	m = sample(NL_MSG_HELLO);
	m.u.hello.mach[1].speed_ips = 0;
	nl_tap_check(nl_proto_encode(&m, buf, sizeof(buf)) == -22, "test_hello_zero_speed_refused");
	m = sample(NL_MSG_HELLO);
	m.u.hello.mach[0].res_set = 2; /* both held and '*' */
	nl_tap_check(nl_proto_encode(&m, buf, sizeof(buf)) == -22, "test_hello_set_and_any_refused");
	m = sample(NL_MSG_HELLO); /* #36: "join again" only within a reply */
	m.u.hello.flags = NL_HELLO_F_REPLY | NL_HELLO_F_REJOIN;
	n = nl_proto_encode(&m, buf, sizeof(buf));
	nl_tap_check(n > 0 && nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_OK &&
			     out.u.hello.flags == (NL_HELLO_F_REPLY | NL_HELLO_F_REJOIN) &&
			     (buf[8 + 7] = NL_HELLO_F_REJOIN,
			      nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD) &&
			     (buf[8 + 7] = 8, nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD),
		     "test_hello_rejoin_flag_only_in_a_reply");
	m = sample(NL_MSG_HELLO); /* #36: a failing-over worker's HELLO, never a reply's flag */
	for (unsigned int i = 0; i < m.u.hello.n_mach; i++)
		m.u.hello.mach[i].slot = 0;
	m.u.hello.flags = NL_HELLO_F_FAILOVER;
	n = nl_proto_encode(&m, buf, sizeof(buf));
	nl_tap_check(n > 0 && nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_OK &&
			     out.u.hello.flags == NL_HELLO_F_FAILOVER &&
			     (buf[8 + 7] = NL_HELLO_F_FAILOVER | NL_HELLO_F_REPLY,
			      nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD) &&
			     (buf[3] = NL_MSG_LOAD, buf[8 + 7] = NL_HELLO_F_FAILOVER,
			      nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD),
		     "test_hello_failover_flag_only_on_a_workers_hello");
	m = sample(NL_MSG_HELLO); /* #36: "made known here" only within a reply */
	m.u.hello.flags = NL_HELLO_F_REPLY | NL_HELLO_F_NEW;
	n = nl_proto_encode(&m, buf, sizeof(buf));
	nl_tap_check(n > 0 && nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_OK &&
			     out.u.hello.flags == (NL_HELLO_F_REPLY | NL_HELLO_F_NEW) &&
			     (buf[8 + 7] = NL_HELLO_F_NEW,
			      nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD),
		     "test_hello_new_flag_only_in_a_reply");
	m = sample(NL_MSG_LOAD);
	m.u.hello.n_mach = NL_PROTO_MAX_MACH + 1;
	nl_tap_check(nl_proto_encode(&m, buf, sizeof(buf)) == -22, "test_load_too_many_machines_refused");
	m = sample(NL_MSG_REJECT);
	m.u.reply.reason = 0;
	nl_tap_check(nl_proto_encode(&m, buf, sizeof(buf)) == -22, "test_reject_without_reason_refused");
	m = sample(NL_MSG_BYE);
	nl_tap_check(nl_proto_encode(&m, buf, 8) == -28, "test_encode_short_buffer_is_enospc");
}

/* Issue #33: DISPATCH's time_limit_ms and DONE's state, run, queue, CPU and peak memory are
 * appended to the body only when not 0; a body without them (an older sender) decodes as 0,
 * one with them all 0 is not canonical (bad_field), and their bounds hold. */
static void
test_issue33_fields(void)
{
	struct nl_msg m, out;
	uint8_t buf[NL_PROTO_MAX_LEN], b0[NL_PROTO_MAX_LEN];
	int n, n0;
	bool ok;

	m = sample(NL_MSG_DISPATCH);
	n0 = nl_proto_encode(&m, b0, sizeof(b0));
	m.u.dispatch.time_limit_ms = 2000;
	n = nl_proto_encode(&m, buf, sizeof(buf));
	ok = n == n0 + 4 && memcmp(buf + 6, b0 + 6, (size_t)n0 - 6) == 0 &&
	     nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_OK &&
	     memcmp(&out, &m, sizeof(m)) == 0 && buf[n - 2] == 0x07 && buf[n - 1] == 0xd0;
	ok &= nl_proto_decode(b0, (size_t)n0, &out) == NL_PROTO_OK &&
	      out.u.dispatch.time_limit_ms == 0;
	nl_tap_check(ok, "test_dispatch_time_limit_round_trips_and_is_absent_when_0");
	memset(buf + n - 4, 0, 4);
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD,
		     "test_dispatch_time_limit_0_on_the_wire_is_bad_field");
	buf[5] = (uint8_t)(n + 2);
	nl_tap_check(nl_proto_decode(buf, (size_t)n + 2, &out) == NL_PROTO_E_OVERSIZE,
		     "test_dispatch_2_extra_bytes_oversized");

	m = sample(NL_MSG_DONE);
	n0 = nl_proto_encode(&m, b0, sizeof(b0));
	m.u.done.state = NL_DONE_TIMEOUT;
	m.u.done.run_ms = 2001;
	m.u.done.queue_ms = 17;
	m.u.done.cpu_ms = 1500;
	m.u.done.mem_peak_kib = 65536;
	n = nl_proto_encode(&m, buf, sizeof(buf));
	ok = n0 == 32 && n == 52 && memcmp(buf + 6, b0 + 6, 26) == 0 && buf[32] == 1 &&
	     nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_OK && memcmp(&out, &m, sizeof(m)) == 0;
	ok &= nl_proto_decode(b0, (size_t)n0, &out) == NL_PROTO_OK && out.u.done.state == 0 &&
	      out.u.done.run_ms == 0 && out.u.done.mem_peak_kib == 0;
	for (unsigned int f = 0; f < 5; f++) { /* each field alone makes the 20 bytes appear */
		struct nl_msg x = sample(NL_MSG_DONE);

		if (f == 0)
			x.u.done.state = NL_DONE_OOM;
		else
			*(f == 1 ? &x.u.done.run_ms : f == 2 ? &x.u.done.queue_ms :
			  f == 3 ? &x.u.done.cpu_ms : &x.u.done.mem_peak_kib) = 1;
		ok &= nl_proto_encode(&x, b0, sizeof(b0)) == 52 &&
		      nl_proto_decode(b0, 52, &out) == NL_PROTO_OK && memcmp(&out, &x, sizeof(x)) == 0;
	}
	nl_tap_check(ok, "test_done_state_and_usage_round_trip_and_are_absent_when_0");
	n = nl_proto_encode(&m, buf, sizeof(buf));
	buf[32] = NL_DONE_STATE_MAX;
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD,
		     "test_done_unknown_state_is_bad_field");
	buf[32] = 0;
	buf[33] = 1; /* pad */
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD,
		     "test_done_pad_nonzero_is_bad_field");
	memset(buf + 32, 0, 20);
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD,
		     "test_done_all_zero_extension_is_bad_field");
	m.u.done.state = NL_DONE_STATE_MAX;
	nl_tap_check(nl_proto_encode(&m, buf, sizeof(buf)) == -22, "test_done_encode_refuses_bad_state");
}

static void
test_random_bytes_never_crash_and_canonical(uint64_t seed)
{
	uint8_t buf[NL_PROTO_MAX_LEN + 8], re[NL_PROTO_MAX_LEN];
	unsigned int accepted = 0, noncanon = 0;

	rs = seed | 1;
	for (unsigned int i = 0; i < 200000; i++) {
		size_t len = rnd() % (sizeof(buf) + 1);
		struct nl_msg m;

		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)rnd();
		if (i & 1) { /* a plausible header so the body checks run too */
			struct nl_msg s = sample((uint8_t)(1 + rnd() % (NL_MSG_TYPE_MAX - 1)));
			int n = nl_proto_encode(&s, buf, sizeof(buf));

			len = (size_t)n;
			buf[8 + rnd() % (size_t)(n - 8 > 0 ? n - 8 : 1)] ^= (uint8_t)(1u << (rnd() % 8));
		}
		if (nl_proto_decode(buf, len, &m) == NL_PROTO_OK) {
			int n = nl_proto_encode(&m, re, sizeof(re));

			accepted++;
			if (n != (int)len || memcmp(re, buf, len) != 0)
				noncanon++;
		}
	}
	printf("# %u of 200000 random frames parsed; all re-encode to the same bytes: %s\n",
	       accepted, noncanon ? "no" : "yes");
	nl_tap_check(noncanon == 0, "test_random_bytes_never_crash_and_accepted_ones_are_canonical");
}

static void
test_frame_parser(void)
{
	uint8_t f[NL_FRAME_HDR_LEN + NL_PROTO_MAX_LEN];
	struct nl_frame_addr a = {
		.src_mac = { 2, 0, 0, 0, 0, 1 },
		.dst_mac = { 2, 0, 0, 0, 0, 2 },
		.src_ip = 0x0100000a,
		.dst_ip = 0x0200000a,
		.src_port = 5555,
		.dst_port = NL_PROTO_PORT,
	};
	struct nl_frame_addr b;
	struct nl_msg m = sample(NL_MSG_SUBMIT), out;
	const uint8_t *pl;
	size_t plen;
	int n = nl_proto_encode(&m, f + NL_FRAME_HDR_LEN, NL_PROTO_MAX_LEN);
	int fl = nl_frame_build(f, &a, (size_t)n);

	nl_tap_check(nl_frame_parse(f, (size_t)fl, NL_PROTO_PORT, &b, &pl, &plen) == NL_PROTO_OK &&
		   plen == (size_t)n && b.src_ip == a.src_ip && b.src_port == 5555 &&
		   memcmp(b.src_mac, a.src_mac, 6) == 0 &&
		   nl_proto_decode(pl, plen, &out) == NL_PROTO_OK,
	   "test_frame_round_trip");
	nl_tap_check(nl_frame_parse(f, (size_t)fl, 9999, &b, &pl, &plen) == NL_PROTO_E_PORT,
	   "test_frame_wrong_port_refused");
	f[24] ^= 0xff; /* IPv4 checksum */
	nl_tap_check(nl_frame_parse(f, (size_t)fl, 0, &b, &pl, &plen) == NL_PROTO_E_IP,
	   "test_frame_bad_ip_checksum_refused");
	f[24] ^= 0xff;
	f[12] = 0x86;
	f[13] = 0xdd;
	nl_tap_check(nl_frame_parse(f, (size_t)fl, 0, &b, &pl, &plen) == NL_PROTO_E_ETH,
	   "test_frame_ipv6_refused");
	f[12] = 0x08;
	f[13] = 0x00;
	bool all = true;

	for (unsigned int len = 0; len < NL_FRAME_HDR_LEN; len++)
		all &= nl_frame_parse(f, (size_t)len, 0, &b, &pl, &plen) != NL_PROTO_OK;
	nl_tap_check(all, "test_truncated_frame_headers_refused");
	f[20] = 0x20; /* more fragments */
	nl_tap_check(nl_frame_parse(f, (size_t)fl, 0, &b, &pl, &plen) == NL_PROTO_E_IP,
	   "test_fragments_refused");
	f[20] = 0x40;
	f[23] = 6; /* TCP */
	nl_tap_check(nl_frame_parse(f, (size_t)fl, 0, &b, &pl, &plen) != NL_PROTO_OK,
	   "test_non_udp_refused");
}

/* Issue #36: DISPATCH's origin block (16 bytes after the time limit) and DONE's relay block (12
 * bytes after the #33 fields) are present only when set; every combination with the optional
 * fields before them round-trips; a relay kind of 0 or past the last, or a DISPATCH length
 * between the legal ones is refused. */
static void
test_issue36_origin_and_relay(void)
{
	struct nl_msg m, out;
	uint8_t buf[NL_PROTO_MAX_LEN], b0[NL_PROTO_MAX_LEN];
	int n, n0;
	bool ok = true;

	for (unsigned int tl = 0; tl < 2; tl++) {
		m = sample(NL_MSG_DISPATCH);
		m.u.dispatch.time_limit_ms = tl ? 5000 : 0;
		n0 = nl_proto_encode(&m, b0, sizeof(b0));
		m.u.dispatch.has_origin = 1;
		m.u.dispatch.origin_app = 2;
		m.u.dispatch.origin_port = 7477;
		m.u.dispatch.origin_ip = htonl(0x0a620001); /* 10.98.0.1 */
		m.u.dispatch.origin_token = 0x01020304;
		m.u.dispatch.origin_seq = 0xa0b0c0d0;
		n = nl_proto_encode(&m, buf, sizeof(buf));
		ok &= n == n0 + 16 && nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_OK &&
		      memcmp(&out, &m, sizeof(m)) == 0 && buf[n - 1] == 0xd0 && buf[n - 15] == 2 &&
		      buf[n - 12] == 10 && buf[n - 9] == 1;
		ok &= nl_proto_decode(b0, (size_t)n0, &out) == NL_PROTO_OK && !out.u.dispatch.has_origin;
	}
	nl_tap_check(ok, "test_dispatch_origin_round_trips_with_and_without_time_limit");
	m = sample(NL_MSG_DISPATCH);
	n0 = nl_proto_encode(&m, b0, sizeof(b0));
	ok = true;
	for (unsigned int extra = 1; extra < 28; extra++) { /* only +4, +16, +20 are legal */
		uint8_t x[NL_PROTO_MAX_LEN] = { 0 };

		if (extra == 4 || extra == 16 || extra == 20)
			continue;
		memcpy(x, b0, (size_t)n0);
		x[4] = (uint8_t)((n0 + extra) >> 8);
		x[5] = (uint8_t)(n0 + extra);
		ok &= nl_proto_decode(x, (size_t)n0 + extra, &out) != NL_PROTO_OK;
	}
	nl_tap_check(ok, "test_dispatch_lengths_between_the_legal_ones_refused");

	ok = true;
	for (unsigned int ext = 0; ext < 2; ext++) {
		m = sample(NL_MSG_DONE);
		m.u.done.run_ms = ext ? 1234 : 0;
		n0 = nl_proto_encode(&m, b0, sizeof(b0));
		m.u.done.relay = NL_RELAY_RUNNING;
		m.u.done.origin_app = 1;
		m.u.done.origin_token = 77;
		m.u.done.origin_seq = 99;
		n = nl_proto_encode(&m, buf, sizeof(buf));
		ok &= n == n0 + 12 && nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_OK &&
		      memcmp(&out, &m, sizeof(m)) == 0 && n == (ext ? 64 : 44);
		ok &= nl_proto_decode(b0, (size_t)n0, &out) == NL_PROTO_OK && out.u.done.relay == 0;
	}
	nl_tap_check(ok, "test_done_relay_round_trips_with_and_without_issue33_fields");
	buf[n - 10] = 0; /* relay kind 0 in a block that is there */
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD,
		     "test_done_relay_kind_0_on_the_wire_is_bad_field");
	buf[n - 10] = NL_RELAY_MAX;
	nl_tap_check(nl_proto_decode(buf, (size_t)n, &out) == NL_PROTO_E_FIELD,
		     "test_done_relay_kind_past_the_last_is_bad_field");
	m.u.done.relay = NL_RELAY_MAX;
	nl_tap_check(nl_proto_encode(&m, buf, sizeof(buf)) == -22,
		     "test_done_relay_kind_past_the_last_not_encoded");
}

int
main(void)
{
	const char *s = getenv("NL_TEST_SEED");
	uint64_t seed = s != NULL ? strtoull(s, NULL, 0) : 0x5eed;

	printf("# seed %llu (NL_TEST_SEED)\n", (unsigned long long)seed);
	test_round_trip_every_type();
	test_header_is_network_order();
	test_truncated_frames_are_refused();
	test_oversized_frames_are_refused();
	test_wrong_version_magic_type();
	test_out_of_bound_fields();
	test_issue33_fields();
	test_issue36_origin_and_relay();
	test_random_bytes_never_crash_and_canonical(seed);
	test_frame_parser();
	return nl_tap_done();
}
