/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The one place that spells __atomic_* (STYLE.md "Memory ordering"). DPDK 22.11 has no
 * rte_stdatomic.h and _Atomic in shared headers breaks the C++ harness, so everything else
 * in dataplane/ goes through these wrappers. Each call site says why its order is enough.
 */
#ifndef NL_ATOMIC_H
#define NL_ATOMIC_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Relaxed load: a statistic or a flag whose readers need no ordering. */
#define nl_atomic_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
/** Relaxed store: see nl_atomic_load_relaxed(). */
#define nl_atomic_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
/** Acquire load: pairs with an nl_atomic_store_release() named at the call site. */
#define nl_atomic_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
/** Release store: orders earlier writes before the store; pairs with an acquire load. */
#define nl_atomic_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/** Relaxed fetch-add for counters written by several threads. */
#define nl_atomic_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

/** Release fetch-or: publish a flag bit after the data it announces. */
#define nl_atomic_or_release(p, v) __atomic_fetch_or((p), (v), __ATOMIC_RELEASE)
/** Acquire exchange: take every flag bit and see the data published before each. */
#define nl_atomic_xchg_acquire(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)

/**
 * Single-writer counter increment: the owner lcore adds, other threads only read. Relaxed is
 * enough: readers want an eventually-current value, nothing is published through it.
 * @param p Counter owned by the calling thread. @par Context Owner thread only.
 */
static inline void
nl_stat_add_st(uint64_t *p, uint64_t v)
{
	nl_atomic_store_relaxed(p, nl_atomic_load_relaxed(p) + v);
}

#ifdef __cplusplus
}
#endif
#endif /* NL_ATOMIC_H */
