/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Machines P_i (seed 002 §2.1 eq. (3)): static description and the load record the
 * policies read, plus the generator of the machine list of a model configuration.
 */
#ifndef NL_MACHINE_H
#define NL_MACHINE_H

#include <stdint.h>

#include "nl_model_cfg.h"
#include "nl_resvec.h"
#include "nl_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Static description of one machine. */
struct nl_machine {
	double speed_ips;     /**< W_i nominal CPU speed [instr/s] */
	double link_bps;      /**< T_i communication speed [bit/s] */
	struct nl_resvec res; /**< Gamma_i */
	uint32_t speed_class; /**< index into the configured speed classes */
	uint32_t pad;
};

/** busy_until_vt at or above this marks a machine that left: policies never pick it. */
#define NL_MACH_GONE_VT 1e300

/**
 * Load of one machine as a policy sees it. In the simulator it is exact; in the live engine it
 * is the last RCU snapshot plus what this manager assigned since (docs/model.md).
 */
struct nl_mach_load {
	double busy_until_vt; /**< time its queue (as known) drains [u.t.]; <= now when idle */
	uint32_t n_sub;       /**< sub-tasks queued or running (live engine; 0 in the simulator) */
	uint32_t pad;
};

/**
 * Time a sub-task of (instr, bits) takes on machine m at nominal speed.
 *
 * @return instr / W_i + bits / T_i [u.t.].
 * @par Context  Pure.
 * @par Source   seed 002 §2.1-2.2 (I at W_i, D at T_i).
 */
static inline double
nl_mach_service_vt(const struct nl_machine *m, double instr, double bits)
{
	return instr / m->speed_ips + bits / m->link_bps;
}

/**
 * Background-load slow-down of machine `mach` at time t: W_i(t) = W_i * factor, factor =
 * 1 - b with b ~ U[0, bg_load_max) redrawn every bg_period_vt. A hash of (seed, machine,
 * period index), so neither engine needs an event to redraw it and both draw the same b.
 *
 * @param bg_load_max   Largest background load, 0..0.95 (0: always 1.0).
 * @param bg_period_vt  Redraw period [u.t.], > 0.
 * @param seed          Run seed of the background load.
 * @param mach          Machine id.
 * @param t_vt          Time [u.t.].
 * @return factor in (1 - bg_load_max, 1].
 * @par Context  Pure; any thread.
 * @par Source   seed 002 §2.1 (W_i(t) varies with background load); docs/model.md.
 */
static inline double
nl_mach_bg_factor(double bg_load_max, double bg_period_vt, uint64_t seed, uint32_t mach,
		  double t_vt)
{
	uint64_t x;

	if (bg_load_max <= 0)
		return 1.0;
	x = seed ^ ((uint64_t)mach * UINT64_C(0x9e3779b97f4a7c15)) ^
	    ((uint64_t)(t_vt / bg_period_vt) * UINT64_C(0xc2b2ae3d27d4eb4f));
	return 1.0 - bg_load_max * (double)(nl_splitmix64(&x) >> 11) * 0x1.0p-53;
}

/**
 * A machine's costs per unit of work, derived from struct nl_machine once (nl_sched_create())
 * so picking multiplies instead of dividing.
 */
struct nl_mach_rate {
	double vt_per_instr; /**< 1 / W_i [u.t./instr] */
	double vt_per_bit;   /**< 1 / T_i [u.t./bit] */
};

/**
 * Fill rates from machines: rate[i] = (1 / W_i, 1 / T_i).
 *
 * @param mach  [n] machines (speeds > 0).
 * @param n     Number of machines.
 * @param rate  Output [n].
 * @par Context  Pure.
 */
void nl_mach_rates_build(const struct nl_machine *mach, unsigned int n, struct nl_mach_rate *rate);

/**
 * Time a sub-task of (instr, bits) takes at a rate: instr / W_i + bits / T_i [u.t.].
 * @par Context  Pure.
 */
static inline double
nl_mach_rate_service_vt(const struct nl_mach_rate *r, double instr, double bits)
{
	return instr * r->vt_per_instr + bits * r->vt_per_bit;
}

/**
 * Build the machine list of a model: M machines, speed classes in equal contiguous blocks
 * (machine i has class i * n_speed / M), vectors balanced (machine i holds vector i mod 2^N,
 * so every block holds every vector equally often) or random (each entry '*' with probability
 * star_prob, else held with probability res_prob, drawn from `seed`).
 *
 * @param m     Model configuration.
 * @param seed  Seed for random vectors (ignored when balanced).
 * @param out   Output array of m->n_mach machines.
 * @return 0, or -EINVAL when the model is inconsistent.
 * @par Context  Control path, pure.
 * @par Source   seed 002 §4.2 (independent resources, equal probability).
 */
int nl_machines_build(const struct nl_model_cfg *m, uint64_t seed, struct nl_machine *out);

#ifdef __cplusplus
}
#endif
#endif /* NL_MACHINE_H */
