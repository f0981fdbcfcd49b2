/* ops_expf (src/ops/vmath.h), the exp of softmax and the loss: relative error against exp in
 * double on 4 million points of [−86.6, 88.7] and on one float in 61 of [−1e-3, 1e-3], the documented
 * edges (0 below −125·ln 2, +∞ above ln FLT_MAX, exp(−∞) = 0, NaN stays NaN), and the same values
 * from a vectorised loop as from single calls. */
#include "test_util.h"
#include "vmath.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

int main(void) {
    double worst = 0.0, at = 0.0;
    const long n = 4000000;
    for (long i = 0; i <= n; i++) {
        const float x = (float)(-86.6 + 175.3 * (double)i / (double)n);
        const double want = exp((double)x), err = fabs((double)ops_expf(x) - want) / want;
        if (!(err <= worst)) worst = err, at = x;
    }
    /* [−1e-3, 1e-3]: one float in 61 of each sign, by bit pattern (all 2·10⁹ took a minute): every
     * exponent there, and every residue of the mantissa's low bits, is visited */
    uint32_t top;
    const float lim = 1e-3f;
    memcpy(&top, &lim, sizeof top);
    for (uint32_t b = 0; b <= top; b += b + 61 > top && b != top ? top - b : 61)
        for (int sign = 0; sign < 2; sign++) {
            const uint32_t bits = b | (sign ? 0x80000000u : 0u);
            float x;
            memcpy(&x, &bits, sizeof x);
            const double want = exp((double)x), err = fabs((double)ops_expf(x) - want) / want;
            if (!(err <= worst)) worst = err, at = x;
        }
    printf("ops_expf: largest relative error %.3g at x = %.9g\n", worst, at);
    CHECK(worst <= 1e-6, "ops_expf: relative error %.3g at x = %.9g (documented bound 1e-6)", worst, at);
    CHECK(ops_expf(0.0f) == 1.0f, "exp(0) = %.9g", ops_expf(0.0f));
    CHECK(ops_expf(-INFINITY) == 0.0f, "exp(-inf) = %g", ops_expf(-INFINITY));
    CHECK(ops_expf(-87.0f) == 0.0f && ops_expf(-1000.0f) == 0.0f, "below -125 ln 2: %g %g", ops_expf(-87.0f),
          ops_expf(-1000.0f));
    CHECK(ops_expf(-86.6f) > 0.0f && ops_expf(-86.6f) >= FLT_MIN, "exp(-86.6) = %g, want a normal float",
          ops_expf(-86.6f));
    CHECK(isinf(ops_expf(89.0f)) && isinf(ops_expf(INFINITY)), "overflow: %g %g", ops_expf(89.0f),
          ops_expf(INFINITY));
    CHECK(isfinite(ops_expf(88.7f)), "exp(88.7) = %g, want finite", ops_expf(88.7f));
    CHECK(isnan(ops_expf(NAN)), "exp(NaN) = %g", ops_expf(NAN));

    enum { M = 1003 };
    float in[M], out[M];
    for (int i = 0; i < M; i++) in[i] = -80.0f + 0.16f * (float)i;
    in[5] = NAN, in[6] = -INFINITY, in[7] = INFINITY;
#pragma omp simd
    for (int i = 0; i < M; i++) out[i] = ops_expf(in[i]);
    int same = 1;
    for (int i = 0; i < M; i++) {
        const float one = ops_expf(in[i]);
        if (!(one == out[i] || (isnan(one) && isnan(out[i])))) same = 0;
    }
    CHECK(same, "a vectorised loop gives other values than single calls");

    /* ops_max_f: the scalar max on finite rows of every length 0..70 (vector bodies and tails),
     * NaN anywhere gives NaN, -inf rows give -inf */
    uint64_t st = 3;
    float row[70];
    int max_bad = 0;
    for (size_t len = 0; len <= 70; len++)
        for (int rep = 0; rep < 30; rep++) {
            float want = -INFINITY;
            for (size_t j = 0; j < len; j++) {
                row[j] = rep % 3 == 0 ? -INFINITY : 100.0f * test_frand(&st);
                if (row[j] > want) want = row[j];
            }
            if (ops_max_f(row, len) != want) max_bad++;
            if (len > 0) {
                row[(size_t)rep % len] = NAN;
                if (!isnan(ops_max_f(row, len))) max_bad++;
            }
        }
    CHECK(max_bad == 0, "ops_max_f: %d rows differ from the scalar max (or lost a NaN)", max_bad);
    return test_finish("test_vmath");
}
