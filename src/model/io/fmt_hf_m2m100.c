/* A Hugging Face M2M100 / NLLB-200 folder as a model format (model_format.h; transformers'
 * M2M100ForConditionalGeneration, models/m2m_100/modeling_m2m_100.py; docs/NLLB.md): config.json +
 * model.safetensors loaded into an encoder–decoder tfm_model. The family's traits, as data:
 *   pre-LN blocks (self_attn_layer_norm / encoder_attn_layer_norm / final_layer_norm before each
 *   sub-layer) and a final layer_norm per stack; ReLU (activation_function); token embeddings ×
 *   √d_model (scale_embedding; 1 without); M2M100SinusoidalPositionalEmbedding: tensor2tensor's
 *   frequencies 10000^(−i/(d/2−1)), sines then cosines, position p of a token at row
 *   p + padding_idx + 1 (fairseq's make_positions counts only non-pad tokens: with right padding
 *   that is the offset padding_idx + 1); one shared embedding matrix for encoder, decoder and
 *   lm_head (no logits bias: generator.bias is 0); the decoder starts from decoder_start_token_id
 *   (</s>, 2) and no id is suppressed (transformers' generate bans none for this family).
 * The query/key/value projections are packed into in_proj as nn.MultiheadAttention keeps them. */
#include "model_format.h"

#include "io/hf.h"
#include "io/hf_bart.h"
#include "model_internal.h"
#include "parts.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

/* ---- config.json ------------------------------------------------------------------------------ */

/* M2M100Config → tfm_config. */
static tfm_status config_from_m2m(const char *path, const cJSON *root, tfm_config *c) {
    *c = tfm_config_default();
    c->arch = TFM_ARCH_ENCODER_DECODER;
    const char *act = hf_cfg_str(root, "activation_function");
    if (!act || strcmp(act, "relu") == 0) c->activation = TFM_ACT_RELU; /* M2M100Config's default */
    else if (strcmp(act, "gelu") == 0) c->activation = TFM_ACT_GELU;   /* ACT2FN: the exact erf form */
    else if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0) c->activation = TFM_ACT_SILU;
    else
        return tfm_set_error(TFM_ERR_UNSUPPORTED,
                             "%s: activation_function '%.40s' is not supported (relu, gelu, silu/swish are)", path,
                             act);
    TRY(hf_cfg_int(path, root, "d_model", 1, &c->d_model));
    TRY(hf_cfg_int(path, root, "encoder_layers", 1, &c->n_enc_layers));
    TRY(hf_cfg_int(path, root, "decoder_layers", 1, &c->n_dec_layers));
    TRY(hf_cfg_same_int(path, root, "encoder_attention_heads", "decoder_attention_heads", &c->n_heads));
    TRY(hf_cfg_same_int(path, root, "encoder_ffn_dim", "decoder_ffn_dim", &c->d_ff));
    TRY(hf_cfg_int(path, root, "vocab_size", 1, &c->src_vocab));
    TRY(hf_cfg_int(path, root, "max_position_embeddings", 1, &c->max_len));
    c->pad_id = 1, c->bos_id = 0, c->eos_id = 2; /* M2M100Config's defaults */
    int start = 2;
    TRY(hf_cfg_int(path, root, "pad_token_id", 0, &c->pad_id));
    TRY(hf_cfg_int(path, root, "bos_token_id", 0, &c->bos_id));
    TRY(hf_cfg_int(path, root, "eos_token_id", 0, &c->eos_id));
    TRY(hf_cfg_int(path, root, "decoder_start_token_id", 0, &start));
    int scale = 1, tie = 1;
    TRY(hf_cfg_bool(path, root, "scale_embedding", 1, &scale));
    TRY(hf_cfg_bool(path, root, "tie_word_embeddings", 1, &tie));
    RETURN_IF(!tie, TFM_ERR_UNSUPPORTED,
              "%s: tie_word_embeddings false: tfm runs M2M100 with lm_head tied to the shared embeddings only", path);
    RETURN_IF(c->d_model % 2 != 0, TFM_ERR_UNSUPPORTED,
              "%s: d_model %d is odd: M2M100's sinusoids pad a zero column tfm does not", path, c->d_model);
    c->tgt_vocab = c->src_vocab;
    c->tie_embeddings = 1;
    c->norm_first = 1;
    c->no_final_norm = 0;
    c->pe = TFM_PE_SINUSOIDAL;
    c->pe_layout = TFM_PE_LAYOUT_TENSOR2TENSOR;
    c->pe_offset = c->pad_id + 1; /* create_position_ids_from_input_ids: from padding_idx + 1 */
    c->embed_scale = scale ? sqrtf((float)c->d_model) : 1.0f;
    c->layer_norm_eps = 1e-5f; /* nn.LayerNorm's default: M2M100 sets none */
    c->decoder_start_id = start;
    c->suppress = TFM_SUPPRESS_NONE;
    c->lenpen_count_forced = 1; /* generate's generated_len counts the forced language code */
    tfm_status st = tfm_config_validate(c);
    return st == TFM_OK ? TFM_OK : tfm_error_prefix(st, "%s: ", path);
}

/* ---- tensors ---------------------------------------------------------------------------------- */

/* The shared embedding: model.shared.weight as save_pretrained(safe_serialization=True) keeps it, or
 * any of its tied aliases a converted checkpoint may hold instead. */
static const char *const k_embed_names[] = {"model.shared.weight", "model.encoder.embed_tokens.weight",
                                            "model.decoder.embed_tokens.weight", "lm_head.weight"};

/* Which tensors of the file the model uses: the embedding's names, model.{en,de}coder.layer_norm,
 * model.{en,de}coder.layers.<l>. with l below the config's count; the sinusoid tables
 * (embed_positions, recomputed) are ignored. Anything else is an error. */
static int used_name(const char *t, const tfm_config *c) {
    for (size_t i = 0; i < sizeof k_embed_names / sizeof *k_embed_names; i++)
        if (strcmp(t, k_embed_names[i]) == 0) return 1;
    static const char *const stacks[2] = {"model.encoder.", "model.decoder."};
    for (int s = 0; s < 2; s++) {
        const size_t pl = strlen(stacks[s]);
        if (strncmp(t, stacks[s], pl) != 0) continue;
        t += pl;
        if (strncmp(t, "layer_norm.", 11) == 0 || strncmp(t, "embed_positions.", 16) == 0) return 1;
        int l = -1;
        if (sscanf(t, "layers.%d.", &l) == 1) return l >= 0 && l < (s == 0 ? c->n_enc_layers : c->n_dec_layers);
    }
    return 0;
}

static tfm_status load_m2m_tensors(tfm_model *m, const st_file *f) {
    const tfm_config *c = &m->cfg;
    const size_t d = (size_t)c->d_model, d_ff = (size_t)c->d_ff, V = (size_t)c->src_vocab;
    size_t n = 0;
    const char *embed = NULL;
    for (size_t i = 0; !embed && i < sizeof k_embed_names / sizeof *k_embed_names; i++)
        if (st_find(f, k_embed_names[i])) embed = k_embed_names[i];
    RETURN_IF(!embed, TFM_ERR_FORMAT, "%s: tensor 'model.shared.weight' is missing (an M2M100 / NLLB model needs it)",
              f->path);
    const hf_bart_file b = {f, "an M2M100 / NLLB model"};
    TRY(hf_read_f32(f, embed, V, d, m->p.stack[0].embed, b.what));
    n += V * d;
    char pre[96];
    for (int s = 0; s < 2; s++) {
        stack_params *sp = &m->p.stack[s];
        const char *stack = s == 0 ? "model.encoder" : "model.decoder";
        const int layers = s == 0 ? c->n_enc_layers : c->n_dec_layers;
        for (int l = 0; l < layers; l++) {
            snprintf(pre, sizeof pre, "%s.layers.%d", stack, l);
            TRY(hf_bart_read_layer(&b, pre, s, &sp->layers[l], d, d_ff, &n));
        }
        TRY(hf_bart_read_norm(&b, stack, "layer_norm", sp->norm_weight, sp->norm_bias, d, &n));
    }
    memset(m->p.generator_bias, 0, V * sizeof(float)); /* lm_head has no bias */
    n += V;
    TFM_ASSERT(n == m->n_params); /* every tensor of the table came from the file */
    for (size_t i = 0; i < f->n_tensors; i++)
        RETURN_IF(!used_name(f->tensors[i].name, c), TFM_ERR_FORMAT,
                  "%s: unexpected tensor '%s' (not part of an M2M100 with %d encoder and %d decoder layers per "
                  "config.json)",
                  f->path, f->tensors[i].name, c->n_enc_layers, c->n_dec_layers);
    return TFM_OK;
}

static tfm_status m2m_read_config(const fmt_source *src, tfm_config *cfg) {
    TRY(config_from_m2m(src->config_path, src->config, cfg));
    /* M2M100Config sets no forced_eos_token_id; a folder that sets one has it honoured */
    return hf_forced_eos(src->dir, src->config_path, src->config, cfg->eos_id, &cfg->forced_eos);
}

static tfm_status m2m_read_tensors(const fmt_source *src, tfm_model *m) { return load_m2m_tensors(m, &src->st); }

/* The tokenizer: sentencepiece.bpe.model and, when the folder has them, the JSON files that list
 * the language codes, kept as one blob (core/parts.h, PARTS_MAGIC_NLLB) that the text layer's
 * NLLB kind reads (src/text/tok_nllb.c). */
static tfm_status m2m_attach_tokenizer(const fmt_source *src, tfm_model *m) {
    static const char *const names[3] = {"sentencepiece.bpe.model", "tokenizer_config.json", "special_tokens_map.json"};
    return hf_attach_files(m, src->dir, PARTS_MAGIC_NLLB, names, 3, 1,
                           "an NLLB / M2M100 folder needs config.json, model.safetensors and sentencepiece.bpe.model; "
                           "docs/NLLB.md");
}

const model_format model_format_hf_m2m100 = {
    .name = "Hugging Face M2M100 / NLLB",
    .hf_model_type = "m2m_100",
    .hf_auto_class = "AutoModelForSeq2SeqLM",
    .read_config = m2m_read_config,
    .read_tensors = m2m_read_tensors,
    .attach_tokenizer = m2m_attach_tokenizer,
};
