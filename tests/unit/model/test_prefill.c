/* The batched prefill (src/model/prefill.h) for every position encoding of this build (found by
 * listing the tfm_pe values whose decoder-only configuration validates, as test_pe_kinds does), each
 * with two blocks: post-LN LayerNorm with ReLU and biases, and the LM families' pre-LN RMSNorm,
 * SwiGLU, no linear biases and grouped-query attention (n_kv_heads = n_heads / 2); plus GPT-2's
 * pre-LN LayerNorm with gelu_tanh. On a small decoder-only model whose parameters are all moved off
 * their initial values, for prompts of P = 1, 6 and max_len positions:
 *   1. the prefill's logits of position P − 1 == the batched forward's (model_forward of (1, P))
 *      to within TOL_FULL, and == the step-by-step path's (P model_decode_step calls) to within
 *      TOL_STEP, and the cached keys/values of positions [0, P) == the steps' to within TOL_STEP;
 *   2. a decoding step after the prefill (position P) gives the batched forward's logits of
 *      (1, P + 1) to within TOL_STEP: the cache the prefill leaves is the one decoding reads;
 *   3. row r of a 3-row cache: prefilling it alone touches no other row, and its logits are those
 *      of the prefill of a 1-row cache bit for bit (a row's bits depend neither on the cache's rows
 *      nor on which row it is: continuous batching prefills a joining row this way); a workspace
 *      reserved for max_len positions gives a shorter prompt the bits of one reserved for it;
 *   4. tfm_generate, tfm_generate_prefix and tfm_generate_batch leave each row's cache and last
 *      final-norm output as model_prefill of that row alone, bit for bit: every path starts with the same prefill;
 *   5. chunked (the context's prefill_chunk C below P: chunks of C positions, each attending to the
 *      cache before it): in chunks of 1, 5 and 7 positions the logits of position P − 1 and the
 *      cached keys/values are the one-forward prefill's and the batched forward's to within TOL_STEP,
 *      and the step after it gives the batched forward's logits of (1, P + 1); in chunks of 1 they
 *      are P single decoding steps' bit for bit (each chunk is such a step); and the generation
 *      paths (4.) start with the chunked prefill of the context's C. */
#include "model_internal.h"
#include "ops.h"
#include "test_util.h"
#include "test_models.h"
#include "tfm/tfm.h"

#include <stdint.h>

#define TOL_FULL 1e-5f /* prefill vs batched forward: the generator's kernel on 1 row vs P rows */
#define TOL_STEP 1e-4f /* prefill vs P single steps: the linear layers' summation order */

enum { MAX_LEN = 12, V = 19, D = 16, MAXB = 3 };

typedef struct {
    char label[64];
    tfm_config c;
} variant;

static double max_diff(const float *a, const float *b, size_t n) {
    double w = 0.0;
    for (size_t i = 0; i < n; i++) w = test_worse(w, fabsf(a[i] - b[i]));
    return w;
}

/* block 0: post-LN LayerNorm, ReLU, biases; 1: pre-LN RMSNorm, SwiGLU, no biases, GQA; 2: GPT-2's
 * pre-LN LayerNorm with gelu_tanh */
static tfm_config small_config(tfm_pe pe, int block) {
    tfm_config c = tfm_config_default();
    c.arch = TFM_ARCH_DECODER_ONLY;
    c.d_model = D;
    c.n_heads = 4;
    c.d_ff = 24;
    c.n_enc_layers = 0;
    c.n_dec_layers = 2;
    c.src_vocab = V;
    c.tgt_vocab = V;
    c.max_len = MAX_LEN;
    c.pe = pe;
    if (block >= 1) c.norm_first = 1;
    if (block == 1) {
        c.norm = TFM_NORM_RMS;
        c.activation = TFM_ACT_SWIGLU;
        c.no_linear_bias = 1;
        c.n_kv_heads = 2;
    }
    if (block == 2) c.activation = TFM_ACT_GELU_TANH;
    return c;
}

/* The batched forward's logits (V) of the last of the first T positions of ids. */
static void full_last(tfm_context *ctx, const int32_t *ids, int T, float *out) {
    CHECK(context_reserve(ctx, 1, 0, T, 0) == TFM_OK, "reserve: %s", tfm_last_error());
    model_forward(ctx, 1, 0, T, NULL, ids, (size_t)T, NULL);
    memcpy(out, ctx->acts.logits + (size_t)(T - 1) * V, sizeof(float) * V);
}

/* An empty cache of B rows for MAX_LEN positions, its prefill workspace reserved for P. */
static int begin(tfm_context *ctx, int B, int P, const char *label) {
    const int ok = kv_cache_reserve(ctx, B, 0, MAX_LEN) == TFM_OK;
    if (ok) model_decode_start(ctx, NULL);
    const int okp = ok && model_prefill_reserve(ctx, P) == TFM_OK;
    CHECK(okp, "%s: cache of %d rows, prefill of %d: %s", label, B, P, tfm_last_error());
    return okp;
}

static void prefill_case(const variant *v, tfm_model *m, int P, double *worst_full, double *worst_step) {
    const size_t kvd = v->c.n_kv_heads ? (size_t)v->c.n_kv_heads * (D / (size_t)v->c.n_heads) : D;
    int32_t ids[MAX_LEN + 1];
    for (int i = 0; i < MAX_LEN + 1; i++) ids[i] = 3 + (7 * i + P) % (V - 3); /* never pad_id */
    ids[0] = v->c.bos_id;
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK, "%s: context", v->label);
    if (!ctx) return;
    float full[V], pre[V], step[V], next[V], full_next[V];
    const size_t n_kv = (size_t)P * kvd;
    float *k_pre = malloc(sizeof(float) * 2 * 2 * n_kv), *v_pre = k_pre + 2 * n_kv;
    full_last(ctx, ids, P, full);
    /* the prefill of a 1-row cache, then one step at position P */
    if (begin(ctx, 1, P, v->label)) {
        model_prefill(ctx, ids, MAX_LEN + 1, P);
        CHECK(ctx->cache.len == P, "%s: cache length %d after a prefill of %d", v->label, ctx->cache.len, P);
        memcpy(pre, kv_cache_logits(ctx), sizeof pre);
        for (int l = 0; l < 2; l++) {
            memcpy(k_pre + l * n_kv, ctx->cache.self_k[l], sizeof(float) * n_kv);
            memcpy(v_pre + l * n_kv, ctx->cache.self_v[l], sizeof(float) * n_kv);
        }
        if (P < MAX_LEN) {
            model_decode_step(ctx, ids + P, 1);
            memcpy(next, kv_cache_logits(ctx), sizeof next);
            full_last(ctx, ids, P + 1, full_next);
            const double e = max_diff(next, full_next, V);
            *worst_step = test_worse(*worst_step, e);
            CHECK(e <= TOL_STEP, "%s, P %d: the step after the prefill differs from the batched forward by %.3g",
                  v->label, P, e);
        }
    }
    const double ef = max_diff(pre, full, V);
    *worst_full = test_worse(*worst_full, ef);
    CHECK(ef <= TOL_FULL, "%s, P %d: prefill logits differ from the batched forward's by %.3g", v->label, P, ef);
    /* P single steps */
    if (begin(ctx, 1, P, v->label)) {
        for (int t = 0; t < P; t++) model_decode_step(ctx, ids + t, 1);
        memcpy(step, kv_cache_logits(ctx), sizeof step);
        double e = max_diff(pre, step, V);
        for (int l = 0; l < 2; l++) {
            e = test_worse(e, max_diff(k_pre + l * n_kv, ctx->cache.self_k[l], n_kv));
            e = test_worse(e, max_diff(v_pre + l * n_kv, ctx->cache.self_v[l], n_kv));
        }
        *worst_step = test_worse(*worst_step, e);
        CHECK(e <= TOL_STEP, "%s, P %d: prefill logits or cached K/V differ from %d single steps by %.3g", v->label, P,
              P, e);
    }
    /* row 1 of 3, alone, in a workspace reserved for max_len */
    if (begin(ctx, MAXB, MAX_LEN, v->label)) {
        const size_t row = (size_t)MAX_LEN * kvd;
        for (int l = 0; l < 2; l++)
            for (size_t i = 0; i < MAXB * row; i++) ctx->cache.self_k[l][i] = ctx->cache.self_v[l][i] = 7.0f;
        model_prefill_row(ctx, 1, ids, P);
        int others = 1, same_kv = 1;
        for (int l = 0; l < 2; l++) {
            for (size_t i = 0; i < row; i++) {
                others &= ctx->cache.self_k[l][i] == 7.0f && ctx->cache.self_v[l][i] == 7.0f;
                others &= ctx->cache.self_k[l][2 * row + i] == 7.0f && ctx->cache.self_v[l][2 * row + i] == 7.0f;
            }
            same_kv &= memcmp(ctx->cache.self_k[l] + row, k_pre + l * n_kv, sizeof(float) * n_kv) == 0 &&
                       memcmp(ctx->cache.self_v[l] + row, v_pre + l * n_kv, sizeof(float) * n_kv) == 0;
        }
        CHECK(others, "%s, P %d: prefilling row 1 wrote into another row", v->label, P);
        CHECK(same_kv && memcmp(kv_cache_logits(ctx) + V, pre, sizeof pre) == 0,
              "%s, P %d: row 1 of 3 (workspace for %d) is not the 1-row prefill bit for bit", v->label, P, MAX_LEN);
    }
    free(k_pre);
    tfm_context_free(ctx);
}

/* 5. The prefill of ids[0..P) in chunks of C into a 1-row cache: its logits and cached keys/values
 * against the one-forward prefill (C = P), the batched forward and P single steps. */
static void chunk_case(const variant *v, tfm_model *m, int P, int C, double *worst) {
    const size_t kvd = v->c.n_kv_heads ? (size_t)v->c.n_kv_heads * (D / (size_t)v->c.n_heads) : D;
    int32_t ids[MAX_LEN + 1];
    for (int i = 0; i < MAX_LEN + 1; i++) ids[i] = 3 + (5 * i + P + C) % (V - 3); /* never pad_id */
    ids[0] = v->c.bos_id;
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK, "%s: context", v->label);
    if (!ctx) return;
    const size_t n_kv = (size_t)P * kvd;
    float full[V], one[V], chunked[V], step[V], next[V], full_next[V];
    float *kv = malloc(sizeof(float) * 2 * 2 * 2 * n_kv); /* [one-forward, chunked][k, v][layer] */
    float *kv_one = kv, *kv_chunk = kv + 4 * n_kv;
    full_last(ctx, ids, P, full);
    for (int pass = 0; pass < 2; pass++) { /* 0: one forward (C = P), 1: chunks of C */
        ctx->prefill_chunk = pass ? C : P;
        if (!begin(ctx, 1, P, v->label)) continue;
        CHECK(ctx->cache.prefill.chunk == (pass ? C : P), "%s: the workspace keeps chunk %d", v->label,
              ctx->cache.prefill.chunk);
        model_prefill(ctx, ids, MAX_LEN + 1, P);
        memcpy(pass ? chunked : one, kv_cache_logits(ctx), sizeof one);
        float *dst = pass ? kv_chunk : kv_one;
        for (int l = 0; l < 2; l++) {
            memcpy(dst + (size_t)(2 * l) * n_kv, ctx->cache.self_k[l], sizeof(float) * n_kv);
            memcpy(dst + (size_t)(2 * l + 1) * n_kv, ctx->cache.self_v[l], sizeof(float) * n_kv);
        }
        if (pass && P < MAX_LEN) { /* the step after the chunked prefill reads its cache */
            model_decode_step(ctx, ids + P, 1);
            memcpy(next, kv_cache_logits(ctx), sizeof next);
            full_last(ctx, ids, P + 1, full_next);
            const double e = max_diff(next, full_next, V);
            *worst = test_worse(*worst, e);
            CHECK(e <= TOL_STEP, "%s, P %d, chunks of %d: the step after the prefill differs from the batched forward by %.3g",
                  v->label, P, C, e);
        }
    }
    double e = test_worse(max_diff(chunked, one, V), max_diff(kv_chunk, kv_one, 4 * n_kv));
    e = test_worse(e, max_diff(chunked, full, V));
    *worst = test_worse(*worst, e);
    CHECK(e <= TOL_STEP, "%s, P %d, chunks of %d: logits or cached K/V differ from one forward's (or the batched forward's) by %.3g",
          v->label, P, C, e);
    if (C == 1) { /* each chunk is one decoding step of a 1-row cache */
        ctx->prefill_chunk = PREFILL_CHUNK;
        if (begin(ctx, 1, P, v->label)) {
            for (int t = 0; t < P; t++) model_decode_step(ctx, ids + t, 1);
            memcpy(step, kv_cache_logits(ctx), sizeof step);
            int same = memcmp(step, chunked, sizeof step) == 0;
            for (int l = 0; l < 2; l++)
                same &= memcmp(ctx->cache.self_k[l], kv_chunk + (size_t)(2 * l) * n_kv, sizeof(float) * n_kv) == 0 &&
                        memcmp(ctx->cache.self_v[l], kv_chunk + (size_t)(2 * l + 1) * n_kv, sizeof(float) * n_kv) == 0;
            CHECK(same, "%s, P %d: a prefill in chunks of 1 is not %d single steps bit for bit (logits %.3g)", v->label, P,
                  P, max_diff(step, chunked, V));
        }
    }
    free(kv);
    tfm_context_free(ctx);
}

/* 4. The generation paths start with this prefill: after tfm_generate, tfm_generate_prefix and
 * tfm_generate_batch (3 rows) of one token each, every row's cached keys/values and the final
 * norm of its last position (what the logits are computed from: the sampler overwrites those) are
 * model_prefill's of that row's prefix alone, bit for bit (so a row's tokens are the same on every
 * path, whatever rounding decides). */
static void generate_case(const variant *v, tfm_model *m, int chunk) {
    enum { NP = 5, B = 3 };
    const size_t kvd = v->c.n_kv_heads ? (size_t)v->c.n_kv_heads * (D / (size_t)v->c.n_heads) : D;
    int32_t prompts[B * NP], ids[B][NP + 1];
    for (int b = 0; b < B; b++) {
        ids[b][0] = v->c.bos_id;
        for (int i = 0; i < NP; i++) ids[b][i + 1] = prompts[b * NP + i] = 3 + (5 * i + 3 * b) % (V - 3);
    }
    tfm_context *ref = NULL, *ctx = NULL;
    CHECK(tfm_context_create(m, &ref) == TFM_OK && tfm_context_create(m, &ctx) == TFM_OK, "%s: contexts", v->label);
    if (!ref || !ctx) {
        tfm_context_free(ref);
        tfm_context_free(ctx);
        return;
    }
    ref->prefill_chunk = ctx->prefill_chunk = chunk;
    tfm_sample_config sc[B];
    int budget[B], len[B];
    int32_t out[B];
    for (int b = 0; b < B; b++) sc[b] = tfm_sample_config_default(), sc[b].temperature = 0.0f, budget[b] = 1;
    /* which path: 0 tfm_generate (BOS + prompt), 1 tfm_generate_prefix (the same ids as a prefix),
     * 2 tfm_generate_batch; P positions prefilled */
    for (int path = 0; path < 3; path++) {
        const int rows = path == 2 ? B : 1, P = NP + 1;
        tfm_status st = path == 0   ? tfm_generate(ctx, sc, prompts, NP, 1, 1, out, 1, len, NULL, NULL)
                        : path == 1 ? tfm_generate_prefix(ctx, sc, ids[0], P, 1, 1, out, 1, len, NULL, NULL)
                                    : tfm_generate_batch(ctx, B, sc, prompts, NP, budget, 1, out, 1, len, NULL, NULL);
        CHECK(st == TFM_OK, "%s: generation path %d: %s", v->label, path, tfm_last_error());
        if (st != TFM_OK) continue;
        CHECK(ctx->cache.B == rows && ctx->cache.len == P, "%s: path %d left %d rows of %d positions", v->label, path,
              ctx->cache.B, ctx->cache.len);
        for (int b = 0; b < rows; b++) {
            if (!begin(ref, 1, P, v->label)) continue;
            model_prefill(ref, ids[b], P, P);
            /* the sampler overwrites the logits in place: the final norm's output that gives them */
            int same = memcmp(ctx->cache.out + b * D, ref->cache.out, sizeof(float) * D) == 0;
            const size_t row = (size_t)ctx->cache.cap_T * kvd, n_kv = (size_t)P * kvd;
            for (int l = 0; l < 2; l++)
                same &= memcmp(ctx->cache.self_k[l] + b * row, ref->cache.self_k[l], sizeof(float) * n_kv) == 0 &&
                        memcmp(ctx->cache.self_v[l] + b * row, ref->cache.self_v[l], sizeof(float) * n_kv) == 0;
            CHECK(same, "%s, chunks of %d: generation path %d, row %d: the cache or the last position's final norm is not model_prefill's bit for bit",
                  v->label, chunk, path, b);
        }
    }
    tfm_context_free(ref);
    tfm_context_free(ctx);
}

int main(void) {
    ops_set_threads(1); /* a tiny model: OpenMP barriers would cost more than the work */
    variant vs[64];
    int n = 0, n_pe = 0;
    for (int pe = 0; tfm_pe_name((tfm_pe)pe) != NULL && n < 60; pe++) {
        int any = 0;
        for (int block = 0; block < 3; block++) {
            if (block == 2 && pe != TFM_PE_LEARNED) continue; /* GPT-2's block with GPT-2's encoding */
            variant v;
            snprintf(v.label, sizeof v.label, "%s, block %d", tfm_pe_name((tfm_pe)pe), block);
            v.c = small_config((tfm_pe)pe, block);
            const tfm_status st = tfm_config_validate(&v.c);
            if (st == TFM_ERR_UNSUPPORTED) {
                printf("%-22s not in this build\n", v.label);
                continue;
            }
            CHECK(st == TFM_OK, "%s: a small decoder-only model does not validate: %s", v.label, tfm_last_error());
            if (st != TFM_OK) continue;
            vs[n++] = v;
            any = 1;
        }
        n_pe += any;
    }
    CHECK(n_pe >= 8, "only %d position encodings validate decoder-only (want sinusoidal, learned, none, RoPE, ALiBi, "
                     "T5, Shaw, FLOATER)",
          n_pe);
    for (int i = 0; i < n; i++) {
        tfm_model *m = test_model_moved(&vs[i].c, vs[i].label, 200 + (uint64_t)i);
        if (!m) continue;
        double worst_full = 0.0, worst_step = 0.0;
        const int Ps[] = {1, 6, MAX_LEN};
        for (int j = 0; j < 3; j++) prefill_case(&vs[i], m, Ps[j], &worst_full, &worst_step);
        double worst_chunk = 0.0;
        const int Cs[] = {1, 5, 7};
        for (int j = 1; j < 3; j++)
            for (int k = 0; k < 3; k++) chunk_case(&vs[i], m, Ps[j], Cs[k], &worst_chunk);
        generate_case(&vs[i], m, PREFILL_CHUNK);
        generate_case(&vs[i], m, 4); /* the 6 positions in chunks of 4 and 2 */
        if (i == 0) { /* a chunk of no position is refused, not looped on */
            tfm_context *ctx = NULL;
            CHECK(tfm_context_create(m, &ctx) == TFM_OK && kv_cache_reserve(ctx, 1, 0, MAX_LEN) == TFM_OK,
                  "context: %s", tfm_last_error());
            if (ctx) ctx->prefill_chunk = 0;
            CHECK(ctx && model_prefill_reserve(ctx, 6) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "chunks of 0"),
                  "a prefill in chunks of 0: %s", tfm_last_error());
            tfm_context_free(ctx);
        }
        printf("%-22s prefill vs batched forward %.3g, vs single steps %.3g, chunked vs one forward %.3g\n", vs[i].label,
               worst_full, worst_step, worst_chunk);
        tfm_model_free(m);
    }
    return test_finish("prefill");
}
