/* Model configurations: defaults and validation (the metadata of docs/FORMATS.md). */
#include "core_internal.h"
#include "params.h"
#include "pe.h"
#include "tfm/model.h"

#include <math.h>

tfm_config tfm_config_effective(const tfm_config *cfg) {
    tfm_config c = *cfg;
    pe_fill_defaults(&c);
    return c;
}

tfm_config tfm_config_default(void) {
    tfm_config c;
    c.arch = TFM_ARCH_ENCODER_DECODER;
    c.d_model = 256;
    c.n_heads = 4;
    c.n_enc_layers = 3;
    c.n_dec_layers = 3;
    c.d_ff = 1024;
    c.src_vocab = 8000;
    c.tgt_vocab = 8000;
    c.max_len = 256;
    c.norm_first = 0;
    c.activation = TFM_ACT_RELU;
    c.pe = TFM_PE_SINUSOIDAL;
    c.pe_layout = TFM_PE_LAYOUT_INTERLEAVED;
    c.pe_zero_pad = 0;
    c.pe_scale = 0;
    c.pe_max_distance = 0;
    c.pe_buckets = 0;
    c.pe_shaw_values = 0;
    c.rope_pairing = TFM_ROPE_INTERLEAVED;
    c.pad_id = 0;
    c.bos_id = 1;
    c.eos_id = 2;
    c.layer_norm_eps = 1e-5f;
    c.tie_embeddings = 0;
    c.type_vocab = 0;
    c.embed_norm = 0;
    c.embed_scale = 0.0f;
    c.pe_offset = 0;
    c.no_final_norm = 0;
    c.lenpen_count_forced = 0;
    c.forced_eos = 0;
    c.decoder_start_id = -1;
    c.suppress = TFM_SUPPRESS_PAD_BOS;
    c.n_kv_heads = 0;
    c.norm = TFM_NORM_LAYER;
    c.no_linear_bias = 0;
    c.rope_theta = 0.0f;
    c.n_eos_more = 0;
    for (int i = 0; i < TFM_MAX_EOS_MORE; i++) c.eos_more[i] = -1;
    return c;
}

/* decoder-only (GPT; docs/LM.md): one causal stack over the target ids, so no encoder layers and
 * one vocabulary (src_vocab must equal tgt_vocab: the unused source side keeps the metadata
 * honest and the pad/tie checks below uniform). */
static tfm_status decoder_only_validate(const tfm_config *c) {
    if (c->arch != TFM_ARCH_DECODER_ONLY) return TFM_OK;
    RETURN_IF(c->n_enc_layers != 0, TFM_ERR_INVALID_ARG,
              "arch decoder-only has no encoder: n_enc_layers must be 0, got %d", c->n_enc_layers);
    RETURN_IF(c->n_dec_layers < 1, TFM_ERR_INVALID_ARG, "arch decoder-only needs n_dec_layers >= 1, got %d",
              c->n_dec_layers);
    RETURN_IF(c->src_vocab != c->tgt_vocab, TFM_ERR_INVALID_ARG,
              "arch decoder-only has one vocabulary: src_vocab %d must equal tgt_vocab %d", c->src_vocab,
              c->tgt_vocab);
    return TFM_OK;
}

/* The family traits (docs/MODELS.md). */
static tfm_status traits_validate(const tfm_config *c) {
    RETURN_IF(!(c->embed_scale >= 0.0f && c->embed_scale <= 65536.0f), TFM_ERR_INVALID_ARG,
              "embed_scale must be 0 (the default) or in (0, 65536], got %g", (double)c->embed_scale);
    RETURN_IF(c->pe_offset < 0 || c->pe_offset > 1048576, TFM_ERR_INVALID_ARG, "pe_offset must be in [0, 1048576], got %d",
              c->pe_offset);
    RETURN_IF(c->pe_offset != 0 && c->pe != TFM_PE_SINUSOIDAL, TFM_ERR_INVALID_ARG,
              "pe_offset applies to the sinusoidal encoding only (pe is %d)", (int)c->pe);
    RETURN_IF(c->no_final_norm != 0 && c->no_final_norm != 1, TFM_ERR_INVALID_ARG, "no_final_norm must be 0 or 1");
    RETURN_IF(c->lenpen_count_forced != 0 && c->lenpen_count_forced != 1, TFM_ERR_INVALID_ARG,
              "lenpen_count_forced must be 0 or 1");
    RETURN_IF(c->forced_eos != 0 && c->forced_eos != 1, TFM_ERR_INVALID_ARG, "forced_eos must be 0 or 1");
    RETURN_IF(c->decoder_start_id < -1 || c->decoder_start_id >= c->tgt_vocab, TFM_ERR_INVALID_ARG,
              "decoder_start_id %d must be -1 (bos_id) or inside the target vocabulary [0, %d)", c->decoder_start_id,
              c->tgt_vocab);
    RETURN_IF(c->suppress != TFM_SUPPRESS_PAD_BOS && c->suppress != TFM_SUPPRESS_PAD && c->suppress != TFM_SUPPRESS_NONE,
              TFM_ERR_INVALID_ARG, "suppress must be pad_bos, pad or none");
    return TFM_OK;
}

int tfm_config_is_eos(const tfm_config *cfg, int id) {
    if (id == cfg->eos_id) return 1;
    for (int i = 0; i < cfg->n_eos_more && i < TFM_MAX_EOS_MORE; i++)
        if (id == cfg->eos_more[i]) return 1;
    return 0;
}

int tfm_config_decoder_start(const tfm_config *cfg) {
    return cfg->decoder_start_id >= 0 ? cfg->decoder_start_id : cfg->bos_id;
}

float tfm_config_embed_scale(const tfm_config *cfg) {
    if (cfg->embed_scale > 0.0f) return cfg->embed_scale;
    return cfg->embed_norm ? 1.0f : sqrtf((float)cfg->d_model); /* BERT does not scale (bert.c) */
}

const char *tfm_config_inference_only(const tfm_config *c) {
    if (c->n_kv_heads > 0 && c->n_kv_heads != c->n_heads) return "grouped-query attention";
    if (c->norm == TFM_NORM_RMS) return "RMSNorm";
    if (c->activation == TFM_ACT_GELU_TANH) return "the tanh GELU";
    if (c->activation == TFM_ACT_SWIGLU) return "SwiGLU";
    if (c->no_linear_bias) return "linear layers without bias";
    if (c->rope_theta != 0.0f && c->rope_theta != 10000.0f) return "rope_theta";
    return NULL;
}

/* The language-model families' block (docs/LLM.md). */
static tfm_status llm_validate(const tfm_config *c) {
    RETURN_IF(c->n_kv_heads < 0 || (c->n_kv_heads > 0 && c->n_heads % c->n_kv_heads != 0), TFM_ERR_INVALID_ARG,
              "n_kv_heads (%d) must divide n_heads (%d): each key/value head serves n_heads / n_kv_heads query heads",
              c->n_kv_heads, c->n_heads);
    RETURN_IF(c->norm != TFM_NORM_LAYER && c->norm != TFM_NORM_RMS, TFM_ERR_INVALID_ARG, "norm must be layer or rms");
    RETURN_IF(c->norm == TFM_NORM_RMS && !c->norm_first, TFM_ERR_UNSUPPORTED, "RMSNorm is implemented pre-LN only");
    RETURN_IF(c->no_linear_bias != 0 && c->no_linear_bias != 1, TFM_ERR_INVALID_ARG, "no_linear_bias must be 0 or 1");
    RETURN_IF(!(c->rope_theta >= 0.0f && c->rope_theta < 1e12f), TFM_ERR_INVALID_ARG,
              "rope_theta must be 0 (10000) or positive, got %g", (double)c->rope_theta);
    RETURN_IF(c->n_kv_heads > 0 && c->n_kv_heads != c->n_heads && c->arch != TFM_ARCH_DECODER_ONLY, TFM_ERR_UNSUPPORTED,
              "grouped-query attention (n_kv_heads %d < n_heads %d) is implemented for decoder-only models only",
              c->n_kv_heads, c->n_heads);
    return TFM_OK;
}

tfm_status tfm_config_validate(const tfm_config *c) {
    RETURN_IF(c->arch != TFM_ARCH_ENCODER_DECODER && c->arch != TFM_ARCH_DECODER_ONLY &&
                  c->arch != TFM_ARCH_ENCODER_ONLY,
              TFM_ERR_UNSUPPORTED, "arch %d is not one of encoder-decoder, decoder-only, encoder-only", (int)c->arch);
    TRY(decoder_only_validate(c));
    RETURN_IF(c->arch == TFM_ARCH_ENCODER_ONLY && c->n_enc_layers < 1, TFM_ERR_INVALID_ARG,
              "an encoder-only model needs n_enc_layers >= 1, got %d", c->n_enc_layers);
    RETURN_IF(c->type_vocab < 0 || c->type_vocab > 65536, TFM_ERR_INVALID_ARG,
              "type_vocab must be in [0, 65536], got %d", c->type_vocab);
    RETURN_IF(c->embed_norm != 0 && c->embed_norm != 1, TFM_ERR_INVALID_ARG, "embed_norm must be 0 or 1");
    RETURN_IF(c->d_model <= 0 || c->d_model > 65536, TFM_ERR_INVALID_ARG,
              "d_model must be in [1, 65536], got %d", c->d_model);
    RETURN_IF(c->n_heads <= 0 || c->d_model % c->n_heads != 0, TFM_ERR_INVALID_ARG,
              "n_heads (%d) must be positive and divide d_model (%d)", c->n_heads, c->d_model);
    RETURN_IF(c->n_enc_layers < 0 || c->n_enc_layers > TFM_MAX_LAYERS, TFM_ERR_INVALID_ARG,
              "n_enc_layers must be in [0, %d], got %d", TFM_MAX_LAYERS, c->n_enc_layers);
    RETURN_IF(c->n_dec_layers < 0 || c->n_dec_layers > TFM_MAX_LAYERS, TFM_ERR_INVALID_ARG,
              "n_dec_layers must be in [0, %d], got %d", TFM_MAX_LAYERS, c->n_dec_layers);
    RETURN_IF(c->d_ff <= 0 || c->d_ff > 1048576, TFM_ERR_INVALID_ARG, "d_ff must be in [1, 1048576], got %d",
              c->d_ff);
    RETURN_IF(c->src_vocab <= 0 || c->src_vocab > 16777216, TFM_ERR_INVALID_ARG,
              "src_vocab must be in [1, 16777216], got %d", c->src_vocab);
    RETURN_IF(c->tgt_vocab <= 0 || c->tgt_vocab > 16777216, TFM_ERR_INVALID_ARG,
              "tgt_vocab must be in [1, 16777216], got %d", c->tgt_vocab);
    RETURN_IF(c->max_len < 2 || c->max_len > 1048576, TFM_ERR_INVALID_ARG,
              "max_len must be in [2, 1048576], got %d", c->max_len);
    RETURN_IF(c->norm_first != 0 && c->norm_first != 1, TFM_ERR_INVALID_ARG, "norm_first must be 0 or 1");
    RETURN_IF(c->activation != TFM_ACT_RELU && c->activation != TFM_ACT_GELU && c->activation != TFM_ACT_SILU &&
                  c->activation != TFM_ACT_GELU_TANH && c->activation != TFM_ACT_SWIGLU,
              TFM_ERR_INVALID_ARG, "activation must be relu, gelu or silu");
    TRY(traits_validate(c));
    TRY(llm_validate(c));
    TRY(pe_validate(c));
    const int vmin = c->src_vocab < c->tgt_vocab ? c->src_vocab : c->tgt_vocab;
    /* pad_id −1: no padding token (the Hugging Face language models, docs/LLM.md): no id is masked
     * as padding, and BOS may then be EOS (GPT-2's <|endoftext|>) */
    const int no_pad = c->pad_id == -1 && c->arch == TFM_ARCH_DECODER_ONLY;
    RETURN_IF(!no_pad && (c->pad_id < 0 || c->pad_id >= vmin), TFM_ERR_INVALID_ARG,
              "pad_id %d must be inside both vocabularies [0, %d)", c->pad_id, vmin);
    RETURN_IF(c->bos_id < 0 || c->bos_id >= c->tgt_vocab, TFM_ERR_INVALID_ARG,
              "bos_id %d must be inside the target vocabulary [0, %d)", c->bos_id, c->tgt_vocab);
    RETURN_IF(c->eos_id < 0 || c->eos_id >= c->tgt_vocab, TFM_ERR_INVALID_ARG,
              "eos_id %d must be inside the target vocabulary [0, %d)", c->eos_id, c->tgt_vocab);
    RETURN_IF(c->n_eos_more < 0 || c->n_eos_more > TFM_MAX_EOS_MORE, TFM_ERR_INVALID_ARG,
              "n_eos_more %d must be in [0, %d]", c->n_eos_more, TFM_MAX_EOS_MORE);
    for (int i = 0; i < c->n_eos_more; i++)
        RETURN_IF(c->eos_more[i] < 0 || c->eos_more[i] >= c->tgt_vocab, TFM_ERR_INVALID_ARG,
                  "eos id %d must be inside the target vocabulary [0, %d)", c->eos_more[i], c->tgt_vocab);
    RETURN_IF(!no_pad && (c->pad_id == c->bos_id || c->pad_id == c->eos_id || c->bos_id == c->eos_id), TFM_ERR_INVALID_ARG,
              "pad_id (%d), bos_id (%d) and eos_id (%d) must be three different ids", c->pad_id, c->bos_id,
              c->eos_id);
    RETURN_IF(!(c->layer_norm_eps > 0.0f && c->layer_norm_eps < 1.0f), TFM_ERR_INVALID_ARG,
              "layer_norm_eps must be in (0, 1), got %g", (double)c->layer_norm_eps);
    RETURN_IF(c->tie_embeddings != 0 && c->tie_embeddings != 1, TFM_ERR_INVALID_ARG, "tie_embeddings must be 0 or 1");
    RETURN_IF(c->tie_embeddings && c->src_vocab != c->tgt_vocab, TFM_ERR_INVALID_ARG,
              "tie_embeddings needs one joint vocabulary, but src_vocab %d != tgt_vocab %d", c->src_vocab,
              c->tgt_vocab);
    return TFM_OK;
}

size_t tfm_config_param_count(const tfm_config *cfg) { return params_layout(cfg, NULL, NULL, NULL, NULL); }
