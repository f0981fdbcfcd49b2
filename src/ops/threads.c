#define _POSIX_C_SOURCE 200809L /* setenv, execv */
/* The process-wide thread setting of include/tfm/threads.h, and the team size of src/ops's
 * parallel loops (src/ops/parallel.h). */
#include "parallel.h"
#include "tfm/threads.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_int g_threads; /* 0: the default (OMP_NUM_THREADS, else the cores we may use) */

void tfm_set_threads(int n) { atomic_store_explicit(&g_threads, n > 0 ? n : 0, memory_order_relaxed); }

int tfm_get_threads(void) {
    const int n = atomic_load_explicit(&g_threads, memory_order_relaxed);
    if (n > 0) return n;
    /* The nthreads ICV: OMP_NUM_THREADS if set, else the CPUs in this process's affinity mask. */
    const int d = omp_get_max_threads();
    return d > 0 ? d : 1;
}

int ops_team(size_t work) {
    if (work < OPS_PAR_MIN_WORK) return 1;
    return tfm_get_threads();
}

int tfm_reexec_for_shared_cores(char **argv) {
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv("TFM_NO_REEXEC")) return 0;
    if (!argv || !argv[0]) return -1;
    /* libgomp's spin count: 10,000 rounds of its pause loop, then the thread sleeps on a futex
     * (docs/THREADS.md has the measured alternatives: 1,000 and OMP_WAIT_POLICY=passive cost
     * 5-10 % on an idle machine, the default 300,000 costs 5x beside a second OpenMP program). */
    if (setenv("GOMP_SPINCOUNT", "10000", 1) != 0) return -1;
    execv("/proc/self/exe", argv);
    unsetenv("GOMP_SPINCOUNT"); /* exec failed: nothing changed, go on with the default */
    return -1;
}
