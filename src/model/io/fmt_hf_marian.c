/* A Hugging Face Marian folder (opus-mt; transformers' MarianMTModel, models/marian) as a model
 * format (model_format.h): config.json (MarianConfig) → tfm_config, model.safetensors → the
 * encoder–decoder's table, source.spm + target.spm + vocab.json (+ target_vocab.json) → the
 * model's tokenizer (text/tok_marian.c). docs/MARIAN.md has the mapping.
 *
 * The family: post-LN blocks (LayerNorm(x + Sublayer(x))) with no final LayerNorm per stack,
 * token embeddings × √d_model (scale_embedding), MarianSinusoidalPositionalEmbedding (the paper's
 * frequencies, all sines then all cosines, positions from 0), one embedding matrix shared by the
 * encoder, the decoder and the output layer, final_logits_bias as the output bias, swish (SiLU)
 * FFN, the decoder started from decoder_start_token_id (the pad id), pad never generated. */
#include "model_format.h"

#include "io/hf.h"
#include "io/hf_bart.h"
#include "model_internal.h"
#include "parts.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define WHAT "a Hugging Face Marian model"

static tfm_status marian_activation(const char *path, const char *act, tfm_activation *out) {
    if (!act || strcmp(act, "gelu") == 0) /* MarianConfig's default; transformers' "gelu" is the erf form */
        *out = TFM_ACT_GELU;
    else if (strcmp(act, "swish") == 0 || strcmp(act, "silu") == 0) /* opus-mt's config.json: "swish" */
        *out = TFM_ACT_SILU;
    else if (strcmp(act, "relu") == 0)
        *out = TFM_ACT_RELU;
    else
        return tfm_set_error(TFM_ERR_UNSUPPORTED,
                              "%s: activation_function '%.40s' is not supported (swish, silu, gelu or relu)", path, act);
    return TFM_OK;
}

static tfm_status marian_read_config(const fmt_source *src, tfm_config *c) {
    const char *path = src->config_path;
    const cJSON *root = src->config;
    *c = tfm_config_default();
    c->arch = TFM_ARCH_ENCODER_DECODER;
    c->norm_first = 0;
    c->no_final_norm = 1;
    c->pe = TFM_PE_SINUSOIDAL;
    c->pe_layout = TFM_PE_LAYOUT_CONCAT;
    c->layer_norm_eps = 1e-5f; /* nn.LayerNorm's default: MarianConfig has no epsilon */
    c->suppress = TFM_SUPPRESS_PAD;
    c->lenpen_count_forced = 1; /* transformers' generated_len (no forced token: fairseq's number) */
    TRY(hf_cfg_int(path, root, "d_model", 1, &c->d_model));
    TRY(hf_cfg_same_int(path, root, "encoder_attention_heads", "decoder_attention_heads", &c->n_heads));
    TRY(hf_cfg_same_int(path, root, "encoder_ffn_dim", "decoder_ffn_dim", &c->d_ff));
    TRY(hf_cfg_int(path, root, "encoder_layers", 1, &c->n_enc_layers));
    TRY(hf_cfg_int(path, root, "decoder_layers", 1, &c->n_dec_layers));
    TRY(hf_cfg_int(path, root, "vocab_size", 1, &c->src_vocab));
    TRY(hf_cfg_int(path, root, "max_position_embeddings", 1, &c->max_len));
    TRY(hf_cfg_int(path, root, "pad_token_id", 1, &c->pad_id));
    TRY(hf_cfg_int(path, root, "eos_token_id", 1, &c->eos_id));
    c->decoder_start_id = c->pad_id;
    TRY(hf_forced_eos(src->dir, path, root, c->eos_id, &c->forced_eos)); /* opus-mt: forced_eos_token_id 0 */
    TRY(hf_cfg_int(path, root, "decoder_start_token_id", 0, &c->decoder_start_id));
    int share = 1, scale = 0, stat_pe = 1, before = 0, final_ln = 0;
    TRY(hf_cfg_bool(path, root, "share_encoder_decoder_embeddings", 1, &share));
    TRY(hf_cfg_bool(path, root, "scale_embedding", 0, &scale));
    TRY(hf_cfg_bool(path, root, "static_position_embeddings", 1, &stat_pe));
    TRY(hf_cfg_bool(path, root, "normalize_before", 0, &before));
    TRY(hf_cfg_bool(path, root, "add_final_layer_norm", 0, &final_ln));
    RETURN_IF(!stat_pe, TFM_ERR_UNSUPPORTED, "%s: static_position_embeddings false is not Marian's", path);
    RETURN_IF(before || final_ln, TFM_ERR_UNSUPPORTED,
              "%s: normalize_before / add_final_layer_norm: a pre-LN Marian is not supported", path);
    TRY(marian_activation(path, hf_cfg_str(root, "activation_function"), &c->activation));
    c->embed_scale = scale ? 0.0f : 1.0f; /* 0: √d_model */
    /* share_encoder_decoder_embeddings false (modeling_marian.py 4.40.2): model.encoder.embed_tokens
     * and model.decoder.embed_tokens apart, both of vocab_size rows (MarianModel deep-copies one
     * nn.Embedding(vocab_size)); lm_head and final_logits_bias of decoder_vocab_size rows, lm_head
     * tied to the decoder's embedding unless tie_word_embeddings is false (tied, the sizes must
     * agree: transformers itself fails otherwise). tfm keeps three matrices (tie_embeddings 0). */
    c->tgt_vocab = c->src_vocab;
    int tie_out = 1;
    TRY(hf_cfg_bool(path, root, "tie_word_embeddings", 1, &tie_out));
    if (!share) TRY(hf_cfg_int(path, root, "decoder_vocab_size", 0, &c->tgt_vocab));
    RETURN_IF(!share && tie_out && c->tgt_vocab != c->src_vocab, TFM_ERR_UNSUPPORTED,
              "%s: tie_word_embeddings true with decoder_vocab_size %d != vocab_size %d: lm_head cannot be tied to "
              "the decoder's embedding (transformers fails on it too)", path, c->tgt_vocab, c->src_vocab);
    RETURN_IF(c->tgt_vocab > c->src_vocab, TFM_ERR_UNSUPPORTED,
              "%s: decoder_vocab_size %d > vocab_size %d: model.decoder.embed_tokens has vocab_size rows", path,
              c->tgt_vocab, c->src_vocab);
    RETURN_IF(share && !tie_out, TFM_ERR_UNSUPPORTED,
              "%s: tie_word_embeddings false with shared embeddings is not supported", path);
    c->tie_embeddings = share;
    /* Marian has no BOS: bos_id is never used (the decoder starts from decoder_start_id, and
     * suppress = pad does not name it); the first id that is neither pad nor EOS keeps the
     * configuration valid */
    c->bos_id = 0;
    while (c->bos_id == c->pad_id || c->bos_id == c->eos_id) c->bos_id++;
    tfm_status st = tfm_config_validate(c);
    return st == TFM_OK ? TFM_OK : tfm_error_prefix(st, "%s: ", path);
}

/* ---- tensors ---------------------------------------------------------------------------------- */

/* The names of the one shared embedding matrix: save_pretrained keeps one of them (the others are
 * tied), a converted pytorch_model.bin may keep them all; each present must hold the same values. */
static const char *const k_embed_names[] = {"model.shared.weight", "model.encoder.embed_tokens.weight",
                                            "model.decoder.embed_tokens.weight", "lm_head.weight"};
#define N_EMBED_NAMES (sizeof k_embed_names / sizeof k_embed_names[0])

/* Reads the first present of names[0..n) into dst (V, d); every other present must hold the same
 * values (a tied alias). */
static tfm_status read_embedding(const st_file *f, const char *const *names, size_t n, float *dst, size_t V, size_t d) {
    size_t first = n;
    for (size_t i = 0; i < n && first == n; i++)
        if (st_find(f, names[i])) first = i;
    RETURN_IF(first == n, TFM_ERR_FORMAT, "%s: tensor '%s' is missing (nor its tied aliases: " WHAT " needs one)",
              f->path, names[0]);
    TRY(hf_read_f32(f, names[first], V, d, dst, WHAT));
    float *other = NULL;
    tfm_status st = TFM_OK;
    for (size_t i = first + 1; i < n && st == TFM_OK; i++) {
        if (!st_find(f, names[i])) continue;
        if (!other) other = malloc(V * d * sizeof *other);
        if (!other) return tfm_set_error(TFM_ERR_NOMEM, "out of memory loading %s", f->path);
        st = hf_read_f32(f, names[i], V, d, other, WHAT);
        if (st == TFM_OK && memcmp(other, dst, V * d * sizeof *other) != 0)
            st = tfm_set_error(TFM_ERR_FORMAT, "%s: tensor '%s' differs from '%s' (Marian ties them)", f->path,
                               names[i], names[first]);
    }
    free(other);
    return st;
}

/* Whether a tensor of the file is one this loader reads or may ignore (the sinusoid tables, which
 * tfm computes). */
static int known_tensor(const char *t, const tfm_config *c) {
    for (size_t i = c->tie_embeddings ? 0 : 1; i < N_EMBED_NAMES; i++) /* untied: no model.shared */
        if (strcmp(t, k_embed_names[i]) == 0) return 1;
    if (strcmp(t, "final_logits_bias") == 0 || strcmp(t, "model.encoder.embed_positions.weight") == 0 ||
        strcmp(t, "model.decoder.embed_positions.weight") == 0)
        return 1;
    int l = -1, n = 0;
    if (sscanf(t, "model.encoder.layers.%d.%n", &l, &n) == 1 && n > 0) return l >= 0 && l < c->n_enc_layers;
    if (sscanf(t, "model.decoder.layers.%d.%n", &l, &n) == 1 && n > 0) return l >= 0 && l < c->n_dec_layers;
    return 0;
}

static tfm_status marian_read_tensors(const fmt_source *src, tfm_model *m) {
    const st_file *f = &src->st;
    const tfm_config *c = &m->cfg;
    const size_t d = (size_t)c->d_model, d_ff = (size_t)c->d_ff, V = (size_t)c->tgt_vocab;
    for (size_t i = 0; i < f->n_tensors; i++) /* a tensor of another model, or a layer beyond config.json's */
        RETURN_IF(!known_tensor(f->tensors[i].name, c), TFM_ERR_FORMAT,
                  "%s: unexpected tensor '%s' (not part of a Marian model with %d+%d layers per config.json)", f->path,
                  f->tensors[i].name, c->n_enc_layers, c->n_dec_layers);
    if (c->tie_embeddings) { /* src_embed = tgt_embed = generator.weight */
        TRY(read_embedding(f, k_embed_names, N_EMBED_NAMES, m->p.stack[0].embed, V, d));
    } else { /* the encoder's, the decoder's (its first tgt_vocab rows: no target id reaches the others), lm_head */
        const size_t Vs = (size_t)c->src_vocab;
        TRY(read_embedding(f, k_embed_names + 1, 1, m->p.stack[0].embed, Vs, d));
        float *dec = malloc(Vs * d * sizeof *dec);
        RETURN_IF(!dec, TFM_ERR_NOMEM, "out of memory loading %s", f->path);
        tfm_status st = read_embedding(f, k_embed_names + 2, 1, dec, Vs, d);
        if (st == TFM_OK) memcpy(m->p.stack[1].embed, dec, V * d * sizeof *dec);
        if (st == TFM_OK && st_find(f, "lm_head.weight"))
            st = hf_read_f32(f, "lm_head.weight", V, d, m->p.generator_weight, WHAT);
        else if (st == TFM_OK && Vs == V) /* tied (sizes agree, read_config): save_pretrained dropped lm_head */
            memcpy(m->p.generator_weight, dec, V * d * sizeof *dec);
        else if (st == TFM_OK)
            st = tfm_set_error(TFM_ERR_FORMAT, "%s: tensor 'lm_head.weight' is missing (" WHAT " needs it)", f->path);
        free(dec);
        TRY(st);
    }
    TRY(hf_read_f32(f, "final_logits_bias", 1, V, m->p.generator_bias, WHAT));
    const hf_bart_file b = {f, WHAT};
    size_t n = 0;
    char prefix[96];
    for (int s = 0; s < 2; s++)
        for (int l = 0; l < (s ? c->n_dec_layers : c->n_enc_layers); l++) {
            snprintf(prefix, sizeof prefix, "model.%s.layers.%d", s ? "decoder" : "encoder", l);
            TRY(hf_bart_read_layer(&b, prefix, s, &m->p.stack[s].layers[l], d, d_ff, &n));
        }
    TFM_ASSERT(n + (c->tie_embeddings ? V * d : ((size_t)c->src_vocab + 2 * V) * d) + V == m->n_params); /* every tensor of the table came from the file */
    return TFM_OK;
}

/* ---- the tokenizer ---------------------------------------------------------------------------- */

/* vocab.json must be MarianTokenizer's: a JSON object of exactly vocab_size pieces, ids 0 .. V−1
 * (the text layer checks the ids themselves when it loads the tokenizer). */
static tfm_status check_vocab(const fmt_source *src, const tfm_config *c) {
    char path[4200];
    snprintf(path, sizeof path, "%s/vocab.json", src->dir);
    cJSON *root;
    TRY(hf_json_load(path, &root));
    tfm_status st = TFM_OK;
    if (!cJSON_IsObject(root)) {
        st = tfm_set_error(TFM_ERR_FORMAT, "%s: not a JSON object of pieces and ids", path);
    } else {
        const int n = cJSON_GetArraySize(root);
        if (n != c->src_vocab)
            st = tfm_set_error(TFM_ERR_FORMAT, "%s: %d pieces, but config.json's vocab_size is %d", path, n,
                               c->src_vocab);
        for (const cJSON *it = root->child; st == TFM_OK && it; it = it->next)
            if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble >= c->src_vocab)
                st = tfm_set_error(TFM_ERR_FORMAT, "%s: piece '%.60s' has id %g, outside [0, %d) (vocab_size)", path,
                                   it->string, cJSON_IsNumber(it) ? it->valuedouble : -1.0, c->src_vocab);
    }
    cJSON_Delete(root);
    return st;
}

/* Whether the target side has its own vocabulary, decided as transformers 4.40.2's MarianTokenizer
 * decides it: by tokenizer_config.json's separate_vocabs (false when the file or the key is
 * absent; from_pretrained passes the file's keys to __init__). True: target_vocab.json gives the
 * output pieces (a folder without it fails in transformers: load_json(None)). False: vocab.json
 * decodes the output and target_vocab.json, if there, is never read. Where the flag and the files
 * disagree tfm refuses the folder, naming both: transformers would fail, or silently decode with
 * the vocabulary the folder's author did not mean. */
static tfm_status marian_separate_vocabs(const fmt_source *src, int *separate) {
    char tc[4200], tv[4200];
    snprintf(tc, sizeof tc, "%s/tokenizer_config.json", src->dir);
    snprintf(tv, sizeof tv, "%s/target_vocab.json", src->dir);
    struct stat sb;
    const int has_tc = stat(tc, &sb) == 0, has_tv = stat(tv, &sb) == 0;
    *separate = 0;
    if (has_tc) {
        cJSON *root;
        TRY(hf_json_load(tc, &root));
        tfm_status st = hf_cfg_bool(tc, root, "separate_vocabs", 0, separate);
        cJSON_Delete(root);
        TRY(st);
    }
    RETURN_IF(*separate && !has_tv, TFM_ERR_IO,
              "%s: separate_vocabs is true but %s does not exist (transformers' MarianTokenizer fails on this folder "
              "too): add the target vocabulary, or set separate_vocabs false",
              tc, tv);
    RETURN_IF(!*separate && has_tv, TFM_ERR_FORMAT,
              "%s is there but %s separate_vocabs true: transformers' MarianTokenizer would ignore it and decode the "
              "output with vocab.json; set \"separate_vocabs\": true in tokenizer_config.json, or remove "
              "target_vocab.json",
              tv, has_tc ? "tokenizer_config.json does not set" : "there is no tokenizer_config.json to set");
    return TFM_OK;
}

static tfm_status marian_attach_tokenizer(const fmt_source *src, tfm_model *m) {
    TRY(check_vocab(src, &m->cfg));
    int separate;
    TRY(marian_separate_vocabs(src, &separate));
    static const char *const names[] = {"source.spm", "target.spm", "vocab.json", "target_vocab.json"};
    return hf_attach_files(m, src->dir, PARTS_MAGIC_MARIAN, names, separate ? 4 : 3, separate ? 4 : 3,
                           "a Marian folder holds config.json, model.safetensors, source.spm, target.spm and vocab.json");
}

const model_format model_format_hf_marian = {
    .name = "Hugging Face Marian model",
    .hf_model_type = "marian",
    .hf_auto_class = "AutoModelForSeq2SeqLM",
    .read_config = marian_read_config,
    .read_tensors = marian_read_tensors,
    .attach_tokenizer = marian_attach_tokenizer,
};
