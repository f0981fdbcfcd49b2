/* Run-time CPU feature tests (cpu.h). */
#include "cpu.h"

#include <stdatomic.h>

static _Atomic int g_avx512 = -1; /* −1: not read yet */

int ops_cpu_avx512(void) {
    int have = atomic_load_explicit(&g_avx512, memory_order_relaxed);
    if (have < 0) { /* every thread computes the same value: the race is harmless */
        have = __builtin_cpu_supports("avx512f") ? 1 : 0;
        atomic_store_explicit(&g_avx512, have, memory_order_relaxed);
    }
    return have;
}

void ops_cpu_avx512_select(int on) {
    atomic_store_explicit(&g_avx512, on && __builtin_cpu_supports("avx512f") ? 1 : 0, memory_order_relaxed);
}
