/* SPDX-License-Identifier: BSD-3-Clause */
/* Spread of one record on nl_gossip views against theory (Karp et al., FOCS 2000: push-pull,
 * fan-out 1, anti-entropy reaches all N nodes in log3 N + O(ln ln N) rounds; push only needs
 * log2 N + ln N), the seed's stop rule, NAT'd nodes, and determinism. */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <string.h>

#include "nl_gspread.h"
#include "nl_tap.h"

static double
mean_rounds(uint32_t n, enum nl_gossip_mode mode, unsigned int trials, uint64_t seed,
	    double *min_share)
{
	double s = 0;

	*min_share = 1;
	for (unsigned int t = 0; t < trials; t++) {
		struct nl_gspread_cfg c = { .n_nodes = n, .max_rounds = 100, .seed = seed + t,
					    .g = { .fanout = 1, .mode = mode,
						   .rule = NL_GOSSIP_ANTI_ENTROPY, .stop_k = 1 } };
		struct nl_gspread_res r;

		if (nl_gspread_run(&c, &r) != 0)
			return -1;
		s += r.rounds_all;
		if (r.final_share < *min_share)
			*min_share = r.final_share;
	}
	return s / trials;
}

int
main(void)
{
	uint64_t seed = nl_tap_seed(42);
	double ms, r1k, r10k, p1k;

	r1k = mean_rounds(1000, NL_GOSSIP_PUSH_PULL, 20, seed, &ms);
	nl_tap_diag("push-pull 1000 nodes: %.2f rounds (theory log3 N + ln ln N = %.2f)", r1k,
		    log(1000) / log(3) + log(log(1000)));
	nl_tap_ok(ms == 1 && r1k >= 7.5 && r1k <= 10.5,
		  "push-pull f=1 anti-entropy reaches all of 1,000 nodes in 9 +- 1.5 rounds (%.2f)",
		  r1k);
	r10k = mean_rounds(10000, NL_GOSSIP_PUSH_PULL, 4, seed + 100, &ms);
	nl_tap_ok(ms == 1 && r10k >= 10.5 && r10k <= 13.5,
		  "push-pull f=1 anti-entropy reaches all of 10,000 nodes in 12 +- 1.5 rounds (%.2f)",
		  r10k);
	p1k = mean_rounds(1000, NL_GOSSIP_PUSH, 10, seed + 200, &ms);
	nl_tap_ok(ms == 1 && p1k >= 1.5 * r1k && p1k >= 14,
		  "push-only takes clearly more at 1,000 nodes (%.2f rounds, theory log2 N + ln N = "
		  "%.1f)", p1k, log2(1000) + log(1000));

	/* the seed's rule (f = 1, k = 1): the rumour dies before reaching everyone */
	struct nl_gspread_cfg sk = { .n_nodes = 1000, .max_rounds = 100, .seed = seed,
				     .g = { .fanout = 1, .mode = NL_GOSSIP_PUSH,
					    .rule = NL_GOSSIP_STOP_K, .stop_k = 1 } };
	struct nl_gspread_res a, b;
	double share = 0;

	for (int t = 0; t < 10; t++) {
		sk.seed = seed + 300 + t;
		nl_gspread_run(&sk, &a);
		share += a.final_share / 10;
	}
	nl_tap_ok(share > 0.5 && share < 0.97,
		  "push rumour mongering with k = 1 informs most but not all nodes (%.3f; Demers "
		  "et al. 1987: ~0.8)", share);

	/* stop rules k = 1, 2, 3 against Demers et al. 1987 §1.4: for push rumour mongering
	 * with feedback the residue s (share never informed) and the traffic m (copies sent per
	 * node) obey s = e^-m (derived there; their simulated counter variant follows it too:
	 * 0.18, 0.037, 0.011 for m = 1.74, 3.30, 4.53), and the residue falls with k (the coin
	 * variant's s = e^-(k+1)(1-s): 0.203, 0.060, 0.020). Seeds 1-8 gave 0.204-0.215,
	 * 0.059-0.063 and 0.018-0.020 with m = 1.57-1.59, 2.81-2.82 and 3.92-3.93; with k ignored
	 * (every rumour stops at its first "known") all three are 0.21 and this fails */
	double res_k[4] = { 0 }, m_k[4] = { 0 };
	bool law = true;

	for (unsigned int k = 1; k <= 3; k++) {
		sk.g.stop_k = k;
		for (int t = 0; t < 10; t++) {
			sk.seed = seed + 800 + 10 * k + t;
			nl_gspread_run(&sk, &a);
			res_k[k] += (1 - a.final_share) / 10;
			m_k[k] += (double)a.recs_sent / sk.n_nodes / 10;
		}
		law &= fabs(res_k[k] / exp(-m_k[k]) - 1) < 0.25;
	}
	nl_tap_ok(law && res_k[1] > 2 * res_k[2] && res_k[2] > 2 * res_k[3] && res_k[3] > 0,
		  "push stop-k: residue = e^-traffic and falls with k (Demers et al. 1987): k = 1 "
		  "%.3f (e^-%.2f = %.3f), k = 2 %.3f (e^-%.2f = %.3f), k = 3 %.3f (e^-%.2f = %.3f)",
		  res_k[1], m_k[1], exp(-m_k[1]), res_k[2], m_k[2], exp(-m_k[2]), res_k[3], m_k[3],
		  exp(-m_k[3]));

	/* NAT'd nodes: 50 %% behind NAT, push-pull still reaches everyone, a little slower */
	struct nl_gspread_cfg nat = { .n_nodes = 1000, .nat_share = 0.5, .max_rounds = 100,
				      .g = { .fanout = 1, .mode = NL_GOSSIP_PUSH_PULL,
					     .rule = NL_GOSSIP_ANTI_ENTROPY, .stop_k = 1 } };
	double rn = 0;
	bool all = true;

	for (int t = 0; t < 10; t++) {
		nat.seed = seed + 400 + t;
		nl_gspread_run(&nat, &a);
		rn += a.rounds_all / 10.0;
		all &= a.final_share == 1;
	}
	nl_tap_ok(all && rn >= 6 && rn <= 12,
		  "with half the nodes behind NAT push-pull still reaches every node (%.2f rounds, "
		  "%.2f without NAT)", rn, r1k);
	/* push only: a NAT'd node is never contacted, so nothing is ever pushed to it; the
	 * source holds its own rumour even when it is NAT'd itself (one node in 1,000) */
	nat.g.mode = NL_GOSSIP_PUSH;
	nat.nat_share = 0.3;
	nat.seed = seed + 500;
	nl_gspread_run(&nat, &a);
	nl_tap_ok(a.final_share <= 0.7 + 1.0 / nat.n_nodes + 1e-9 && a.final_share >= 0.6,
		  "push-only never reaches the 30 %% NAT'd nodes (final share %.3f)", a.final_share);

	/* initiators that cannot tell NAT'd nodes (§5.1.2): a draw of one is a failed
	 * connection, so the stop-k rumour needs more rounds and reaches a smaller share as the
	 * NAT'd share grows (Fig. 8's trends) */
	struct nl_gspread_cfg bl = { .n_nodes = 1000, .max_rounds = 200, .nat_blind = true,
				     .g = { .fanout = 1, .mode = NL_GOSSIP_PUSH_PULL,
					    .rule = NL_GOSSIP_STOP_K, .stop_k = 1 } };
	double br[3] = { 0 }, bs[3] = { 0 };
	uint64_t failed0 = 0, failed1 = 0;

	for (int q = 0; q < 3; q++) {
		bl.nat_share = 0.3 * q;
		for (int t = 0; t < 10; t++) {
			bl.seed = seed + 600 + t;
			nl_gspread_run(&bl, &a);
			br[q] += a.rounds_conv / 10.0;
			bs[q] += a.final_share / 10.0;
			if (q == 0)
				failed0 += a.failed;
			if (q == 1)
				failed1 += a.failed;
		}
	}
	nl_tap_ok(failed0 == 0 && failed1 > 0 && br[1] > br[0] + 1 && br[2] > br[1] + 1 &&
			  bs[1] < bs[0] && bs[2] < bs[1] && bs[1] > 0.7,
		  "blind peer choice: rounds to converge rise (%.1f, %.1f, %.1f) and the share falls "
		  "(%.3f, %.3f, %.3f) at 0, 30, 60 %% NAT'd", br[0], br[1], br[2], bs[0], bs[1],
		  bs[2]);

	/* messages: the stop rule sends the record fewer times than anti-entropy does until
	 * everyone holds it */
	struct nl_gspread_cfg mc = { .n_nodes = 1000, .max_rounds = 100, .seed = seed + 700,
				     .g = { .fanout = 1, .mode = NL_GOSSIP_PUSH_PULL,
					    .rule = NL_GOSSIP_STOP_K, .stop_k = 1 } };
	uint64_t sk_sent, ae_sent;

	nl_gspread_run(&mc, &a);
	sk_sent = a.recs_sent;
	mc.g.rule = NL_GOSSIP_ANTI_ENTROPY;
	nl_gspread_run(&mc, &a);
	ae_sent = a.recs_sent;
	nl_tap_ok(sk_sent > 900 && sk_sent * 2 < ae_sent && ae_sent <= 2 * a.exchanges,
		  "records sent: stop-k %llu, anti-entropy %llu (at most 2 per exchange, %llu "
		  "exchanges)", (unsigned long long)sk_sent, (unsigned long long)ae_sent,
		  (unsigned long long)a.exchanges);

	/* determinism: same seed, same run; another seed, another run */
	struct nl_gspread_cfg d = { .n_nodes = 500, .nat_share = 0.2, .max_rounds = 100,
				    .seed = 7, .g = { .fanout = 2, .mode = NL_GOSSIP_PUSH_PULL,
						      .rule = NL_GOSSIP_STOP_K, .stop_k = 2 } };

	nl_gspread_run(&d, &a);
	nl_gspread_run(&d, &b);
	nl_tap_ok(memcmp(&a, &b, sizeof(a)) == 0, "same seed gives the same spread, round by round");
	d.seed = 8;
	nl_gspread_run(&d, &b);
	nl_tap_ok(memcmp(&a, &b, sizeof(a)) != 0, "another seed gives another spread");
	struct nl_gspread_cfg bad = d;

	bad.n_nodes = 1;
	nl_tap_ok(nl_gspread_run(&bad, &a) == -EINVAL, "a spread over one node is refused");
	return nl_tap_done();
}
