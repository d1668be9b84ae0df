/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-worker's DONEs not yet acknowledged (tools/worker/nl_wpend.h, issue #34): an
 * acknowledged DONE is never resent; one not acknowledged is resent at 0.3, 0.9, 2.1, 4.5,
 * 7.5 s ... (gap doubling up to 3 s) and dropped 120 s after its first send; a DONE kept
 * again restarts its back-off without a second entry; an ack of nothing is counted; 20,000
 * DONEs outstanding at once are kept or counted full, never lost silently; and a random
 * mix of adds, acks and polls resends exactly what a plain list model resends. TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_proto.h"
#include "nl_tap.h"
#include "nl_wpend.h"

#define MS 1000000ull
#define S 1000000000ull

static struct nl_msg_done
done_of(uint64_t id, uint16_t sub, uint32_t token)
{
	return (struct nl_msg_done){ .task_id = id, .sub = sub, .token = token, .status = 7 };
}

/* what the table resent in one poll */
#define LOG_MAX 4096
static struct nl_msg_done logd[LOG_MAX];
static unsigned int n_log;

static void
rec(void *arg, const struct nl_msg_done *d)
{
	(void)arg;
	if (n_log < LOG_MAX)
		logd[n_log] = *d;
	n_log++;
}

static void
rec_count(void *arg, const struct nl_msg_done *d)
{
	(void)d;
	(*(unsigned int *)arg)++;
}

/* the model: a plain list */
struct ment {
	struct nl_msg_done d;
	uint64_t first, due, gap;
	int live;
};
#define M_MAX 600
static struct ment model[M_MAX];
static unsigned int n_model;

static int
cmp_done(const void *a, const void *b)
{
	const struct nl_msg_done *x = a, *y = b;

	if (x->task_id != y->task_id)
		return x->task_id < y->task_id ? -1 : 1;
	if (x->sub != y->sub)
		return x->sub < y->sub ? -1 : 1;
	return x->token < y->token ? -1 : x->token > y->token;
}

static uint64_t rs = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

int
main(void)
{
	struct nl_wpend p;
	struct nl_msg_done d = done_of(UINT64_C(9) << 32 | 1, 2, 33);
	uint64_t t0 = 1000 * S, next;
	unsigned int n_resend = 0;
	bool ok;

	nl_tap_check(nl_wpend_init(&p) == 0, "init");
	/* acknowledged: never resent */
	nl_wpend_add(&p, &d, t0);
	ok = nl_wpend_ack(&p, d.task_id, d.sub, d.token) && p.n == 0;
	n_log = 0;
	next = nl_wpend_poll(&p, t0 + 10 * S, rec, NULL);
	nl_tap_ok(ok && n_log == 0 && next == UINT64_MAX && p.n_acked == 1,
		  "an acknowledged DONE is forgotten and never resent");
	nl_tap_ok(!nl_wpend_ack(&p, d.task_id, d.sub, d.token) && p.n_ack_unknown == 1 &&
			  !nl_wpend_ack(&p, d.task_id, (uint16_t)(d.sub + 1), d.token) &&
			  p.n_ack_unknown == 2,
		  "a second ack, or an ack of another sub-task, finds nothing and is counted");

	/* not acknowledged: the back-off, then given up */
	nl_wpend_add(&p, &d, t0);
	n_log = 0;
	next = nl_wpend_poll(&p, t0 + 299 * MS, rec, NULL);
	ok = n_log == 0 && next == t0 + 300 * MS;
	{
		static const uint64_t want[] = { 300, 900, 2100, 4500, 7500, 10500 };
		uint64_t t = t0;

		for (unsigned int i = 0; i < 6; i++) {
			n_log = 0;
			next = nl_wpend_poll(&p, t0 + want[i] * MS, rec, NULL);
			ok = ok && n_log == 1 && cmp_done(&logd[0], &d) == 0 && logd[0].status == 7;
			if (i < 5)
				ok = ok && next == t0 + want[i + 1] * MS;
			n_log = 0;
			nl_wpend_poll(&p, t0 + want[i] * MS + 1, rec, NULL);
			ok = ok && n_log == 0;
			t = t0 + want[i] * MS;
		}
		nl_tap_ok(ok, "resent at 0.3, 0.9, 2.1, 4.5, 7.5, 10.5 s (the gap doubles to 3 s), "
			      "once each");
		while ((next = nl_wpend_poll(&p, t, rec, NULL)) != UINT64_MAX && t < t0 + 200 * S)
			t = next;
		/* resends at 0.3..10.5 (6), then every 3 s from 13.5 while < 120 s: 36 more */
		nl_tap_ok(p.n == 0 && p.n_gave_up == 1 && p.n_resent == 6 + 36 &&
				  t >= t0 + NL_WPEND_GIVE_UP_NS && t < t0 + NL_WPEND_GIVE_UP_NS + 3 * S,
			  "given up 120 s after its first send (%llu resends in all, at %.1f s)",
			  (unsigned long long)p.n_resent, (double)(t - t0) / 1e9);
	}
	/* kept again: one entry, back-off from the start */
	nl_wpend_add(&p, &d, t0);
	nl_wpend_poll(&p, t0 + 300 * MS, rec, NULL);
	nl_wpend_add(&p, &d, t0 + 400 * MS);
	n_log = 0;
	next = nl_wpend_poll(&p, t0 + 600 * MS, rec, NULL);
	nl_tap_ok(p.n == 1 && n_log == 0 && next == t0 + 700 * MS &&
			  nl_wpend_ack(&p, d.task_id, d.sub, d.token) && p.n == 0,
		  "a DONE sent again (answered from the run record) is one entry, its back-off anew");
	/* task id 0 is not a DONE to keep */
	{
		struct nl_msg_done z = done_of(0, 0, 1);

		nl_tap_ok(!nl_wpend_add(&p, &z, t0) && p.n == 0, "task id 0 is not kept");
	}
	/* 20,000 outstanding at once: kept or counted, never lost silently */
	{
		uint64_t kept = 0;
		unsigned int back = 0;

		for (uint32_t i = 0; i < 20000; i++) {
			struct nl_msg_done x = done_of((UINT64_C(5) << 32) | i, (uint16_t)(i % 3), i);

			kept += nl_wpend_add(&p, &x, t0);
		}
		for (uint32_t i = 0; i < 20000; i++)
			back += nl_wpend_ack(&p, (UINT64_C(5) << 32) | i, (uint16_t)(i % 3), i);
		nl_tap_ok(kept + p.n_full == 20000 && back == kept && p.n == 0 && kept >= 15000 &&
				  nl_wpend_poll(&p, t0 + S, rec, NULL) == UINT64_MAX,
			  "20,000 at once: %llu kept and acknowledged, %llu counted full",
			  (unsigned long long)kept, (unsigned long long)p.n_full);
	}
	nl_wpend_fini(&p);

	/* differential: random adds, acks and polls against a plain list */
	nl_tap_check(nl_wpend_init(&p) == 0, "init again");
	{
		uint64_t t = t0;
		unsigned int bad = 0, polls = 0, resends = 0;

		for (unsigned int step = 0; step < 60000 && bad == 0; step++) {
			unsigned int op = (unsigned int)(rnd() % 10);

			t += rnd() % (200 * MS);
			if (op < 3 && n_model < M_MAX) { /* add (new or again) */
				struct nl_msg_done x;
				unsigned int j = n_model;

				if (n_model > 0 && rnd() % 4 == 0) {
					j = (unsigned int)(rnd() % n_model);
					x = model[j].d;
				} else {
					x = done_of((UINT64_C(1) << 32) | (rnd() % 100000),
						    (uint16_t)(rnd() % 64), (uint32_t)(rnd() % 4096));
					for (unsigned int k = 0; k < n_model; k++)
						if (model[k].live && cmp_done(&model[k].d, &x) == 0)
							j = k;
				}
				if (!nl_wpend_add(&p, &x, t)) {
					bad++;
					break;
				}
				if (j == n_model)
					n_model++;
				model[j] = (struct ment){ x, t, t + NL_WPEND_FIRST_NS,
							  NL_WPEND_FIRST_NS, 1 };
			} else if (op < 6 && n_model > 0) { /* ack one, live or not */
				unsigned int j = (unsigned int)(rnd() % n_model);
				bool got = nl_wpend_ack(&p, model[j].d.task_id, model[j].d.sub,
							model[j].d.token);

				bad += got != (model[j].live != 0);
				model[j].live = 0;
			} else { /* poll */
				struct nl_msg_done want[M_MAX];
				unsigned int nw = 0;
				uint64_t mnext = UINT64_MAX;

				for (unsigned int k = 0; k < n_model; k++) {
					struct ment *e = &model[k];

					if (!e->live)
						continue;
					if (t >= e->due) {
						if (t - e->first >= NL_WPEND_GIVE_UP_NS) {
							e->live = 0;
							continue;
						}
						want[nw++] = e->d;
						e->gap = e->gap * 2 < NL_WPEND_MAX_GAP_NS ? e->gap * 2 : NL_WPEND_MAX_GAP_NS;
						e->due = t + e->gap;
					}
					if (e->due < mnext)
						mnext = e->due;
				}
				n_log = 0;
				next = nl_wpend_poll(&p, t, rec, NULL);
				qsort(logd, n_log < LOG_MAX ? n_log : LOG_MAX, sizeof(logd[0]), cmp_done);
				qsort(want, nw, sizeof(want[0]), cmp_done);
				polls++;
				resends += nw;
				/* next: never after the true next due time (an ack may leave it
				 * early: one scan that finds nothing due) */
				if (n_log != nw || next > mnext || (mnext == UINT64_MAX) != (p.n == 0))
					bad++;
				for (unsigned int k = 0; k < nw && k < n_log && bad == 0; k++)
					bad += cmp_done(&logd[k], &want[k]) != 0;
			}
			/* compact the model now and then */
			if (n_model == M_MAX) {
				unsigned int w = 0;

				for (unsigned int k = 0; k < n_model; k++)
					if (model[k].live)
						model[w++] = model[k];
				n_model = w;
			}
			{
				unsigned int live = 0;

				for (unsigned int k = 0; k < n_model; k++)
					live += model[k].live;
				bad += live != p.n;
			}
		}
		n_resend = resends;
		nl_tap_ok(bad == 0 && polls > 1000 && n_resend > 1000,
			  "60,000 random adds, acks and polls: the same resends and count as a plain "
			  "list, the next due time never late (%u polls, %u resends)", polls, n_resend);
	}
	nl_wpend_fini(&p);

	/* #36: a failover from appliance 0 to 1 moves the DONEs of other appliances' tasks
	 * (origin_seq != 0) to 1 as relayed ENDED, due at once, and drops the rest; a restart
	 * (0 to 0) marks them relayed and keeps every DONE; each_to visits exactly one dest's */
	nl_tap_check(nl_wpend_init(&p) == 0, "init for the relay");
	{
		uint64_t t = t0;
		unsigned int n_rel = 0, n_plain = 0, seen = 0;
		uint32_t relayed = 9, dropped;
		bool ok = true;

		for (unsigned int i = 1; i <= 40; i++) {
			struct nl_msg_done x = done_of(i, 0, i);

			if (i % 4 == 0) {
				x.origin_seq = i;
				x.origin_app = 2;
				n_rel++;
			} else {
				n_plain++;
			}
			ok &= nl_wpend_add_to(&p, &x, t, i % 5 == 0 ? 1 : 0);
		}
		/* those added to dest 1 (i % 5 == 0) stay where they are */
		nl_wpend_each_to(&p, 0, rec_count, &seen);
		ok &= seen == p.n_to[0] && p.n_to[0] == 32 && p.n_to[1] == 8;
		dropped = nl_wpend_relay_to(&p, 0, 0, t + 1, &relayed); /* a restart */
		ok &= dropped == 0 && relayed == 8 && p.n == 40 && p.n_to[0] == 32;
		n_log = 0;
		nl_wpend_poll(&p, t + 1, rec, NULL); /* the relayed ones are due at once */
		ok &= n_log == 8;
		for (unsigned int k = 0; k < n_log && k < LOG_MAX; k++)
			ok &= logd[k].relay == NL_RELAY_ENDED && logd[k].origin_seq != 0;
		dropped = nl_wpend_relay_to(&p, 0, 1, t + 2, &relayed); /* a failover */
		ok &= relayed == 8 && dropped == 24 && p.n_to[0] == 0 && p.n_to[1] == 16 &&
		      p.n == 16 && p.n_dropped == 24;
		seen = 0;
		nl_wpend_each_to(&p, 1, rec_count, &seen);
		ok &= seen == 16;
		(void)n_rel;
		(void)n_plain;
		nl_tap_ok(ok, "relay: a restart marks the DONEs of other appliances' tasks relayed "
			      "and keeps all, a failover moves them (due at once) and drops the rest");
	}
	nl_wpend_fini(&p);
	return nl_tap_done();
}
