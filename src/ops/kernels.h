/* The kernel table: which of the library's kernels one context runs (include/tfm/kernels.h,
 * docs/KERNELS.md "Choosing kernels"). Every kernel with more than one implementation asks the
 * table it is given, never a process-wide switch:
 *   isa            the library's own SIMD kernels: gemm_small_avx512 / _avx2 (products),
 *                  linear_rows_cols_avx512 (decoding's few-row products), attention_decode's
 *                  AVX-512 row kernels, the AVX2 weight transpose; capped at what the CPU runs;
 *   gemm           ops_gemm / ops_gemm_serial / linear_*: the small kernels where they pay, BLIS
 *                  for everything, or the small kernels for everything;
 *   attn_fused     training attention: attn_fused_forward/_backward, or attn_forward/_backward
 *                  with the weights stored (src/model decides per site: attn_use_fused);
 *   fused_layers   the FFN and residual + LayerNorm: ffn_*_fused and
 *                  residual_dropout_layernorm_forward, or the unfused reference kernels.
 * A table is resolved once, when its context is created (ops_kernels_resolve), and read-only after. */
#ifndef TFM_OPS_KERNELS_H
#define TFM_OPS_KERNELS_H

#include "tfm/kernels.h"

#include <stddef.h>

typedef enum { OPS_ISA_BASELINE = 0, OPS_ISA_AVX2 = 1, OPS_ISA_AVX512 = 2 } ops_isa;
typedef enum { OPS_GEMM_AUTO = 0, OPS_GEMM_BLIS = 1, OPS_GEMM_SMALL = 2 } ops_gemm_route;

typedef struct ops_kernels {
    ops_isa isa;          /* never above what this CPU runs (AVX2 means AVX2 + FMA) */
    ops_gemm_route gemm;
    int attn_fused;       /* 1: fused training attention where it applies */
    int fused_layers;     /* 1: fused FFN and residual + LayerNorm */
} ops_kernels;

/** The table for `opts` on this CPU: the requested instruction set lowered to the CPU's. opts must
 * be valid (tfm_kernel_opts_validate). */
ops_kernels ops_kernels_resolve(const tfm_kernel_opts *opts);

/** The tuned table for this CPU (tfm_kernel_opts_default resolved), and the reference one; static,
 * valid for the life of the process. For tests, benchmarks and the layouts that size memory for
 * the default kernels. */
const ops_kernels *ops_kernels_tuned(void);
const ops_kernels *ops_kernels_reference(void);

/** One line for logs, e.g. "isa avx512, gemm auto, attention fused, layers fused"; returns buf. */
const char *ops_kernels_describe(const ops_kernels *k, char *buf, size_t n);

#endif
