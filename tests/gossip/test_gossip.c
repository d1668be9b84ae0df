/* SPDX-License-Identifier: BSD-3-Clause */
/* nl_gossip unit tests: merge order, newer wins, expiry, leave, stop after k, NAT never
 * contacted, join learns the view, the index under random insert/remove. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nl_gossip.h"
#include "nl_tap.h"

static struct nl_gossip_rec
rec(uint32_t src, double created, uint32_t free_cores)
{
	return (struct nl_gossip_rec){ .src = src, .cores = 4, .free_cores = free_cores,
				       .mem_mb = 2048, .arch = 1, .state = NL_GOSSIP_UP,
				       .created_s = created, .lifetime_s = 100 };
}

static const struct nl_gossip_cfg ae = { .fanout = 1, .mode = NL_GOSSIP_PUSH_PULL,
					 .rule = NL_GOSSIP_ANTI_ENTROPY, .stop_k = 1 };

static void
test_cfg_check_refuses_bad_parameters(void)
{
	struct nl_gossip_cfg c = ae;

	nl_tap_ok(nl_gossip_cfg_check(&c) == 0, "cfg_check accepts push-pull f=1 anti-entropy");
	c.fanout = 0;
	nl_tap_ok(nl_gossip_cfg_check(&c) == -EINVAL, "cfg_check refuses fan-out 0");
	c = ae;
	c.fanout = NL_GOSSIP_MAX_FANOUT + 1;
	nl_tap_ok(nl_gossip_cfg_check(&c) == -EINVAL, "cfg_check refuses fan-out above max");
	c = ae;
	c.rule = NL_GOSSIP_STOP_K;
	c.stop_k = 0;
	nl_tap_ok(nl_gossip_cfg_check(&c) == -EINVAL, "cfg_check refuses stop-k with k = 0");
}

static void
test_merge_keeps_newer_whatever_the_order(void)
{
	struct nl_gossip_view *a, *b;
	struct nl_gossip_rec rs[3] = { rec(7, 10, 1), rec(7, 30, 3), rec(7, 20, 2) };
	int perm[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
			   { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	bool all = true;

	for (int p = 0; p < 6; p++) {
		nl_gossip_view_create(&a, 1, 4);
		for (int k = 0; k < 3; k++)
			nl_gossip_merge_st(a, &rs[perm[p][k]], 31);
		const struct nl_gossip_rec *r = nl_gossip_view_find_st(a, 7);

		all &= r != NULL && r->created_s == 30 && r->free_cores == 3 &&
		       nl_gossip_view_size(a) == 1;
		nl_gossip_view_free(a);
	}
	nl_tap_ok(all, "merge_keeps_the_newest_creation_time_in_all_6_arrival_orders");

	nl_gossip_view_create(&b, 1, 4);
	nl_tap_ok(nl_gossip_merge_st(b, &rs[1], 31) == NL_GOSSIP_MERGE_NEW, "first record is new");
	nl_tap_ok(nl_gossip_merge_st(b, &rs[0], 31) == NL_GOSSIP_MERGE_KNOWN,
		  "older record of the same source is known, not stored");
	nl_tap_ok(nl_gossip_view_find_st(b, 7)->free_cores == 3, "older record did not overwrite");
	nl_tap_ok(nl_gossip_merge_st(b, &rs[1], 31) == NL_GOSSIP_MERGE_KNOWN,
		  "same creation time is known");
	uint64_t e0 = nl_gossip_view_epoch(b);
	struct nl_gossip_rec newer = rec(7, 40, 0);

	nl_tap_ok(nl_gossip_merge_st(b, &newer, 41) == NL_GOSSIP_MERGE_NEW &&
		  nl_gossip_view_find_st(b, 7)->free_cores == 0 && nl_gossip_view_epoch(b) > e0,
		  "newer record replaces and bumps the epoch");
	struct nl_gossip_rec self = rec(1, 50, 4);

	nl_tap_ok(nl_gossip_merge_st(b, &self, 51) == NL_GOSSIP_MERGE_NEW, "a record about me from "
		  "others is stored when I have none");
	nl_gossip_set_self_st(b, &(struct nl_gossip_rec){ .cores = 4, .free_cores = 2,
		.created_s = 60, .lifetime_s = 100 });
	struct nl_gossip_rec fake = rec(1, 70, 4);

	nl_tap_ok(nl_gossip_merge_st(b, &fake, 71) == NL_GOSSIP_MERGE_KNOWN &&
		  nl_gossip_view_find_st(b, 1)->free_cores == 2,
		  "nobody else overwrites the owner's own record");
	nl_gossip_view_free(b);
}

static void
test_expiry_drops_records_past_lifetime(void)
{
	struct nl_gossip_view *v;
	struct nl_gossip_rec r1 = rec(2, 0, 1), r2 = rec(3, 50, 1);

	nl_gossip_view_create(&v, 1, 4);
	nl_gossip_set_self_st(v, &(struct nl_gossip_rec){ .created_s = 0, .lifetime_s = 10 });
	nl_gossip_merge_st(v, &r1, 1);
	nl_gossip_merge_st(v, &r2, 51);
	nl_tap_ok(nl_gossip_expire_st(v, 99) == 0 && nl_gossip_view_size(v) == 3,
		  "nothing expires before created + lifetime (own record past its lifetime kept)");
	nl_tap_ok(nl_gossip_expire_st(v, 100) == 1 && nl_gossip_view_find_st(v, 2) == NULL &&
		  nl_gossip_view_find_st(v, 3) != NULL && nl_gossip_view_find_st(v, 1) != NULL,
		  "the record created at 0 with lifetime 100 is dropped at 100, the others stay");
	nl_tap_ok(nl_gossip_merge_st(v, &r1, 100) == NL_GOSSIP_MERGE_EXPIRED &&
		  nl_gossip_view_find_st(v, 2) == NULL, "an expired record is not merged back");
	struct nl_gossip_rec out[4];

	nl_tap_ok(nl_gossip_view_copy_st(v, 151, true, out, 4, NULL) == 1 && out[0].src == 1,
		  "copy skips records past their lifetime even before expire runs");
	nl_gossip_view_free(v);
}

static void
test_leave_message_spreads_and_removes_candidate(void)
{
	struct nl_gossip_view *v[3];
	struct nl_gossip_scratch scr = { 0 };
	struct nl_rng rng;
	uint32_t peers[NL_GOSSIP_MAX_FANOUT];

	nl_rng_seed(&rng, 5);
	for (uint32_t i = 0; i < 3; i++) {
		nl_gossip_view_create(&v[i], i, 4);
		struct nl_gossip_rec r = rec(i, 1, 1);

		nl_gossip_set_self_st(v[i], &r);
	}
	nl_gossip_exchange_st(v[0], v[1], &ae, 2, &scr, NULL);
	nl_gossip_exchange_st(v[1], v[2], &ae, 2, &scr, NULL);
	nl_gossip_exchange_st(v[0], v[2], &ae, 2, &scr, NULL);
	nl_tap_ok(nl_gossip_view_size(v[2]) == 3, "three nodes know each other");
	nl_tap_ok(nl_gossip_leave_st(v[0], 3, 100) == 0, "leave accepted");
	nl_gossip_exchange_st(v[0], v[1], &ae, 4, &scr, NULL);
	nl_gossip_exchange_st(v[1], v[2], &ae, 5, &scr, NULL);
	const struct nl_gossip_rec *r = nl_gossip_view_find_st(v[2], 0);

	nl_tap_ok(r != NULL && r->state == NL_GOSSIP_LEFT && r->created_s == 3,
		  "leave message reached node 2 through node 1");
	struct nl_gossip_rec out[4];
	size_t n = nl_gossip_view_copy_st(v[2], 6, true, out, 4, NULL);
	bool no0 = true;

	for (size_t i = 0; i < n; i++)
		no0 &= out[i].src != 0;
	nl_tap_ok(n == 2 && no0, "a reader's copy (up only) no longer offers the node that left");
	bool never = true;

	for (int t = 0; t < 200; t++) {
		unsigned int k = nl_gossip_pick_peers_st(v[2], &ae, 6, &rng, peers);

		never &= k == 1 && peers[0] == 1;
	}
	nl_tap_ok(never, "the node that left is never picked as a peer");
	struct nl_gossip_rec stale = rec(0, 2, 1);

	nl_tap_ok(nl_gossip_merge_st(v[2], &stale, 6) == NL_GOSSIP_MERGE_KNOWN &&
		  nl_gossip_view_find_st(v[2], 0)->state == NL_GOSSIP_LEFT,
		  "an older 'up' record does not resurrect a node that left");
	nl_tap_ok(nl_gossip_expire_st(v[2], 102.5) == 1 && nl_gossip_view_find_st(v[2], 0) != NULL,
		  "at 102.5 only node 1's record (created 1, lifetime 100) has expired");
	nl_tap_ok(nl_gossip_expire_st(v[2], 103) == 1 && nl_gossip_view_find_st(v[2], 0) == NULL &&
		  nl_gossip_view_size(v[2]) == 1,
		  "the leave message (created 3) expires at 103; the owner's record stays");
	for (int i = 0; i < 3; i++)
		nl_gossip_view_free(v[i]);
	nl_gossip_scratch_fini(&scr);
}

static void
test_stop_after_k_known_replies(void)
{
	struct nl_gossip_cfg sk = { .fanout = 1, .mode = NL_GOSSIP_PUSH, .rule = NL_GOSSIP_STOP_K,
				    .stop_k = 2 };
	struct nl_gossip_view *a, *b[4];
	struct nl_gossip_scratch scr = { 0 };
	struct nl_gossip_xstats st = { 0 };
	struct nl_gossip_rec buf[4];
	struct nl_gossip_rec r = rec(9, 1, 1);

	nl_gossip_view_create(&a, 0, 4);
	nl_gossip_merge_st(a, &r, 1);
	for (uint32_t i = 0; i < 4; i++) {
		nl_gossip_view_create(&b[i], i + 1, 4);
		nl_gossip_merge_st(b[i], &r, 1); /* every receiver already knows it */
	}
	nl_tap_ok(nl_gossip_collect_st(a, &sk, 2, buf, 4) == 1, "a new record is hot (sent)");
	nl_gossip_exchange_st(a, b[0], &sk, 2, &scr, &st);
	nl_tap_ok(st.recs_known == 1 && nl_gossip_collect_st(a, &sk, 2, buf, 4) == 1,
		  "after 1 'already known' reply (k = 2) it is still pushed");
	nl_gossip_exchange_st(a, b[1], &sk, 2, &scr, &st);
	nl_tap_ok(st.recs_known == 2 && nl_gossip_collect_st(a, &sk, 2, buf, 4) == 0,
		  "after k = 2 replies it stops being pushed");
	nl_gossip_exchange_st(a, b[2], &sk, 2, &scr, &st);
	nl_tap_ok(st.recs_sent == 2, "a stopped rumour is not sent any more");
	nl_tap_ok(nl_gossip_collect_st(a, &ae, 2, buf, 4) == 1,
		  "anti-entropy still sends the stopped record (it never stops)");
	struct nl_gossip_ack stale = { .src = 9, .created_s = 0.5 };
	struct nl_gossip_rec r2 = rec(9, 3, 0);

	nl_gossip_merge_st(a, &r2, 3);
	nl_gossip_acked_st(a, &sk, &stale, 1);
	nl_gossip_acked_st(a, &sk, &stale, 1);
	nl_tap_ok(nl_gossip_collect_st(a, &sk, 3, buf, 4) == 1,
		  "replies about an older record do not stop the newer one");
	nl_gossip_view_free(a);
	for (int i = 0; i < 4; i++)
		nl_gossip_view_free(b[i]);
	nl_gossip_scratch_fini(&scr);
}

static void
test_nat_nodes_never_contacted_but_learn(void)
{
	enum { N = 40 };
	struct nl_gossip_view *v[N];
	struct nl_gossip_scratch scr = { 0 };
	struct nl_rng rng;
	bool nat_picked = false;

	nl_rng_seed(&rng, nl_tap_seed(11));
	for (uint32_t i = 0; i < N; i++) {
		struct nl_gossip_rec r = rec(i, 1, 1);

		r.flags = i % 2 ? NL_GOSSIP_F_NAT : 0; /* half behind NAT */
		r.lifetime_s = 1e6;
		nl_gossip_view_create(&v[i], i, N);
		nl_gossip_set_self_st(v[i], &r);
	}
	/* everyone joins through node 0 (not NAT'd), then gossips */
	for (uint32_t i = 1; i < N; i++)
		nl_gossip_join_st(v[i], v[0], 2, &scr);
	struct nl_gossip_rec news = rec(0, 5, 0);

	news.lifetime_s = 1e6;
	nl_gossip_set_self_st(v[0], &news);
	for (int round = 0; round < 30; round++) {
		for (uint32_t i = 0; i < N; i++) {
			uint32_t p[NL_GOSSIP_MAX_FANOUT];
			unsigned int k = nl_gossip_pick_peers_st(v[i], &ae, 6 + round, &rng, p);

			for (unsigned int j = 0; j < k; j++) {
				nat_picked |= (p[j] % 2) == 1;
				nl_gossip_exchange_st(v[i], v[p[j]], &ae, 6 + round, &scr, NULL);
			}
		}
	}
	nl_tap_ok(!nat_picked, "no NAT'd node was ever picked as a peer in 1200 picks");
	bool all = true;

	for (uint32_t i = 1; i < N; i += 2)
		all &= nl_gossip_view_find_st(v[i], 0)->created_s == 5;
	nl_tap_ok(all, "every NAT'd node still learnt the new record through its own exchanges");
	for (uint32_t i = 0; i < N; i++)
		nl_gossip_view_free(v[i]);
	nl_gossip_scratch_fini(&scr);
}

static void
test_join_learns_the_view(void)
{
	struct nl_gossip_view *c, *j;
	struct nl_gossip_scratch scr = { 0 };
	const struct nl_gossip_cfg sk = { .fanout = 1, .mode = NL_GOSSIP_PUSH,
					  .rule = NL_GOSSIP_STOP_K, .stop_k = 1 };
	struct nl_gossip_ack ack[64];

	nl_gossip_view_create(&c, 0, 4);
	for (uint32_t i = 1; i <= 50; i++) {
		struct nl_gossip_rec r = rec(i + 100, 1, 1);

		nl_gossip_merge_st(c, &r, 1);
		ack[i - 1] = (struct nl_gossip_ack){ .src = i + 100, .created_s = 1 };
	}
	nl_gossip_acked_st(c, &sk, ack, 50); /* none of them is hot any more */
	nl_gossip_view_create(&j, 999, 4);
	struct nl_gossip_rec me = rec(999, 2, 4);

	nl_gossip_set_self_st(j, &me);
	nl_gossip_join_st(j, c, 2, &scr);
	nl_tap_ok(nl_gossip_view_size(j) == 51 && nl_gossip_view_find_st(j, 150) != NULL,
		  "the joiner copied all 50 records even though none is hot");
	nl_tap_ok(nl_gossip_view_find_st(c, 999) != NULL, "the contact learnt the joiner's record");
	nl_gossip_view_free(c);
	nl_gossip_view_free(j);
	nl_gossip_scratch_fini(&scr);
}

static void
test_index_matches_reference_under_churn(void)
{
	enum { U = 300 };
	struct nl_gossip_view *v;
	double ref[U];
	struct nl_rng rng;
	bool ok = true;

	nl_rng_seed(&rng, 99);
	nl_gossip_view_create(&v, 100000, 2);
	for (int i = 0; i < U; i++)
		ref[i] = -1;
	for (int step = 1; step <= 20000 && ok; step++) {
		uint32_t s = (uint32_t)(nl_rng_u64(&rng) % U);
		struct nl_gossip_rec r = rec(s, step, 1);

		r.lifetime_s = 1 + (double)(nl_rng_u64(&rng) % 400);
		if (nl_gossip_merge_st(v, &r, step) == NL_GOSSIP_MERGE_NEW)
			ref[s] = step + r.lifetime_s;
		if (step % 97 == 0) {
			nl_gossip_expire_st(v, step);
			for (int i = 0; i < U; i++)
				if (ref[i] >= 0 && ref[i] <= step)
					ref[i] = -1;
			size_t live = 0;

			for (uint32_t i = 0; i < U; i++) {
				const struct nl_gossip_rec *f = nl_gossip_view_find_st(v, i);

				live += ref[i] >= 0;
				ok &= (f != NULL) == (ref[i] >= 0);
				ok &= f == NULL || f->created_s + f->lifetime_s == ref[i];
			}
			ok &= live == nl_gossip_view_size(v);
		}
	}
	nl_tap_ok(ok, "index agrees with a reference table over 20000 merges and 206 expiries");
	nl_gossip_view_free(v);
}

int
main(void)
{
	test_cfg_check_refuses_bad_parameters();
	test_merge_keeps_newer_whatever_the_order();
	test_expiry_drops_records_past_lifetime();
	test_leave_message_spreads_and_removes_candidate();
	test_stop_after_k_known_replies();
	test_nat_nodes_never_contacted_but_learn();
	test_join_learns_the_view();
	test_index_matches_reference_under_churn();
	return nl_tap_done();
}
