/* Run-time CPU feature tests (cpu.h). */
#include "cpu.h"

int ops_cpu_avx512(void) {
    static int have = -1; /* every thread computes the same value: the race is harmless */
    if (have < 0) have = __builtin_cpu_supports("avx512f") ? 1 : 0;
    return have;
}
