/* attn_row_scores and attn_row_values (src/ops/attention_decode.c, one query's attention products
 * in a decoding step) against plain double-precision loops: sizes around the 16-key blocks and the
 * 16/64-column groups (S 1–100, d_k 1–80), row strides wider than d_k (the packed Q|K|V and the
 * cache); with AVX-512 each key's score is bitwise the same with the key alone (its place in a
 * block of 16 must not change how it is summed). Both paths: the AVX-512 kernels where the CPU has
 * them, and the BLIS fallback (a kernel table without AVX-512). */
#include "cpu.h"
#include "ops.h"
#include "test_util.h"

#include <stdint.h>

static void one(size_t S, size_t d_k, size_t stride) {
    float *K = malloc(S * stride * sizeof *K), *V = malloc(S * stride * sizeof *V), *q = calloc(d_k, sizeof *q);
    float *P = malloc(S * sizeof *P), *O = malloc(d_k * sizeof *O), alone;
    test_fill_uniform(K, S * stride, 1000 + S * 7 + d_k), test_fill_uniform(V, S * stride, 2000 + S + d_k), test_fill_uniform(q, d_k, 3000 + d_k);
    const float scale = 0.125f;
    attn_row_scores(KERN, P, q, K, S, d_k, stride, scale);
    double worst = 0.0;
    int same = 1;
    for (size_t s = 0; s < S; s++) {
        double ref = 0.0;
        for (size_t c = 0; c < d_k; c++) ref += (double)q[c] * K[s * stride + c];
        ref *= scale;
        const double e = fabs(P[s] - ref) / (1.0 + fabs(ref));
        if (!(e <= worst)) worst = e;
        attn_row_scores(KERN, &alone, q, K + s * stride, 1, d_k, stride, scale);
        same &= alone == P[s];
    }
    CHECK(worst <= 1e-6 * (1.0 + (double)d_k / 16.0), "S %zu d_k %zu stride %zu: score error %g", S, d_k, stride, worst);
    /* the AVX-512 kernel's property; BLIS's gemv (the fallback) sums a key by its place in S, which
     * is no harm: a row's keys are the same alone or in a batch */
    CHECK(same || KERN->isa != OPS_ISA_AVX512, "S %zu d_k %zu: a key's score alone differs from its score among %zu keys", S,
          d_k, S);
    for (size_t s = 0; s < S; s++) P[s] = (float)(s % 5) * 0.1f; /* weights, some 0 */
    attn_row_values(KERN, O, P, V, S, d_k, stride);
    worst = 0.0;
    for (size_t c = 0; c < d_k; c++) {
        double ref = 0.0;
        for (size_t s = 0; s < S; s++) ref += (double)P[s] * V[s * stride + c];
        const double e = fabs(O[c] - ref) / (1.0 + fabs(ref));
        if (!(e <= worst)) worst = e;
    }
    CHECK(worst <= 1e-6 * (1.0 + (double)S / 16.0), "S %zu d_k %zu stride %zu: output error %g", S, d_k, stride, worst);
    free(K), free(V), free(q), free(P), free(O);
}

int main(void) {
    const size_t Ss[] = {1, 2, 15, 16, 17, 33, 40, 100}, dks[] = {1, 7, 16, 20, 32, 64, 65, 80};
    for (int wide = 1; wide >= 0; wide--) { /* the AVX-512 kernels where the CPU has them, then BLIS */
        const ops_kernels table = test_kernels_with(wide ? OPS_ISA_AVX512 : OPS_ISA_AVX2, 0);
        test_kernels_use(&table);
        for (size_t a = 0; a < sizeof Ss / sizeof *Ss; a++)
            for (size_t b = 0; b < sizeof dks / sizeof *dks; b++) {
                one(Ss[a], dks[b], dks[b]);
                one(Ss[a], dks[b], 3 * dks[b] + 5);
            }
    }
    test_kernels_use(NULL);
    /* S = 0: no scores written, a zero output */
    float O[4] = {1, 2, 3, 4}, P0 = 7.0f;
    attn_row_scores(KERN, &P0, O, O, 0, 4, 4, 1.0f);
    attn_row_values(KERN, O, &P0, O, 0, 4, 4);
    CHECK(P0 == 7.0f && O[0] == 0.0f && O[3] == 0.0f, "S = 0: scores %g, output %g %g", P0, O[0], O[3]);
    return test_finish("attn_decode");
}
