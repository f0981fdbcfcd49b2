/* Which BLIS kernels the library's matrix products run (blas.c). Internal to src/ops. */
#ifndef TFM_OPS_BLAS_H
#define TFM_OPS_BLAS_H

#include <blis.h>

/** The BLIS context (kernels and block sizes) every product of src/ops passes to BLIS's expert
 * interface: NULL when BLIS's own choice for this CPU stands, else the library's own context for
 * kernels the CPU runs (docs/THREADS.md, "Which BLIS kernels"). Chosen once per process, on the
 * first call, thread-safely; read-only afterwards. Never changes BLIS's global state. */
cntx_t *ops_blis_cntx(void);

/** The packing routine every product attaches to its operands (blas_pack.c): the library's own
 * when the products run BLIS's 'skx' kernels (whoever chose them) and the CPU has AVX-512 F/VL,
 * else NULL (BLIS packs as it would). Chosen with ops_blis_cntx; read-only afterwards. */
const packm_blk_var1_params_t *ops_blis_pack(void);

/** The library's AVX-512 packm routine (packm_ker_vft: BLIS's bli_spackm_struc_cxk's arguments and
 * result, for float), or NULL when the CPU lacks AVX-512 F/VL or the build is not x86-64 GCC/Clang. */
packm_ker_vft ops_blis_pack_kernel(void);

/** bli_sgemm_ex (same arguments: C = alpha·op(A)·op(B) + beta·C, m × n × k, strided operands) with
 * `pack` (may be NULL: BLIS's packing) attached to A and B as their packing routine. */
void ops_blis_sgemm_packed(trans_t transa, trans_t transb, dim_t m, dim_t n, dim_t k, float *alpha, float *a,
                           inc_t rs_a, inc_t cs_a, float *b, inc_t rs_b, inc_t cs_b, float *beta, float *c,
                           inc_t rs_c, inc_t cs_c, cntx_t *cntx, rntm_t *rntm, const packm_blk_var1_params_t *pack);

/** bli_sgemm_ex with the library's context (ops_blis_cntx) and packing (ops_blis_pack). */
void ops_blis_sgemm(trans_t transa, trans_t transb, dim_t m, dim_t n, dim_t k, float *alpha, float *a, inc_t rs_a,
                    inc_t cs_a, float *b, inc_t rs_b, inc_t cs_b, float *beta, float *c, inc_t rs_c, inc_t cs_c,
                    rntm_t *rntm);

#endif
