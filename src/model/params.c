/* The single list of a model's tensors, with PyTorch's nn.Transformer names (docs/FORMATS.md),
 * built by walking the model's stacks (stack.h). */
#include "params.h"

#include "core_internal.h"
#include "pe.h"
#include "stack.h"

#include <string.h>

void param_add(param_builder *c, const char *name, size_t rows, size_t cols, float **slot, param_init init,
               size_t fan_in) {
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
static void add_alias(param_builder *c, const char *name, size_t rows, size_t cols, float **slot, size_t target,
                      size_t target_offset) {
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

/* Names are built in buffers with room for any suffix; param_add keeps TFM_PARAM_NAME_MAX − 1 chars. */
#define NAME_BUF (TFM_PARAM_NAME_MAX + 32)

/* qkv: rows of in_proj (3d; self-attention cfg_qkv_dim); bias 0: no bias tensors (no_linear_bias). */
static void add_mha(param_builder *c, const char *prefix, mha_params *m, size_t d, size_t qkv, int bias) {
    char name[NAME_BUF];
    snprintf(name, sizeof name, "%s.in_proj_weight", prefix);
    param_add(c, name, qkv, d, m ? &m->in_proj_weight : NULL, PARAM_INIT_XAVIER, d);
    if (bias) {
        snprintf(name, sizeof name, "%s.in_proj_bias", prefix);
        param_add(c, name, qkv, 0, m ? &m->in_proj_bias : NULL, PARAM_INIT_ZERO, d);
    }
    snprintf(name, sizeof name, "%s.out_proj.weight", prefix);
    param_add(c, name, d, d, m ? &m->out_proj_weight : NULL, PARAM_INIT_XAVIER, d);
    if (bias) {
        snprintf(name, sizeof name, "%s.out_proj.bias", prefix);
        param_add(c, name, d, 0, m ? &m->out_proj_bias : NULL, PARAM_INIT_ZERO, d);
    }
}

/* One block, in nn.Transformer*Layer's order: attention(s), the FFN, then the norms. */
static void add_block(param_builder *c, const tfm_config *cfg, const char *prefix, const block_desc *bd,
                      layer_params *l, size_t d, size_t d_ff) {
    char name[NAME_BUF];
    const int bias = !cfg->no_linear_bias, ln_bias = cfg->norm != TFM_NORM_RMS;
    const size_t ff1 = cfg_ff1_rows(cfg);
    snprintf(name, sizeof name, "%s.self_attn", prefix);
    add_mha(c, name, l ? &l->self_attn : NULL, d, cfg_qkv_dim(cfg), bias);
    if (block_has(bd, SUB_CROSS_ATTN)) {
        snprintf(name, sizeof name, "%s.multihead_attn", prefix);
        add_mha(c, name, l ? &l->cross_attn : NULL, d, 3 * d, bias);
    }
    snprintf(name, sizeof name, "%s.linear1.weight", prefix);
    param_add(c, name, ff1, d, l ? &l->linear1_weight : NULL, PARAM_INIT_XAVIER, d);
    if (bias) {
        snprintf(name, sizeof name, "%s.linear1.bias", prefix);
        param_add(c, name, ff1, 0, l ? &l->linear1_bias : NULL, PARAM_INIT_LINEAR_BIAS, d);
    }
    snprintf(name, sizeof name, "%s.linear2.weight", prefix);
    param_add(c, name, d, d_ff, l ? &l->linear2_weight : NULL, PARAM_INIT_XAVIER, d_ff);
    if (bias) {
        snprintf(name, sizeof name, "%s.linear2.bias", prefix);
        param_add(c, name, d, 0, l ? &l->linear2_bias : NULL, PARAM_INIT_LINEAR_BIAS, d_ff);
    }
    for (int i = 0; i < bd->n_sub; i++) {
        snprintf(name, sizeof name, "%s.norm%d.weight", prefix, i + 1);
        param_add(c, name, d, 0, l ? &l->norm_weight[i] : NULL, PARAM_INIT_ONE, d);
        if (!ln_bias) continue;
        snprintf(name, sizeof name, "%s.norm%d.bias", prefix, i + 1);
        param_add(c, name, d, 0, l ? &l->norm_bias[i] : NULL, PARAM_INIT_ZERO, d);
    }
}

/* BERT's embedding block (cfg->type_vocab, cfg->embed_norm; none for other models):
 * <prefix>.type_embed.weight (type_vocab, d), <prefix>.embed_norm.weight/bias (d). */
static void add_bert_embedding(param_builder *c, const tfm_config *cfg, const stack_desc *sd, stack_params *sp,
                               size_t d) {
    char name[NAME_BUF];
    if (cfg->type_vocab > 0) {
        snprintf(name, sizeof name, "%s.type_embed.weight", sd->prefix);
        param_add(c, name, (size_t)cfg->type_vocab, d, sp ? &sp->type_embed : NULL, PARAM_INIT_POSITION, d);
    }
    if (cfg->embed_norm) {
        snprintf(name, sizeof name, "%s.embed_norm.weight", sd->prefix);
        param_add(c, name, d, 0, sp ? &sp->embed_norm_weight : NULL, PARAM_INIT_ONE, d);
        snprintf(name, sizeof name, "%s.embed_norm.bias", sd->prefix);
        param_add(c, name, d, 0, sp ? &sp->embed_norm_bias : NULL, PARAM_INIT_ZERO, d);
    }
}

size_t params_layout(const tfm_config *cfg, model_params *p, float *base, param_entry *entries,
                     size_t *n_entries) {
    param_builder c = {base, entries, 0, 0};
    const size_t d = (size_t)cfg->d_model, d_ff = (size_t)cfg->d_ff;
    const pe_kind *pe = pe_of(cfg);
    model_desc md;
    model_describe(cfg, &md);
    char name[TFM_PARAM_NAME_MAX];
    if (p && base) memset(p, 0, sizeof *p);

    /* embeddings; tied: every one (and the generator) is the first stack's matrix */
    size_t tie_index = 0, tie_offset = 0;
    for (int s = 0; s < md.n_stacks; s++) {
        const stack_desc *sd = &md.stack[s];
        float **slot = p ? &p->stack[s].embed : NULL;
        if (cfg->tie_embeddings && s > 0) {
            add_alias(&c, sd->embed_name, (size_t)sd->vocab, d, slot, tie_index, tie_offset);
            continue;
        }
        tie_index = c.n;
        tie_offset = c.total;
        param_add(&c, sd->embed_name, (size_t)sd->vocab, d, slot, PARAM_INIT_EMBEDDING, d);
    }
    for (int s = 0; s < md.n_stacks; s++) {
        const stack_desc *sd = &md.stack[s];
        stack_params *sp = p ? &p->stack[s] : NULL;
        add_bert_embedding(&c, cfg, sd, sp, d);
        for (int i = 0; i < sd->n_layers; i++) {
            snprintf(name, sizeof name, "%s.layers.%d", sd->prefix, i);
            add_block(&c, cfg, name, &sd->block, sp ? &sp->layers[i] : NULL, d, d_ff);
        }
        if (!sd->no_final_norm) {
            snprintf(name, sizeof name, "%s.norm.weight", sd->prefix);
            param_add(&c, name, d, 0, sp ? &sp->norm_weight : NULL, PARAM_INIT_ONE, d);
            if (cfg->norm != TFM_NORM_RMS) {
                snprintf(name, sizeof name, "%s.norm.bias", sd->prefix);
                param_add(&c, name, d, 0, sp ? &sp->norm_bias : NULL, PARAM_INIT_ZERO, d);
            }
        }
        if (pe->add_params) pe->add_params(&c, cfg, s, sd, sp ? &sp->pe : NULL, sp ? sp->layers : NULL);
    }
    if (md.out_stack >= 0) {
        const size_t vt = (size_t)cfg->tgt_vocab;
        float **slot = p ? &p->generator_weight : NULL;
        if (cfg->tie_embeddings)
            add_alias(&c, "generator.weight", vt, d, slot, tie_index, tie_offset);
        else
            param_add(&c, "generator.weight", vt, d, slot, PARAM_INIT_XAVIER, d);
        param_add(&c, "generator.bias", vt, 0, p ? &p->generator_bias : NULL, PARAM_INIT_LINEAR_BIAS, d);
    }
    if (n_entries) *n_entries = c.n;
    return c.total;
}
