/* Deterministic random numbers (PCG32, O'Neill 2014): the same seed gives the same stream on every
 * machine, so initialisation, dropout and shuffling are reproducible. */
#ifndef TFM_RNG_H
#define TFM_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t state;
    uint64_t inc;
} tfm_rng;

void rng_seed(tfm_rng *r, uint64_t seed, uint64_t stream);
uint32_t rng_u32(tfm_rng *r);
/** Uniform in [0, 1) with 24 random bits. */
float rng_uniform(tfm_rng *r);
/** Standard normal N(0, 1) by Box–Muller. */
float rng_normal(tfm_rng *r);

#endif
