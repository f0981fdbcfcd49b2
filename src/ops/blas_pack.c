#define _POSIX_C_SOURCE 200809L /* BLIS headers need pthread barriers */
/* The library's own packing of BLIS's micro-panels (docs/THREADS.md, "Which BLIS kernels").
 *
 * Before its micro-kernel runs, BLIS copies (packs) op(A) into column micro-panels of MR rows and
 * op(B) into micro-panels of NR columns (Van Zee & van de Geijn, "BLIS: A Framework for Rapidly
 * Instantiating BLAS Functionality", ACM TOMS 41(3), 2015, section 2). Debian's BLIS 0.9.0 'skx'
 * configuration (micro-kernel 32 × 12) packs both through portable C: its 12-column panels through
 * the reference 12xk kernel and its 32-row panels through bli_scal2m, one vector at a time,
 * because BLIS's table of packing kernels has ids 0 .. 31 only, so no 32xk kernel can be
 * registered in a context. A quarter of a training step went there. BLIS 0.9.0 instead lets an
 * operand carry its own packing routine (packm_blk_var1_params_t, read by bli_packm_blk_var1 for
 * every micro-panel); ops_blis_sgemm attaches ours to both operands, which covers both panel
 * widths. Packing is a copy scaled by kappa (alpha, for one operand): ours writes exactly the
 * numbers BLIS's would, so products are bit-identical (tests/unit/ops/test_blas_pack.c). */
#include "blas.h"

#include <stdint.h>
#include <string.h>

/* Built only where our own code may hold AVX instructions (TFM_NATIVE builds; the portable build
 * holds none, scripts/check-portable, and keeps BLIS's packing); chosen at run time by the CPU. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__AVX__)
#include <immintrin.h>
#define PACK_X86 1
#endif

/* How far ahead the loops prefetch C, in floats along a row (a column loop: PACK_AHEAD / 8 columns).
 * Prefetches never fault, so reaching past the matrix is harmless. */
#define PACK_AHEAD 64
#define PACK_DIM_MAX 64 /* widest micro-panel the fast kernel takes (skx: 32 and 12) */

#ifdef PACK_X86
/* 8 rows (r[0..7], 8 floats each) → 8 columns, in place (Intel optimisation manual's 8 × 8
 * transpose: unpack, shuffle, 128-bit permute). */
__attribute__((target("avx2"), always_inline)) static inline void transpose8(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20), r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20), r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31), r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31), r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* Stores the first `lanes` (≤ 8) floats of v at p: unmasked 8- and 4-wide stores where they fit
 * (masked stores are slower on some CPUs), masked otherwise. */
__attribute__((target("avx512f,avx512vl,avx2"), always_inline)) static inline void store8(float *p, __m256 v,
                                                                                         dim_t lanes) {
    if (lanes == 8)
        _mm256_storeu_ps(p, v);
    else if (lanes == 4)
        _mm_storeu_ps(p, _mm256_castps256_ps128(v));
    else
        _mm256_mask_storeu_ps(p, (__mmask8)((1u << lanes) - 1u), v);
}

/* P[i + k·ldp] = kappa·C[i·incc + k] (scale 0: a plain copy), i < dim, k < len8 (a multiple of 8),
 * rows dim .. dim_max − 1 zero: the panel's rows are contiguous in C (ldc = 1), so it is a
 * transposition, in blocks of 8 rows × 8 columns. */
__attribute__((target("avx512f,avx512vl,avx2"))) static void pack_rows(dim_t dim, dim_t dim_max, dim_t len8,
                                                                       int scale, float kappa, const float *c,
                                                                       inc_t incc, float *p, inc_t ldp) {
    const __m256 vk = _mm256_set1_ps(kappa);
    for (dim_t i0 = 0; i0 < dim_max; i0 += 8) {
        const dim_t rows = dim - i0 < 8 ? (dim - i0 > 0 ? dim - i0 : 0) : 8;   /* rows read from C */
        const dim_t lanes = dim_max - i0 < 8 ? dim_max - i0 : 8;              /* rows written to P */
        const float *ci = c + i0 * incc;
        float *pi = p + i0;
        for (dim_t k = 0; k < len8; k += 8) {
            __m256 r[8];
            if (rows == 8) {
                for (int i = 0; i < 8; i++) {
                    r[i] = _mm256_loadu_ps(ci + i * incc + k);
                    _mm_prefetch((const char *)(ci + i * incc + k + PACK_AHEAD), _MM_HINT_T0);
                }
                if (scale)
                    for (int i = 0; i < 8; i++) r[i] = _mm256_mul_ps(r[i], vk);
            } else {
                for (dim_t i = 0; i < 8; i++) {
                    r[i] = _mm256_setzero_ps();
                    if (i < rows) r[i] = scale ? _mm256_mul_ps(_mm256_loadu_ps(ci + i * incc + k), vk)
                                               : _mm256_loadu_ps(ci + i * incc + k);
                }
            }
            transpose8(r);
            for (dim_t j = 0; j < 8; j++) store8(pi + (k + j) * ldp, r[j], lanes);
        }
    }
}

/* P[i + k·ldp] = kappa·C[i + k·ldc] (scale 0: a plain copy), i < dim, k < len, for a full panel
 * (dim = panel_dim_max) whose columns are contiguous in C: unmasked 16-, 8- and 4-wide copies, a
 * masked one only for a remainder of 1 .. 3 rows. */
__attribute__((target("avx512f,avx512vl,avx2"))) static void pack_cols_full(dim_t dim, dim_t len, int scale,
                                                                            float kappa, const float *c, inc_t ldc,
                                                                            float *p, inc_t ldp) {
    const __m512 vk = _mm512_set1_ps(kappa);
    const dim_t d16 = dim & ~(dim_t)15, d8 = dim & 8 ? d16 + 8 : d16, d4 = dim & 4 ? d8 + 4 : d8;
    const __mmask16 tail = (__mmask16)((1u << (dim - d4)) - 1u);
    for (dim_t k = 0; k < len; k++) {
        const float *ck = c + k * ldc;
        float *pk = p + k * ldp;
        for (dim_t i = 0; i < dim; i += 16) /* the column PACK_AHEAD / 8 columns on */
            _mm_prefetch((const char *)(ck + (PACK_AHEAD / 8) * ldc + i), _MM_HINT_T0);
        for (dim_t i = 0; i < d16; i += 16) {
            __m512 v = _mm512_loadu_ps(ck + i);
            if (scale) v = _mm512_mul_ps(v, vk);
            _mm512_storeu_ps(pk + i, v);
        }
        if (d8 > d16) {
            __m256 v = _mm256_loadu_ps(ck + d16);
            if (scale) v = _mm256_mul_ps(v, _mm512_castps512_ps256(vk));
            _mm256_storeu_ps(pk + d16, v);
        }
        if (d4 > d8) {
            __m128 v = _mm_loadu_ps(ck + d8);
            if (scale) v = _mm_mul_ps(v, _mm512_castps512_ps128(vk));
            _mm_storeu_ps(pk + d8, v);
        }
        if (tail) {
            __m512 v = _mm512_maskz_loadu_ps(tail, ck + d4);
            if (scale) v = _mm512_maskz_mul_ps(tail, v, vk);
            _mm512_mask_storeu_ps(pk + d4, tail, v);
        }
    }
}

/* The packm routine BLIS calls for each micro-panel (packm_ker_vft; the arguments as
 * bli_spackm_struc_cxk's): P (column-major, leading dimension ldp) gets the panel_dim × panel_len
 * block of C (element (i, k) at c[i·incc + k·ldc]) times kappa, then zeros: rows panel_dim ..
 * panel_dim_max − 1 of the first panel_len columns, and columns panel_len .. panel_len_max − 1 of
 * the first panel_dim_max rows (what BLIS's reference packing writes; rows panel_dim_max .. ldp − 1
 * are left alone, as there). Fast for a dense real panel with incc = 1 or ldc = 1, kappa ≠ 0 and
 * panel_dim_max ≤ PACK_DIM_MAX; any other panel goes to BLIS's own bli_spackm_struc_cxk. */
__attribute__((target("avx512f,avx512vl,avx2"))) static void pack_avx512(
    struc_t strucc, diag_t diagc, uplo_t uploc, conj_t conjc, pack_t schema, bool invdiag, dim_t panel_dim,
    dim_t panel_len, dim_t panel_dim_max, dim_t panel_len_max, dim_t panel_dim_off, dim_t panel_len_off,
    void *restrict kappa_v, void *restrict c_v, inc_t incc, inc_t ldc, void *restrict p_v, inc_t ldp, inc_t is_p,
    cntx_t *cntx, void *params) {
    float *c = c_v, *p = p_v;
    const float kappa = *(const float *)kappa_v;
    if (!bli_is_general(strucc) || kappa == 0.0f || panel_dim_max > PACK_DIM_MAX || panel_dim > panel_dim_max ||
        panel_len > panel_len_max || (incc != 1 && ldc != 1)) {
        bli_spackm_struc_cxk(strucc, diagc, uploc, conjc, schema, invdiag, panel_dim, panel_len, panel_dim_max,
                             panel_len_max, panel_dim_off, panel_len_off, kappa_v, c_v, incc, ldc, p_v, ldp, is_p,
                             cntx);
        (void)params;
        return;
    }
    const int scale = kappa != 1.0f;
    const __m512 vk = _mm512_set1_ps(kappa);
    if (incc == 1 && panel_dim == panel_dim_max) { /* columns contiguous in C, a full panel */
        pack_cols_full(panel_dim, panel_len, scale, kappa, c, ldc, p, ldp);
    } else if (incc == 1) { /* columns contiguous in C, an edge panel: masked copies */
        for (dim_t k = 0; k < panel_len; k++) {
            const float *ck = c + k * ldc;
            float *pk = p + k * ldp;
            for (dim_t i0 = 0; i0 < panel_dim_max; i0 += 16) {
                const dim_t rows = panel_dim - i0 < 16 ? (panel_dim - i0 > 0 ? panel_dim - i0 : 0) : 16;
                const dim_t lanes = panel_dim_max - i0 < 16 ? panel_dim_max - i0 : 16;
                const __mmask16 load = (__mmask16)((1u << rows) - 1u), store = (__mmask16)((1u << lanes) - 1u);
                __m512 v = _mm512_maskz_loadu_ps(load, ck + i0);
                if (scale) v = _mm512_maskz_mul_ps(load, v, vk); /* +0 in the edge rows, never kappa·0 */
                _mm512_mask_storeu_ps(pk + i0, store, v);
            }
        }
    } else { /* rows of the panel contiguous in C (ldc = 1): transposed in 8 × 8 blocks */
        const dim_t len8 = panel_len & ~(dim_t)7;
        pack_rows(panel_dim, panel_dim_max, len8, scale, kappa, c, incc, p, ldp);
        for (dim_t k = len8; k < panel_len; k++)
            for (dim_t i = 0; i < panel_dim_max; i++)
                p[k * ldp + i] = i < panel_dim ? (scale ? kappa * c[i * incc + k] : c[i * incc + k]) : 0.0f;
    }
    for (dim_t k = panel_len; k < panel_len_max; k++) memset(p + k * ldp, 0, (size_t)panel_dim_max * sizeof *p);
}
#endif

packm_ker_vft ops_blis_pack_kernel(void) {
#ifdef PACK_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return pack_avx512;
#endif
    return NULL;
}

void ops_blis_sgemm_packed(trans_t transa, trans_t transb, dim_t m, dim_t n, dim_t k, float *alpha, float *a,
                           inc_t rs_a, inc_t cs_a, float *b, inc_t rs_b, inc_t cs_b, float *beta, float *c,
                           inc_t rs_c, inc_t cs_c, cntx_t *cntx, rntm_t *rntm, const packm_blk_var1_params_t *pack) {
    if (!pack) {
        bli_sgemm_ex(transa, transb, m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, c, rs_c, cs_c, cntx, rntm);
        return;
    }
    /* what bli_sgemm_ex does (objects over the caller's arrays), plus the packing routine on A and B */
    obj_t alphao = BLIS_OBJECT_INITIALIZER_1X1, betao = BLIS_OBJECT_INITIALIZER_1X1;
    obj_t ao = BLIS_OBJECT_INITIALIZER, bo = BLIS_OBJECT_INITIALIZER, co = BLIS_OBJECT_INITIALIZER;
    bli_obj_init_finish_1x1(BLIS_FLOAT, alpha, &alphao);
    bli_obj_init_finish_1x1(BLIS_FLOAT, beta, &betao);
    bli_obj_init_finish(BLIS_FLOAT, transa == BLIS_NO_TRANSPOSE ? m : k, transa == BLIS_NO_TRANSPOSE ? k : m, a,
                        rs_a, cs_a, &ao);
    bli_obj_init_finish(BLIS_FLOAT, transb == BLIS_NO_TRANSPOSE ? k : n, transb == BLIS_NO_TRANSPOSE ? n : k, b,
                        rs_b, cs_b, &bo);
    bli_obj_init_finish(BLIS_FLOAT, m, n, c, rs_c, cs_c, &co);
    bli_obj_set_conjtrans(transa, &ao);
    bli_obj_set_conjtrans(transb, &bo);
    bli_obj_set_pack_params((void *)pack, &ao);
    bli_obj_set_pack_params((void *)pack, &bo);
    bli_gemm_ex(&alphao, &ao, &bo, &betao, &co, cntx, rntm);
}
