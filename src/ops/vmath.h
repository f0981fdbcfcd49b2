/* Element-wise math that the compiler can vectorise (internal to src/ops). glibc's expf and exp are
 * calls the vectoriser cannot see through (without -ffast-math), so a loop that calls them runs one
 * element at a time: in a training step of the reference configuration the loss's exp over
 * 1024 × 8000 logits took more time than any kernel but the matrix products. */
#ifndef TFM_OPS_VMATH_H
#define TFM_OPS_VMATH_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** e^x in float, inlinable and branch-free so loops over it vectorise (`#pragma omp simd`).
 * Cody–Waite range reduction x = n·ln 2 + r, |r| ≤ ln 2 / 2 (ln 2 split in a high part whose
 * products with n are exact and a low part), e^r by its Taylor polynomial of degree 7 (truncation
 * below r⁸/8! < 6e-9 relative), and 2^n built in the exponent bits. Relative error ≤ 1e-6
 * (tests/unit/ops/test_vmath.c measures it against exp in double). Below x = −125·ln 2 ≈ −86.64
 * (e^x < 2^−125, the bottom of float's normal range) it returns 0; above 88.72 (e^x > FLT_MAX)
 * +∞; −∞ gives 0 and NaN gives NaN. Softmax and the loss only take e^(x − max) ≤ 1. */
static inline float ops_expf(float x) {
    const float lo = -86.643397f, hi = 88.722839f; /* −125·ln 2, ln FLT_MAX */
    const float log2e = 1.44269504088896341f, ln2_hi = 0.693145751953125f, ln2_lo = 1.42860682030941723e-6f;
    /* clamped, and NaN replaced by 0 so that the integer conversion below is defined (the NaN is
     * returned at the end) */
    const float xc = x < lo ? lo : (x > hi ? hi : (x == x ? x : 0.0f));
    /* n = xc·log2e rounded to the nearest integer by adding and subtracting 1.5·2^23 (exact for
     * |n| < 2^22; roundf would be a library call, which no loop vectorises): −125 <= n <= 128 */
    const float shifter = 12582912.0f;
    const float n = (xc * log2e + shifter) - shifter;
    const float r = (xc - n * ln2_hi) - n * ln2_lo;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    /* 2^(n−1), a normal float for n in [−125, 128] (2^128 itself would overflow), then × 2 */
    const uint32_t bits = (uint32_t)((int32_t)n + 126) << 23; /* 1 <= n + 126 <= 254 */
    float two_n_1;
    memcpy(&two_n_1, &bits, sizeof two_n_1);
    float y = p * two_n_1 * 2.0f;
    y = x < lo ? 0.0f : y;
    y = x > hi ? __builtin_inff() : y;
    return x != x ? x : y;
}

/** The largest of x[0..n) (−∞ for n = 0), or NaN when any x[j] is NaN: a max the compiler
 * vectorises (`omp simd` reduction) that still sees NaN. A scalar `if (x[j] > mx) mx = x[j]` runs
 * one element at a time, bound by the compare's latency (docs/KERNELS.md). The maximum of finite
 * values is exact in any order, so the vector lanes change no result (a ±0 maximum may come back
 * with either sign: x − max and max + y are the same then). */
static inline float ops_max_f(const float *x, size_t n) {
    float mx = -INFINITY;
    int nan = 0;
#pragma omp simd reduction(max : mx) reduction(| : nan)
    for (size_t j = 0; j < n; j++) {
        mx = x[j] > mx ? x[j] : mx;
        nan |= x[j] != x[j];
    }
    if (nan) return NAN;
    if (mx == -FLT_MAX) { /* clang starts each lane of the reduction at −FLT_MAX, not −∞: a row */
        int seen = 0;     /* of −∞ then gives −FLT_MAX, which is the max only if it is in the row */
        for (size_t j = 0; j < n; j++) seen |= x[j] == -FLT_MAX;
        if (!seen) mx = -INFINITY;
    }
    return mx;
}

#endif
