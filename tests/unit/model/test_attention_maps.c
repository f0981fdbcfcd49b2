/* tfm_model_attention / tfm_context_attention (include/tfm/attention.h):
 *   1. every row of every map sums to 1 (within 1e-5) and the decoder's future keys are exactly 0,
 *      for every position encoding this build has (encoder-decoder) and for a decoder-only model;
 *   2. the weights are the model's: recomputed here in double from the weights (W_Q, W_K and
 *      their biases) and each sub-layer's input — for encoder layer 0 from E[id]·√d_model plus
 *      the sinusoid of §3.5 computed here, so nothing of the forward pass is reused — they agree
 *      within 1e-5 (sinusoidal, post-LN, where the sub-layer input is the block input);
 *   3. the maps are what multiplied V: P·V of the returned weights equals the heads' output the
 *      forward pass kept (within 1e-5), for every encoding (rope, t5, alibi, shaw included);
 *   4. bad calls are refused with a message: a missing side, a pad id, past max_len; the maps are
 *      NULL before the call, after another pass, and for a layer or kind the model lacks. */
#include "model_context.h"
#include "layer.h"
#include "model_internal.h"
#include "test_util.h"
#include "tfm/tfm.h"

enum { V = 19, D = 16, H = 2, MAXLEN = 12, S = 7, TT = 6 };

static const int32_t SRC[S] = {3, 5, 7, 11, 4, 9, 6};
static const int32_t TGT[TT] = {1, 8, 12, 5, 17, 3}; /* BOS first */

static tfm_config config(tfm_arch arch, tfm_pe pe) {
    tfm_config c = tfm_config_default();
    c.arch = arch;
    c.d_model = D;
    c.n_heads = H;
    c.d_ff = 24;
    c.n_enc_layers = arch == TFM_ARCH_DECODER_ONLY ? 0 : 2;
    c.n_dec_layers = 2;
    c.src_vocab = c.tgt_vocab = V;
    c.max_len = MAXLEN;
    c.pe = pe;
    if (arch == TFM_ARCH_DECODER_ONLY) c.norm_first = 1;
    return c;
}

static tfm_model *make_model(const tfm_config *c, uint64_t seed) {
    tfm_model *m = NULL;
    if (tfm_model_create(c, seed, &m) != TFM_OK) return NULL;
    float *base = (float *)m->param_arena.base; /* move every parameter, so zero-initialised tables matter */
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 7;
    for (size_t i = 0; i < m->n_params; i++) base[i] += 0.3f * test_frand(&s);
    return m;
}

/* A context of a fresh model of c (make_model), NULL on failure (counted); free it with free_all. */
static tfm_context *model_context(const tfm_config *c, uint64_t seed, const char *label) {
    tfm_model *m = make_model(c, seed);
    tfm_context *ctx = NULL;
    CHECK(m && tfm_context_create(m, &ctx) == TFM_OK, "%s: model and context: %s", label, tfm_last_error());
    if (!ctx) tfm_model_free(m);
    return ctx;
}

static void free_all(tfm_context *ctx) {
    tfm_model *m = (tfm_model *)tfm_context_model(ctx); /* made here: ours to free */
    tfm_context_free(ctx);
    tfm_model_free(m);
}

/* 1: rows sum to 1, future keys 0 (decoder self-attention). Returns the worst row-sum error. */
static double check_rows(const char *label, const float *w, int Hh, int Tq, int Tk, int causal) {
    double worst = 0.0;
    int future_nonzero = 0;
    for (int h = 0; h < Hh; h++)
        for (int q = 0; q < Tq; q++) {
            double sum = 0.0;
            for (int k = 0; k < Tk; k++) {
                const float v = w[((size_t)h * Tq + q) * Tk + k];
                sum += v;
                if (causal && k > q && v != 0.0f) future_nonzero++;
            }
            if (fabs(sum - 1.0) > worst) worst = fabs(sum - 1.0);
        }
    CHECK(worst <= 1e-5, "%s: a row sums to 1 %+g", label, worst);
    CHECK(!future_nonzero, "%s: %d future keys have a non-zero weight", label, future_nonzero);
    return worst;
}

/* softmax((x_q W_Q + b_Q)(x_k W_K + b_K)ᵀ/√d_k) of head h in double, compared with w (Tq, Tk). */
static double recompute_diff(const float *xq, int Tq, const float *xk, int Tk, const float *in_w, const float *in_b,
                             int kv_rows_offset, const float *w, int h, int causal) {
    const int dk = D / H;
    double worst = 0.0;
    for (int q = 0; q < Tq; q++) {
        double sc[MAXLEN], mx = -1e300, sum = 0.0, qv[D];
        for (int c = 0; c < dk; c++) {
            const int row = h * dk + c; /* W_Q rows [0, d) */
            double a = in_b[row];
            for (int j = 0; j < D; j++) a += (double)in_w[(size_t)row * D + j] * xq[(size_t)q * D + j];
            qv[c] = a;
        }
        const int lim = causal ? q + 1 : Tk;
        for (int k = 0; k < lim; k++) {
            double s = 0.0;
            for (int c = 0; c < dk; c++) {
                const int row = kv_rows_offset + h * dk + c; /* W_K rows [d, 2d) */
                double a = in_b[row];
                for (int j = 0; j < D; j++) a += (double)in_w[(size_t)row * D + j] * xk[(size_t)k * D + j];
                s += qv[c] * a;
            }
            sc[k] = s / sqrt((double)dk);
            if (sc[k] > mx) mx = sc[k];
        }
        for (int k = 0; k < lim; k++) sum += (sc[k] = exp(sc[k] - mx));
        for (int k = 0; k < Tk; k++) {
            const double want = k < lim ? sc[k] / sum : 0.0;
            const double e = fabs(want - (double)w[((size_t)h * Tq + q) * Tk + k]);
            if (e > worst) worst = e;
        }
    }
    return worst;
}

/* 2 (sinusoidal, post-LN encoder-decoder): every map recomputed from the weights and its sub-layer's
 * input; encoder layer 0's input from the embedding and the sinusoid computed here. */
static void check_recompute(void) {
    tfm_config c = config(TFM_ARCH_ENCODER_DECODER, TFM_PE_SINUSOIDAL);
    tfm_context *ctx = model_context(&c, 5, "recompute");
    if (!ctx) return;
    const tfm_model *m = tfm_context_model(ctx);
    CHECK(tfm_model_attention(ctx, S, SRC, TT, TGT) == TFM_OK, "attention: %s", tfm_last_error());
    float x0[S * D]; /* E[id]·√d + PE(p) (§3.4, §3.5), here in double */
    for (int p = 0; p < S; p++)
        for (int i = 0; i < D; i++) {
            const double om = pow(10000.0, -(double)(i / 2 * 2) / D);
            x0[p * D + i] = (float)((double)m->p.stack[0].embed[(size_t)SRC[p] * D + i] * sqrt((double)D) +
                                    (i % 2 ? cos(p * om) : sin(p * om)));
        }
    double worst = 0.0;
    for (int l = 0; l < 2; l++) { /* encoder self-attention: post-LN, the sub-layer reads the block input */
        int Hh, Tq, Tk;
        const float *w = tfm_context_attention(ctx, TFM_ATTN_ENCODER_SELF, l, &Hh, &Tq, &Tk);
        CHECK(w && Hh == H && Tq == S && Tk == S, "encoder layer %d: sizes %d %d %d", l, Hh, Tq, Tk);
        if (!w) continue;
        const float *x = l == 0 ? x0 : block_out(&c, &ctx->acts.stack[0].layers[l - 1].blk[1]);
        const mha_params *p = &m->p.stack[0].layers[l].self_attn;
        for (int h = 0; h < H; h++) worst = fmax(worst, recompute_diff(x, S, x, S, p->in_proj_weight, p->in_proj_bias, D, w, h, 0));
    }
    for (int l = 0; l < 2; l++) {
        int Hh, Tq, Tk;
        const float *w = tfm_context_attention(ctx, TFM_ATTN_DECODER_SELF, l, &Hh, &Tq, &Tk);
        const float *wc = tfm_context_attention(ctx, TFM_ATTN_CROSS, l, NULL, NULL, NULL);
        CHECK(w && wc && Tq == TT && Tk == TT, "decoder layer %d", l);
        if (!w || !wc) continue;
        const layer_acts *L = &ctx->acts.stack[1].layers[l];
        const float *x = l == 0 ? ctx->acts.stack[1].x0 : block_out(&c, &ctx->acts.stack[1].layers[l - 1].blk[2]);
        const mha_params *ps = &m->p.stack[1].layers[l].self_attn, *pc = &m->p.stack[1].layers[l].cross_attn;
        for (int h = 0; h < H; h++) {
            worst = fmax(worst, recompute_diff(x, TT, x, TT, ps->in_proj_weight, ps->in_proj_bias, D, w, h, 1));
            /* cross: queries from the self-attention block's output, keys from the encoder's output */
            worst = fmax(worst, recompute_diff(block_out(&c, &L->blk[0]), TT, ctx->acts.stack[0].out, S,
                                               pc->in_proj_weight, pc->in_proj_bias, D, wc, h, 0));
        }
    }
    CHECK(worst <= 1e-5, "the maps differ from the recomputation by %g", worst);
    printf("recomputed from the weights: max difference %.2e\n", worst);
    free_all(ctx);
}

/* 3: P·V of the returned weights == the heads' concatenated output the forward kept (mha_acts.att). */
static double pv_diff(const float *w, const mha_acts *a, int Tq, int Tk, int cross) {
    const float *v = cross ? a->qkv + D : a->qkv + 2 * D; /* cross: memory K|V rows of 2d; self: Q|K|V rows of 3d */
    const size_t stride = cross ? 2 * D : 3 * D;
    double worst = 0.0;
    for (int h = 0; h < H; h++)
        for (int q = 0; q < Tq; q++)
            for (int c = 0; c < D / H; c++) {
                double o = 0.0;
                for (int k = 0; k < Tk; k++) o += (double)w[((size_t)h * Tq + q) * Tk + k] * v[(size_t)k * stride + h * (D / H) + c];
                worst = fmax(worst, fabs(o - (double)a->att[(size_t)q * D + h * (D / H) + c]));
            }
    return worst;
}

static void check_kind(tfm_arch arch, tfm_pe pe) {
    tfm_config c = config(arch, pe);
    if (tfm_config_validate(&c) != TFM_OK) return; /* not in this build */
    char label[64];
    snprintf(label, sizeof label, "%s/%s", tfm_arch_name(arch), tfm_pe_name(pe));
    tfm_context *ctx = model_context(&c, 11, label);
    if (!ctx) return;
    const int dec = arch == TFM_ARCH_DECODER_ONLY;
    CHECK(tfm_context_attention(ctx, TFM_ATTN_DECODER_SELF, 0, NULL, NULL, NULL) == NULL, "%s: maps before a pass", label);
    CHECK(tfm_model_attention(ctx, dec ? 0 : S, dec ? NULL : SRC, TT, TGT) == TFM_OK, "%s: %s", label, tfm_last_error());
    double pv = 0.0;
    const int stack_dec = dec ? 0 : 1;
    for (int l = 0; l < 2; l++) {
        int Hh, Tq, Tk;
        const float *w;
        if (!dec) {
            w = tfm_context_attention(ctx, TFM_ATTN_ENCODER_SELF, l, &Hh, &Tq, &Tk);
            CHECK(w && Tq == S && Tk == S, "%s: encoder layer %d", label, l);
            if (w) {
                check_rows(label, w, Hh, Tq, Tk, 0);
                pv = fmax(pv, pv_diff(w, &ctx->acts.stack[0].layers[l].self_attn, Tq, Tk, 0));
            }
            w = tfm_context_attention(ctx, TFM_ATTN_CROSS, l, &Hh, &Tq, &Tk);
            CHECK(w && Tq == TT && Tk == S, "%s: cross layer %d", label, l);
            if (w) {
                check_rows(label, w, Hh, Tq, Tk, 0);
                pv = fmax(pv, pv_diff(w, &ctx->acts.stack[1].layers[l].cross_attn, Tq, Tk, 1));
            }
        }
        w = tfm_context_attention(ctx, TFM_ATTN_DECODER_SELF, l, &Hh, &Tq, &Tk);
        CHECK(w && Tq == TT && Tk == TT, "%s: decoder layer %d", label, l);
        /* Shaw's relative values add to P·V: compare P·V only without them (the default) */
        if (w) {
            check_rows(label, w, Hh, Tq, Tk, 1);
            pv = fmax(pv, pv_diff(w, &ctx->acts.stack[stack_dec].layers[l].self_attn, Tq, Tk, 0));
        }
    }
    CHECK(pv <= 1e-5, "%s: P·V of the maps differs from the forward's heads by %g", label, pv);
    CHECK(tfm_context_attention(ctx, TFM_ATTN_DECODER_SELF, 2, NULL, NULL, NULL) == NULL, "%s: layer 2 of 2", label);
    if (dec) {
        CHECK(tfm_context_attention(ctx, TFM_ATTN_CROSS, 0, NULL, NULL, NULL) == NULL, "%s: no cross-attention", label);
        CHECK(tfm_context_attention(ctx, TFM_ATTN_ENCODER_SELF, 0, NULL, NULL, NULL) == NULL, "%s: no encoder", label);
    }
    /* another pass invalidates them */
    double lp;
    int nt;
    int32_t tgt_full[TT + 1];
    memcpy(tgt_full, TGT, sizeof TGT);
    tgt_full[TT] = c.eos_id;
    CHECK(tfm_model_score(ctx, 1, dec ? 0 : S, TT + 1, dec ? NULL : SRC, tgt_full, &lp, &nt, NULL) == TFM_OK, "%s: score", label);
    CHECK(tfm_context_attention(ctx, TFM_ATTN_DECODER_SELF, 0, NULL, NULL, NULL) == NULL, "%s: maps after a score", label);
    free_all(ctx);
}

static void check_errors(void) {
    tfm_config c = config(TFM_ARCH_ENCODER_DECODER, TFM_PE_SINUSOIDAL);
    tfm_context *ctx = model_context(&c, 3, "errors");
    if (!ctx) return;
    int32_t long_src[MAXLEN + 1], padded[3] = {3, 0, 4};
    for (int i = 0; i <= MAXLEN; i++) long_src[i] = 3;
    CHECK(tfm_model_attention(ctx, 0, NULL, TT, TGT) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "needs a source"),
          "no source: %s", tfm_last_error());
    CHECK(tfm_model_attention(ctx, S, SRC, 0, NULL) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "decoder input"),
          "no target: %s", tfm_last_error());
    CHECK(tfm_model_attention(ctx, MAXLEN + 1, long_src, TT, TGT) == TFM_ERR_RANGE && strstr(tfm_last_error(), "max_len"),
          "past max_len: %s", tfm_last_error());
    CHECK(tfm_model_attention(ctx, 3, padded, TT, TGT) == TFM_ERR_RANGE && strstr(tfm_last_error(), "padding id"),
          "a pad id: %s", tfm_last_error());
    CHECK(tfm_model_attention(NULL, S, SRC, TT, TGT) == TFM_ERR_INVALID_ARG, "NULL context");
    free_all(ctx);
}

/* A decoder whose start token is the pad id (Marian: decoder_start_id = pad_id): position 0 is
 * that token, attended to like any other (never key padding); a pad later, or a pad first where
 * the start token is BOS, is still refused. */
static void check_pad_start(void) {
    tfm_config c = config(TFM_ARCH_ENCODER_DECODER, TFM_PE_SINUSOIDAL);
    c.decoder_start_id = c.pad_id;
    tfm_context *ctx = model_context(&c, 5, "pad start");
    if (!ctx) return;
    int32_t tgt[TT];
    memcpy(tgt, TGT, sizeof tgt);
    tgt[0] = c.pad_id;
    CHECK(tfm_model_attention(ctx, S, SRC, TT, tgt) == TFM_OK, "pad start: %s", tfm_last_error());
    for (int l = 0; l < 2; l++) {
        int Hh = 0, Tq = 0, Tk = 0;
        const float *w = tfm_context_attention(ctx, TFM_ATTN_DECODER_SELF, l, &Hh, &Tq, &Tk);
        CHECK(w && Tq == TT && Tk == TT, "pad start: decoder_self layer %d", l);
        if (w) {
            CHECK(check_rows("pad start: decoder_self", w, Hh, Tq, Tk, 1) <= 1e-5, "pad start: decoder_self rows");
            for (int h = 0; h < Hh; h++) /* query 0 sees key 0 alone: the start token, not masked */
                CHECK(fabsf(w[(size_t)h * TT * TT] - 1.0f) <= 1e-6f, "pad start: head %d, query 0 -> key 0: %g", h,
                      (double)w[(size_t)h * TT * TT]);
        }
        w = tfm_context_attention(ctx, TFM_ATTN_CROSS, l, &Hh, &Tq, &Tk);
        CHECK(w && check_rows("pad start: cross", w, Hh, Tq, Tk, 0) <= 1e-5, "pad start: cross layer %d", l);
    }
    tgt[0] = TGT[0];
    tgt[1] = c.pad_id;
    CHECK(tfm_model_attention(ctx, S, SRC, TT, tgt) == TFM_ERR_RANGE && strstr(tfm_last_error(), "position 1") &&
              strstr(tfm_last_error(), "padding id"),
          "pad start: a pad at position 1: %s", tfm_last_error());
    free_all(ctx);
    c.decoder_start_id = -1; /* BOS starts: a pad first is padding */
    ctx = model_context(&c, 5, "bos start");
    if (!ctx) return;
    memcpy(tgt, TGT, sizeof tgt);
    tgt[0] = c.pad_id;
    CHECK(tfm_model_attention(ctx, S, SRC, TT, tgt) == TFM_ERR_RANGE && strstr(tfm_last_error(), "padding id"),
          "bos start: a pad first: %s", tfm_last_error());
    free_all(ctx);
}

int main(void) {
    check_recompute();
    check_pad_start();
    for (int pe = 0; pe <= TFM_PE_ALIBI; pe++) check_kind(TFM_ARCH_ENCODER_DECODER, (tfm_pe)pe);
    check_kind(TFM_ARCH_DECODER_ONLY, TFM_PE_ALIBI);
    check_kind(TFM_ARCH_DECODER_ONLY, TFM_PE_ROPE);
    check_errors();
    return test_finish("attention_maps");
}
