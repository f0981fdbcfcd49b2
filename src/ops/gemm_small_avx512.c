/* The AVX-512 kernel of the small products (gemm_small.h; docs/KERNELS.md, "Small products").
 *
 * C is cut into panels of NR = 32 columns and, inside a panel, tiles of MR = 12 rows. A tile keeps
 * its 12 × 32 sums in 24 zmm registers for the whole K loop: per k it loads one row of the panel of
 * op(B) (two zmm) and broadcasts one element of op(A) per row, and does 24 FMAs — each loaded B
 * vector serves 12 FMAs, each broadcast A element 2 (the outer-product form of Goto & van de
 * Geijn 2008, §4, without their packing). op(A) is read in place whatever its transpose (a
 * broadcast reads one element at any stride), except at a stride that is a multiple of 4 KiB
 * (gemm_small_a_aliased), where a tile of A·B or Aᵀ·B first copies its part of op(A) for the chunk
 * to a band and A·Bᵀ reads it in tiles of 8 rows; op(B) in place when it is stored K × N
 * (unless, in Aᵀ·B, its rows are 4 KiB apart: then its panel is copied as it is,
 * gemm_small_b_aliased), else its
 * K × 32 panel is first copied, transposed, onto the stack (K in chunks of GEMM_SMALL_KC = 256,
 * so the panel is at most 32 KiB and stays in L1, reused by every tile of the panel; the copy is
 * the AVX2 file's 8 × 8 transposes: every CPU with AVX-512F has AVX2). Partial panels and the
 * last rows use masked loads and stores and a tile of fewer rows: no scalar edge code.
 *
 * Every function here is compiled for AVX-512F alone (its target attribute; the file has no
 * special flags), and its name ends in _avx512, which scripts/check-portable accepts in the
 * portable build: gemm_small.c calls it only on a CPU that has the instructions. */
#include "gemm_small.h"

#include "cpu.h"

#if OPS_X86_KERNELS
#include <immintrin.h>

#define MR 12 /* rows of a tile: 24 accumulators + 2 B vectors + 1 broadcast of the 32 zmm */
#define NR 32 /* columns of a panel: two zmm */
#define ALIASED_MR 8 /* rows of a tile of A·Bᵀ whose op(A) rows are 4 KiB apart (gemm_small.h) */

#define AVX512 __attribute__((target("avx512f")))
#define AVX512_INLINE __attribute__((target("avx512f"), always_inline)) static inline

/* C[mr, nv · 16 masked by m0, m1] (row stride ldc) = alpha · Σ_k a[r, k] b[k, :] + beta · C, where
 * a[r, k] = a[r · a_rs + k · a_ks] and b's row k is b + k · ldb; with bias != NULL, + bias[:]
 * (every row) instead of beta · C. mr and nv are constants at every call (the switch below), so
 * the accumulators live in registers. beta = 0 (or a bias) never reads C. */
AVX512_INLINE void tile_avx512(const int mr, const int nv, size_t K, const float *a, size_t a_rs, size_t a_ks,
                               const float *b, size_t ldb, __mmask16 m0, __mmask16 m1, float alpha, float beta,
                               const float *bias, float *c, size_t ldc) {
    __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) acc0[r] = acc1[r] = _mm512_setzero_ps();
    for (size_t k = 0; k < K; k++) {
        const float *bk = b + k * ldb, *ak = a + k * a_ks;
        const __m512 b0 = _mm512_maskz_loadu_ps(m0, bk);
        const __m512 b1 = nv == 2 ? _mm512_maskz_loadu_ps(m1, bk + 16) : _mm512_setzero_ps();
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            const __m512 av = _mm512_set1_ps(ak[(size_t)r * a_rs]);
            acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
            if (nv == 2) acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
        }
    }
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    if (bias) { /* alpha · sum + bias: the bits of beta = 1 on C = bias (one rounding) */
        const __m512 q0 = _mm512_maskz_loadu_ps(m0, bias), q1 = nv == 2 ? _mm512_maskz_loadu_ps(m1, bias + 16) : q0;
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            float *cr = c + (size_t)r * ldc;
            _mm512_mask_storeu_ps(cr, m0, _mm512_fmadd_ps(acc0[r], va, q0));
            if (nv == 2) _mm512_mask_storeu_ps(cr + 16, m1, _mm512_fmadd_ps(acc1[r], va, q1));
        }
        return;
    }
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        float *cr = c + (size_t)r * ldc;
        /* alpha · sum + beta · C, one rounding for the add (as the AVX2 kernel: the same bits) */
        if (beta == 0.0f) {
            _mm512_mask_storeu_ps(cr, m0, _mm512_mul_ps(acc0[r], va));
            if (nv == 2) _mm512_mask_storeu_ps(cr + 16, m1, _mm512_mul_ps(acc1[r], va));
        } else {
            const __m512 c0 = _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m0, cr));
            _mm512_mask_storeu_ps(cr, m0, _mm512_fmadd_ps(acc0[r], va, c0));
            if (nv == 2) {
                const __m512 c1 = _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m1, cr + 16));
                _mm512_mask_storeu_ps(cr + 16, m1, _mm512_fmadd_ps(acc1[r], va, c1));
            }
        }
    }
}

/* One tile of mr = 1 … MR rows: tile_avx512 with constant mr and nv. */
static AVX512 void tile_rows_avx512(int mr, int nv, size_t K, const float *a, size_t a_rs, size_t a_ks,
                                    const float *b, size_t ldb, __mmask16 m0, __mmask16 m1, float alpha,
                                    float beta, const float *bias, float *c, size_t ldc) {
    if (nv == 2) {
        switch (mr) {
        case 12: tile_avx512(12, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 11: tile_avx512(11, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 10: tile_avx512(10, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 9: tile_avx512(9, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 8: tile_avx512(8, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 7: tile_avx512(7, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 6: tile_avx512(6, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 5: tile_avx512(5, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 4: tile_avx512(4, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 3: tile_avx512(3, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 2: tile_avx512(2, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        default: tile_avx512(1, 2, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        }
    } else {
        switch (mr) {
        case 12: tile_avx512(12, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 11: tile_avx512(11, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 10: tile_avx512(10, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 9: tile_avx512(9, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 8: tile_avx512(8, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 7: tile_avx512(7, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 6: tile_avx512(6, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 5: tile_avx512(5, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 4: tile_avx512(4, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 3: tile_avx512(3, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        case 2: tile_avx512(2, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        default: tile_avx512(1, 1, K, a, a_rs, a_ks, b, ldb, m0, m1, alpha, beta, bias, c, ldc); break;
        }
    }
}

/* The first n bits set (n ≤ 16). */
static inline __mmask16 first_bits(size_t n) { return (__mmask16)(n >= 16 ? 0xFFFFu : (1u << n) - 1u); }

AVX512 void gemm_small_avx512(int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
                              size_t lda, const float *B, size_t ldb, float beta, const float *bias, float *C,
                              size_t ldc) {
    if (M == 0 || N == 0) return;
    _Alignas(64) float panel[GEMM_SMALL_KC * NR]; /* op(B)[k0..k0+kc, j0..j0+32] when B is transposed */
    /* a tile's op(A) for a chunk, when aliased: MR rows of GEMM_SMALL_KC + GEMM_SMALL_A_PAD floats,
     * or (transposed) GEMM_SMALL_KC rows of 16 */
    _Alignas(64) float band[GEMM_SMALL_KC * 16];
    _Static_assert(MR * (GEMM_SMALL_KC + GEMM_SMALL_A_PAD) <= GEMM_SMALL_KC * 16, "the band holds a tile's rows");
    _Static_assert(MR <= 16, "a transposed band row (16 floats) holds a tile's columns");
    const size_t a_rs = trans_a ? 1 : lda, a_ks = trans_a ? lda : 1; /* op(A)[i, k] = A[i·a_rs + k·a_ks] */
    const int aliased = K > 0 && gemm_small_a_aliased(lda); /* K = 0: nothing to copy (A may be NULL) */
    /* Aᵀ·B only: for A·B the copy does not pay (docs/KERNELS.md, "Strides of 4 KiB, continued") */
    const int b_aliased = K > 0 && trans_a && gemm_small_b_aliased(trans_b, ldb);
    /* K in chunks of GEMM_SMALL_KC, outermost: a chunk of op(A) (M × 256) stays in L2 for every
     * panel; the first chunk applies beta, the next ones add (beta = 1) */
    for (size_t k0 = 0; k0 == 0 || k0 < K; k0 += GEMM_SMALL_KC) {
        const size_t kc = K - k0 < GEMM_SMALL_KC ? K - k0 : GEMM_SMALL_KC;
        const float *a = A + k0 * a_ks;
        const float b = k0 == 0 ? beta : 1.0f;
        const float *q = k0 == 0 ? bias : NULL; /* the bias with the first chunk, as beta */
        if (aliased && !trans_b) { /* each tile's op(A) copied once per chunk, then every panel */
            for (size_t i0 = 0; i0 < M; i0 += MR) {
                const int mr = (int)(M - i0 < MR ? M - i0 : MR);
                size_t band_rs = GEMM_SMALL_KC + GEMM_SMALL_A_PAD, band_ks = 1;
                if (trans_a) { /* op(A)[r, k] = a[k · lda + r]: kc rows of 16 floats, mr used */
                    const __mmask16 mm = first_bits((size_t)mr);
                    for (size_t k = 0; k < kc; k++)
                        _mm512_store_ps(band + k * 16, _mm512_maskz_loadu_ps(mm, a + i0 + k * lda));
                    band_rs = 1, band_ks = 16;
                } else {
                    gemm_small_copy_rows(band, a + i0 * a_rs, a_rs, mr, kc);
                }
                for (size_t j0 = 0; j0 < N; j0 += NR) {
                    const size_t nj = N - j0 < NR ? N - j0 : NR;
                    tile_rows_avx512(mr, nj > 16 ? 2 : 1, kc, band, band_rs, band_ks, B + k0 * ldb + j0, ldb,
                                     first_bits(nj), first_bits(nj > 16 ? nj - 16 : 0), alpha, b, q ? q + j0 : NULL,
                                     C + i0 * ldc + j0, ldc);
                }
            }
            continue;
        }
        for (size_t j0 = 0; j0 < N; j0 += NR) {
            const size_t nj = N - j0 < NR ? N - j0 : NR;
            const __mmask16 m0 = first_bits(nj), m1 = first_bits(nj > 16 ? nj - 16 : 0);
            const int nv = nj > 16 ? 2 : 1;
            const float *bp = B + k0 * ldb + j0;
            size_t ldbp = ldb;
            if (trans_b) { /* op(B)[k, j] = B[j · ldb + k], transposed 8 × 8 blocks at a time */
                gemm_small_pack_bt_avx2(panel, NR, B + j0 * ldb + k0, ldb, nj, kc);
                bp = panel, ldbp = NR;
            } else if (b_aliased) { /* rows 4 KiB apart: the panel copied contiguous first */
                for (size_t k = 0; k < kc; k++) { /* two vectors a row, no memcpy call per row */
                    _mm512_store_ps(panel + k * NR, _mm512_maskz_loadu_ps(m0, bp + k * ldb));
                    _mm512_store_ps(panel + k * NR + 16, _mm512_maskz_loadu_ps(m1, bp + k * ldb + 16));
                }
                bp = panel, ldbp = NR;
            }
            /* rows of op(A) 4 KiB apart (here B is transposed: the other case took the path above):
             * tiles of ALIASED_MR rows, whose rows fit the ways of their L1 set, read in place (Aᵀ·Bᵀ,
             * used nowhere, keeps its 12 rows) */
            const size_t mr_max = aliased && !trans_a ? ALIASED_MR : MR;
            for (size_t i0 = 0; i0 < M; i0 += mr_max) {
                const int mr = (int)(M - i0 < mr_max ? M - i0 : mr_max);
                tile_rows_avx512(mr, nv, kc, a + i0 * a_rs, a_rs, a_ks, bp, ldbp, m0, m1, alpha, b, q ? q + j0 : NULL,
                                 C + i0 * ldc + j0, ldc);
            }
        }
    }
}
#else /* no x86: never called (no kernel table has the AVX2 or AVX-512 isa there) */
void gemm_small_avx512(int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
                       size_t lda, const float *B, size_t ldb, float beta, const float *bias, float *C, size_t ldc) {
    (void)trans_a, (void)trans_b, (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb;
    (void)beta, (void)bias, (void)C, (void)ldc;
}
#endif
