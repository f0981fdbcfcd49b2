#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/* The library's one clock (core_internal.h). */
#include "core_internal.h"

#include <time.h>

int_least64_t tfm_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int_least64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
