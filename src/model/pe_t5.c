/* T5's relative attention bias (Raffel et al. 2020, "Exploring the Limits of Transfer Learning
 * with a Unified Text-to-Text Transformer", JMLR 21, §2.1 "Model"): each self-attention score
 * gets a learned scalar per head, looked up by the bucket of the offset key − query; buckets are
 * exact for small offsets and logarithmic up to a maximum distance, beyond which all offsets share
 * the last bucket. One table (n_buckets, n_heads) per stack, shared by the stack's layers, as T5
 * does (its layer 0 owns the table, the others reuse its bias).
 *
 * Scaling: T5 has no 1/√d_k in its attention and folds that factor into the initialisation of
 * W_Q; we keep attention's 1/√d_k (Vaswani et al. 2017, eq. 1) and add the bias after it, so our
 * logits are QKᵀ/√d_k + bias. The table is initialised N(0, d_model^−½), as Hugging Face's T5. */
#include "pe.h"

#include "core_internal.h"

#include <math.h>
#include <stdio.h>

static int t5_buckets(const tfm_config *cfg) { return cfg->pe_buckets ? cfg->pe_buckets : 32; }
static int t5_max_distance(const tfm_config *cfg) { return cfg->pe_max_distance ? cfg->pe_max_distance : 128; }

/* The reference formula (mesh-tensorflow's _relative_position_bucket, as in Hugging Face's
 * T5Attention), n = key − query. Bidirectional: half the buckets for n > 0, the other half for
 * n <= 0; causal: every n > 0 (a future key) is bucket 0, only n <= 0 is bucketed. Within a half
 * of `nb` buckets, |n| < nb/2 is its own bucket and larger distances take
 *   nb/2 + ⌊ ln(|n| / (nb/2)) / ln(max_distance / (nb/2)) · (nb − nb/2) ⌋, capped at nb − 1,
 * computed in float32 as the reference does (the boundaries between log buckets are where float
 * and double could disagree; tests/unit/model/test_pe_rel.c pins them for the defaults). */
int pe_t5_bucket(long n, int bidirectional, int n_buckets, int max_distance) {
    int nb = n_buckets, base = 0;
    unsigned long dist;
    if (bidirectional) {
        nb /= 2;
        if (n > 0) base = nb;
        dist = n < 0 ? (unsigned long)(-n) : (unsigned long)n;
    } else {
        dist = n < 0 ? (unsigned long)(-n) : 0ul;
    }
    const int max_exact = nb / 2;
    if (dist < (unsigned long)max_exact) return base + (int)dist;
    const float r = logf((float)dist / (float)max_exact) / (float)log((double)max_distance / (double)max_exact);
    const float large = r * (float)(nb - max_exact);
    long b = (long)max_exact + (long)large; /* the reference's .to(long): truncation */
    if (b > nb - 1) b = nb - 1;
    return base + (int)b;
}

/* The buckets need max_exact >= 1 in the bidirectional half (n_buckets >= 4), an even count (as
 * T5's halves), and max_distance above the exact range of the causal case (n_buckets / 2), or the
 * logarithm's denominator is not positive. */
static tfm_status t5_validate(const tfm_config *cfg) {
    const int nb = t5_buckets(cfg), md = t5_max_distance(cfg);
    RETURN_IF(nb < 4 || nb % 2 != 0, TFM_ERR_INVALID_ARG, "t5: pe_buckets must be even and at least 4, got %d", nb);
    RETURN_IF(md <= nb / 2, TFM_ERR_INVALID_ARG,
              "t5: pe_max_distance (%d) must exceed pe_buckets / 2 (%d), where the logarithmic buckets start", md,
              nb / 2);
    return TFM_OK;
}

/* <stack prefix>.relative_attention_bias.weight (n_buckets, n_heads): the stack's one table. */
static void t5_add_params(param_builder *b, const tfm_config *cfg, int stack, const stack_desc *sd, pe_params *sp,
                          layer_params *lp) {
    (void)stack;
    (void)lp;
    char name[TFM_PARAM_NAME_MAX + 32];
    snprintf(name, sizeof name, "%s.relative_attention_bias.weight", sd->prefix);
    param_add(b, name, (size_t)t5_buckets(cfg), (size_t)cfg->n_heads, sp ? &sp->w[0] : NULL, PARAM_INIT_EMBEDDING,
              (size_t)cfg->d_model);
}

/* bias[h, t, s] = table[bucket(s − (pos0 + t)), h]: key s at absolute position s, query t at
 * pos0 + t, so a cached decoding step (T = 1, pos0 = cache length) sees the row the whole-sequence
 * call has at that position. Bidirectional buckets for MASK_BIDIRECTIONAL (encoder), causal ones
 * for MASK_CAUSAL (decoder). */
static void t5_bias(const tfm_config *cfg, const pe_params *sp, const layer_params *lp, mask_kind mask, float *bias,
                    size_t H, size_t T, size_t S, size_t pos0) {
    (void)lp;
    const int nb = t5_buckets(cfg), md = t5_max_distance(cfg), bidir = mask == MASK_BIDIRECTIONAL;
    const float *table = sp->w[0]; /* (n_buckets, H) */
    for (size_t t = 0; t < T; t++)
        for (size_t s = 0; s < S; s++) {
            const float *e = table + (size_t)pe_t5_bucket((long)s - (long)(pos0 + t), bidir, nb, md) * H;
            for (size_t h = 0; h < H; h++) bias[(h * T + t) * S + s] = e[h];
        }
}

/* dtable[bucket(s − i), h] += Σ_b dscore[b, h, t, s]: every layer of the stack adds into the one
 * table. Rows and keys the attention masked have dscore = 0 (attn_backward), so they add nothing. */
static void t5_bias_backward(const tfm_config *cfg, pe_params *gs, layer_params *gl, const float *dscore,
                             mask_kind mask, size_t B, size_t H, size_t T, size_t S, size_t pos0) {
    (void)gl;
    const int nb = t5_buckets(cfg), md = t5_max_distance(cfg), bidir = mask == MASK_BIDIRECTIONAL;
    float *g = gs->w[0];
    for (size_t t = 0; t < T; t++)
        for (size_t s = 0; s < S; s++) {
            float *e = g + (size_t)pe_t5_bucket((long)s - (long)(pos0 + t), bidir, nb, md) * H;
            for (size_t h = 0; h < H; h++) {
                float sum = 0.0f;
                for (size_t b = 0; b < B; b++) sum += dscore[((b * H + h) * T + t) * S + s];
                e[h] += sum;
            }
        }
}

static void t5_fill_defaults(tfm_config *cfg) {
    cfg->pe_buckets = t5_buckets(cfg);
    cfg->pe_max_distance = t5_max_distance(cfg);
}

const pe_kind pe_kind_t5 = {
    .name = "t5",
    .options = PE_OPT_BUCKETS | PE_OPT_MAX_DISTANCE,
    .validate = t5_validate,
    .fill_defaults = t5_fill_defaults,
    .add_params = t5_add_params,
    .bias_forward = t5_bias,
    .bias_backward = t5_bias_backward,
};
