/* The worker contexts of tfm serve (serve.h): at most `workers` requests compute at once, each on
 * its own context of its model; up to `max_queue` more wait in line; the next ones get 503. */
#include "serve.h"

tfm_context *serve_acquire(serve_state *s, serve_model *m, serve_reply *r) {
    pthread_mutex_lock(&s->mu);
    if (s->running + s->waiting >= s->workers + s->max_queue) {
        pthread_mutex_unlock(&s->mu);
        serve_error(r, 503, "busy: %d requests are computing and %d waiting (--max-queue %d); retry later",
                    s->workers, s->max_queue, s->max_queue);
        r->retry_after = 1;
        return NULL;
    }
    s->waiting++;
    while (s->running >= s->workers) pthread_cond_wait(&s->cv, &s->mu);
    s->waiting--;
    s->running++;
    /* fewer than `workers` requests run, so one of the model's `workers` contexts is free */
    int i = 0;
    while (m->busy[i]) i++;
    m->busy[i] = 1;
    pthread_mutex_unlock(&s->mu);
    return m->ctx[i];
}

void serve_release(serve_state *s, serve_model *m, tfm_context *ctx) {
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->workers; i++)
        if (m->ctx[i] == ctx) m->busy[i] = 0;
    s->running--;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}
