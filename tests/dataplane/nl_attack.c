/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nl-attack: what an attacker on the network can send to an appliance started with --key
 * (tests/dataplane/test_e2e.sh). For each message type a client or worker sends (SUBMIT,
 * HELLO, LOAD, DONE, BYE):
 *   forged           sealed with a key of our own (we do not have the site key)
 *   altered          a genuine frame (as if captured) with one body byte flipped
 *   truncated_mac    a genuine frame with 8 bytes of its MAC cut, the length field told
 *   unauthenticated  the same message as protocol version 1
 * then, with --key FILE (playing the genuine sender the attacker listens to): each message
 * once, genuinely, then the captured frames again --replays times each. The genuine HELLO
 * announces a machine no slot matches (it takes no slot); the genuine DONE matches nothing.
 * Prints one line "nl-attack: forged=N altered=N truncated_mac=N unauthenticated=N genuine=N
 * replayed=N" for the test to compare with the appliance's counters.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "nl_proto.h"

static const uint8_t types[] = { NL_MSG_SUBMIT, NL_MSG_HELLO, NL_MSG_LOAD, NL_MSG_DONE,
				 NL_MSG_BYE };

static struct nl_msg
sample(uint8_t type, uint32_t wid)
{
	struct nl_msg m = { .type = type };

	switch (type) {
	case NL_MSG_SUBMIT:
		m.u.submit.task_id = 0xa77ac0ull;
		m.u.submit.instr = 1000;
		m.u.submit.n_split = 1;
		break;
	case NL_MSG_HELLO:
	case NL_MSG_LOAD:
		m.u.hello.worker_id = wid;
		m.u.hello.n_mach = 1;
		m.u.hello.mach[0].speed_ips = 1000000;
		m.u.hello.mach[0].link_bps = 1000000;
		m.u.hello.mach[0].res_set = 1ull << 40; /* no slot has resource 41 */
		break;
	case NL_MSG_DONE:
		m.u.done.task_id = 0xa77ac0ull;
		m.u.done.token = 12345;
		break;
	case NL_MSG_BYE:
		m.u.bye.worker_id = wid;
		break;
	}
	return m;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "appliance", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, 'K' },
		{ "replays", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct nl_auth_key site, own;
	struct nl_auth_tx genuine, forger;
	struct sockaddr_in app;
	bool have_app = false, have_key = false;
	unsigned int replays = 3, n_forged = 0, n_alt = 0, n_trunc = 0, n_plain = 0, n_gen = 0,
		     n_rep = 0;
	uint8_t cap[sizeof(types)][NL_PROTO_MAX_LEN];
	int cap_len[sizeof(types)];
	char err[512];
	int c, fd;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			have_app = nl_proto_parse_addr(optarg, &app) == 0;
			break;
		case 'K':
			if (nl_auth_key_load(optarg, &site, err, sizeof(err)) != 0) {
				fprintf(stderr, "nl-attack: %s\n", err);
				return 2;
			}
			have_key = true;
			break;
		case 'r':
			replays = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: nl-attack --appliance IP[:PORT] --key FILE "
					"[--replays N]\n");
			return 2;
		}
	}
	if (!have_app || !have_key) {
		fprintf(stderr, "nl-attack: --appliance and --key are required\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("nl-attack: socket");
		return 1;
	}
	nl_auth_tx_init(&genuine, &site);
	for (unsigned int i = 0; i < NL_AUTH_KEY_LEN; i++)
		own.k[i] = (uint8_t)(site.k[i] ^ 0x5a);
	nl_auth_tx_init(&forger, &own);
#define SEND(b, n) (void)sendto(fd, (b), (size_t)(n), 0, (struct sockaddr *)&app, sizeof(app))
	for (unsigned int i = 0; i < sizeof(types); i++) {
		struct nl_msg m = sample(types[i], 0xa77ac);
		uint8_t b[NL_PROTO_MAX_LEN];
		int n;

		n = nl_proto_seal(&m, &forger, nl_auth_now_ns(), b, sizeof(b));
		SEND(b, n);
		n_forged++;
		/* genuine frame, captured: the attacker alters it and cuts its MAC */
		cap_len[i] = nl_proto_seal(&m, &genuine, nl_auth_now_ns(), cap[i], sizeof(cap[i]));
		memcpy(b, cap[i], (size_t)cap_len[i]);
		b[NL_PROTO_HDR_LEN + 1] ^= 0x01;
		SEND(b, cap_len[i]);
		n_alt++;
		memcpy(b, cap[i], (size_t)cap_len[i]);
		n = cap_len[i] - 8;
		b[4] = (uint8_t)(n >> 8);
		b[5] = (uint8_t)n;
		SEND(b, n);
		n_trunc++;
		n = nl_proto_encode(&m, b, sizeof(b));
		SEND(b, n);
		n_plain++;
		usleep(1000);
	}
	/* The genuine sender's own transmissions: fresh frames (the captured ones above were
	 * never delivered intact, so these are the first with a valid MAC). */
	for (unsigned int i = 0; i < sizeof(types); i++) {
		struct nl_msg m = sample(types[i], 0xa77ac);

		cap_len[i] = nl_proto_seal(&m, &genuine, nl_auth_now_ns(), cap[i], sizeof(cap[i]));
		SEND(cap[i], cap_len[i]);
		n_gen++;
		usleep(20000); /* in order: HELLO joins before LOAD, BYE leaves last */
	}
	for (unsigned int r = 0; r < replays; r++)
		for (unsigned int i = 0; i < sizeof(types); i++) {
			SEND(cap[i], cap_len[i]);
			n_rep++;
			usleep(1000);
		}
	close(fd);
	printf("nl-attack: forged=%u altered=%u truncated_mac=%u unauthenticated=%u genuine=%u "
	       "replayed=%u\n", n_forged, n_alt, n_trunc, n_plain, n_gen, n_rep);
	return 0;
}
