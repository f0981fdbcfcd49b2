/* The threads behind a model's shared queue (serve.h: serve_crew), for batcher.c and generator.c:
 * start, stop after the queue drains, how busy, and the clock of their waits. */
#include "serve.h"

#include <stdlib.h>

int serve_crew_start(serve_crew *c, int n, void *(*fn)(void *), void *owner) {
    c->threads = calloc((size_t)n, sizeof *c->threads);
    c->args = calloc((size_t)n, sizeof *c->args);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->work, NULL);
    pthread_cond_init(&c->back, NULL);
    c->live = 1;
    if (!c->threads || !c->args) return 0;
    for (int k = 0; k < n; k++) {
        c->args[k] = (serve_crew_arg){owner, k};
        if (pthread_create(&c->threads[k], NULL, fn, &c->args[k]) != 0) return 0;
        c->n_threads++;
    }
    return 1;
}

void serve_crew_stop(serve_crew *c) {
    if (!c->live) return;
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->work);
    pthread_mutex_unlock(&c->mu);
    for (int k = 0; k < c->n_threads; k++) pthread_join(c->threads[k], NULL);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->work);
    pthread_cond_destroy(&c->back);
    free(c->threads);
    free(c->args);
    c->live = 0;
}

void serve_crew_depth(serve_crew *c, int *waiting, int *busy) {
    *waiting = *busy = 0;
    if (!c || !c->live) return;
    pthread_mutex_lock(&c->mu);
    *waiting = c->waiting;
    *busy = c->busy;
    pthread_mutex_unlock(&c->mu);
}

int serve_crew_full(const serve_crew *c, int max_queue) { return c->busy == c->n_threads && c->waiting >= max_queue; }

void serve_clock_add(struct timespec *t, long ms) {
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}
