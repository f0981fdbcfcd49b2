/* LD_PRELOAD wrapper of libgomp's GOMP_parallel, for bench/region_trace.sh: times every OpenMP
 * region a program opens (gcc compiles `#pragma omp parallel [for]` to one GOMP_parallel call; this
 * tree's loops use no other entry point, `nm -u build/bench_train_step | grep GOMP` shows it) and
 * prints, per region body (the compiler's outlined function, e.g. gemm_tiled._omp_fn.0), at exit:
 *   regions that ran on one thread, regions of several threads, the time inside them (ms), the
 *   mean arrival of thread 1 after the region opened (µs: the wake-up of a sleeping or descheduled
 *   helper), the mean and largest wait of the caller at the join after its own part ended (µs),
 *   and how many joins waited over 200 µs.
 * Output: one line per body, `OFFSET OBJECT n1 n2 ms arrive_us wait_us wait_max_us n_slow`, where
 * OFFSET is the body's address in OBJECT (decimal, as `nm -t d` prints), to REGION_TRACE_OUT (a file) or stderr.
 * Measurement only: not linked into the library or any test. */
#define _GNU_SOURCE /* dladdr, RTLD_NEXT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*body_fn)(void *);
extern int omp_get_thread_num(void);

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One region in flight: the real body and its data, and when threads 0 and 1 entered and left. */
typedef struct {
    body_fn fn;
    void *data;
    _Atomic int64_t enter[2], leave[2];
} region;

static void timed_body(void *p) {
    region *r = p;
    const int id = omp_get_thread_num();
    if (id < 2) atomic_store(&r->enter[id], now_ns());
    r->fn(r->data);
    if (id < 2) atomic_store(&r->leave[id], now_ns());
}

enum { SLOTS = 1024 };
static struct site {
    void *fn;
    long n1, n2, slow;
    int64_t total_ns, arrive_ns, wait_ns, wait_max_ns;
} sites[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void (*real_parallel)(body_fn, void *, unsigned, unsigned);

static void report(void) {
    const char *path = getenv("REGION_TRACE_OUT");
    FILE *f = path ? fopen(path, "w") : stderr;
    if (!f) return;
    for (int i = 0; i < SLOTS; i++) {
        const struct site *s = &sites[i];
        if (!s->fn) continue;
        Dl_info d;
        const int ok = dladdr(s->fn, &d) != 0 && d.dli_fname;
        const double n2 = s->n2 > 0 ? (double)s->n2 : 1.0;
        fprintf(f, "%lu %s %ld %ld %.3f %.1f %.1f %.1f %ld\n",
                (unsigned long)((char *)s->fn - (ok ? (char *)d.dli_fbase : (char *)0)), ok ? d.dli_fname : "?",
                s->n1, s->n2, (double)s->total_ns / 1e6, (double)s->arrive_ns / 1e3 / n2,
                (double)s->wait_ns / 1e3 / n2, (double)s->wait_max_ns / 1e3, s->slow);
    }
    if (f != stderr) fclose(f);
}

static void account(const region *r, int64_t t0, int64_t t1) {
    pthread_mutex_lock(&lock);
    static int registered;
    if (!registered) registered = atexit(report) == 0;
    size_t h = ((uintptr_t)r->fn >> 4) % SLOTS;
    for (int i = 0; i < SLOTS && sites[h].fn && sites[h].fn != (void *)r->fn; i++) h = (h + 1) % SLOTS;
    struct site *s = &sites[h];
    if (!s->fn || s->fn == (void *)r->fn) {
        s->fn = (void *)r->fn;
        s->total_ns += t1 - t0;
        const int64_t helper_in = atomic_load(&r->enter[1]), caller_out = atomic_load(&r->leave[0]);
        if (helper_in == 0) {
            s->n1++;
        } else {
            const int64_t wait = t1 - caller_out;
            s->n2++;
            s->arrive_ns += helper_in - t0;
            s->wait_ns += wait;
            if (wait > s->wait_max_ns) s->wait_max_ns = wait;
            if (wait > 200000) s->slow++;
        }
    }
    pthread_mutex_unlock(&lock);
}

void GOMP_parallel(body_fn fn, void *data, unsigned num_threads, unsigned flags) {
    if (!real_parallel) *(void **)&real_parallel = dlsym(RTLD_NEXT, "GOMP_parallel");
    region r = {.fn = fn, .data = data};
    const int64_t t0 = now_ns();
    real_parallel(timed_body, &r, num_threads, flags);
    account(&r, t0, now_ns());
}
