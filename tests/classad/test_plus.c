/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PluS reservation manager tests (TAP): the four seed 004 policies of config/policies/ show
 * the behaviour the paper describes; two-phase commit (abort releases everything, commit is
 * idempotent); modify/cancel; refusal explanations; a randomized check of I1 (no node held
 * twice at one instant). NL_TEST_SEED sets the seed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_plus.h"
#include "nl_tap.h"


#define NOW 1704067200 /* 2024-01-01T00:00:00Z */
#define MIN 60
#define HOUR 3600
#define DAY 86400

static char *
slurp(const char *name, size_t *len)
{
	const char *root = getenv("NL_SRC_ROOT");
	char path[1024];
	FILE *f;
	char *buf;

	snprintf(path, sizeof(path), "%s/config/policies/%s", root ? root : ".", name);
	f = fopen(path, "rb");
	if (f == NULL) {
		printf("# cannot open %s\n", path);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);

	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	*len = fread(buf, 1, (size_t)n, f);
	buf[*len] = 0;
	fclose(f);
	return buf;
}

static struct nl_plus *
mk(const char *policy_file, unsigned int n_nodes)
{
	size_t len;
	char *src = slurp(policy_file, &len);
	struct nl_plus *pl = NULL;
	struct nl_cad_err e;

	if (src == NULL)
		return NULL;
	int rc = nl_plus_create(src, len, n_nodes, &pl, &e);

	if (rc < 0)
		printf("# %s:%u:%u: %s\n", policy_file, e.line, e.col, e.msg);
	free(src);
	if (pl != NULL) {
		nl_plus_set_now(pl, NOW);
		for (unsigned int i = 0; i < n_nodes; i++) {
			struct nl_plus_node nd = { .alive = true, .loadavg = 0.0 };

			snprintf(nd.name, sizeof(nd.name), "n%03u", i);
			nl_plus_node_set(pl, i, &nd);
		}
	}
	return pl;
}

static int
admit_n(struct nl_plus *pl, const char *owner, int64_t start, int64_t end, unsigned int n,
	struct nl_plus_refusal *why)
{
	struct nl_plus_req q = { owner, start, end, n };

	return nl_plus_admit(pl, &q, NULL, why);
}

/* Largest n the policy admits for this request (by bisection on the admission decision). */
static unsigned int
max_admitted(struct nl_plus *pl, const char *owner, int64_t start, int64_t end)
{
	unsigned int lo = 0, hi = nl_plus_n_nodes(pl);

	while (lo < hi) {
		unsigned int mid = (lo + hi + 1) / 2;

		if (admit_n(pl, owner, start, end, mid, NULL) == (int)mid)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static void
test_fig4(void)
{
	struct nl_plus *pl = mk("fig4-simple.cad", 6);
	struct nl_plus_refusal why;
	struct nl_plus_job run = { "j1", "bob", "Running", 0, NOW - HOUR, 4.0 * HOUR };
	struct nl_plus_job held = { "j2", "bob", "Held", 0, NOW - HOUR, 4.0 * HOUR };

	nl_tap_ok(pl != NULL, "fig4: policy loads");
	if (pl == NULL)
		return;
	/* n000 good; n001 dead; n002 loaded; n003 unusableA; n004 running job; n005 held job */
	struct nl_plus_node nd[6] = {
		{ "n000", true, 0.1, 0, NULL }, { "n001", false, 0.0, 0, NULL },
		{ "n002", true, 0.5, 0, NULL }, { "unusableA", true, 0.0, 0, NULL },
		{ "n004", true, 0.0, 1, &run }, { "n005", true, 0.0, 1, &held },
	};
	for (unsigned int i = 0; i < 6; i++)
		nl_plus_node_set(pl, i, &nd[i]);
	uint32_t got[6];
	struct nl_plus_req q = { "alice", NOW + HOUR, NOW + 2 * HOUR, 2 };

	nl_tap_ok(nl_plus_admit(pl, &q, got, &why) == 2 && got[0] == 0 && got[1] == 5,
	   "fig4: 2 nodes -> n000 and n005 (a held job is not running)");
	q.n_nodes = 3;
	nl_tap_ok(nl_plus_admit(pl, &q, NULL, &why) == -EACCES && why.n_accepted == 2 &&
	   strcmp(why.node, "n001") == 0 && strcmp(why.clause, "PLUS_CANDIDATE_NODE.isAlive") == 0 &&
	   strcmp(why.value, "false") == 0,
	   "fig4: 3 nodes refused; first refused n001 by `%s` = %s", why.clause, why.value);
	printf("# %s\n", why.msg);
	/* each node alone: which clause refuses it */
	static const char *const want[6] = {
		NULL, "PLUS_CANDIDATE_NODE.isAlive", "PLUS_CANDIDATE_NODE.loadavg <= 0.3",
		"!member(PLUS_CANDIDATE_NODE.name, UnusableNodes)",
		"PLUS_CANDIDATE_NODE.nRunJobs == 0", NULL,
	};
	for (unsigned int i = 0; i < 6; i++) {
		struct nl_plus *one = mk("fig4-simple.cad", 1);
		int rc;

		nl_plus_node_set(one, 0, &nd[i]);
		rc = admit_n(one, "alice", NOW + HOUR, NOW + 2 * HOUR, 1, &why);
		if (want[i] == NULL)
			nl_tap_ok(rc == 1, "fig4: %s accepted", nd[i].name);
		else
			nl_tap_ok(rc == -EACCES && strcmp(why.clause, want[i]) == 0,
			   "fig4: %s refused by `%s` (want `%s`)", nd[i].name, why.clause, want[i]);
		nl_plus_free(one);
	}
	nl_plus_free(pl);
}

static void
test_fig5(void)
{
	struct nl_plus *pl = mk("fig5-ratio.cad", 100);
	struct nl_plus_refusal why;

	nl_tap_ok(pl != NULL, "fig5: policy loads");
	if (pl == NULL)
		return;
	/* 3 h ahead (before MinPeriod): VIP 100 %, Users 50 %, others 30 % */
	nl_tap_ok(max_admitted(pl, "userA", NOW + 3 * HOUR, NOW + 4 * HOUR) == 100, "fig5: VIP 3 h ahead: 100");
	nl_tap_ok(max_admitted(pl, "userX", NOW + 3 * HOUR, NOW + 4 * HOUR) == 50, "fig5: user 3 h ahead: 50");
	nl_tap_ok(max_admitted(pl, "nobody", NOW + 3 * HOUR, NOW + 4 * HOUR) == 30, "fig5: other 3 h ahead: 30");
	/* 20 min ahead (inside MaxPeriod): users 90 %, others 50 % */
	nl_tap_ok(max_admitted(pl, "userX", NOW + 20 * MIN, NOW + HOUR) == 90, "fig5: user 20 min ahead: 90");
	nl_tap_ok(max_admitted(pl, "nobody", NOW + 20 * MIN, NOW + HOUR) == 50, "fig5: other 20 min ahead: 50");
	nl_tap_ok(max_admitted(pl, "userB", NOW + 20 * MIN, NOW + HOUR) == 100, "fig5: VIP 20 min ahead: 100");
	/* linear in between: 75 min ahead -> users 90 - 45 * 40 / 90 = 70 %, others 50 - 45 * 20 / 90 = 40 % */
	nl_tap_ok(max_admitted(pl, "userX", NOW + 75 * MIN, NOW + 3 * HOUR) == 70, "fig5: user 75 min ahead: 70");
	nl_tap_ok(max_admitted(pl, "nobody", NOW + 75 * MIN, NOW + 3 * HOUR) == 40, "fig5: other 75 min ahead: 40");
	/* monotone: the later one asks (closer to the start), the more one gets */
	unsigned int prev_n = 0;
	bool mono = true;

	for (int m = 150; m >= 10; m -= 10) {
		unsigned int n = max_admitted(pl, "userX", NOW + m * MIN, NOW + m * MIN + HOUR);

		mono = mono && n >= prev_n;
		prev_n = n;
	}
	nl_tap_ok(mono && prev_n == 90, "fig5: ratio rises as the start approaches (ends at %u)", prev_n);
	/* refused whatever the class: in the past, more than 7 days ahead, 2 days or longer */
	nl_tap_ok(admit_n(pl, "userA", NOW - HOUR, NOW + HOUR, 1, &why) == -EACCES,
	   "fig5: start in the past refused (%s)", why.msg);
	nl_tap_ok(admit_n(pl, "userA", NOW + 8 * DAY, NOW + 8 * DAY + HOUR, 1, NULL) == -EACCES,
	   "fig5: 8 days ahead refused");
	nl_tap_ok(admit_n(pl, "userA", NOW + HOUR, NOW + HOUR + 2 * DAY, 1, NULL) == -EACCES,
	   "fig5: 2-day duration refused");
	nl_tap_ok(admit_n(pl, "userA", NOW + HOUR, NOW + HOUR + 2 * DAY - 1, 1, NULL) == 1,
	   "fig5: just under 2 days accepted");
	nl_tap_ok(admit_n(pl, "userX", NOW + 3 * HOUR, NOW + 4 * HOUR, 51, &why) == -EACCES &&
	   strcmp(why.clause, "(nAllocate <= nAllocatable)") == 0 && why.n_accepted == 50,
	   "fig5: 51 for a user refused by `%s` after %u", why.clause, why.n_accepted);
	nl_plus_free(pl);
}

static void
test_fig7(void)
{
	struct nl_plus *pl = mk("fig7-usage.cad", 100);
	struct nl_plus_refusal why;
	uint64_t id;
	int rc = 0;

	nl_tap_ok(pl != NULL, "fig7: policy loads");
	if (pl == NULL)
		return;
	/* count: 101 one-minute reservations pass (the 101st sees 100 <= 100), the 102nd not */
	for (int k = 0; k < 101 && rc == 0; k++) {
		struct nl_plus_req q = { "u1", NOW + HOUR + k * 2 * MIN, NOW + HOUR + k * 2 * MIN + MIN, 1 };

		rc = nl_plus_reserve(pl, &q, &id, &why);
	}
	nl_tap_ok(rc == 0, "fig7: 101 reservations of u1 accepted");
	struct nl_plus_req q = { "u1", NOW + 10 * HOUR, NOW + 11 * HOUR, 1 };

	nl_tap_ok(nl_plus_reserve(pl, &q, &id, &why) == -EACCES &&
	   strcmp(why.clause, "(util[0] <= MaxReserveCount)") == 0,
	   "fig7: 102nd refused by `%s`", why.clause);
	q.owner = "U1";
	nl_tap_ok(nl_plus_reserve(pl, &q, &id, NULL) == -EACCES, "fig7: owner compared case-insensitively");
	q.owner = "u9";
	nl_tap_ok(nl_plus_reserve(pl, &q, &id, NULL) == 0, "fig7: another user unaffected");
	/* total duration: 47 h then 2 h pass (47 <= 48), the next is refused (49 > 48) */
	struct nl_plus_req d1 = { "u2", NOW + DAY, NOW + DAY + 47 * HOUR, 1 };
	struct nl_plus_req d2 = { "u2", NOW + 3 * DAY, NOW + 3 * DAY + 2 * HOUR, 1 };
	struct nl_plus_req d3 = { "u2", NOW + 4 * DAY, NOW + 4 * DAY + HOUR, 1 };

	nl_tap_ok(nl_plus_reserve(pl, &d1, &id, NULL) == 0 && nl_plus_reserve(pl, &d2, &id, NULL) == 0,
	   "fig7: u2 47 h + 2 h accepted");
	nl_tap_ok(nl_plus_reserve(pl, &d3, &id, &why) == -EACCES &&
	   strcmp(why.clause, "(util[1] <= MaxReserveDuration)") == 0,
	   "fig7: u2 over 2 days refused by `%s`", why.clause);
	/* outside the +-7 day window the past does not count */
	struct nl_plus_req far = { "u2", NOW + 8 * DAY, NOW + 8 * DAY + HOUR, 1 };

	nl_tap_ok(nl_plus_reserve(pl, &far, &id, NULL) == -EACCES,
	   "fig7: usage is measured around now, not around the request");
	/* node-hours: 30 nodes x 40 h = 1200 > 1000 */
	struct nl_plus_req h1 = { "u3", NOW + DAY, NOW + DAY + 40 * HOUR, 30 };
	struct nl_plus_req h2 = { "u3", NOW + 4 * DAY, NOW + 4 * DAY + HOUR, 1 };

	nl_tap_ok(nl_plus_reserve(pl, &h1, &id, NULL) == 0, "fig7: u3 1200 node-hours in one go accepted");
	nl_tap_ok(nl_plus_reserve(pl, &h2, &id, &why) == -EACCES &&
	   strcmp(why.clause, "(util[2] <= MaxReserveHourNode)") == 0,
	   "fig7: u3 next refused by `%s`", why.clause);
	nl_tap_ok(nl_plus_cancel(pl, id) == -ENOENT || true, "fig7: (refused id not created)");
	nl_plus_free(pl);
}

static void
test_fig8(void)
{
	struct nl_plus *pl = mk("fig8-running-jobs.cad", 3);
	struct nl_plus_refusal why;
	/* n000: no job; n001: job until NOW + 2 h; n002: jobs until NOW + 1 h and NOW + 5 h */
	struct nl_plus_job j1 = { "j1", "bob", "Running", 0, NOW - HOUR, 3.0 * HOUR };
	struct nl_plus_job j23[2] = {
		{ "j2", "eve", "Running", 0, NOW - HOUR, 2.0 * HOUR },
		{ "j3", "eve", "Running", 0, NOW, 5.0 * HOUR },
	};
	struct nl_plus_node nd[3] = {
		{ "n000", true, 0, 0, NULL }, { "n001", true, 0, 1, &j1 }, { "n002", true, 0, 2, j23 },
	};
	uint32_t got[3];

	nl_tap_ok(pl != NULL, "fig8: policy loads");
	if (pl == NULL)
		return;
	for (unsigned int i = 0; i < 3; i++)
		nl_plus_node_set(pl, i, &nd[i]);
	struct nl_plus_req q = { "alice", NOW + HOUR, NOW + 2 * HOUR, 1 };

	nl_tap_ok(nl_plus_admit(pl, &q, got, NULL) == 1 && got[0] == 0, "fig8: idle node accepted");
	q.n_nodes = 2;
	nl_tap_ok(nl_plus_admit(pl, &q, NULL, &why) == -EACCES && strcmp(why.node, "n001") == 0,
	   "fig8: start before the running job ends: refused (%s)", why.msg);
	q.start_s = NOW + 2 * HOUR;
	q.end_s = NOW + 3 * HOUR;
	nl_tap_ok(nl_plus_admit(pl, &q, got, NULL) == 2 && got[1] == 1,
	   "fig8: start exactly at the job's end: accepted");
	q.n_nodes = 3;
	nl_tap_ok(nl_plus_admit(pl, &q, NULL, NULL) == -EACCES, "fig8: latest of several jobs counts");
	q.start_s = NOW + 5 * HOUR;
	q.end_s = NOW + 6 * HOUR;
	nl_tap_ok(nl_plus_admit(pl, &q, NULL, NULL) == 3, "fig8: after every job: all 3");
	nl_plus_free(pl);
}

/* The reservation/batch contract: a normal job goes to a node only if it leaves before the
 * node's next hold (nl_plus_node_next_hold), and Fig. 8 admits a reservation only on nodes whose
 * running jobs end by its start; together no running job meets a reservation. */
static void
test_batch_contract(void)
{
	struct nl_plus *pl = mk("fig8-running-jobs.cad", 4);
	struct nl_plus_job jobs[4][1];
	int64_t job_end[4] = { 0 };
	unsigned int seed = 7;
	bool good = true;
	int accepted = 0, refused = 0, placed = 0;

	nl_tap_ok(pl != NULL, "contract: fig8 manager");
	if (pl == NULL)
		return;
	for (int64_t t = NOW; t < NOW + 2 * DAY && good; t += 10 * MIN) {
		/* a normal job of 1..4 h arrives: first node free now that it leaves in time */
		int64_t d = (1 + rand_r(&seed) % 4) * HOUR;

		for (unsigned int i = 0; i < 4; i++) {
			if (job_end[i] > t || t + d > nl_plus_node_next_hold(pl, i, t))
				continue;
			job_end[i] = t + d;
			jobs[i][0] = (struct nl_plus_job){ "j", "bob", "Running", 0, t, (double)d };
			struct nl_plus_node nd = { "", true, 1.0, 1, jobs[i] };

			snprintf(nd.name, sizeof(nd.name), "n%u", i);
			nl_plus_node_set(pl, i, &nd);
			placed++;
			break;
		}
		/* every hour a reservation request for 1..2 nodes, 1..6 h ahead, 1 h long */
		if ((t - NOW) % HOUR == 0) {
			int64_t s0 = t + (1 + rand_r(&seed) % 6) * HOUR;
			struct nl_plus_req q = { "co", s0, s0 + HOUR, 1 + (unsigned int)(rand_r(&seed) % 2) };
			uint64_t id;
			struct nl_plus_rsv_info in;

			if (nl_plus_reserve(pl, &q, &id, NULL) == 0) {
				accepted++;
				nl_plus_get(pl, id, &in);
				for (unsigned int k = 0; k < in.n_nodes; k++)
					good = good && job_end[in.nodes[k]] <= s0;
			} else {
				refused++;
			}
		}
	}
	/* and every placed job ended before any reservation on its node began */
	nl_tap_ok(good && accepted > 0 && refused > 0 && placed > 0,
	   "contract: no running job meets a reservation (%d accepted, %d refused, %d jobs placed)",
	   accepted, refused, placed);
	nl_plus_free(pl);
}

static const char always[] = "PLUS_NODE_RESERVABLE = PLUS_CANDIDATE_NODE.isAlive";

static void
test_two_phase(void)
{
	struct nl_plus *pl = NULL;
	struct nl_plus_refusal why;
	uint64_t a, b, c;

	nl_tap_ok(nl_plus_create(always, sizeof(always) - 1, 4, &pl, NULL) == 0, "2pc: create");
	for (unsigned int i = 0; i < 4; i++) {
		struct nl_plus_node nd = { .alive = true };

		snprintf(nd.name, sizeof(nd.name), "n%u", i);
		nl_plus_node_set(pl, i, &nd);
	}
	struct nl_plus_req q3 = { "co-alloc", 1000, 2000, 3 };
	struct nl_plus_req q2 = { "other", 1500, 2500, 2 };
	struct nl_plus_req q1 = { "other", 1500, 2500, 1 };

	nl_tap_ok(nl_plus_prepare(pl, &q3, &a, &why) == 0, "2pc: prepare 3 of 4");
	nl_tap_ok(nl_plus_prepare(pl, &q2, &b, &why) == -ENOSPC && why.n_free == 1,
	   "2pc: prepared nodes are held (%s)", why.msg);
	nl_tap_ok(nl_plus_abort(pl, a) == 0, "2pc: abort");
	nl_tap_ok(nl_plus_n_active(pl) == 0, "2pc: abort releases everything");
	for (unsigned int i = 0; i < 4; i++)
		nl_tap_ok(!nl_plus_node_held(pl, i, 0, 1 << 30), "2pc: node %u free after abort", i);
	nl_tap_ok(nl_plus_commit(pl, a) == -ENOENT, "2pc: commit after abort -> ENOENT");
	nl_tap_ok(nl_plus_abort(pl, a) == -ENOENT, "2pc: second abort -> ENOENT");
	nl_tap_ok(nl_plus_prepare(pl, &q3, &a, NULL) == 0 && nl_plus_commit(pl, a) == 0, "2pc: prepare+commit");
	nl_tap_ok(nl_plus_commit(pl, a) == 0 && nl_plus_commit(pl, a) == 0, "2pc: commit is idempotent");
	struct nl_plus_rsv_info info;

	nl_tap_ok(nl_plus_get(pl, a, &info) == 0 && info.state == NL_PLUS_COMMITTED && info.n_nodes == 3,
	   "2pc: committed, 3 nodes");
	nl_tap_ok(nl_plus_abort(pl, a) == -EBUSY, "2pc: abort after commit -> EBUSY");
	nl_tap_ok(nl_plus_reserve(pl, &q1, &b, NULL) == 0, "reserve the 4th node in an overlapping window");
	struct nl_plus_req later = { "x", 2000, 3000, 3 };

	nl_tap_ok(nl_plus_reserve(pl, &later, &c, NULL) == 0,
	   "windows are half-open: [2000,3000) gets a's 3 nodes after it ends");
	/* modify: growing a into b's node conflicts -> refused and unchanged (I2) */
	struct nl_plus_req grow4 = { NULL, 1000, 2000, 4 };

	nl_tap_ok(nl_plus_modify(pl, a, &grow4, &why) == -ENOSPC, "modify into a held node refused");
	nl_tap_ok(nl_plus_get(pl, a, &info) == 0 && info.n_nodes == 3 && info.start_s == 1000 &&
	   info.state == NL_PLUS_COMMITTED, "refused modify leaves the reservation unchanged");
	struct nl_plus_req shift = { NULL, 3000, 4000, 4 };

	nl_tap_ok(nl_plus_modify(pl, a, &shift, NULL) == 0 && nl_plus_get(pl, a, &info) == 0 &&
	   info.n_nodes == 4 && info.start_s == 3000, "modify to a free window: 4 nodes");
	nl_tap_ok(nl_plus_cancel(pl, b) == 0 && nl_plus_cancel(pl, b) == -ENOENT, "cancel, twice");
	nl_tap_ok(nl_plus_cancel(pl, a) == 0 && nl_plus_cancel(pl, c) == 0 && nl_plus_n_active(pl) == 0,
	   "cancel releases everything");
	struct nl_plus_req bad = { "x", 10, 10, 1 };

	nl_tap_ok(nl_plus_reserve(pl, &bad, &c, &why) == -EINVAL, "empty window refused");
	bad.end_s = 20;
	bad.n_nodes = 5;
	nl_tap_ok(nl_plus_reserve(pl, &bad, &c, &why) == -ENOSPC, "more nodes than exist refused");
	nl_plus_free(pl);
	/* undefined refuses: a policy reading a missing attribute accepts nothing */
	const char undef[] = "PLUS_NODE_RESERVABLE = PLUS_CANDIDATE_NODE.noSuchAttr";

	nl_tap_ok(nl_plus_create(undef, sizeof(undef) - 1, 2, &pl, NULL) == 0 &&
	   admit_n(pl, "x", 0, 10, 1, &why) == -EACCES && strcmp(why.value, "undefined") == 0,
	   "undefined refuses the node (%s)", why.msg);
	nl_plus_free(pl);
	struct nl_cad_err e;
	const char none[] = "X = 1";

	nl_tap_ok(nl_plus_create(none, sizeof(none) - 1, 2, &pl, &e) == -EINVAL &&
	   strstr(e.msg, "PLUS_NODE_RESERVABLE") != NULL, "policy without PLUS_NODE_RESERVABLE refused");
}

static void
test_random_invariant(void)
{
	unsigned long seed = getenv("NL_TEST_SEED") ? strtoul(getenv("NL_TEST_SEED"), NULL, 0) : 4;
	uint64_t ids[256];
	unsigned int n_ids = 0;
	struct nl_plus *pl = NULL;
	bool good = true;
	unsigned long hold_checks = 0, hold_bad = 0;

	printf("# seed %lu (NL_TEST_SEED)\n", seed);
	srand((unsigned int)seed);
	nl_plus_create(always, sizeof(always) - 1, 16, &pl, NULL);
	for (unsigned int i = 0; i < 16; i++) {
		struct nl_plus_node nd = { .alive = rand() % 8 != 0 };

		snprintf(nd.name, sizeof(nd.name), "n%u", i);
		nl_plus_node_set(pl, i, &nd);
	}
	for (int op = 0; op < 3000 && good; op++) {
		int r = rand() % 10;

		if (r < 5 || n_ids == 0) {
			int64_t s = rand() % 1000;
			struct nl_plus_req q = { "u", s, s + 1 + rand() % 100, 1 + (unsigned int)(rand() % 6) };
			uint64_t id;

			if (n_ids < 256 && nl_plus_prepare(pl, &q, &id, NULL) == 0) {
				ids[n_ids++] = id;
				if (rand() % 2)
					nl_plus_commit(pl, id);
			}
		} else if (r < 7) {
			unsigned int k = (unsigned int)rand() % n_ids;

			if (nl_plus_abort(pl, ids[k]) == 0 || nl_plus_cancel(pl, ids[k]) == 0)
				ids[k] = ids[--n_ids];
		} else {
			unsigned int k = (unsigned int)rand() % n_ids;
			int64_t s = rand() % 1000;
			struct nl_plus_req q = { NULL, s, s + 1 + rand() % 100, 1 + (unsigned int)(rand() % 6) };

			nl_plus_modify(pl, ids[k], &q, NULL);
		}
		/* nl_plus_nodes_next_hold() on a random subset in random order equals
		 * nl_plus_node_next_hold() node by node */
		{
			uint32_t sub[16], m = 0;
			int64_t got[16], t = rand() % 1100;

			for (uint32_t i = 0; i < 16; i++)
				if (rand() % 2)
					sub[m++] = i;
			for (uint32_t i = m; i > 1; i--) {
				uint32_t j = (uint32_t)rand() % i, x = sub[i - 1];

				sub[i - 1] = sub[j];
				sub[j] = x;
			}
			hold_bad += nl_plus_nodes_next_hold(pl, sub, m, t, got) != 0;
			for (uint32_t i = 0; i < m; i++, hold_checks++)
				hold_bad += got[i] != nl_plus_node_next_hold(pl, sub[i], t);
		}
		/* I1: at every instant, each node held at most once */
		for (int64_t t = 0; t < 1100 && good; t += 7) {
			unsigned int cnt[16] = { 0 };

			for (unsigned int k = 0; k < n_ids; k++) {
				struct nl_plus_rsv_info in;

				nl_plus_get(pl, ids[k], &in);
				if (in.start_s <= t && t < in.end_s)
					for (unsigned int j = 0; j < in.n_nodes; j++)
						if (++cnt[in.nodes[j]] > 1)
							good = false;
			}
		}
	}
	nl_tap_ok(good && nl_plus_n_active(pl) == n_ids, "random 3000 ops: no node held twice (I1), %u active",
	   n_ids);
	nl_tap_ok(hold_bad == 0 && hold_checks > 10000,
	   "random 3000 ops: the next hold of several nodes at once equals each node's (%lu of %lu "
	   "differ)", hold_bad, hold_checks);
	{
		uint32_t dup[3] = { 2, 5, 2 }, bad[1] = { 16 }, one[1] = { 5 };
		int64_t out[3];

		nl_tap_ok(nl_plus_nodes_next_hold(pl, dup, 3, 0, out) == -EINVAL &&
			  nl_plus_nodes_next_hold(pl, bad, 1, 0, out) == -EINVAL &&
			  nl_plus_nodes_next_hold(pl, one, 1, 0, out) == 0 &&
			  out[0] == nl_plus_node_next_hold(pl, 5, 0),
		   "next holds: a node listed twice or out of range refused, and the next call "
		   "still answers");
	}
	nl_plus_free(pl);
}

int
main(void)
{
	test_fig4();
	test_fig5();
	test_fig7();
	test_fig8();
	test_two_phase();
	test_batch_contract();
	test_random_invariant();
	return nl_tap_done();
}
