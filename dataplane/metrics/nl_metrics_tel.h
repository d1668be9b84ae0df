/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside dataplane/metrics/: a client of the appliance's own rte_telemetry socket (DPDK
 * Programmer's Guide, "Telemetry Library": SOCK_SEQPACKET, a JSON greeting with
 * max_output_len, then one JSON reply per command). The bottom of the folder: the renderer
 * (nl_metrics.c) and the service (nl_svc.c) ask through it; it calls neither.
 */
#ifndef NL_METRICS_TEL_H
#define NL_METRICS_TEL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* One telemetry connection. I1: mu serialises every question (and the connection itself). */
struct nl_tel_conn {
	pthread_mutex_t mu; /* I1 */
	int fd;             /* the connection, -1 when closed */
	size_t max;         /* the socket's max_output_len [bytes] */
	char path[256];     /* the socket's path */
};

/**
 * Set up c for the socket at path (not connected yet).
 * @return 0, or -ENAMETOOLONG. @par Context Main thread, before any other use of c.
 */
int nl_tel_conn_init(struct nl_tel_conn *c, const char *path);

/**
 * Connect now and read the greeting (max_output_len), unless already connected.
 * @return 0, or a negative errno (-ENOENT, -ECONNREFUSED: no appliance; -EPROTO: no greeting).
 * @par Context A control thread holding c->mu (I1), or the main thread before the others.
 */
int nl_tel_connect_ctl(struct nl_tel_conn *c);

/**
 * Ask one telemetry command ("/nlevel/stats", "/nlevel/managers,3"): its reply's value, a
 * JSON object the caller json_decref()s, or NULL (an error reply, a closed gate, no socket;
 * the next question connects again).
 * @par Context A control thread holding c->mu (I1); blocks on the socket.
 */
json_t *nl_tel_ask_ctl(struct nl_tel_conn *c, const char *cmd);

/**
 * A number of a reply as an unsigned count: a JSON integer, or a real when the reply held a
 * value above INT64_MAX and was read with every number as a double (nl_tel_ask_ctl()).
 * @param v  A value of a reply, NULL accepted.
 * @return Its value [the command's unit], truncated toward 0; 0 when v is not a positive number.
 * @par Context Any thread; pure.
 */
uint64_t nl_tel_u64(const json_t *v);

/** Close the connection (NULL accepted). @par Context Main thread, the others stopped. */
void nl_tel_conn_fini(struct nl_tel_conn *c);

#endif /* NL_METRICS_TEL_H */
