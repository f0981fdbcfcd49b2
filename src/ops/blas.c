#define _POSIX_C_SOURCE 200809L /* BLIS headers need pthread barriers; pthread_once */
/* Which BLIS kernels the matrix products run (docs/THREADS.md, "Which BLIS kernels").
 *
 * BLIS picks a sub-configuration (kernels and block sizes) for the CPU from cpuid, once per
 * process. Debian 12's BLIS 0.9.0 does not know CPUs newer than itself and falls back to its
 * 'generic' sub-configuration, portable C without vector kernels, about a tenth of the speed of
 * the vector kernels the same library ships (docs/THREADS.md). When BLIS chose 'generic' and the CPU
 * has the instructions of one of its vector sub-configurations, the library builds that
 * configuration's context itself (bli_cntx_init_<name>, which needs BLIS linked statically: the
 * shared library does not export it) and passes it to every product through BLIS's expert
 * interface. Nothing global changes: BLIS's own choice stays what any other caller gets, and
 * BLIS_ARCH_TYPE, when set, is the user's choice and is left alone. */
#include "blas.h"

#include "tfm/threads.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static cntx_t g_cntx;  /* the library's own context, when used */
static cntx_t *g_use;  /* NULL: BLIS's own choice */
static char g_info[320];
static packm_blk_var1_params_t g_pack; /* the library's packing routine, when used */
static const packm_blk_var1_params_t *g_pack_use; /* NULL: BLIS's own packing */

/* The vector sub-configuration for this CPU, from its instruction set (not its model): AVX-512
 * F/DQ/BW/VL (what BLIS's 'skx' kernels use) → skx; AVX2 with FMA → zen3 on AMD, haswell
 * otherwise. NULL when BLIS was linked without these or the CPU has neither. */
static const char *vector_config(void (**init)(cntx_t *)) {
    *init = NULL;
#if defined(TFM_BLIS_CNTX_INIT) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
#ifdef BLIS_CONFIG_SKX
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
        *init = bli_cntx_init_skx;
        return "skx";
    }
#endif
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
#ifdef BLIS_CONFIG_ZEN3
        if (__builtin_cpu_is("amd")) {
            *init = bli_cntx_init_zen3;
            return "zen3";
        }
#endif
#ifdef BLIS_CONFIG_HASWELL
        *init = bli_cntx_init_haswell;
        return "haswell";
#endif
    }
#endif
    return NULL;
}

static void choose(void) {
    bli_init();
    const arch_t native = bli_arch_query_id();
    const char *version = bli_info_get_version_str();
    const int user_choice = getenv("BLIS_ARCH_TYPE") != NULL;
    void (*init)(cntx_t *) = NULL;
    const char *name = native == BLIS_ARCH_GENERIC && !user_choice ? vector_config(&init) : NULL;
    if (init) {
        init(&g_cntx);
        g_use = &g_cntx;
        snprintf(g_info, sizeof g_info, "BLIS %s, '%s' kernels (BLIS chose 'generic' for this CPU; it has the "
                 "instructions of '%s')", version, name, name);
    } else {
        snprintf(g_info, sizeof g_info, "BLIS %s, '%s' kernels (BLIS's choice%s)", version, bli_arch_string(native),
                 user_choice ? ", from BLIS_ARCH_TYPE" : "");
    }
    /* Our packing wherever the 'skx' kernels run, whoever chose them (BLIS_ARCH_TYPE=skx included:
     * packing is a copy, the numbers are BLIS's either way); BLIS's own asm packing elsewhere. */
    const int skx = init ? strcmp(name, "skx") == 0 : native == BLIS_ARCH_SKX;
    const packm_ker_vft ker = skx ? ops_blis_pack_kernel() : NULL;
    if (ker) {
        g_pack.ukr_fn[BLIS_FLOAT][BLIS_FLOAT] = ker;
        g_pack_use = &g_pack;
    }
    const size_t len = strlen(g_info);
    snprintf(g_info + len, sizeof g_info - len, "; packing: %s", ker ? "the library's AVX-512 kernels" : "BLIS's");
}

cntx_t *ops_blis_cntx(void) {
    pthread_once(&g_once, choose);
    return g_use;
}

const packm_blk_var1_params_t *ops_blis_pack(void) {
    pthread_once(&g_once, choose);
    return g_pack_use;
}

void ops_blis_sgemm(trans_t transa, trans_t transb, dim_t m, dim_t n, dim_t k, float *alpha, float *a, inc_t rs_a,
                    inc_t cs_a, float *b, inc_t rs_b, inc_t cs_b, float *beta, float *c, inc_t rs_c, inc_t cs_c,
                    rntm_t *rntm) {
    ops_blis_sgemm_packed(transa, transb, m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, c, rs_c, cs_c,
                          ops_blis_cntx(), rntm, ops_blis_pack());
}

const char *tfm_blas_kernels(void) {
    pthread_once(&g_once, choose);
    return g_info;
}
