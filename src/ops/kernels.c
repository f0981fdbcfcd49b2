#define _POSIX_C_SOURCE 200809L /* pthread_once */
/* The kernel table (kernels.h): the public options resolved against this CPU. */
#include "kernels.h"

#include "core_internal.h"
#include "cpu.h"

#include <pthread.h>
#include <stdio.h>

tfm_kernel_opts tfm_kernel_opts_default(void) { return (tfm_kernel_opts){0}; }

tfm_kernel_opts tfm_kernel_opts_reference(void) {
    return (tfm_kernel_opts){.isa = TFM_ISA_BASELINE, .gemm = TFM_GEMM_BLIS, .attention_reference = 1,
                             .layers_reference = 1};
}

tfm_status tfm_kernel_opts_validate(const tfm_kernel_opts *o) {
    RETURN_IF(!o, TFM_ERR_INVALID_ARG, "kernel options: NULL");
    RETURN_IF(o->isa < TFM_ISA_AUTO || o->isa > TFM_ISA_AVX512, TFM_ERR_INVALID_ARG,
              "kernel options: isa %d is not one of auto, baseline, avx2, avx512 (0-3)", (int)o->isa);
    RETURN_IF(o->gemm < TFM_GEMM_AUTO || o->gemm > TFM_GEMM_SMALL, TFM_ERR_INVALID_ARG,
              "kernel options: gemm %d is not one of auto, blis, small (0-2)", (int)o->gemm);
    RETURN_IF(o->attention_reference != 0 && o->attention_reference != 1, TFM_ERR_INVALID_ARG,
              "kernel options: attention_reference must be 0 or 1, not %d", o->attention_reference);
    RETURN_IF(o->layers_reference != 0 && o->layers_reference != 1, TFM_ERR_INVALID_ARG,
              "kernel options: layers_reference must be 0 or 1, not %d", o->layers_reference);
    return TFM_OK;
}

static ops_isa cpu_isa(void) {
    if (ops_cpu_avx2_fma() && ops_cpu_avx512()) return OPS_ISA_AVX512;
    return ops_cpu_avx2_fma() ? OPS_ISA_AVX2 : OPS_ISA_BASELINE;
}

ops_kernels ops_kernels_resolve(const tfm_kernel_opts *o) {
    const ops_isa cpu = cpu_isa();
    ops_isa want = o->isa == TFM_ISA_BASELINE ? OPS_ISA_BASELINE
                   : o->isa == TFM_ISA_AVX2   ? OPS_ISA_AVX2
                                              : OPS_ISA_AVX512; /* AUTO and AVX512: the most the CPU has */
    if (want > cpu) want = cpu;
    return (ops_kernels){.isa = want,
                         .gemm = o->gemm == TFM_GEMM_BLIS    ? OPS_GEMM_BLIS
                                 : o->gemm == TFM_GEMM_SMALL ? OPS_GEMM_SMALL
                                                             : OPS_GEMM_AUTO,
                         .attn_fused = !o->attention_reference,
                         .fused_layers = !o->layers_reference};
}

static ops_kernels g_tuned;
static pthread_once_t g_tuned_once = PTHREAD_ONCE_INIT;

static void tuned_init(void) {
    const tfm_kernel_opts o = tfm_kernel_opts_default();
    g_tuned = ops_kernels_resolve(&o);
}

const ops_kernels *ops_kernels_tuned(void) {
    pthread_once(&g_tuned_once, tuned_init);
    return &g_tuned;
}

const ops_kernels *ops_kernels_reference(void) {
    static const ops_kernels k = {.isa = OPS_ISA_BASELINE, .gemm = OPS_GEMM_BLIS, .attn_fused = 0, .fused_layers = 0};
    return &k;
}

const char *ops_kernels_describe(const ops_kernels *k, char *buf, size_t n) {
    static const char *const isa[] = {"baseline", "avx2", "avx512"}, *const gemm[] = {"auto", "blis", "small"};
    snprintf(buf, n, "isa %s, gemm %s, attention %s, layers %s", isa[k->isa], gemm[k->gemm],
             k->attn_fused ? "fused" : "reference", k->fused_layers ? "fused" : "reference");
    return buf;
}
