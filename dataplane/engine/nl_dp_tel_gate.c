/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The appliance's telemetry gate (nl_dp.h, nl_dp_tel_register()): every rte_telemetry
 * command of the appliance, whichever layer registers it, runs only while the gate is open for
 * an engine (nl_dp_tel_open(), nl_dp_telemetry_init()), under a read lock that
 * nl_dp_tel_close() (nl_dp_free(), the port's end) takes for writing before anything a handler
 * reads is freed. The gate holds the engine and the state of the layer driving it, so a
 * handler of any layer finds what it reads without the engine knowing that layer. It
 * touches no engine state: the bottom of the engine.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "nl_dp.h"

static struct nl_dp *tel_dp;  /* the engine the gate is open for */
static void *tel_driver;      /* the state of the layer driving it (nl_dp_tel_driver_set()) */

/* The gate (nl_dp.h, nl_dp_tel_register()): handlers run under the read lock while open. */
typedef int (*tel_fn)(const char *, const char *, struct rte_tel_data *);
#define TEL_MAX 32u
static pthread_rwlock_t tel_gate = PTHREAD_RWLOCK_INITIALIZER;
static bool tel_open;
static struct {
	char name[64];
	tel_fn fn;
} tel_cmds[TEL_MAX];
static unsigned int n_tel_cmds;

static int
tel_gated(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc = -EINVAL;

	pthread_rwlock_rdlock(&tel_gate);
	for (unsigned int i = 0; tel_open && i < n_tel_cmds; i++) {
		if (strcmp(tel_cmds[i].name, cmd) == 0) {
			rc = tel_cmds[i].fn(cmd, params, d);
			break;
		}
	}
	pthread_rwlock_unlock(&tel_gate);
	return rc;
}

int
nl_dp_tel_register(const char *name, tel_fn fn, const char *help)
{
	unsigned int i;
	int rc = 0;

	pthread_rwlock_wrlock(&tel_gate);
	for (i = 0; i < n_tel_cmds && strcmp(tel_cmds[i].name, name) != 0; i++)
		;
	if (i < n_tel_cmds) { /* registered with DPDK before (an earlier engine) */
		tel_cmds[i].fn = fn;
	} else if (n_tel_cmds == TEL_MAX || strlen(name) >= sizeof(tel_cmds[0].name)) {
		rc = -ENOSPC;
	} else {
		rc = rte_telemetry_register_cmd(name, tel_gated, help);
		if (rc == 0) {
			snprintf(tel_cmds[n_tel_cmds].name, sizeof(tel_cmds[0].name), "%s", name);
			tel_cmds[n_tel_cmds++].fn = fn;
		}
	}
	pthread_rwlock_unlock(&tel_gate);
	return rc;
}

struct nl_dp *
nl_dp_tel_dp(void)
{
	return tel_open ? tel_dp : NULL;
}

void
nl_dp_tel_open(struct nl_dp *dp)
{
	pthread_rwlock_wrlock(&tel_gate);
	tel_dp = dp;
	tel_driver = NULL;
	tel_open = true;
	pthread_rwlock_unlock(&tel_gate);
}

void
nl_dp_tel_driver_set(const struct nl_dp *dp, void *driver)
{
	pthread_rwlock_wrlock(&tel_gate); /* no handler runs while it changes */
	if (dp == tel_dp)
		tel_driver = driver;
	pthread_rwlock_unlock(&tel_gate);
}

void *
nl_dp_tel_driver(void)
{
	return tel_open ? tel_driver : NULL;
}

void
nl_dp_tel_close(const struct nl_dp *dp)
{
	pthread_rwlock_wrlock(&tel_gate);
	if (dp == tel_dp) {
		tel_open = false;
		tel_dp = NULL;
		tel_driver = NULL;
	}
	pthread_rwlock_unlock(&tel_gate);
}

