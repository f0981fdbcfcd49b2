/* The layer code does not assume two stacks: a decoder-only description (one causal stack over
 * the target ids + generator; config validation still refuses the arch, so the model is built
 * here past it) runs through the same forward, backward and KV-cache code as the encoder–decoder:
 *  - the cached decoding step (T = 1 at pos0 = t on the KV cache) gives the logits the batched pass
 *    gives at position t;
 *  - the backward pass matches central differences of a linear functional of the logits for
 *    entries of every tensor;
 *  - the parameter table names the tensors under transformer.decoder with no encoder tensor;
 * and the encoder-only description lays out and runs one bidirectional stack without a generator. */
#include "model_internal.h"
#include "ops.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2, T = 6, V = 11 };

/* A model of any description, past config validation: small random weights, LayerNorm weights
 * near 1. Returns NULL on failure. */
static tfm_model *unchecked_model(const tfm_config *cfg, uint64_t seed) {
    tfm_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->cfg = *cfg;
    m->n_params = params_layout(cfg, NULL, NULL, NULL, &m->n_entries);
    m->entries = calloc(m->n_entries, sizeof *m->entries);
    if (!m->entries || arena_init(&m->param_arena, m->n_params * sizeof(float), "test model") != TFM_OK) {
        tfm_model_free(m);
        return NULL;
    }
    params_layout(cfg, &m->p, (float *)m->param_arena.base, m->entries, &m->n_entries);
    float *w = (float *)m->param_arena.base;
    uint64_t s = seed;
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        if (e->alias_of >= 0) continue;
        for (size_t i = 0; i < e->numel; i++)
            w[e->offset + i] = e->init == PARAM_INIT_ONE ? 1.0f + 0.1f * test_frand(&s) : 0.3f * test_frand(&s);
    }
    return m;
}

static tfm_config small_config(tfm_arch arch) {
    tfm_config c = tfm_config_default();
    c.arch = arch;
    c.d_model = 8;
    c.n_heads = 2;
    c.d_ff = 12;
    c.n_enc_layers = arch == TFM_ARCH_DECODER_ONLY ? 0 : 2;
    c.n_dec_layers = arch == TFM_ARCH_ENCODER_ONLY ? 0 : 2;
    c.src_vocab = c.tgt_vocab = V;
    c.max_len = 16;
    c.norm_first = 1;
    c.activation = TFM_ACT_GELU; /* smooth: no kinks for the difference quotients */
    return c;
}

static const int32_t TGT[B * T] = {1, 4, 7, 9, 3, 5, /**/ 1, 8, 6, 0, 0, 0};
static const int32_t NO_SRC[1] = {0};

/* Σ r·logits over the batched pass, in double. */
static double functional(tfm_context *ctx, const float *r) {
    model_forward(ctx, B, 0, T, NO_SRC, TGT, T, NULL);
    double L = 0.0;
    for (size_t i = 0; i < (size_t)(B * T * V); i++) L += (double)r[i] * ctx->acts.logits[i];
    return L;
}

static void decoder_only(void) {
    tfm_config c = small_config(TFM_ARCH_DECODER_ONLY);
    tfm_model *m = unchecked_model(&c, 0x51ac);
    tfm_context *ctx = NULL;
    CHECK(m && tfm_context_create(m, &ctx) == TFM_OK, "decoder-only model: %s", tfm_last_error());
    if (!ctx) {
        tfm_model_free(m);
        return;
    }
    int encoder_tensors = 0, found_dec = 0;
    for (size_t k = 0; k < m->n_entries; k++) {
        encoder_tensors += strstr(m->entries[k].name, "encoder") != NULL || strcmp(m->entries[k].name, "src_embed.weight") == 0;
        found_dec += strcmp(m->entries[k].name, "transformer.decoder.layers.1.norm2.weight") == 0;
        CHECK(strstr(m->entries[k].name, "multihead_attn") == NULL && strstr(m->entries[k].name, "norm3") == NULL,
              "decoder-only has a cross-attention tensor %s", m->entries[k].name);
    }
    CHECK(encoder_tensors == 0 && found_dec == 1, "decoder-only table: %d encoder tensors, norm2 found %d",
          encoder_tensors, found_dec);

    /* batched logits, then the cached steps: the same numbers position by position */
    CHECK(context_reserve(ctx, B, 0, T, 0) == TFM_OK, "reserve: %s", tfm_last_error());
    model_forward(ctx, B, 0, T, NO_SRC, TGT, T, NULL);
    float *batched = malloc(sizeof(float) * B * T * V);
    memcpy(batched, ctx->acts.logits, sizeof(float) * B * T * V);
    CHECK(kv_cache_reserve(ctx, B, 0, T) == TFM_OK, "cache: %s", tfm_last_error());
    model_decode_start(ctx, NO_SRC);
    double worst = 0.0;
    for (int t = 0; t < T; t++) {
        model_decode_step(ctx, TGT + t, T);
        for (int b = 0; b < B; b++) {
            if (t > 0 && TGT[b * T + t] == 0) continue; /* padding: the batched pass masks it as a key */
            for (int v = 0; v < V; v++) {
                double e = fabs((double)ctx->cache.logits[b * V + v] - batched[(b * T + t) * V + v]);
                if (!(e <= worst)) worst = e;
            }
        }
    }
    printf("decoder-only: max |cached step - batched| = %.3g\n", worst);
    CHECK(worst <= 1e-5, "decoder-only: cached steps differ from the batched pass by %.3g", worst);

    /* backward against central differences of L = Σ r·logits */
    CHECK(context_reserve(ctx, B, 0, T, 1) == TFM_OK, "reserve training: %s", tfm_last_error());
    float *r = malloc(sizeof(float) * B * T * V);
    uint64_t s = 77;
    for (int i = 0; i < B * T * V; i++) r[i] = test_frand(&s);
    functional(ctx, r);
    memcpy(ctx->acts.logits, r, sizeof(float) * B * T * V); /* dL/dlogits = r */
    float *gbase = calloc(m->n_params, sizeof(float));
    model_params g;
    params_layout(&c, &g, gbase, NULL, NULL);
    tfm_arena counter = {NULL, 0, 0}, ws_arena = {NULL, 0, 0};
    grad_workspace ws;
    grad_workspace_layout(KERN, &c, B, 0, T, &counter, NULL);
    CHECK(arena_init(&ws_arena, counter.used, "test workspace") == TFM_OK, "workspace");
    grad_workspace_layout(KERN, &c, B, 0, T, &ws_arena, &ws);
    model_backward(ctx, &g, &ws, NO_SRC, TGT, T, NULL);
    float *base = (float *)m->param_arena.base;
    const float h = 1e-2f;
    double worst_err = 0.0;
    const char *worst_name = "";
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        if (e->alias_of >= 0) continue;
        for (size_t i = 0; i < e->numel; i += e->numel / 3 + 1) { /* three entries a tensor */
            float *x = base + e->offset + i;
            const float x0 = *x;
            *x = x0 + h;
            const double lp = functional(ctx, r);
            *x = x0 - h;
            const double lm = functional(ctx, r);
            *x = x0;
            const double num = (lp - lm) / (2.0 * h), ana = gbase[e->offset + i];
            const double err = fabs(num - ana) / fmax(0.1, fabs(num));
            if (!(err <= worst_err)) {
                worst_err = err;
                worst_name = e->name;
            }
        }
    }
    printf("decoder-only: backward vs central differences, worst relative error %.3g (%s)\n", worst_err, worst_name);
    CHECK(worst_err <= 1e-2, "decoder-only: gradient of %s off by %.3g", worst_name, worst_err);
    arena_free(&ws_arena);
    free(gbase);
    free(r);
    free(batched);
    tfm_context_free(ctx);
    tfm_model_free(m);
}

static void encoder_only(void) {
    tfm_config c = small_config(TFM_ARCH_ENCODER_ONLY);
    tfm_model *m = unchecked_model(&c, 0xe0c);
    tfm_context *ctx = NULL;
    CHECK(m && tfm_context_create(m, &ctx) == TFM_OK, "encoder-only model: %s", tfm_last_error());
    if (!ctx) {
        tfm_model_free(m);
        return;
    }
    int generator = 0;
    for (size_t k = 0; k < m->n_entries; k++) generator += strncmp(m->entries[k].name, "generator", 9) == 0;
    CHECK(generator == 0, "encoder-only has %d generator tensors", generator);
    const int32_t src[B * T] = {5, 4, 7, 9, 3, 5, /**/ 8, 6, 10, 0, 0, 0};
    CHECK(context_reserve(ctx, B, T, 2, 0) == TFM_OK, "reserve: %s", tfm_last_error());
    model_forward(ctx, B, T, 2, src, TGT, T, NULL);
    const float *out = ctx->acts.stack[0].out;
    int finite = 1;
    for (int i = 0; i < B * T * c.d_model; i++) finite &= isfinite(out[i]) != 0;
    CHECK(finite && ctx->acts.logits == NULL, "encoder-only: non-finite output or a logits buffer");
    /* bidirectional: the first position's output depends on a later token */
    float first[8];
    memcpy(first, out, sizeof first);
    int32_t src2[B * T];
    memcpy(src2, src, sizeof src2);
    src2[4] = 6;
    model_forward(ctx, B, T, 2, src2, TGT, T, NULL);
    CHECK(memcmp(first, ctx->acts.stack[0].out, sizeof first) != 0,
          "encoder-only: position 0 does not see position 4 (the mask is not bidirectional)");
    tfm_context_free(ctx);
    tfm_model_free(m);
}

int main(void) {
    ops_set_threads(1);
    decoder_only();
    encoder_only();
    return test_finish("stacks");
}
