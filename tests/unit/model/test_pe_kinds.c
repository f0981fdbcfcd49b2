/* Every position encoding this build has, found by listing the tfm_pe values whose configuration
 * validates (a kind added later is checked without editing this file), plus the sinusoidal
 * options, on a small model whose parameters are all moved off their initial values (so a table
 * or bias initialised to zero still encodes positions):
 *   1. order: with `none`, permuting the source tokens permutes the encoder outputs (attention and
 *      the FFN are permutation-equivariant, Vaswani et al. 2017, §3.5) to within TOL_PERM; with
 *      every other encoding the permuted outputs differ by more than MIN_ORDER_EFFECT;
 *   2. decoding: every cached decode step (query at pos0 = t > 0) gives the logits of the batched
 *      forward to within TOL_STEP, up to position max_len − 1; greedy and beam search (EOS made
 *      impossible, so every sentence runs to its length limit) give the same tokens on the KV cache
 *      as by recomputing the prefix, and stop at exactly max_len − 1 output tokens for a source of
 *      max_len tokens, so no encoding is asked for a position at or past max_len (the learned
 *      table asserts it);
 *   3. save and load: after a few Adam steps the model saved and loaded back scores exactly as
 *      before (the encoding's tensors and options round-trip through the checkpoint). */
#include "model_internal.h"
#include "ops.h"
#include "test_lm.h"
#include "test_util.h"
#include "test_models.h"
#include "tfm/tfm.h"

#include <stdint.h>

#define TOL_PERM 1e-5f
#define MIN_ORDER_EFFECT 1e-2f
#define TOL_RELOAD 1e-6
#define TOL_STEP 1e-4f /* cached step vs batched forward: summation order only */

enum { S = 7, MAX_LEN = 12, V = 17, D = 16 };

typedef test_pe_variant variant;

static tfm_config small_config(tfm_pe pe) {
    tfm_config c = tfm_config_default();
    c.d_model = D;
    c.n_heads = 2;
    c.d_ff = 24;
    c.n_enc_layers = 2;
    c.n_dec_layers = 2;
    c.src_vocab = V;
    c.tgt_vocab = V;
    c.max_len = MAX_LEN;
    c.pe = pe;
    return c;
}

/* 1. The encoder outputs of a source and of its permutation. */
static void order_case(const variant *v, tfm_model *m) {
    static const int32_t src[S] = {3, 9, 4, 12, 5, 16, 7};
    static const int perm[S] = {4, 0, 6, 2, 1, 5, 3}; /* row t of the permuted source is src[perm[t]] */
    int32_t psrc[S], tgt[1] = {1};
    for (int t = 0; t < S; t++) psrc[t] = src[perm[t]];
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK && context_reserve(ctx, 1, S, 1, 0) == TFM_OK, "%s: context", v->label);
    if (!ctx) return;
    float out[S * D], pout[S * D];
    model_forward(ctx, 1, S, 1, src, tgt, 1, NULL);
    memcpy(out, ctx->acts.stack[0].out, sizeof out);
    model_forward(ctx, 1, S, 1, psrc, tgt, 1, NULL);
    memcpy(pout, ctx->acts.stack[0].out, sizeof pout);
    double worst = 0.0;
    for (int t = 0; t < S; t++)
        for (int c = 0; c < D; c++) worst = test_worse(worst, fabsf(pout[t * D + c] - out[perm[t] * D + c]));
    if (v->c.pe == TFM_PE_NONE)
        CHECK(worst <= TOL_PERM, "%s: permuting the source changed the encoder outputs by %.3g (not order-blind)",
              v->label, (double)worst);
    else
        CHECK(worst >= MIN_ORDER_EFFECT, "%s: the encoder outputs of a permuted source differ by only %.3g: order-blind",
              v->label, (double)worst);
    printf("%-22s permuted source: max |enc(P x) - P enc(x)| = %.3g\n", v->label, (double)worst);
    tfm_context_free(ctx);
}

/* 2a. The logits of every decode step on the KV cache (query at pos0 = t) against the batched
 * forward of the whole prefix, for a target of max_len positions. */
static void step_logits_case(const variant *v, tfm_model *m) {
    enum { B = 2 };
    const int32_t src[B * S] = {3, 9, 4, 12, 5, 16, 7, /**/ 8, 4, 11, 0, 0, 0, 0};
    int32_t tgt[B * MAX_LEN];
    for (int i = 0; i < B * MAX_LEN; i++) tgt[i] = i % MAX_LEN == 0 ? 1 : 3 + (7 * i) % (V - 3);
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK && context_reserve(ctx, B, S, MAX_LEN, 0) == TFM_OK, "%s: context",
          v->label);
    if (!ctx) return;
    model_forward(ctx, B, S, MAX_LEN, src, tgt, MAX_LEN, NULL);
    float *full = malloc(sizeof(float) * B * MAX_LEN * V);
    memcpy(full, ctx->acts.logits, sizeof(float) * B * MAX_LEN * V);
    CHECK(kv_cache_reserve(ctx, B, S, MAX_LEN) == TFM_OK, "%s: cache: %s", v->label, tfm_last_error());
    model_decode_start(ctx, src);
    double worst = 0.0;
    for (int t = 0; t < MAX_LEN; t++) {
        model_decode_step(ctx, tgt + t, MAX_LEN);
        for (int b = 0; b < B; b++)
            for (int j = 0; j < V; j++)
                worst = test_worse(worst, fabsf(ctx->cache.logits[b * V + j] - full[(b * MAX_LEN + t) * V + j]));
    }
    CHECK(worst <= TOL_STEP, "%s: cached decode steps differ from the batched forward by %.3g", v->label,
          (double)worst);
    free(full);
    tfm_context_free(ctx);
}

/* 2b. Greedy and beam search: the same tokens on the cache and by recomputing, with EOS made
 * impossible so every sentence runs to its length limit; a source of max_len tokens decodes
 * exactly max_len − 1 tokens (decoder positions up to max_len − 1). */
static void decode_case(const variant *v, tfm_model *m) {
    enum { B = 2, MAX_OUT = 32 };
    int32_t src[B * MAX_LEN];
    for (int i = 0; i < B * MAX_LEN; i++) src[i] = 3 + (5 * i + i / MAX_LEN) % (V - 3);
    for (int t = 6; t < MAX_LEN; t++) src[MAX_LEN + t] = v->c.pad_id; /* row 1: 6 tokens */
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK, "%s: context", v->label);
    if (!ctx) return;
    float *eos_bias = &m->p.generator_bias[v->c.eos_id], saved = *eos_bias;
    *eos_bias = -1e4f;
    int32_t out[2][B * MAX_OUT];
    int len[2][B];
    for (int beam = 1; beam <= 3; beam += 2) {
        tfm_decode_config dc = tfm_decode_config_default();
        dc.beam = beam;
        dc.max_len_a = 3.0f;
        for (int cache = 0; cache < 2; cache++) {
            dc.use_cache = cache;
            CHECK(tfm_model_translate(ctx, &dc, B, MAX_LEN, src, out[cache], MAX_OUT, len[cache]) == TFM_OK,
                  "%s: translate (beam %d, cache %d): %s", v->label, beam, cache, tfm_last_error());
        }
        int same = len[0][0] == len[1][0] && len[0][1] == len[1][1];
        for (int b = 0; same && b < B; b++)
            same = memcmp(out[0] + b * MAX_OUT, out[1] + b * MAX_OUT, (size_t)len[0][b] * sizeof(int32_t)) == 0;
        CHECK(same, "%s: beam %d: the KV cache decodes other tokens than recomputing the prefix", v->label, beam);
        CHECK(len[1][0] == MAX_LEN - 1, "%s: beam %d: %d output tokens for a source of max_len %d, want %d", v->label,
              beam, len[1][0], MAX_LEN, MAX_LEN - 1);
    }
    *eos_bias = saved;
    tfm_context_free(ctx);
}

/* 3. A few training steps, then save, load and score. */
static void reload_case(const variant *v, tfm_model *m) {
    enum { B = 3, T = 6 };
    const int32_t src[B * S] = {3, 9, 4, 12, 5, 16, 7, /**/ 8, 4, 11, 0, 0, 0, 0, /**/ 5, 5, 6, 9, 10, 0, 0};
    const int32_t tgt[B * T] = {1, 4, 5, 6, 7, 2, /**/ 1, 8, 2, 0, 0, 0, /**/ 1, 9, 10, 11, 2, 0};
    tfm_train_config tc = tfm_train_config_default();
    tc.lr = 1e-2;
    tfm_trainer *tr = NULL;
    CHECK(tfm_trainer_create(m, &tc, B, S, T, &tr) == TFM_OK, "%s: trainer: %s", v->label, tfm_last_error());
    for (int i = 0; tr && i < 4; i++) {
        tfm_step_stats st;
        CHECK(tfm_trainer_step(tr, B, S, T, src, tgt, &st) == TFM_OK, "%s: step: %s", v->label, tfm_last_error());
    }
    tfm_trainer_free(tr);
    char dir[512], path[600];
    if (!test_make_tmpdir(dir, sizeof dir, "pe-kinds")) {
        CHECK(0, "tmpdir");
        return;
    }
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    tfm_model *m2 = NULL;
    tfm_context *c1 = NULL, *c2 = NULL;
    CHECK(tfm_model_save(m, path) == TFM_OK && tfm_model_load(path, &m2) == TFM_OK, "%s: save/load: %s", v->label,
          tfm_last_error());
    remove(path);
    rmdir(dir);
    if (!m2) return;
    const tfm_config *c2c = tfm_model_config(m2);
    CHECK(c2c->pe == v->c.pe && c2c->pe_layout == v->c.pe_layout && c2c->pe_zero_pad == v->c.pe_zero_pad &&
              c2c->pe_scale == v->c.pe_scale,
          "%s: the position encoding's metadata did not round-trip", v->label);
    double lp1[B], lp2[B];
    int n1[B], n2[B];
    CHECK(tfm_context_create(m, &c1) == TFM_OK && tfm_context_create(m2, &c2) == TFM_OK, "%s: contexts", v->label);
    CHECK(tfm_model_score(c1, B, S, T, src, tgt, lp1, n1, NULL) == TFM_OK &&
              tfm_model_score(c2, B, S, T, src, tgt, lp2, n2, NULL) == TFM_OK,
          "%s: score: %s", v->label, tfm_last_error());
    double worst = 0.0;
    for (int b = 0; b < B; b++) worst = test_worse(worst, fabs(lp1[b] - lp2[b]));
    CHECK(worst <= TOL_RELOAD, "%s: scores after save/load differ by %.3g", v->label, worst);
    tfm_context_free(c1);
    tfm_context_free(c2);
    tfm_model_free(m2);
}

int main(void) {
    ops_set_threads(1); /* a tiny model: OpenMP barriers would cost more than the work */
    variant vs[64];
    const tfm_config base = small_config(TFM_PE_SINUSOIDAL);
    int n_none = 0, n = test_pe_variants(&base, vs, 64, &n_none);
    CHECK(n_none == 1 && n >= 6, "the build lacks none, sinusoidal or learned (%d variants)", n);
    for (int i = 0; i < n; i++) {
        tfm_model *m = test_model_moved(&vs[i].c, vs[i].label, 100 + (uint64_t)i);
        if (!m) continue;
        order_case(&vs[i], m);
        step_logits_case(&vs[i], m);
        decode_case(&vs[i], m);
        reload_case(&vs[i], m);
        tfm_model_free(m);
    }
    return test_finish("pe_kinds");
}
