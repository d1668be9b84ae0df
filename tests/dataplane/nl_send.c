/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nl-send: send one well-formed frame of any message type to an appliance, sealed with a key
 * and, with --principal, as that principal (tests/dataplane/test_secure.sh case 7, the rights
 * table cell by cell on a live appliance; nl_sample.h builds the message). Each run is a new
 * process: a new sender id and a new UDP source port.
 *
 *   nl-send --appliance IP[:PORT] --key FILE [--principal NAME] --type N [--count K]
 *           [--worker-id W] [--senders S --ahead-s A]
 *
 * --senders S (the lock-out attack of issue #35, case 9): the K frames come from S sender ids
 * in turn (the principal's id and random low bits), frame i with seq = now + A s - i.
 * --sockets N: the K frames go out from N sockets in turn (N source ports: N "workers").
 * Prints "nl-send: type N (NAME) sent K" and exits 0; 2 for a bad command line or a type it
 * cannot build.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "nl_principal.h"
#include "nl_proto.h"
#include "nl_sample.h"

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "appliance", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, 'K' },
		{ "principal", required_argument, NULL, 'p' },
		{ "type", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'c' },
		{ "worker-id", required_argument, NULL, 'w' },
		{ "senders", required_argument, NULL, 's' },
		{ "ahead-s", required_argument, NULL, 'A' },
		{ "sockets", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	const char *key_file = NULL, *principal = NULL;
	unsigned long type = 0, count = 1, wid = 1, senders = 0, n_fd = 1;
	double ahead_s = 0;
	struct sockaddr_in app;
	bool have_app = false;
	struct nl_auth_key key;
	struct nl_auth_tx tx;
	struct nl_msg m;
	char err[512];
	int c, fd;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			have_app = nl_proto_parse_addr(optarg, &app) == 0;
			break;
		case 'K':
			key_file = optarg;
			break;
		case 'p':
			principal = optarg;
			break;
		case 't':
			type = strtoul(optarg, NULL, 10);
			break;
		case 'c':
			count = strtoul(optarg, NULL, 10);
			break;
		case 'w':
			wid = strtoul(optarg, NULL, 10);
			break;
		case 's':
			senders = strtoul(optarg, NULL, 10);
			break;
		case 'A':
			ahead_s = strtod(optarg, NULL);
			break;
		case 'S':
			n_fd = strtoul(optarg, NULL, 10);
			break;
		default:
			return 2;
		}
	}
	if (!have_app || key_file == NULL || !nl_sample_msg((unsigned int)type, (uint32_t)wid, &m) ||
	    (principal != NULL && !nl_principal_name_ok(principal))) {
		fprintf(stderr, "usage: nl-send --appliance IP --key FILE [--principal NAME] --type N "
				"[--count K] [--worker-id W] (N a type of nl_sample.h)\n");
		return 2;
	}
	if (nl_auth_key_load(key_file, &key, err, sizeof(err)) != 0) {
		fprintf(stderr, "nl-send: %s\n", err);
		return 2;
	}
	if (principal != NULL)
		nl_auth_tx_init_principal(&tx, &key, principal);
	else
		nl_auth_tx_init(&tx, &key);
	if (n_fd < 1 || n_fd > 1000) {
		fprintf(stderr, "nl-send: --sockets: 1..1000\n");
		return 2;
	}
	int fds[1000];

	for (unsigned long i = 0; i < n_fd; i++) {
		fds[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0) {
			perror("nl-send: socket");
			return 1;
		}
	}
	uint64_t t0 = nl_auth_now_ns(), base = tx.sender & 0xffffffff00000000ull;

	for (unsigned long i = 0; i < count; i++) {
		uint8_t buf[NL_PROTO_MAX_LEN];
		int n;

		if (senders > 0) { /* frame i: sender i % S, seq = now + A s - i */
			tx.sender = base | (0x10000u + i % senders);
			tx.seq = t0 + (uint64_t)(ahead_s * 1e9) - i - 1;
			n = nl_proto_seal(&m, &tx, 0, buf, sizeof(buf));
		} else {
			n = nl_proto_seal(&m, &tx, nl_auth_now_ns(), buf, sizeof(buf));
		}
		fd = fds[i % n_fd];
		if (n < 0 || sendto(fd, buf, (size_t)n, 0, (const struct sockaddr *)&app,
				    sizeof(app)) != n) {
			fprintf(stderr, "nl-send: type %lu: not sent\n", type);
			return 1;
		}
	}
	for (unsigned long i = 0; i < n_fd; i++)
		close(fds[i]);
	printf("nl-send: type %lu (%s) sent %lu\n", type, nl_msg_type_name((unsigned int)type), count);
	return 0;
}
