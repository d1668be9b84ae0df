/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside dataplane/metrics/: the service's state (nl_svc.c).
 */
#ifndef NL_METRICS_PRIV_H
#define NL_METRICS_PRIV_H

#include <pthread.h>
#include <stdbool.h>

#include <jansson.h>

#include "nl_metrics.h"
#include "nl_metrics_tel.h"

struct MHD_Daemon;

struct nl_svc {
	pthread_mutex_t mu;        /* quit */
	struct nl_tel_conn tel;    /* the telemetry connection (I1: its own mutex) */
	const char *metrics_addr;  /* --metrics, or NULL */
	struct MHD_Daemon *mhd;    /* the HTTP endpoint, or NULL */
	pthread_t notify_th;
	bool notify_started;
	bool ready;                /* READY=1 sent (set by the readiness thread before it ends) */
	bool quit;
};

#endif /* NL_METRICS_PRIV_H */
