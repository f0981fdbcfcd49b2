#define _POSIX_C_SOURCE 200809L /* setenv, execv */
/* The process-wide thread setting of include/tfm/threads.h, and the team size of src/ops's
 * parallel loops (src/ops/parallel.h). */
#include "parallel.h"
#include "pool.h"
#include "tfm/threads.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
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

/* Busy-machine backoff (parallel.h, point 5): until g_serial_until (CLOCK_MONOTONIC, ns) every
 * region runs on the calling thread alone; g_backoff is the length of the last backoff (0: none). */
static _Atomic int_least64_t g_serial_until, g_backoff;
/* ops_team_long's measurements: moving averages (weight 1/4 to the newest) of the caller's time
 * per unit of work alone, in ns, and of the join wait of hurt regions, in ns (0: none yet). */
static _Atomic double g_ns_per_work;
static _Atomic int_least64_t g_stall_ns;

int ops_team(size_t work) {
    if (work < OPS_PAR_MIN_WORK) return 1;
    const int n = tfm_get_threads();
    if (n > 1 && atomic_load_explicit(&g_serial_until, memory_order_relaxed) > tfm_now_ns()) return 1;
    return n;
}

/* Whether a region says anything about the other cores (ops_region_hurt's conditions). */
static int region_judged(const ops_region_obs *o) {
    return o->team > 1 && o->chunks >= 2 * (size_t)o->team &&
           o->caller_ns + o->join_wait_ns >= OPS_BACKOFF_MIN_REGION_NS;
}

int ops_team_long(size_t work) {
    const int team = ops_team(work);
    const int n = tfm_get_threads();
    if (team > 1 || n <= 1 || work < OPS_PAR_MIN_WORK) return team;
    /* in a backoff: open a region only if the caller alone would take OPS_LONG_STALLS stalls */
    const double ns_per_work = atomic_load_explicit(&g_ns_per_work, memory_order_relaxed);
    const int_least64_t stall = atomic_load_explicit(&g_stall_ns, memory_order_relaxed);
    if (ns_per_work <= 0.0 || stall <= 0) return 1;
    return (double)work * ns_per_work >= (double)OPS_LONG_STALLS * (double)stall ? n : 1;
}

int ops_region_hurt(const ops_region_obs *o) {
    if (!region_judged(o)) return 0;
    const int_least64_t region_ns = o->caller_ns + o->join_wait_ns;
    const size_t own = o->chunks - o->helper_chunks;
    if (own == 0) return 0; /* the caller lost its core, the helpers did the work: they have cores */
    /* the caller alone would have taken chunks × its mean chunk time */
    const double alone_ns = (double)o->chunks * (double)o->caller_ns / (double)own;
    return alone_ns < OPS_MIN_SPEEDUP * (double)region_ns;
}

int_least64_t ops_backoff_next(int_least64_t b, int hurt) {
    /* Up fast (×4) when hurt, down slowly (÷2) when not: beside a busy program a helper still gets
     * a core about half the time, and one good region must not end the backoff. */
    if (!hurt) return b / 2 < OPS_BACKOFF_MIN_NS ? 0 : b / 2;
    return b == 0 ? OPS_BACKOFF_MIN_NS : (4 * b > OPS_BACKOFF_MAX_NS ? OPS_BACKOFF_MAX_NS : 4 * b);
}

/* x ← x + (v − x)/4, or v for the first value (x == 0). */
static double average_in(double x, double v) { return x == 0.0 ? v : x + 0.25 * (v - x); }

/* The moving averages and the backoff are shared by every context of the process and updated by
 * separate relaxed loads and stores: two reports at the same instant may lose one update. That
 * only shifts timing decisions (no result depends on them), so no lock or CAS loop is spent here. */
void ops_team_report(const ops_region_obs *o) {
    if (!region_judged(o)) return; /* a team of one, too few chunks, too short: says nothing */
    const int hurt = ops_region_hurt(o);
    const size_t own = o->chunks - o->helper_chunks;
    if (own > 0 && o->work > 0) {
        const double alone_ns = (double)o->chunks * (double)o->caller_ns / (double)own;
        const double r = atomic_load_explicit(&g_ns_per_work, memory_order_relaxed);
        atomic_store_explicit(&g_ns_per_work, average_in(r, alone_ns / (double)o->work), memory_order_relaxed);
    }
    if (hurt) {
        const double st = (double)atomic_load_explicit(&g_stall_ns, memory_order_relaxed);
        atomic_store_explicit(&g_stall_ns, (int_least64_t)average_in(st, (double)o->join_wait_ns),
                              memory_order_relaxed);
    }
    const int_least64_t b = ops_backoff_next(atomic_load_explicit(&g_backoff, memory_order_relaxed), hurt);
    atomic_store_explicit(&g_backoff, b, memory_order_relaxed);
    if (b > 0) atomic_store_explicit(&g_serial_until, tfm_now_ns() + b, memory_order_relaxed);
}

int tfm_reexec_for_shared_cores(char **argv) {
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv("TFM_NO_REEXEC")) return 0;
    if (!argv || !argv[0]) return -1;
    /* libgomp's spin count: 10,000 rounds of its pause loop, then the thread sleeps on a futex
     * (docs/THREADS.md has the measured alternatives). */
    if (setenv("GOMP_SPINCOUNT", "10000", 1) != 0) return -1;
    execv("/proc/self/exe", argv);
    unsetenv("GOMP_SPINCOUNT"); /* exec failed: nothing changed, go on with the default */
    return -1;
}

void ops_probe_chunk(ops_probe *p) {
    if (p->team <= 1) return;
    if (ops_pool_slot() == 0) { /* the thread that called ops_pool_run */
        p->caller_done = tfm_now_ns();
    } else {
        atomic_fetch_add_explicit(&p->helper_chunks, 1, memory_order_relaxed);
    }
}

void ops_probe_end(ops_probe *p, size_t chunks, size_t work) {
    if (p->team <= 1 || p->got <= 1) return;
    const int_least64_t t1 = tfm_now_ns();
    const ops_region_obs o = {.team = p->got,
                              .chunks = chunks,
                              .helper_chunks = atomic_load_explicit(&p->helper_chunks, memory_order_relaxed),
                              .caller_ns = p->caller_done - p->t0,
                              .join_wait_ns = t1 - p->caller_done,
                              .work = work};
    ops_team_report(&o);
}
