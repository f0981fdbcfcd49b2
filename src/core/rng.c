#include "rng.h"

#include <math.h>

void rng_seed(tfm_rng *r, uint64_t seed, uint64_t stream) {
    r->state = 0;
    r->inc = (stream << 1u) | 1u;
    (void)rng_u32(r);
    r->state += seed;
    (void)rng_u32(r);
}

uint32_t rng_u32(tfm_rng *r) {
    uint64_t old = r->state;
    r->state = old * 6364136223846793005ULL + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

uint64_t rng_u64(tfm_rng *r) {
    uint64_t hi = rng_u32(r);
    uint64_t lo = rng_u32(r);
    return (hi << 32) | lo;
}

uint64_t rng_below(tfm_rng *r, uint64_t n) {
    const uint64_t rem = (UINT64_MAX % n + 1) % n; /* 2^64 mod n: reject the top `rem` values */
    uint64_t x;
    do x = rng_u64(r);
    while (rem != 0 && x > UINT64_MAX - rem);
    return x % n;
}

float rng_uniform(tfm_rng *r) { return (float)(rng_u32(r) >> 8) * (1.0f / 16777216.0f); }

float rng_normal(tfm_rng *r) {
    /* u1 in (0, 1] so log() is finite */
    double u1 = ((double)(rng_u32(r) >> 8) + 1.0) / 16777216.0;
    double u2 = (double)(rng_u32(r) >> 8) / 16777216.0;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}
