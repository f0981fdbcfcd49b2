/* Model formats (model_format.h) of the Hugging Face decoder-only language models (docs/LLM.md) — GPT-2 (`model_type: gpt2`,
 * GPT2LMHeadModel), Llama (`model_type: llama`, LlamaForCausalLM), Qwen2 and Mistral — from config.json,
 * generation_config.json and model.safetensors into a decoder-only tfm_model: the configuration
 * mapped onto tfm_config (the family's traits as data), every tensor found by its name, checked
 * (dtype, shape) and copied into our table.
 *
 * GPT-2's Conv1D weights are stored [in, out] (x·W + b); they are transposed once, here, into
 * nn.Linear's [out, in], because every product kernel (the decoding step's too: the panels read the
 * weight in place) reads that layout: reading them as stored would need a second set of kernels for
 * one family.
 * c_attn's [d, 3d] becomes in_proj (3d, d) with Q, K, V in that order, as nn.MultiheadAttention's.
 * Llama's q/k/v_proj are stacked into in_proj (d + 2·kv rows), gate/up_proj into linear1 (2·d_ff
 * rows: gate then up).
 *
 * The families with Llama's block (transformers 4.40.2 models/qwen2 and models/mistral, read, not
 * guessed): Qwen2 (`model_type: qwen2`, Qwen2ForCausalLM) is Llama with biases on q/k/v_proj
 * (bias=True) and none on o_proj or the MLP; Mistral (`model_type: mistral`) is Llama's block
 * with no biases at all. Both may declare a sliding window, which tfm does not implement: it is
 * refused wherever it could change what a position attends to (see sliding_window()). */
#include "model_format.h"

#include "io/hf.h"
#include "model_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef enum { FAM_GPT2, FAM_LLAMA, FAM_QWEN2, FAM_MISTRAL, N_FAM } family;
/* config.json's model_type of each family (what messages name) */
static const char *const k_model_type[N_FAM] = {[FAM_GPT2] = "gpt2", [FAM_LLAMA] = "llama", [FAM_QWEN2] = "qwen2",
                                                [FAM_MISTRAL] = "mistral"};

/* ---- config.json ------------------------------------------------------------------------------ */

/* A token id: a non-negative integer below 2^24. */
static tfm_status id_value(const char *path, const cJSON *j, const char *key, int *out) {
    RETURN_IF(!cJSON_IsNumber(j) || j->valuedouble != floor(j->valuedouble) || j->valuedouble < 0 ||
                  j->valuedouble > 16777216.0,
              TFM_ERR_FORMAT, "%s: '%s' must be a token id", path, key);
    *out = (int)j->valuedouble;
    return TFM_OK;
}

/* An id key (bos_token_id), unchanged when absent or null; a list gives its first element. */
static tfm_status j_id(const char *path, const cJSON *root, const char *key, int *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, key);
    if (cJSON_IsArray(j)) j = cJSON_GetArrayItem(j, 0);
    if (!j || cJSON_IsNull(j)) return TFM_OK;
    return id_value(path, j, key, out);
}

/* eos_token_id: an id, or a list of them (Llama-3's [128001, 128009]): the first is eos_id, the
 * others eos_more — generation stops at any, as transformers' generate. Unchanged when absent. */
static tfm_status j_eos(const char *path, const cJSON *root, tfm_config *c) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "eos_token_id");
    if (!j || cJSON_IsNull(j)) return TFM_OK;
    c->n_eos_more = 0; /* generation_config.json's value replaces config.json's whole */
    if (!cJSON_IsArray(j)) return id_value(path, j, "eos_token_id", &c->eos_id);
    const int n = cJSON_GetArraySize(j);
    RETURN_IF(n > 1 + TFM_MAX_EOS_MORE, TFM_ERR_UNSUPPORTED, "%s: 'eos_token_id' lists %d ids: tfm stops at %d at most",
              path, n, 1 + TFM_MAX_EOS_MORE);
    TRY(id_value(path, cJSON_GetArrayItem(j, 0), "eos_token_id", &c->eos_id));
    c->n_eos_more = n - 1;
    for (int i = 1; i < n; i++) TRY(id_value(path, cJSON_GetArrayItem(j, i), "eos_token_id", &c->eos_more[i - 1]));
    return TFM_OK;
}

/* A boolean key, false when absent or null. */
static tfm_status j_flag(const char *path, const cJSON *root, const char *key, int *out) {
    return hf_cfg_bool(path, root, key, 0, out);
}

/* GPT2Config → tfm_config: pre-LN, learned positions, the activation of activation_function, tied
 * lm_head (tie_word_embeddings, default true), no √d_model embedding scale. */
static tfm_status gpt2_config(const char *path, const cJSON *root, tfm_config *c) {
    const char *act = hf_cfg_str(root, "activation_function");
    if (!act || strcmp(act, "gelu_new") == 0 || strcmp(act, "gelu_pytorch_tanh") == 0)
        c->activation = TFM_ACT_GELU_TANH; /* GPT2Config's default: gelu_new */
    else if (strcmp(act, "gelu") == 0)
        c->activation = TFM_ACT_GELU;
    else if (strcmp(act, "relu") == 0)
        c->activation = TFM_ACT_RELU;
    else
        return tfm_set_error(TFM_ERR_UNSUPPORTED,
                             "%s: activation_function '%.40s' is not supported (gelu_new, gelu_pytorch_tanh, gelu or relu)",
                             path, act);
    int scale = 1, inverse = 0, cross = 0;
    TRY(hf_cfg_bool(path, root, "scale_attn_weights", 1, &scale));
    TRY(j_flag(path, root, "scale_attn_by_inverse_layer_idx", &inverse));
    TRY(j_flag(path, root, "add_cross_attention", &cross));
    RETURN_IF(!scale, TFM_ERR_UNSUPPORTED, "%s: scale_attn_weights false is not supported", path);
    RETURN_IF(inverse, TFM_ERR_UNSUPPORTED, "%s: scale_attn_by_inverse_layer_idx true is not supported", path);
    RETURN_IF(cross, TFM_ERR_UNSUPPORTED, "%s: add_cross_attention is not supported", path);
    c->pe = TFM_PE_LEARNED;
    c->layer_norm_eps = 1e-5f;
    TRY(hf_cfg_int(path, root, "n_embd", 1, &c->d_model));
    TRY(hf_cfg_int(path, root, "n_head", 1, &c->n_heads));
    TRY(hf_cfg_int(path, root, "n_layer", 1, &c->n_dec_layers));
    TRY(hf_cfg_int(path, root, "n_positions", 1, &c->max_len));
    c->d_ff = 4 * c->d_model; /* n_inner null: 4·n_embd */
    TRY(hf_cfg_int(path, root, "n_inner", 0, &c->d_ff));
    TRY(hf_cfg_float(path, root, "layer_norm_epsilon", 1e-5f, &c->layer_norm_eps));
    TRY(hf_cfg_bool(path, root, "tie_word_embeddings", 1, &c->tie_embeddings));
    return TFM_OK;
}

/* Whether the family's sliding-window attention could bind within the max_len positions tfm runs;
 * an error then (tfm attends to every earlier position). Qwen2: the window is used only with
 * use_sliding_window true, and then only by the layers below max_window_layers (Qwen2FlashAttention2:
 * `layer_idx >= max_window_layers` turns it off); Mistral: whenever sliding_window is not null.
 * A window of at least max_position_embeddings positions never binds: accepted. (transformers
 * 4.40.2's eager Qwen2 masks with sliding_window even when use_sliding_window is false, past
 * sliding_window positions; tfm follows the config, as Qwen's own code does.) */
static tfm_status sliding_window(const char *path, const cJSON *root, family fam, const tfm_config *c) {
    int use = fam == FAM_MISTRAL, window = 0, below = c->n_dec_layers;
    if (fam == FAM_QWEN2) TRY(j_flag(path, root, "use_sliding_window", &use));
    if (fam == FAM_LLAMA) { /* Llama has no window: any sign of one is another model's config */
        const cJSON *sl = cJSON_GetObjectItemCaseSensitive(root, "sliding_window");
        TRY(j_flag(path, root, "use_sliding_window", &use));
        RETURN_IF((sl && !cJSON_IsNull(sl)) || use, TFM_ERR_UNSUPPORTED, "%s: sliding-window attention is not supported",
                  path);
        return TFM_OK;
    }
    if (!use) return TFM_OK;
    TRY(hf_cfg_int(path, root, "sliding_window", 0, &window)); /* null or absent: no window */
    if (fam == FAM_QWEN2) TRY(hf_cfg_int(path, root, "max_window_layers", 0, &below));
    RETURN_IF(window > 0 && window < c->max_len && below > 0, TFM_ERR_UNSUPPORTED,
              "%s: sliding-window attention (sliding_window %d < max_position_embeddings %d%s) is not supported: tfm "
              "attends to every earlier position",
              path, window, c->max_len, fam == FAM_QWEN2 ? ", use_sliding_window true" : "");
    return TFM_OK;
}

/* LlamaConfig (and Qwen2Config, MistralConfig) → tfm_config: RMSNorm pre-LN, SwiGLU, RoPE (half
 * pairing, rope_theta), grouped-query attention, lm_head tied only with tie_word_embeddings; biases
 * only with Llama's attention_bias (q, k, v, o) or Qwen2's q/k/v. */
static tfm_status llama_config(const char *path, const cJSON *root, family fam, tfm_config *c) {
    const char *act = hf_cfg_str(root, "hidden_act");
    RETURN_IF(act && strcmp(act, "silu") != 0, TFM_ERR_UNSUPPORTED,
              "%s: hidden_act '%.40s' is not supported (Llama's silu only)", path, act);
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
    RETURN_IF(rs && !cJSON_IsNull(rs), TFM_ERR_UNSUPPORTED,
              "%s: rope_scaling is not supported (tfm runs RoPE with rope_theta and no scaling); set it to null only "
              "if the model was trained without it",
              path);
    int mlp_bias = 0, attn_bias = fam == FAM_QWEN2;
    TRY(j_flag(path, root, "mlp_bias", &mlp_bias));
    if (fam == FAM_LLAMA) TRY(j_flag(path, root, "attention_bias", &attn_bias));
    RETURN_IF(mlp_bias, TFM_ERR_UNSUPPORTED, "%s: mlp_bias true is not supported", path);
    c->norm = TFM_NORM_RMS;
    c->activation = TFM_ACT_SWIGLU;
    c->pe = TFM_PE_ROPE;
    c->rope_pairing = TFM_ROPE_HALF;
    TRY(hf_cfg_int(path, root, "hidden_size", 1, &c->d_model));
    TRY(hf_cfg_int(path, root, "num_attention_heads", 1, &c->n_heads));
    c->n_kv_heads = c->n_heads;
    TRY(hf_cfg_int(path, root, "num_key_value_heads", 0, &c->n_kv_heads));
    TRY(hf_cfg_int(path, root, "num_hidden_layers", 1, &c->n_dec_layers));
    TRY(hf_cfg_int(path, root, "intermediate_size", 1, &c->d_ff));
    c->max_len = 2048;
    TRY(hf_cfg_int(path, root, "max_position_embeddings", 0, &c->max_len));
    TRY(sliding_window(path, root, fam, c));
    if (c->n_heads > 0 && c->d_model % c->n_heads == 0) {
        int head_dim = c->d_model / c->n_heads;
        TRY(hf_cfg_int(path, root, "head_dim", 0, &head_dim));
        RETURN_IF(head_dim != c->d_model / c->n_heads, TFM_ERR_UNSUPPORTED,
                  "%s: head_dim %d is not hidden_size / num_attention_heads (%d): not supported", path, head_dim,
                  c->d_model / c->n_heads);
    }
    RETURN_IF(c->n_kv_heads < 1 || c->n_kv_heads > c->n_heads || c->n_heads % c->n_kv_heads != 0, TFM_ERR_FORMAT,
              "%s: num_key_value_heads %d must divide num_attention_heads %d", path, c->n_kv_heads, c->n_heads);
    TRY(hf_cfg_float(path, root, "rms_norm_eps", 1e-6f, &c->layer_norm_eps));
    TRY(hf_cfg_float(path, root, "rope_theta", 10000.0f, &c->rope_theta));
    RETURN_IF(!(c->rope_theta > 0.0f && c->rope_theta < 1e12f), TFM_ERR_FORMAT, "%s: rope_theta must be positive", path);
    c->no_linear_bias = !attn_bias;
    TRY(hf_cfg_bool(path, root, "tie_word_embeddings", 0, &c->tie_embeddings));
    return TFM_OK;
}

/* config.json (+ generation_config.json's bos/eos, which win) → a decoder-only tfm_config. */
static tfm_status lm_config(const char *dir, const char *cfg_path, const cJSON *root, family *fam, tfm_config *c) {
    const char *type = hf_cfg_str(root, "model_type");
    *c = tfm_config_default();
    c->arch = TFM_ARCH_DECODER_ONLY;
    c->n_enc_layers = 0;
    c->norm_first = 1;
    c->embed_scale = 1.0f;            /* GPT-2 and Llama do not scale their embeddings */
    c->suppress = TFM_SUPPRESS_NONE;  /* transformers' generate bans no id */
    c->pad_id = -1;                   /* no padding token: nothing is masked as padding */
    *fam = FAM_LLAMA; /* the formats' recognise() let only the four through */
    for (int i = 0; i < N_FAM; i++)
        if (strcmp(type, k_model_type[i]) == 0) *fam = (family)i;
    TRY(*fam == FAM_GPT2 ? gpt2_config(cfg_path, root, c) : llama_config(cfg_path, root, *fam, c));
    TRY(hf_cfg_int(cfg_path, root, "vocab_size", 1, &c->src_vocab));
    c->tgt_vocab = c->src_vocab;
    c->bos_id = c->eos_id = -1;
    TRY(j_id(cfg_path, root, "bos_token_id", &c->bos_id));
    TRY(j_eos(cfg_path, root, c));
    char gen[4200];
    snprintf(gen, sizeof gen, "%s/generation_config.json", dir);
    struct stat sb;
    if (stat(gen, &sb) == 0) {
        cJSON *g;
        TRY(hf_json_load(gen, &g));
        tfm_status st = j_id(gen, g, "bos_token_id", &c->bos_id);
        if (st == TFM_OK) st = j_eos(gen, g, c);
        cJSON_Delete(g);
        TRY(st);
    }
    RETURN_IF(c->bos_id < 0 || c->eos_id < 0, TFM_ERR_FORMAT,
              "%s: bos_token_id and eos_token_id are needed (in config.json or generation_config.json)", cfg_path);
    tfm_status st = tfm_config_validate(c);
    return st == TFM_OK ? TFM_OK : tfm_error_prefix(st, "%s: ", cfg_path);
}

/* ---- tensors ---------------------------------------------------------------------------------- */

/* What reads one file's tensors: the file, GPT-2's transposition buffer, the tensors read so far,
 * and the model named in messages ("a Hugging Face qwen2 model": config.json's model_type). */
typedef struct {
    const st_file *f;
    float *tmp;
    uint8_t *used;
    char what[64];
} lm_reader;

/* The tensor `name` as (rows, cols) floats (hf_read_tensor: F32, BF16 or F16; `transposed` for
 * GPT-2's Conv1D), marked in r->used. */
static tfm_status read_t(const lm_reader *r, const char *name, size_t rows, size_t cols, int transposed, float *dst) {
    return hf_read_tensor(r->f, name, rows, cols, transposed, dst, r->tmp, r->used, r->what);
}

/* GPT-2 names may carry GPT2LMHeadModel's "transformer." prefix or not (GPT2Model's files). */
static tfm_status gpt2_tensors(tfm_model *m, const lm_reader *r) {
    const tfm_config *c = &m->cfg;
    const size_t d = (size_t)c->d_model, F = (size_t)c->d_ff;
    const char *pre = st_find(r->f, "transformer.wte.weight") ? "transformer." : "";
    stack_params *sp = &m->p.stack[0];
    char n[192];
#define NM(...) (snprintf(n, sizeof n, __VA_ARGS__), n)
    TRY(read_t(r, NM("%swte.weight", pre), (size_t)c->tgt_vocab, d, 0, sp->embed));
    TRY(read_t(r, NM("%swpe.weight", pre), (size_t)c->max_len, d, 0, sp->pe.w[0]));
    for (int l = 0; l < c->n_dec_layers; l++) {
        layer_params *L = &sp->layers[l];
        TRY(read_t(r, NM("%sh.%d.ln_1.weight", pre, l), d, 0, 0, L->norm_weight[0]));
        TRY(read_t(r, NM("%sh.%d.ln_1.bias", pre, l), d, 0, 0, L->norm_bias[0]));
        TRY(read_t(r, NM("%sh.%d.attn.c_attn.weight", pre, l), 3 * d, d, 1, L->self_attn.in_proj_weight));
        TRY(read_t(r, NM("%sh.%d.attn.c_attn.bias", pre, l), 3 * d, 0, 0, L->self_attn.in_proj_bias));
        TRY(read_t(r, NM("%sh.%d.attn.c_proj.weight", pre, l), d, d, 1, L->self_attn.out_proj_weight));
        TRY(read_t(r, NM("%sh.%d.attn.c_proj.bias", pre, l), d, 0, 0, L->self_attn.out_proj_bias));
        TRY(read_t(r, NM("%sh.%d.ln_2.weight", pre, l), d, 0, 0, L->norm_weight[1]));
        TRY(read_t(r, NM("%sh.%d.ln_2.bias", pre, l), d, 0, 0, L->norm_bias[1]));
        TRY(read_t(r, NM("%sh.%d.mlp.c_fc.weight", pre, l), F, d, 1, L->linear1_weight));
        TRY(read_t(r, NM("%sh.%d.mlp.c_fc.bias", pre, l), F, 0, 0, L->linear1_bias));
        TRY(read_t(r, NM("%sh.%d.mlp.c_proj.weight", pre, l), d, F, 1, L->linear2_weight));
        TRY(read_t(r, NM("%sh.%d.mlp.c_proj.bias", pre, l), d, 0, 0, L->linear2_bias));
    }
    TRY(read_t(r, NM("%sln_f.weight", pre), d, 0, 0, sp->norm_weight));
    TRY(read_t(r, NM("%sln_f.bias", pre), d, 0, 0, sp->norm_bias));
    if (!c->tie_embeddings) TRY(read_t(r, "lm_head.weight", (size_t)c->tgt_vocab, d, 0, m->p.generator_weight));
#undef NM
    return TFM_OK;
}

/* Llama, Qwen2 and Mistral: the same names; the biases of q/k/v (attention_bias, Qwen2) and o_proj
 * (attention_bias only: Qwen2 has none, so a file holding one is refused as an unexpected tensor). */
static tfm_status llama_tensors(tfm_model *m, family fam, const lm_reader *r) {
    const tfm_config *c = &m->cfg;
    const size_t d = (size_t)c->d_model, F = (size_t)c->d_ff, kvd = cfg_kv_dim(c);
    const int bias = !c->no_linear_bias, o_bias = bias && fam == FAM_LLAMA;
    stack_params *sp = &m->p.stack[0];
    char n[192];
#define NM(...) (snprintf(n, sizeof n, __VA_ARGS__), n)
    TRY(read_t(r, "model.embed_tokens.weight", (size_t)c->tgt_vocab, d, 0, sp->embed));
    for (int l = 0; l < c->n_dec_layers; l++) {
        layer_params *L = &sp->layers[l];
        mha_params *a = &L->self_attn;
        TRY(read_t(r, NM("model.layers.%d.input_layernorm.weight", l), d, 0, 0, L->norm_weight[0]));
        /* in_proj rows: W_Q (d), W_K (kvd), W_V (kvd) */
        TRY(read_t(r, NM("model.layers.%d.self_attn.q_proj.weight", l), d, d, 0, a->in_proj_weight));
        TRY(read_t(r, NM("model.layers.%d.self_attn.k_proj.weight", l), kvd, d, 0, a->in_proj_weight + d * d));
        TRY(read_t(r, NM("model.layers.%d.self_attn.v_proj.weight", l), kvd, d, 0, a->in_proj_weight + (d + kvd) * d));
        TRY(read_t(r, NM("model.layers.%d.self_attn.o_proj.weight", l), d, d, 0, a->out_proj_weight));
        if (bias) { /* q, k, v (and o with attention_bias); the bias tensors not read stay 0 (the MLP has none) */
            TRY(read_t(r, NM("model.layers.%d.self_attn.q_proj.bias", l), d, 0, 0, a->in_proj_bias));
            TRY(read_t(r, NM("model.layers.%d.self_attn.k_proj.bias", l), kvd, 0, 0, a->in_proj_bias + d));
            TRY(read_t(r, NM("model.layers.%d.self_attn.v_proj.bias", l), kvd, 0, 0, a->in_proj_bias + d + kvd));
        }
        if (o_bias) TRY(read_t(r, NM("model.layers.%d.self_attn.o_proj.bias", l), d, 0, 0, a->out_proj_bias));
        TRY(read_t(r, NM("model.layers.%d.post_attention_layernorm.weight", l), d, 0, 0, L->norm_weight[1]));
        /* linear1 rows: W_gate (F), W_up (F) */
        TRY(read_t(r, NM("model.layers.%d.mlp.gate_proj.weight", l), F, d, 0, L->linear1_weight));
        TRY(read_t(r, NM("model.layers.%d.mlp.up_proj.weight", l), F, d, 0, L->linear1_weight + F * d));
        TRY(read_t(r, NM("model.layers.%d.mlp.down_proj.weight", l), d, F, 0, L->linear2_weight));
    }
    TRY(read_t(r, "model.norm.weight", d, 0, 0, sp->norm_weight));
    if (!c->tie_embeddings) TRY(read_t(r, "lm_head.weight", (size_t)c->tgt_vocab, d, 0, m->p.generator_weight));
#undef NM
    return TFM_OK;
}

/* Buffers a file may hold that carry no weights: GPT-2's causal-mask buffers (attn.bias,
 * attn.masked_bias) and Llama's rotary inv_freq of older files. */
static int ignorable(const char *name) {
    const size_t n = strlen(name);
    return (n > 10 && strcmp(name + n - 10, ".attn.bias") == 0) || (n > 17 && strcmp(name + n - 17, ".attn.masked_bias") == 0) ||
           (n > 18 && strcmp(name + n - 18, ".rotary_emb.inv_freq") == 0);
}

static tfm_status lm_tensors(tfm_model *m, family fam, const st_file *f) {
    const tfm_config *c = &m->cfg;
    const size_t d = (size_t)c->d_model, F = (size_t)c->d_ff;
    /* GPT-2's transposed matrices: c_attn (d, 3d), c_proj (d, d), c_fc (d, F), mlp.c_proj (F, d) */
    float *tmp = fam == FAM_GPT2 ? malloc(sizeof(float) * d * (3 * d > F ? 3 * d : F)) : NULL;
    uint8_t *used = calloc(f->n_tensors + 1, 1);
    tfm_status st = (fam == FAM_GPT2 && !tmp) || !used ? tfm_set_error(TFM_ERR_NOMEM, "out of memory loading %s", f->path)
                                                        : TFM_OK;
    lm_reader r = {f, tmp, used, ""};
    snprintf(r.what, sizeof r.what, "a Hugging Face %s model", k_model_type[fam]);
    if (st == TFM_OK) st = fam == FAM_GPT2 ? gpt2_tensors(m, &r) : llama_tensors(m, fam, &r);
    /* every tensor of the file was read or is a known buffer: a layer beyond the config's, or a
     * tensor of another model, is an error, not silently dropped */
    for (size_t i = 0; st == TFM_OK && i < f->n_tensors; i++)
        if (!used[i] && !ignorable(f->tensors[i].name))
            st = tfm_set_error(TFM_ERR_FORMAT, "%s: unexpected tensor '%s' (not part of the model config.json describes)",
                               f->path, f->tensors[i].name);
    free(tmp);
    free(used);
    return st;
}

static tfm_status read_config(const fmt_source *src, tfm_config *cfg) {
    family fam;
    return lm_config(src->dir, src->config_path, src->config, &fam, cfg);
}

static tfm_status read_gpt2(const fmt_source *src, tfm_model *m) { return lm_tensors(m, FAM_GPT2, &src->st); }
static tfm_status read_llama(const fmt_source *src, tfm_model *m) { return lm_tensors(m, FAM_LLAMA, &src->st); }
static tfm_status read_qwen2(const fmt_source *src, tfm_model *m) { return lm_tensors(m, FAM_QWEN2, &src->st); }
static tfm_status read_mistral(const fmt_source *src, tfm_model *m) { return lm_tensors(m, FAM_MISTRAL, &src->st); }

/* The tokenizer (tokenizer.json, or vocab.json + merges.txt) stays in the folder: tfm generate /
 * tfm perplexity read it there (tfm_bpe_load_dir), so no attach_tokenizer. */
#define HF_LM_FORMAT(var, label, type, reader)                                                                        \
    const model_format var = {.name = label,                                                                          \
                              .hf_model_type = type,                                                                  \
                              .hf_auto_class = "AutoModelForCausalLM",                                                \
                              .read_config = read_config,                                                             \
                              .read_tensors = reader}

HF_LM_FORMAT(model_format_hf_gpt2, "Hugging Face GPT-2", "gpt2", read_gpt2);
HF_LM_FORMAT(model_format_hf_llama, "Hugging Face Llama", "llama", read_llama);
HF_LM_FORMAT(model_format_hf_qwen2, "Hugging Face Qwen2", "qwen2", read_qwen2);
HF_LM_FORMAT(model_format_hf_mistral, "Hugging Face Mistral", "mistral", read_mistral);
