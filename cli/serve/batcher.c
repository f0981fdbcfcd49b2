/* Translation batches shared across clients (serve.h, docs/SERVE.md "Batching"): every /translate
 * request of a model is a job in one FIFO queue; each of the model's `workers` threads takes the
 * sentences at the head of the queue — from as many jobs as fit — into a round of at most
 * --batch-size sentences and --max-batch-tokens padded tokens, and translates the round with
 * tfm_translate_text, which sorts it by length and cuts it into batches with the planner of
 * `tfm translate` (src/core/batch_plan.c). Each result goes back to its job; a request returns
 * when all its sentences are back. A job whose client has gone away leaves the queue: its
 * sentences not yet in a round are never translated. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_cond_timedwait */
#include "serve.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct serve_job {
    const char *const *q;
    size_t n;
    int n_best;            /* translations kept per sentence: 1 + alternatives */
    char **out;            /* [n × n_best] */
    const size_t *ntok;    /* [n] each sentence's subword tokens (0 for a blank one) */
    size_t next;           /* sentences [0, next) are in rounds */
    size_t back;           /* of them, back from their round */
    int cancelled, queued; /* under the batcher's mu */
    tfm_status st;
    char err[256];
    struct serve_job *link; /* the queue */
} serve_job;

struct serve_batcher {
    serve_state *s;
    serve_model *m;
    serve_crew c; /* c.waiting: jobs in the queue; c.busy: threads translating a round */
    serve_job *head, *tail;
};

/* Takes the next round off the queue (under b->c.mu): up to cap sentences, padded tokens (rows ×
 * the longest) within max_tokens (0: no limit; a sentence alone always goes). */
static size_t take_round(serve_batcher *b, size_t cap, const char **src, serve_job **job, size_t *idx, int *n_best) {
    const size_t max_tokens = b->s->max_batch_tokens;
    size_t rows = 0, longest = 0;
    *n_best = 1;
    while (b->head && rows < cap) {
        serve_job *j = b->head;
        while (j->next < j->n && rows < cap) {
            const size_t l = j->ntok[j->next] > longest ? j->ntok[j->next] : longest;
            if (rows > 0 && max_tokens > 0 && (rows + 1) * l > max_tokens) return rows;
            longest = l;
            if (j->n_best > *n_best) *n_best = j->n_best;
            src[rows] = j->q[j->next];
            job[rows] = j;
            idx[rows++] = j->next++;
        }
        if (j->next == j->n) { /* all its sentences are in rounds: it leaves the queue */
            b->head = j->link;
            if (!b->head) b->tail = NULL;
            j->queued = 0;
            b->c.waiting--;
        }
    }
    return rows;
}

static void *worker_main(void *arg) {
    const serve_crew_arg *w = arg;
    serve_batcher *b = w->owner;
    serve_state *s = b->s;
    tfm_context *ctx = b->m->ctx[w->k];
    const size_t cap = (size_t)s->batch;
    tfm_decode_config dc = s->dc; /* with the model's forced first token (NLLB's target code) */
    dc.force_first = b->m->first_id >= 0;
    dc.first_id = b->m->first_id >= 0 ? b->m->first_id : 0;
    const char **src = malloc(cap * sizeof *src);
    serve_job **job = malloc(cap * sizeof *job);
    size_t *idx = malloc(cap * sizeof *idx);
    char **out = malloc(cap * (size_t)s->dc.beam * sizeof *out); /* n_best <= beam per sentence */
    pthread_mutex_lock(&b->c.mu);
    for (;;) {
        while (!b->c.stop && !b->head) pthread_cond_wait(&b->c.work, &b->c.mu);
        if (!b->head) break; /* stopping, and nothing left */
        int nb = 1; /* the round keeps the most any of its requests wants: the best is the same */
        const size_t rows = src && job && idx && out ? take_round(b, cap, src, job, idx, &nb) : 0;
        tfm_status st = TFM_ERR_NOMEM;
        char err[256] = "out of memory";
        tfm_translate_stats stats = {0};
        if (rows > 0) {
            b->c.busy++;
            pthread_mutex_unlock(&b->c.mu);
            st = tfm_translate_text_nbest(ctx, b->m->tok, &dc, src, rows, s->batch, nb, out, &stats);
            if (st != TFM_OK) snprintf(err, sizeof err, "%s", tfm_last_error());
            atomic_fetch_add(&s->metrics.tokens_in, (long)stats.src_tokens);
            atomic_fetch_add(&s->metrics.tokens_out, (long)stats.out_tokens);
            atomic_fetch_add(&s->metrics.batches, 1);
            atomic_fetch_add(&s->metrics.batch_sentences, (long)rows);
            pthread_mutex_lock(&b->c.mu);
            b->c.busy--;
        } else { /* no memory for the round's arrays: fail the head job whole */
            serve_job *j = b->head;
            b->head = j->link;
            if (!b->head) b->tail = NULL;
            j->queued = 0;
            b->c.waiting--;
            j->back += j->n - j->next;
            j->next = j->n;
            j->st = st;
            memcpy(j->err, err, sizeof err);
        }
        for (size_t i = 0; i < rows; i++) {
            serve_job *j = job[i];
            for (int k = 0; k < nb; k++) { /* the job's first n_best of the round's nb */
                char *t = st == TFM_OK ? out[i * (size_t)nb + (size_t)k] : NULL;
                if (k < j->n_best) j->out[idx[i] * (size_t)j->n_best + (size_t)k] = t;
                else free(t);
            }
            if (st != TFM_OK && j->st == TFM_OK) {
                j->st = st;
                memcpy(j->err, err, sizeof err);
            }
            j->back++;
        }
        pthread_cond_broadcast(&b->c.back);
    }
    pthread_mutex_unlock(&b->c.mu);
    free(src);
    free(job);
    free(idx);
    free(out);
    return NULL;
}

int serve_batcher_start(serve_state *s, serve_model *m) {
    serve_batcher *b = calloc(1, sizeof *b);
    if (!b) return 0;
    b->s = s;
    b->m = m;
    m->batcher = b;
    return serve_crew_start(&b->c, s->workers, worker_main, b);
}

void serve_batcher_stop(serve_model *m) {
    if (!m->batcher) return;
    serve_crew_stop(&m->batcher->c);
    free(m->batcher);
    m->batcher = NULL;
}

void serve_batcher_depth(serve_model *m, int *waiting, int *busy) {
    serve_crew_depth(m->batcher ? &m->batcher->c : NULL, waiting, busy);
}

/* Drops a cancelled job from the queue (under b->c.mu): its sentences not yet in a round never run. */
static void unqueue(serve_batcher *b, serve_job *j) {
    if (!j->queued) return;
    serve_job **p = &b->head, *prev = NULL;
    while (*p != j) {
        prev = *p;
        p = &(*p)->link;
    }
    *p = j->link;
    if (b->tail == j) b->tail = prev;
    j->queued = 0;
    b->c.waiting--;
    j->n = j->next; /* the sentences already in rounds still come back */
}

int serve_translate_batched(serve_state *s, serve_model *m, const serve_request *req, const char *const *q, size_t n,
                            int n_best, char **out, serve_reply *r) {
    serve_batcher *b = m->batcher;
    size_t *ntok = calloc(n ? n : 1, sizeof *ntok);
    if (!b || !ntok) {
        free(ntok);
        serve_error(r, 500, "out of memory");
        return 0;
    }
    /* each sentence's length in tokens, for --max-batch-tokens (and its tokenizer errors, here:
     * a bad sentence fails its own request, not a round shared with others) */
    for (size_t i = 0; i < n; i++) {
        if (tfm_text_is_blank(q[i], strlen(q[i]))) continue;
        int32_t *ids = NULL;
        if (tfm_tokenizer_encode(m->tok, q[i], strlen(q[i]), &ids, &ntok[i]) != TFM_OK) {
            serve_error(r, 400, "q%s: %s", n > 1 ? "[]" : "", tfm_last_error());
            free(ntok);
            return 0;
        }
        free(ids);
        /* tfm_translate_text cuts it to max_len, as tfm translate (which warns): the reply says so
         * in X-Tfm-Truncated (docs/SERVE.md) — a LibreTranslate client still gets a translation */
        const int max_len = tfm_model_config(m->model)->max_len;
        if (ntok[i] > (size_t)max_len) {
            ntok[i] = (size_t)max_len;
            r->truncated++;
            r->max_len = max_len;
        }
    }
    serve_job j = {.q = q, .n = n, .n_best = n_best, .out = out, .ntok = ntok, .st = TFM_OK, .queued = 1};
    pthread_mutex_lock(&b->c.mu);
    if (serve_crew_full(&b->c, s->max_queue)) {
        const int busy = b->c.busy, waiting = b->c.waiting;
        pthread_mutex_unlock(&b->c.mu);
        free(ntok);
        serve_error(r, 503, "busy: %d batches are computing and %d requests waiting (--max-queue %d); retry later",
                    busy, waiting, s->max_queue);
        r->retry_after = 1;
        return 0;
    }
    if (b->tail) b->tail->link = &j;
    else b->head = &j;
    b->tail = &j;
    b->c.waiting++;
    pthread_cond_signal(&b->c.work);
    /* wait for every sentence, asking every 50 ms whether the client is still there (rounds of
     * other requests wake this thread more often: the clock, not the wake-ups, paces the asking) */
    struct timespec ask;
    clock_gettime(CLOCK_REALTIME, &ask);
    while (j.back < j.n) {
        serve_clock_add(&ask, 50);
        while (j.back < j.n && pthread_cond_timedwait(&b->c.back, &b->c.mu, &ask) != ETIMEDOUT) {
        }
        if (j.back < j.n && !j.cancelled && req->gone && req->gone(req->conn)) {
            j.cancelled = 1;
            unqueue(b, &j);
            atomic_fetch_add(&s->metrics.cancelled, 1);
        }
    }
    pthread_mutex_unlock(&b->c.mu);
    free(ntok);
    const size_t n_out = n * (size_t)n_best;
    if (j.cancelled) {
        for (size_t i = 0; i < n_out; i++) free(out[i]);
        memset(out, 0, n_out * sizeof *out);
        serve_error(r, 499, "the client closed the connection");
        return 0;
    }
    if (j.st != TFM_OK) {
        for (size_t i = 0; i < n_out; i++) free(out[i]);
        memset(out, 0, n_out * sizeof *out);
        serve_error(r, j.st == TFM_ERR_NOMEM ? 500 : 400, "q: %s", j.err);
        return 0;
    }
    return 1;
}
