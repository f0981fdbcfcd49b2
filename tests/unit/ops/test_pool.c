/* The thread pool of src/ops/pool.h (docs/THREADS.md, "The thread pool"): every chunk of a job runs
 * exactly once whatever the chunk count and team; a job started from inside a chunk runs on that
 * thread, in order; jobs from several threads at once all complete (one gets the pool, the others
 * run alone); and a worker that wakes late never runs a chunk twice or a chunk of the wrong job
 * (100,000 tiny jobs in a tight loop, each counting its own chunks). Also: ops_pool_slot gives each
 * thread of a job a slot below its team, ops_pool_for covers its loop with its ranges once, and a
 * child of fork() runs jobs with workers of its own.
 *
 * Under ThreadSanitizer (the pool alone; libgomp is not instrumented, so not the whole library):
 *   printf 'void tfm_set_threads(int n){(void)n;}\n' > /tmp/stub.c
 *   clang -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -g -fsanitize=thread -Isrc/ops -Isrc/core -Iinclude \
 *     -Itests/unit/common src/ops/pool.c src/core/clock.c tests/unit/ops/test_pool.c /tmp/stub.c -lpthread -lm \
 *     -o /tmp/test_pool_tsan */
#include "pool.h"
#include "test_util.h"
#include "tfm/threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_CHUNKS = 1000 };

/* A job that counts how often each of its chunks ran, and which slots ran them. */
typedef struct {
    atomic_int runs[MAX_CHUNKS];
    atomic_int slot_bad; /* a chunk ran with a slot outside [0, team) */
    int team;
    size_t n;
    atomic_int out_of_range; /* a chunk index >= n */
} count_job;

/* Chunks that ran on a worker (slot != 0), in every job of this test: the checks above a job
 * prove something about the workers only if workers ran some of its chunks. */
static atomic_long g_worker_chunks;

static void count_chunk(void *arg, size_t c) {
    count_job *j = arg;
    if (ops_pool_slot() != 0) atomic_fetch_add(&g_worker_chunks, 1);
    if (c >= j->n) {
        atomic_fetch_add(&j->out_of_range, 1);
        return;
    }
    atomic_fetch_add(&j->runs[c], 1);
    const int s = ops_pool_slot();
    if (s < 0 || s >= (j->team > 0 ? j->team : 1)) atomic_fetch_add(&j->slot_bad, 1);
    /* a little work, so that the workers get a share of the chunks */
    volatile double x = 0.0;
    for (int i = 0; i < 200; i++) x = x + (double)i * 0.5;
}

static void job_init(count_job *j, size_t n, int team) {
    for (size_t c = 0; c < MAX_CHUNKS; c++) atomic_init(&j->runs[c], 0);
    atomic_init(&j->slot_bad, 0);
    atomic_init(&j->out_of_range, 0);
    j->n = n;
    j->team = team;
}

/* 1 when every chunk of the job ran exactly once, on a valid slot. */
static int job_ok(count_job *j) {
    for (size_t c = 0; c < j->n; c++)
        if (atomic_load(&j->runs[c]) != 1) return 0;
    return atomic_load(&j->slot_bad) == 0 && atomic_load(&j->out_of_range) == 0;
}

static void exactly_once(void) {
    static count_job j; /* large: not on the stack */
    const size_t ns[] = {0, 1, 2, 7, 1000};
    for (int team = 1; team <= 4; team++) {
        tfm_set_threads(team); /* the workers grow with the setting */
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            for (int rep = 0; rep < 20; rep++) {
                job_init(&j, ns[k], team);
                const int got = ops_pool_run(ns[k], team, count_chunk, &j);
                CHECK(job_ok(&j), "n %zu team %d rep %d: every chunk exactly once", ns[k], team, rep);
                CHECK(got >= 1 && got <= team && (ns[k] > 1 || got == 1), "n %zu team %d: ran with team %d",
                      ns[k], team, got);
            }
        }
    }
    tfm_set_threads(0);
}

/* ---- nested: a job started inside a chunk runs on that thread, in order ------------------------ */

typedef struct {
    atomic_int order_bad;  /* an inner chunk ran out of order or on another thread */
    atomic_int inner_runs; /* inner chunks run, all outer chunks together */
    atomic_int inner_team_bad;
} nest_job;

typedef struct {
    nest_job *outer;
    pthread_t thread;
    size_t next;
} inner_job;

static void inner_chunk(void *arg, size_t c) {
    inner_job *in = arg;
    if (c != in->next || !pthread_equal(pthread_self(), in->thread) || ops_pool_slot() != 0)
        atomic_fetch_add(&in->outer->order_bad, 1);
    in->next = c + 1;
    atomic_fetch_add(&in->outer->inner_runs, 1);
}

static void outer_chunk(void *arg, size_t c) {
    (void)c;
    nest_job *j = arg;
    const int slot = ops_pool_slot();
    inner_job in = {j, pthread_self(), 0};
    if (ops_pool_run(16, 4, inner_chunk, &in) != 1) atomic_fetch_add(&j->inner_team_bad, 1);
    if (ops_pool_slot() != slot) atomic_fetch_add(&j->order_bad, 1); /* the outer slot is back */
}

static void nested(void) {
    tfm_set_threads(4);
    for (int rep = 0; rep < 50; rep++) {
        nest_job j;
        atomic_init(&j.order_bad, 0);
        atomic_init(&j.inner_runs, 0);
        atomic_init(&j.inner_team_bad, 0);
        ops_pool_run(9, 4, outer_chunk, &j);
        CHECK(atomic_load(&j.inner_runs) == 9 * 16, "nested rep %d: %d inner chunks ran, want 144", rep,
              atomic_load(&j.inner_runs));
        CHECK(atomic_load(&j.order_bad) == 0, "nested rep %d: inner chunks in order on the calling thread", rep);
        CHECK(atomic_load(&j.inner_team_bad) == 0, "nested rep %d: an inner job ran with helpers", rep);
    }
    tfm_set_threads(0);
}

/* ---- concurrent callers ------------------------------------------------------------------------- */

enum { N_CALLERS = 4, CALLER_JOBS = 300 };

typedef struct {
    count_job job;
    int failures;
} caller_arg;

static void *caller_main(void *p) {
    caller_arg *c = p;
    for (int r = 0; r < CALLER_JOBS; r++) {
        const size_t n = (size_t)(1 + (r * 37) % 200);
        job_init(&c->job, n, 4);
        ops_pool_run(n, 4, count_chunk, &c->job);
        if (!job_ok(&c->job)) c->failures++;
    }
    return NULL;
}

static void concurrent(void) {
    tfm_set_threads(4);
    static caller_arg args[N_CALLERS];
    pthread_t th[N_CALLERS];
    int started[N_CALLERS];
    for (int t = 0; t < N_CALLERS; t++) {
        args[t].failures = 0;
        started[t] = pthread_create(&th[t], NULL, caller_main, &args[t]) == 0;
        CHECK(started[t], "concurrent: thread %d started", t);
    }
    for (int t = 0; t < N_CALLERS; t++) {
        if (!started[t]) continue;
        pthread_join(th[t], NULL);
        CHECK(args[t].failures == 0, "concurrent: thread %d had %d jobs with a chunk run not exactly once", t,
              args[t].failures);
    }
    tfm_set_threads(0);
}

/* ---- stale workers: many tiny jobs back to back ------------------------------------------------- */

enum { STALE_JOBS = 100000, STALE_SLOTS = 8, STALE_MAX_N = 5 };

/* Job r counts its chunks in counts[r % STALE_SLOTS] (checked and cleared after the job): a chunk
 * that ran twice, or a late worker running a chunk of job r with job r + 1's (or r − 1's) arg,
 * lands in the wrong slot's counts (the previous slot must stay at zero) or twice in one. Each
 * chunk does a little work, so that workers race the caller for chunks. */
typedef struct {
    atomic_int counts[STALE_MAX_N];
    atomic_int wrong; /* a chunk index past n */
    size_t n;
} stale_job;

static void stale_chunk(void *arg, size_t c) {
    stale_job *j = arg;
    if (ops_pool_slot() != 0) atomic_fetch_add(&g_worker_chunks, 1);
    if (c >= j->n) atomic_fetch_add(&j->wrong, 1);
    else atomic_fetch_add(&j->counts[c], 1);
    volatile int x = 0;
    for (int i = 0; i < 50; i++) x = x + i;
}

static void stale_workers(void) {
    tfm_set_threads(4);
    static stale_job slots[STALE_SLOTS];
    for (int s = 0; s < STALE_SLOTS; s++) {
        for (int c = 0; c < STALE_MAX_N; c++) atomic_init(&slots[s].counts[c], 0);
        atomic_init(&slots[s].wrong, 0);
    }
    int bad = 0, first_bad = -1;
    for (int r = 0; r < STALE_JOBS; r++) {
        stale_job *j = &slots[r % STALE_SLOTS];
        j->n = (size_t)(2 + r % (STALE_MAX_N - 1)); /* 2 .. STALE_MAX_N chunks */
        ops_pool_run(j->n, 2 + r % 3, stale_chunk, j);
        int ok = atomic_exchange(&j->wrong, 0) == 0;
        for (size_t c = 0; c < STALE_MAX_N; c++) {
            const int want = c < j->n ? 1 : 0;
            if (atomic_exchange(&j->counts[c], 0) != want) ok = 0;
        }
        /* the other slots must stay at zero between their jobs: a stale run would land there */
        const stale_job *prev = &slots[(r + STALE_SLOTS - 1) % STALE_SLOTS];
        for (size_t c = 0; c < STALE_MAX_N; c++)
            if (atomic_load(&prev->counts[c]) != 0) ok = 0;
        if (!ok) {
            bad++;
            if (first_bad < 0) first_bad = r;
        }
    }
    CHECK(bad == 0, "stale workers: %d of %d jobs ran a chunk not exactly once (first: job %d)", bad, STALE_JOBS,
          first_bad);
    size_t par = 0, ser = 0;
    ops_pool_counts(&par, &ser);
    CHECK(par > 0, "stale workers: some jobs were offered to workers (%zu parallel, %zu serial)", par, ser);
    const long before = atomic_load(&g_worker_chunks);
    stale_job *j = &slots[0];
    for (int r = 0; r < 20000 && atomic_load(&g_worker_chunks) == before; r++) { /* bounded: a loaded machine */
        j->n = STALE_MAX_N;
        ops_pool_run(j->n, 4, stale_chunk, j);
        for (size_t c = 0; c < STALE_MAX_N; c++) atomic_store(&j->counts[c], 0);
    }
    CHECK(atomic_load(&g_worker_chunks) > 0, "no chunk of any job ran on a worker: the checks above tested the "
                                              "caller alone");
    tfm_set_threads(0);
}

/* ---- ops_pool_for: ranges of a fixed size, each item once --------------------------------------- */

enum { FOR_MAX = 3 * 4096 + 7 };

typedef struct {
    atomic_int hits[FOR_MAX];
    atomic_int bad; /* a range of the wrong length or out of [0, n) */
    size_t n, per;
} for_job;

static void for_range(void *arg, size_t i0, size_t i1) {
    for_job *j = arg;
    const size_t per = j->per ? j->per : 1;
    if (i0 % per != 0 || i1 > j->n || i1 <= i0 || (i1 - i0 != per && i1 != j->n)) atomic_fetch_add(&j->bad, 1);
    for (size_t i = i0; i < i1 && i < FOR_MAX; i++) atomic_fetch_add(&j->hits[i], 1);
}

static void ranges(void) {
    static for_job j;
    const size_t ns[] = {0, 1, 5, 4096, FOR_MAX};
    const size_t pers[] = {0, 1, 7, 4096};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof pers / sizeof pers[0]; b++) {
            for (size_t i = 0; i < FOR_MAX; i++) atomic_init(&j.hits[i], 0);
            atomic_init(&j.bad, 0);
            j.n = ns[a];
            j.per = pers[b];
            ops_pool_for(j.n, j.per, 3, for_range, &j);
            int once = atomic_load(&j.bad) == 0;
            for (size_t i = 0; i < FOR_MAX; i++)
                if (atomic_load(&j.hits[i]) != (i < j.n ? 1 : 0)) once = 0;
            CHECK(once, "ops_pool_for n %zu per %zu: every item once, in ranges of per", j.n, j.per);
        }
}

/* ---- fork: the child has none of the parent's workers and starts its own ---------------------- */

/* ThreadSanitizer cannot start threads in the child of a multi-threaded fork: the case is skipped. */
#if defined(__SANITIZE_THREAD__)
#define POOL_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define POOL_TEST_TSAN 1
#endif
#endif

static void forked(void) {
#ifndef POOL_TEST_TSAN
    tfm_set_threads(4);
    static count_job j;
    job_init(&j, 200, 4);
    ops_pool_run(200, 4, count_chunk, &j); /* the parent's workers exist */
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) { /* the child: jobs must still complete, offered to new workers */
        int ok = 1;
        for (int r = 0; r < 50; r++) {
            job_init(&j, 200, 4);
            ops_pool_run(200, 4, count_chunk, &j);
            ok &= job_ok(&j);
        }
        _exit(ok ? 0 : 1);
    }
    CHECK(pid > 0, "fork failed");
    if (pid > 0) {
        int status = 0;
        CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "fork: the child's jobs did not run every chunk exactly once (status %d)", status);
    }
    tfm_set_threads(0);
#endif
}

int main(void) {
    exactly_once();
    forked();
    ranges();
    nested();
    concurrent();
    stale_workers();
    return test_finish("test_pool");
}
