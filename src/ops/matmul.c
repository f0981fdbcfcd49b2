#define _POSIX_C_SOURCE 200809L /* BLIS headers need pthread barriers */
/* Matrix products: nn.Linear's forward and backward, and the tiled, dynamically scheduled GEMM
 * under them (src/ops/parallel.h, docs/THREADS.md). BLIS runs single-threaded inside our own
 * parallel loops, through its expert interface with a per-call thread count, so the library never
 * touches BLIS's global settings. */
#include "blas.h"
#include "gemm_small.h"
#include "ops.h"
#include "parallel.h"
#include "pool.h"
#include "tfm/threads.h"

#include <string.h>

void ops_set_threads(int n) { tfm_set_threads(n); }

int ops_threads(void) { return tfm_get_threads(); }

void ops_gemm_serial(const ops_kernels *kern, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha,
                     const float *A, size_t lda, const float *B, size_t ldb, float beta, float *C,
                     size_t ldc) {
    if (M == 0 || N == 0) return;
    /* small products (attention's tiles and heads): a register-blocked kernel without BLIS's
     * packing and call overhead (gemm_small.h); BLIS with TFM_GEMM=blis */
    const gemm_small_isa small = gemm_small_choice(kern, trans_a, trans_b, M, N, K);
    if (small != GEMM_SMALL_NONE)
        gemm_small(small, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        ops_gemm_blis(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void ops_gemm_blis(int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
                   size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc) {
    if (M == 0 || N == 0) return;
    rntm_t rntm = BLIS_RNTM_INITIALIZER;
    bli_rntm_set_num_threads(1, &rntm);
    /* As BLIS's own CBLAS layer does for row-major data (so the numbers are those of cblas_sgemm):
     * the row-major C (M × N) is the column-major Cᵀ (N × M) = op(B)ᵀ · op(A)ᵀ, each operand read
     * column-major (row stride 1, column stride ld) with its own transpose flag. */
    ops_blis_sgemm(trans_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
                   trans_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, (dim_t)N, (dim_t)M, (dim_t)K, &alpha,
                   (float *)B, 1, (inc_t)ldb, (float *)A, 1, (inc_t)lda, &beta, C, 1, (inc_t)ldc, &rntm);
}

void ops_gemv_serial(int trans, size_t M, size_t N, float alpha, const float *A, size_t lda, const float *x,
                     float beta, float *y) {
    if ((trans ? N : M) == 0) return;
    rntm_t rntm = BLIS_RNTM_INITIALIZER;
    bli_rntm_set_num_threads(1, &rntm);
    /* A row-major M × N matrix is read with row stride lda and column stride 1. */
    bli_sgemv_ex(trans ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, BLIS_NO_CONJUGATE, (dim_t)M, (dim_t)N, &alpha,
                 (float *)A, (inc_t)lda, 1, (float *)x, 1, &beta, y, 1, ops_blis_cntx(), &rntm);
}

/* Rows i0..i0+mi, columns j0..j0+nj of C ← bias[j0..] (each row), for a product with beta = 1. */
static void fill_bias(float *C, size_t ldc, const float *bias, size_t mi, size_t nj) {
    for (size_t i = 0; i < mi; i++) memcpy(C + i * ldc, bias, nj * sizeof *C);
}

/* gemm_tiled's tile sizes, from the sizes and the transpositions alone: start at OPS_GEMM_TILE_M ×
 * OPS_GEMM_TILE_N (OPS_GEMM_TALL_M × OPS_GEMM_TALL_N for an A·Bᵀ with a large B, parallel.h) and
 * halve (N first, down to 64 columns, then M, down to 32 rows) while there are fewer than
 * OPS_GEMM_MIN_TILES tiles and a tile would keep at least OPS_GEMM_MIN_TILE_MACS. */
static void gemm_tile_sizes(int trans_a, int trans_b, size_t M, size_t N, size_t K, size_t *bm_out, size_t *bn_out) {
    size_t bm = OPS_GEMM_TILE_M, bn = OPS_GEMM_TILE_N;
    /* A·Bᵀ only: Aᵀ·Bᵀ (used nowhere) keeps its tiles, and so the kernel chosen for them */
    if (!trans_a && trans_b && N * K >= OPS_GEMM_TALL_MIN_B && K <= OPS_GEMM_TALL_MAX_K)
        bm = OPS_GEMM_TALL_M, bn = OPS_GEMM_TALL_N;
    for (;;) {
        const size_t tiles = ((M + bm - 1) / bm) * ((N + bn - 1) / bn);
        const size_t tile_macs = (bm < M ? bm : M) * (bn < N ? bn : N) * (K > 0 ? K : 1);
        if (tiles >= OPS_GEMM_MIN_TILES || tile_macs < 2 * OPS_GEMM_MIN_TILE_MACS) break;
        if (bn > 64 && bn / 2 < N) bn /= 2;
        else if (bm > 32 && bm / 2 < M) bm /= 2;
        else break;
    }
    *bm_out = bm;
    *bn_out = bn;
}

/* The kernel of every tile of a product of choice_M × N × K (gemm_tiled): gemm_small_choice of
 * its full tile (min(bm, M) × min(bn, N) × K), decided once, so a partial last tile runs the
 * kernel of the full ones and a row's bits do not depend on where it sits. */
static gemm_small_isa gemm_tiled_choice(const ops_kernels *kern, int trans_a, int trans_b, size_t choice_M, size_t N, size_t K) {
    size_t bm, bn;
    gemm_tile_sizes(trans_a, trans_b, choice_M, N, K, &bm, &bn);
    return gemm_small_choice(kern, trans_a, trans_b, bm < choice_M ? bm : choice_M, bn < N ? bn : N, K);
}

static void gemm_with(gemm_small_isa isa, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha,
                      const float *A, size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc) {
    if (isa != GEMM_SMALL_NONE)
        gemm_small(isa, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        ops_gemm_blis(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* One tiled product, as gemm_tiled's chunks see it. */
typedef struct {
    gemm_small_isa isa;
    int trans_a, trans_b;
    size_t M, N, K, bm, bn, tn; /* tn: tiles along N */
    float alpha, beta;
    const float *A, *B, *row_bias;
    size_t lda, ldb, ldc;
    float *C;
    ops_probe *probe;
} gemm_tiles;

/* Tile t of a gemm_tiles. Tiles walk along N first: neighbouring tiles share op(A)'s rows (warm
 * in cache). */
static void gemm_tile(void *arg, size_t t) {
    const gemm_tiles *g = arg;
    const size_t i0 = (t / g->tn) * g->bm, j0 = (t % g->tn) * g->bn;
    const size_t mi = g->M - i0 < g->bm ? g->M - i0 : g->bm, nj = g->N - j0 < g->bn ? g->N - j0 : g->bn;
    const float *a = g->trans_a ? g->A + i0 : g->A + i0 * g->lda; /* op(A) rows i0.. */
    const float *b = g->trans_b ? g->B + j0 * g->ldb : g->B + j0; /* op(B) columns j0.. */
    float *c = g->C + i0 * g->ldc + j0;
    if (g->row_bias && g->isa != GEMM_SMALL_NONE) /* the bias in the kernel's store: no pass over C */
        gemm_small_bias(g->isa, g->trans_a, g->trans_b, mi, nj, g->K, g->alpha, a, g->lda, b, g->ldb, g->row_bias + j0, c,
                        g->ldc);
    else {
        if (g->row_bias) fill_bias(c, g->ldc, g->row_bias + j0, mi, nj);
        gemm_with(g->isa, g->trans_a, g->trans_b, mi, nj, g->K, g->alpha, a, g->lda, b, g->ldb, g->beta, c, g->ldc);
    }
    ops_probe_chunk(g->probe);
}

/* ops_gemm, and with row_bias != NULL (beta ignored) C = row_bias (broadcast over rows) + alpha ·
 * op(A)·op(B): each tile writes its own block of the bias just before its product, so a linear
 * layer is one parallel region, not two (decoding runs thousands of small ones). The kernel
 * (gemm_small or BLIS) is gemm_tiled_choice(choice_M, N, K) for every tile: choice_M = M, or
 * (decoding, linear_forward_rows) the rows the call started with, so that the kernel does not
 * change as rows leave. The tiles are one pool job (pool.h). */
static void gemm_tiled(const ops_kernels *kern, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
                       size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc,
                       const float *row_bias, size_t choice_M) {
    if (M == 0 || N == 0) return;
    if (row_bias) beta = 1.0f;
    const size_t macs = M * N * (K > 0 ? K : 1);
    size_t bm, bn;
    gemm_tile_sizes(trans_a, trans_b, M, N, K, &bm, &bn);
    const gemm_small_isa isa = gemm_tiled_choice(kern, trans_a, trans_b, choice_M > M ? choice_M : M, N, K);
    const size_t tm = (M + bm - 1) / bm, tn = (N + bn - 1) / bn, tiles = tm * tn;
    if (tiles == 1 || macs < 32 * OPS_PAR_MIN_WORK) {
        if (row_bias && isa != GEMM_SMALL_NONE) {
            gemm_small_bias(isa, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, row_bias, C, ldc);
            return;
        }
        if (row_bias) fill_bias(C, ldc, row_bias, M, N);
        gemm_with(isa, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    const int team = ops_team_long(macs);
    ops_probe probe; /* what the region sees, for the busy-machine backoff (parallel.h) */
    ops_probe_begin(&probe, team);
    gemm_tiles g = {isa, trans_a, trans_b, M, N, K, bm, bn, tn, alpha, beta, A, B, row_bias, lda, ldb, ldc, C,
                    &probe};
    probe.got = ops_pool_run(tiles, team, gemm_tile, &g);
    ops_probe_end(&probe, tiles, macs);
}

void ops_gemm(const ops_kernels *kern, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
              size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc) {
    gemm_tiled(kern, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, NULL, M);
}

void linear_forward_rows(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *bias, size_t N,
                         size_t IC, size_t OC, size_t kernel_rows) {
    if (kernel_rows < N) kernel_rows = N;
    /* a few rows (a decoding step): BLIS would pack the whole weight for them (linear_rows.c) */
    if (kernel_rows <= linear_rows_max(kern)) {
        linear_rows_forward(kern, out, inp, weight, bias, N, IC, OC);
        return;
    }
    if (kernel_rows <= linear_panels_max(kern)) {
        linear_panels_forward(kern, out, inp, weight, bias, N, IC, OC);
        return;
    }
    /* out (N, OC) = bias + inp (N, IC) · weight (OC, IC)ᵀ: one region, each tile adds its bias */
    gemm_tiled(kern, 0, 1, N, OC, IC, 1.0f, inp, IC, weight, IC, 0.0f, out, OC, bias, kernel_rows);
}

void linear_forward(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *bias, size_t N,
                    size_t IC, size_t OC) {
    linear_forward_rows(kern, out, inp, weight, bias, N, IC, OC, N);
}

/* linear_backward's bias gradient, dbias[OC] += column sums of dout (N, OC). */
typedef struct {
    float *dbias;
    const float *dout;
    size_t N, OC;
} bias_sums;

/* Columns 64·blk .. 64·blk + 63 of a bias_sums, summed in double over every row in order. */
static void bias_sum_block(void *arg, size_t blk) {
    const bias_sums *b = arg;
    const size_t OC = b->OC, c0 = blk * 64, c1 = c0 + 64 < OC ? c0 + 64 : OC;
    double acc[64] = {0};
    for (size_t n = 0; n < b->N; n++) {
        const float *row = b->dout + n * OC;
        for (size_t c = c0; c < c1; c++) acc[c - c0] += row[c];
    }
    for (size_t c = c0; c < c1; c++) b->dbias[c] += (float)acc[c - c0];
}

void linear_backward(const ops_kernels *kern, float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                     const float *weight, size_t N, size_t IC, size_t OC) {
    if (N == 0 || OC == 0) return;
    if (dinp && IC > 0) /* dinp (N, IC) += dout (N, OC) · weight (OC, IC) */
        ops_gemm(kern, 0, 0, N, IC, OC, 1.0f, dout, OC, weight, IC, 1.0f, dinp, IC);
    if (dweight && IC > 0) /* dweight (OC, IC) += doutᵀ (OC, N) · inp (N, IC) */
        ops_gemm(kern, 1, 0, OC, IC, N, 1.0f, dout, OC, inp, IC, 1.0f, dweight, IC);
    if (dbias) {
        /* Column sums: each chunk owns a block of 64 columns and walks every row, summing in
         * double, so there are no races and the result does not depend on the thread count. */
        bias_sums b = {dbias, dout, N, OC};
        ops_pool_run((OC + 63) / 64, ops_team(N * OC), bias_sum_block, &b);
    }
}
