/* The number of threads the library's kernels use: one process-wide setting, read by every
 * parallel loop when it starts (docs/THREADS.md). The library never changes OpenMP's or the BLAS's
 * own global state (no omp_set_num_threads, no bli_thread_set_num_threads): each parallel region
 * asks for this many threads explicitly, and every matrix product runs the BLAS single-threaded
 * inside the library's own parallel loops. */
#ifndef TFM_THREADS_H
#define TFM_THREADS_H

#include "tfm/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Sets the number of threads of every later kernel call, in any thread of the process.
 * n <= 0 restores the default: OMP_NUM_THREADS when it is set, else one thread per core this
 * process may run on (its CPU affinity mask). Thread-safe (an atomic store); a kernel already
 * running keeps the count it started with. Results never depend on the count: every sum is split
 * into blocks fixed by the tensor sizes alone. */
TFM_API void tfm_set_threads(int n);

/** The thread count kernels use now (>= 1): the last tfm_set_threads(n > 0), else the default. */
TFM_API int tfm_get_threads(void);

/** What runs the matrix products, for logs and benchmarks: the BLAS, its version and the kernels
 * used on this CPU, e.g. "BLIS 0.9.0, 'skx' kernels (BLIS chose 'generic' for this CPU; it has the
 * instructions of 'skx')" (docs/THREADS.md, "Which BLIS kernels"). A static string, valid for the
 * life of the process; thread-safe. The choice is made once, by the first call of this or of any
 * matrix product. */
TFM_API const char *tfm_blas_kernels(void);

/** For a program's main() only, before anything else: GCC's OpenMP runtime (libgomp) reads its
 * waiting policy once, when it loads, and by default an idle thread spins ~300,000 rounds
 * (milliseconds) before it sleeps. Beside another OpenMP program on the same cores the two then
 * take turns spinning while the thread they wait for has no core (docs/THREADS.md: a training
 * step 5× slower beside a second tfm, 2.1× with this call). When none of OMP_WAIT_POLICY,
 * GOMP_SPINCOUNT and TFM_NO_REEXEC is set, it sets GOMP_SPINCOUNT=10000 (tens of microseconds:
 * as fast as the default on an idle machine) and re-executes the program (/proc/self/exe) with
 * the same argv (main's, NULL-terminated) and that one variable added.
 * Returns 0 when nothing was needed, -1 when re-executing failed (the program just goes on with
 * the default policy); on success it does not return. A library must never call it: it replaces
 * the process image. */
TFM_API int tfm_reexec_for_shared_cores(char **argv);

#ifdef __cplusplus
}
#endif
#endif
