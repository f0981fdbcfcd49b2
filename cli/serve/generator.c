/* Completions generated in groups shared across clients (serve.h, docs/SERVE.md "Generation in
 * groups"): every /v1/completions request of a model is a job in one FIFO queue; each of the
 * model's `workers` threads takes the job at the head and up to GROUP_MAX − 1 more waiting jobs whose
 * prompts have the same length in tokens, and generates them together with tfm_generate_batch
 * (one KV cache, every row at the same position); each token goes to its job's callback at once,
 * and a row that finishes — EOS, its budget, a stop sequence, its client gone — leaves the
 * group's next steps. At most 8 rows, so each row's tokens are those of tfm_generate alone, bit
 * for bit (include/tfm/generate.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_cond_timedwait */
#include "serve.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GROUP_MAX 8

struct serve_generator {
    serve_state *s;
    serve_model *m;
    pthread_mutex_t mu;
    pthread_cond_t work, back;
    serve_gen_job *head, *tail;
    int waiting, busy, stop, n_threads;
    pthread_t *threads;
    tfm_context **ctx; /* the model's, one per thread */
};

typedef struct {
    serve_generator *g;
    int k;
} gen_arg;

/* Unlinks job j from the queue (under g->mu). */
static void unlink_job(serve_generator *g, serve_gen_job *j) {
    serve_gen_job **p = &g->head, *prev = NULL;
    while (*p && *p != j) {
        prev = *p;
        p = &(*p)->link;
    }
    if (!*p) return;
    *p = j->link;
    if (g->tail == j) g->tail = prev;
    j->queued = 0;
    g->waiting--;
}

static int row_token(int row, int32_t id, void *user) {
    serve_gen_job **group = user;
    serve_gen_job *j = group[row];
    if (atomic_load(&j->cancelled)) return 1;
    return j->on_token(id, j->user);
}

static void *gen_main(void *arg) {
    gen_arg *a = arg;
    serve_generator *g = a->g;
    tfm_context *ctx = g->ctx[a->k];
    serve_gen_job *group[GROUP_MAX];
    tfm_sample_config sc[GROUP_MAX];
    int budget[GROUP_MAX], len[GROUP_MAX];
    int32_t *prompts = NULL;
    size_t prompts_cap = 0;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        while (!g->stop && !g->head) pthread_cond_wait(&g->work, &g->mu);
        if (!g->head) break;
        /* the head job, and the next waiting jobs whose prompts are as long; with --batch-wait-ms,
         * jobs that arrive within that time after the head job is taken join too */
        int G = 0;
        const int np = g->head->np;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += g->s->batch_wait_ms / 1000;
        until.tv_nsec += (long)(g->s->batch_wait_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        for (;;) {
            for (serve_gen_job *j = g->head, *next; j && G < GROUP_MAX; j = next) {
                next = j->link;
                if (j->np != np) continue;
                unlink_job(g, j);
                group[G++] = j;
            }
            if (G == GROUP_MAX || g->s->batch_wait_ms <= 0 || g->stop ||
                pthread_cond_timedwait(&g->work, &g->mu, &until) == ETIMEDOUT)
                break;
        }
        if (G < GROUP_MAX && g->s->batch_wait_ms > 0) /* the last arrivals before the time ran out */
            for (serve_gen_job *j = g->head, *next; j && G < GROUP_MAX; j = next) {
                next = j->link;
                if (j->np != np) continue;
                unlink_job(g, j);
                group[G++] = j;
            }
        g->busy++;
        pthread_mutex_unlock(&g->mu);
        tfm_status st = TFM_OK;
        const size_t need = (size_t)G * (size_t)np;
        if (need > prompts_cap) {
            int32_t *p = realloc(prompts, need * sizeof *p);
            if (p) {
                prompts = p;
                prompts_cap = need;
            } else {
                st = TFM_ERR_NOMEM;
            }
        }
        for (int b = 0; st == TFM_OK && b < G; b++) {
            sc[b] = group[b]->sc;
            budget[b] = group[b]->max_tokens;
            if (np) memcpy(prompts + (size_t)b * (size_t)np, group[b]->prompt, (size_t)np * sizeof *prompts);
        }
        const char *err = "out of memory";
        if (st == TFM_OK) {
            st = tfm_generate_batch(ctx, G, sc, prompts, np, budget, 1, NULL, 0, len, row_token, group);
            err = tfm_last_error();
        }
        atomic_fetch_add(&g->s->metrics.gen_groups, 1);
        atomic_fetch_add(&g->s->metrics.gen_group_rows, (long)G);
        pthread_mutex_lock(&g->mu);
        g->busy--;
        for (int b = 0; b < G; b++) {
            group[b]->st = st;
            if (st != TFM_OK) snprintf(group[b]->err, sizeof group[b]->err, "%s", err);
            group[b]->done = 1;
        }
        pthread_cond_broadcast(&g->back);
    }
    pthread_mutex_unlock(&g->mu);
    free(prompts);
    return NULL;
}

int serve_gen_start(serve_state *s, serve_model *m) {
    serve_generator *g = calloc(1, sizeof *g);
    gen_arg *args = calloc((size_t)s->workers, sizeof *args);
    pthread_t *threads = calloc((size_t)s->workers, sizeof *threads);
    if (!g || !args || !threads) {
        free(g);
        free(args);
        free(threads);
        return 0;
    }
    *g = (serve_generator){.s = s, .m = m, .threads = threads, .ctx = m->ctx};
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->work, NULL);
    pthread_cond_init(&g->back, NULL);
    m->gen = g;
    m->gen_args = args;
    for (int i = 0; i < s->workers; i++) {
        args[i] = (gen_arg){g, i};
        if (pthread_create(&g->threads[i], NULL, gen_main, &args[i]) != 0) return 0;
        g->n_threads++;
    }
    return 1;
}

void serve_gen_stop(serve_model *m) {
    serve_generator *g = m->gen;
    if (!g) return;
    pthread_mutex_lock(&g->mu);
    g->stop = 1;
    pthread_cond_broadcast(&g->work);
    pthread_mutex_unlock(&g->mu);
    for (int i = 0; i < g->n_threads; i++) pthread_join(g->threads[i], NULL);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->work);
    pthread_cond_destroy(&g->back);
    free(g->threads);
    free(g);
    free(m->gen_args);
    m->gen = NULL;
    m->gen_args = NULL;
}

int serve_gen_submit(serve_state *s, serve_model *m, serve_gen_job *j, serve_reply *r) {
    serve_generator *g = m->gen;
    if (!g) {
        serve_error(r, 500, "no generation threads");
        return 0;
    }
    pthread_mutex_lock(&g->mu);
    if (g->busy == g->n_threads && g->waiting >= s->max_queue) {
        const int busy = g->busy, waiting = g->waiting;
        pthread_mutex_unlock(&g->mu);
        serve_error(r, 503, "busy: %d groups are generating and %d requests waiting (--max-queue %d); retry later",
                    busy, waiting, s->max_queue);
        r->retry_after = 1;
        return 0;
    }
    j->link = NULL;
    j->queued = 1;
    j->done = 0;
    j->st = TFM_OK;
    if (g->tail) g->tail->link = j;
    else g->head = j;
    g->tail = j;
    g->waiting++;
    pthread_cond_signal(&g->work);
    pthread_mutex_unlock(&g->mu);
    return 1;
}

int serve_gen_wait(serve_state *s, serve_model *m, serve_gen_job *j, const serve_request *req) {
    serve_generator *g = m->gen;
    pthread_mutex_lock(&g->mu);
    struct timespec ask;
    clock_gettime(CLOCK_REALTIME, &ask);
    while (!j->done) {
        ask.tv_nsec += 50000000;
        if (ask.tv_nsec >= 1000000000) {
            ask.tv_sec++;
            ask.tv_nsec -= 1000000000;
        }
        while (!j->done && pthread_cond_timedwait(&g->back, &g->mu, &ask) != ETIMEDOUT) {
        }
        if (!j->done && !atomic_load(&j->cancelled) && req && req->gone && req->gone(req->conn)) {
            atomic_store(&j->cancelled, 1); /* a running row stops at its next token */
            atomic_fetch_add(&s->metrics.cancelled, 1);
        }
        if (!j->done && atomic_load(&j->cancelled) && j->queued) { /* cancelled before its group: never runs */
            unlink_job(g, j);
            j->done = 1;
        }
    }
    pthread_mutex_unlock(&g->mu);
    return !atomic_load(&j->cancelled);
}

void serve_gen_depth(serve_model *m, int *waiting, int *busy) {
    serve_generator *g = m->gen;
    *waiting = *busy = 0;
    if (!g) return;
    pthread_mutex_lock(&g->mu);
    *waiting = g->waiting;
    *busy = g->busy;
    pthread_mutex_unlock(&g->mu);
}
