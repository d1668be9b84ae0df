/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * nl_swimnet: a discrete-event network of N nl_swim members (managers/swim/) in virtual
 * nanoseconds, for the failure-detector experiments of docs/results.md and the tests of
 * tests/swim/. Each message is lost with probability `loss` and otherwise delivered after a
 * delay drawn uniformly in [delay_min_ns, delay_max_ns]. A member can crash (it stops for
 * good) or pause (SIGSTOP-like: nothing of it runs; messages to it wait in its socket buffer;
 * at the resume its overdue timers run first, then the buffered messages, in arrival order,
 * which is the harsher of the two orders a resumed process can see).
 *
 * Every member's clock is the simulator's (each member only ever reads it as an age, nl_swim
 * I1). Counters (struct nl_swimnet_res) are gathered from the members' change callbacks.
 *
 * @par Context  Single-threaded (the simulator); not shared.
 */
#ifndef NL_SWIMNET_H
#define NL_SWIMNET_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_swim.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Network and protocol configuration of one run. */
struct nl_swimnet_cfg {
	uint32_t n;              /**< members */
	bool lifeguard;          /**< nl_swim_cfg.lifeguard */
	bool suspicion;          /**< nl_swim_cfg.suspicion (false: plain SWIM §3) */
	double loss;             /**< probability that one message is lost, [0, 1) */
	uint64_t delay_min_ns;   /**< one-way delay, lower bound [ns] */
	uint64_t delay_max_ns;   /**< one-way delay, upper bound [ns] */
	uint64_t seed;           /**< the run's randomness (loss, delay, members' seeds) */
};

/** What a run counted (from every member's view). */
struct nl_swimnet_res {
	uint64_t fp_dead_healthy;   /**< DEAD declared about a member never crashed nor paused */
	uint64_t fp_dead_paused;    /**< DEAD declared about a paused (not crashed) member */
	uint64_t fp_dead_by_paused; /**< ... of fp_dead_healthy, declared by a paused member */
	uint64_t suspect_healthy;   /**< SUSPECT declared about a member never crashed / paused */
	uint64_t fp_subjects;       /**< distinct (subject, incarnation) falsely declared DEAD */
	uint64_t probes;            /**< probes over all members */
	uint64_t probes_failed;     /**< probes that ended without an ACK */
	uint64_t msgs;              /**< messages sent */
	unsigned int lhm_max;       /**< largest LHM seen at the end of a run over members */
};

struct nl_swimnet;

/**
 * Build the network and its N members (nl_swim_cfg_default() plus the cfg's switches).
 * @return 0; -EINVAL; -ENOMEM. @par Context  Simulator. @par Source  —
 */
int nl_swimnet_create(const struct nl_swimnet_cfg *cfg, struct nl_swimnet **out);

/** Free the network (NULL is fine). @par Context  Simulator. */
void nl_swimnet_free(struct nl_swimnet *net);

/** Crash member @p id at @p at_ns (before run). @return 0; -EINVAL. */
int nl_swimnet_crash(struct nl_swimnet *net, uint32_t id, uint64_t at_ns);

/** Pause member @p id over [from_ns, to_ns) (before run; one pause per member at a time).
 * @return 0; -EINVAL; -ENOMEM. */
int nl_swimnet_pause(struct nl_swimnet *net, uint32_t id, uint64_t from_ns, uint64_t to_ns);

/**
 * Cut the network in two over [from_ns, to_ns): every message between a member whose bit is
 * set in @p side_mask (members 0..63) and one whose bit is clear is lost. One cut at a time.
 * A member on either side is healthy: a DEAD about it is a false death.
 * @return 0; -EINVAL. @par Context  Simulator, before run. @par Source  —
 */
int nl_swimnet_partition(struct nl_swimnet *net, uint64_t side_mask, uint64_t from_ns,
	uint64_t to_ns);

/** Run until @p until_ns of virtual time. @par Context  Simulator. */
void nl_swimnet_run(struct nl_swimnet *net, uint64_t until_ns);

/** @return member @p id's detector (to read its view), NULL if out of range. */
struct nl_swim *nl_swimnet_member(struct nl_swimnet *net, uint32_t id);

/** @return the counters so far. */
const struct nl_swimnet_res *nl_swimnet_res(struct nl_swimnet *net);

/**
 * Detection of crashed member @p id: first SUSPECT and first DEAD at any live member and the
 * time by which every live member had it DEAD [ns after the crash].
 * @return 0; -ENOENT if not (yet) detected by all (the fields found are set, others 0).
 */
int nl_swimnet_detection(struct nl_swimnet *net, uint32_t id, uint64_t *first_suspect_ns,
	uint64_t *first_dead_ns, uint64_t *all_dead_ns);

#ifdef __cplusplus
}
#endif

#endif /* NL_SWIMNET_H */
