/* The single list of a model's tensors, with PyTorch's nn.Transformer names (DESIGN.md §3). */
#include "params.h"

#include "core_internal.h"

#include <string.h>

typedef struct {
    float *base;
    param_entry *entries;
    size_t n;
    size_t total;
} layout_ctx;

static void add(layout_ctx *c, const char *name, size_t rows, size_t cols, float **slot,
                param_init init, size_t fan_in) {
    size_t numel = cols ? rows * cols : rows;
    if (c->entries) {
        param_entry *e = &c->entries[c->n];
        snprintf(e->name, sizeof e->name, "%s", name);
        e->ndim = cols ? 2 : 1;
        e->shape[0] = rows;
        e->shape[1] = cols;
        e->numel = numel;
        e->offset = c->total;
        e->alias_of = -1;
        e->init = init;
        e->fan_in = fan_in;
    }
    if (slot && c->base) *slot = c->base + c->total;
    c->total += numel;
    c->n++;
}

/* A tensor sharing the storage of entry `target` (tied embeddings): same values, its own name. */
static void add_alias(layout_ctx *c, const char *name, size_t rows, size_t cols, float **slot,
                      size_t target, size_t target_offset) {
    if (c->entries) {
        param_entry *e = &c->entries[c->n];
        *e = c->entries[target];
        snprintf(e->name, sizeof e->name, "%s", name);
        e->shape[0] = rows;
        e->shape[1] = cols;
        e->alias_of = (int)target;
    }
    if (slot && c->base) *slot = c->base + target_offset;
    c->n++;
}

static void add_mha(layout_ctx *c, const char *prefix, mha_params *m, size_t d) {
    char name[TFM_PARAM_NAME_MAX];
    snprintf(name, sizeof name, "%s.in_proj_weight", prefix);
    add(c, name, 3 * d, d, m ? &m->in_proj_weight : NULL, PARAM_INIT_XAVIER, d);
    snprintf(name, sizeof name, "%s.in_proj_bias", prefix);
    add(c, name, 3 * d, 0, m ? &m->in_proj_bias : NULL, PARAM_INIT_ZERO, d);
    snprintf(name, sizeof name, "%s.out_proj.weight", prefix);
    add(c, name, d, d, m ? &m->out_proj_weight : NULL, PARAM_INIT_XAVIER, d);
    snprintf(name, sizeof name, "%s.out_proj.bias", prefix);
    add(c, name, d, 0, m ? &m->out_proj_bias : NULL, PARAM_INIT_ZERO, d);
}

static void add_layer(layout_ctx *c, const char *prefix, layer_params *l, size_t d, size_t d_ff,
                      int is_decoder) {
    char name[TFM_PARAM_NAME_MAX];
    snprintf(name, sizeof name, "%s.self_attn", prefix);
    add_mha(c, name, l ? &l->self_attn : NULL, d);
    if (is_decoder) {
        snprintf(name, sizeof name, "%s.multihead_attn", prefix);
        add_mha(c, name, l ? &l->cross_attn : NULL, d);
    }
    snprintf(name, sizeof name, "%s.linear1.weight", prefix);
    add(c, name, d_ff, d, l ? &l->linear1_weight : NULL, PARAM_INIT_XAVIER, d);
    snprintf(name, sizeof name, "%s.linear1.bias", prefix);
    add(c, name, d_ff, 0, l ? &l->linear1_bias : NULL, PARAM_INIT_LINEAR_BIAS, d);
    snprintf(name, sizeof name, "%s.linear2.weight", prefix);
    add(c, name, d, d_ff, l ? &l->linear2_weight : NULL, PARAM_INIT_XAVIER, d_ff);
    snprintf(name, sizeof name, "%s.linear2.bias", prefix);
    add(c, name, d, 0, l ? &l->linear2_bias : NULL, PARAM_INIT_LINEAR_BIAS, d_ff);
    int n_norms = is_decoder ? 3 : 2;
    for (int i = 0; i < n_norms; i++) {
        snprintf(name, sizeof name, "%s.norm%d.weight", prefix, i + 1);
        add(c, name, d, 0, l ? &l->norm_weight[i] : NULL, PARAM_INIT_ONE, d);
        snprintf(name, sizeof name, "%s.norm%d.bias", prefix, i + 1);
        add(c, name, d, 0, l ? &l->norm_bias[i] : NULL, PARAM_INIT_ZERO, d);
    }
}

size_t params_layout(const tfm_config *cfg, model_params *p, float *base, param_entry *entries,
                     size_t *n_entries) {
    layout_ctx c = {base, entries, 0, 0};
    const size_t d = (size_t)cfg->d_model, d_ff = (size_t)cfg->d_ff;
    const size_t vs = (size_t)cfg->src_vocab, vt = (size_t)cfg->tgt_vocab;
    char name[TFM_PARAM_NAME_MAX];
    if (p && base) memset(p, 0, sizeof *p);

    const size_t src_embed_index = c.n, src_embed_offset = c.total;
    add(&c, "src_embed.weight", vs, d, p ? &p->src_embed : NULL, PARAM_INIT_EMBEDDING, d);
    if (cfg->tie_embeddings)
        add_alias(&c, "tgt_embed.weight", vt, d, p ? &p->tgt_embed : NULL, src_embed_index, src_embed_offset);
    else
        add(&c, "tgt_embed.weight", vt, d, p ? &p->tgt_embed : NULL, PARAM_INIT_EMBEDDING, d);
    for (int i = 0; i < cfg->n_enc_layers; i++) {
        snprintf(name, sizeof name, "transformer.encoder.layers.%d", i);
        add_layer(&c, name, p ? &p->enc[i] : NULL, d, d_ff, 0);
    }
    add(&c, "transformer.encoder.norm.weight", d, 0, p ? &p->enc_norm_weight : NULL, PARAM_INIT_ONE, d);
    add(&c, "transformer.encoder.norm.bias", d, 0, p ? &p->enc_norm_bias : NULL, PARAM_INIT_ZERO, d);
    for (int i = 0; i < cfg->n_dec_layers; i++) {
        snprintf(name, sizeof name, "transformer.decoder.layers.%d", i);
        add_layer(&c, name, p ? &p->dec[i] : NULL, d, d_ff, 1);
    }
    add(&c, "transformer.decoder.norm.weight", d, 0, p ? &p->dec_norm_weight : NULL, PARAM_INIT_ONE, d);
    add(&c, "transformer.decoder.norm.bias", d, 0, p ? &p->dec_norm_bias : NULL, PARAM_INIT_ZERO, d);
    if (cfg->tie_embeddings)
        add_alias(&c, "generator.weight", vt, d, p ? &p->generator_weight : NULL, src_embed_index, src_embed_offset);
    else
        add(&c, "generator.weight", vt, d, p ? &p->generator_weight : NULL, PARAM_INIT_XAVIER, d);
    add(&c, "generator.bias", vt, 0, p ? &p->generator_bias : NULL, PARAM_INIT_LINEAR_BIAS, d);
    if (n_entries) *n_entries = c.n;
    return c.total;
}
