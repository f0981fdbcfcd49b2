/* GET /metrics of tfm serve (serve.h): counters in Prometheus' text exposition format 0.0.4 —
 * requests by route and status, a latency histogram, tokens in and out, workers busy, requests
 * waiting. */
#include "serve.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int codes[SERVE_CODES - 1] = {200, 400, 403, 404, 405, 413, 500, 503};
static const double bounds[SERVE_BUCKETS] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30}; /* seconds */

void serve_metrics_record(serve_state *s, const char *path, int status, double seconds) {
    const int route = serve_route_index(path);
    int c = 0;
    while (c < SERVE_CODES - 1 && codes[c] != status) c++;
    serve_metrics *m = &s->metrics;
    atomic_fetch_add(&m->requests[route][c], 1);
    for (int b = 0; b < SERVE_BUCKETS; b++)
        if (seconds <= bounds[b]) atomic_fetch_add(&m->latency_le[b], 1);
    atomic_fetch_add(&m->latency_count, 1);
    atomic_fetch_add(&m->latency_us_sum, (long)(seconds * 1e6));
}

/* printf onto a growing buffer; 0 when out of memory */
static int put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int put(char **buf, size_t *len, size_t *cap, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int n = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return 0;
        if (*buf && *len + (size_t)n < *cap) {
            *len += (size_t)n;
            return 1;
        }
        size_t nc = *cap ? *cap * 2 : 4096;
        while (nc < *len + (size_t)n + 1) nc *= 2;
        char *b = realloc(*buf, nc);
        if (!b) return 0;
        *buf = b;
        *cap = nc;
    }
}

void serve_metrics_reply(serve_state *s, serve_reply *r) {
    serve_metrics *m = &s->metrics;
    char *b = NULL;
    size_t len = 0, cap = 0;
    int ok = put(&b, &len, &cap, "# HELP tfm_serve_requests_total Requests answered, by route and HTTP status.\n"
                                 "# TYPE tfm_serve_requests_total counter\n");
    for (int k = 0; k < SERVE_ROUTES; k++)
        for (int c = 0; c < SERVE_CODES; c++) {
            const long n = atomic_load(&m->requests[k][c]);
            if (!n) continue;
            char code[8];
            if (c < SERVE_CODES - 1) snprintf(code, sizeof code, "%d", codes[c]);
            else strcpy(code, "other");
            const char *route_name = serve_route_path(k);
            ok = ok && put(&b, &len, &cap, "tfm_serve_requests_total{route=\"%s\",code=\"%s\"} %ld\n", route_name, code, n);
        }
    ok = ok && put(&b, &len, &cap, "# HELP tfm_serve_request_seconds Time from a request's headers to its reply.\n"
                                   "# TYPE tfm_serve_request_seconds histogram\n");
    for (int i = 0; i < SERVE_BUCKETS; i++)
        ok = ok && put(&b, &len, &cap, "tfm_serve_request_seconds_bucket{le=\"%g\"} %ld\n", bounds[i],
                       atomic_load(&m->latency_le[i]));
    const long count = atomic_load(&m->latency_count);
    ok = ok && put(&b, &len, &cap,
                   "tfm_serve_request_seconds_bucket{le=\"+Inf\"} %ld\ntfm_serve_request_seconds_sum %.6f\n"
                   "tfm_serve_request_seconds_count %ld\n",
                   count, 1e-6 * (double)atomic_load(&m->latency_us_sum), count);
    pthread_mutex_lock(&s->mu);
    const int running = s->running, waiting = s->waiting;
    pthread_mutex_unlock(&s->mu);
    ok = ok && put(&b, &len, &cap,
                   "# HELP tfm_serve_tokens_in_total Subword tokens read: translation sources and prompts.\n"
                   "# TYPE tfm_serve_tokens_in_total counter\ntfm_serve_tokens_in_total %ld\n"
                   "# HELP tfm_serve_tokens_out_total Subword tokens written: translations and completions.\n"
                   "# TYPE tfm_serve_tokens_out_total counter\ntfm_serve_tokens_out_total %ld\n"
                   "# HELP tfm_serve_workers_busy Requests computing now.\n"
                   "# TYPE tfm_serve_workers_busy gauge\ntfm_serve_workers_busy %d\n"
                   "# HELP tfm_serve_queue_waiting Requests waiting for a worker now.\n"
                   "# TYPE tfm_serve_queue_waiting gauge\ntfm_serve_queue_waiting %d\n",
                   atomic_load(&m->tokens_in), atomic_load(&m->tokens_out), running, waiting);
    int tr_waiting = 0, tr_busy = 0, gen_waiting = 0, gen_busy = 0;
    for (int i = 0; i < s->n_models; i++) {
        int w, busy;
        serve_batcher_depth(&s->models[i], &w, &busy);
        tr_waiting += w;
        tr_busy += busy;
        serve_gen_depth(&s->models[i], &w, &busy);
        gen_waiting += w;
        gen_busy += busy;
    }
    ok = ok && put(&b, &len, &cap,
                   "# HELP tfm_serve_translate_waiting /translate requests with sentences waiting for a shared round.\n"
                   "# TYPE tfm_serve_translate_waiting gauge\ntfm_serve_translate_waiting %d\n"
                   "# HELP tfm_serve_translate_busy Translation threads computing a round now.\n"
                   "# TYPE tfm_serve_translate_busy gauge\ntfm_serve_translate_busy %d\n"
                   "# HELP tfm_serve_translate_batches_total Shared translation rounds run.\n"
                   "# TYPE tfm_serve_translate_batches_total counter\ntfm_serve_translate_batches_total %ld\n"
                   "# HELP tfm_serve_translate_batch_sentences_total Sentences in those rounds (over rounds: the mean batch).\n"
                   "# TYPE tfm_serve_translate_batch_sentences_total counter\ntfm_serve_translate_batch_sentences_total %ld\n"
                   "# HELP tfm_serve_cancelled_total Requests cancelled because their client went away.\n"
                   "# TYPE tfm_serve_cancelled_total counter\ntfm_serve_cancelled_total %ld\n",
                   tr_waiting, tr_busy, atomic_load(&m->batches), atomic_load(&m->batch_sentences),
                   atomic_load(&m->cancelled));
    ok = ok && put(&b, &len, &cap,
                   "# HELP tfm_serve_generate_waiting Completion requests waiting for a row of a batch.\n"
                   "# TYPE tfm_serve_generate_waiting gauge\ntfm_serve_generate_waiting %d\n"
                   "# HELP tfm_serve_generate_busy Generation threads whose batch has rows now.\n"
                   "# TYPE tfm_serve_generate_busy gauge\ntfm_serve_generate_busy %d\n"
                   "# HELP tfm_serve_generate_groups_total Completion batches started (a thread's batch going from no row to rows).\n"
                   "# TYPE tfm_serve_generate_groups_total counter\ntfm_serve_generate_groups_total %ld\n"
                   "# HELP tfm_serve_generate_group_rows_total Completions run in those batches.\n"
                   "# TYPE tfm_serve_generate_group_rows_total counter\ntfm_serve_generate_group_rows_total %ld\n"
                   "# HELP tfm_serve_generate_joined_total Completions that joined a batch already running.\n"
                   "# TYPE tfm_serve_generate_joined_total counter\ntfm_serve_generate_joined_total %ld\n"
                   "# HELP tfm_serve_generate_steps_total Decoding steps of completion batches.\n"
                   "# TYPE tfm_serve_generate_steps_total counter\ntfm_serve_generate_steps_total %ld\n"
                   "# HELP tfm_serve_generate_step_rows_total Rows in those steps (over steps: the mean batch, at most 8).\n"
                   "# TYPE tfm_serve_generate_step_rows_total counter\ntfm_serve_generate_step_rows_total %ld\n",
                   gen_waiting, gen_busy, atomic_load(&m->gen_groups), atomic_load(&m->gen_group_rows),
                   atomic_load(&m->gen_joined), atomic_load(&m->gen_steps), atomic_load(&m->gen_step_rows));
    if (!ok) {
        free(b);
        serve_error(r, 500, "out of memory");
        return;
    }
    free(r->body);
    r->body = b;
    r->status = 200;
    r->content_type = "text/plain; version=0.0.4";
}
