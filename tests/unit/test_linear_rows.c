/* linear_rows_forward (the few-rows nn.Linear without packing, src/ops/linear_rows.c) against the
 * BLIS product it replaces for small N: outputs agree to rounding for sizes with and without a
 * remainder of the 4-column blocks and of the 64-column chunks, with and without a bias; the
 * result is bitwise the same on 1 and 2 threads; each row's outputs are bitwise those of the row
 * alone (a sentence decodes the same alone or in a batch; the AVX-512 kernel's 4 × 4 blocks must
 * not sum a row differently by its place in a block); linear_forward sends N <= linear_rows_max()
 * rows to it. Both kernels: the AVX-512 one where the CPU has it, and the plain one
 * (ops_cpu_avx512_select(0)), which CPUs without AVX-512 run. */
#include "cpu.h"
#include "ops.h"
#include "parallel.h"
#include "test_util.h"

#include <stdint.h>

static float val(uint32_t *x) {
    *x = *x * 1103515245u + 12345u;
    return (float)((*x >> 8) & 0xffff) / 65536.0f - 0.5f;
}

static void one(size_t N, size_t IC, size_t OC, int with_bias) {
    uint32_t seed = (uint32_t)(N * 131 + IC * 17 + OC);
    float *x = malloc(N * IC * sizeof *x), *w = malloc(OC * IC * sizeof *w), *b = malloc(OC * sizeof *b);
    float *ref = malloc(N * OC * sizeof *ref), *o1 = malloc(N * OC * sizeof *o1), *o2 = malloc(N * OC * sizeof *o2);
    for (size_t i = 0; i < N * IC; i++) x[i] = val(&seed);
    for (size_t i = 0; i < OC * IC; i++) w[i] = val(&seed);
    for (size_t i = 0; i < OC; i++) b[i] = val(&seed);
    const float *bias = with_bias ? b : NULL;
    /* the reference: BLIS, ref = x · wᵀ, then the bias */
    ops_gemm(0, 1, N, OC, IC, 1.0f, x, IC, w, IC, 0.0f, ref, OC);
    for (size_t n = 0; n < N; n++)
        for (size_t j = 0; j < OC; j++) ref[n * OC + j] += bias ? bias[j] : 0.0f;
    ops_set_threads(1);
    linear_rows_forward(o1, x, w, bias, N, IC, OC);
    ops_set_threads(2);
    linear_rows_forward(o2, x, w, bias, N, IC, OC);
    ops_set_threads(0);
    double worst = 0.0;
    for (size_t i = 0; i < N * OC; i++) {
        const double d = fabs((double)o1[i] - (double)ref[i]) / (1.0 + fabs((double)ref[i]));
        if (!(d <= worst)) worst = d; /* NaN counts as worst */
    }
    CHECK(worst <= 2e-6 * (1.0 + (double)IC / 64.0), "N %zu IC %zu OC %zu bias %d: relative difference %g from BLIS", N, IC, OC,
          with_bias, worst);
    CHECK(memcmp(o1, o2, N * OC * sizeof *o1) == 0, "N %zu IC %zu OC %zu: 1 and 2 threads differ", N, IC, OC);
    for (size_t n = 0; n < N; n += N > 6 ? 5 : 1) { /* row n alone: the same bits */
        linear_rows_forward(o2, x + n * IC, w, bias, 1, IC, OC);
        CHECK(memcmp(o1 + n * OC, o2, OC * sizeof *o1) == 0, "N %zu IC %zu OC %zu: row %zu alone differs", N, IC, OC, n);
    }
    if (N <= linear_rows_max()) { /* linear_forward takes this path for few rows */
        linear_forward(o2, x, w, bias, N, IC, OC);
        CHECK(memcmp(o1, o2, N * OC * sizeof *o1) == 0, "N %zu: linear_forward is not linear_rows_forward", N);
    }
    free(x), free(w), free(b), free(ref), free(o1), free(o2);
}

int main(void) {
    const size_t Ns[] = {1, 3, 4, 8, 13, 30, 129}, ICs[] = {1, 7, 17, 256, 1024}, OCs[] = {1, 3, 4, 67, 130, 8000};
    /* the AVX-512 kernel where the CPU has it, then the plain kernel (what other CPUs run) */
    for (int wide = 1; wide >= 0; wide--) {
        ops_cpu_avx512_select(wide);
        for (size_t a = 0; a < sizeof Ns / sizeof *Ns; a++)
            for (size_t c = 0; c < sizeof ICs / sizeof *ICs; c++)
                for (size_t e = 0; e < sizeof OCs / sizeof *OCs; e++) one(Ns[a], ICs[c], OCs[e], (int)((a + c + e) % 2));
        one(4, 256, 768, 1);
        one(4, 256, 768, 0);
    }
    ops_cpu_avx512_select(1);
    return test_finish("linear_rows");
}
