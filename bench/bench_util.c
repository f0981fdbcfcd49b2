/* bench_tfm: timing, statistics and memory helpers (bench.h). */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

double bench_now_s(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_median_min(double *x, int n, double *median, double *min) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    *median = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    *min = x[0];
}

double bench_peak_rss_mib(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0.0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

int bench_int_arg(const char *flag, const char *v) {
    char *end = NULL;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end != '\0' || x < 1 || x > 1000000) {
        fprintf(stderr, "bench_tfm: %s needs a positive integer\n", flag);
        exit(2);
    }
    return (int)x;
}
