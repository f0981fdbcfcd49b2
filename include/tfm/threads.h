/* The number of threads the library's kernels use: one process-wide setting, read by every
 * parallel loop when it starts (docs/THREADS.md). The library never changes OpenMP's or the BLAS's
 * own global state (no omp_set_num_threads, no bli_thread_set_num_threads): each parallel region
 * asks for this many threads explicitly, and every matrix product runs the BLAS single-threaded
 * inside the library's own parallel loops. */
#ifndef TFM_THREADS_H
#define TFM_THREADS_H

/** Sets the number of threads of every later kernel call, in any thread of the process.
 * n <= 0 restores the default: OMP_NUM_THREADS when it is set, else one thread per core this
 * process may run on (its CPU affinity mask). Thread-safe (an atomic store); a kernel already
 * running keeps the count it started with. Results never depend on the count: every sum is split
 * into blocks fixed by the tensor sizes alone. */
void tfm_set_threads(int n);

/** The thread count kernels use now (>= 1): the last tfm_set_threads(n > 0), else the default. */
int tfm_get_threads(void);

#endif
