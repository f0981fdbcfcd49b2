/* transformer.c — which kernels a context runs (docs/KERNELS.md, "Choosing kernels").
 *
 * Every context carries its own kernel table, chosen when it is created (tfm_context_create_opts,
 * or tfm_train_config.kernels for a trainer's contexts): the instruction set of the library's own
 * kernels, the route of the matrix products, and the fused or reference attention and layer
 * kernels. Nothing about it is process-wide: two contexts of one model, one on the reference
 * kernels and one tuned, may run side by side in two threads. The library reads no environment
 * variable for it; the tfm tool turns TFM_GEMM, TFM_ATTN and TFM_NO_AVX512 into these options.
 *
 * The reference and tuned kernels compute the same functions; where they sum in another order the
 * results differ in the last bits (docs/KERNELS.md says which are bit-identical). */
#ifndef TFM_KERNELS_H
#define TFM_KERNELS_H

#include "tfm/export.h"
#include "tfm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The widest instruction set the library's own kernels may use. AUTO is what this CPU runs
 * (cpuid, at run time); a narrower choice caps it (an AVX-512 CPU running the AVX2 kernels, to
 * time what an AVX2-only CPU would); a wider one than the CPU has is lowered to the CPU's.
 * BASELINE: none of the library's own AVX kernels runs. BLIS is one per process and keeps its own
 * choice either way: its kernels for the CPU, and the AVX-512 packing routine the library installs
 * into it where BLIS runs its 'skx' kernels (a copy: the same bits; docs/THREADS.md). */
typedef enum { TFM_ISA_AUTO = 0, TFM_ISA_BASELINE = 1, TFM_ISA_AVX2 = 2, TFM_ISA_AVX512 = 3 } tfm_isa;

/** Where the matrix products go. AUTO: the library's register-blocked kernels where they pay
 * (docs/KERNELS.md, "Small products"), BLIS for the rest; BLIS: every product of ops_gemm (training,
 * scoring, batched decoding) through BLIS (the reference path); SMALL: every product the library's
 * kernels can take (they need AVX2 + FMA). Decoding steps of at most 8 rows (128 with AVX-512 and
 * BLIS) run the dot-product kernels of linear_rows_forward whatever the route: BLIS would pack the
 * whole weight for them; their instruction set follows `isa`. */
typedef enum { TFM_GEMM_AUTO = 0, TFM_GEMM_BLIS = 1, TFM_GEMM_SMALL = 2 } tfm_gemm_route;

/** A context's kernel choice. All zeros (tfm_kernel_opts_default) is the tuned set for this CPU. */
typedef struct {
    tfm_isa isa;
    tfm_gemm_route gemm;
    int attention_reference; /* 1: training attention stores its [B, H, T, S] weights (Vaswani et
                                al. 2017, eq. 1, as written); 0: the fused kernel that keeps only each
                                row's log-sum-exp and recomputes the weights in the backward pass */
    int layers_reference;    /* 1: the FFN and residual + LayerNorm as separate reference kernels;
                                0: their fused kernels (bias, activation and dropout in one pass) */
} tfm_kernel_opts;

/** The tuned kernels for this CPU: all zeros. */
TFM_API tfm_kernel_opts tfm_kernel_opts_default(void);

/** The reference kernels: baseline instruction set, every product through BLIS, reference
 * attention and layers — the plainest path, for tests and comparisons. */
TFM_API tfm_kernel_opts tfm_kernel_opts_reference(void);

/** Checks the fields are among their enums' values (0/1 for the two flags). Errors:
 * TFM_ERR_INVALID_ARG naming the field. */
TFM_API tfm_status tfm_kernel_opts_validate(const tfm_kernel_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
