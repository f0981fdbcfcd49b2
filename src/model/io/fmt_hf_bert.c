/* A Hugging Face BERT folder as a model format (model_format.h; transformers' BertModel:
 * config.json + model.safetensors) loaded straight into an encoder-only tfm_model: the config mapped onto tfm_config, every tensor found by its HF
 * name, checked (dtype, shape) and copied into our table, the query/key/value projections packed
 * into in_proj as nn.MultiheadAttention keeps them (docs/BERT.md has the name table). */
#include "model_format.h"

#include "io/hf.h"
#include "model_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

/* ---- config.json ------------------------------------------------------------------------------ */

/* BertConfig → tfm_config: encoder-only, post-LN, exact GELU, learned absolute positions, token
 * types, embedding LayerNorm; one vocabulary. bos/eos are not used by an encoder: set to two ids
 * other than pad so the configuration validates. */
static tfm_status config_from_hf(const char *path, const cJSON *root, tfm_config *c) {
    const char *act = hf_cfg_str(root, "hidden_act");
    RETURN_IF(act && strcmp(act, "gelu") != 0, TFM_ERR_UNSUPPORTED,
              "%s: hidden_act '%.40s' is not supported (only 'gelu', the exact erf form)", path, act);
    const char *pet = hf_cfg_str(root, "position_embedding_type");
    RETURN_IF(pet && strcmp(pet, "absolute") != 0, TFM_ERR_UNSUPPORTED,
              "%s: position_embedding_type '%.40s' is not supported (only 'absolute')", path, pet);
    *c = tfm_config_default();
    c->arch = TFM_ARCH_ENCODER_ONLY;
    c->norm_first = 0;
    c->activation = TFM_ACT_GELU;
    c->pe = TFM_PE_LEARNED;
    c->embed_norm = 1;
    c->n_dec_layers = 0;
    c->type_vocab = 2;
    c->pad_id = 0;
    TRY(hf_cfg_int(path, root, "hidden_size", 1, &c->d_model));
    TRY(hf_cfg_int(path, root, "num_attention_heads", 1, &c->n_heads));
    TRY(hf_cfg_int(path, root, "num_hidden_layers", 1, &c->n_enc_layers));
    TRY(hf_cfg_int(path, root, "intermediate_size", 1, &c->d_ff));
    TRY(hf_cfg_int(path, root, "vocab_size", 1, &c->src_vocab));
    TRY(hf_cfg_int(path, root, "max_position_embeddings", 1, &c->max_len));
    TRY(hf_cfg_int(path, root, "type_vocab_size", 0, &c->type_vocab));
    TRY(hf_cfg_int(path, root, "pad_token_id", 0, &c->pad_id));
    RETURN_IF(c->type_vocab < 1, TFM_ERR_FORMAT, "%s: type_vocab_size must be at least 1", path);
    c->tgt_vocab = c->src_vocab;
    RETURN_IF(c->src_vocab < 3, TFM_ERR_FORMAT, "%s: vocab_size %d is too small", path, c->src_vocab);
    c->bos_id = (c->pad_id + 1) % c->src_vocab;
    c->eos_id = (c->pad_id + 2) % c->src_vocab;
    const cJSON *eps = cJSON_GetObjectItemCaseSensitive(root, "layer_norm_eps");
    if (eps) {
        RETURN_IF(!cJSON_IsNumber(eps), TFM_ERR_FORMAT, "%s: 'layer_norm_eps' must be a number", path);
        c->layer_norm_eps = (float)eps->valuedouble;
    } else {
        c->layer_norm_eps = 1e-12f; /* BertConfig's default */
    }
    tfm_status st = tfm_config_validate(c);
    return st == TFM_OK ? TFM_OK : tfm_error_prefix(st, "%s: ", path);
}

/* ---- tensors ---------------------------------------------------------------------------------- */

/* HF tensor names may carry the "bert." prefix of BertFor* checkpoints. */
static const st_tensor *find_hf(const st_file *f, const char *prefix, const char *name) {
    char full[256];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    return st_find(f, full);
}

/* Reads HF tensor prefix+name of shape (rows[, cols]) into dst (hf_read_f32). */
static tfm_status read_hf(const st_file *f, const char *prefix, const char *name, size_t rows, size_t cols,
                          float *dst, size_t *loaded) {
    char full[256];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    TRY(hf_read_f32(f, full, rows, cols, dst, "a Hugging Face BERT"));
    *loaded += cols ? rows * cols : rows;
    return TFM_OK;
}

/* Tensors of a HF file we accept without loading: the pooler (sentence-transformers does not use
 * it), the position_ids buffer of older checkpoints, and the pre-training heads (cls.*). */
static int ignorable(const char *name, const char *prefix) {
    const size_t pl = strlen(prefix);
    if (strncmp(name, prefix, pl) == 0) name += pl;
    return strncmp(name, "pooler.", 7) == 0 || strcmp(name, "embeddings.position_ids") == 0 ||
           strncmp(name, "cls.", 4) == 0;
}

static tfm_status load_hf_tensors(tfm_model *m, const st_file *f) {
    const tfm_config *c = &m->cfg;
    const size_t d = (size_t)c->d_model, d_ff = (size_t)c->d_ff;
    const char *prefix = find_hf(f, "bert.", "embeddings.word_embeddings.weight") ? "bert." : "";
    stack_params *sp = &m->p.stack[0];
    size_t n = 0;
    char name[160];
    TRY(read_hf(f, prefix, "embeddings.word_embeddings.weight", (size_t)c->src_vocab, d, sp->embed, &n));
    TRY(read_hf(f, prefix, "embeddings.position_embeddings.weight", (size_t)c->max_len, d, sp->pe.w[0], &n));
    TRY(read_hf(f, prefix, "embeddings.token_type_embeddings.weight", (size_t)c->type_vocab, d, sp->type_embed, &n));
    TRY(read_hf(f, prefix, "embeddings.LayerNorm.weight", d, 0, sp->embed_norm_weight, &n));
    TRY(read_hf(f, prefix, "embeddings.LayerNorm.bias", d, 0, sp->embed_norm_bias, &n));
    static const char *const qkv[3] = {"query", "key", "value"};
    for (int l = 0; l < c->n_enc_layers; l++) {
        layer_params *L = &sp->layers[l];
#define HF(fmt_suffix) (snprintf(name, sizeof name, "encoder.layer.%d.%s", l, fmt_suffix), name)
        for (int k = 0; k < 3; k++) { /* in_proj rows [k·d, (k+1)·d) = W_Q, W_K, W_V */
            char sub[64];
            snprintf(sub, sizeof sub, "attention.self.%s.weight", qkv[k]);
            TRY(read_hf(f, prefix, HF(sub), d, d, L->self_attn.in_proj_weight + (size_t)k * d * d, &n));
            snprintf(sub, sizeof sub, "attention.self.%s.bias", qkv[k]);
            TRY(read_hf(f, prefix, HF(sub), d, 0, L->self_attn.in_proj_bias + (size_t)k * d, &n));
        }
        TRY(read_hf(f, prefix, HF("attention.output.dense.weight"), d, d, L->self_attn.out_proj_weight, &n));
        TRY(read_hf(f, prefix, HF("attention.output.dense.bias"), d, 0, L->self_attn.out_proj_bias, &n));
        TRY(read_hf(f, prefix, HF("attention.output.LayerNorm.weight"), d, 0, L->norm_weight[0], &n));
        TRY(read_hf(f, prefix, HF("attention.output.LayerNorm.bias"), d, 0, L->norm_bias[0], &n));
        TRY(read_hf(f, prefix, HF("intermediate.dense.weight"), d_ff, d, L->linear1_weight, &n));
        TRY(read_hf(f, prefix, HF("intermediate.dense.bias"), d_ff, 0, L->linear1_bias, &n));
        TRY(read_hf(f, prefix, HF("output.dense.weight"), d, d_ff, L->linear2_weight, &n));
        TRY(read_hf(f, prefix, HF("output.dense.bias"), d, 0, L->linear2_bias, &n));
        TRY(read_hf(f, prefix, HF("output.LayerNorm.weight"), d, 0, L->norm_weight[1], &n));
        TRY(read_hf(f, prefix, HF("output.LayerNorm.bias"), d, 0, L->norm_bias[1], &n));
#undef HF
    }
    TFM_ASSERT(n == m->n_params); /* every tensor of the encoder-only table came from the file */
    /* every tensor of the file was used or is one we may ignore: a layer beyond num_hidden_layers,
     * or a tensor of another model, is an error, not silently dropped */
    for (size_t i = 0; i < f->n_tensors; i++) {
        const char *t = f->tensors[i].name;
        if (ignorable(t, prefix)) continue;
        const size_t pl = strlen(prefix);
        int used = strncmp(t, prefix, pl) == 0 && strncmp(t + pl, "embeddings.", 11) == 0;
        int layer = -1;
        if (strncmp(t, prefix, pl) == 0 && sscanf(t + pl, "encoder.layer.%d.", &layer) == 1)
            used = layer >= 0 && layer < c->n_enc_layers;
        RETURN_IF(!used, TFM_ERR_FORMAT,
                  "%s: unexpected tensor '%s' (not part of a BERT encoder with %d layers per config.json)", f->path, t,
                  c->n_enc_layers);
    }
    return TFM_OK;
}

static tfm_status bert_read_config(const fmt_source *src, tfm_config *cfg) {
    return config_from_hf(src->config_path, src->config, cfg);
}

static tfm_status bert_read_tensors(const fmt_source *src, tfm_model *m) { return load_hf_tensors(m, &src->st); }

/* The tokenizer (vocab.txt, WordPiece) is opened beside the model by tfm_embedder_open. */
const model_format model_format_hf_bert = {
    .name = "Hugging Face BERT",
    .hf_model_type = "bert",
    .hf_auto_class = "AutoModel",
    .read_config = bert_read_config,
    .read_tensors = bert_read_tensors,
};
