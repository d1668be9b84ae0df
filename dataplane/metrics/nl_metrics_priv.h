/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside dataplane/metrics/: the service's state (nl_svc.c) and the telemetry question the
 * renderer (nl_metrics.c) asks.
 */
#ifndef NL_METRICS_PRIV_H
#define NL_METRICS_PRIV_H

#include <pthread.h>
#include <stdbool.h>

#include <jansson.h>

#include "nl_metrics.h"

struct MHD_Daemon;

struct nl_svc {
	pthread_mutex_t mu;        /* I1: the telemetry connection, quit */
	int tel_fd;                /* the telemetry connection, -1 when closed */
	size_t tel_max;            /* the socket's max_output_len [bytes] */
	char tel_path[256];
	const char *metrics_addr;  /* --metrics, or NULL */
	struct MHD_Daemon *mhd;    /* the HTTP endpoint, or NULL */
	pthread_t notify_th;
	bool notify_started;
	bool ready;                /* READY=1 sent (set by the readiness thread before it ends) */
	bool quit;
};

/*
 * Ask one telemetry command ("/nlevel/stats", "/nlevel/managers,3"): its reply's value, a
 * JSON object the caller json_decref()s, or NULL (an error reply, a closed gate, no socket).
 * Context: a control thread holding s->mu (I1).
 */
json_t *nl_svc_tel_ctl(struct nl_svc *s, const char *cmd);

#endif /* NL_METRICS_PRIV_H */
