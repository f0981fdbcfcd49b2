/* tfm_gen_batch (include/tfm/generate.h), continuous batching: rows added at steps 0, 3 and 7 with
 * prompts of different lengths each get exactly tfm_generate's tokens; a slot freed by a finished
 * row and reused gives the new row's tokens exactly; 40 generations through batches of 3 and 8
 * rows, joining whenever a slot is free (greedy and sampled, BOS and prefix inputs, budgets 0..20,
 * some stopped by on_token, some cancelled), each equal to tfm_generate or tfm_generate_prefix
 * alone, also with the prefill in chunks of 3 positions (both contexts' prefill_chunk: prompts of up
 * to 12 positions in up to 4 chunks); the ends are reported with the right reason and count; the
 * cache grows while a row waits for its first token; bad arguments refused. */
#include "model_internal.h"
#include "test_lm.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <string.h>

enum { V = 40, MAX_LEN = 24, MAXO = 128, MAXR = 8, N_MIX = 40 };

/* What the callbacks saw, by slot. */
typedef struct {
    int32_t out[MAXR][MAXO];
    int n[MAXR], ended[MAXR], why[MAXR], end_count[MAXR];
    int stop_after[MAXR]; /* on_token returns 1 after this many tokens of the slot (0: never) */
    int add_from_callback; /* tfm_gen_batch_add's status when called from on_token */
    tfm_gen_batch *gb;
} seen;

static int on_token(int slot, int32_t id, void *user) {
    seen *s = user;
    if (s->n[slot] < MAXO) s->out[slot][s->n[slot]] = id;
    s->n[slot]++;
    if (s->gb) {
        tfm_sample_config sc = tfm_sample_config_default();
        int slot2;
        s->add_from_callback = tfm_gen_batch_add(s->gb, &sc, NULL, 0, 1, &slot2);
        s->gb = NULL;
    }
    return s->stop_after[slot] > 0 && s->n[slot] >= s->stop_after[slot];
}

static void on_end(int slot, tfm_gen_end why, int n_tokens, void *user) {
    seen *s = user;
    s->ended[slot] = 1;
    s->why[slot] = (int)why;
    s->end_count[slot] = n_tokens;
}

static void forget(seen *s, int slot) {
    s->n[slot] = s->ended[slot] = s->end_count[slot] = s->stop_after[slot] = 0;
    s->why[slot] = -1;
}

typedef struct {
    int32_t prompt[MAX_LEN];
    int np, budget, bos, stop_after;
    tfm_sample_config sc;
} job;

static job make_job(int i) {
    job j;
    memset(&j, 0, sizeof j);
    j.bos = i % 5 != 4;
    j.np = (i * 7) % 11 + !j.bos; /* a prefix has at least one id */
    for (int k = 0; k < j.np; k++) j.prompt[k] = 3 + (i * 13 + k * 5) % (V - 3);
    j.budget = (i * 3) % 21; /* 0 .. 20; a long prompt runs into max_len */
    j.stop_after = i % 7 == 3 ? 2 : 0;
    j.sc = tfm_sample_config_default();
    j.sc.seed = (uint64_t)(100 + i);
    j.sc.temperature = i % 3 == 0 ? 0.0f : 1.4f;
    j.sc.top_k = i % 4 == 1 ? 7 : 0;
    j.sc.top_p = i % 4 == 2 ? 0.8f : 1.0f;
    return j;
}


/* tfm_generate (or _prefix) of job j alone on ctx. */
static int alone(tfm_context *ctx, const job *j, int32_t *out) {
    int n = -1;
    test_stop_after st = {0, j->stop_after};
    tfm_status s = j->bos ? tfm_generate(ctx, &j->sc, j->prompt, j->np, j->budget, 1, out, MAXO, &n,
                                         test_stop_after_fn, &st)
                          : tfm_generate_prefix(ctx, &j->sc, j->prompt, j->np, j->budget, 1, out, MAXO, &n,
                                                test_stop_after_fn, &st);
    CHECK(s == TFM_OK, "alone: %s", tfm_last_error());
    return n;
}

static int add_job(tfm_gen_batch *gb, const job *j, int *slot) {
    tfm_status st = j->bos ? tfm_gen_batch_add(gb, &j->sc, j->prompt, j->np, j->budget, slot)
                           : tfm_gen_batch_add_prefix(gb, &j->sc, j->prompt, j->np, j->budget, slot);
    CHECK(st == TFM_OK && *slot >= 0, "add: %s", tfm_last_error());
    return st == TFM_OK;
}

/* The row of `slot` ended as job j alone: the same tokens, the reason and count of its end. */
static int same_as_alone(tfm_context *ref, const seen *s, int slot, const job *j, const char *what) {
    int32_t want[MAXO];
    const int n = alone(ref, j, want);
    const int max_len = tfm_model_config(tfm_context_model(ref))->max_len;
    const int eos = n < j->budget && n < max_len - (j->np + j->bos - 1) && !(j->stop_after && n == j->stop_after);
    const int why = j->stop_after && n == j->stop_after ? TFM_GEN_STOPPED : eos ? TFM_GEN_EOS : TFM_GEN_LENGTH;
    const int ok = s->ended[slot] && s->n[slot] == n && s->end_count[slot] == n &&
                   memcmp(s->out[slot], want, (size_t)n * sizeof *want) == 0 && s->why[slot] == why;
    CHECK(ok, "%s (slot %d): %d tokens in the batch, %d alone (or other tokens); end %d, want %d", what, slot,
          s->n[slot], n, s->why[slot], why);
    return ok;
}

/* Rows added at steps 0, 3 and 7, prompts of 2, 9 and 0 ids; then a slot freed and reused. */
static void staggered(tfm_context *ctx, tfm_context *ref) {
    tfm_gen_batch *gb = NULL;
    CHECK(tfm_gen_batch_create(ctx, 3, &gb) == TFM_OK, "create: %s", tfm_last_error());
    if (!gb) return;
    job js[4];
    for (int i = 0; i < 4; i++) js[i] = make_job(i);
    js[0].np = 2, js[1].np = 9, js[2].np = 0, js[3].np = 5;
    js[0].budget = 6, js[1].budget = 12, js[2].budget = 10, js[3].budget = 8;
    for (int i = 0; i < 4; i++) js[i].bos = 1, js[i].stop_after = 0;
    const int join[3] = {0, 3, 7};
    int slot[4] = {-1, -1, -1, -1}, added = 0, reused = 0, steps = 0, finished_first = -1;
    seen s;
    memset(&s, 0, sizeof s);
    for (int k = 0; k < MAXR; k++) forget(&s, k);
    s.gb = gb; /* the first token tries an add from the callback */
    for (int step = 0; step < 60; step++) {
        while (added < 3 && join[added] == step) add_job(gb, &js[added], &slot[added]), added++;
        /* the first row to finish frees its slot: job 3 takes it */
        for (int i = 0; i < 3 && finished_first < 0; i++)
            if (slot[i] >= 0 && s.ended[slot[i]]) {
                finished_first = i;
                CHECK(same_as_alone(ref, &s, slot[i], &js[i], "staggered"), "row %d", i);
                const int freed = slot[i];
                forget(&s, freed);
                if (add_job(gb, &js[3], &slot[3])) reused = slot[3] == freed;
            }
        if (added == 3 && tfm_gen_batch_rows(gb) == 0) break;
        CHECK(tfm_gen_batch_step(gb, on_token, on_end, &s) == TFM_OK, "step: %s", tfm_last_error());
        steps++;
    }
    CHECK(s.add_from_callback == TFM_ERR_INVALID_ARG, "an add from on_token: %d", s.add_from_callback);
    CHECK(reused && finished_first >= 0, "the freed slot was not reused (first finished: row %d)", finished_first);
    for (int i = 0; i < 4; i++)
        if (i != finished_first && slot[i] >= 0) same_as_alone(ref, &s, slot[i], &js[i], "staggered");
    printf("staggered: rows joined at steps 0, 3, 7; row %d's slot %d reused; %d steps\n", finished_first,
           slot[3], steps);
    tfm_gen_batch_free(gb);
}

/* N_MIX jobs through a batch of R rows, each joining as soon as a slot is free. */
static void mixed(tfm_context *ctx, tfm_context *ref, int R) {
    tfm_gen_batch *gb = NULL;
    CHECK(tfm_gen_batch_create(ctx, R, &gb) == TFM_OK, "create %d: %s", R, tfm_last_error());
    if (!gb) return;
    job js[N_MIX];
    int job_of[MAXR], joined_at[MAXR], next = 0, done = 0, equal = 0, most = 0, cancelled = 0;
    for (int i = 0; i < N_MIX; i++) js[i] = make_job(i);
    for (int k = 0; k < MAXR; k++) job_of[k] = -1;
    seen s;
    memset(&s, 0, sizeof s);
    for (int k = 0; k < MAXR; k++) forget(&s, k);
    for (int step = 0; step < 2000 && done < N_MIX; step++) {
        for (int k = 0; k < R; k++) /* jobs 5, 14, 23, 32: cancelled two steps after they joined */
            if (job_of[k] >= 0 && job_of[k] % 9 == 5 && !s.ended[k] && step - joined_at[k] == 2) {
                CHECK(tfm_gen_batch_cancel(gb, k) == TFM_OK, "cancel: %s", tfm_last_error());
                CHECK(tfm_gen_batch_cancel(gb, k) == TFM_ERR_INVALID_ARG, "cancel twice");
                job_of[k] = -1;
                forget(&s, k);
                done++, equal++, cancelled++;
            }
        for (int k = 0; k < R; k++) /* finished rows: compare, free */
            if (job_of[k] >= 0 && s.ended[k]) {
                equal += same_as_alone(ref, &s, k, &js[job_of[k]], "mixed");
                job_of[k] = -1;
                forget(&s, k);
                done++;
            }
        /* one or two joins a step, when a slot is free */
        for (int a = 0; a < 1 + step % 2 && next < N_MIX && tfm_gen_batch_rows(gb) < R; a++) {
            int slot;
            if (!add_job(gb, &js[next], &slot)) break;
            CHECK(job_of[slot] < 0, "slot %d handed out twice", slot);
            job_of[slot] = next;
            joined_at[slot] = step;
            s.stop_after[slot] = js[next].stop_after;
            next++;
        }
        if (tfm_gen_batch_rows(gb) > most) most = tfm_gen_batch_rows(gb);
        CHECK(tfm_gen_batch_step(gb, on_token, on_end, &s) == TFM_OK, "step: %s", tfm_last_error());
    }
    CHECK(done == N_MIX && equal == N_MIX, "R %d: %d of %d jobs done, %d equal", R, done, N_MIX, equal);
    CHECK(most == R && cancelled >= 2, "R %d: at most %d rows at once, %d cancelled", R, most, cancelled);
    printf("mixed R %d: %d jobs equal to tfm_generate alone, %d cancelled\n", R, equal - cancelled, cancelled);
    /* a full batch refuses another row */
    int slot;
    for (int k = 0; k < R; k++) CHECK(add_job(gb, &js[1], &slot), "fill %d", k);
    tfm_sample_config sc = tfm_sample_config_default();
    int32_t p[1] = {5};
    CHECK(tfm_gen_batch_add(gb, &sc, p, 1, 3, &slot) == TFM_ERR_RANGE && slot == -1, "add to a full batch");
    tfm_gen_batch_free(gb);
}

/* The cache grows (its first 64 positions a slot are too few) while one row generates and another
 * waits for its first token, half prefilled: both keep their cached positions. On a model of
 * max_len 160, prefill in chunks of 2: row A runs, row B (3 positions) is added and gets its first
 * chunk at the next step, then row C needs 105 positions; all == alone. */
static void growth(void) {
    tfm_config c = test_lm_config(V, 160);
    c.pe = TFM_PE_ALIBI;
    tfm_model *m = NULL;
    tfm_context *ctx = NULL, *ref = NULL;
    tfm_gen_batch *gb = NULL;
    CHECK(tfm_model_create(&c, 11, &m) == TFM_OK && tfm_context_create(m, &ctx) == TFM_OK &&
              tfm_context_create(m, &ref) == TFM_OK && tfm_gen_batch_create(ctx, 3, &gb) == TFM_OK,
          "growth: %s", tfm_last_error());
    if (gb) {
        ctx->prefill_chunk = ref->prefill_chunk = 2;
        job js[3];
        for (int i = 0; i < 3; i++) {
            js[i] = make_job(3 * i + 2);
            js[i].bos = 1;
            js[i].stop_after = 0;
            js[i].sc.temperature = 0.0f; /* greedy: no EOS drawn by chance from a long run */
        }
        js[0].budget = 40, js[1].budget = 30, js[2].budget = 100;
        js[2].np = 5;
        seen s;
        memset(&s, 0, sizeof s);
        for (int k = 0; k < MAXR; k++) forget(&s, k);
        int slot[3];
        add_job(gb, &js[0], &slot[0]);
        for (int k = 0; k < 3; k++) tfm_gen_batch_step(gb, on_token, on_end, &s);
        add_job(gb, &js[1], &slot[1]); /* 3 positions: 2 prefilled at the next step, 1 at the one after */
        tfm_gen_batch_step(gb, on_token, on_end, &s);
        CHECK(s.n[slot[1]] == 0, "growth: row B has a token after its first chunk");
        add_job(gb, &js[2], &slot[2]); /* 5 + 100 positions: the cache grows now */
        for (int k = 0; k < 200 && tfm_gen_batch_rows(gb) > 0; k++) tfm_gen_batch_step(gb, on_token, on_end, &s);
        for (int i = 0; i < 3; i++) same_as_alone(ref, &s, slot[i], &js[i], "growth");
    }
    tfm_gen_batch_free(gb);
    tfm_context_free(ctx);
    tfm_context_free(ref);
    tfm_model_free(m);
}

/* on_end for the boundary row below: its end and token count. */
static void note_end(int slot, tfm_gen_end why, int n_tokens, void *user) {
    (void)slot;
    int *got = user;
    got[0] = (int)why;
    got[1] = n_tokens;
}

/* A long prompt joins without stalling the batch: in chunks of 3, row B's 12 input positions take
 * 4 steps, one chunk each, and row A gets a token at every one of them; B's first token comes at
 * the 4th; both == alone. */
static void spread(tfm_context *ctx, tfm_context *ref) {
    tfm_gen_batch *gb = NULL;
    CHECK(tfm_gen_batch_create(ctx, 2, &gb) == TFM_OK, "spread: %s", tfm_last_error());
    if (!gb) return;
    ctx->prefill_chunk = ref->prefill_chunk = 3;
    job js[2] = {make_job(1), make_job(2)};
    js[0].bos = js[1].bos = 1, js[0].stop_after = js[1].stop_after = 0;
    js[0].np = 2, js[0].budget = 12, js[1].np = 11, js[1].budget = 4;
    js[0].sc.temperature = js[1].sc.temperature = 0.0f;
    seen s;
    memset(&s, 0, sizeof s);
    for (int k = 0; k < MAXR; k++) forget(&s, k);
    int slot[2] = {-1, -1};
    add_job(gb, &js[0], &slot[0]);
    tfm_gen_batch_step(gb, on_token, on_end, &s);
    add_job(gb, &js[1], &slot[1]);
    int a_each = 1, b_waits = 1;
    for (int k = 1; k <= 4 && slot[1] >= 0; k++) {
        const int a = s.n[slot[0]];
        tfm_gen_batch_step(gb, on_token, on_end, &s);
        a_each &= s.n[slot[0]] == a + 1 || s.ended[slot[0]];
        b_waits &= s.n[slot[1]] == (k == 4) || (k == 4 && s.ended[slot[1]]);
    }
    CHECK(a_each, "spread: row A missed a step while row B prefilled");
    CHECK(b_waits, "spread: row B's first token not at the 4th step (chunks of 3 of 12 positions): %d tokens",
          slot[1] >= 0 ? s.n[slot[1]] : -1);
    for (int k = 0; k < 40 && tfm_gen_batch_rows(gb) > 0; k++) tfm_gen_batch_step(gb, on_token, on_end, &s);
    for (int i = 0; i < 2; i++)
        if (slot[i] >= 0) same_as_alone(ref, &s, slot[i], &js[i], "spread");
    ctx->prefill_chunk = ref->prefill_chunk = PREFILL_CHUNK;
    tfm_gen_batch_free(gb);
}

static void refusals(tfm_context *ctx, tfm_model *ed) {
    tfm_gen_batch *gb = NULL;
    tfm_context *edctx = NULL;
    CHECK(tfm_context_create(ed, &edctx) == TFM_OK, "context");
    CHECK(tfm_gen_batch_create(edctx, 2, &gb) == TFM_ERR_INVALID_ARG && !gb, "an encoder-decoder model");
    tfm_context_free(edctx);
    CHECK(tfm_gen_batch_create(ctx, 0, &gb) == TFM_ERR_INVALID_ARG, "0 rows");
    CHECK(tfm_gen_batch_create(ctx, 129, &gb) == TFM_ERR_INVALID_ARG, "129 rows");
    CHECK(tfm_gen_batch_create(ctx, 2, &gb) == TFM_OK, "create: %s", tfm_last_error());
    tfm_sample_config sc = tfm_sample_config_default();
    int slot;
    int32_t bad[2] = {3, V}, longp[MAX_LEN];
    for (int i = 0; i < MAX_LEN; i++) longp[i] = 4;
    CHECK(tfm_gen_batch_add(gb, &sc, bad, 2, 3, &slot) == TFM_ERR_RANGE, "an id outside the vocabulary");
    CHECK(tfm_gen_batch_add(gb, &sc, longp, MAX_LEN, 3, &slot) == TFM_ERR_RANGE, "BOS + max_len ids");
    CHECK(tfm_gen_batch_add(gb, &sc, bad, 1, -1, &slot) == TFM_ERR_INVALID_ARG, "max_tokens -1");
    CHECK(tfm_gen_batch_add_prefix(gb, &sc, bad, 0, 3, &slot) == TFM_ERR_INVALID_ARG, "an empty prefix");
    sc.top_p = 0.0f;
    CHECK(tfm_gen_batch_add(gb, &sc, bad, 1, 3, &slot) == TFM_ERR_INVALID_ARG, "top_p 0");
    CHECK(tfm_gen_batch_rows(gb) == 0, "a refused row stays out");
    CHECK(tfm_gen_batch_step(gb, NULL, NULL, NULL) == TFM_OK, "an empty step");
    CHECK(tfm_gen_batch_step(NULL, NULL, NULL, NULL) == TFM_ERR_INVALID_ARG, "NULL batch");
    /* the boundary (generate.h): BOS + prompt of exactly max_len positions is accepted and ends at
     * its first step with one token at most (EOS or the length limit); only more is TFM_ERR_RANGE */
    tfm_sample_config ok = tfm_sample_config_default();
    int got[2] = {-1, -1};
    CHECK(tfm_gen_batch_add(gb, &ok, longp, MAX_LEN - 1, 3, &slot) == TFM_OK, "BOS + max_len - 1 ids: %s",
          tfm_last_error());
    CHECK(tfm_gen_batch_step(gb, NULL, note_end, got) == TFM_OK && tfm_gen_batch_rows(gb) == 0 &&
              ((got[0] == TFM_GEN_LENGTH && got[1] == 1) || (got[0] == TFM_GEN_EOS && got[1] == 0)),
          "BOS + max_len - 1 ids: end %d after %d tokens (want the limit after 1, or EOS)", got[0], got[1]);
    tfm_gen_batch_free(gb);
    tfm_gen_batch_free(NULL);
}

int main(void) {
    tfm_config c = test_lm_config(V, MAX_LEN);
    c.pe = TFM_PE_ROPE;
    tfm_model *m = NULL, *ed = NULL;
    tfm_context *ctx = NULL, *ref = NULL;
    CHECK(tfm_model_create(&c, 9, &m) == TFM_OK && tfm_context_create(m, &ctx) == TFM_OK &&
              tfm_context_create(m, &ref) == TFM_OK,
          "model: %s", tfm_last_error());
    tfm_config e = c;
    e.arch = TFM_ARCH_ENCODER_DECODER;
    e.n_enc_layers = 1;
    CHECK(tfm_model_create(&e, 9, &ed) == TFM_OK, "encoder-decoder: %s", tfm_last_error());
    if (ctx && ref && ed) {
        staggered(ctx, ref);
        mixed(ctx, ref, 3);
        mixed(ctx, ref, 8);
        ctx->prefill_chunk = ref->prefill_chunk = 3;
        mixed(ctx, ref, 3);
        ctx->prefill_chunk = ref->prefill_chunk = PREFILL_CHUNK;
        spread(ctx, ref);
        growth();
        refusals(ctx, ed);
    }
    tfm_context_free(ctx);
    tfm_context_free(ref);
    tfm_model_free(m);
    tfm_model_free(ed);
    return test_finish("gen_batch");
}
