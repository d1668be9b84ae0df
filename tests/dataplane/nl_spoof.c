/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nl-spoof: a worker WITH a valid key of its own (principal --principal, key --key) that tries
 * to speak for another worker (tests/dataplane/test_secure.sh, issue #16). It listens on
 * --iface for the appliance's DISPATCH frames to the victim (no confidentiality: anyone on
 * the segment reads them), and from the victim's own IP address and UDP port (raw IPv4
 * socket) it answers each with a DONE (status --status), and sends LOAD (the victim's
 * worker id and machine, no backlog), HELLO and, at the end, BYE, all sealed under its own
 * valid key. The appliance must deny all of them: the sub-tasks are the victim principal's.
 * Prints "nl-spoof: dispatch_seen=N done=N load=N hello=N bye=N victim_port=P".
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "nl_principal.h"
#include "nl_proto.h"

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Send m sealed by tx from (src_ip, src_port) to the appliance, on a raw IPv4 socket. */
static void
send_as(int raw, struct nl_auth_tx *tx, const struct nl_msg *m, uint32_t src_ip,
	uint16_t src_port, const struct sockaddr_in *app)
{
	uint8_t f[NL_FRAME_HDR_LEN + NL_PROTO_MAX_LEN];
	struct nl_frame_addr a = { 0 };
	int n = nl_proto_seal(m, tx, nl_auth_now_ns(), f + NL_FRAME_HDR_LEN, NL_PROTO_MAX_LEN);

	if (n <= 0)
		return;
	a.src_ip = src_ip;
	a.dst_ip = app->sin_addr.s_addr;
	a.src_port = src_port;
	a.dst_port = ntohs(app->sin_port);
	n = nl_frame_build(f, &a, (size_t)n);
	if (n > 14)
		(void)sendto(raw, f + 14, (size_t)n - 14, 0, (const struct sockaddr *)app,
			     sizeof(*app));
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "appliance", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, 'K' },
		{ "principal", required_argument, NULL, 'p' },
		{ "iface", required_argument, NULL, 'i' },
		{ "victim-id", required_argument, NULL, 'v' },
		{ "secs", required_argument, NULL, 's' },
		{ "status", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_in app;
	struct nl_auth_key key;
	struct nl_auth_tx tx;
	const char *principal = NULL, *iface = NULL;
	bool have_app = false, have_key = false;
	uint32_t victim_id = 0, victim_ip = 0;
	uint16_t victim_port = 0;
	double secs = 2;
	int32_t status = 0;
	unsigned int n_disp = 0, n_done = 0, n_load = 0, n_hello = 0, n_bye = 0;
	uint64_t t_end, next_load = 0;
	char err[512];
	int c, pk, raw;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a': have_app = nl_proto_parse_addr(optarg, &app) == 0; break;
		case 'K':
			if (nl_auth_key_load(optarg, &key, err, sizeof(err)) != 0) {
				fprintf(stderr, "nl-spoof: %s\n", err);
				return 2;
			}
			have_key = true;
			break;
		case 'p': principal = optarg; break;
		case 'i': iface = optarg; break;
		case 'v': victim_id = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 's': secs = strtod(optarg, NULL); break;
		case 'S': status = (int32_t)strtol(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: nl-spoof --appliance IP --key FILE --principal NAME "
					"--iface IF [--victim-id N] [--secs S] [--status N]\n");
			return 2;
		}
	}
	if (!have_app || !have_key || principal == NULL || iface == NULL) {
		fprintf(stderr, "nl-spoof: --appliance, --key, --principal, --iface are required\n");
		return 2;
	}
	nl_auth_tx_init_principal(&tx, &key, principal);
	pk = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_IP));
	raw = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (pk < 0 || raw < 0) {
		perror("nl-spoof: socket");
		return 1;
	}
	{
		struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
					  .sll_ifindex = (int)if_nametoindex(iface) };

		if (ll.sll_ifindex == 0 || bind(pk, (struct sockaddr *)&ll, sizeof(ll)) != 0) {
			perror("nl-spoof: bind to --iface");
			return 1;
		}
	}
	t_end = mono_ns() + (uint64_t)(secs * 1e9);
	while (mono_ns() < t_end) {
		struct pollfd pfd = { .fd = pk, .events = POLLIN };
		uint8_t f[2048];
		ssize_t n;

		if (victim_port != 0 && mono_ns() >= next_load) {
			struct nl_msg m = { .type = NL_MSG_LOAD };

			m.u.hello.worker_id = victim_id;
			m.u.hello.n_mach = 1;
			m.u.hello.mach[0].speed_ips = 1;
			m.u.hello.mach[0].link_bps = 1;
			m.u.hello.mach[0].backlog_ns = 0;
			send_as(raw, &tx, &m, victim_ip, victim_port, &app);
			n_load++;
			m.type = NL_MSG_HELLO;
			send_as(raw, &tx, &m, victim_ip, victim_port, &app);
			n_hello++;
			next_load = mono_ns() + 100000000ull;
		}
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		while ((n = recv(pk, f, sizeof(f), MSG_DONTWAIT)) > 0) {
			struct nl_frame_addr a;
			const uint8_t *pl;
			size_t plen;
			struct nl_msg m, d = { .type = NL_MSG_DONE };

			/* what the appliance sends to the victim: read, not verified (not our key) */
			if (nl_frame_parse(f, (size_t)n, 0, &a, &pl, &plen) != NL_PROTO_OK ||
			    a.src_port != ntohs(app.sin_port) ||
			    nl_proto_decode_sealed(pl, plen, &m) != NL_PROTO_OK ||
			    m.type != NL_MSG_DISPATCH)
				continue;
			n_disp++;
			victim_ip = a.dst_ip;
			victim_port = a.dst_port;
			d.u.done.task_id = m.u.dispatch.task_id;
			d.u.done.mach = m.u.dispatch.mach;
			d.u.done.token = m.u.dispatch.token;
			d.u.done.sub = m.u.dispatch.sub;
			d.u.done.status = status;
			send_as(raw, &tx, &d, victim_ip, victim_port, &app);
			n_done++;
		}
	}
	if (victim_port != 0) {
		struct nl_msg m = { .type = NL_MSG_BYE };

		m.u.bye.worker_id = victim_id;
		send_as(raw, &tx, &m, victim_ip, victim_port, &app);
		n_bye++;
	}
	printf("nl-spoof: dispatch_seen=%u done=%u load=%u hello=%u bye=%u victim_port=%u\n", n_disp,
	       n_done, n_load, n_hello, n_bye, victim_port);
	return 0;
}
