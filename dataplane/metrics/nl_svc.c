/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The operator side's plumbing (nl_metrics.h): the HTTP endpoint (libmicrohttpd, one polling
 * thread of its own) and systemd readiness (sd_notify). What a scrape says is built in
 * nl_metrics.c; both ask the telemetry through nl_metrics_tel.c (the folder's bottom).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <microhttpd.h>
#include <systemd/sd-daemon.h>

#include <rte_eal.h>

#include "nl_metrics_priv.h"

int
nl_metrics_parse_addr(const char *s, void *out, unsigned int *len)
{
	struct sockaddr_storage *ss = out;
	char host[128];
	const char *colon, *port_s = NULL;
	unsigned long port = NL_METRICS_DEF_PORT;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (s == NULL || *s == '\0' || strlen(s) >= sizeof(host))
		return -EINVAL;
	if (s[0] == '[') { /* [v6]:port */
		const char *rb = strchr(s, ']');

		if (rb == NULL || (rb[1] != '\0' && rb[1] != ':'))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(rb - s - 1), s + 1);
		port_s = rb[1] == ':' ? rb + 2 : NULL;
	} else {
		colon = strrchr(s, ':');
		snprintf(host, sizeof(host), "%.*s", colon != NULL ? (int)(colon - s) : (int)strlen(s),
			 s);
		port_s = colon != NULL ? colon + 1 : NULL;
		if (host[0] == '\0')
			snprintf(host, sizeof(host), "0.0.0.0");
	}
	if (port_s != NULL) {
		errno = 0;
		port = strtoul(port_s, &end, 10);
		if (*port_s == '\0' || *end != '\0' || errno != 0 || port < 1 || port > 65535)
			return -EINVAL;
	}
	if (s[0] == '[') {
		struct sockaddr_in6 *a6 = out;

		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			return -EINVAL;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a6);
		return 0;
	}
	struct sockaddr_in *a4 = out;

	if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return -EINVAL;
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	*len = sizeof(*a4);
	return 0;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
	   const char *version, const char *upload, size_t *upload_len, void **con_cls)
{
	struct nl_svc *s = cls;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	unsigned int code = MHD_HTTP_OK;
	const char *ctype = "text/plain; version=0.0.4; charset=utf-8";
	char *body = NULL;
	size_t len = 0;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)con_cls;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		body = strdup("only GET /metrics\n");
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (strcmp(url, "/metrics") == 0) {
		body = nl_metrics_render_ctl(&s->tel, &len);
		if (body == NULL) {
			body = strdup("out of memory\n");
			code = MHD_HTTP_INTERNAL_SERVER_ERROR;
		}
	} else if (strcmp(url, "/") == 0) {
		body = strdup("<html><body><a href=\"/metrics\">/metrics</a> (nlevel, "
			      "docs/operations.md)</body></html>\n");
		ctype = "text/html";
	} else {
		body = strdup("not found: GET /metrics\n");
		code = MHD_HTTP_NOT_FOUND;
	}
	if (body == NULL)
		return MHD_NO;
	if (code != MHD_HTTP_OK || len == 0)
		len = strlen(body);
	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Readiness (sd_notify(3)): ask /nlevel/stats until the port answers, then READY=1. */
static void *
notify_main(void *arg)
{
	struct nl_svc *s = arg;
	const struct timespec nap = { .tv_nsec = 50 * 1000 * 1000 };

	for (;;) {
		pthread_mutex_lock(&s->mu);
		bool quit = s->quit;

		pthread_mutex_unlock(&s->mu);
		if (quit)
			break;
		pthread_mutex_lock(&s->tel.mu); /* I1 */
		json_t *st = nl_tel_ask_ctl(&s->tel, "/nlevel/stats");

		pthread_mutex_unlock(&s->tel.mu);
		if (st != NULL) {
			json_decref(st);
			sd_notifyf(0, "READY=1\nSTATUS=serving%s%s\nMAINPID=%ld",
				   s->mhd != NULL ? "; metrics on " : "",
				   s->mhd != NULL ? s->metrics_addr : "", (long)getpid());
			s->ready = true;
			break;
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

int
nl_svc_start(struct nl_svc **out, const char *metrics_addr, int notify, char *err,
	     size_t errlen)
{
	struct sockaddr_storage ss;
	unsigned int sslen = 0;
	struct nl_svc *s;
	int rc;

	*out = NULL;
	if (metrics_addr == NULL && !notify)
		return 0;
	if (metrics_addr != NULL && nl_metrics_parse_addr(metrics_addr, &ss, &sslen) != 0) {
		snprintf(err, errlen, "--metrics '%s': not ADDR:PORT (e.g. 127.0.0.1:%d)",
			 metrics_addr, NL_METRICS_DEF_PORT);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	char path[256];

	pthread_mutex_init(&s->mu, NULL);
	s->metrics_addr = metrics_addr;
	snprintf(path, sizeof(path), "%s/dpdk_telemetry.v2", rte_eal_get_runtime_dir());
	rc = nl_tel_conn_init(&s->tel, path);
	if (rc == 0) /* now: before --user drops root (the connection stays ours) */
		rc = nl_tel_connect_ctl(&s->tel);
	if (rc != 0) {
		snprintf(err, errlen, "cannot connect to the DPDK telemetry socket %s: %s (the "
			 "metrics and systemd readiness read it; no EAL --no-telemetry)",
			 s->tel.path, strerror(-rc));
		nl_tel_conn_fini(&s->tel);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return -ENOENT;
	}
	if (metrics_addr != NULL) {
		s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
					  (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
					  0, NULL, NULL, on_request, s,
					  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
					  MHD_OPTION_CONNECTION_TIMEOUT, 10u,
					  MHD_OPTION_CONNECTION_LIMIT, 16u,
					  MHD_OPTION_END);
		if (s->mhd == NULL) {
			rc = errno != 0 ? -errno : -EADDRINUSE;
			snprintf(err, errlen, "--metrics %s: cannot listen: %s", metrics_addr,
				 strerror(-rc));
			nl_svc_stop(s);
			return rc;
		}
	}
	if (notify) {
		rc = pthread_create(&s->notify_th, NULL, notify_main, s);
		if (rc != 0) {
			snprintf(err, errlen, "cannot start the readiness thread: %s", strerror(rc));
			nl_svc_stop(s);
			return -rc;
		}
		s->notify_started = true;
	}
	*out = s;
	return 0;
}

void
nl_svc_stop(struct nl_svc *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->quit = true;
	pthread_mutex_unlock(&s->mu);
	if (s->notify_started)
		pthread_join(s->notify_th, NULL);
	if (s->ready)
		sd_notify(0, "STOPPING=1");
	if (s->mhd != NULL)
		MHD_stop_daemon(s->mhd);
	nl_tel_conn_fini(&s->tel);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
