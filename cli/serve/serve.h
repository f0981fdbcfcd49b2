/* tfm serve (docs/SERVE.md): the models a server holds, the worker contexts they lend to requests,
 * and the request/reply types the routes use. Nothing here knows HTTP's library: cli/serve/http.c
 * turns libmicrohttpd's calls into serve_request and serve_reply into its responses. */
#ifndef TFM_CLI_SERVE_H
#define TFM_CLI_SERVE_H

#include "tfm/tfm.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

typedef enum { SERVE_TRANSLATE, SERVE_GENERATE, SERVE_EMBED } serve_kind;

typedef struct serve_batcher serve_batcher;     /* batcher.c */
typedef struct serve_generator serve_generator; /* generator.c */

/* One --model: loaded once, read-only; `workers` contexts of it are lent out one request at a time. */
typedef struct {
    const char *path;      /* as given, without its @SRC:TGT */
    char name[128];        /* its id in /v1/models and "model": the file name without .safetensors, or the folder's */
    char src[32], tgt[32]; /* translation: the language pair of --model M@SRC:TGT */
    int32_t first_id;      /* translation: the target code's token every output starts with (NLLB), or -1 */
    serve_kind kind;
    tfm_model *model;      /* translate, generate (NULL for embed: the embedder owns its model) */
    tfm_tokenizer *tok;
    tfm_embedder *emb;     /* embed */
    tfm_context **ctx;     /* [workers] */
    unsigned char *busy;   /* [workers], under serve_state.mu */
    serve_batcher *batcher; /* translate: the shared rounds (batcher.c) */
    serve_generator *gen;   /* generate: the shared batches (generator.c) */
} serve_model;

/* What GET /metrics reports (metrics.c): requests by route and status, latency, tokens. */
#define SERVE_ROUTES 9 /* the route table's paths, then "other" (serve_route_index) */
#define SERVE_CODES 9  /* 200 400 403 404 405 413 500 503, then any other */
#define SERVE_BUCKETS 9
typedef struct {
    atomic_long requests[SERVE_ROUTES][SERVE_CODES];
    atomic_long latency_le[SERVE_BUCKETS]; /* requests answered within each bucket's bound */
    atomic_long latency_count, latency_us_sum;
    atomic_long tokens_in, tokens_out; /* subword tokens read (sources, prompts) and written */
    atomic_long batches, batch_sentences; /* translation rounds run, and the sentences in them */
    atomic_long cancelled;                /* requests whose client went away before the reply */
    atomic_long gen_groups, gen_group_rows; /* completion batches started (a thread's batch going
                                               from no row to rows), and the completions run in them */
    atomic_long gen_joined;                 /* completions that joined a batch already running */
    atomic_long gen_steps, gen_step_rows;   /* decoding steps of completion batches, and their rows */
} serve_metrics;

typedef struct {
    serve_model *models;
    int n_models;
    int workers;         /* requests computed at once (one context each) */
    int max_queue;       /* requests waiting for a worker beyond those; more get 503 */
    size_t max_body;     /* bytes of a request body; more get 413 */
    const char *api_key; /* NULL: none needed */
    tfm_decode_config dc;
    int batch;               /* --batch-size: sentences of a translation round (tfm_translate_text's batch_sentences) */
    size_t max_batch_tokens; /* --max-batch-tokens: a round's sentences × its longest, in tokens; 0: no limit */
    int batch_wait_ms;       /* --batch-wait-ms: a completion batch that starts waits so long for more requests */
    atomic_int ready; /* 1 once every model is loaded: /health is 503 before */
    atomic_int stopping; /* 1 after SIGTERM: replies close their connection */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running, waiting; /* under mu */
    serve_metrics metrics;
} serve_state;

/* A request as the routes see it: the body whole, NUL-terminated (len bytes; it may hold NULs). */
typedef struct {
    const char *method, *path;
    const char *content_type; /* NULL if none */
    const char *auth;         /* the Authorization header, NULL if none */
    const char *body;
    size_t len;
    /* nonzero once the client has closed the connection (http.c); NULL: never asked */
    int (*gone)(const void *conn);
    const void *conn;
} serve_request;

typedef struct serve_stream serve_stream;

/* What a route answers: a status and a malloc'd body, or a stream (Server-Sent Events). */
typedef struct {
    int status;
    char *body;               /* malloc'd, NUL-terminated */
    const char *content_type; /* static */
    int retry_after;          /* seconds, 0: no Retry-After header */
    const char *allow;        /* 405: the Allow header */
    int truncated;            /* /translate: texts of q cut to the model's max_len (X-Tfm-Truncated), 0: none */
    int max_len;              /* with truncated: that max_len, in tokens */
    serve_stream *stream;     /* non-NULL: the body comes from serve_stream_read */
    const char *csp;          /* the Content-Security-Policy header (static), NULL: none */
    int openai_errors;        /* set before routing: serve_error writes OpenAI's shape (the /v1/ routes) */
} serve_reply;

/* Routes a request (routes.c): fills *r, never fails (out of memory gives a 500 without body). */
void serve_route(serve_state *s, const serve_request *q, serve_reply *r);

/* Sets *r to `status` with the body {"error": "<message>"} (LibreTranslate's shape), or with
 * r->openai_errors OpenAI's {"error": {"message", "type", "param", "code": null}}: type
 * invalid_request_error (400, 405, 413), authentication_error (403), not_found_error (404),
 * unavailable_error (503) or server_error; param the field a 400's message starts with
 * ("max_tokens: ..." -> "max_tokens", "input[1]: ..." -> "input[1]"), else null. */
void serve_error(serve_reply *r, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Sets *r to 200 with the JSON `j` printed (j is freed). */
void serve_json(serve_reply *r, cJSON *j);

/* The body as a JSON object (body.c): JSON (application/json, or no Content-Type), or an HTML
 * form (application/x-www-form-urlencoded: every field a string). Checks the body is UTF-8.
 * Returns NULL after setting a 400 naming what is wrong. */
cJSON *serve_body_object(const serve_request *q, serve_reply *r);

/* 1 if the body is an HTML form (Content-Type application/x-www-form-urlencoded). */
int serve_body_is_form(const serve_request *q);

/* 1 if no key is set, or the request carries it: "Authorization: Bearer KEY", or the field
 * "api_key" of `body` (LibreTranslate's; body may be NULL). Compared in constant time. Else 0,
 * after setting a 403. */
int serve_authorized(const serve_state *s, const serve_request *q, const cJSON *body, serve_reply *r);

/* The model of kind `kind` the request names in its field "model", or the only one of that kind
 * when it names none. NULL after setting a 400 naming the field. */
serve_model *serve_find_model(serve_state *s, serve_kind kind, const cJSON *body, serve_reply *r);

/* A non-empty string or array of strings in field `name` of body: *items (malloc'd array of
 * pointers into body), *n, *is_array. 0 after setting a 400 naming the field (and item). */
int serve_strings(const cJSON *body, const char *name, const char ***items, size_t *n, int *is_array,
                  serve_reply *r);

/* Takes a worker context of model m, waiting while all workers are busy. Returns NULL (after
 * setting a 503 with Retry-After in *r) when `workers + max_queue` requests are already admitted. */
tfm_context *serve_acquire(serve_state *s, serve_model *m, serve_reply *r);
void serve_release(serve_state *s, serve_model *m, tfm_context *ctx);

/* The threads behind a model's shared queue (crew.c; batcher.c and generator.c): one per context
 * of the model, thread k getting {owner, k}; `mu` guards the queue and the counts, `work` wakes the
 * threads, `back` the requests waiting for results. */
typedef struct {
    void *owner;
    int k;
} serve_crew_arg;
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t work, back;
    int stop, live, n_threads;
    int busy, waiting; /* threads computing; requests queued (under mu) */
    pthread_t *threads;
    serve_crew_arg *args;
} serve_crew;

/* Starts n threads running fn({owner, k}); 0 if one could not start (or out of memory): then
 * serve_crew_stop still stops those that did. */
int serve_crew_start(serve_crew *c, int n, void *(*fn)(void *), void *owner);
/* Sets stop, wakes the threads (each returns once the queue is empty), joins and frees them;
 * safe on a crew never started (zeroed) or already stopped. */
void serve_crew_stop(serve_crew *c);
/* Its queued requests and busy threads (0 and 0 for NULL). */
void serve_crew_depth(serve_crew *c, int *waiting, int *busy);
/* Under mu: every thread busy and max_queue requests already waiting (a new translation request
 * gets 503; the generator's threads each hold up to 8 rows, so it counts free rows: generator.c). */
int serve_crew_full(const serve_crew *c, int max_queue);
/* t += ms milliseconds (t from clock_gettime(CLOCK_REALTIME), for pthread_cond_timedwait). */
void serve_clock_add(struct timespec *t, long ms);

/* Cross-client translation batches (batcher.c). serve_batcher_start starts `workers` threads on
 * m's contexts (0 on failure: out of memory, no thread); serve_batcher_stop lets them finish the
 * queue, joins them and frees the batcher (safe without one). */
int serve_batcher_start(serve_state *s, serve_model *m);
void serve_batcher_stop(serve_model *m);

/* Translates q[0..n) (as tfm_translate_text_nbest: out[i·n_best + k] the k-th best translation of
 * q[i], malloc'd, one line; NULL where the beam finished fewer; n_best in [1, --beam]) in rounds
 * shared with the other requests of model m: at most --batch-size sentences and --max-batch-tokens
 * padded tokens a round, each sorted and batched by tfm_translate_text_nbest. Waits for the result;
 * while it waits, asks req->gone every 50 ms: a client gone cancels the request (its sentences
 * not yet in a round are dropped). Returns 1, or 0 after setting *r: 503 with Retry-After when
 * every thread of m computes and --max-queue requests already wait; 400 for a sentence the
 * tokenizer refuses; 499 for a cancelled request; 500 out of memory. Every out[i] is NULL then. */
int serve_translate_batched(serve_state *s, serve_model *m, const serve_request *req, const char *const *q, size_t n,
                            int n_best, char **out, serve_reply *r);

/* The requests of m waiting for a round, and its threads computing one. */
void serve_batcher_depth(serve_model *m, int *waiting, int *busy);

/* A completion to generate in a shared batch (generator.c): filled by the caller, which keeps it alive
 * until serve_gen_wait returns. on_token gets each token as it is chosen (in a generation thread);
 * nonzero stops this request's row. */
typedef struct serve_gen_job {
    tfm_sample_config sc;
    const int32_t *prompt;
    int np, max_tokens;
    int (*on_token)(int32_t id, void *user);
    void *user;
    atomic_int cancelled; /* set by serve_gen_wait (client gone) or the caller (a stream closed) */
    int queued, done;     /* under the generator's lock */
    tfm_status st;        /* once done */
    char err[256];
    struct serve_gen_job *link;
} serve_gen_job;

/* Completions batched across clients (continuous batching). serve_gen_start starts `workers` threads on m's
 * contexts (0 on failure); serve_gen_stop lets them finish the queue, joins them, frees it all
 * (safe without one). */
int serve_gen_start(serve_state *s, serve_model *m);
void serve_gen_stop(serve_model *m);

/* Queues j; 0 after setting *r to 503 with Retry-After when every thread of m generates and
 * --max-queue requests already wait (500 without threads). */
int serve_gen_submit(serve_state *s, serve_model *m, serve_gen_job *j, serve_reply *r);

/* Waits until j is done: a batch generated it (j->st says how) or it was cancelled. Asks
 * req->gone every 50 ms (req may be NULL: a stream, which sets j->cancelled itself); a job
 * cancelled while queued never runs, one in a batch leaves it before the next step. Returns 0 if
 * it was cancelled. */
int serve_gen_wait(serve_state *s, serve_model *m, serve_gen_job *j, const serve_request *req);

/* The completion requests of m waiting for a row of a batch, and its threads whose batch has rows. */
void serve_gen_depth(serve_model *m, int *waiting, int *busy);

/* Streams (complete.c): up to `max` bytes of the next events into buf, waiting for them; returns
 * the count, or -1 at the end of the stream. serve_stream_close cancels the work if it still runs,
 * waits for it and frees everything. */
long serve_stream_read(serve_stream *st, char *buf, size_t max);
void serve_stream_close(serve_stream *st);

/* Counts an answered request (metrics.c): its path, status and seconds from its start. */
void serve_metrics_record(serve_state *s, const char *path, int status, double seconds);

/* GET /metrics: the counters in Prometheus' text format (version 0.0.4). */
void serve_metrics_reply(serve_state *s, serve_reply *r);

/* 1 for the OpenAI-compatible paths (/v1/...), whose errors take OpenAI's shape (serve_error). */
int serve_openai_path(const char *path);

/* The index of a path in the route table (0..SERVE_ROUTES-2), or SERVE_ROUTES-1 for any other. */
int serve_route_index(const char *path);

/* The path of route k of the table, "other" past it. */
const char *serve_route_path(int k);

/* The loaded models (models.c): serve_models_open reads every spec (PATH or PATH@SRC:TGT), loads
 * its weights and tokenizer and checks its kind against its pair and the names — every startup
 * error, before the server binds; serve_models_start then creates the contexts and threads. */
int serve_models_open(const char *cmd, serve_state *s, char **specs, int n);
int serve_models_start(const char *cmd, serve_state *s);
void serve_models_free(serve_state *s);

#endif
