/* The process-wide thread setting of include/tfm/threads.h, and the team size of src/ops's
 * parallel loops (src/ops/parallel.h). */
#include "parallel.h"
#include "tfm/threads.h"

#include <omp.h>
#include <stdatomic.h>

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
