/* The library's own thread pool for the hot parallel regions of src/ops (docs/THREADS.md, "The
 * thread pool"). Internal to src/ops.
 *
 * An OpenMP region's join waits for every thread of its team, including a helper that has not yet
 * got a core: beside a busy program the caller, having done every chunk itself, still waits for
 * that helper to be scheduled (up to a scheduler time slice). ops_pool_run's join waits only for
 * the chunks some thread has CLAIMED: a helper that arrives after the last chunk was claimed finds
 * nothing to do and is not waited for.
 *
 * Usage, for a loop of n_chunks independent chunks (boundaries fixed by the tensor sizes,
 * parallel.h rule 3):
 *   typedef struct { float *out; const float *inp; size_t N, C; } my_ctx;
 *   static void my_chunk(void *arg, size_t c) { const my_ctx *x = arg; ...rows of chunk c... }
 *   my_ctx x = {out, inp, N, C};
 *   ops_pool_run(n_chunks, ops_team(N * C), my_chunk, &x);
 */
#ifndef TFM_OPS_POOL_H
#define TFM_OPS_POOL_H

#include <stddef.h>

/** A chunk of a pool job: called once for every chunk index of [0, n_chunks). */
typedef void (*ops_pool_fn)(void *arg, size_t chunk);

/** Runs fn(arg, c) once for every c in [0, n_chunks), in no particular order, and returns when all
 * have returned (their writes visible to the caller). The calling thread takes chunks itself; up
 * to team − 1 of the pool's persistent worker threads help (created on first use, more when a
 * larger team is asked for). Runs every chunk on the calling thread, in order, when team <= 1,
 * n_chunks <= 1, the pool is busy with another job (a call from another thread, or from inside a
 * chunk), the caller is inside an active OpenMP region, no worker thread could be created, or
 * n_chunks exceeds POOL_MAX_CHUNKS (the claim word's 32-bit index). Chunks must be independent: no chunk
 * may wait for another.
 * Returns the team the job ran with: 1 when it ran on the calling thread alone, else the caller
 * plus the workers that were offered its chunks (each may or may not have taken one). */
int ops_pool_run(size_t n_chunks, int team, ops_pool_fn fn, void *arg);

/** A range of a loop run by ops_pool_for: items [i0, i1). */
typedef void (*ops_pool_range_fn)(void *arg, size_t i0, size_t i1);

/** ops_pool_run over a loop of n items cut into chunks of `per` items (the last one shorter):
 * fn(arg, i0, i1) once for each chunk [i0, i1) = [c·per, min(n, (c + 1)·per)). per = 0 is taken
 * as 1. For an element-wise loop, per = OPS_ELEM_CHUNK; for rows of C floats, per =
 * ops_rows_per_chunk(C) (parallel.h). Returns ops_pool_run's team. */
int ops_pool_for(size_t n, size_t per, int team, ops_pool_range_fn fn, void *arg);

/** Inside a chunk: the index of the thread running it within its job, 0 for the thread that
 * called ops_pool_run (and for every chunk of a job run on the calling thread alone), 1 .. team − 1
 * for the workers; so a job may give each thread its own scratch slot (attention_fused.c). Outside
 * any chunk: 0. */
int ops_pool_slot(void);

/** Jobs run so far by this process, counted once each: `parallel` those offered to workers,
 * `serial` those run on the calling thread alone (team 1, one chunk, busy pool or inside OpenMP).
 * For counting regions (bench/region_trace.sh sees only OpenMP's). Either pointer may be NULL. */
void ops_pool_counts(size_t *parallel, size_t *serial);

#endif
