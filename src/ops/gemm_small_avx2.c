/* The AVX2 + FMA kernel of the small products (gemm_small.h; docs/KERNELS.md, "Small products"):
 * the AVX-512 kernel's scheme (gemm_small_avx512.c) with 16 ymm registers. A tile is MR = 6 rows
 * × NR = 16 columns: 12 accumulators, two B vectors and one broadcast — 15 of the 16 registers.
 * Per k, 2 loads of op(B) and 6 broadcasts feed 12 FMAs. AVX2 has no cheap masked load, so a panel
 * of op(B) that is transposed or narrower than 16 columns is copied onto the stack, zero-padded to
 * 16 columns; only C's partial rows use masked loads and stores (vmaskmovps), once per tile.
 *
 * Compiled per function for AVX2 + FMA (target attributes, names ending in _avx2: see
 * scripts/check-portable); gemm_small.c calls it only on a CPU that has both. */
#include "gemm_small.h"

#include "cpu.h"

#if OPS_X86_KERNELS
#include <immintrin.h>
#include <string.h>

#define MR 6  /* rows of a tile */
#define NR 16 /* columns of a panel: two ymm */

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) static inline

/* C[mr, nv · 8] (row stride ldc; lanes where mask0/mask1 are negative) = alpha · Σ_k a[r, k] b[k, :]
 * + beta · C, with a[r, k] = a[r · a_rs + k · a_ks] and b's row k at b + k · ldb (16 readable
 * floats); with bias != NULL, + bias[:] (every row) instead of beta · C. mr and nv are constants
 * at every call. beta = 0 (or a bias) never reads C. */
AVX2_INLINE void tile_avx2(const int mr, const int nv, size_t K, const float *a, size_t a_rs, size_t a_ks,
                           const float *b, size_t ldb, __m256i mask0, __m256i mask1, float alpha, float beta,
                           const float *bias, float *c, size_t ldc) {
    __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) acc0[r] = acc1[r] = _mm256_setzero_ps();
    for (size_t k = 0; k < K; k++) {
        const float *bk = b + k * ldb, *ak = a + k * a_ks;
        const __m256 b0 = _mm256_loadu_ps(bk);
        const __m256 b1 = nv == 2 ? _mm256_loadu_ps(bk + 8) : _mm256_setzero_ps();
#pragma GCC unroll 6
        for (int r = 0; r < mr; r++) {
            const __m256 av = _mm256_broadcast_ss(ak + (size_t)r * a_rs);
            acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
            if (nv == 2) acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
        }
    }
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    if (bias) { /* alpha · sum + bias: the bits of beta = 1 on C = bias (one rounding) */
        const __m256 q0 = _mm256_maskload_ps(bias, mask0), q1 = nv == 2 ? _mm256_maskload_ps(bias + 8, mask1) : q0;
#pragma GCC unroll 6
        for (int r = 0; r < mr; r++) {
            float *cr = c + (size_t)r * ldc;
            _mm256_maskstore_ps(cr, mask0, _mm256_fmadd_ps(acc0[r], va, q0));
            if (nv == 2) _mm256_maskstore_ps(cr + 8, mask1, _mm256_fmadd_ps(acc1[r], va, q1));
        }
        return;
    }
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
        float *cr = c + (size_t)r * ldc;
        /* alpha · sum + beta · C, one rounding for the add (as the AVX-512 kernel: the same bits) */
        if (beta == 0.0f) {
            _mm256_maskstore_ps(cr, mask0, _mm256_mul_ps(acc0[r], va));
            if (nv == 2) _mm256_maskstore_ps(cr + 8, mask1, _mm256_mul_ps(acc1[r], va));
        } else {
            const __m256 c0 = _mm256_mul_ps(vb, _mm256_maskload_ps(cr, mask0));
            _mm256_maskstore_ps(cr, mask0, _mm256_fmadd_ps(acc0[r], va, c0));
            if (nv == 2) {
                const __m256 c1 = _mm256_mul_ps(vb, _mm256_maskload_ps(cr + 8, mask1));
                _mm256_maskstore_ps(cr + 8, mask1, _mm256_fmadd_ps(acc1[r], va, c1));
            }
        }
    }
}

/* One tile of mr = 1 … MR rows: tile_avx2 with constant mr and nv. */
static AVX2 void tile_rows_avx2(int mr, int nv, size_t K, const float *a, size_t a_rs, size_t a_ks,
                                const float *b, size_t ldb, __m256i mask0, __m256i mask1, float alpha, float beta,
                                const float *bias, float *c, size_t ldc) {
    if (nv == 2) {
        switch (mr) {
        case 6: tile_avx2(6, 2, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        case 5: tile_avx2(5, 2, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        case 4: tile_avx2(4, 2, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        case 3: tile_avx2(3, 2, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        case 2: tile_avx2(2, 2, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        default: tile_avx2(1, 2, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        }
    } else {
        switch (mr) {
        case 6: tile_avx2(6, 1, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        case 5: tile_avx2(5, 1, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        case 4: tile_avx2(4, 1, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        case 3: tile_avx2(3, 1, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        case 2: tile_avx2(2, 1, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        default: tile_avx2(1, 1, K, a, a_rs, a_ks, b, ldb, mask0, mask1, alpha, beta, bias, c, ldc); break;
        }
    }
}

/* The 8 × 8 block at src (row stride lds) transposed into dst (row stride ldd): three rounds of
 * shuffles (unpack pairs of rows, then pairs of pairs, then the 128-bit halves), 24 in all. */
static AVX2 void transpose8_avx2(float *dst, size_t ldd, const float *src, size_t lds) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + (size_t)i * lds);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);     /* a0 b0 a1 b1 | a4 b4 a5 b5 */
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]); /* a2 b2 a3 b3 | a6 b6 a7 b7 */
    }
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);     /* a0 b0 c0 d0 | a4 b4 c4 d4 */
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE); /* a1 b1 c1 d1 | a5 ... */
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(dst + (size_t)i * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
        _mm256_storeu_ps(dst + (size_t)(i + 4) * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
    }
}

AVX2 void gemm_small_pack_bt_avx2(float *panel, size_t ldp, const float *B, size_t ldb, size_t nj, size_t K) {
    size_t j = 0;
    for (; j + 8 <= nj; j += 8) {
        size_t k = 0;
        for (; k + 8 <= K; k += 8) transpose8_avx2(panel + k * ldp + j, ldp, B + j * ldb + k, ldb);
        for (; k < K; k++)
            for (size_t jj = j; jj < j + 8; jj++) panel[k * ldp + jj] = B[jj * ldb + k];
    }
    for (; j < nj; j++) /* the last rows of B, fewer than 8 */
        for (size_t k = 0; k < K; k++) panel[k * ldp + j] = B[j * ldb + k];
}

/* Lanes 0 … n − 1 of 8 selected (all bits set), the others not. */
static AVX2 __m256i first_lanes_avx2(size_t n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n < 8 ? n : 8)), lane);
}

AVX2 void gemm_small_avx2(int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
                          size_t lda, const float *B, size_t ldb, float beta, const float *bias, float *C,
                          size_t ldc) {
    if (M == 0 || N == 0) return;
    _Alignas(32) float panel[GEMM_SMALL_KC * NR]; /* op(B)[k0..k0+kc, j0..j0+16], zero-padded */
    const size_t a_rs = trans_a ? 1 : lda, a_ks = trans_a ? lda : 1; /* op(A)[i, k] = A[i·a_rs + k·a_ks] */
    /* K in chunks of GEMM_SMALL_KC, outermost (as the AVX-512 kernel) */
    for (size_t k0 = 0; k0 == 0 || k0 < K; k0 += GEMM_SMALL_KC) {
        const size_t kc = K - k0 < GEMM_SMALL_KC ? K - k0 : GEMM_SMALL_KC;
        const float *a = A + k0 * a_ks;
        const float b = k0 == 0 ? beta : 1.0f;
        const float *q = k0 == 0 ? bias : NULL; /* the bias with the first chunk, as beta */
        for (size_t j0 = 0; j0 < N; j0 += NR) {
            const size_t nj = N - j0 < NR ? N - j0 : NR;
            const __m256i mask0 = first_lanes_avx2(nj), mask1 = first_lanes_avx2(nj > 8 ? nj - 8 : 0);
            const int nv = nj > 8 ? 2 : 1;
            const float *bp = B + k0 * ldb + j0;
            size_t ldbp = ldb;
            if (trans_b || nj < NR) {
                if (nj < NR)
                    for (size_t k = 0; k < kc; k++) memset(panel + k * NR + nj, 0, (NR - nj) * sizeof *panel);
                if (trans_b) /* op(B)[k, j] = B[j · ldb + k] */
                    gemm_small_pack_bt_avx2(panel, NR, B + j0 * ldb + k0, ldb, nj, kc);
                else
                    for (size_t k = 0; k < kc; k++) memcpy(panel + k * NR, bp + k * ldb, nj * sizeof *panel);
                bp = panel, ldbp = NR;
            }
            for (size_t i0 = 0; i0 < M; i0 += MR) {
                const int mr = (int)(M - i0 < MR ? M - i0 : MR);
                tile_rows_avx2(mr, nv, kc, a + i0 * a_rs, a_rs, a_ks, bp, ldbp, mask0, mask1, alpha, b,
                               q ? q + j0 : NULL, C + i0 * ldc + j0, ldc);
            }
        }
    }
}
#else /* no x86: never called (no kernel table has the AVX2 or AVX-512 isa there) */
void gemm_small_pack_bt_avx2(float *panel, size_t ldp, const float *B, size_t ldb, size_t nj, size_t K) {
    (void)panel, (void)ldp, (void)B, (void)ldb, (void)nj, (void)K;
}
void gemm_small_avx2(int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
                     size_t lda, const float *B, size_t ldb, float beta, const float *bias, float *C, size_t ldc) {
    (void)trans_a, (void)trans_b, (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb;
    (void)beta, (void)bias, (void)C, (void)ldc;
}
#endif
