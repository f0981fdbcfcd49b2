/* The small-product kernels (src/ops/gemm_small*.c) against a triple loop in double: every kernel
 * this CPU runs (AVX-512, AVX2), all four transpositions, odd sizes around the tile edges (12 × 32
 * and 6 × 16), alpha/beta (beta = 0 with NaN in C, which must not leak), padded leading dimensions,
 * K = 0 and K over one, two and three chunks of GEMM_SMALL_KC; the two kernels give the same bits (one FMA chain per element);
 * ops_gemm_serial takes the small kernel where gemm_small_choice says so and BLIS under a kernel
 * table whose gemm is BLIS (kernels.h).
 *
 * The bound per element is the classic one for a recursive sum of products (Higham 2002, eq. 3.5),
 * with a margin of 2 and two more roundings per chunk of K: |ĉ − c| ≤ 2 · (K + 2 · chunks + 2) · u ·
 * (|alpha| · Σ_k |a_ik b_kj| + |beta c_ij|), u = 2⁻²⁴.
 *
 *   test_gemm_small --bench [reps [avx2]]   ns of thread CPU time per call (best of 7 batches), BLIS vs
 *                                     the small kernel, over the shapes of the callers (this VM
 *                                     has no hardware counters: perf stat cannot count cycles) */
#include "cpu.h"
#include "gemm_small.h"
#include "ops.h"
#include "parallel.h"
#include "test_util.h"

#include <stdint.h>
#include <time.h>

typedef struct {
    int ta, tb;
    size_t M, N, K, lda, ldb, ldc;
    float alpha, beta;
    float *A, *B, *C0; /* operands; C's value before the product */
} product;

static product product_make(int ta, int tb, size_t M, size_t N, size_t K, float alpha, float beta, uint64_t seed) {
    product p = {ta, tb, M, N, K, (ta ? M : K) + 3, (tb ? K : N) + 5, N + 7, alpha, beta, NULL, NULL, NULL};
    const size_t ra = ta ? K : M, rb = tb ? N : K;
    p.A = malloc((ra * p.lda + 1) * sizeof *p.A);
    p.B = malloc((rb * p.ldb + 1) * sizeof *p.B);
    p.C0 = malloc(M * p.ldc * sizeof *p.C0);
    test_fill_uniform(p.A, ra * p.lda + 1, seed), test_fill_uniform(p.B, rb * p.ldb + 1, seed + 1), test_fill_uniform(p.C0, M * p.ldc, seed + 2);
    if (beta == 0.0f) /* must not be read */
        for (size_t i = 0; i < M * p.ldc; i++) p.C0[i] = NAN;
    return p;
}

static void product_free(product *p) { free(p->A), free(p->B), free(p->C0); }

/* The largest |C − exact| / bound over C's M × N elements; the padding between rows must be
 * untouched (the worst is +∞ otherwise). */
static double worst_ratio(const product *p, const float *C) {
    const double u = 1.0 / 16777216.0;
    double worst = 0.0;
    for (size_t i = 0; i < p->M; i++) {
        for (size_t j = 0; j < p->N; j++) {
            double s = 0.0, mag = 0.0;
            for (size_t k = 0; k < p->K; k++) {
                const double a = p->ta ? p->A[k * p->lda + i] : p->A[i * p->lda + k];
                const double b = p->tb ? p->B[j * p->ldb + k] : p->B[k * p->ldb + j];
                s += a * b, mag += fabs(a * b);
            }
            const double c0 = p->beta == 0.0f ? 0.0 : (double)p->C0[i * p->ldc + j];
            const double want = (double)p->alpha * s + (double)p->beta * c0;
            const size_t chunks = p->K / GEMM_SMALL_KC + 1;
            const double bound = 2.0 * (double)(p->K + 2 * chunks + 2) * u * (fabs((double)p->alpha) * mag + fabs((double)p->beta * c0)) + 1e-30;
            const double r = fabs((double)C[i * p->ldc + j] - want) / bound;
            if (!(r <= worst)) worst = isnan(r) ? INFINITY : r;
        }
        for (size_t j = p->N; j < p->ldc; j++)
            if (memcmp(&C[i * p->ldc + j], &p->C0[i * p->ldc + j], sizeof *C) != 0) worst = INFINITY;
    }
    return worst;
}

/* C = the product by `isa` (GEMM_SMALL_NONE: ops_gemm_serial as dispatched now) */
static float *run(const product *p, int isa) {
    float *C = malloc(p->M * p->ldc * sizeof *C);
    memcpy(C, p->C0, p->M * p->ldc * sizeof *C);
    if (isa == GEMM_SMALL_NONE)
        ops_gemm_serial(KERN, p->ta, p->tb, p->M, p->N, p->K, p->alpha, p->A, p->lda, p->B, p->ldb, p->beta, C, p->ldc);
    else
        gemm_small((gemm_small_isa)isa, p->ta, p->tb, p->M, p->N, p->K, p->alpha, p->A, p->lda, p->B, p->ldb,
                   p->beta, C, p->ldc);
    return C;
}

static const char *isa_name(int isa) { return isa == GEMM_SMALL_AVX512 ? "avx512" : isa == GEMM_SMALL_AVX2 ? "avx2" : "blis"; }

/* every kernel this CPU has, against the double loop and against each other */
static void kernels(int best) {
    const size_t sizes[] = {1, 2, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 24, 25, 31, 32, 33, 47, 64, 65};
    const size_t ks[] = {0, 1, 3, 16, 17, 64, 100, GEMM_SMALL_KC, GEMM_SMALL_KC + 1, 2 * GEMM_SMALL_KC + 37};
    const float alphas[] = {1.0f, 0.125f, -1.5f}, betas[] = {0.0f, 1.0f, 0.5f};
    const size_t ns = sizeof sizes / sizeof sizes[0], nk = sizeof ks / sizeof ks[0];
    size_t cases = 0;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (size_t c = 0; c < 3 * ns; c++) {
                /* M and N walk the sizes at different rates (5 is prime to the count, 21) so M, N and K each
                 * take every value and different pairs of edges meet */
                const size_t M = sizes[c % ns], N = sizes[(c * 5 + 3) % ns], K = ks[(c + (size_t)ta) % nk];
                const float alpha = alphas[c % 3], beta = betas[(c / 3 + (size_t)tb) % 3];
                product p = product_make(ta, tb, M, N, K, alpha, beta, 100 + c);
                float *first = NULL;
                for (int isa = best; isa >= GEMM_SMALL_AVX2; isa--) {
                    float *C = run(&p, isa);
                    const double r = worst_ratio(&p, C);
                    CHECK(r <= 1.0, "%s ta=%d tb=%d %zux%zux%zu alpha %g beta %g: error %.3g × the bound", isa_name(isa),
                          ta, tb, M, N, K, (double)alpha, (double)beta, r);
                    if (first)
                        CHECK(memcmp(first, C, M * p.ldc * sizeof *C) == 0, "avx2 and avx512 differ: ta=%d tb=%d %zux%zux%zu",
                              ta, tb, M, N, K);
                    if (first) free(C);
                    else first = C;
                }
                free(first);
                product_free(&p);
                cases++;
            }
    printf("kernels: %zu products on %s%s\n", cases, isa_name(best), best == GEMM_SMALL_AVX512 ? " and avx2" : "");
}

/* ops_gemm_serial: the small kernel's bits where it fits, BLIS (within the bound) when switched off */
static void dispatch(int best) {
    const ops_kernels blis = test_kernels_with(OPS_ISA_AVX512, 1);
    const size_t shapes[][3] = {{32, 32, 64}, {32, 64, 32}, {128, 256, 64}, {128, 64, 256}, {20, 20, 64}, {1, 7, 3}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                const size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
                product p = product_make(ta, tb, M, N, K, 0.75f, s % 2 ? 1.0f : 0.0f, 7 + s);
                CHECK((int)gemm_small_choice(KERN, ta, tb, M, N, K) == best, "gemm_small_choice(%zu, %zu, %zu) is not %s", M, N, K, isa_name(best));
                float *C = run(&p, GEMM_SMALL_NONE), *S = run(&p, best);
                CHECK(memcmp(C, S, M * p.ldc * sizeof *C) == 0, "ops_gemm_serial %zux%zux%zu ta=%d tb=%d: not the small kernel",
                      M, N, K, ta, tb);
                test_kernels_use(&blis);
                CHECK(gemm_small_choice(KERN, ta, tb, M, N, K) == GEMM_SMALL_NONE, "a BLIS table left the small kernel on");
                float *R = run(&p, GEMM_SMALL_NONE);
                const double r = worst_ratio(&p, R);
                CHECK(r <= 1.0, "BLIS %zux%zux%zu ta=%d tb=%d: error %.3g × the bound", M, N, K, ta, tb, r);
                test_kernels_use(NULL);
                free(C), free(S), free(R);
                product_free(&p);
            }
    /* above GEMM_SMALL_MAX_MACS (a linear layer's tile): A·B and A·Bᵀ on the small kernel of either
     * instruction set, Aᵀ·B only on AVX-512's (AVX2 leaves it to BLIS) — in gemm_small_choice and in
     * what ops_gemm_serial and ops_gemm (tiles of 128 × 256 × 1024) run; on an AVX-512 CPU the AVX2
     * rule too */
    for (int isa = best; isa >= GEMM_SMALL_AVX2; isa--) {
        const ops_kernels table = test_kernels_with(isa == GEMM_SMALL_AVX512 ? OPS_ISA_AVX512 : OPS_ISA_AVX2, 0);
        test_kernels_use(&table);
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                const int want = !ta || isa == GEMM_SMALL_AVX512 ? isa : GEMM_SMALL_NONE;
                CHECK((int)gemm_small_choice(KERN, ta, tb, 128, 256, 1024) == want, "%s: 128 × 256 × 1024 ta=%d tb=%d: not %s",
                      isa_name(isa), ta, tb, isa_name(want));
                for (size_t M = 128; M <= 256; M += 128) { /* ops_gemm_serial, then ops_gemm's two row tiles */
                    product p = product_make(ta, tb, M, 256, 1024, 1.0f, 0.0f, 70 + ta + 2 * tb);
                    float *got = malloc(M * p.ldc * sizeof *got), *ref = malloc(M * p.ldc * sizeof *ref);
                    memcpy(got, p.C0, M * p.ldc * sizeof *got), memcpy(ref, p.C0, M * p.ldc * sizeof *ref);
                    if (M == 128)
                        ops_gemm_serial(KERN, ta, tb, M, 256, 1024, 1.0f, p.A, p.lda, p.B, p.ldb, 0.0f, got, p.ldc);
                    else
                        ops_gemm(KERN, ta, tb, M, 256, 1024, 1.0f, p.A, p.lda, p.B, p.ldb, 0.0f, got, p.ldc);
                    if (want != GEMM_SMALL_NONE)
                        gemm_small((gemm_small_isa)want, ta, tb, M, 256, 1024, 1.0f, p.A, p.lda, p.B, p.ldb, 0.0f, ref, p.ldc);
                    else /* BLIS's bits, which are not the small kernel's */
                        gemm_small((gemm_small_isa)isa, ta, tb, M, 256, 1024, 1.0f, p.A, p.lda, p.B, p.ldb, 0.0f, ref, p.ldc);
                    const int same = memcmp(got, ref, M * p.ldc * sizeof *got) == 0;
                    CHECK(want != GEMM_SMALL_NONE ? same : !same, "%s: %s %zux256x1024 ta=%d tb=%d: %s", isa_name(isa),
                          M == 128 ? "ops_gemm_serial" : "ops_gemm", M, ta, tb,
                          want != GEMM_SMALL_NONE ? "not the small kernel's bits" : "the small kernel ran, not BLIS");
                    free(got), free(ref);
                    product_free(&p);
                }
            }
    }
    test_kernels_use(&blis);
    CHECK(gemm_small_choice(KERN, 0, 1, 128, 256, 1024) == GEMM_SMALL_NONE, "a BLIS table left a large product on the small kernel");
    test_kernels_use(NULL);
    /* the tuned table of this CPU: the same choices as the widest table tried above */
    CHECK((int)gemm_small_choice(KERN, 0, 1, 128, 256, 1024) == best, "the tuned table does not take %s", isa_name(best));
}

/* gemm_small_bias: the bits of C filled with the bias, then the product with beta = 1 (both
 * kernels, the four transpositions, partial panels and tiles, one and three chunks of K); C is not
 * read (NaN there) and its padding stays untouched */
static void bias_form(int best) {
    const size_t shapes[][3] = {{1, 1, 1}, {13, 33, 64}, {12, 32, 300}, {7, 17, 5}, {25, 70, 513}, {128, 256, 256}};
    size_t cases = 0;
    for (int isa = best; isa >= GEMM_SMALL_AVX2; isa--)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++) {
                    const size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
                    const float alpha = s % 2 ? 0.5f : 1.0f;
                    product p = product_make(ta, tb, M, N, K, alpha, 1.0f, 40 + s);
                    float *bias = malloc(N * sizeof *bias), *want = malloc(M * p.ldc * sizeof *want);
                    float *got = malloc(M * p.ldc * sizeof *got);
                    test_fill_uniform(bias, N, 90 + s);
                    memcpy(want, p.C0, M * p.ldc * sizeof *want);
                    for (size_t i = 0; i < M; i++) memcpy(want + i * p.ldc, bias, N * sizeof *bias);
                    gemm_small((gemm_small_isa)isa, ta, tb, M, N, K, alpha, p.A, p.lda, p.B, p.ldb, 1.0f, want, p.ldc);
                    for (size_t i = 0; i < M; i++) { /* C's elements NaN, its padding as it was */
                        memcpy(got + i * p.ldc, p.C0 + i * p.ldc, p.ldc * sizeof *got);
                        for (size_t j = 0; j < N; j++) got[i * p.ldc + j] = NAN;
                    }
                    gemm_small_bias((gemm_small_isa)isa, ta, tb, M, N, K, alpha, p.A, p.lda, p.B, p.ldb, bias, got, p.ldc);
                    CHECK(memcmp(want, got, M * p.ldc * sizeof *got) == 0, "%s gemm_small_bias %zux%zux%zu ta=%d tb=%d: not the bits of bias + product",
                          isa_name(isa), M, N, K, ta, tb);
                    free(bias), free(want), free(got);
                    product_free(&p);
                    cases++;
                }
    printf("bias form: %zu products\n", cases);
}

/* op(A) read in place at a stride of a multiple of 4 KiB (lda 1024, 2048: gemm_small_a_aliased),
 * where the AVX-512 kernel copies each tile's part of op(A) to a band first (A·B, Aᵀ·B) or runs
 * tiles of 8 rows (A·Bᵀ): the bits of the same product at a stride that does not alias (the same
 * values, lda + 16), with beta and with a bias, within the bound of the double loop, partial tiles
 * and panels (one and two vectors wide), one to eight chunks of K, beta 0 (NaN in C), 0.5 and 1,
 * all four transpositions. On a CPU without AVX-512 this checks that the AVX2 kernel gives the
 * same bits at either stride. */
static void aliased(int best) {
    const size_t lds[] = {1024, 2048};
    const size_t shapes[][3] = {{1, 1, 1}, {12, 32, 256}, {13, 40, 300}, {25, 5, 1000}, {128, 256, 1024}, {7, 33, 2048},
                                {13, 56, 300}};
    const float betas[] = {0.0f, 0.5f, 1.0f};
    size_t cases = 0;
    for (size_t l = 0; l < 2; l++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < 4; t++) {
                const int ta = t / 2, tb = t % 2;
                const size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], lda = lds[l];
                const size_t ra = ta ? K : M, ca = ta ? M : K; /* A stored ra × ca */
                if (ca > lda) continue;
                CHECK(gemm_small_a_aliased(lda) && !gemm_small_a_aliased(lda + 16), "gemm_small_a_aliased(lda %zu)", lda);
                const float alpha = s % 2 ? 0.5f : 1.0f, beta = betas[(s + (size_t)t + l) % 3];
                product p = product_make(ta, tb, M, N, K, alpha, beta, 300 + s);
                /* the same values at the aliased stride and at a plain one */
                float *Aa = malloc(ra * lda * sizeof *Aa), *Ap = malloc(ra * (lda + 16) * sizeof *Ap);
                for (size_t i = 0; i < ra; i++) {
                    memcpy(Aa + i * lda, p.A + i * p.lda, ca * sizeof *Aa);
                    memcpy(Ap + i * (lda + 16), p.A + i * p.lda, ca * sizeof *Ap);
                }
                float *bias = malloc(N * sizeof *bias);
                test_fill_uniform(bias, N, 400 + s);
                float *first = NULL;
                for (int isa = best; isa >= GEMM_SMALL_AVX2; isa--) {
                    float *got = malloc(M * p.ldc * sizeof *got), *want = malloc(M * p.ldc * sizeof *want);
                    memcpy(got, p.C0, M * p.ldc * sizeof *got), memcpy(want, p.C0, M * p.ldc * sizeof *want);
                    gemm_small((gemm_small_isa)isa, ta, tb, M, N, K, alpha, Aa, lda, p.B, p.ldb, beta, got, p.ldc);
                    gemm_small((gemm_small_isa)isa, ta, tb, M, N, K, alpha, Ap, lda + 16, p.B, p.ldb, beta, want, p.ldc);
                    CHECK(memcmp(want, got, M * p.ldc * sizeof *got) == 0, "%s lda %zu %zux%zux%zu ta=%d tb=%d: not the bits of lda + 16",
                          isa_name(isa), lda, M, N, K, ta, tb);
                    const double r = worst_ratio(&p, got);
                    CHECK(r <= 1.0, "%s lda %zu %zux%zux%zu ta=%d tb=%d: error %.3g × the bound", isa_name(isa), lda, M, N, K, ta, tb, r);
                    gemm_small_bias((gemm_small_isa)isa, ta, tb, M, N, K, alpha, Aa, lda, p.B, p.ldb, bias, got, p.ldc);
                    gemm_small_bias((gemm_small_isa)isa, ta, tb, M, N, K, alpha, Ap, lda + 16, p.B, p.ldb, bias, want, p.ldc);
                    CHECK(memcmp(want, got, M * p.ldc * sizeof *got) == 0, "%s bias lda %zu %zux%zux%zu ta=%d tb=%d: not the bits of lda + 16",
                          isa_name(isa), lda, M, N, K, ta, tb);
                    if (first)
                        CHECK(memcmp(first, got, M * p.ldc * sizeof *got) == 0, "aliased: avx2 and avx512 differ %zux%zux%zu ta=%d tb=%d",
                              M, N, K, ta, tb);
                    free(want);
                    if (first) free(got);
                    else first = got;
                    cases++;
                }
                free(first), free(bias), free(Aa), free(Ap);
                product_free(&p);
            }
    printf("aliased strides: %zu products%s\n", cases,
           best == GEMM_SMALL_AVX512 ? "" : " (no AVX-512 here: the copy itself is not exercised)");
}

/* op(B) stored K × N at a stride of a multiple of 4 KiB (ldb 1024, 2048: gemm_small_b_aliased),
 * whose panel the AVX-512 kernel copies first in Aᵀ·B: the bits of the same product at ldb + 16,
 * with beta and with a bias, both transpositions of A, each also at an aliased lda (that path reads
 * B in place; so does A·B), partial panels and tiles, one to eight chunks of K; the AVX2 kernel's
 * the same bits. */
static void aliased_b(int best) {
    const size_t lds[] = {1024, 2048};
    const size_t shapes[][3] = {{1, 1, 1}, {12, 32, 256}, {13, 40, 300}, {25, 5, 1000}, {128, 256, 1024}, {7, 1024, 2048},
                                {40, 17, 300}};
    size_t cases = 0;
    for (size_t l = 0; l < 2; l++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int tc = 0; tc < 4; tc++) { /* 2, 3: A not transposed / transposed at lda 1024 (aliased as well) */
                const int ta = tc == 1 || tc == 3;
                const size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], ldb = lds[l];
                if (N > ldb || (tc == 2 && K > 1024) || (tc == 3 && M > 1024)) continue;
                CHECK(gemm_small_b_aliased(0, ldb) && !gemm_small_b_aliased(1, ldb) && !gemm_small_b_aliased(0, ldb + 16),
                      "gemm_small_b_aliased(ldb %zu)", ldb);
                const float alpha = s % 2 ? 0.5f : 1.0f, beta = (s + (size_t)tc + l) % 3 == 0 ? 0.0f : 0.5f;
                product p = product_make(ta, 0, M, N, K, alpha, beta, 500 + s);
                const float *A = p.A;
                size_t lda = p.lda;
                float *Aw = NULL;
                if (tc >= 2) { /* A stored ra × ca at lda 1024 */
                    const size_t ra = ta ? K : M, ca = ta ? M : K;
                    Aw = malloc(ra * 1024 * sizeof *Aw);
                    for (size_t i = 0; i < ra; i++) memcpy(Aw + i * 1024, p.A + i * p.lda, ca * sizeof *Aw);
                    A = Aw, lda = 1024;
                }
                float *Ba = malloc(K * ldb * sizeof *Ba), *Bp = malloc(K * (ldb + 16) * sizeof *Bp);
                for (size_t k = 0; k < K; k++) {
                    memcpy(Ba + k * ldb, p.B + k * p.ldb, N * sizeof *Ba);
                    memcpy(Bp + k * (ldb + 16), p.B + k * p.ldb, N * sizeof *Bp);
                }
                float *bias = malloc(N * sizeof *bias);
                test_fill_uniform(bias, N, 600 + s);
                float *first = NULL;
                for (int isa = best; isa >= GEMM_SMALL_AVX2; isa--) {
                    float *got = malloc(M * p.ldc * sizeof *got), *want = malloc(M * p.ldc * sizeof *want);
                    memcpy(got, p.C0, M * p.ldc * sizeof *got), memcpy(want, p.C0, M * p.ldc * sizeof *want);
                    gemm_small((gemm_small_isa)isa, ta, 0, M, N, K, alpha, A, lda, Ba, ldb, beta, got, p.ldc);
                    gemm_small((gemm_small_isa)isa, ta, 0, M, N, K, alpha, A, lda, Bp, ldb + 16, beta, want, p.ldc);
                    CHECK(memcmp(want, got, M * p.ldc * sizeof *got) == 0,
                          "%s ldb %zu %zux%zux%zu case %d: not the bits of ldb + 16", isa_name(isa), ldb, M, N, K, tc);
                    const double r = worst_ratio(&p, got);
                    CHECK(r <= 1.0, "%s ldb %zu %zux%zux%zu case %d: error %.3g × the bound", isa_name(isa), ldb, M, N, K, tc, r);
                    gemm_small_bias((gemm_small_isa)isa, ta, 0, M, N, K, alpha, A, lda, Ba, ldb, bias, got, p.ldc);
                    gemm_small_bias((gemm_small_isa)isa, ta, 0, M, N, K, alpha, A, lda, Bp, ldb + 16, bias, want, p.ldc);
                    CHECK(memcmp(want, got, M * p.ldc * sizeof *got) == 0,
                          "%s bias ldb %zu %zux%zux%zu case %d: not the bits of ldb + 16", isa_name(isa), ldb, M, N, K, tc);
                    if (first)
                        CHECK(memcmp(first, got, M * p.ldc * sizeof *got) == 0, "aliased B: avx2 and avx512 differ %zux%zux%zu case %d",
                              M, N, K, tc);
                    free(want);
                    if (first) free(got);
                    else first = got;
                    cases++;
                }
                free(first), free(bias), free(Ba), free(Bp), free(Aw);
                product_free(&p);
            }
    printf("aliased B strides: %zu products\n", cases);
}

/* this thread's CPU time in ns (time spent descheduled on a busy machine is not counted) */
static double thread_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns of thread CPU time per product, best of 7 batches of reps: isa GEMM_SMALL_NONE = BLIS */
static double ns_per_call(const product *p, int isa, float *C, int reps) {
    double best = INFINITY;
    for (int batch = 0; batch < 7; batch++) {
        const double t0 = thread_ns();
        for (int r = 0; r < reps; r++) {
            if (isa == GEMM_SMALL_NONE)
                ops_gemm_serial(KERN, p->ta, p->tb, p->M, p->N, p->K, p->alpha, p->A, p->lda, p->B, p->ldb, p->beta, C, p->ldc);
            else
                gemm_small((gemm_small_isa)isa, p->ta, p->tb, p->M, p->N, p->K, p->alpha, p->A, p->lda, p->B, p->ldb,
                           p->beta, C, p->ldc);
        }
        const double t = (thread_ns() - t0) / reps;
        if (t < best) best = t;
    }
    return best;
}

static int bench(int reps, const char *isa) {
    const ops_kernels blis_table = test_kernels_with(OPS_ISA_AVX512, 1);
    int best = gemm_small_active(KERN);
    if (isa && strcmp(isa, "avx2") == 0 && best == GEMM_SMALL_AVX512) best = GEMM_SMALL_AVX2;
    if (best == GEMM_SMALL_NONE) {
        printf("SKIP: no small-product kernel on this CPU\n");
        return TEST_SKIP;
    }
    /* attention tiles (fused: nq × ns × d_k and nq × d_k × ns; reference path per head) and the
     * tiles and small products of ops_gemm (linear layers: K = d_model or d_ff) */
    const int shapes[][5] = {
        {0, 1, 32, 32, 64},    {0, 0, 32, 64, 32},    {1, 0, 32, 64, 32},   {0, 1, 16, 16, 64},  {0, 1, 40, 40, 64},
        {0, 0, 40, 64, 40},    {0, 1, 64, 64, 64},    {0, 0, 64, 64, 64},   {0, 1, 128, 256, 64}, {0, 0, 128, 64, 256},
        {1, 0, 256, 64, 128},  {0, 1, 32, 256, 256},  {0, 0, 32, 256, 256}, {1, 0, 256, 256, 32}, {0, 1, 512, 4, 64},
        {0, 0, 512, 4, 256},   {0, 1, 128, 256, 256}, {0, 0, 128, 256, 256}, {1, 0, 128, 256, 256},
        {0, 1, 128, 256, 512}, {0, 0, 128, 256, 512}, {1, 0, 128, 256, 512}, {0, 1, 128, 256, 1024},
        {0, 0, 128, 256, 1024}, {1, 0, 128, 256, 1024}, {0, 0, 128, 256, 8000}, {1, 0, 128, 256, 4096}};
    printf("ns of thread CPU time per call, best of 7 batches; %s kernel\n", isa_name(best));
    printf("%-3s %-3s %5s %5s %5s %10s %10s %7s %9s %9s\n", "ta", "tb", "M", "N", "K", "blis", "small", "ratio",
           "blis MAC/ns", "small");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const size_t M = (size_t)shapes[s][2], N = (size_t)shapes[s][3], K = (size_t)shapes[s][4];
        product p = product_make(shapes[s][0], shapes[s][1], M, N, K, 1.0f, 1.0f, 1);
        float *C = malloc(M * p.ldc * sizeof *C);
        memcpy(C, p.C0, M * p.ldc * sizeof *C);
        const int r = (int)(reps * 262144.0 / (double)(M * N * K) + 1);
        test_kernels_use(&blis_table);
        const double blis = ns_per_call(&p, GEMM_SMALL_NONE, C, r);
        test_kernels_use(NULL);
        /* timed through gemm_small directly: the threshold must not decide what is measured */
        const double small = ns_per_call(&p, best, C, r);
        const double macs = (double)(M * N * K);
        printf("%-3d %-3d %5zu %5zu %5zu %10.0f %10.0f %7.2f %9.1f %9.1f\n", p.ta, p.tb, M, N, K, blis, small,
               blis / small, macs / blis, macs / small);
        free(C);
        product_free(&p);
    }
    return 0;
}

/* ops_gemm and linear_forward on tall tiles (an A·Bᵀ whose B has ≥ OPS_GEMM_TALL_MIN_B floats and
 * K ≤ OPS_GEMM_TALL_MAX_K: tiles of OPS_GEMM_TALL_M × OPS_GEMM_TALL_N, partial in both directions
 * here) and on the default tiles (K one past the bound): the bits of one gemm_small call over the
 * whole product, with 1 and 2 threads, with beta 0.5 and with a bias. */
static void tall_tiles(int best) {
    const size_t M = OPS_GEMM_TALL_M + 88, N = OPS_GEMM_TALL_MIN_B / OPS_GEMM_TALL_MAX_K + 2 * OPS_GEMM_TALL_N + 12;
    const size_t Ks[2] = {OPS_GEMM_TALL_MAX_K, OPS_GEMM_TALL_MAX_K + 1};
    for (int k = 0; k < 2; k++) {
        const size_t K = Ks[k];
        CHECK((N * K >= OPS_GEMM_TALL_MIN_B) && (k == 0) == (K <= OPS_GEMM_TALL_MAX_K), "tall tiles: the shapes");
        product p = product_make(0, 1, M, N, K, 1.0f, 0.5f, 300 + k);
        float *bias = malloc(N * sizeof *bias), *got = malloc(M * p.ldc * sizeof *got);
        float *want = malloc(M * p.ldc * sizeof *want), *wantb = malloc(M * N * sizeof *wantb);
        float *gotb = malloc(M * N * sizeof *gotb), *Ad = malloc(M * K * sizeof *Ad), *Bd = malloc(N * K * sizeof *Bd);
        test_fill_uniform(bias, N, 310 + k);
        for (size_t i = 0; i < M; i++) memcpy(Ad + i * K, p.A + i * p.lda, K * sizeof *Ad); /* dense, for linear_forward */
        for (size_t j = 0; j < N; j++) memcpy(Bd + j * K, p.B + j * p.ldb, K * sizeof *Bd);
        memcpy(want, p.C0, M * p.ldc * sizeof *want);
        gemm_small((gemm_small_isa)best, 0, 1, M, N, K, 1.0f, p.A, p.lda, p.B, p.ldb, 0.5f, want, p.ldc);
        gemm_small_bias((gemm_small_isa)best, 0, 1, M, N, K, 1.0f, Ad, K, Bd, K, bias, wantb, N);
        for (int threads = 1; threads <= 2; threads++) {
            ops_set_threads(threads);
            memcpy(got, p.C0, M * p.ldc * sizeof *got);
            ops_gemm(KERN, 0, 1, M, N, K, 1.0f, p.A, p.lda, p.B, p.ldb, 0.5f, got, p.ldc);
            CHECK(memcmp(got, want, M * p.ldc * sizeof *got) == 0, "ops_gemm %zux%zux%zu A·Bᵀ, %d threads: not the bits of one gemm_small call",
                  M, N, K, threads);
            linear_forward(KERN, gotb, Ad, Bd, bias, M, K, N);
            CHECK(memcmp(gotb, wantb, M * N * sizeof *gotb) == 0,
                  "linear_forward %zu rows, %zu → %zu, %d threads: not the bits of one gemm_small_bias call", M, K, N,
                  threads);
        }
        ops_set_threads(0);
        free(bias), free(got), free(want), free(wantb), free(gotb), free(Ad), free(Bd);
        product_free(&p);
    }
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "--bench") == 0) return bench(argc >= 3 ? atoi(argv[2]) : 20, argc >= 4 ? argv[3] : NULL);
    const int best = gemm_small_active(KERN);
    if (best == GEMM_SMALL_NONE) {
        printf("SKIP: no small-product kernel on this CPU (needs AVX2+FMA or AVX-512F)\n");
        return TEST_SKIP;
    }
    kernels(best);
    dispatch(best);
    bias_form(best);
    aliased(best);
    aliased_b(best);
    tall_tiles(best);
    return test_finish("test_gemm_small");
}
