/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nl-xa-forge: issue #36's forged-peer attack, for tests/scaleout/test_scaleout_keys.sh. Run
 * from a dead appliance's address (its namespace, its IP added to the kernel's interface), it
 * sends every INTERVAL ms, COUNT times, a SWIM GOSSIP "appliance FROM is alive (incarnation
 * 2^31)", a SUMMARY dated now (64 free cores) and one dated an hour ahead, all three as
 * appliance FROM, sealed with the key given (the site key: what a client or worker of an
 * unpaired tree holds).
 *
 *   nl-xa-forge KEY FROM SRC_IP SRC_PORT DST_IP DST_PORT COUNT INTERVAL_MS
 *
 * Exit status 0 when every datagram was sent; 1 on a socket error; 2 on a bad argument.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nl_proto.h"
#include "nl_xa_proto.h"

static int
send_one(int s, const struct sockaddr_in *to, struct nl_auth_tx *tx, const struct nl_xa_msg *m)
{
	uint8_t buf[NL_PROTO_MAX_LEN], out[NL_PROTO_MAX_LEN];
	struct timespec ts;
	int n = nl_xa_encode(m, buf, sizeof(buf)), k;

	if (n < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	k = nl_xa_seal(buf, (size_t)n, tx, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
		       out, sizeof(out));
	if (k < 0)
		return -1;
	return sendto(s, out, (size_t)k, 0, (const struct sockaddr *)to, sizeof(*to)) == k ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	static struct nl_xa_msg swim, sum, sum_now;
	struct nl_auth_key key;
	struct nl_auth_tx tx;
	char err[512];
	unsigned int from, count, gap_ms, sent = 0;
	int s;

	if (argc != 9) {
		fprintf(stderr, "usage: nl-xa-forge KEY FROM SRC_IP SRC_PORT DST_IP DST_PORT COUNT "
				"INTERVAL_MS\n");
		return 2;
	}
	from = (unsigned int)atoi(argv[2]);
	count = (unsigned int)atoi(argv[7]);
	gap_ms = (unsigned int)atoi(argv[8]);
	src.sin_port = htons((uint16_t)atoi(argv[4]));
	dst.sin_port = htons((uint16_t)atoi(argv[6]));
	if (from >= NL_XA_MAX_APPS || inet_pton(AF_INET, argv[3], &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[5], &dst.sin_addr) != 1) {
		fprintf(stderr, "nl-xa-forge: bad argument\n");
		return 2;
	}
	if (nl_auth_key_load(argv[1], &key, err, sizeof(err)) != 0) {
		fprintf(stderr, "nl-xa-forge: %s\n", err);
		return 2;
	}
	nl_auth_tx_init(&tx, &key);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	int one = 1; /* two forgers may share the dead appliance's address and port */

	if (s >= 0)
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s < 0 || bind(s, (const struct sockaddr *)&src, sizeof(src)) != 0) {
		perror("nl-xa-forge: socket/bind");
		return 1;
	}
	swim.type = NL_XA_MSG_SWIM;
	swim.from_app = (uint16_t)from;
	swim.incarnation = 0x600dULL;
	swim.n = 2;
	swim.u.swim.type = 5; /* GOSSIP */
	swim.u.swim.n_upd = 1;
	swim.u.swim.target = from;
	swim.u.swim.upd[0].id = from;
	swim.u.swim.upd[0].incarnation = 1u << 31;
	swim.u.swim.upd[0].state = 0; /* alive */
	sum.type = NL_XA_MSG_SUMMARY;
	sum.from_app = (uint16_t)from;
	sum.incarnation = 0x600dULL;
	sum.n = 1;
	sum.u.sum[0].src = 0;
	sum.u.sum[0].cores = 64;
	sum.u.sum[0].free_cores = 64;
	sum.u.sum[0].created_s = (double)time(NULL) + 3600.0; /* an hour ahead */
	sum.u.sum[0].lifetime_s = 1800.0;
	sum_now = sum;
	for (unsigned int i = 0; i < count; i++) {
		if (send_one(s, &dst, &tx, &swim) == 0)
			sent++;
		if (send_one(s, &dst, &tx, &sum) == 0)
			sent++;
		sum_now.u.sum[0].created_s = (double)time(NULL);
		if (send_one(s, &dst, &tx, &sum_now) == 0)
			sent++;
		usleep(gap_ms * 1000u);
	}
	close(s);
	printf("nl-xa-forge: %u of %u datagrams sent as appliance %u\n", sent, 3 * count, from);
	return sent == 3 * count ? 0 : 1;
}
