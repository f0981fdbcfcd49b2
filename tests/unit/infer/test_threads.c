/* One model, many threads: N_THREADS threads, each with its own tfm_context, translate different
 * slices of one set of sources from ONE shared tfm_model, concurrently, and must give exactly the
 * output of a single thread translating the same slices one after another — greedy and beam 4, on
 * a trained model (token ids) and, at the text level, with a tokenizer (tfm_translate_text).
 * A workspace or cache shared through the model, or a model written during decoding, makes the
 * threads' outputs differ from the reference (or crash under ASan/TSan). */
#include "copy_task.h"
#include "ops.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { N_THREADS = 4, N_SRC = 48, S = 6, MAXO = 40, CHUNK = 4 };

/* ---- token ids ------------------------------------------------------------------------------ */

typedef struct {
    const tfm_model *m;
    const tfm_decode_config *dc;
    const int32_t *src; /* (n, S) */
    int n;              /* rows of this slice */
    int32_t *out;       /* (n, MAXO) */
    int *len;           /* (n) */
    tfm_status st;
    char err[256];
} id_job;

/* Translates the job's rows CHUNK at a time with a context of its own. */
static void *run_ids(void *arg) {
    id_job *j = arg;
    tfm_context *ctx = NULL;
    j->st = tfm_context_create(j->m, &ctx);
    for (int r = 0; j->st == TFM_OK && r < j->n; r += CHUNK) {
        const int B = j->n - r < CHUNK ? j->n - r : CHUNK;
        j->st = tfm_model_translate(ctx, j->dc, B, S, j->src + (size_t)r * S, j->out + (size_t)r * MAXO, MAXO,
                                    j->len + r);
    }
    if (j->st != TFM_OK) snprintf(j->err, sizeof j->err, "%s", tfm_last_error());
    tfm_context_free(ctx);
    return NULL;
}

/* Sources of the copy task: 2..6 tokens of ids 4..14, padded with 0. */
static void make_sources(int32_t *src) {
    uint32_t x = 777;
    for (int i = 0; i < N_SRC; i++) {
        x = x * 1103515245u + 12345u;
        const int len = 2 + (int)((x >> 16) % 5);
        for (int s = 0; s < S; s++) {
            x = x * 1103515245u + 12345u;
            src[i * S + s] = s < len ? 4 + (int)((x >> 16) % 11) : 0;
        }
    }
}

static void ids_case(const tfm_model *m, int beam) {
    int32_t src[N_SRC * S];
    make_sources(src);
    int32_t *ref = calloc((size_t)N_SRC * MAXO, sizeof *ref), *got = calloc((size_t)N_SRC * MAXO, sizeof *got);
    int ref_len[N_SRC], got_len[N_SRC];
    tfm_decode_config dc = tfm_decode_config_default();
    dc.beam = beam;
    id_job jobs[N_THREADS];
    const int per = N_SRC / N_THREADS;
    for (int t = 0; t < N_THREADS; t++) /* the reference: the same slices, one thread, one by one */
        jobs[t] = (id_job){m, &dc, src + t * per * S, per, ref + t * per * MAXO, ref_len + t * per, TFM_OK, ""};
    for (int t = 0; t < N_THREADS; t++) {
        run_ids(&jobs[t]);
        CHECK(jobs[t].st == TFM_OK, "beam %d: single-threaded slice %d: %s", beam, t, jobs[t].err);
    }
    pthread_t th[N_THREADS];
    int started[N_THREADS] = {0};
    for (int t = 0; t < N_THREADS; t++) {
        jobs[t] = (id_job){m, &dc, src + t * per * S, per, got + t * per * MAXO, got_len + t * per, TFM_OK, ""};
        started[t] = pthread_create(&th[t], NULL, run_ids, &jobs[t]) == 0;
        CHECK(started[t], "beam %d: cannot start thread %d", beam, t);
    }
    for (int t = 0; t < N_THREADS; t++) {
        if (!started[t]) continue;
        pthread_join(th[t], NULL);
        CHECK(jobs[t].st == TFM_OK, "beam %d: thread %d: %s", beam, t, jobs[t].err);
    }
    int differ = 0, nonempty = 0;
    for (int i = 0; i < N_SRC; i++) {
        const int same = ref_len[i] == got_len[i] &&
                         memcmp(ref + i * MAXO, got + i * MAXO, (size_t)ref_len[i] * sizeof *ref) == 0;
        /* fails (and prints) on the first differing row only; every one is counted */
        CHECK(same || differ++ > 0, "beam %d: row %d (thread %d) differs from the single-threaded output", beam, i,
              i / per);
        nonempty += ref_len[i] > 0;
    }
    /* the model really translates (so the comparison is not between empty outputs) */
    CHECK(nonempty == N_SRC, "beam %d: %d of %d outputs are empty", beam, N_SRC - nonempty, N_SRC);
    printf("ids, beam %d: %d threads x %d sentences, %d differ from one thread\n", beam, N_THREADS, per, differ);
    free(ref);
    free(got);
}

/* ---- text ----------------------------------------------------------------------------------- */

enum { N_LINES = 40 };

typedef struct {
    const tfm_model *m;
    const tfm_tokenizer *tok;
    const tfm_decode_config *dc;
    const char *const *lines;
    size_t n;
    char **out;
    tfm_status st;
    char err[256];
} text_job;

static void *run_text(void *arg) {
    text_job *j = arg;
    tfm_context *ctx = NULL;
    tfm_translate_stats stats;
    j->st = tfm_context_create(j->m, &ctx);
    if (j->st == TFM_OK) j->st = tfm_translate_text(ctx, j->tok, j->dc, j->lines, j->n, 8, j->out, &stats);
    if (j->st != TFM_OK) snprintf(j->err, sizeof j->err, "%s", tfm_last_error());
    tfm_context_free(ctx);
    return NULL;
}

/* The first N_LINES lines of the tokenizer fixture (malloc'd, NUL-terminated); 0 if unreadable. */
static int read_lines(const char *path, char **lines) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char buf[4096];
    int n = 0;
    while (n < N_LINES && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\r\n")] = '\0';
        lines[n] = malloc(strlen(buf) + 1);
        if (!lines[n]) break;
        strcpy(lines[n++], buf);
    }
    fclose(f);
    return n == N_LINES;
}

static void text_case(void) {
    const char *path = test_path("tests/fixtures/tok_train.txt");
    char *lines[N_LINES] = {0};
    CHECK(read_lines(path, lines), "cannot read %d lines of %s", N_LINES, path);
    tfm_tokenizer_train_opts o;
    tfm_tokenizer_train_opts_default(&o);
    o.vocab_size = 400;
    o.num_threads = 1;
    tfm_tokenizer *tok = NULL;
    CHECK(tfm_tokenizer_train(&path, 1, &o, &tok) == TFM_OK, "tokenizer: %s", tfm_last_error());
    tfm_model *m = NULL;
    if (tok) {
        tfm_config c = tfm_config_default(); /* random weights: the outputs only need to be deterministic */
        c.d_model = 32;
        c.n_heads = 4;
        c.d_ff = 64;
        c.n_enc_layers = c.n_dec_layers = 2;
        c.src_vocab = c.tgt_vocab = tfm_tokenizer_vocab_size(tok);
        c.max_len = 64;
        CHECK(tfm_model_create(&c, 5, &m) == TFM_OK, "model: %s", tfm_last_error());
    }
    for (int beam = 1; m && beam <= 2; beam++) {
        tfm_decode_config dc = tfm_decode_config_default();
        dc.beam = beam;
        dc.max_len_a = 0.5f; /* short outputs keep the test quick */
        dc.max_len_b = 4;
        char *ref[N_LINES] = {0}, *got[N_LINES] = {0};
        text_job jobs[N_THREADS];
        const size_t per = N_LINES / N_THREADS;
        for (int t = 0; t < N_THREADS; t++) {
            jobs[t] = (text_job){m, tok, &dc, (const char *const *)lines + t * per, per, ref + t * per, TFM_OK, ""};
            run_text(&jobs[t]);
            CHECK(jobs[t].st == TFM_OK, "text beam %d: single-threaded slice %d: %s", beam, t, jobs[t].err);
        }
        pthread_t th[N_THREADS];
        int started[N_THREADS] = {0};
        for (int t = 0; t < N_THREADS; t++) {
            jobs[t] = (text_job){m, tok, &dc, (const char *const *)lines + t * per, per, got + t * per, TFM_OK, ""};
            started[t] = pthread_create(&th[t], NULL, run_text, &jobs[t]) == 0;
            CHECK(started[t], "text beam %d: cannot start thread %d", beam, t);
        }
        for (int t = 0; t < N_THREADS; t++) {
            if (!started[t]) continue;
            pthread_join(th[t], NULL);
            CHECK(jobs[t].st == TFM_OK, "text beam %d: thread %d: %s", beam, t, jobs[t].err);
        }
        int differ = 0, distinct = 0;
        for (int i = 0; i < N_LINES; i++) {
            const int same = ref[i] && got[i] && strcmp(ref[i], got[i]) == 0;
            CHECK(same || differ++ > 0, "text beam %d: line %d differs: \"%s\" vs \"%s\"", beam, i + 1,
                  ref[i] ? ref[i] : "(null)", got[i] ? got[i] : "(null)");
            distinct += i > 0 && ref[i] && ref[i - 1] && strcmp(ref[i], ref[i - 1]) != 0;
        }
        /* the lines translate to different texts, so a thread reading another's rows would show */
        CHECK(distinct > 0, "text beam %d: every line translates to the same text", beam);
        printf("text, beam %d: %d threads x %zu lines, %d differ, %d neighbours distinct\n", beam, N_THREADS, per,
               differ, distinct);
        for (int i = 0; i < N_LINES; i++) {
            free(ref[i]);
            free(got[i]);
        }
    }
    if (m && tok) { /* a bad decode config is refused by the text call itself (beam 0 divided it: SIGFPE) */
        tfm_context *ctx = NULL;
        char *out1[1] = {NULL};
        CHECK(tfm_context_create(m, &ctx) == TFM_OK, "context: %s", tfm_last_error());
        const int beams[] = {0, -3, 257};
        for (size_t k = 0; ctx && k < sizeof beams / sizeof *beams; k++) {
            tfm_decode_config dc = tfm_decode_config_default();
            dc.beam = beams[k];
            const tfm_status st = tfm_translate_text(ctx, tok, &dc, (const char *const *)lines, 1, 8, out1, NULL);
            CHECK(st == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "beam") && out1[0] == NULL,
                  "beam %d: status %d (%s)", beams[k], (int)st, tfm_last_error());
        }
        tfm_decode_config dc = tfm_decode_config_default();
        dc.max_len_a = -1.0f;
        CHECK(tfm_translate_text(ctx, tok, &dc, (const char *const *)lines, 1, 8, out1, NULL) == TFM_ERR_INVALID_ARG,
              "a negative length limit accepted");
        tfm_context_free(ctx);
    }
    tfm_model_free(m);
    tfm_tokenizer_free(tok);
    for (int i = 0; i < N_LINES; i++) free(lines[i]);
}

int main(void) {
    ops_set_threads(1); /* N_THREADS concurrent callers: no OpenMP teams on top of them */
    tfm_model *m = copy_task_model(150);
    CHECK(m != NULL, "training the copy model failed: %s", tfm_last_error());
    if (m) {
        ids_case(m, 1);
        ids_case(m, 4);
    }
    tfm_model_free(m);
    text_case();
    return test_finish("threads");
}
