#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime, sigwait, nanosleep, strncasecmp */
/* POST /v1/completions of tfm serve (routes.h): tfm generate's sampling (the same text for the same
 * seed: generated in batches shared across clients, generator.c), its text settled by
 * tfm_text_stream (a UTF-8 character is never cut), stop sequences, and stream: true as
 * Server-Sent Events from a thread that waits for the generation. */
#include "routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_STOP 4

typedef struct {
    tfm_text_stream ts;
    size_t prompt_bytes; /* what the prompt's own push handed out (not part of the completion) */
    char *text;          /* the completion so far, NUL-terminated */
    size_t len, cap;
    size_t sent;         /* bytes of text already streamed */
    const char *stop[MAX_STOP];
    char *stop_copy[MAX_STOP];
    int n_stop, stopped, failed, tokens;
    serve_stream *stream; /* NULL: not streaming */
} completion;

struct serve_stream {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *buf; /* events not yet read */
    size_t len, cap, off;
    int done;
    atomic_int cancel; /* the client went away */
    /* the work */
    serve_state *s;
    serve_model *m;
    serve_gen_job job;
    completion c;
    tfm_sample_config sc;
    int32_t *pids;
    int np, max_tokens;
    char id[32];
    long created;
};

static int append(char **buf, size_t *len, size_t *cap, const char *p, size_t n) {
    if (*len + n + 1 > *cap) {
        size_t nc = (*cap ? *cap * 2 : 256);
        while (nc < *len + n + 1) nc *= 2;
        char *b = realloc(*buf, nc);
        if (!b) return 0;
        *buf = b;
        *cap = nc;
    }
    if (n) memcpy(*buf + *len, p, n); /* p may be NULL when n is 0 */
    *len += n;
    (*buf)[*len] = '\0';
    return 1;
}

/* One "data: {...}\n\n" event with the text t[0..n) and finish_reason (NULL: null). */
static void stream_event(serve_stream *st, const char *t, size_t n, const char *finish) {
    cJSON *j = cJSON_CreateObject(), *choices = cJSON_AddArrayToObject(j, "choices"), *c = cJSON_CreateObject();
    char *text = malloc(n + 1);
    if (text) {
        memcpy(text, t, n);
        text[n] = '\0';
    }
    cJSON_AddStringToObject(j, "id", st->id);
    cJSON_AddStringToObject(j, "object", "text_completion");
    cJSON_AddNumberToObject(j, "created", (double)st->created);
    cJSON_AddStringToObject(j, "model", st->m->name);
    cJSON_AddItemToArray(choices, c);
    cJSON_AddStringToObject(c, "text", text ? text : "");
    cJSON_AddNumberToObject(c, "index", 0);
    cJSON_AddNullToObject(c, "logprobs");
    if (finish) cJSON_AddStringToObject(c, "finish_reason", finish);
    else cJSON_AddNullToObject(c, "finish_reason");
    char *json = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    free(text);
    pthread_mutex_lock(&st->mu);
    if (!json || !append(&st->buf, &st->len, &st->cap, "data: ", 6) || !append(&st->buf, &st->len, &st->cap, json, strlen(json)) ||
        !append(&st->buf, &st->len, &st->cap, "\n\n", 2))
        st->c.failed = 1;
    pthread_cond_signal(&st->cv);
    pthread_mutex_unlock(&st->mu);
    free(json);
}

/* The length of the longest suffix of text that is a proper prefix of a stop sequence: those bytes
 * wait, as they may begin one. */
static size_t stop_holdback(const completion *c) {
    size_t best = 0;
    for (int k = 0; k < c->n_stop; k++) {
        const size_t sl = strlen(c->stop[k]);
        for (size_t h = sl - 1; h > best; h--)
            if (h <= c->len && memcmp(c->text + c->len - h, c->stop[k], h) == 0) {
                best = h;
                break;
            }
    }
    return best;
}

/* Pushes ids to the text stream, appends the newly settled text, cuts it at a stop sequence and
 * streams what can no longer change. Returns nonzero to stop generating. */
static int completion_push(completion *c, const int32_t *ids, size_t n, int final) {
    const char *p;
    size_t len;
    if (tfm_text_stream_push(&c->ts, ids, n, final, &p, &len) != TFM_OK || !append(&c->text, &c->len, &c->cap, p, len)) {
        c->failed = 1;
        return 1;
    }
    const size_t from = c->len > len ? c->len - len : 0;
    for (int k = 0; k < c->n_stop; k++) {
        const size_t sl = strlen(c->stop[k]);
        const size_t start = from >= sl ? from - sl + 1 : 0;
        const char *hit = strstr(c->text + start, c->stop[k]);
        if (hit && (size_t)(hit - c->text) < c->len) {
            c->len = (size_t)(hit - c->text);
            c->text[c->len] = '\0';
            c->stopped = 1;
        }
    }
    if (c->stream) {
        const size_t safe = c->stopped || final ? c->len : c->len - stop_holdback(c);
        if (safe > c->sent) stream_event(c->stream, c->text + c->sent, safe - c->sent, NULL);
        if (safe > c->sent) c->sent = safe;
        if (atomic_load(&c->stream->cancel)) return 1;
    }
    return c->stopped || c->failed;
}

static int on_token(int32_t id, void *user) {
    completion *c = user;
    c->tokens++;
    return completion_push(c, &id, 1, 0);
}

static void completion_free(completion *c) {
    tfm_text_stream_free(&c->ts);
    free(c->text);
    for (int k = 0; k < c->n_stop; k++) free(c->stop_copy[k]);
}

/* The job of a completion into c: its prompt, sampling and budget, its tokens to on_token. */
static void job_init(serve_gen_job *j, const tfm_sample_config *sc, const int32_t *pids, int np, int max_tokens,
                     completion *c) {
    memset(j, 0, sizeof *j);
    j->sc = *sc;
    j->prompt = pids;
    j->np = np;
    j->max_tokens = max_tokens;
    j->on_token = on_token;
    j->user = c;
    atomic_init(&j->cancelled, 0);
}

/* After its job is done: the finish reason ("stop": EOS or a stop sequence, "length"), or NULL on
 * error (j->err). */
static const char *finish_generation(const serve_gen_job *j, int max_tokens, completion *c) {
    if (j->st != TFM_OK || c->failed) return NULL;
    if (!c->stopped) completion_push(c, NULL, 0, 1);
    if (c->failed) return NULL;
    return c->stopped || c->tokens < max_tokens ? "stop" : "length";
}

static void *stream_main(void *arg) {
    serve_stream *st = arg;
    serve_gen_wait(st->s, st->m, &st->job, NULL);
    const char *finish = finish_generation(&st->job, st->max_tokens, &st->c);
    atomic_fetch_add(&st->s->metrics.tokens_in, (long)st->np);
    atomic_fetch_add(&st->s->metrics.tokens_out, (long)st->c.tokens);
    if (!atomic_load(&st->cancel)) {
        if (finish) {
            stream_event(st, "", 0, finish);
        } else {
            char msg[400];
            snprintf(msg, sizeof msg, "data: {\"error\": {\"message\": \"generation failed\", \"type\": \"server_error\", "
                                      "\"param\": null, \"code\": null}}\n\n");
            pthread_mutex_lock(&st->mu);
            append(&st->buf, &st->len, &st->cap, msg, strlen(msg));
            pthread_mutex_unlock(&st->mu);
        }
    }
    pthread_mutex_lock(&st->mu);
    if (!append(&st->buf, &st->len, &st->cap, "data: [DONE]\n\n", 14)) st->c.failed = 1;
    st->done = 1;
    pthread_cond_signal(&st->cv);
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

long serve_stream_read(serve_stream *st, char *buf, size_t max) {
    pthread_mutex_lock(&st->mu);
    while (st->off == st->len && !st->done) pthread_cond_wait(&st->cv, &st->mu);
    long n = -1;
    if (st->off < st->len) {
        const size_t k = st->len - st->off < max ? st->len - st->off : max;
        memcpy(buf, st->buf + st->off, k);
        st->off += k;
        n = (long)k;
    }
    pthread_mutex_unlock(&st->mu);
    return n;
}

void serve_stream_close(serve_stream *st) {
    if (!st) return;
    atomic_store(&st->cancel, 1);
    atomic_store(&st->job.cancelled, 1); /* still queued: it never runs; running: its row stops */
    pthread_join(st->thread, NULL);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
    completion_free(&st->c);
    free(st->pids);
    free(st->buf);
    free(st);
}

/* The request's stop sequences into c (copies); 0 after a 400. */
static int read_stop(const cJSON *body, completion *c, serve_reply *r) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(body, "stop");
    if (!f || cJSON_IsNull(f)) return 1;
    const cJSON *one = cJSON_IsString(f) ? f : NULL;
    if (!one && !(cJSON_IsArray(f) && cJSON_GetArraySize(f) <= MAX_STOP)) {
        serve_error(r, 400, "stop: must be a string or an array of at most %d strings", MAX_STOP);
        return 0;
    }
    for (const cJSON *e = one ? one : f->child; e; e = one ? NULL : e->next) {
        if (!cJSON_IsString(e) || !e->valuestring[0]) {
            serve_error(r, 400, "stop: each stop sequence must be a non-empty string");
            return 0;
        }
        if (!(c->stop_copy[c->n_stop] = strdup(e->valuestring))) {
            serve_error(r, 500, "out of memory");
            return 0;
        }
        c->stop[c->n_stop] = c->stop_copy[c->n_stop];
        c->n_stop++;
    }
    return 1;
}

void serve_completions(serve_state *s, const serve_request *q, const cJSON *body, serve_reply *r) {
    static atomic_long counter;
    serve_model *m = serve_find_model(s, SERVE_GENERATE, body, r);
    if (!m) return;
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(body, "prompt");
    if (cJSON_IsArray(prompt) && cJSON_GetArraySize(prompt) == 1) prompt = prompt->child;
    if (!cJSON_IsString(prompt)) {
        serve_error(r, 400, "prompt: required, a string (or an array of one string)");
        return;
    }
    double max_tokens = 16, temperature = 1, top_p = 1, top_k = 0, seed = 1, n = 1;
    const cJSON *stream = cJSON_GetObjectItemCaseSensitive(body, "stream");
    if (!serve_number(body, "max_tokens", 1, 0, 1e9, &max_tokens, r) ||
        !serve_number(body, "temperature", 0, 0, 1e30, &temperature, r) ||
        !serve_number(body, "top_p", 0, 0, 1, &top_p, r) || !serve_number(body, "top_k", 1, 0, 1e9, &top_k, r) ||
        !serve_number(body, "seed", 1, 0, 2147483647.0, &seed, r) || !serve_number(body, "n", 1, 1, 1, &n, r))
        return;
    if (stream && !cJSON_IsNull(stream) && !cJSON_IsBool(stream)) {
        serve_error(r, 400, "stream: must be true or false");
        return;
    }
    tfm_sample_config sc = {(float)temperature, (int)top_k, (float)top_p, (uint64_t)seed};
    if (tfm_sample_config_validate(&sc) != TFM_OK) {
        /* "sampling: top_p must be ..." -> "top_p: top_p must be ...": the message starts with the field */
        const char *e = tfm_last_error();
        if (strncmp(e, "sampling: ", 10) == 0) e += 10;
        serve_error(r, 400, "%.*s: %s", (int)strcspn(e, " "), e, e);
        return;
    }
    completion c = {0};
    int32_t *pids = NULL;
    size_t np = 0;
    if (!read_stop(body, &c, r)) goto fail;
    if (tfm_tokenizer_encode(m->tok, prompt->valuestring, strlen(prompt->valuestring), &pids, &np) != TFM_OK) {
        serve_error(r, 400, "prompt: %s", tfm_last_error());
        goto fail;
    }
    const int max_len = tfm_model_config(m->model)->max_len;
    if (np + 1 > (size_t)max_len) {
        serve_error(r, 400, "prompt: %zu tokens; with BOS that exceeds the model's max_len %d", np, max_len);
        goto fail;
    }
    /* as tfm generate: token k is predicted at position np + k < max_len */
    int max_new = (int)max_tokens;
    if ((size_t)max_new > (size_t)max_len - np) max_new = max_len - (int)np;
    const char *p;
    size_t plen;
    if (tfm_text_stream_init(&c.ts, m->tok, pids, np, (size_t)max_new) != TFM_OK ||
        tfm_text_stream_push(&c.ts, NULL, 0, 0, &p, &plen) != TFM_OK) {
        serve_error(r, 500, "%s", tfm_last_error());
        goto fail;
    }
    c.prompt_bytes = plen;
    char id[32];
    snprintf(id, sizeof id, "cmpl-%ld", atomic_fetch_add(&counter, 1) + 1);
    if (cJSON_IsTrue(stream)) {
        serve_stream *st = calloc(1, sizeof *st);
        if (!st) {
            serve_error(r, 500, "out of memory");
            goto fail;
        }
        *st = (serve_stream){.s = s, .m = m, .c = c, .sc = sc, .pids = pids, .np = (int)np, .max_tokens = max_new,
                             .created = (long)time(NULL)};
        memcpy(st->id, id, sizeof id);
        st->c.stream = st;
        job_init(&st->job, &sc, pids, (int)np, max_new, &st->c);
        if (!serve_gen_submit(s, m, &st->job, r)) {
            free(st);
            goto fail;
        }
        pthread_mutex_init(&st->mu, NULL);
        pthread_cond_init(&st->cv, NULL);
        if (pthread_create(&st->thread, NULL, stream_main, st) != 0) {
            atomic_store(&st->job.cancelled, 1);
            serve_gen_wait(s, m, &st->job, NULL); /* off the queue, or its row stopped */
            pthread_mutex_destroy(&st->mu);
            pthread_cond_destroy(&st->cv);
            free(st);
            serve_error(r, 500, "cannot start a thread");
            goto fail;
        }
        r->status = 200;
        r->content_type = "text/event-stream";
        r->stream = st;
        return;
    }
    serve_gen_job job;
    job_init(&job, &sc, pids, (int)np, max_new, &c);
    if (!serve_gen_submit(s, m, &job, r)) goto fail;
    const int answered = serve_gen_wait(s, m, &job, q);
    atomic_fetch_add(&s->metrics.tokens_in, (long)np);
    atomic_fetch_add(&s->metrics.tokens_out, (long)c.tokens);
    if (!answered) {
        serve_error(r, 499, "the client closed the connection");
        goto fail;
    }
    const char *finish = finish_generation(&job, max_new, &c);
    if (!finish) {
        serve_error(r, 500, "generation failed: %s", job.st != TFM_OK ? job.err : "out of memory");
        goto fail;
    }
    cJSON *j = cJSON_CreateObject(), *choices = cJSON_AddArrayToObject(j, "choices"), *ch = cJSON_CreateObject(),
          *usage = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", id);
    cJSON_AddStringToObject(j, "object", "text_completion");
    cJSON_AddNumberToObject(j, "created", (double)time(NULL));
    cJSON_AddStringToObject(j, "model", m->name);
    cJSON_AddItemToArray(choices, ch);
    cJSON_AddStringToObject(ch, "text", c.text ? c.text : "");
    cJSON_AddNumberToObject(ch, "index", 0);
    cJSON_AddNullToObject(ch, "logprobs");
    cJSON_AddStringToObject(ch, "finish_reason", finish);
    cJSON_AddItemToObject(j, "usage", usage);
    cJSON_AddNumberToObject(usage, "prompt_tokens", (double)np);
    cJSON_AddNumberToObject(usage, "completion_tokens", c.tokens);
    cJSON_AddNumberToObject(usage, "total_tokens", (double)np + c.tokens);
    serve_json(r, j);
fail:
    completion_free(&c);
    free(pids);
}
