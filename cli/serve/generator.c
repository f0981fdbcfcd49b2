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
    serve_crew c; /* c.waiting: jobs in the queue; c.busy: threads generating a group */
    serve_gen_job *head, *tail;
};

/* Unlinks job j from the queue (under g->c.mu). */
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
    g->c.waiting--;
}

static int row_token(int row, int32_t id, void *user) {
    serve_gen_job **group = user;
    serve_gen_job *j = group[row];
    if (atomic_load(&j->cancelled)) return 1;
    return j->on_token(id, j->user);
}

static void *gen_main(void *arg) {
    const serve_crew_arg *a = arg;
    serve_generator *g = a->owner;
    tfm_context *ctx = g->m->ctx[a->k];
    serve_gen_job *group[GROUP_MAX];
    tfm_sample_config sc[GROUP_MAX];
    int budget[GROUP_MAX], len[GROUP_MAX];
    int32_t *prompts = NULL;
    size_t prompts_cap = 0;
    pthread_mutex_lock(&g->c.mu);
    for (;;) {
        while (!g->c.stop && !g->head) pthread_cond_wait(&g->c.work, &g->c.mu);
        if (!g->head) break;
        /* the head job, and the next waiting jobs whose prompts are as long; with --batch-wait-ms,
         * jobs that arrive within that time after the head job is taken join too */
        int G = 0;
        const int np = g->head->np;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        serve_clock_add(&until, g->s->batch_wait_ms);
        for (;;) {
            for (serve_gen_job *j = g->head, *next; j && G < GROUP_MAX; j = next) {
                next = j->link;
                if (j->np != np) continue;
                unlink_job(g, j);
                group[G++] = j;
            }
            if (G == GROUP_MAX || g->s->batch_wait_ms <= 0 || g->c.stop ||
                pthread_cond_timedwait(&g->c.work, &g->c.mu, &until) == ETIMEDOUT)
                break;
        }
        if (G < GROUP_MAX && g->s->batch_wait_ms > 0) /* the last arrivals before the time ran out */
            for (serve_gen_job *j = g->head, *next; j && G < GROUP_MAX; j = next) {
                next = j->link;
                if (j->np != np) continue;
                unlink_job(g, j);
                group[G++] = j;
            }
        g->c.busy++;
        pthread_mutex_unlock(&g->c.mu);
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
        pthread_mutex_lock(&g->c.mu);
        g->c.busy--;
        for (int b = 0; b < G; b++) {
            group[b]->st = st;
            if (st != TFM_OK) snprintf(group[b]->err, sizeof group[b]->err, "%s", err);
            group[b]->done = 1;
        }
        pthread_cond_broadcast(&g->c.back);
    }
    pthread_mutex_unlock(&g->c.mu);
    free(prompts);
    return NULL;
}

int serve_gen_start(serve_state *s, serve_model *m) {
    serve_generator *g = calloc(1, sizeof *g);
    if (!g) return 0;
    g->s = s;
    g->m = m;
    m->gen = g;
    return serve_crew_start(&g->c, s->workers, gen_main, g);
}

void serve_gen_stop(serve_model *m) {
    if (!m->gen) return;
    serve_crew_stop(&m->gen->c);
    free(m->gen);
    m->gen = NULL;
}

int serve_gen_submit(serve_state *s, serve_model *m, serve_gen_job *j, serve_reply *r) {
    serve_generator *g = m->gen;
    if (!g) {
        serve_error(r, 500, "no generation threads");
        return 0;
    }
    pthread_mutex_lock(&g->c.mu);
    if (serve_crew_full(&g->c, s->max_queue)) {
        const int busy = g->c.busy, waiting = g->c.waiting;
        pthread_mutex_unlock(&g->c.mu);
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
    g->c.waiting++;
    pthread_cond_broadcast(&g->c.work); /* a thread filling a group wakes too, and an idle one takes another length */
    pthread_mutex_unlock(&g->c.mu);
    return 1;
}

int serve_gen_wait(serve_state *s, serve_model *m, serve_gen_job *j, const serve_request *req) {
    serve_generator *g = m->gen;
    pthread_mutex_lock(&g->c.mu);
    struct timespec ask;
    clock_gettime(CLOCK_REALTIME, &ask);
    while (!j->done) {
        serve_clock_add(&ask, 50);
        while (!j->done && pthread_cond_timedwait(&g->c.back, &g->c.mu, &ask) != ETIMEDOUT) {
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
    pthread_mutex_unlock(&g->c.mu);
    return !atomic_load(&j->cancelled);
}

void serve_gen_depth(serve_model *m, int *waiting, int *busy) {
    serve_crew_depth(m->gen ? &m->gen->c : NULL, waiting, busy);
}
