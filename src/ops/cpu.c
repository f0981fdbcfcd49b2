/* Run-time CPU feature tests (cpu.h). */
#include "cpu.h"

#include <stdatomic.h>

static _Atomic int g_avx512 = -1; /* −1: not read yet */

/* __builtin_cpu_supports for a literal feature name; 0 on other architectures */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_has(feature) (__builtin_cpu_supports(feature) ? 1 : 0)
#else
#define cpu_has(feature) 0
#endif

int ops_cpu_avx512(void) {
    int have = atomic_load_explicit(&g_avx512, memory_order_relaxed);
    if (have < 0) { /* every thread computes the same value: the race is harmless */
        have = cpu_has("avx512f");
        atomic_store_explicit(&g_avx512, have, memory_order_relaxed);
    }
    return have;
}

int ops_cpu_avx2_fma(void) {
    static _Atomic int have = -1;
    int h = atomic_load_explicit(&have, memory_order_relaxed);
    if (h < 0) {
        h = cpu_has("avx2") && cpu_has("fma");
        atomic_store_explicit(&have, h, memory_order_relaxed);
    }
    return h;
}
