/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out internals shared by its files, from the top down:
 *   nl_xa.c         hand-over, hand-back, membership, the control round, reception; the hook
 *                   tables it registers on the engine and the port (nl_xa_dp_ext,
 *                   nl_xa_port_ext)
 *   nl_xa_standby.c a standby adopts a dead appliance's subtree, gives it back (#36)
 *   nl_xa_gossip.c  group-load summaries by gossip, their install in the load table, telemetry
 *   nl_xa_swim.c    membership: the SWIM + Lifeguard detector (managers/swim) on the control
 *                   lcore's monotonic clock; its verdicts are queued for nl_xa.c (no call up)
 *   nl_xa_link.c    numbered datagrams: batches, sending, acknowledgement, retransmission,
 *                   de-duplication
 *   nl_xa_cfg.c     configuration, placement of managers and machines on appliances
 * Not a public header. Control lcore only (nl_xa.h X2), telemetry reads counters relaxed.
 */
#ifndef NL_XA_CORE_H
#define NL_XA_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_cycles.h>

#include "nl_port_priv.h"
#include "nl_gossip.h"
#include "nl_rng.h"
#include "nl_xa.h"

#define XA_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

/* struct xa_task.state */
#define XA_OWN 0     /* ours, here */
#define XA_PARKED 1  /* ours, handed to another appliance (meta->xa_at) */
#define XA_FOREIGN 2 /* another appliance's (meta->xa_origin), carried here */
#define XA_RESENT 3  /* ours, a client's resend held until the workers of an appliance we
		      * adopted have said whether it ran there (#36, nl_xa_resend.c) */

#define XA_MAX_ROOTS NL_XA_MAX_ROOTS
/* A standby's adopted slots go only to failing-over workers (NL_HELLO_F_FAILOVER) for this
 * long after the adoption [s]: the dead appliance's workers HELLO every second from
 * --failover-s (3 s) of its silence, before the verdict (about 5 s) */
#define XA_ADOPT_GRACE_S 10.0

/* struct xa_task.flags: NL_XA_TF_* (travel in HANDOVER records), and XA_TF_FARM (local) */

/* A task-farm task (FSUBMIT: a named command of this appliance's workers, its match handle
 * registered here). Never sent (outside NL_XA_TF_ALL): a HANDOVER carries no farm state, so
 * such a task cannot run on another appliance; hand_out() puts it into this appliance's own
 * subtree roots instead, each once, and answers it REJECT no_machine when none keeps it
 * (issue #34 item 4, docs/scale-out.md "Task farms on a split tree"). */
#define XA_TF_FARM 0x80u
/* Entered anew at a live subtree root because its next manager's appliance was dead (#36
 * detour, once per appliance; local) and the bound on the transfers a detoured task may have
 * made (a task that subtrees keep sending up to a dead manager is answered, not bounced). */
#define XA_TF_DETOURED 0x40u
#define XA_DETOUR_MAX_HOPS 256u
/* Its SUBMIT was a client's resend at a failover (flag resend, #36 nl_xa_resend.c; local). */
#define XA_TF_RESEND 0x20u
/* Foreign: its origin's standby was told it runs here (#36 nl_xa_resend.c; local): its end
 * is told there too, also when the origin is live again by then. */
#define XA_TF_TOLD 0x10u
_Static_assert(((XA_TF_FARM | XA_TF_DETOURED | XA_TF_RESEND | XA_TF_TOLD) & NL_XA_TF_ALL) == 0,
	       "XA_TF_FARM, XA_TF_DETOURED, XA_TF_RESEND and XA_TF_TOLD are local, never on the wire");

/* SWIM (nl_xa_swim.c): the control lcore's monotonic clock advances the detector's clock by
 * at most this much per reading, so time this process did not run (SIGSTOP, a host that held
 * it) is not counted as the peers' silence: a paused appliance neither declares its healthy
 * peers dead when it resumes nor fires their suspicion timers (Lifeguard §4.1's point: local
 * slowness must not become another member's death). [ns] */
#define XA_SWIM_STEP_MAX_NS 200000000ull

/* A peer is stalled when a datagram to it is unacknowledged for this many retransmission
 * intervals (5 x 20 ms by default); while it is, partial batches are sent this often. */
#define XA_STALL_RTX 5u
#define XA_STALL_FLUSH_MS 25u

#define XA_RTX_CAP 1024u   /* unacknowledged datagrams kept per peer (ring by dgram_seq) */
/* At most this many retransmissions per peer per check (100 a second): a peer back from a
 * partition or a pause gets what it missed paced (1,600 datagrams/s), not one burst of up to
 * XA_RTX_CAP that overflows its receive ring with its SWIM messages (#36). */
#define XA_RTX_BURST 16u
#define XA_DEDUP_WIN 4096u /* datagram numbers remembered per peer (> XA_RTX_CAP) */

/* A numbered datagram sent and not yet acknowledged (retransmitted every retransmit_s). */
struct xa_unacked {
	uint32_t seq;        /* 0 = free */
	uint16_t len;
	uint16_t tries;
	uint64_t sent_tsc;
	uint64_t first_tsc;  /* first sent (the peer's stall: nl_xa_retransmit_ctl()) */
	uint8_t buf[NL_PROTO_MAX_LEN]; /* encoded, unsealed (sealed anew at each send) */
};

struct xa_root {
	uint32_t mgr;        /* subtree root manager */
	uint16_t app;        /* owner now: its configured one, or the standby that adopted it */
	uint16_t k;          /* index among the configured owner's roots */
	uint16_t home;       /* its configured owner (`owns`) */
	uint32_t src;        /* gossip source id: home * 64 + k, whoever makes its records */
	uint32_t *mach;      /* machines of the subtree */
	unsigned int n_mach;
	/* the last summary of this root (own: made; remote: received); telemetry reads it */
	double created_s;
	double rx_s;         /* when it was received (own: made) [CLOCK_REALTIME s] (log only) */
	uint64_t rx_tsc;     /* when it was received (own: made) [TSC]: its age is ours (#36) */
	uint32_t live, idle, n_sub;
	uint64_t free_mask;
	uint32_t backlog_us;
	uint64_t n_rx;
	uint64_t n_installed; /* times installed in the load table (remote roots) */
};

struct xa_peer {
	bool live;           /* not declared gone */
	bool mac_known;
	uint8_t mac[6];
	uint64_t inc;        /* incarnation last seen (0 = never heard) */
	double last_rx_s;
	struct nl_xa_msg out_task, out_back, out_ack; /* batches being filled */
	size_t out_task_len;
	/* retransmission (sender) and de-duplication (receiver) */
	uint32_t tx_seq;     /* last datagram number sent to it */
	struct xa_unacked *rtx; /* [XA_RTX_CAP] */
	uint32_t rx_hi;      /* highest datagram number received from it (its incarnation) */
	uint64_t rx_win[XA_DEDUP_WIN / 64]; /* bit (seq % XA_DEDUP_WIN): received */
	uint64_t retx, dup_rx, acked, rtx_overflow;
	/* stalled: a datagram unacknowledged for XA_STALL_CYC(retransmit) (a paused or
	 * overloaded peer): partial batches go out once per XA_STALL_FLUSH_MS only, so a pause
	 * does not fill the retransmission ring with one- and two-task datagrams (#36) */
	bool stalled;
	uint64_t flush_tsc;  /* last batch sent while stalled */
	uint64_t held;       /* rounds a partial batch was held because the peer stalled */
	/* counters (control writes, telemetry reads relaxed) */
	uint64_t tx_tasks, rx_tasks, tx_backs, rx_backs, tx_dgrams, rx_dgrams;
	uint64_t lost_tasks, gone, rejoined;
	uint32_t gone_epoch; /* xa->gone_epoch when last declared gone (0 = never) */
	/* declared dead (#36 "a REJECT only for tasks that did not run"): what was parked at it
	 * and the datagrams it has not acknowledged are held until hold_tsc (its return, as
	 * after a partition, finds them where they were); 0 = nothing held */
	uint64_t hold_tsc;
	uint64_t hold_kept;  /* tasks parked at it when declared dead, still there at its return */
	/* its hold over while we run its subtree (its standby): held on (holding_on) until each
	 * adopted slot has one of its workers, failed over, and XA_RESEND_TELL_S more (their
	 * words), at most [scaleout] word_wait_s past hold_tsc (nl_xa_hold_on_ctl()); meanwhile its
	 * slots go to its failed-over workers only (nl_xa_owns_mach()). full_tsc: since when
	 * every adopted slot has one (0: not yet); held_on: holds that went on so (telemetry) */
	uint64_t full_tsc;
	bool holding_on;
	uint64_t held_on;
	/* SWIM's view of it (copied from the detector's on_change; telemetry reads relaxed) */
	uint32_t swim_state; /* enum nl_swim_state */
	uint32_t swim_inc;   /* its SWIM incarnation as we know it */
	uint64_t suspected;  /* times it became SUSPECT in our view */
	uint64_t refuted;    /* times a suspicion of it was refuted (SUSPECT -> ALIVE) */
	uint64_t swim_declared_dead; /* times it became DEAD in our view */
	struct nl_auth_tx tx;  /* #36 paired: our sealing state to it (the pair's key) */
	uint64_t pair_refused; /* #36 paired: datagrams from its address not under the pair's key */
};

/* #36: what a dead (or restarted) appliance's workers said of one task's sub-tasks: kept
 * with a parked task (nl_xa_relay.c) and, for a client's resend, by client address and task
 * id (nl_xa_resend.c) */
struct xa_words {
	uint64_t ran;    /* sub-tasks said running or ended (bit = sub-task) */
	uint64_t end;    /* sub-tasks said ended */
	int32_t status;  /* the first non-zero exit status said */
	uint8_t whole;   /* an appliance the task had crossed to told its end (nl_xa_resend.c):
			  * ran and end are final */
};

/* One word (enum nl_done_relay `relay`) on sub-task sub (< 64) into w. */
static inline void
xa_words_put(struct xa_words *w, unsigned int relay, unsigned int sub, int32_t status)
{
	uint64_t bit = UINT64_C(1) << sub;

	if (relay == NL_RELAY_ENDED) {
		w->end |= bit;
		if (status != 0 && w->status == 0)
			w->status = status;
	}
	if (relay == NL_RELAY_ENDED || relay == NL_RELAY_RUNNING)
		w->ran |= bit; /* (NL_RELAY_WITHDRAWN: it never started) */
}

/* A sub-task said running is waited for at most this long [s]: the worker resends a DONE as
 * long (NL_WPEND_GIVE_UP_NS) */
#define XA_AWAIT_S 120.0
/* words of a dead appliance's workers are waited for this long after its subtree was adopted
 * here, and after each of its adopted slots has a worker again [s]: they HELLO every second
 * and tell as soon as they have slots (resent every 0.3 s) */
#define XA_RESEND_TELL_S 4.0

/* Scale-out's record of a task object of the pool (index nl_task.aux; control lcore only). */
struct xa_task {
	uint8_t state;       /* XA_OWN, XA_PARKED (at appliance `at`), XA_FOREIGN (of `origin`) */
	uint8_t flags;       /* NL_XA_TF_* (placed by load once, client asked re-route, ...) */
	uint16_t at;         /* parked: the appliance holding it */
	uint16_t origin;     /* foreign: the appliance that accepted it */
	uint16_t at_hops;    /* parked: the task's hops when it reached `at` (hand-over or the
			      * last *moved* note applied): notes arrive over different links, so
			      * an older one may come last; only a note of more hops moves `at` */
	uint32_t token;      /* foreign: the origin's handle */
	uint32_t seq;        /* parked: our hand-over sequence; foreign: the origin's */
	uint32_t rr_epoch;   /* xa->gone_epoch when this appliance last re-routed it */
	uint8_t farm_try;    /* XA_TF_FARM: own subtree roots it was put back into (#34) */
	/* parked (#36, nl_xa_relay.c): what the workers of the appliance holding it said of
	 * its sub-tasks, relayed by that appliance's standby after they failed over to it */
	uint8_t await;       /* its appliance was declared dead, a sub-task of it had run:
			      * waiting for the ends of those still running (not REJECTed) */
	uint8_t unsent;      /* the transit that passed it on to `at` forgot that unacknowledged
			      * hand-over while `at` was dead here (NL_XA_REASON_UNSENT): settled
			      * by our hold's end, or when `at` is back (nl_xa.c unsent_back()) */
	uint8_t dead_at;     /* a *moved* note put it at `at` while `at` was dead here (the mover
			      * saw it live: it may have restarted, or our verdict may be wrong):
			      * waiting (lost_tsc) for `at` to be live here again, or for the
			      * mover's word that the hand-over was never acknowledged
			      * (nl_xa_dead_at_wait_ctl()) */
	struct xa_words w;   /* what they said */
	uint64_t await_tsc;  /* await: answered failed machine_lost at this TSC at the latest */
	uint64_t lost_tsc;   /* its appliance restarted (lost it): answered at this TSC unless a
			      * worker's word says it ran (0 = not waiting) */
	uint64_t held_tsc;   /* XA_RESENT: when the resend came [TSC] */
	uint32_t cip;        /* foreign: the client that submitted it at the origin (HANDOVER's
			      * client address, host order; #36 nl_xa_resend.c) */
	uint16_t cport;
	/* own, held (#36 nl_xa_pass.c): a resend of it passed here by our standby (tie_seq != 0:
	 * a hand-over sequence is never 0); its end is handed back to that standby too, as the
	 * end of the task it parked here */
	uint16_t tie_app;    /* the standby */
	uint32_t tie_token;  /* its handle and hand-over sequence of the resend */
	uint32_t tie_seq;
};

#define XA_LOCAL_VEC 32u /* distinct machine vectors listed for local entry */
#define XA_ENTRY_TRIES 32u /* draws of the policy's entry() for one of our managers */

struct nl_xa;
struct xa_oend; /* nl_xa_pass.c */

/* Task ends (nl_xa_end.c): t's flags say failed with `why` (its sub-task count cleared). */
void nl_xa_set_failed(struct nl_task *t, enum nl_reject_reason why);

/* The reason a HANDBACK gives for t's end: 0 when every sub-task ran, else the reason t
 * failed with (overload when none was set): the inverse of nl_xa_set_failed(). */
uint16_t nl_xa_end_reason(const struct nl_task *t);

/* A task we cannot carry on here: ours is answered REJECT `why`; a foreign one is handed back
 * failed (nl_xa_finish_ctl() from the port's finish). Control lcore. */
void nl_xa_fail_task(struct nl_port *io, struct nl_task *t, enum nl_reject_reason why);

/* Re-route t once into a live part of the tree when its client asked for it (SUBMIT flag
 * reroute; `again`: also one re-routed already, whose move to an appliance gone before was
 * no second loss): true when it was put into a manager's inbox. Control lcore. */
bool nl_xa_reroute_ctl(struct nl_port *io, struct nl_task *t, bool again);

/* A parked task by its hand-over handle (nl_xa_end.c); NULL when not parked (answered, or the
 * object re-used). Control lcore. */
struct nl_task *nl_xa_parked_lookup(struct nl_xa *xa, uint32_t token, uint32_t seq, uint64_t id);

/* Answer task t (ours, not parked) from its workers' words w: COMPLETE with the sub-tasks
 * said ended and the first non-zero status; reason machine_lost when not all of them ran or
 * one's end was not heard (end_unheard). nl_xa_end.c. Control lcore. */
void nl_xa_answer_words(struct nl_port *io, struct nl_task *t, const struct xa_words *w,
			bool end_unheard);

/* Task t, parked, is ours again (not away any more). Control lcore. */
void nl_xa_unpark(struct nl_xa *xa, struct nl_task *t);

/* A worker's word on a sub-task (a HANDBACK of reason NL_XA_REASON_WORKER, or relayed here by
 * ourselves as the standby): applied to the parked task it names. Control lcore. */
void nl_xa_worker_word_ctl(struct nl_port *io, const struct nl_xa_back *b);

/* settle_lost() of task t, parked at a dead appliance: true when its workers said a sub-task
 * of it ran, so it is not REJECTed: answered now (each sub-task that ran has ended) or when
 * the last one ends (await). false: none said so (REJECT machine_lost, or re-route). */
bool nl_xa_asked_ctl(struct nl_port *io, struct nl_task *t);

/* settle_lost() of task t, parked at an appliance that restarted (it lost t), of which no
 * worker said yet that a sub-task ran: true when t is to wait XA_RESTART_WAIT_S for its
 * workers' word (they rejoin the new life and tell it, it tells us), then be answered. */
bool nl_xa_restart_wait_ctl(struct nl_port *io, struct nl_task *t);

/* A *moved* note put parked task t at an appliance declared dead here, with no hold of it
 * left (its hold ended, or it restarted): the mover saw it live, so the hand-over may be
 * there and run (a restarted appliance's new life, live for the mover before SWIM says so
 * here). t waits, parked there: kept when that appliance is live here again
 * (swim_events() calls nl_xa_dead_at_clear()), settled on the mover's word that the hand-over was never
 * acknowledged (NL_XA_REASON_UNSENT), else answered dead_hold_s + word_wait_s later
 * (nl_xa_await_poll_ctl(): asked, else lost). Control lcore. */
void nl_xa_dead_at_wait_ctl(struct nl_port *io, struct nl_task *t);

/* xt's wait (lost_tsc: a restart's, or dead_at's) is over or given up. nl_xa_end.c (below
 * the relay, which sets the waits). Control lcore. */
void nl_xa_lost_wait_end(struct nl_xa *xa, struct xa_task *xt);

/* t's dead_at wait is over (its appliance is live here, or the task moved on): it stays
 * parked, answered by what that appliance hands back. Control lcore. */
void nl_xa_dead_at_clear(struct nl_xa *xa, struct nl_task *t);

/* Whether a machine slot of appliance x's subtree, adopted here, has no worker that failed
 * over to us (none, or one of ours that took it after XA_ADOPT_GRACE_S): x's workers (the
 * ones that can tell what ran) have not all come. nl_xa_standby.c. Control lcore. */
bool nl_xa_adopted_slot_empty(const struct nl_port *io, const struct nl_xa *xa, unsigned int x);

/* The hold of what is parked at dead appliance x is over (hold_tsc passed): whether to hold
 * on. Yes while we run x's subtree (its standby) and x's workers cannot all have told us what
 * ran yet: an adopted slot has no worker that failed over to us, or every one has had one
 * for less than XA_RESEND_TELL_S; at most [scaleout] word_wait_s past hold_tsc. Said once in
 * the log. Else (not its standby, or the wait is over) false: settle_lost() answers now,
 * from the words that came (docs/scale-out.md "Held past dead_hold_s for the workers'
 * word"). nl_xa_standby.c. Control lcore. */
bool nl_xa_hold_on_ctl(struct nl_port *io, unsigned int x, uint64_t now);

/* t, parked at appliance app, which lost it, and of which no sub-task ran as far as anyone
 * said: re-routed (true) or answered REJECT machine_lost (false; counted lost at app).
 * nl_xa_end.c. */
bool nl_xa_lost_one_ctl(struct nl_port *io, struct nl_task *t, unsigned int app);

/* Awaits past their bound (2 minutes) answered failed machine_lost, and tasks lost by a
 * restart past their wait answered (nl_xa_asked_ctl(), else nl_xa_lost_one_ctl()). Every
 * control round; scans at most 4 times a second, and only while some task waits. */
void nl_xa_await_poll_ctl(struct nl_port *io);

/* A client's resend at the standby (nl_xa_resend.c, #36): the client-origin words' table
 * (made when some appliance has a standby; -ENOMEM), and freed. */
int nl_xa_resend_init(struct nl_xa *xa);
void nl_xa_resend_free(struct nl_xa *xa);

/* Entry of t: when it is a client's resend (XA_TF_RESEND) and this appliance is some
 * appliance's standby, hold it (XA_RESENT): true (the port answers ACCEPT, does not enter it). */
bool nl_xa_resend_take_ctl(struct nl_port *io, struct nl_task *t);

/* A worker's relayed DONE on a sub-task of a client task (origin_app | NL_ORIGIN_CLIENT) of
 * an appliance that died: kept for the client's resend. false when refused (bad fields). */
bool nl_xa_client_word_ctl(struct nl_port *io, const struct nl_msg_done *d);

/* A task of a client of appliance origin that crossed to us (foreign) ended here: kept a
 * while with its client's address; when origin is declared dead, told to its standby at
 * once (HANDBACK reason NL_XA_REASON_CLIENT), so that the client's resend there does not run
 * it again; `told`: the task had XA_TF_TOLD (the standby waits for this end). */
void nl_xa_crossed_end_ctl(struct nl_port *io, const struct nl_task *t, bool told);

/* Appliance app was declared dead, or restarted (its new life knows nothing of them): its
 * standby is told what became of its clients' tasks that crossed to us (running here, or
 * ended in the last XA_CEND_RECENT_S). */
void nl_xa_crossed_dead_ctl(struct nl_port *io, unsigned int app);

/* A HANDBACK of reason NL_XA_REASON_CLIENT (another appliance's word on a task of a client
 * of a dead appliance that had crossed to it) or NL_XA_REASON_CLIENT_SUB (a worker's word on
 * a sub-task of a client task of a restarted appliance's previous life, passed on by it):
 * kept for the client's resend; bad fields counted relay_bad. */
void nl_xa_client_back_ctl(struct nl_port *io, const struct nl_xa_back *b);

/* A client that fails over while its appliance is alive (nl_xa_pass.c, #36). A held resend
 * that no word said ran, at the standby of exactly one live appliance x that is not suspected:
 * handed to x flagged NL_XA_TF_RESEND (true), unless it was passed once already (false: the
 * caller runs it). Control lcore. */
bool nl_xa_pass_ctl(struct nl_port *io, struct nl_task *t);

/* At x, a HANDOVER record flagged NL_XA_TF_RESEND: tied to the task of that client and id
 * held here (xa_task.tie_seq), or answered by a HANDBACK of the end of one answered lately,
 * or handed back of reason NL_XA_REASON_NOT_HELD. Never run here. Control lcore. */
void nl_xa_pass_in_ctl(struct nl_port *io, const struct nl_xa_task *r);

/* At x, the end of an own task t (its xa_task flags cleared): handed back to the standby it
 * is tied to, and kept a while (when x has a standby) for a resend passed later. false (the
 * port answers the client). Control lcore (finish_ctl). */
bool nl_xa_own_end_ctl(struct nl_port *io, const struct nl_task *t);

/* The ring of own tasks' ends (when this appliance has a standby; -ENOMEM), and freed
 * (nl_xa_resend_init(), nl_xa_resend_free()). */
int nl_xa_pass_init(struct nl_xa *xa);
void nl_xa_pass_free(struct nl_xa *xa);

/* Hand t over to the appliance of manager to_mgr (HANDOVER, parked there when it is ours),
 * or, that appliance gone, detour, re-route or answer it (nl_xa.c). Control lcore. */
void nl_xa_hand_out_ctl(struct nl_port *io, struct nl_task *t, uint32_t to_mgr);

/* At the standby, a passed resend t (parked at x) comes back: x did not hold it
 * (NL_XA_REASON_NOT_HELD), or x was declared dead or restarted: held again as a resend
 * (decided here, not passed again). false: t is no passed resend. Control lcore. */
bool nl_xa_pass_back_ctl(struct nl_port *io, struct nl_task *t);

/* Held resends run, answered, or held on (nl_xa_resend_decide()); every control round,
 * scans 10 times a second while one is held. */
void nl_xa_resend_poll_ctl(struct nl_port *io);

/* Port hooks (struct nl_port_ext_ops origin_ctl, relay_ctl). */
void nl_xa_origin_ctl(struct nl_port *io, const struct nl_task *t, struct nl_msg_dispatch *d);
bool nl_xa_relay_ctl(struct nl_port *io, const struct nl_msg_done *d, int32_t wi);

/* Standby (nl_xa_standby.c, #36): appliance a was declared dead: its standby, when live (or
 * us), takes its subtree in this appliance's map; subtrees a held as a standby go back to
 * their own (dead) appliance. Call after its machines were installed gone. Control lcore. */
void nl_xa_standby_dead_ctl(struct nl_port *io, unsigned int a);

/* Standby (#36): appliance a is live again: its subtree is its own again. Control lcore. */
void nl_xa_standby_alive_ctl(struct nl_port *io, unsigned int a);

/* #36 `failback = no`: a HOLD of appliance m->from_app arrived (nl_xa_rx_ctl). */
void nl_xa_hold_rx_ctl(struct nl_port *io, const struct nl_xa_msg *m);

/* #36 `failback = no`: the HOLD round (every SWIM period) and the end of settling; called
 * every check of the control loop. */
void nl_xa_hold_tick_ctl(struct nl_port *io, uint64_t now_tsc);

/* Local entry (nl_xa_entry.c, #36): list this appliance's machine vectors (init). */
void nl_xa_entry_init(struct nl_xa *xa, const struct nl_sched *s);

/* Port hook entry_ctl: one of our managers for t, or NL_NODE_NONE (the policy's entry()).
 * Control lcore. */
uint32_t nl_xa_entry_ctl(struct nl_port *io, const struct nl_task *t, uint64_t rnd);

struct nl_xa {
	struct nl_dp *dp;
	struct xa_task *task; /* [dp->n_pool] */
	struct nl_xa_cfg cfg;
	unsigned int self;
	uint64_t inc;
	uint8_t *mgr_app;    /* [n_mgr] the appliance running it now (standby adoption, #36) */
	uint8_t *mach_app;   /* [n_mach] the appliance its worker joins now */
	uint8_t *mgr_home;   /* [n_mgr] its configured appliance (`owns`) */
	uint8_t *mach_home;  /* [n_mach] its configured appliance */
	/* [n_mach] 1: its worker joined it with NL_HELLO_F_FAILOVER (a dead appliance's own
	 * worker, which can tell what ran there; nl_xa_owns_mach() sets it as it grants) */
	uint8_t *mach_fo;
	/* #36 standby: holder[a], the appliance running a's subtree now (a itself, or its
	 * standby while a is declared dead and the standby live: nl_xa_standby.c) */
	uint8_t holder[NL_XA_MAX_APPS];
	/* #36 `failback = no` (nl_xa_standby.c "Failback or not"): every appliance's last HOLD,
	 * the subtrees it runs (bit x), counted while of its current incarnation */
	uint64_t claim[NL_XA_MAX_APPS];
	uint64_t claim_inc[NL_XA_MAX_APPS];
	bool settling;        /* just started (failback = no): own subtree not run, no slots for
			       * its workers, until the standby's HOLD says whether it keeps it */
	uint64_t settle_end_tsc; /* settling ends here at the latest */
	uint64_t hold_next_tsc;  /* next HOLD round */
	uint64_t hold_tx, hold_rx, left_at_standby, taken_back, entry_taken;
	uint64_t adoptions;  /* subtrees this appliance adopted as a standby */
	uint64_t returned;   /* adopted subtrees given back (their appliance came back) */
	uint64_t adopted_in; /* tasks decided here at adopted managers */
	uint64_t adopt_tsc[NL_XA_MAX_APPS]; /* when a's subtree was last adopted here [TSC] */
	uint64_t reborn_tsc[NL_XA_MAX_APPS]; /* when a's new incarnation was first heard [TSC] */
	/* #36 a client's resend at the standby (nl_xa_resend.c) */
	struct xa_resend *resend; /* the client-origin words (NULL: no standby configured) */
	uint64_t client_words;     /* workers' words on client tasks of an appliance that died */
	uint64_t resends_held;     /* resends (SUBMIT flag resend) held for those words */
	uint64_t resend_holding;   /* of them, held now */
	uint64_t resends_run;      /* run here: no word said they ran */
	uint64_t resends_answered; /* answered from the words: they ran at the dead appliance */
	uint64_t crossed_told;     /* words told to a dead appliance's standby on its clients'
				    * tasks that crossed to us */
	uint64_t client_passed;    /* workers' words on our previous life's clients' tasks passed
				    * on to our standby (we restarted) */
	uint64_t resends_passed;   /* standby: resends passed to the live appliance (nl_xa_pass.c) */
	uint64_t resends_tied;     /* that appliance: passed resends tied to a task held here */
	uint64_t resends_ended;    /* that appliance: answered from an end kept here */
	uint64_t resends_not_held; /* that appliance: of no task held or answered lately here */
	struct xa_oend *oend;      /* that appliance: the ring of own tasks' ends (XA_OEND_CAP;
				    * NULL: it has no standby) */
	uint64_t n_oend;
	uint32_t *mach_mgr;  /* [n_mach] the manager that dispatches to it (leaf / group) */
	uint8_t *mach_inst;  /* [n_mach] remote machine whose load entry summaries keep */
	struct nl_mach_load *local_load; /* [n_mach] scratch: our machines only (replace) */
	struct nl_dp_lcore *proxy;
	struct xa_peer peer[NL_XA_MAX_APPS];
	struct xa_root root[XA_MAX_ROOTS];
	unsigned int n_root;
	uint32_t seq;
	uint64_t foreign_live;
	uint64_t parked;
	uint64_t stale_back, bad_peer, bad_task, lost_tasks, overload_in, not_ours, moved;
	uint64_t gossip_rounds, sum_tx, sum_rx;
	uint64_t installs, placed_out, rerouted, test_dropped, dgram_n, late_moved, unsent,
		 moved_dead;
	uint64_t detoured;   /* tasks entered anew past a dead appliance's manager (#36) */
	/* #36 "asked before machine_lost" (nl_xa_relay.c) */
	uint64_t relayed;     /* standby: workers' words passed on to the tasks' origins */
	uint64_t told_direct; /* origin: words of workers told straight (their appliance silent) */
	uint64_t relay_bad;   /* standby: relayed DONEs naming no appliance of ours */
	uint64_t worker_words; /* origin: words applied to a parked task */
	uint64_t late_words;  /* origin: words for a task no longer parked (answered, re-used) */
	uint64_t asked_ran;   /* origin: tasks of a dead appliance not REJECTed: they had run */
	uint64_t awaiting;    /* origin: of those, waiting for a running sub-task's end now */
	uint64_t restart_waiting; /* origin: tasks lost by a restart, waiting for words */
	uint64_t await_scan_tsc; /* the last scan for awaits past their bound */
	uint64_t farm_no_machine; /* farm tasks that would have left: REJECT no_machine */
	uint64_t farm_kept;       /* farm tasks routed out, put into an own subtree root */
	uint64_t farm_warn_tsc;   /* last WARNING about them (one a second at most) */
	uint64_t rtx_cyc;
	uint32_t gone_epoch; /* declarations of a peer gone so far */
	struct nl_gossip_view *view;
	struct nl_gossip_cfg gcfg;
	struct nl_rng rng;
	double start_s, next_gossip_s;
	uint64_t next_check_tsc, check_cyc;
	struct nl_gossip_rec *grec;  /* scratch: the records of the current gossip round */
	size_t grec_n;               /* how many (nl_xa_gossip_round_ctl()) */
	struct nl_gossip_ack *gack;
	size_t gcap;
	uint64_t sum_future; /* SUMMARY records refused: dated > NL_XA_SUM_AHEAD_MAX_S ahead */
	/* membership (nl_xa_swim.c) */
	struct nl_swim *swim;
	struct nl_port *swim_io;   /* the port of the call in progress (the send callback's) */
	uint64_t swim_dead_pend;   /* bit a: SWIM declared appliance a DEAD (nl_xa.c acts) */
	uint64_t swim_alive_pend;  /* bit a: a DEAD appliance is ALIVE again (nl_xa.c acts) */
	uint64_t mono_last_ns;     /* CLOCK_MONOTONIC at the last reading [ns] */
	uint64_t swim_now_ns;      /* the detector's clock: monotonic, steps clamped [ns] */
	uint64_t swim_stalls;      /* readings clamped (this process did not run for a while) */
	uint64_t swim_next_ns;     /* the detector's next deadline (its clock) */
	uint64_t swim_reconnect_ns; /* next reconnect round to DEAD peers (its clock) */
	uint64_t swim_reconnects;  /* reconnect messages sent to DEAD peers */
	uint64_t swim_bad;         /* SWIM messages the detector refused */
	/* copies for telemetry (control writes, telemetry reads relaxed) */
	uint64_t swim_self_inc, swim_lhm, swim_refuted_self, swim_msgs_in, swim_msgs_out;
	uint64_t swim_probes, swim_probes_failed;
	/* local entry (#36, nl_xa_entry.c): this appliance's machine vectors, distinct */
	struct nl_resvec local_vec[XA_LOCAL_VEC];
	unsigned int n_local_vec;  /* 0: no machine here; XA_LOCAL_VEC + 1: too many to list */
	uint64_t entry_local;      /* tasks entered at one of our managers (local entry) */
	uint64_t entry_policy;     /* tasks entered where the policy's entry() said */
};

/* The scale-out state of dp (the engine extension's, dp->ext), or NULL when not split. */
static inline struct nl_xa *
nl_xa_of(const struct nl_dp *dp)
{
	return dp->ext;
}

/* Test hook (#36): this appliance's wall clock is off by this much [s] ([appliance NAME]
 * test_clock_skew_ms; 0 in production): the dates of its records and its seals' sequence. */
extern double nl_xa_test_skew_s;

/* CLOCK_REALTIME [s] (the clock of gossip records), skewed by the test hook. */
static inline double
nl_xa_real_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + nl_xa_test_skew_s;
}

/* The port's wall clock [ns] (io->now_ns) as this appliance's skewed clock (test hook). */
static inline uint64_t
nl_xa_skewed_ns(uint64_t now_ns)
{
	return (uint64_t)((int64_t)now_ns + (int64_t)(nl_xa_test_skew_s * 1e9));
}

/* A summary's age [s]: time since this appliance received (own: made) it, on its monotonic
 * TSC; -1 before the first. Never the sender's clock against ours (issue #36). */
static inline double
nl_xa_root_age_s(const struct xa_root *r)
{
	if (r->rx_tsc == 0)
		return -1;
	return (double)(rte_rdtsc() - r->rx_tsc) / (double)rte_get_tsc_hz();
}

/**
 * Encode m and queue it as one datagram to appliance `app` (its configured IP and port; its
 * MAC once heard, else Ethernet broadcast on our segment), sealed with --key when set.
 * @param io   The control lcore's I/O state.
 * @param app  Appliance index (order of the [appliance] sections), < cfg.n_app.
 * @param m    Message with 1..20 task, 1..41 hand-back or 1..20 summary records.
 * @return nothing; an encoding or transmit failure is counted in tx_fail, the datagram lost.
 * @par Context  Control lcore only (nl_xa_link.c). @par Source docs/protocol.md "Between appliances".
 */
void nl_xa_send_ctl(struct nl_port *io, unsigned int app, const struct nl_xa_msg *m);

/**
 * Fill the sender fields of a message of ours: from_app (our index) and our incarnation.
 * @par Context  Control lcore only (nl_xa_link.c). @par Source docs/protocol.md "Between appliances".
 */
void nl_xa_prep_ctl(struct nl_xa *xa, struct nl_xa_msg *m);

/**
 * Appliance `app` is declared dead (SWIM) or restarted (new incarnation): flush what we
 * queued for it, take its machines out of the load table, and answer every task parked there
 * REJECT machine_lost (counted in lost_tasks) or re-route it (client's flag) — at once, or,
 * with `hold`, only if it has not come back within [scaleout] dead_hold_s (a partition or a
 * false verdict: its return finds the tasks parked and its hand-backs settle them, so a task
 * that ran is not answered REJECT; nl_xa_poll_ctl() ends the hold).
 * @param app   Appliance index, < cfg.n_app.
 * @param why   For the log line ("gone ...", "restarted").
 * @param hold  Whether its tasks may be held (false: it restarted, it has lost them).
 * @par Context  Control lcore only (nl_xa.c); O(task pool). @par Source docs/scale-out.md "Faults".
 */
void nl_xa_declare_lost_ctl(struct nl_port *io, unsigned int app, const char *why, bool hold);

/**
 * One gossip round (every gossip_period_ms), first half: our own subtree summaries into the
 * gossip view, expiry, the records to push collected. Membership is not decided here (SWIM,
 * nl_xa_swim.c). The caller then pushes (nl_xa_gossip_push_ctl()).
 * @param now_s  Wall clock [s] (nl_xa_real_s()): the records' dates (their lifetime).
 * @par Context  Control lcore only (nl_xa_gossip.c).
 * @par Source   managers/gossip/nl_gossip.h (Umeda, Nakada, Matsuoka); docs/scale-out.md.
 */
void nl_xa_gossip_round_ctl(struct nl_port *io, double now_s);

/**
 * The round's second half: push the view's valid records (collected by the first half) to
 * `fanout` appliances drawn at random, gone ones included (one that comes back hears from us).
 * @par Context  Control lcore only (nl_xa_gossip.c).
 */
void nl_xa_gossip_push_ctl(struct nl_port *io);

/**
 * A SUMMARY received: its records merged into the gossip view (telemetry /nlevel/summaries
 * shows them with their age since receipt); a record dated more than NL_XA_SUM_AHEAD_MAX_S
 * ahead of our wall clock is refused and counted (sum_future).
 * @param m  Decoded and authenticated SUMMARY (1..20 records).
 * @par Context  Control lcore only (nl_xa_gossip.c). @par Source docs/protocol.md, type 18.
 */
void nl_xa_summary_in_ctl(struct nl_port *io, const struct nl_xa_msg *m);

/**
 * Install the last summary of every remote root of appliance `app` (all remote roots when
 * app >= NL_XA_MAX_APPS) in the control's load table, or mark their machines gone when
 * `gone`, then publish (nl_load_publish_ctl()).
 * @par Context  Control lcore only (nl_xa_gossip.c). @par Source docs/scale-out.md "Summaries".
 */
void nl_xa_install_ctl(struct nl_port *io, unsigned int app, bool gone);

/* ---- membership by SWIM + Lifeguard (nl_xa_swim.c) ---- */

/**
 * Create this appliance's detector on first use (members = the configured appliances in
 * file order, this one = cfg.self, every other ALIVE at incarnation 0; parameters from
 * [scaleout] swim_*), then run its timers due now: probes, indirect probes, suspicions,
 * deaths; every protocol period tell each DEAD peer its verdict (with our alive).
 * Verdicts are not acted on here: a peer that became DEAD / ALIVE again is flagged in
 * xa->swim_dead_pend / swim_alive_pend for the caller (nl_xa.c) to act on.
 * @param io  The control lcore's port state (the send path).
 * @return 0; -ENOMEM or -EINVAL (the detector could not be created: membership stays as
 *         configured, all live; logged once).
 * @par Context  Control lcore only (nl_xa.h X2); no allocation after the first call.
 * @par Source   SWIM §3, §4 (Das et al. 2002); Lifeguard §4 (Dadgar et al. 2018).
 */
int nl_xa_swim_tick_ctl(struct nl_port *io);

/**
 * A SWIM message (type 20) from appliance m->from_app, decoded, authenticated and from its
 * configured address: handed to the detector (answers, relays, updates; refutes a
 * suspicion of this appliance). Verdicts are flagged as by nl_xa_swim_tick_ctl().
 * @param io  The control lcore's port state. @param m  The message (type NL_XA_MSG_SWIM).
 * @return 0; -EINVAL when the detector refused it (counted swim_bad); -ENOMEM as above.
 * @par Context  Control lcore only. @par Source  SWIM §3, §4.2; Lifeguard §4.1, §4.3.
 */
int nl_xa_swim_rx_ctl(struct nl_port *io, const struct nl_xa_msg *m);

/* ---- the hooks and the rest of scale-out (nl_xa.c, nl_xa_cfg.c) ---- */

struct nl_dp_lcore;
struct nl_dp_sub;
struct nl_mach_load;
struct nl_dp;
struct nl_dp_lcore;
struct nl_xa;
struct nl_port;
struct nl_task;
struct nl_frame_addr;

/**
 * nl_dp_ext_ops.attach_ctl (arg: the struct nl_xa_cfg; *ext: the new struct nl_xa, or
 * NULL when the configuration is not split). Resolve the placement on dp's managers (names by the policy's mgr_name(), parents from the
 * tree or the 2LSC global) and build the proxy lcore. Called by nl_dp_create() before it maps
 * managers to lcores.
 * @return 0; -EINVAL (an owns name that is no manager of this scheme, a manager owned twice;
 *         message on stderr with FILE:LINE); -ENOMEM.
 * @par Context Control path, before any lcore runs.
 */
int nl_xa_attach_ctl(struct nl_dp *dp, const void *arg, void **ext);

/** Free what nl_xa_attach_ctl() built. NULL accepted. @par Context Control, lcores stopped. */
void nl_xa_free(void *ext);

/**
 * The lcore that polls manager `mgr`: `lc` when this appliance owns it, else the proxy
 * lcore (drained by the control lcore, never launched).
 * @par Context Control path (nl_dp_create()).
 */
struct nl_dp_lcore *nl_xa_mgr_lcore(void *ext, uint32_t mgr, struct nl_dp_lcore *lc);

/** Whether this appliance owns machine slot m (its workers may claim it), for a HELLO with
 * flags hello_flags: not a slot of its own subtree while it settles (failback = no); a slot
 * of a subtree it adopted less than XA_ADOPT_GRACE_S ago, or whose parked tasks are held on
 * for its workers' word (nl_xa_hold_on_ctl()), only for a HELLO with NL_HELLO_F_FAILOVER (the
 * dead appliance's own workers first: they tell what became of its sub-tasks). True grants
 * the slot and notes whether to such a worker (mach_fo). @par Context The I/O lcore (HELLO),
 * which is the control lcore. */
bool nl_xa_owns_mach(void *ext, uint32_t m, uint16_t hello_flags);

/**
 * Control-lcore round: drain the proxies' inboxes into HANDOVER batches, gossip when due,
 * expire silent appliances (failing what was parked at them), flush batches.
 * @return work done. @par Context Control lcore (X2).
 */
unsigned int nl_xa_poll_ctl(struct nl_port *io);

/**
 * A received datagram of the scale-out range (types 16..23): open (MAC, replay window with
 * --key), check its sender against the configured appliances, act. Malformed or forged ones
 * are counted (drop_<reason>, xa_bad_peer) and dropped.
 * @par Context Control lcore.
 */
void nl_xa_rx_ctl(struct nl_port *io, const struct nl_frame_addr *a, const uint8_t *pl, size_t plen);

/**
 * The end of task t on this appliance: a foreign task is handed back to its origin (HANDBACK)
 * and its object returned to the pool. @return true when t was foreign (consumed), false for
 * a task of our own (the caller answers its client).
 * @par Context Control lcore.
 */
bool nl_xa_finish_ctl(struct nl_port *io, struct nl_task *t);

struct nl_dp_sub;

/**
 * Placement by load above the split (docs/scale-out.md "Summaries"). rec[0] is the first
 * sub-task record of a task the control lcore drains (drain_subs), rec[0..n_rec) what the
 * burst holds from it on. When every sub-task of the task (all in this burst) went to
 * machines of one other live appliance, whose load entries its summaries installed, and the
 * task was never placed this way, the records are taken (bookings marked applied) and the
 * task is handed over to the manager that dispatches to the first machine there (2LSC: its
 * group; NLSC: its leaf), which decides on its exact load. NL_XA_TF_PLACED travels with the
 * task: it is placed this way at most once; afterwards, or when its machines are spread over
 * appliances, a sub-task on another appliance's machine is re-placed on one of ours as a
 * lost one is (nl_xa_local_load_ctl()).
 * @param rec    Records in the order eng_dispatch() enqueued them.
 * @param n_rec  Records in rec, >= 1.
 * @return records taken (the task's sub-task count), or 0: send them as usual.
 * @par Context Control lcore (X2). @par Source docs/scale-out.md "Summaries".
 */
unsigned int nl_xa_place_ctl(struct nl_port *io, const struct nl_dp_sub *rec, unsigned int n_rec);

struct nl_mach_load;

/**
 * The load table w [n_mach] with every machine of another appliance gone (a copy, for the
 * control's re-placement of a lost sub-task: only our machines can take it). w itself when
 * xa is NULL.
 * @return [n_mach], valid until the next call. @par Context Control lcore (X2); O(n_mach).
 */
const struct nl_mach_load *nl_xa_local_load_ctl(void *ext, const struct nl_mach_load *w,
						unsigned int n_mach);

/**
 * Whether machine m's load entry is kept by the summaries of its (remote) appliance, so the
 * control must not reset it when it republishes its own machines. false when xa is NULL.
 * @par Context Control lcore.
 */
bool nl_xa_keeps_load(const void *ext, uint32_t m);

/** Foreign tasks held now (not counted in this appliance's accounting). Relaxed read. */
uint64_t nl_xa_foreign_live(const void *ext);

/**
 * Shutdown: tasks parked at other appliances are counted failed and returned to the pool.
 * @par Context Control, lcores stopped.
 */
void nl_xa_drain_ctl(struct nl_dp *dp, void *ext);

/**
 * Detour (issue #36): task t's next manager to_mgr is on an appliance declared dead, so it
 * never got there: enter it anew at a live subtree root whose machines hold what it needs
 * (this appliance's own roots first, then live peers'), once on
 * this appliance (XA_TF_DETOURED) and while it has made fewer than XA_DETOUR_MAX_HOPS
 * transfers. Counted in xa->detoured (telemetry `detoured`).
 * @return true when it was put there; false: no live subtree can take it, or it was
 *         detoured here before (the caller re-routes on the client's flag, or answers
 *         REJECT machine_lost: truthful, it ran nowhere).
 * @par Context  Control lcore only (nl_xa_entry.c).
 */
bool nl_xa_detour_ctl(struct nl_port *io, struct nl_task *t, uint32_t to_mgr);

/* ---- the datagram link (nl_xa_link.c) ---- */

/** Send again what appliance app has not acknowledged within retransmit_s (backing off).
 *  @param now  TSC. @par Context Control lcore. */
void nl_xa_retransmit_ctl(struct nl_port *io, unsigned int app, uint64_t now);

/** Appliance app acknowledged datagram seq: forget it. @par Context Control lcore. */
void nl_xa_acked_ctl(struct xa_peer *p, uint32_t seq);

/** Forget the unacknowledged HANDOVERs to appliance app (declared dead: what they carried
 *  of ours was answered), and with `all` (it restarted) every unacknowledged datagram to it;
 *  HANDBACKs otherwise stay for its return. Without `all`, the origin of each other
 *  appliance's task in a forgotten HANDOVER is told (a HANDBACK of reason
 *  NL_XA_REASON_UNSENT).
 *  @return tasks of other appliances whose origin was told. @par Context Control lcore. */
uint64_t nl_xa_rtx_clear_ctl(struct nl_port *io, unsigned int app, bool all);

/** Receiver: whether datagram seq of the peer (its current incarnation) arrived before;
 *  marks it. @return true for a duplicate (X4). @par Context Control lcore. */
bool nl_xa_dedup_seen_ctl(struct xa_peer *p, uint32_t seq);

/** Queue an acknowledgement of datagram seq to app. @par Context Control lcore. */
void nl_xa_queue_ack_ctl(struct nl_port *io, unsigned int app, uint32_t seq);

/** Send app's batches (tasks and hand-backs numbered, acknowledgements not). */
void nl_xa_flush_peer_ctl(struct nl_port *io, unsigned int app);

/** The end of a control round: send app's batches, except that while app is stalled
 *  (p->stalled: nl_xa_retransmit_ctl() found a datagram unacknowledged for XA_STALL_RTX
 *  retransmission intervals) partial task / hand-back batches wait up to XA_STALL_FLUSH_MS
 *  (full ones go at once, acknowledgements always), counted in p->held.
 *  @param io  Port state. @param app  Appliance index, < cfg.n_app. @param now  TSC.
 *  @par Context Control lcore. @par Source docs/scale-out.md "Stalled peers" (issue #36). */
void nl_xa_flush_round_ctl(struct nl_port *io, unsigned int app, uint64_t now);

/** Add a task record to app's HANDOVER batch (sent when full, or at the round's end). */
void nl_xa_queue_task_ctl(struct nl_port *io, unsigned int app, const struct nl_xa_task *r);

/** Add a hand-back record to app's HANDBACK batch (sent when full, or at the round's end). */
void nl_xa_queue_back_ctl(struct nl_port *io, unsigned int app, const struct nl_xa_back *r);

#endif /* NL_XA_CORE_H */
