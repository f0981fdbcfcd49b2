#define _GNU_SOURCE /* syscall (futex) */
/* The thread pool of src/ops/pool.h (docs/THREADS.md, "The thread pool").
 *
 * One job at a time, posted by the thread that holds the pool (a try-lock; a caller that cannot
 * take it runs its job alone). The job is described by atomics: fn, arg, n (chunks), team, and
 * one 64-bit claim word, (generation << 32) | next chunk index.
 *
 *   Caller:  1. claim ← (g, NO_CHUNK): from here on no claim of job g − 1 can succeed;
 *            2. fn, arg, n, team ← job g (release stores), done ← 0;
 *            3. claim ← (g, 0); wake_word ← g; futex-wake the workers only if some sleep;
 *            4. take chunks itself (fetch_add on claim) until the index passes n;
 *            5. wait until done == n: every chunk was claimed in 4, so this waits only for
 *               chunks some worker is running, never for a worker that has not arrived.
 *   Worker:  1. wait for a claim word of a generation it has not seen (spin ~50 µs, then sleep on
 *               wake_word with a futex);
 *            2. read fn, arg, n, team (acquire loads), skip the job if its index >= team;
 *            3. claim chunk i by CAS (g, i) → (g, i + 1), only while i < n and the word's
 *               generation is still g; run it; done += 1 (the last one wakes a sleeping caller).
 *
 * Why a worker that wakes late never runs a chunk of the wrong job: the caller writes the fields
 * of job g + 1 only after step 1 has moved the claim word to generation g + 1. A worker that read
 * a field of job g + 1 (acquire) therefore sees that word too, and its CAS against (g, i) fails;
 * a CAS that succeeds proves every field it read was job g's. A worker that finds (g, i >= n)
 * claims nothing; one that finds NO_CHUNK waits for step 3. */
#include "pool.h"
#include "core_internal.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define POOL_MAX_WORKERS 255
#define NO_CHUNK UINT32_C(0xFFFFFFFF) /* the claim word's index while a job is being posted */
#define POOL_MAX_CHUNKS ((size_t)UINT32_MAX / 2) /* larger jobs run on the caller (never in practice) */
/* How long a worker spins for the next job before it sleeps (libgomp with GOMP_SPINCOUNT=10000,
 * tfm's setting, spins about as long): the gaps between the regions of a step are mostly shorter,
 * so on an idle machine a job rarely needs a wake-up. */
#define POOL_WORKER_SPIN_NS 50000
/* How long the caller spins for chunks still running on workers before it sleeps. */
#define POOL_CALLER_SPIN_NS 20000

typedef struct {
    _Alignas(64) _Atomic uint64_t claim; /* (generation << 32) | next chunk index */
    _Atomic(ops_pool_fn) fn;
    _Atomic(void *) arg;
    atomic_size_t n;                     /* chunks of the job */
    atomic_int team;                     /* workers 1 .. team − 1 may take chunks */
    _Alignas(64) atomic_uint done;       /* chunks finished (caller's and workers') */
    atomic_int caller_waiting;           /* the caller sleeps on `done` */
    _Alignas(64) atomic_uint wake_word;  /* the generation last posted: workers sleep on it */
    atomic_int sleepers;                 /* workers asleep (or about to be) on wake_word */
    _Alignas(64) atomic_int busy;        /* the try-lock: 1 while a thread holds the pool */
    int n_workers;                       /* workers started (changed only under `busy`) */
    int create_failed;                   /* pthread_create failed once: stop trying */
    int atfork_set;
    /* ops_pool_counts, on a line of their own: every call counts, from any thread */
    _Alignas(64) atomic_size_t jobs_parallel, jobs_serial;
} pool_state;

static pool_state g_pool;
static uint32_t g_start_gen[POOL_MAX_WORKERS + 1]; /* the generation current when worker i started */
static _Thread_local int t_slot;                   /* ops_pool_slot() */

static uint32_t gen_of(uint64_t w) { return (uint32_t)(w >> 32); }
static uint32_t idx_of(uint64_t w) { return (uint32_t)w; }

static inline void cpu_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- sleeping: a futex on Linux, a condition variable elsewhere ------------------------------ */

#ifdef __linux__
/* Sleeps while *w == v (returns at once if it differs; may return spuriously). */
static void wait_while(atomic_uint *w, unsigned v) {
    syscall(SYS_futex, (unsigned *)w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}
static void wake_all(atomic_uint *w) { syscall(SYS_futex, (unsigned *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0); }
#else
static pthread_mutex_t g_sleep_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_sleep_cond = PTHREAD_COND_INITIALIZER;
/* The condition variable's fallback. The word is checked under the mutex and every wake
 * broadcasts under it after the word changed, so no wake-up is lost; the timeout (100 ms) only
 * bounds the cost of a bug here. */
static void wait_while(atomic_uint *w, unsigned v) {
    pthread_mutex_lock(&g_sleep_mutex);
    if (atomic_load(w) == v) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&g_sleep_cond, &g_sleep_mutex, &ts);
    }
    pthread_mutex_unlock(&g_sleep_mutex);
}
static void wake_all(atomic_uint *w) {
    (void)w;
    pthread_mutex_lock(&g_sleep_mutex);
    pthread_cond_broadcast(&g_sleep_cond);
    pthread_mutex_unlock(&g_sleep_mutex);
}
#endif

/* After fork(), in the child: the fallback's mutex may have been held by a parent's worker that
 * the child does not have, and its condition variable counts waiters that are gone. */
static void sleep_reset_after_fork(void) {
#ifndef __linux__
    pthread_mutex_init(&g_sleep_mutex, NULL);
    pthread_cond_init(&g_sleep_cond, NULL);
#endif
}

/* ---- workers --------------------------------------------------------------------------------- */

/* The claim word of the first job of a generation other than `last` that is ready to claim from
 * (not NO_CHUNK): spins up to POOL_WORKER_SPIN_NS (none when `spin` is 0), then sleeps on
 * wake_word until it moves. */
static uint64_t wait_for_job(uint32_t last, int spin) {
    int_least64_t t0 = 0;
    for (unsigned spins = 1;; spins++) {
        const uint64_t w = atomic_load_explicit(&g_pool.claim, memory_order_acquire);
        if (gen_of(w) != last && idx_of(w) != NO_CHUNK) return w;
        cpu_pause();
        if (spin) {
            if (spins % 64 != 0) continue;
            const int_least64_t t = tfm_now_ns();
            if (t0 == 0) t0 = t;
            if (t - t0 < POOL_WORKER_SPIN_NS) continue;
        }
        /* sleep: announce it first, so that a caller posting from now on wakes us (the caller
         * stores wake_word then reads sleepers; we add to sleepers then read wake_word; both
         * sequentially consistent, so one of the two sees the other) */
        atomic_fetch_add_explicit(&g_pool.sleepers, 1, memory_order_seq_cst);
        if (atomic_load_explicit(&g_pool.wake_word, memory_order_seq_cst) == last) wait_while(&g_pool.wake_word, last);
        atomic_fetch_sub_explicit(&g_pool.sleepers, 1, memory_order_relaxed);
        t0 = 0;
        spin = 1;
    }
}

/* Claims and runs chunks of job g (whose fields the worker read as fn, arg, n) from claim word w
 * on, until the job has no chunk left or the word has moved to another generation. */
static void take_chunks(uint64_t w, uint32_t g, ops_pool_fn fn, void *arg, size_t n) {
    for (;;) {
        if (gen_of(w) != g || idx_of(w) >= n) return;
        if (!atomic_compare_exchange_weak_explicit(&g_pool.claim, &w, w + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue; /* w now holds the current word */
        fn(arg, idx_of(w));
        const unsigned d = atomic_fetch_add_explicit(&g_pool.done, 1, memory_order_seq_cst) + 1;
        if (d == n && atomic_load_explicit(&g_pool.caller_waiting, memory_order_seq_cst)) wake_all(&g_pool.done);
        w = atomic_load_explicit(&g_pool.claim, memory_order_acquire);
    }
}

static void *worker_main(void *p) {
    const int self = (int)(intptr_t)p;
    uint32_t last = g_start_gen[self];
    t_slot = self;
    int spin = 1;
    for (;;) {
        const uint64_t w = wait_for_job(last, spin);
        last = gen_of(w);
        /* a job whose team leaves this worker out: back to sleep at once, without spinning on the
         * claim word (wake_all wakes every sleeper; on a many-core machine most may be outside a
         * small job's team) */
        spin = self < atomic_load_explicit(&g_pool.team, memory_order_acquire);
        /* the fields may already be a later job's: then the CAS in take_chunks fails (above) */
        if (!spin) continue;
        const ops_pool_fn fn = atomic_load_explicit(&g_pool.fn, memory_order_acquire);
        void *const arg = atomic_load_explicit(&g_pool.arg, memory_order_acquire);
        const size_t n = atomic_load_explicit(&g_pool.n, memory_order_acquire);
        take_chunks(w, last, fn, arg, n);
    }
    return NULL;
}

/* In a child of fork() only the forking thread exists: forget the workers (the child starts its
 * own on its first job) and whatever job the parent's other threads held. */
static void pool_atfork_child(void) {
    g_pool.n_workers = 0;
    g_pool.create_failed = 0;
    atomic_store(&g_pool.sleepers, 0);
    atomic_store(&g_pool.caller_waiting, 0);
    atomic_store(&g_pool.busy, 0);
    sleep_reset_after_fork();
}

/* With the pool held: starts workers until there are `want` (at most POOL_MAX_WORKERS); returns
 * how many there are. Workers are detached and live until the process exits, asleep when idle;
 * they hold no heap memory of the library's. */
static int grow_workers(int want) {
    if (want > POOL_MAX_WORKERS) want = POOL_MAX_WORKERS;
    if (g_pool.n_workers >= want || g_pool.create_failed) return g_pool.n_workers < want ? g_pool.n_workers : want;
    if (!g_pool.atfork_set) {
        g_pool.atfork_set = pthread_atfork(NULL, NULL, pool_atfork_child) == 0;
    }
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return g_pool.n_workers;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (g_pool.n_workers < want) {
        const int self = g_pool.n_workers + 1;
        g_start_gen[self] = gen_of(atomic_load_explicit(&g_pool.claim, memory_order_relaxed));
        pthread_t th;
        if (pthread_create(&th, &attr, worker_main, (void *)(intptr_t)self) != 0) {
            g_pool.create_failed = 1;
            break;
        }
        g_pool.n_workers = self;
    }
    pthread_attr_destroy(&attr);
    return g_pool.n_workers < want ? g_pool.n_workers : want;
}

/* ---- the caller ------------------------------------------------------------------------------ */

static void run_serial(size_t n, ops_pool_fn fn, void *arg) {
    const int saved = t_slot;
    t_slot = 0;
    for (size_t c = 0; c < n; c++) fn(arg, c);
    t_slot = saved;
    atomic_fetch_add_explicit(&g_pool.jobs_serial, 1, memory_order_relaxed);
}

/* Step 5: until done == n. Spins POOL_CALLER_SPIN_NS, then sleeps on `done` (the worker that
 * finishes the last chunk wakes it). */
static void join(unsigned n) {
    if (atomic_load_explicit(&g_pool.done, memory_order_acquire) == n) return;
    const int_least64_t t0 = tfm_now_ns();
    for (unsigned spins = 1;; spins++) {
        if (atomic_load_explicit(&g_pool.done, memory_order_acquire) == n) return;
        cpu_pause();
        if (spins % 64 == 0 && tfm_now_ns() - t0 >= POOL_CALLER_SPIN_NS) break;
    }
    for (;;) {
        atomic_store_explicit(&g_pool.caller_waiting, 1, memory_order_seq_cst);
        const unsigned d = atomic_load_explicit(&g_pool.done, memory_order_seq_cst);
        if (d == n) break;
        wait_while(&g_pool.done, d);
    }
    atomic_store_explicit(&g_pool.caller_waiting, 0, memory_order_relaxed);
}

int ops_pool_run(size_t n_chunks, int team, ops_pool_fn fn, void *arg) {
    if ((size_t)(team > 0 ? team : 1) > n_chunks) team = (int)n_chunks;
    int in_omp = 0;
#ifdef _OPENMP
    in_omp = omp_in_parallel();
#endif
    if (team <= 1 || n_chunks > POOL_MAX_CHUNKS || in_omp ||
        atomic_exchange_explicit(&g_pool.busy, 1, memory_order_acquire) != 0) {
        run_serial(n_chunks, fn, arg);
        return 1;
    }
    const int helpers = grow_workers(team - 1);
    if (helpers < 1) {
        atomic_store_explicit(&g_pool.busy, 0, memory_order_release);
        run_serial(n_chunks, fn, arg);
        return 1;
    }
    team = helpers + 1;
    const unsigned n = (unsigned)n_chunks;

    /* post job g (steps 1-3 of the header) */
    const uint32_t g = gen_of(atomic_load_explicit(&g_pool.claim, memory_order_relaxed)) + 1;
    atomic_store_explicit(&g_pool.claim, (uint64_t)g << 32 | NO_CHUNK, memory_order_relaxed);
    atomic_store_explicit(&g_pool.fn, fn, memory_order_release);
    atomic_store_explicit(&g_pool.arg, arg, memory_order_release);
    atomic_store_explicit(&g_pool.n, n_chunks, memory_order_release);
    atomic_store_explicit(&g_pool.team, team, memory_order_release);
    atomic_store_explicit(&g_pool.done, 0, memory_order_relaxed);
    atomic_store_explicit(&g_pool.claim, (uint64_t)g << 32, memory_order_seq_cst);
    atomic_store_explicit(&g_pool.wake_word, g, memory_order_seq_cst);
    if (atomic_load_explicit(&g_pool.sleepers, memory_order_seq_cst) > 0) wake_all(&g_pool.wake_word);

    /* step 4: the caller's own chunks */
    const int saved = t_slot;
    t_slot = 0;
    for (;;) {
        const uint32_t i = idx_of(atomic_fetch_add_explicit(&g_pool.claim, 1, memory_order_acq_rel));
        if (i >= n) break;
        fn(arg, i);
        atomic_fetch_add_explicit(&g_pool.done, 1, memory_order_relaxed);
    }
    t_slot = saved;
    join(n); /* step 5 */
    atomic_fetch_add_explicit(&g_pool.jobs_parallel, 1, memory_order_relaxed);
    atomic_store_explicit(&g_pool.busy, 0, memory_order_release);
    return team;
}

typedef struct {
    ops_pool_range_fn fn;
    void *arg;
    size_t n, per;
} range_job;

static void range_chunk(void *arg, size_t c) {
    const range_job *r = arg;
    const size_t i0 = c * r->per, i1 = r->n - i0 < r->per ? r->n : i0 + r->per;
    r->fn(r->arg, i0, i1);
}

int ops_pool_for(size_t n, size_t per, int team, ops_pool_range_fn fn, void *arg) {
    if (per == 0) per = 1;
    range_job r = {fn, arg, n, per};
    return ops_pool_run(n / per + (n % per != 0), team, range_chunk, &r);
}

int ops_pool_slot(void) { return t_slot; }

void ops_pool_counts(size_t *parallel, size_t *serial) {
    if (parallel) *parallel = atomic_load_explicit(&g_pool.jobs_parallel, memory_order_relaxed);
    if (serial) *serial = atomic_load_explicit(&g_pool.jobs_serial, memory_order_relaxed);
}
