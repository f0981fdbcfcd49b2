/* The tool's kernel choice from the environment (kernel_env.h). */
#include "kernel_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tfm_kernel_opts g_opts; /* all zeros: the default */

const tfm_kernel_opts *cli_kernels(void) { return &g_opts; }

void cli_kernels_set(const tfm_kernel_opts *opts) { g_opts = *opts; }

static int is(const char *v, const char *a) { return strcmp(v, a) == 0; }

static int bad(const char *var, const char *v, const char *want) {
    fprintf(stderr, "tfm: error: %s='%s': expected %s\n", var, v, want);
    return -1;
}

int cli_kernel_opts_from_env(tfm_kernel_opts *o) {
    *o = tfm_kernel_opts_default();
    const char *v = getenv("TFM_KERNELS");
    if (v && *v && !is(v, "auto") && !is(v, "tuned")) {
        if (!is(v, "reference")) return bad("TFM_KERNELS", v, "reference, tuned or auto");
        *o = tfm_kernel_opts_reference();
    }
    v = getenv("TFM_GEMM");
    if (v && *v && !is(v, "auto")) {
        if (is(v, "blis")) o->gemm = TFM_GEMM_BLIS;
        else if (is(v, "small")) o->gemm = TFM_GEMM_SMALL;
        else return bad("TFM_GEMM", v, "blis, small or auto");
    }
    v = getenv("TFM_ATTN");
    if (v && *v && !is(v, "auto") && !is(v, "fused")) {
        if (!is(v, "reference")) return bad("TFM_ATTN", v, "reference, fused or auto");
        o->attention_reference = 1;
    }
    v = getenv("TFM_NO_AVX512");
    if (v && *v && !is(v, "0") && (o->isa == TFM_ISA_AUTO || o->isa == TFM_ISA_AVX512)) o->isa = TFM_ISA_AVX2;
    return 0;
}
