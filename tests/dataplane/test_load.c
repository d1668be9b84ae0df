/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QSBR load tables (managers/load/nl_load.h): a view is the last snapshot plus its own
 * bookings not yet applied (I5); snapshots are immutable and freed after a grace period
 * while readers keep refreshing (I2, I3; ASan sees any early free). TAP.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <urcu/uatomic.h>
#include <urcu/urcu-qsbr.h>

#include "nl_load.h"
#include "nl_tap.h"


static void
test_view_replays_unapplied_bookings(void)
{
	struct nl_load_table *t;
	struct nl_load_view v;
	uint64_t s1, s2, s3;
	bool good = true;

	nl_load_create(&t, 4, 2);
	nl_load_view_init(&v, 1, 4, 8);
	good &= nl_load_view_refresh_rcu(&v, t);
	s1 = nl_load_view_book_st(&v, 2, 10, 5);   /* busy 15 */
	s2 = nl_load_view_book_st(&v, 2, 12, 5);   /* busy 20 */
	s3 = nl_load_view_book_st(&v, 3, 0, 1);    /* busy 1 */
	good &= s1 == 1 && s2 == 2 && s3 == 3 && v.load[2].busy_until_vt == 20;
	/* the writer applied the first booking only, plus another manager's booking on 2 */
	nl_load_apply_ctl(t, 1, s1, 2, 10, 5);
	nl_load_apply_ctl(t, 0, 1, 2, 0, 100);    /* busy 115 */
	nl_load_publish_ctl(t);
	good &= nl_load_view_refresh_rcu(&v, t);
	/* snapshot 2: busy 115 (both applied), replay s2 on top: 120; s3 on 3: 1 */
	good &= v.load[2].busy_until_vt == 120 && v.load[2].n_sub == 3;
	good &= v.load[3].busy_until_vt == 1 && v.load[3].n_sub == 1;
	good &= !nl_load_view_refresh_rcu(&v, t); /* same version: nothing to do */
	nl_tap_check(good, "test_view_is_snapshot_plus_unapplied_bookings");

	/* log overflow forgets the oldest, counted */
	for (int i = 0; i < 20; i++)
		nl_load_view_book_st(&v, 0, 0, 1);
	nl_tap_check(v.log_lost > 0 && v.load[0].n_sub == 20, "test_full_log_counts_lost_bookings");
	nl_tap_check(nl_load_view_book_st(&v, 9, 0, 1) == 0, "test_booking_unknown_machine_refused");
	nl_tap_check(nl_load_resize_ctl(t, 6) == 0 && nl_load_view_refresh_rcu(&v, t) && v.n_mach == 4,
	   "test_resize_publishes_and_view_keeps_its_capacity");
	nl_load_view_fini(&v);
	urcu_qsbr_thread_offline();
	nl_load_free(t);
	urcu_qsbr_thread_online();
}

/* A publish after its predecessor's grace period reuses that snapshot instead of allocating
 * (in steady state the writer, the I/O lcore, allocates nothing and so maps no memory); one
 * that grew past a spare's room allocates a new one; the contents are the working table's. */
static void
test_publish_reuses_snapshots_past_their_grace_period(void)
{
	struct nl_load_table *t;
	struct nl_load_view v;
	bool good = true;

	nl_load_create(&t, 8, 1);
	nl_load_view_init(&v, 0, 16, 8);
	for (uint32_t k = 1; k <= 10; k++) {
		nl_load_entry_ctl(t, k % 8)->n_sub = k;
		nl_load_publish_ctl(t);
		urcu_qsbr_thread_offline();
		urcu_qsbr_barrier(); /* the predecessor's callback has run: it is spare */
		urcu_qsbr_thread_online();
		good &= nl_load_view_refresh_rcu(&v, t) && v.load[k % 8].n_sub == k;
	}
	printf("# 10 publishes, each after the last one's grace period: %lu snapshots allocated\n",
	       (unsigned long)t->n_snap_alloc);
	/* the first at create, the second at the first publish (nothing spare yet) */
	nl_tap_check(good && t->n_snap_alloc == 2, "test_publish_reuses_snapshots_past_their_grace_period");
	nl_load_resize_ctl(t, 12); /* the spare has room for 8: a new one */
	nl_load_entry_ctl(t, 11)->n_sub = 7;
	nl_load_publish_ctl(t);
	good = nl_load_view_refresh_rcu(&v, t) && v.n_mach == 12 && v.load[11].n_sub == 7;
	nl_tap_check(good && t->n_snap_alloc > 2, "test_grown_table_does_not_reuse_a_smaller_snapshot");
	nl_load_view_fini(&v);
	urcu_qsbr_thread_offline();
	nl_load_free(t);
	urcu_qsbr_thread_online();
}

struct rd {
	struct nl_load_table *t;
	unsigned long torn, refreshes;
	int *stop;
};

static void *
reader(void *arg)
{
	struct rd *r = arg;
	struct nl_load_view v;

	urcu_qsbr_register_thread();
	nl_load_view_init(&v, 0, 64, 16);
	while (!uatomic_read(r->stop)) { /* relaxed flag: nothing is published through it */
		if (nl_load_view_refresh_rcu(&v, r->t)) {
			r->refreshes++;
			for (unsigned int i = 1; i < v.n_mach; i++)
				if (v.load[i].n_sub != v.load[0].n_sub)
					r->torn++;
		}
		urcu_qsbr_quiescent_state();
	}
	nl_load_view_fini(&v);
	urcu_qsbr_unregister_thread();
	return NULL;
}

static void
test_readers_never_see_torn_or_freed_snapshots(void)
{
	struct nl_load_table *t;
	int stop = 0;
	struct rd r[2];
	pthread_t th[2];
	unsigned long torn = 0, refr = 0;

	nl_load_create(&t, 64, 1);
	for (int i = 0; i < 2; i++) {
		r[i] = (struct rd){ .t = t, .stop = &stop };
		pthread_create(&th[i], NULL, reader, &r[i]);
	}
	for (uint32_t k = 1; k <= 20000; k++) {
		for (uint32_t i = 0; i < 64; i++)
			nl_load_entry_ctl(t, i)->n_sub = k;
		nl_load_publish_ctl(t);
		if ((k & 63) == 0)
			urcu_qsbr_quiescent_state();
	}
	uatomic_set(&stop, 1);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		torn += r[i].torn;
		refr += r[i].refreshes;
	}
	printf("# 20000 publishes, %lu refreshes by 2 readers, %lu torn\n", refr, torn);
	nl_tap_check(torn == 0 && refr > 0, "test_readers_never_see_torn_or_freed_snapshots");
	urcu_qsbr_thread_offline();
	nl_load_free(t);
	urcu_qsbr_thread_online();
}

int
main(void)
{
	urcu_qsbr_register_thread();
	test_view_replays_unapplied_bookings();
	test_readers_never_see_torn_or_freed_snapshots();
	test_publish_reuses_snapshots_past_their_grace_period();
	urcu_qsbr_unregister_thread();
	return nl_tap_done();
}
