/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Random numbers for both engines (the simulator and the live appliance's emulated arrivals)
 * and the model builders: xoshiro256** (Blackman & Vigna), seeded by splitmix64. Each run or
 * lcore owns its generators; the same seed gives the same sequence on every machine.
 */
#ifndef NL_RNG_H
#define NL_RNG_H

#include <math.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Generator state. Single owner. */
struct nl_rng {
	uint64_t s[4];
};

/** splitmix64 step (seeding and hashing). @par Context Pure on *x. */
static inline uint64_t
nl_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/** Seed a generator from one 64-bit seed. @par Context Single owner. */
static inline void
nl_rng_seed(struct nl_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = nl_splitmix64(&seed);
}

static inline uint64_t
nl_rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/** Next uniform 64-bit number. @par Context Single owner. */
static inline uint64_t
nl_rng_u64(struct nl_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = nl_rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = nl_rotl64(s[3], 45);
	return res;
}

/** Uniform in (0, 1]. @par Context Single owner. */
static inline double
nl_rng_unif(struct nl_rng *r)
{
	return ((double)(nl_rng_u64(r) >> 11) + 1.0) * 0x1.0p-53;
}

/** Exponential with the given mean. @par Context Single owner. */
static inline double
nl_rng_exp(struct nl_rng *r, double mean)
{
	return -mean * log(nl_rng_unif(r));
}

#ifdef __cplusplus
}
#endif
#endif /* NL_RNG_H */
