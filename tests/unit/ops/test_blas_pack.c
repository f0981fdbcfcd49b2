/* The library's packing of BLIS's micro-panels (src/ops/blas_pack.c) writes exactly what BLIS's
 * own packing writes: the kernel against bli_spackm_struc_cxk on every panel shape (each row count
 * up to the panel width, lengths that leave an 8-column tail, zero-padded lengths, both unit-stride
 * layouts, kappa 1 and not), the whole buffer compared bit for bit (so a write past the panel shows
 * too); and products through BLIS with our packing against BLIS's packing, bit for bit, for the four
 * transpositions, edge panels, alpha ≠ 1, beta 0 and 1 and strided operands. */
#include "blas.h"
#include "gemm_small.h"
#include "parallel.h"
#include "test_util.h"
#include "tfm/threads.h"

#include <stdint.h>

/* x[i] uniform in [-1, 1) from the project's one hash, every 7th a -0 (its sign must survive) */
static void fill(float *x, size_t n, uint64_t seed) {
    test_fill_uniform(x, n, seed);
    for (size_t i = 3; i < n; i += 7) x[i] = -0.0f; /* −0 must survive packing */
}

static void sentinel(float *x, size_t n) {
    const uint32_t bits = 0x7fc12345u; /* a NaN neither packing writes */
    for (size_t i = 0; i < n; i++) memcpy(x + i, &bits, sizeof bits);
}

static void kernels(packm_ker_vft ours, cntx_t *cntx) {
    const dim_t widths[] = {32, 12, 16, 6, 8, 1};
    const dim_t lens[] = {1, 7, 8, 13, 16, 37};
    enum { LD = 64, LEN = 48, PAD = 3 };
    float *c = malloc(LD * LD * sizeof *c), *p0 = malloc(LD * (LEN + PAD) * sizeof *p0);
    float *p1 = malloc(LD * (LEN + PAD) * sizeof *p1);
    fill(c, LD * LD, 11);
    size_t cases = 0;
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
        for (dim_t dim = 1; dim <= widths[w]; dim++)
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
                for (int pad = 0; pad < 2; pad++)
                    for (int rows = 0; rows < 2; rows++)
                        for (int sc = 0; sc < 2; sc++) {
                            const dim_t dmax = widths[w], len = lens[l], lmax = len + pad * PAD, ldp = dmax; /* as BLIS: PACKMR = MR */
                            const inc_t incc = rows ? LD - 1 : 1, ldc = rows ? 1 : LD - 1;
                            float kappa = sc ? -0.75f : 1.0f;
                            const size_t n = (size_t)(ldp * lmax + 5);
                            sentinel(p0, n), sentinel(p1, n);
                            bli_spackm_struc_cxk(BLIS_GENERAL, BLIS_NONUNIT_DIAG, BLIS_DENSE, BLIS_NO_CONJUGATE,
                                                 BLIS_PACKED_COL_PANELS, false, dim, len, dmax, lmax, 0, 0, &kappa, c,
                                                 incc, ldc, p0, ldp, 1, cntx);
                            ours(BLIS_GENERAL, BLIS_NONUNIT_DIAG, BLIS_DENSE, BLIS_NO_CONJUGATE, BLIS_PACKED_COL_PANELS,
                                 false, dim, len, dmax, lmax, 0, 0, &kappa, c, incc, ldc, p1, ldp, 1, cntx, NULL);
                            cases++;
                            CHECK(memcmp(p0, p1, n * sizeof *p0) == 0,
                                  "packing %ld of %ld rows x %ld (of %ld), %s, kappa %g: differs from BLIS's",
                                  (long)dim, (long)dmax, (long)len, (long)lmax, rows ? "rows contiguous" : "columns contiguous",
                                  (double)kappa);
                        }
    printf("%zu panels packed as BLIS packs them\n", cases);
    free(c), free(p0), free(p1);
}

/* row-major C (M × N, ld ldc) = alpha·op(A)·op(B) + beta·C as ops_gemm_serial calls BLIS, once with
 * BLIS's packing and once with ours: the results must be the same bits */
static void product(const packm_blk_var1_params_t *pack, cntx_t *cntx, int ta, int tb, size_t M, size_t N, size_t K,
                    float alpha, float beta) {
    const size_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = N + 7;
    const size_t ra = ta ? K : M, rb = tb ? N : K;
    float *A = malloc(ra * lda * sizeof *A), *B = malloc(rb * ldb * sizeof *B);
    float *C0 = malloc(M * ldc * sizeof *C0), *C1 = malloc(M * ldc * sizeof *C1);
    fill(A, ra * lda, 1), fill(B, rb * ldb, 2), fill(C0, M * ldc, 3);
    memcpy(C1, C0, M * ldc * sizeof *C0);
    float *C[2] = {C0, C1};
    for (int k = 0; k < 2; k++) {
        rntm_t rntm = BLIS_RNTM_INITIALIZER;
        bli_rntm_set_num_threads(1, &rntm);
        ops_blis_sgemm_packed(tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, ta ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
                              (dim_t)N, (dim_t)M, (dim_t)K, &alpha, B, 1, (inc_t)ldb, A, 1, (inc_t)lda, &beta, C[k],
                              1, (inc_t)ldc, cntx, &rntm, k ? pack : NULL);
    }
    CHECK(memcmp(C0, C1, M * ldc * sizeof *C0) == 0,
          "%zux%zux%zu ta=%d tb=%d alpha %g beta %g: our packing changes the product", M, N, K, ta, tb,
          (double)alpha, (double)beta);
    /* the library's own BLIS path (ops_gemm_blis: what ops_gemm_serial runs when the small kernel
     * does not take the product) runs the packing ops_blis_pack chose */
    fill(C0, M * ldc, 3);
    ops_gemm_blis(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C0, ldc);
    if (ops_blis_pack() == pack)
        CHECK(memcmp(C0, C1, M * ldc * sizeof *C0) == 0, "ops_gemm_blis %zux%zux%zu ta=%d tb=%d: not our packing's result",
              M, N, K, ta, tb);
    free(A), free(B), free(C0), free(C1);
}

int main(void) {
    const packm_ker_vft ours = ops_blis_pack_kernel();
    if (!ours) {
        printf("SKIP: no AVX-512 F/VL here (or a portable build): BLIS packs as it would\n");
        return 77;
    }
    printf("threads: %d\n", tfm_get_threads()); /* (also links libgomp ahead of the static BLIS) */
    const char *info = tfm_blas_kernels();
    printf("%s\n", info);
    const int skx = strstr(info, "'skx' kernels") != NULL;
    CHECK(!skx || ops_blis_pack() != NULL, "the products run 'skx' kernels but not our packing: %s", info);
    CHECK(!skx || strstr(info, "packing: the library's") != NULL, "tfm_blas_kernels does not say so: %s", info);
    /* the context the products run (ours or BLIS's), its block sizes deciding the panel widths */
    cntx_t *cntx = ops_blis_cntx() ? ops_blis_cntx() : bli_gks_query_cntx();
    kernels(ours, cntx);
    packm_blk_var1_params_t local;
    memset(&local, 0, sizeof local);
    local.ukr_fn[BLIS_FLOAT][BLIS_FLOAT] = ours;
    const packm_blk_var1_params_t *pack = ops_blis_pack() ? ops_blis_pack() : &local;
    const size_t shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {64, 64, 64}, {130, 300, 257}, {33, 1, 70}, {1, 90, 40},
                                {97, 45, 600}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int beta = 0; beta < 2; beta++) {
                    product(pack, cntx, ta, tb, shapes[s][0], shapes[s][1], shapes[s][2], 1.0f, (float)beta);
                    product(pack, cntx, ta, tb, shapes[s][0], shapes[s][1], shapes[s][2], -0.375f, (float)beta);
                }
    return test_finish("test_blas_pack");
}
