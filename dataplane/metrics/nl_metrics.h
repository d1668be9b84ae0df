/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The appliance's operator side (docs/operations.md): a Prometheus `/metrics` endpoint
 * (`--metrics ADDR:PORT`) and systemd readiness (`sd_notify`), both on control threads of
 * their own. Neither reads engine or port memory: both are clients of the appliance's own
 * rte_telemetry socket (the /nlevel/... commands every layer already registers behind the
 * telemetry gate, nl_dp.h), so a scrape costs the dispatch lcores nothing but what a
 * `dpdk-telemetry.py` query costs them (relaxed loads on the telemetry thread), and this
 * folder includes no header of the layers below: it sits above them like an external exporter.
 *
 * Theory of operation. nl_svc_start() connects to the telemetry socket (before the port drops
 * root with --user: the open connection survives the drop), starts libmicrohttpd's polling
 * thread when an address is given, and, when NOTIFY_SOCKET is set (systemd Type=notify), a
 * thread that asks /nlevel/stats every 50 ms until the port answers (it is up: the gate's
 * driver is set once the port is started, nl_port_serve()), then sends READY=1.
 *
 * Invariants:
 *  I1  every exchange on the telemetry connection (command, reply) runs under the service's
 *      mutex: one question at a time, and the reply read is the reply to that question.
 *  I2  nothing here runs on an EAL lcore; no call reaches the engine but through rte_telemetry.
 *
 * Source: Prometheus "Exposition formats" (text format 0.0.4), "Metric and label naming";
 * DPDK "Telemetry Library" guide (socket dpdk_telemetry.v2); libmicrohttpd manual; sd_notify(3).
 */
#ifndef NL_METRICS_H
#define NL_METRICS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nl_svc;
struct nl_tel_conn;

/** Default of the Prometheus endpoint's port when --metrics gives an address only. */
#define NL_METRICS_DEF_PORT 9477

/**
 * Parse "ADDR:PORT", "ADDR" or ":PORT" (IPv4; "[v6]:PORT" for IPv6) for --metrics.
 * @param s     The option's value.
 * @param ss    Output: a struct sockaddr_storage (as void * so callers need no socket header).
 * @param len   Output: its length [bytes].
 * @return 0; -EINVAL when s is not an address with an optional port 1..65535.
 * @par Context Any thread; pure.
 */
int nl_metrics_parse_addr(const char *s, void *ss, unsigned int *len);

/**
 * Start the operator side of a port-mode appliance after rte_eal_init().
 * @param out          Output: the service (NULL when neither is asked for).
 * @param metrics_addr --metrics value or NULL (no endpoint).
 * @param notify       Whether to signal readiness to systemd (NOTIFY_SOCKET set).
 * @param err          Output: the reason on failure. @param errlen Its size [bytes].
 * @return 0; -EINVAL (bad address); -ENOENT (no telemetry socket: EAL --no-telemetry);
 *         -EADDRINUSE or another -errno of the listening socket; -ENOMEM.
 * @par Context Main thread, after rte_eal_init(), before nl_port_serve() (and so before the
 *              privilege drop of --user); starts threads.
 */
int nl_svc_start(struct nl_svc **out, const char *metrics_addr, int notify, char *err,
		 size_t errlen);

/**
 * Stop the threads, tell systemd STOPPING=1 when it was told READY=1, close the connection.
 * @param s NULL accepted. @par Context Main thread, after nl_port_serve() returned.
 */
void nl_svc_stop(struct nl_svc *s);

/**
 * Render the Prometheus text exposition of the appliance's state now (what GET /metrics
 * returns): nlevel_up 0 and nothing else when the telemetry does not answer.
 * @param c    The telemetry connection (nl_metrics_tel.h). @param len Output: the text's
 *             length [bytes].
 * @return malloc()ed text (the caller frees), or NULL when out of memory.
 * @par Context Any control thread (serialised by I1); blocks on the telemetry socket.
 */
char *nl_metrics_render_ctl(struct nl_tel_conn *c, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* NL_METRICS_H */
