/* How src/ops opens its parallel regions (jobs of its thread pool), so that the kernels keep
 * their speed on a machine whose cores are shared with other programs (docs/THREADS.md has the
 * measurements behind each number).
 *
 *   1. Small loops never open a region: ops_team(work) is 1 below OPS_PAR_MIN_WORK, and a region
 *      of one thread costs nothing to wait for. Pass it as the team of ops_pool_run.
 *   2. Regions are split into many chunks handed out dynamically (a pool job's claim counter),
 *      never into one static half per thread: when another program holds a core, the thread
 *      that has one takes the next chunk instead of the whole region waiting for the thread that
 *      lost its core. OPS_CHUNK_WORK is the work of one chunk.
 *   3. Chunk boundaries depend only on the tensor sizes, never on the thread count or on which
 *      thread runs a chunk, and no sum is split across chunks in a way that depends on them: the
 *      results are bit-identical for any thread count and any schedule.
 *   4. Matrix products go through ops_gemm (matmul.c), which tiles C the same way and runs the
 *      BLAS single-threaded on each tile (the BLAS's own threads wait for each other at spinning
 *      barriers inside every product: one descheduled thread stalls the other).
 *   5. Busy-machine backoff: each parallel product measures its speed-up over its caller alone
 *      from its own times (ops_region_hurt: the caller's mean tile time against the region's
 *      time, join wait included). Under OPS_MIN_SPEEDUP, the other cores are running other
 *      programs and every region would wait for a thread that has no core: ops_team returns 1
 *      for OPS_BACKOFF_MIN_NS, ×4 on each repeat up to OPS_BACKOFF_MAX_NS, then probes again; a
 *      product that was not hurt halves it. During a backoff, products long enough to repay the
 *      measured wait for a helper still open a team (ops_team_long). Timing only: no result
 *      depends on it.
 *   6. Every parallel loop of src/ops is a job of the library's own thread pool (pool.h,
 *      docs/THREADS.md "The thread pool"), not an OpenMP region: its join waits only for
 *      chunks a thread has claimed, never for a helper that has not arrived (an OpenMP join waits
 *      for every thread of the team, and beside a busy program one of them may have no core).
 *
 * Usage: the loop body becomes a static function of (context, chunk) or (context, range), then
 *   ops_pool_run(n_chunks, ops_team(work), chunk_fn, &ctx);           (chunk c: any fixed split)
 *   ops_pool_for(N, ops_rows_per_chunk(C), ops_team(N * C), rows_fn, &ctx);  (rows of C floats)
 *   ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), range_fn, &ctx);     (element-wise)
 * The team size is read per region from tfm_get_threads() (include/tfm/threads.h). */
#ifndef TFM_OPS_PARALLEL_H
#define TFM_OPS_PARALLEL_H

#include "core_internal.h"
#include "kernels.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** Work (in floats touched, or multiply-adds for products) below which a loop runs on the calling
 * thread: starting a region and joining it costs a few microseconds on an idle machine and up to a
 * scheduler time slice (milliseconds) on a busy one. 32768 floats take ~5–20 µs. */
#define OPS_PAR_MIN_WORK ((size_t)32768)

/** The work of one dynamically scheduled chunk (same unit): large enough that the shared chunk
 * counter costs nothing, small enough that a loop has many chunks to share. */
#define OPS_CHUNK_WORK ((size_t)16384)

/** Elements per chunk of an element-wise loop. */
#define OPS_ELEM_CHUNK 16384

/** The team size of a region doing `work` units: 1 below OPS_PAR_MIN_WORK or during a busy-machine
 * backoff, else tfm_get_threads(). */
int ops_team(size_t work);

/** What one parallel product saw, for the busy-machine backoff (point 5). Times are CLOCK_MONOTONIC
 * nanoseconds (tfm_now_ns, core_internal.h). */
typedef struct {
    int team;                    /* threads the runtime gave the region */
    size_t chunks;               /* chunks (tiles) handed out */
    size_t helper_chunks;        /* of which threads other than the caller took */
    int_least64_t caller_ns;     /* from opening the region to the end of the caller's last chunk */
    int_least64_t join_wait_ns;  /* from the end of the caller's last chunk to the join */
    size_t work;                 /* the region's work (multiply-adds), for ops_team_long's rate */
} ops_region_obs;

/** 1 when a region was not worth its helpers: its measured speed-up over the caller alone,
 * (chunks · the caller's mean chunk time) / (the region's time), is under OPS_MIN_SPEEDUP. On an
 * idle machine a region of two threads runs close to 2x (its chunks are independent, the helper
 * arrives within microseconds); beside a busy program a helper that has
 * no core takes few chunks and the join waits for it (up to a scheduler time slice), which drives
 * the ratio below 1. Relative to the region's own measured times, so it holds at any kernel speed
 * and under any load (when every thread is slowed, the caller's chunks are too). 0 for a team of
 * one, fewer than 2 chunks per thread, a region shorter than OPS_BACKOFF_MIN_REGION_NS, or a
 * caller that did no chunk (it lost its core; the helpers had theirs). Why a minimum length: a
 * helper arriving w late makes a region of alone-time A run 2A/(A + w) faster, under 1.2 when
 * w > 2A/3; waking a sleeping thread takes tens of µs (more in a virtual machine, where the vCPU
 * may have halted), so regions whose whole time is under 200 µs say nothing about the other
 * cores, while one that waited a scheduler time slice is never that short. */
int ops_region_hurt(const ops_region_obs *o);

/** The next backoff length from the current one (0: none) and a region's verdict: hurt starts it
 * at OPS_BACKOFF_MIN_NS or multiplies it by 4 up to OPS_BACKOFF_MAX_NS; a region that was not
 * hurt halves it, to 0 below OPS_BACKOFF_MIN_NS. */
int_least64_t ops_backoff_next(int_least64_t backoff_ns, int hurt);

/** After a parallel product: updates the backoff from ops_region_hurt(o) (regions too short to
 * judge change nothing); during the resulting backoff ops_team returns 1. Also keeps, as moving
 * averages, the caller's time per unit of work alone (from every judged region) and the join wait
 * of hurt regions (the time a helper without a core holds a region up): ops_team_long's inputs. */
void ops_team_report(const ops_region_obs *o);

/** ops_team(work), except that during a backoff a region long enough to repay the wait for a
 * helper still gets the set threads: when work × (the caller's measured time per unit) is at
 * least OPS_LONG_STALLS × (the measured join wait of hurt regions). Beside a busy program the
 * output layer's products (tens of ms) then still use a helper that arrives late, while the many
 * short regions stay on the calling thread. For products that report (ops_team_report, same
 * work unit). */
int ops_team_long(size_t work);
#define OPS_LONG_STALLS 4

/** The probe of one parallel product that reports to the backoff (ops_team_report): filled by
 * ops_probe_begin before the region, ops_probe_chunk after each chunk inside it, and read by
 * ops_probe_end after the join. The region is a pool job (pool.h); the probe's caller is the thread
 * that called ops_pool_run (ops_pool_slot() == 0). Usage:
 *   ops_probe pr;
 *   ops_probe_begin(&pr, team);
 *   pr.got = ops_pool_run(chunks, team, chunk_fn, &ctx);   (chunk_fn ends with ops_probe_chunk)
 *   ops_probe_end(&pr, chunks, work); */
typedef struct {
    int team;                    /* threads asked for */
    int got;                     /* the team ops_pool_run ran with (its return value; 1: alone) */
    int_least64_t t0;            /* when the region opened */
    int_least64_t caller_done;   /* when the caller's last chunk ended (caller's thread only) */
    atomic_size_t helper_chunks; /* chunks other threads took */
} ops_probe;

static inline void ops_probe_begin(ops_probe *p, int team) {
    p->team = team;
    p->got = 1;
    p->t0 = p->caller_done = team > 1 ? tfm_now_ns() : 0;
    atomic_init(&p->helper_chunks, 0);
}

/** Inside the region, after each chunk: the caller's thread records when its chunk ended; another
 * thread counts a helper chunk. */
void ops_probe_chunk(ops_probe *p);

/** After the join: reports what the region saw (a region that ran on one thread reports nothing). */
void ops_probe_end(ops_probe *p, size_t chunks, size_t work);

#define OPS_BACKOFF_MIN_NS ((int_least64_t)2000000)   /* 2 ms */
#define OPS_BACKOFF_MAX_NS ((int_least64_t)128000000) /* 128 ms */
#define OPS_BACKOFF_MIN_REGION_NS ((int_least64_t)200000) /* regions judged: >= 200 µs */
#define OPS_MIN_SPEEDUP 1.2 /* a region of several threads must beat its caller alone by this much */

/** Rows per chunk for a loop over rows of `cols` floats: OPS_CHUNK_WORK / cols, at least 1.
 * (An int, as OpenMP's schedule(dynamic, chunk) wanted.) */
static inline int ops_rows_per_chunk(size_t cols) {
    const size_t r = cols > 0 ? OPS_CHUNK_WORK / cols : OPS_CHUNK_WORK;
    return r > 0 ? (int)r : 1;
}

/** Row-major C[M, N] = alpha · op(A)[M, K] · op(B)[K, N] + beta · C, the BLAS run single-threaded
 * on the calling thread whatever OMP_NUM_THREADS or BLIS_NUM_THREADS say. op(A) = A (stored M × K,
 * leading dimension lda) or, with trans_a, Aᵀ (A stored K × M); likewise op(B) (K × N, or N × K
 * with trans_b). For products inside a caller's own parallel loop (attention's per-head GEMMs). */
void ops_gemm_serial(const ops_kernels *kern, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha,
                     const float *A, size_t lda, const float *B, size_t ldb, float beta, float *C,
                     size_t ldc);

/** Row-major y = alpha · op(A)·x + beta · y on the calling thread: op(A) = A (M × N, leading
 * dimension lda; x has N entries, y M) or, with trans, Aᵀ (x has M entries, y N). beta = 0 never
 * reads y. For matrix–vector products inside a caller's parallel loop (attention of one query). */
void ops_gemv_serial(int trans, size_t M, size_t N, float alpha, const float *A, size_t lda, const float *x,
                     float beta, float *y);

/** ops_gemm_serial's product over tfm_get_threads() threads: C is cut into tiles of at most
 * OPS_GEMM_TILE_M × OPS_GEMM_TILE_N (OPS_GEMM_TALL_M × OPS_GEMM_TALL_N for an A·Bᵀ with a large B),
 * smaller for small products (fixed by the sizes and transpositions alone, so every
 * element is summed the same way whatever the thread count), handed out dynamically, each tile one
 * single-threaded BLAS call. Below OPS_PAR_MIN_WORK · 32 multiply-adds it runs on the caller. */
void ops_gemm(const ops_kernels *kern, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha, const float *A,
              size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc);
#define OPS_GEMM_TILE_M 128
#define OPS_GEMM_TILE_N 256
#define OPS_GEMM_MIN_TILES 4 /* smaller tiles until there are this many (docs/THREADS.md), */
#define OPS_GEMM_MIN_TILE_MACS ((size_t)1 << 18)    /* as long as a tile keeps this much work */
/* Tall tiles for A·Bᵀ (a linear layer's forward) whose B (N × K, the weight) is larger than a
 * core's L2 and whose K is at most OPS_GEMM_TALL_MAX_K: every tile copies its B panels transposed
 * (gemm_small.h), so a B read and transposed once per 128 rows came from L3 eight times in a
 * 1,024-row step; tiles of OPS_GEMM_TALL_M rows read it a quarter as often (docs/KERNELS.md "Tall
 * tiles for large weights" has the measurements). Above OPS_GEMM_TALL_MAX_K the taller tile's
 * op(A) does not stay in L2 across its panels, so those keep the default. */
#define OPS_GEMM_TALL_M 512
#define OPS_GEMM_TALL_N 64
#define OPS_GEMM_TALL_MIN_B ((size_t)1 << 19) /* floats of B (N · K): 2 MiB */
#define OPS_GEMM_TALL_MAX_K 512

#endif
