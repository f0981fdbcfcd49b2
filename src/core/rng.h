/* Deterministic random numbers (PCG32, O'Neill 2014, "PCG: a family of simple fast
 * space-efficient statistically good algorithms for random number generation"): the same seed
 * gives the same stream on every machine, so initialisation, dropout and shuffling are
 * reproducible. Seeds derived from other seeds (per epoch, per dropout site) come from the
 * splitmix64 hash of hash.h. */
#ifndef TFM_RNG_H
#define TFM_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t state;
    uint64_t inc;
} tfm_rng;

/** Starts stream `stream` (any value; streams are independent) of generator seed `seed`. */
void rng_seed(tfm_rng *r, uint64_t seed, uint64_t stream);
/** The next 32 random bits. */
uint32_t rng_u32(tfm_rng *r);
/** 64 random bits from two rng_u32 draws, the first in the high half (a defined order, unlike
 * `(uint64_t)rng_u32(r) << 32 | rng_u32(r)`, whose two calls C may evaluate in either order). */
uint64_t rng_u64(tfm_rng *r);
/** Uniform in [0, n), n ≥ 1, without modulo bias: rng_u64 draws at or above the largest multiple
 * of n that fits in 2^64 are rejected and drawn again (fewer than one in two draws on average). */
uint64_t rng_below(tfm_rng *r, uint64_t n);
/** Uniform in [0, 1) with 24 random bits. */
float rng_uniform(tfm_rng *r);
/** Standard normal N(0, 1) by Box–Muller. */
float rng_normal(tfm_rng *r);

#endif
