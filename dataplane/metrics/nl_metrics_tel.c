/* SPDX-License-Identifier: BSD-3-Clause */
/* The telemetry client of dataplane/metrics/ (nl_metrics_tel.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/un.h>

#include "nl_metrics_tel.h"

int
nl_tel_conn_init(struct nl_tel_conn *c, const char *path)
{
	pthread_mutex_init(&c->mu, NULL);
	c->fd = -1;
	c->max = 16384;
	if (snprintf(c->path, sizeof(c->path), "%s", path) >= (int)sizeof(c->path))
		return -ENAMETOOLONG;
	return 0;
}

int
nl_tel_connect_ctl(struct nl_tel_conn *c)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char buf[1024];
	ssize_t n;
	int fd;

	if (c->fd >= 0)
		return 0;
	if (snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", c->path) >=
	    (int)sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		close(fd);
		return -EPROTO;
	}
	buf[n] = '\0';
	json_t *j = json_loads(buf, 0, NULL);
	json_int_t mx = json_integer_value(json_object_get(j, "max_output_len"));

	json_decref(j);
	c->max = mx > 0 && mx < (1 << 24) ? (size_t)mx : 16384;
	c->fd = fd;
	return 0;
}

json_t *
nl_tel_ask_ctl(struct nl_tel_conn *c, const char *cmd)
{
	json_t *r = NULL, *v;
	char *buf;
	ssize_t n;
	const char *key;

	/* I1: callers hold c->mu */
	if (nl_tel_connect_ctl(c) != 0)
		return NULL;
	buf = malloc(c->max + 1);
	if (buf == NULL)
		return NULL;
	if (send(c->fd, cmd, strlen(cmd), MSG_NOSIGNAL) < 0 ||
	    (n = recv(c->fd, buf, c->max, 0)) <= 0) {
		close(c->fd); /* the next question reconnects (it may fail after --user) */
		c->fd = -1;
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	r = json_loadb(buf, (size_t)n, 0, NULL);
	/* DPDK writes u64 values as unsigned decimals; one above INT64_MAX (the random
	 * incarnation of /nlevel/appliances, half the time) is "too big" for json_int_t and
	 * jansson refuses the whole reply: read it again with every number as a double (exact
	 * to 2^53; nl_tel_u64() reads either) */
	if (r == NULL)
		r = json_loadb(buf, (size_t)n, JSON_DECODE_INT_AS_REAL, NULL);
	free(buf);
	/* {"CMD": value}; an error answers null (or a non-object for our dict commands) */
	if (r == NULL || json_object_size(r) != 1)
		goto bad;
	json_object_foreach(r, key, v) {
		if (!json_is_object(v))
			goto bad;
		json_incref(v);
		json_decref(r);
		return v;
	}
bad:
	json_decref(r);
	return NULL;
}

uint64_t
nl_tel_u64(const json_t *v)
{
	if (json_is_integer(v))
		return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
	if (json_is_real(v) && json_real_value(v) > 0 && json_real_value(v) < 0x1p64)
		return (uint64_t)json_real_value(v);
	return 0;
}

void
nl_tel_conn_fini(struct nl_tel_conn *c)
{
	if (c == NULL)
		return;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	pthread_mutex_destroy(&c->mu);
}
