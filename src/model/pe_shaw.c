/* Relative position representations (Shaw, Uszkoreit & Vaswani 2018): learned embeddings of the
 * clipped offset between a query and a key, added to the keys (and, with pe_shaw_values, to the
 * values) inside every self-attention; nothing at the embeddings, nothing in cross-attention. */
#include "pe.h"

#include "core_internal.h"

#include <stdio.h>

#define SHAW_DEFAULT_MAX_DISTANCE 16

/* k: offsets j − i are clipped to [−k, k] (§3.2: clip(x, k) = max(−k, min(k, x))); pe_max_distance
 * 0 means 16, the clipping distance of the paper's experiments (§4; its Table 3 finds BLEU nearly
 * flat for k >= 2). */
static size_t shaw_clip(const tfm_config *cfg) {
    return cfg->pe_max_distance > 0 ? (size_t)cfg->pe_max_distance : SHAW_DEFAULT_MAX_DISTANCE;
}

/* An explicit k must be at most max_len − 1: no query and key in one sequence are farther apart
 * (sequences hold at most max_len tokens), so rows beyond would be parameters never used (k =
 * 1048576 made 2·10^6 rows per table per layer). The default (16) is kept whatever max_len. */
static tfm_status shaw_validate(const tfm_config *cfg) {
    RETURN_IF(cfg->pe_max_distance > cfg->max_len - 1, TFM_ERR_INVALID_ARG,
              "shaw: pe_max_distance (%d) must be at most max_len - 1 (%d): offsets beyond max_len - 1 never occur, "
              "so those rows of the relative tables would never be used",
              cfg->pe_max_distance, cfg->max_len - 1);
    return TFM_OK;
}

/* Per layer, shared by the heads (§3.1: "shared across attention heads"): a^K (2k+1, d_k) and,
 * with values, a^V (2k+1, d_k), row k + clip(j − i, ±k); Xavier-uniform like tensor2tensor's
 * default initializer of these tables. */
static void shaw_add_params(param_builder *b, const tfm_config *cfg, int stack, const stack_desc *sd, pe_params *sp,
                            layer_params *lp) {
    (void)stack;
    (void)sp;
    const size_t rows = 2 * shaw_clip(cfg) + 1, d_k = (size_t)(cfg->d_model / cfg->n_heads);
    char name[TFM_PARAM_NAME_MAX];
    for (int l = 0; l < sd->n_layers; l++) {
        snprintf(name, sizeof name, "%s.layers.%d.self_attn.rel_k.weight", sd->prefix, l);
        param_add(b, name, rows, d_k, lp ? &lp[l].pe.w[0] : NULL, PARAM_INIT_XAVIER, d_k);
        if (!cfg->pe_shaw_values) continue;
        snprintf(name, sizeof name, "%s.layers.%d.self_attn.rel_v.weight", sd->prefix, l);
        param_add(b, name, rows, d_k, lp ? &lp[l].pe.w[1] : NULL, PARAM_INIT_XAVIER, d_k);
    }
}

/* The tables of layer lp (parameters or gradients alike: the same layout). */
static void shaw_rel_tables(const tfm_config *cfg, const layer_params *lp, float **rel_k, float **rel_v,
                            size_t *clip) {
    *rel_k = lp->pe.w[0];
    *rel_v = cfg->pe_shaw_values ? lp->pe.w[1] : NULL;
    *clip = shaw_clip(cfg);
}

static void shaw_fill_defaults(tfm_config *cfg) { cfg->pe_max_distance = (int)shaw_clip(cfg); }

const pe_kind pe_kind_shaw = {
    .name = "shaw",
    .options = PE_OPT_MAX_DISTANCE | PE_OPT_SHAW_VALUES,
    .validate = shaw_validate,
    .fill_defaults = shaw_fill_defaults,
    .add_params = shaw_add_params,
    .rel_tables = shaw_rel_tables,
};
