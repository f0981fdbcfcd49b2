/* linear_rows_forward and linear_panels_forward (the few-rows nn.Linear without BLIS's packing,
 * src/ops/linear_rows.c) against the BLIS product they replace for small N: outputs agree to
 * rounding for sizes with and without a remainder of the 4-column blocks, the 32-column panels, the
 * 12-row tiles and the 64-column chunks, with and without a bias; the result is bitwise the same on
 * 1 and 2 threads; each row's outputs are bitwise those of the row alone (a sentence decodes the
 * same alone or in a batch; a kernel's register blocks must not sum a row differently by its place
 * in a block); linear_forward sends N <= linear_rows_max() rows to the first and N <=
 * linear_panels_max() to the second. Every kernel: the AVX-512 ones where the CPU has it, and the
 * plain dot-product kernel and the AVX2 panels (a kernel table capped at AVX2), which CPUs without
 * AVX-512 run; the panels give the same bits with AVX2 as with AVX-512. */
#include "cpu.h"
#include "gemm_small.h"
#include "ops.h"
#include "parallel.h"
#include "test_util.h"

#include <stdint.h>

static float val(uint32_t *x) {
    *x = *x * 1103515245u + 12345u;
    return (float)((*x >> 8) & 0xffff) / 65536.0f - 0.5f;
}

typedef void (*linear_fn)(const ops_kernels *, float *, const float *, const float *, const float *, size_t, size_t, size_t);

static void one_of(linear_fn fn, int panels, size_t N, size_t IC, size_t OC, int with_bias) {
    const char *what = panels ? "panels" : "rows";
    uint32_t seed = (uint32_t)(N * 131 + IC * 17 + OC);
    float *x = malloc(N * IC * sizeof *x), *w = malloc(OC * IC * sizeof *w), *b = malloc(OC * sizeof *b);
    float *ref = malloc(N * OC * sizeof *ref), *o1 = malloc(N * OC * sizeof *o1), *o2 = malloc(N * OC * sizeof *o2);
    for (size_t i = 0; i < N * IC; i++) x[i] = val(&seed);
    for (size_t i = 0; i < OC * IC; i++) w[i] = val(&seed);
    for (size_t i = 0; i < OC; i++) b[i] = val(&seed);
    const float *bias = with_bias ? b : NULL;
    /* the reference: BLIS itself (ops_gemm would run the small kernel), ref = x · wᵀ, then the bias */
    ops_gemm_blis(0, 1, N, OC, IC, 1.0f, x, IC, w, IC, 0.0f, ref, OC);
    for (size_t n = 0; n < N; n++)
        for (size_t j = 0; j < OC; j++) ref[n * OC + j] += bias ? bias[j] : 0.0f;
    ops_set_threads(1);
    fn(KERN, o1, x, w, bias, N, IC, OC);
    ops_set_threads(2);
    fn(KERN, o2, x, w, bias, N, IC, OC);
    ops_set_threads(0);
    double worst = 0.0;
    for (size_t i = 0; i < N * OC; i++) {
        const double d = fabs((double)o1[i] - (double)ref[i]) / (1.0 + fabs((double)ref[i]));
        if (!(d <= worst)) worst = d; /* NaN counts as worst */
    }
    CHECK(worst <= 2e-6 * (1.0 + (double)IC / 64.0), "%s N %zu IC %zu OC %zu bias %d: relative difference %g from BLIS",
          what, N, IC, OC, with_bias, worst);
    CHECK(memcmp(o1, o2, N * OC * sizeof *o1) == 0, "%s N %zu IC %zu OC %zu: 1 and 2 threads differ", what, N, IC, OC);
    for (size_t n = 0; n < N; n += N > 6 ? 5 : 1) { /* row n alone: the same bits */
        fn(KERN, o2, x + n * IC, w, bias, 1, IC, OC);
        CHECK(memcmp(o1 + n * OC, o2, OC * sizeof *o1) == 0, "%s N %zu IC %zu OC %zu: row %zu alone differs", what, N,
              IC, OC, n);
    }
    const int routed = panels ? N > linear_rows_max(KERN) && N <= linear_panels_max(KERN) : N <= linear_rows_max(KERN);
    if (routed) { /* linear_forward takes this path for these rows */
        linear_forward(KERN, o2, x, w, bias, N, IC, OC);
        CHECK(memcmp(o1, o2, N * OC * sizeof *o1) == 0, "N %zu: linear_forward is not linear_%s_forward", N, what);
    }
    const ops_kernels *saved = test_kernels_current_;
    if (panels && KERN->isa == OPS_ISA_AVX512) { /* the AVX2 panels: the same bits */
        const ops_kernels avx2 = test_kernels_with(OPS_ISA_AVX2, 0);
        test_kernels_use(&avx2);
        fn(KERN, o2, x, w, bias, N, IC, OC);
        test_kernels_use(saved);
        CHECK(memcmp(o1, o2, N * OC * sizeof *o1) == 0, "panels N %zu IC %zu OC %zu: AVX2 and AVX-512 differ", N, IC, OC);
    }
    if (panels && linear_panels_max(KERN) > 0) { /* the tiled path (as if 200 rows) gives the panels' bits, bias
                                                * included (added with the first chunk of IC in both) */
        memset(o2, 0xff, N * OC * sizeof *o2);
        linear_forward_rows(KERN, o2, x, w, bias, N, IC, OC, 200);
        CHECK(memcmp(o1, o2, N * OC * sizeof *o1) == 0, "panels N %zu IC %zu OC %zu: not the tiled product's bits", N, IC,
              OC);
    }
    free(x), free(w), free(b), free(ref), free(o1), free(o2);
}

static void one(size_t N, size_t IC, size_t OC, int with_bias) {
    one_of(linear_rows_forward, 0, N, IC, OC, with_bias);
    one_of(linear_panels_forward, 1, N, IC, OC, with_bias);
}

/* Where linear_forward sends few rows: the panels above OPS_LINEAR_ROWS_MAX where AVX2+FMA is, the
 * AVX-512 dot-product kernel up to 128 rows when the small kernels are off. */
static void routing(void) {
    const int wide = KERN->isa == OPS_ISA_AVX512, avx2 = KERN->isa >= OPS_ISA_AVX2;
    const ops_kernels blis = test_kernels_with(OPS_ISA_AVX512, 1);
    CHECK(linear_rows_max(KERN) == OPS_LINEAR_ROWS_MAX || !avx2, "linear_rows_max %zu with AVX2+FMA", linear_rows_max(KERN));
    CHECK(linear_panels_max(KERN) == (avx2 ? OPS_LINEAR_PANELS_MAX : 0), "linear_panels_max %zu", linear_panels_max(KERN));
    test_kernels_use(&blis);
    CHECK(linear_panels_max(KERN) == 0, "panels with the small kernels off");
    CHECK(linear_rows_max(KERN) == (wide ? OPS_LINEAR_ROWS_MAX_AVX512 : OPS_LINEAR_ROWS_MAX), "linear_rows_max %zu, off",
          linear_rows_max(KERN));
    one_of(linear_rows_forward, 0, 30, 256, 130, 1); /* linear_forward's path for 30 rows now */
    test_kernels_use(NULL);
}

int main(void) {
    routing();
    const size_t Ns[] = {1, 3, 4, 8, 9, 13, 30, 128, 129}, ICs[] = {1, 7, 17, 256, 1024}, OCs[] = {1, 3, 4, 67, 130, 8000};
    /* the AVX-512 kernel where the CPU has it, then the plain kernel (what other CPUs run) */
    for (int wide = 1; wide >= 0; wide--) {
        const ops_kernels table = test_kernels_with(wide ? OPS_ISA_AVX512 : OPS_ISA_AVX2, 0);
        test_kernels_use(&table);
        for (size_t a = 0; a < sizeof Ns / sizeof *Ns; a++)
            for (size_t c = 0; c < sizeof ICs / sizeof *ICs; c++)
                for (size_t e = 0; e < sizeof OCs / sizeof *OCs; e++) one(Ns[a], ICs[c], OCs[e], (int)((a + c + e) % 2));
        one(4, 256, 768, 1);
        one(4, 256, 768, 0);
    }
    test_kernels_use(NULL);
    return test_finish("linear_rows");
}
