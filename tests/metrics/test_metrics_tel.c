/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The telemetry client of dataplane/metrics/ (nl_metrics_tel.h) against a fake rte_telemetry
 * socket of our own (SOCK_SEQPACKET: a greeting with max_output_len, one JSON reply per
 * command; no EAL). DPDK writes u64 values as unsigned decimals, and /nlevel/appliances'
 * incarnation is a random u64: above INT64_MAX half the time, where jansson refused the whole
 * reply and the scale-out series went missing from the scrape. TAP.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/un.h>

#include "nl_metrics_tel.h"
#include "nl_tap.h"

#define BIG_INC "15604796855159400049" /* an incarnation seen in a scale-out run, > 2^63 */

struct fake {
	int lfd;
	char path[108];
};

/* One client: the greeting, then a reply per command until it closes. */
static void *
fake_main(void *arg)
{
	struct fake *f = arg;
	char cmd[256], out[512];
	int fd = accept(f->lfd, NULL, NULL);
	ssize_t n;

	if (fd < 0)
		return NULL;
	snprintf(out, sizeof(out), "{\"version\": \"fake\", \"pid\": %d, \"max_output_len\": 16384}",
		 (int)getpid());
	if (send(fd, out, strlen(out), 0) < 0)
		goto done;
	while ((n = recv(fd, cmd, sizeof(cmd) - 1, 0)) > 0) {
		cmd[n] = '\0';
		if (strcmp(cmd, "/big") == 0)
			snprintf(out, sizeof(out),
				 "{\"/big\": {\"incarnation\": " BIG_INC ", \"tasks\": 7, "
				 "\"live\": [1, 0, 1], \"name\": [\"a\", \"b\", \"c\"]}}");
		else if (strcmp(cmd, "/small") == 0)
			snprintf(out, sizeof(out),
				 "{\"/small\": {\"tasks\": 9007199254740993, \"zero\": 0}}");
		else
			snprintf(out, sizeof(out), "{\"%s\": null}", cmd);
		if (send(fd, out, strlen(out), 0) < 0)
			break;
	}
done:
	close(fd);
	return NULL;
}

static void
test_tel_reply_above_int64_max_is_read_not_refused(struct nl_tel_conn *c)
{
	json_t *v = nl_tel_ask_ctl(c, "/big");
	uint64_t inc = nl_tel_u64(json_object_get(v, "incarnation"));

	nl_tap_ok(v != NULL, "a reply holding " BIG_INC " (> INT64_MAX) is read, not refused");
	nl_tap_ok(nl_tel_u64(json_object_get(v, "tasks")) == 7,
		  "its other counters read as they were sent (tasks 7)");
	nl_tap_ok(nl_tel_u64(json_array_get(json_object_get(v, "live"), 1)) == 0 &&
			  nl_tel_u64(json_array_get(json_object_get(v, "live"), 2)) == 1 &&
			  strcmp(json_string_value(json_array_get(json_object_get(v, "name"), 2)),
				 "c") == 0,
		  "its arrays of numbers and strings are there");
	nl_tap_ok(inc > (uint64_t)INT64_MAX && inc <= 15604796855159400049ull + 4096 &&
			  inc >= 15604796855159400049ull - 4096,
		  "the big value itself reads within a double's precision (%llu)",
		  (unsigned long long)inc);
	json_decref(v);
}

static void
test_tel_ordinary_reply_stays_exact_integers(struct nl_tel_conn *c)
{
	json_t *v = nl_tel_ask_ctl(c, "/small");

	nl_tap_ok(v != NULL && nl_tel_u64(json_object_get(v, "tasks")) == 9007199254740993ull,
		  "a reply without a big value keeps integers exact (2^53 + 1)");
	nl_tap_ok(nl_tel_u64(json_object_get(v, "zero")) == 0 &&
			  nl_tel_u64(json_object_get(v, "absent")) == 0 && nl_tel_u64(NULL) == 0,
		  "zero, an absent key and NULL read as 0");
	json_decref(v);
}

static void
test_tel_error_reply_is_null(struct nl_tel_conn *c)
{
	json_t *v = nl_tel_ask_ctl(c, "/nothing");

	nl_tap_ok(v == NULL, "an error reply ({\"CMD\": null}) is NULL");
	json_decref(v);
}

int
main(void)
{
	struct fake f;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct nl_tel_conn c;
	pthread_t th;
	char dir[] = "/tmp/nl-tel.XXXXXX";

	if (mkdtemp(dir) == NULL) {
		printf("1..0 # SKIP no temporary folder\n");
		return 0;
	}
	snprintf(f.path, sizeof(f.path), "%s/tel.sock", dir);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", f.path);
	f.lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (f.lfd < 0 || bind(f.lfd, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    listen(f.lfd, 1) != 0 || pthread_create(&th, NULL, fake_main, &f) != 0) {
		printf("1..0 # SKIP cannot serve a SOCK_SEQPACKET socket\n");
		return 0;
	}
	nl_tap_ok(nl_tel_conn_init(&c, f.path) == 0, "nl_tel_conn_init");
	pthread_mutex_lock(&c.mu); /* I1 */
	nl_tap_ok(nl_tel_connect_ctl(&c) == 0 && c.max == 16384,
		  "connects and reads max_output_len from the greeting");
	test_tel_reply_above_int64_max_is_read_not_refused(&c);
	test_tel_ordinary_reply_stays_exact_integers(&c);
	test_tel_error_reply_is_null(&c);
	pthread_mutex_unlock(&c.mu);
	nl_tel_conn_fini(&c); /* closes: the fake's recv() ends */
	pthread_join(th, NULL);
	close(f.lfd);
	unlink(f.path);
	rmdir(dir);
	return nl_tap_done();
}
