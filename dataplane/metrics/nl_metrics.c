/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GET /metrics (nl_metrics.h): the appliance's telemetry commands turned into the Prometheus
 * text format 0.0.4, names and units by the Prometheus conventions (base units: seconds;
 * counters end in _total; one family per metric, labels for the manager, machine, principal,
 * cause). Every number comes from one reply of an existing /nlevel/... command, read on the
 * telemetry thread exactly as dpdk-telemetry.py reads it (docs/operations.md lists each metric
 * with its command and key).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_metrics.h"
#include "nl_metrics_tel.h"

/* engine: bucket b of svc_hist_ns_log2 counts decisions of [2^(b-1), 2^b) ns (nl_dp_tel.c) */
#define HIST_BUCKETS 24u
#define MAX_MGR_HIST 1024u /* per-manager histograms asked for at most this many managers */
#define PORT_NS_PER_VT 1000.0 /* port mode: 1 u.t. of the engine's clock is 1 us (nlevel.c) */

static uint64_t
ju(const json_t *o, const char *k)
{
	return nl_tel_u64(json_object_get(o, k));
}

static uint64_t
jai(const json_t *o, const char *k, size_t i)
{
	return nl_tel_u64(json_array_get(json_object_get(o, k), i));
}

/* A label value, escaped as the text format wants (\\, \", \n). */
static void
lv(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
one(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	family(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

/* /nlevel/stats: the appliance's accounting (I1 of nl_dp.h in one snapshot), frames, drops. */
static void
render_stats(FILE *f, const json_t *st, const json_t *pr)
{
	static const struct {
		const char *key, *name, *type, *help;
	} plain[] = {
		{ "accepted", "nlevel_tasks_accepted_total", "counter",
		  "Tasks accepted (each ends completed or failed; accepted = completed + failed + in flight)." },
		{ "completed", "nlevel_tasks_completed_total", "counter",
		  "Tasks completed (every sub-task done)." },
		{ "failed", "nlevel_tasks_failed_total", "counter",
		  "Tasks accepted, then failed (refused mid-route, lost)." },
		{ "in_flight", "nlevel_tasks_in_flight", "gauge",
		  "Tasks accepted and not yet completed or failed." },
		{ "redispatched", "nlevel_subtasks_redispatched_total", "counter",
		  "Sub-tasks moved off a removed worker." },
		{ "stale_done", "nlevel_stale_done_total", "counter",
		  "DONE messages that matched no outstanding sub-task." },
		{ "rejoin_asked", "nlevel_workers_rejoin_asked_total", "counter",
		  "LOADs from no joined worker, answered with a request to join again." },
		{ "workers_joined", "nlevel_workers_joined_total", "counter", "Workers that joined." },
		{ "workers_left", "nlevel_workers_left_total", "counter",
		  "Workers that left (BYE or silent past --worker-timeout)." },
		{ "rx_frames", "nlevel_frames_received_total", "counter", "Frames received on the port." },
		{ "rx_missed", "nlevel_frames_missed_total", "counter",
		  "Frames the port dropped before the I/O lcore read them (receive ring full)." },
		{ "rx_errors", "nlevel_frames_receive_errors_total", "counter",
		  "Receive errors of the port (rte_eth_stats ierrors)." },
		{ "rx_nombuf", "nlevel_frames_no_mbuf_total", "counter",
		  "Frames the port could not receive for want of an mbuf." },
		{ "tx_frames", "nlevel_frames_sent_total", "counter", "Frames sent on the port." },
		{ "tx_fail", "nlevel_frames_send_failed_total", "counter",
		  "Frames not sent (no mbuf, port queue full, encoding failed)." },
		{ "rx_appliance", "nlevel_scaleout_datagrams_received_total", "counter",
		  "Datagrams received from peer appliances (scale-out)." },
		{ "xhops", "nlevel_lcore_hand_overs_total", "counter",
		  "Tasks handed between manager lcores." },
		{ "load_publishes", "nlevel_load_publishes_total", "counter",
		  "Load-table snapshots published to the managers (RCU)." },
		{ "denied", "nlevel_messages_denied_total", "counter",
		  "Authentic messages refused by the rights table (role and type)." },
	};
	const char *k;
	json_t *v;

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		one(f, plain[i].name, plain[i].type, plain[i].help, ju(st, plain[i].key));
	family(f, "nlevel_tasks_rejected_total", "counter",
	       "Tasks refused at admission (REJECT), by reason.");
	if (pr != NULL && json_array_size(json_object_get(pr, "name")) > 0) {
		static const char *const why[] = { "quota", "overload", "other" };

		for (unsigned int r = 0; r < 3; r++) {
			char key[32];
			uint64_t sum = 0;

			snprintf(key, sizeof(key), "rejected_%s", why[r]);
			for (size_t i = 0; i < json_array_size(json_object_get(pr, "name")); i++)
				sum += jai(pr, key, i);
			fprintf(f, "nlevel_tasks_rejected_total{reason=\"%s\"} %" PRIu64 "\n", why[r],
				sum);
		}
	} else {
		fprintf(f, "nlevel_tasks_rejected_total{reason=\"other\"} %" PRIu64 "\n",
			ju(st, "rejected_ingress"));
	}
	family(f, "nlevel_frames_dropped_total", "counter",
	       "Malformed or unauthentic frames dropped, by cause (docs/protocol.md).");
	json_object_foreach((json_t *)st, k, v)
		if (strncmp(k, "drop_", 5) == 0) {
			fprintf(f, "nlevel_frames_dropped_total{cause=\"");
			lv(f, k + 5);
			fprintf(f, "\"} %" PRIu64 "\n", ju(st, k));
		}
	family(f, "nlevel_messages_received_total", "counter",
	       "Authentic messages received, by type (docs/protocol.md).");
	json_object_foreach((json_t *)st, k, v)
		if (strncmp(k, "rx_", 3) == 0 && strcmp(k, "rx_frames") != 0 &&
		    strcmp(k, "rx_appliance") != 0) {
			fprintf(f, "nlevel_messages_received_total{type=\"");
			lv(f, k + 3);
			fprintf(f, "\"} %" PRIu64 "\n", ju(st, k));
		}
	/* #39: ingress to the DISPATCH of a task's sub-task 0 (log2 buckets of microseconds) */
	const json_t *h = json_object_get(st, "dispatch_hist_us_log2");
	uint64_t cum = 0;

	if (json_array_size(h) == 0)
		return;
	family(f, "nlevel_dispatch_latency_seconds", "histogram",
	       "Time from a task's arrival at the appliance to the DISPATCH of its first "
	       "sub-task to a worker (port mode; the I/O lcore's clock).");
	for (size_t b = 0; b + 1 < json_array_size(h); b++) {
		cum += jai(st, "dispatch_hist_us_log2", b);
		fprintf(f, "nlevel_dispatch_latency_seconds_bucket{le=\"%.9g\"} %" PRIu64 "\n",
			ldexp(1.0, (int)b) * 1e-6, cum);
	}
	cum += jai(st, "dispatch_hist_us_log2", json_array_size(h) - 1);
	fprintf(f, "nlevel_dispatch_latency_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", cum);
	fprintf(f, "nlevel_dispatch_latency_seconds_sum %.9g\n", (double)ju(st, "dispatch_sum_us") * 1e-6);
	fprintf(f, "nlevel_dispatch_latency_seconds_count %" PRIu64 "\n", cum);
}

/* /nlevel/managers and /nlevel/managers,ID: per-manager counters, queue depth, decide cost. */
static void
render_managers(FILE *f, struct nl_tel_conn *c, const json_t *mg)
{
	static const struct {
		const char *key, *name, *type, *help;
	} per[] = {
		{ "tasks_in", "nlevel_manager_tasks_in_total", "counter",
		  "Tasks that entered the manager's inbox." },
		{ "tasks_out", "nlevel_manager_tasks_out_total", "counter",
		  "Tasks the manager decided on (forwarded, dispatched or refused)." },
		{ "hops_out", "nlevel_manager_forwards_total", "counter",
		  "Tasks the manager forwarded to another manager (hops)." },
		{ "dispatched", "nlevel_manager_dispatched_total", "counter",
		  "Tasks the manager dispatched to machines." },
		{ "refused", "nlevel_manager_refused_total", "counter",
		  "Tasks the manager refused (no machine can take them)." },
		{ "inbox_depth", "nlevel_manager_queue_depth", "gauge",
		  "Tasks waiting in the manager's inbox." },
	};
	const json_t *names = json_object_get(mg, "name");
	size_t n = json_array_size(json_object_get(mg, "tasks_in"));
	uint64_t hist[HIST_BUCKETS] = { 0 };
	double *busy_s = calloc(n > 0 ? n : 1, sizeof(*busy_s));
	double sum_s = 0;
	bool have_hist = false;

	one(f, "nlevel_managers", "gauge", "Managers of the resource tree on this appliance.",
	    ju(mg, "managers"));
	for (size_t p = 0; p < sizeof(per) / sizeof(per[0]); p++) {
		family(f, per[p].name, per[p].type, per[p].help);
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "%s{manager=\"", per[p].name);
			lv(f, json_string_value(json_array_get(names, i)));
			fprintf(f, "\",lcore=\"%" PRIu64 "\"} %" PRIu64 "\n", jai(mg, "lcore", i),
				jai(mg, per[p].key, i));
		}
	}
	for (size_t i = 0; busy_s != NULL && i < n && i < MAX_MGR_HIST; i++) {
		char cmd[64];
		json_t *one_mg;
		const json_t *h;

		snprintf(cmd, sizeof(cmd), "/nlevel/managers,%zu", i);
		one_mg = nl_tel_ask_ctl(c, cmd);
		h = json_object_get(one_mg, "svc_hist_ns_log2");
		double samp_s = 0;

		for (size_t b = 0; b < HIST_BUCKETS && b < json_array_size(h); b++) {
			uint64_t c = nl_tel_u64(json_array_get(h, b));
			/* [2^(b-1), 2^b) ns: counted at 3/4 of 2^b (the middle), within x 4/3 */
			double each_s = 0.75 * ldexp(1.0, (int)b) * 1e-9;

			if (c == 0)
				continue;
			hist[b] += c;
			samp_s += (double)c * each_s;
			have_hist = true;
		}
		sum_s += samp_s;
		/* the engine times about one decision in 16 of those that start at the manager
		 * (nl_dp_lcore.c decide_st(): when its tasks_out is a multiple of 16), a decision
		 * that passes through managers of the same lcore included (nl_policy.h I6) */
		busy_s[i] = 16.0 * samp_s;
		json_decref(one_mg);
	}
	family(f, "nlevel_manager_busy_seconds_total", "counter",
	       "Lcore time of the decisions that start at the manager (passing through managers "
	       "of its lcore included), estimated: 16 x the sampled decisions, each at 3/4 of its "
	       "log2 bucket's bound; rate() of it is the manager's utilisation.");
	for (size_t i = 0; busy_s != NULL && i < n && i < MAX_MGR_HIST; i++) {
		fprintf(f, "nlevel_manager_busy_seconds_total{manager=\"");
		lv(f, json_string_value(json_array_get(names, i)));
		fprintf(f, "\"} %.9g\n", busy_s[i]);
	}
	free(busy_s);
	family(f, "nlevel_decide_duration_seconds", "histogram",
	       "Time of one manager decision (run the policy, forward or dispatch), all managers; "
	       "the engine times one decision in 16 (_sum estimated from the buckets).");
	uint64_t cum = 0;

	for (unsigned int b = 0; have_hist && b + 1 < HIST_BUCKETS; b++) {
		cum += hist[b];
		fprintf(f, "nlevel_decide_duration_seconds_bucket{le=\"%.9g\"} %" PRIu64 "\n",
			ldexp(1.0, (int)b) * 1e-9, cum);
	}
	cum += hist[HIST_BUCKETS - 1];
	fprintf(f, "nlevel_decide_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", cum);
	fprintf(f, "nlevel_decide_duration_seconds_sum %.9g\n", sum_s);
	fprintf(f, "nlevel_decide_duration_seconds_count %" PRIu64 "\n", cum);
}

/* /nlevel/machines: per machine slot: alive, speed, sub-tasks, backlog. */
static void
render_machines(FILE *f, const json_t *m)
{
	size_t n = json_array_size(json_object_get(m, "alive"));
	uint64_t up = 0;

	for (size_t i = 0; i < n; i++)
		up += jai(m, "alive", i) != 0;
	one(f, "nlevel_machines", "gauge", "Machine slots of the configuration.", ju(m, "machines"));
	one(f, "nlevel_machines_up", "gauge", "Machine slots held by a live worker.", up);
	one(f, "nlevel_machine_generation", "gauge",
	    "Machine generation (increases at every join, leave or speed change).",
	    ju(m, "generation"));
	family(f, "nlevel_machine_up", "gauge", "Whether the machine slot is held by a live worker.");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "nlevel_machine_up{machine=\"%zu\"} %" PRIu64 "\n", i, jai(m, "alive", i));
	family(f, "nlevel_machine_speed_instructions_per_second", "gauge",
	       "The machine's speed W_i as its worker announced it.");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "nlevel_machine_speed_instructions_per_second{machine=\"%zu\"} %" PRIu64
			"\n", i, jai(m, "speed_ips", i));
	family(f, "nlevel_machine_subtasks", "gauge", "Sub-tasks on the machine (queued or running).");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "nlevel_machine_subtasks{machine=\"%zu\"} %" PRIu64 "\n", i,
			jai(m, "n_sub", i));
	family(f, "nlevel_machine_backlog_seconds", "gauge",
	       "Work booked on the machine beyond now, as the load table estimates it.");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "nlevel_machine_backlog_seconds{machine=\"%zu\"} %.6g\n", i,
			(double)jai(m, "backlog_vt", i) * PORT_NS_PER_VT * 1e-9);
}

/* /nlevel/submits and /nlevel/submits,ID: task-farm batches by state. */
static void
render_farm(FILE *f, struct nl_tel_conn *c, const json_t *fm)
{
	const json_t *ids = json_object_get(fm, "submit_ids");
	uint64_t b_run = 0, b_ok = 0, b_err = 0, t[5] = { 0 };
	static const char *const tk[5] = { "done_ok", "done_err", "lost", "rejected", "running" };

	for (size_t i = 0; i < json_array_size(ids); i++) {
		char cmd[64];
		json_t *b;

		snprintf(cmd, sizeof(cmd), "/nlevel/submits,%" PRIu64,
			 nl_tel_u64(json_array_get(ids, i)));
		b = nl_tel_ask_ctl(c, cmd);
		if (b == NULL || ju(b, "known") == 0) {
			json_decref(b);
			continue;
		}
		for (unsigned int k = 0; k < 5; k++)
			t[k] += ju(b, tk[k]);
		if (ju(b, "running") > 0 ||
		    ju(b, "accepted") > ju(b, "done_ok") + ju(b, "done_err") + ju(b, "lost"))
			b_run++;
		else if (ju(b, "done_err") + ju(b, "lost") + ju(b, "rejected") > 0)
			b_err++;
		else
			b_ok++;
		json_decref(b);
	}
	family(f, "nlevel_farm_batches", "gauge",
	       "Task-farm batches (submit ids) the appliance remembers, by state: running, done "
	       "(every task exit 0), failed (a task failed, was lost or refused).");
	fprintf(f, "nlevel_farm_batches{state=\"running\"} %" PRIu64 "\n", b_run);
	fprintf(f, "nlevel_farm_batches{state=\"done\"} %" PRIu64 "\n", b_ok);
	fprintf(f, "nlevel_farm_batches{state=\"failed\"} %" PRIu64 "\n", b_err);
	family(f, "nlevel_farm_tasks", "gauge",
	       "Tasks of the remembered batches, by state (ok = exit status 0, error = other).");
	static const char *const tl[5] = { "ok", "error", "lost", "rejected", "running" };

	for (unsigned int k = 0; k < 5; k++)
		fprintf(f, "nlevel_farm_tasks{state=\"%s\"} %" PRIu64 "\n", tl[k], t[k]);
	one(f, "nlevel_farm_handles", "gauge", "Registered farm handles (command + requirements).",
	    ju(fm, "handles"));
	one(f, "nlevel_farm_resent_total", "counter",
	    "Farm submissions answered again without running (client resends).", ju(fm, "resent"));
}

/* /nlevel/principals: per submitter (named principal, or the site key). */
static void
render_principals(FILE *f, const json_t *pr)
{
	static const struct {
		const char *key, *name, *type, *help;
	} per[] = {
		{ "submitted", "nlevel_principal_tasks_submitted_total", "counter", "Tasks submitted." },
		{ "accepted", "nlevel_principal_tasks_accepted_total", "counter", "Tasks accepted." },
		{ "completed", "nlevel_principal_tasks_completed_total", "counter", "Tasks completed." },
		{ "failed", "nlevel_principal_tasks_failed_total", "counter", "Tasks failed." },
		{ "in_flight", "nlevel_principal_tasks_in_flight", "gauge", "Tasks in flight." },
		{ "queued", "nlevel_principal_tasks_queued", "gauge",
		  "Tasks waiting in the fair-share admission queue." },
		{ "denied", "nlevel_principal_messages_denied_total", "counter",
		  "Messages refused by the rights table." },
	};
	const json_t *names = json_object_get(pr, "name");
	size_t n = json_array_size(names);

	for (size_t p = 0; p < sizeof(per) / sizeof(per[0]); p++) {
		family(f, per[p].name, per[p].type, per[p].help);
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "%s{principal=\"", per[p].name);
			lv(f, json_string_value(json_array_get(names, i)));
			fprintf(f, "\"} %" PRIu64 "\n", jai(pr, per[p].key, i));
		}
	}
	family(f, "nlevel_principal_tasks_rejected_total", "counter",
	       "Tasks refused at admission, by principal and reason.");
	for (size_t i = 0; i < n; i++) {
		static const char *const why[] = { "quota", "overload", "other" };

		for (unsigned int r = 0; r < 3; r++) {
			char key[32];

			snprintf(key, sizeof(key), "rejected_%s", why[r]);
			fprintf(f, "nlevel_principal_tasks_rejected_total{principal=\"");
			lv(f, json_string_value(json_array_get(names, i)));
			fprintf(f, "\",reason=\"%s\"} %" PRIu64 "\n", why[r], jai(pr, key, i));
		}
	}
}

/* /nlevel/appliances: scale-out peers (docs/scale-out.md); absent without [appliance]. The
 * command lists every appliance of the configuration, this one ("self") included: the series
 * below are of the others only. */
static bool
is_self(const json_t *names, size_t i, const char *self)
{
	const char *name = json_string_value(json_array_get(names, i));

	return self != NULL && name != NULL && strcmp(self, name) == 0;
}

/* One series per peer (not this appliance) from the per-appliance array `key`. */
static void
peer_series(FILE *f, const json_t *ap, const char *self, const char *name, const char *type,
	    const char *help, const char *key)
{
	const json_t *names = json_object_get(ap, "name");

	family(f, name, type, help);
	for (size_t i = 0; i < json_array_size(names); i++) {
		if (is_self(names, i, self))
			continue;
		fprintf(f, "%s{peer=\"", name);
		lv(f, json_string_value(json_array_get(names, i)));
		fprintf(f, "\"} %" PRIu64 "\n", jai(ap, key, i));
	}
}

static void
render_peers(FILE *f, const json_t *ap)
{
	const json_t *names = json_object_get(ap, "name");
	size_t n = json_array_size(names);
	uint64_t live = 0, gone = 0;
	const char *self = json_string_value(json_object_get(ap, "self"));

	for (size_t i = 0; i < n; i++)
		if (!is_self(names, i, self)) {
			live += jai(ap, "live", i) != 0;
			gone += jai(ap, "live", i) == 0;
		}
	family(f, "nlevel_scaleout_peers", "gauge",
	       "Peer appliances of a split tree, by state (gone: declared dead by SWIM).");
	fprintf(f, "nlevel_scaleout_peers{state=\"live\"} %" PRIu64 "\n", live);
	fprintf(f, "nlevel_scaleout_peers{state=\"gone\"} %" PRIu64 "\n", gone);
	family(f, "nlevel_scaleout_peer_up", "gauge", "Whether the peer appliance is live.");
	for (size_t i = 0; i < n; i++) {
		if (is_self(names, i, self))
			continue;
		fprintf(f, "nlevel_scaleout_peer_up{peer=\"");
		lv(f, json_string_value(json_array_get(names, i)));
		fprintf(f, "\"} %" PRIu64 "\n", jai(ap, "live", i));
	}
	family(f, "nlevel_scaleout_tasks_out_total", "counter", "Tasks handed to the peer.");
	for (size_t i = 0; i < n; i++) {
		if (is_self(names, i, self))
			continue;
		fprintf(f, "nlevel_scaleout_tasks_out_total{peer=\"");
		lv(f, json_string_value(json_array_get(names, i)));
		fprintf(f, "\"} %" PRIu64 "\n", jai(ap, "tasks_out", i));
	}
	peer_series(f, ap, self, "nlevel_scaleout_peer_swim_incarnation", "gauge",
		    "The peer's SWIM incarnation as this appliance knows it.", "swim_incarnation");
	peer_series(f, ap, self, "nlevel_scaleout_peer_suspicions_total", "counter",
		    "Times the peer became SUSPECT in this appliance's SWIM view.", "suspected");
	peer_series(f, ap, self, "nlevel_scaleout_peer_refutations_total", "counter",
		    "Times a suspicion of the peer was refuted (SUSPECT -> ALIVE).", "refuted");
	peer_series(f, ap, self, "nlevel_scaleout_peer_pair_key_refused_total", "counter",
		    "Datagrams from the peer's address not sealed under the pair's key (dropped).",
		    "pair_refused");
	family(f, "nlevel_scaleout_peer_swim_state", "gauge",
	       "The peer's SWIM state (1 for the one it is in: alive, suspect, dead).");
	for (size_t i = 0; i < n; i++) {
		const char *st = json_string_value(json_array_get(json_object_get(ap, "swim_state"), i));
		static const char *const states[3] = { "alive", "suspect", "dead" };

		if (is_self(names, i, self) || st == NULL)
			continue;
		for (unsigned int k = 0; k < 3; k++) {
			fprintf(f, "nlevel_scaleout_peer_swim_state{peer=\"");
			lv(f, json_string_value(json_array_get(names, i)));
			fprintf(f, "\",state=\"%s\"} %d\n", states[k], strcmp(st, states[k]) == 0);
		}
	}
	one(f, "nlevel_scaleout_swim_refuted_self_total", "counter",
	    "Times this appliance refuted a suspicion of itself (SWIM).", ju(ap, "swim_refuted_self"));
	one(f, "nlevel_scaleout_swim_lhm", "gauge",
	    "This appliance's local health multiplier (Lifeguard), 1 = healthy.", ju(ap, "swim_lhm"));
	one(f, "nlevel_scaleout_summaries_future_refused_total", "counter",
	    "Summary records refused: dated more than 60 s ahead of this appliance's clock.",
	    ju(ap, "summaries_future_refused"));
	one(f, "nlevel_scaleout_lost_tasks_total", "counter",
	    "Tasks lost with a peer appliance (each answered FAILED to its client).",
	    ju(ap, "lost_tasks_total"));
	one(f, "nlevel_scaleout_gossip_rounds_total", "counter", "Gossip rounds run.",
	    ju(ap, "gossip_rounds"));
}

char *
nl_metrics_render_ctl(struct nl_tel_conn *c, size_t *len)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	json_t *st, *pr, *mg, *mc, *fm, *ap;

	if (f == NULL)
		return NULL;
	pthread_mutex_lock(&c->mu); /* I1 */
	st = nl_tel_ask_ctl(c, "/nlevel/stats");
	pr = st != NULL ? nl_tel_ask_ctl(c, "/nlevel/principals") : NULL;
	mg = st != NULL ? nl_tel_ask_ctl(c, "/nlevel/managers") : NULL;
	mc = st != NULL ? nl_tel_ask_ctl(c, "/nlevel/machines") : NULL;
	fm = st != NULL ? nl_tel_ask_ctl(c, "/nlevel/submits") : NULL;
	ap = st != NULL ? nl_tel_ask_ctl(c, "/nlevel/appliances") : NULL;
	one(f, "nlevel_up", "gauge",
	    "Whether the appliance answered this scrape (1: serving; 0: starting or stopping).",
	    st != NULL);
	if (st != NULL)
		render_stats(f, st, pr);
	if (mg != NULL)
		render_managers(f, c, mg);
	if (mc != NULL)
		render_machines(f, mc);
	if (fm != NULL)
		render_farm(f, c, fm);
	if (pr != NULL && json_array_size(json_object_get(pr, "name")) > 0)
		render_principals(f, pr);
	if (ap != NULL && json_object_get(ap, "self") != NULL)
		render_peers(f, ap);
	pthread_mutex_unlock(&c->mu);
	json_decref(st);
	json_decref(pr);
	json_decref(mg);
	json_decref(mc);
	json_decref(fm);
	json_decref(ap);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	*len = size;
	return text;
}
