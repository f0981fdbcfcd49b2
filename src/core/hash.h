/* The one 64-bit hash of transformer.c: splitmix64 (Steele, Lea & Flood 2014, "Fast splittable
 * pseudorandom number generators", OOPSLA; the finaliser is Stafford's "Mix13" variant of
 * MurmurHash3's fmix64). Counter-based: the k-th value of a stream is a pure function of
 * (seed, k), so dropout masks, per-site seeds and per-epoch shuffles are reproducible and do not
 * depend on the thread count or on how many values were drawn before.
 *
 * Every function here is part of the numbers a run produces (dropout masks, batch order): the
 * constants and formulas must never change, or resumed runs and pinned tests stop matching
 * (tests/unit/core/test_core_util.c pins values). Header-only so the dropout inner loop inlines it. */
#ifndef TFM_HASH_H
#define TFM_HASH_H

#include <stdint.h>

/* splitmix64's increment: 2^64 / φ, rounded to odd (the "golden gamma"). */
#define HASH_GOLDEN_GAMMA 0x9E3779B97F4A7C15ULL
/* A second odd increment, 2^64 / ρ with ρ the plastic number (Roberts' R2 sequence), for seed
 * streams that must not coincide with a golden-gamma stream started from the same seed. */
#define HASH_PLASTIC_GAMMA 0xD1B54A32D192ED03ULL

/** splitmix64's output function: a bijective avalanche mix of all 64 bits of z. */
static inline uint64_t hash_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/** The k-th output (k ≥ 1) of the splitmix64 generator whose state starts at `seed`:
 * mix64(seed + k·γ). hash_stream(s, 1) is the classic one-shot splitmix64(s). */
static inline uint64_t hash_stream(uint64_t seed, uint64_t k) { return hash_mix64(seed + k * HASH_GOLDEN_GAMMA); }

/** The next output of a sequential splitmix64 generator, advancing *state by γ first: the n-th
 * call from state s returns hash_stream(s, n). */
static inline uint64_t hash_next(uint64_t *state) {
    *state += HASH_GOLDEN_GAMMA;
    return hash_mix64(*state);
}

/** The seed of the k-th dropout site of a step seeded `seed` (k counts the sites of one forward
 * pass from 1): mix64(seed + k·ρ-gamma). A different increment from hash_stream, so a site seed
 * never equals an element hash of the same step seed's stream. */
static inline uint64_t hash_site_seed(uint64_t seed, uint64_t k) { return hash_mix64(seed + k * HASH_PLASTIC_GAMMA); }

/** A seed derived from (seed, k), e.g. the seed of epoch k of a run seeded `seed`:
 * splitmix64(seed ⊕ splitmix64(k)). */
static inline uint64_t hash_derive_seed(uint64_t seed, uint64_t k) {
    return hash_stream(seed ^ hash_stream(k, 1), 1);
}

#endif
