/* Register-blocked products without packing (docs/KERNELS.md, "Small products"): the per-tile
 * and per-head products of attention (32 × 32 × 64, 128 × 256 × 64, ...) without BLIS's packing
 * of both operands and its fixed cost per call, and the linear layers' 128 × 256 × K tiles (512 ×
 * 64 × K for an A·Bᵀ with a large weight, parallel.h).
 * ops_gemm_serial (matmul.c) sends a product here when gemm_small_choice() names a kernel; BLIS stays
 * the reference path (a kernel table whose gemm is BLIS: kernels.h). Internal to src/ops.
 *
 * The math is ops_gemm_serial's (row-major C[M, N] = alpha · op(A)[M, K] · op(B)[K, N] + beta · C),
 * summed differently from BLIS: every element of C is one chain of fused multiply-adds over k in
 * order within each chunk of GEMM_SMALL_KC values of k, the first chunk giving alpha · s1 + beta · C
 * and each later one adding alpha · s_j. That order does not depend on where the element sits in
 * a register tile, so the AVX-512 and AVX2 kernels give the same bits. */
#ifndef TFM_OPS_GEMM_SMALL_H
#define TFM_OPS_GEMM_SMALL_H

#include "kernels.h"

#include <stddef.h>

/** The instruction sets a kernel exists for, best first. */
typedef enum {
    GEMM_SMALL_NONE = 0, /* no kernel: the product goes to BLIS */
    GEMM_SMALL_AVX2 = 1, /* AVX2 + FMA: 6 rows × 16 columns of accumulators (12 ymm) */
    GEMM_SMALL_AVX512 = 2 /* AVX-512F: 12 rows × 32 columns of accumulators (24 zmm) */
} gemm_small_isa;

/** K is summed in chunks of GEMM_SMALL_KC: op(B)'s panel of GEMM_SMALL_KC × 32 floats (32 KiB)
 * is copied onto the stack when op(B) is transposed (or, AVX2, partial), and for K above it each
 * element of C is alpha · (chunk sum) + beta · C for the first chunk, then alpha · (chunk sum) + C. */
#define GEMM_SMALL_KC 256

/** Up to this M · N · K (multiply-adds) every product runs here: every product of attention's tiles
 * and heads (the fused path's biggest tile, 128 × 256 × 64, is 2M), where BLIS's fixed cost per
 * call decides. Above it (the 128 × 256 × K tiles of the linear layers, ops_gemm)
 * gemm_small_choice looks at the transposition: A·B and A·Bᵀ stay here with either kernel, Aᵀ·B
 * (the weight gradients) only with AVX-512 (docs/KERNELS.md "Small products"). A table
 * with gemm SMALL sends every product here, gemm BLIS none; -DGEMM_SMALL_MAX_MACS=... moves the bound. */
#ifndef GEMM_SMALL_MAX_MACS
#define GEMM_SMALL_MAX_MACS ((size_t)1 << 22)
#endif

/** The small-product kernel a context's table allows (kernels.h): GEMM_SMALL_AVX512 or
 * GEMM_SMALL_AVX2 by its instruction set (the AVX-512 kernel needs AVX2 + FMA too), GEMM_SMALL_NONE
 * for a baseline table or gemm = BLIS (every product to BLIS, the reference path). */
gemm_small_isa gemm_small_active(const ops_kernels *k);

/** The kernel a product of these transpositions and sizes goes to under table k (ops_gemm_serial's
 * dispatch): gemm_small_active(k) when M · N · K ≤ GEMM_SMALL_MAX_MACS or k's gemm is SMALL; above
 * the bound gemm_small_active(k) for A·B and A·Bᵀ, and for Aᵀ·B (trans_a) only when that is
 * GEMM_SMALL_AVX512; else GEMM_SMALL_NONE (BLIS). M, N ≥ 1. */
gemm_small_isa gemm_small_choice(const ops_kernels *k, int trans_a, int trans_b, size_t M, size_t N, size_t K);

/** C[M, N] (leading dimension ldc) = alpha · op(A) · op(B) + beta · C with the kernel of `isa`
 * (not GEMM_SMALL_NONE), arguments as ops_gemm_serial's: op(A) = A (M × K, leading dimension lda)
 * or, with trans_a, Aᵀ (A stored K × M); op(B) = B (K × N) or, with trans_b, Bᵀ (B stored N × K).
 * beta = 0 never reads C (NaN there does not leak). K = 0 gives beta · C. Requires a CPU that has
 * `isa` (the caller checks: gemm_small_choice()); no allocation (a 32 KiB panel and, AVX-512, a
 * 16 KiB band of op(A) on the stack: ~48 KiB),
 * serial, on the calling thread. */
void gemm_small(gemm_small_isa isa, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha,
                const float *A, size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc);

/** ops_gemm_serial's product always through BLIS, single-threaded (matmul.c): the reference path
 * of the small kernels, and the product ops_blas_reserve runs to fill BLIS's pools. */
void ops_gemm_blis(int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
                   size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc);

/** gemm_small with a bias instead of beta: C[M, N] = bias[N] (every row) + alpha · op(A) · op(B),
 * the bias added with the first chunk of K in the same rounding as beta = 1 on a C filled with the
 * bias (so the same bits as that copy and product, without the pass over C). C's prior contents
 * are not read. */
void gemm_small_bias(gemm_small_isa isa, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha,
                     const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C, size_t ldc);

/* The kernels, one file each (compiled per function for their instruction set); gemm_small's
 * contract, with bias = NULL (beta · C) or as gemm_small_bias (beta ignored). */
void gemm_small_avx512(int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
                       size_t lda, const float *B, size_t ldb, float beta, const float *bias, float *C, size_t ldc);
void gemm_small_avx2(int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
                     size_t lda, const float *B, size_t ldb, float beta, const float *bias, float *C, size_t ldc);

/** op(A) read in place at a stride that is a multiple of 4 KiB (lda a multiple of 1024 floats: the
 * FFN's hidden activations and their gradient at d_ff 1024, 2048, ...). Transposed (Aᵀ·B, A
 * stored K × M: the FFN's first weight gradient dW1 = dHᵀ·X), each k is another row in one L1 set
 * and on a page of its own, and a tile's 12 columns reuse their cache lines neither across the
 * panels nor with the next tile: the AVX-512 kernel copies the tile's kc × 12 floats (k-major,
 * rows of 16) once per chunk and runs every panel from that band. Not transposed, a tile's rows
 * all fall in one set of the L1 cache and evict each other at every k (an 8-way cache). The
 * AVX-512 kernel then, for A·B, copies each tile's rows of the chunk to a buffer of GEMM_SMALL_KC +
 * GEMM_SMALL_A_PAD floats per row once per chunk, the tile then running every panel: the same
 * values in the same order, so the same bits. For A·Bᵀ, whose transposed B panel is per panel, it
 * runs tiles of 8 rows instead, which fit the 8 ways and read in place. The AVX2 kernel's 6-row
 * tiles fit the 8 ways and it reads in place. docs/KERNELS.md ("Rows 4 KiB apart", "Strides of
 * 4 KiB, continued") has the measurements. */
#define GEMM_SMALL_A_PAD 16
static inline int gemm_small_a_aliased(size_t lda) { return lda >= 1024 && lda % 1024 == 0; } /* either transposition */

/** Rows of op(B) read in place (B stored K × N, not transposed) a multiple of 4 KiB apart: the
 * weight gradient of the FFN's second layer, dW2 = dYᵀ·H, reads the hidden activations H (d_ff
 * 1024, 2048) so, as Aᵀ·B. Every row of the panel then falls in one L1 set and the 32 KiB panel
 * cannot stay in L1 across the tiles that reuse it; each row is also on a page of its own (no
 * prefetch across pages). For Aᵀ·B the AVX-512 kernel then copies the panel (kc rows of ≤ 32
 * floats, two vector loads and stores each) onto its stack panel once per panel and chunk, as it
 * does for a transposed B (unless op(A) is aliased too: that path runs each tile over every panel
 * and reads B in place): the same values, the same bits. A·B reads B in place whatever its stride
 * (docs/KERNELS.md, "Strides of 4 KiB, continued", has the measurements for both). */
static inline int gemm_small_b_aliased(int trans_b, size_t ldb) { return !trans_b && ldb >= 1024 && ldb % 1024 == 0; }

/** band[r · (GEMM_SMALL_KC + GEMM_SMALL_A_PAD) + k] = a[r · lda + k] for r < mr, k < kc (≤ GEMM_SMALL_KC):
 * a tile's rows of op(A) copied out of an aliased stride (gemm_small_a_aliased). */
void gemm_small_copy_rows(float *band, const float *a, size_t lda, int mr, size_t kc);

/** panel[k · ldp + j] = B[j · ldb + k] for j < nj, k < K: op(B)'s panel when B is stored N × K,
 * by 8 × 8 AVX2 transposes (the kernels' packing of a transposed B; columns nj … of the panel are
 * not written). Needs AVX2: both kernels call it (every AVX-512F CPU has AVX2). */
void gemm_small_pack_bt_avx2(float *panel, size_t ldp, const float *B, size_t ldb, size_t nj, size_t K);

#endif
