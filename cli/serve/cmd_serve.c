#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime, sigwait, nanosleep, strncasecmp */
/* tfm serve (docs/SERVE.md): translation, completions and embeddings over HTTP, with
 * LibreTranslate's and OpenAI's request shapes. Opens each --model once (every startup error
 * before binding), listens (GET /health is 503 until ready), then creates --threads contexts; SIGTERM or SIGINT stop accepting,
 * let the open connections finish (up to --drain seconds, 60 by default) and exit 0. Built only with libmicrohttpd. */
#include "args.h"
#include "commands.h"
#include "decoding.h"
#include "serve.h"
#ifdef TFM_HAVE_MHD
#include "http.h"
#endif

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int run(int argc, char **argv);

const cli_command cmd_serve = {
    "serve", "translation, completions and embeddings over HTTP (LibreTranslate- and OpenAI-compatible)",
    "tfm serve --model M[@SRC:TGT] [--model M2 ...] [--host 127.0.0.1] [--port 8080] [--api-key K] [--threads N]",
    run};

const char *cli_serve_library(void) {
#ifdef TFM_HAVE_MHD
    static char buf[64];
    snprintf(buf, sizeof buf, "libmicrohttpd %s", serve_http_version());
    return buf;
#else
    return NULL;
#endif
}

#define MAX_MODELS 16

/* Every value of --model (cli_parse keeps only the last), skipping the values of other options. */
static int model_specs(int argc, char **argv, const cli_opt *opts, size_t n_opts, char **specs) {
    int n = 0;
    for (int i = 1; i + 1 < argc; i++) {
        size_t k = 0;
        while (k < n_opts && strcmp(opts[k].name, argv[i]) != 0) k++;
        if (k == n_opts || opts[k].kind == OPT_FLAG) continue;
        if (strcmp(argv[i], "--model") == 0) {
            if (n == MAX_MODELS) return -1;
            specs[n++] = argv[i + 1];
        }
        i++;
    }
    return n;
}

static int run(int argc, char **argv) {
    const char *model = NULL, *host = "127.0.0.1", *api_key = NULL;
    int port = 8080, workers = 2, max_queue = 64, max_body = 1 << 20, max_conn = 256, timeout_s = 30, drain_s = 60;
    int max_batch_tokens = 0, batch_wait_ms = 0;
    decode_flags f = DECODE_FLAGS_DEFAULT;
    cli_opt opts[] = {
        {"--model", OPT_STR, &model, 1,
         "a model, repeatable: a tfm checkpoint (translation: give its pair as M@SRC:TGT, e.g. m.safetensors@en:es; "
         "decoder-only: completions) or a BERT folder (embeddings)"},
        {"--host", OPT_STR, &host, 0, "IPv4 address to listen on (0.0.0.0: every interface)"},
        {"--port", OPT_INT, &port, 0, "TCP port (0: a free one, printed on stderr)"},
        {"--api-key", OPT_STR, &api_key, 0, "require this key (Authorization: Bearer K, or the field api_key)"},
        {"--threads", OPT_INT, &workers, 0, "workers: requests computed at once, one context each per model"},
        {"--max-queue", OPT_INT, &max_queue, 0, "requests waiting for a worker; more get 503 with Retry-After"},
        {"--max-batch-tokens", OPT_INT, &max_batch_tokens, 0,
         "a shared translation round's sentences x its longest, in tokens (0: only --batch-size bounds it)"},
        {"--batch-wait-ms", OPT_INT, &batch_wait_ms, 0,
         "a completion batch that starts (no row yet) waits this long for more requests (0: starts at once)"},
        {"--max-body", OPT_INT, &max_body, 0, "largest request body in bytes; more gets 413"},
        {"--max-connections", OPT_INT, &max_conn, 0, "connections open at once; more are refused"},
        {"--timeout", OPT_INT, &timeout_s, 0, "seconds a connection may stay idle (a slow client) before it is closed"},
        {"--drain", OPT_INT, &drain_s, 0,
         "after SIGTERM/SIGINT, seconds the requests in flight may take to finish before they are cut"},
        DECODE_OPTS(f),
    };
    const size_t n_opts = sizeof opts / sizeof opts[0];
    int r = cli_parse(&cmd_serve, argc, argv, opts, n_opts);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    char *specs[MAX_MODELS];
    const int n_models = model_specs(argc, argv, opts, n_opts, specs);
    if (n_models < 0) {
        cli_error("serve", "at most %d --model", MAX_MODELS);
        return EXIT_USAGE;
    }
    if (port < 0 || port > 65535 || workers < 1 || workers > 256 || max_queue < 0 || max_body < 1 || max_conn < 1 ||
        timeout_s < 1 || drain_s < 1 || drain_s > 86400 || max_batch_tokens < 0 || batch_wait_ms < 0 || batch_wait_ms > 10000) {
        cli_error("serve", "--port must be in [0, 65535], --threads in [1, 256], --max-queue and --max-batch-tokens "
                           ">= 0, --batch-wait-ms in [0, 10000], --max-body, --max-connections and --timeout >= 1, "
                           "--drain in [1, 86400]");
        return EXIT_USAGE;
    }
    serve_state s = {.workers = workers, .max_queue = max_queue, .max_body = (size_t)max_body, .api_key = api_key,
                     .batch = f.batch, .max_batch_tokens = (size_t)max_batch_tokens, .batch_wait_ms = batch_wait_ms};
    if (!make_config("serve", &f, &s.dc)) return EXIT_USAGE;
    if (f.tgt_lang) {
        cli_error("serve", "--tgt-lang: give each model's pair as --model M@SRC:TGT (NLLB: DIR@eng_Latn:spa_Latn)");
        return EXIT_USAGE;
    }
    if (api_key && !api_key[0]) {
        cli_error("serve", "--api-key must not be empty");
        return EXIT_USAGE;
    }
#ifndef TFM_HAVE_MHD
    (void)n_models;
    cli_error("serve", "this tfm was built without libmicrohttpd: run scripts/install-deps "
                       "(apt-get install libmicrohttpd-dev) and rebuild");
    return EXIT_RUNTIME;
#else
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    /* the signals wait for sigwait below: every thread started from here on inherits the mask */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    int bound = 0, rc = EXIT_RUNTIME;
    /* every startup error (a spec, a model, a pair) before binding: no "listening" line then */
    void *d = serve_models_open("serve", &s, specs, n_models)
                  ? serve_http_start(&s, host, port, max_conn, timeout_s, &bound) : NULL;
    if (!d) {
        serve_models_free(&s);
        pthread_cond_destroy(&s.cv);
        pthread_mutex_destroy(&s.mu);
        return EXIT_RUNTIME;
    }
    fprintf(stderr, "tfm serve: listening on %s:%d\n", host, bound);
    if (serve_models_start("serve", &s)) {
        atomic_store(&s.ready, 1);
        fprintf(stderr, "tfm serve: ready: %d model(s), %d worker(s)\n", n_models, workers);
        int sig = 0;
        sigwait(&sigs, &sig);
        fprintf(stderr, "tfm serve: %s: finishing the requests in flight\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        atomic_store(&s.stopping, 1);
        serve_http_quiesce(d);
        /* the open connections finish their requests (at most --drain seconds) */
        for (long i = 0; i < 100L * drain_s && serve_http_connections(d) > 0; i++)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        rc = 0;
    }
    serve_http_stop(d);
    serve_models_free(&s);
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    return rc;
#endif
}
