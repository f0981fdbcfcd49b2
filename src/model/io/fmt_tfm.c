/* tfm's own checkpoint as a model format (model_format.h): the safetensors contract of
 * docs/FORMATS.md — the configuration in the header's __metadata__ (the family traits among its
 * keys), every tensor under its nn.Transformer name, the tokenizer as the U8 tensor
 * tokenizer.model, train_state.* ignored. Writing is checkpoint.c. */
#include "model_format.h"

#include "checkpoint.h"
#include "model_internal.h"
#include "tfm/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static tfm_status meta_int(const st_file *f, const char *key, int required, int *out) {
    const char *v = st_meta_get(f, key);
    if (!v) {
        RETURN_IF(required, TFM_ERR_FORMAT, "%s: metadata key '%s' is missing (is this a transformer.c checkpoint?)",
                  f->path, key);
        return TFM_OK;
    }
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    RETURN_IF(errno || end == v || *end || x < -2147483647L || x > 2147483647L, TFM_ERR_FORMAT,
              "%s: metadata %s='%.40s' is not an integer", f->path, key, v);
    *out = (int)x;
    return TFM_OK;
}

static tfm_status meta_bool(const st_file *f, const char *key, int *out) {
    const char *v = st_meta_get(f, key);
    if (!v) return TFM_OK;
    if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "True") == 0) *out = 1;
    else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || strcmp(v, "False") == 0) *out = 0;
    else return tfm_set_error(TFM_ERR_FORMAT, "%s: metadata %s='%.40s' must be \"0\" or \"1\"", f->path, key, v);
    return TFM_OK;
}

/* Float metadata `key` (absent: *out unchanged unless required). */
static tfm_status meta_float(const st_file *f, const char *key, int required, float *out) {
    const char *v = st_meta_get(f, key);
    if (!v) {
        RETURN_IF(required, TFM_ERR_FORMAT, "%s: metadata key '%s' is missing", f->path, key);
        return TFM_OK;
    }
    char *end;
    errno = 0;
    *out = strtof(v, &end);
    RETURN_IF(errno || end == v || *end, TFM_ERR_FORMAT, "%s: metadata %s='%.40s' is not a number", f->path, key, v);
    return TFM_OK;
}

static tfm_status config_from_meta(const st_file *f, tfm_config *c) {
    *c = tfm_config_default();
    const char *arch = st_meta_get(f, "arch");
    RETURN_IF(!arch, TFM_ERR_FORMAT, "%s: metadata key 'arch' is missing (is this a transformer.c checkpoint?)", f->path);
    if (tfm_arch_from_name(arch, &c->arch) != TFM_OK)
        return tfm_error_prefix(TFM_ERR_FORMAT, "%s: metadata: ", f->path);
    TRY(meta_int(f, "d_model", 1, &c->d_model));
    TRY(meta_int(f, "n_heads", 1, &c->n_heads));
    TRY(meta_int(f, "n_enc_layers", 1, &c->n_enc_layers));
    TRY(meta_int(f, "n_dec_layers", 1, &c->n_dec_layers));
    TRY(meta_int(f, "d_ff", 1, &c->d_ff));
    TRY(meta_int(f, "src_vocab", 1, &c->src_vocab));
    TRY(meta_int(f, "tgt_vocab", 1, &c->tgt_vocab));
    TRY(meta_int(f, "max_len", 1, &c->max_len));
    TRY(meta_int(f, "pad_id", 1, &c->pad_id));
    TRY(meta_int(f, "bos_id", 1, &c->bos_id));
    TRY(meta_int(f, "eos_id", 1, &c->eos_id));
    RETURN_IF(!st_meta_get(f, "norm_first"), TFM_ERR_FORMAT, "%s: metadata key 'norm_first' is missing", f->path);
    TRY(meta_bool(f, "norm_first", &c->norm_first));
    TRY(meta_bool(f, "tie_embeddings", &c->tie_embeddings));
    const char *act = st_meta_get(f, "activation");
    RETURN_IF(!act, TFM_ERR_FORMAT, "%s: metadata key 'activation' is missing", f->path);
    if (tfm_activation_from_name(act, &c->activation) != TFM_OK)
        return tfm_error_prefix(TFM_ERR_FORMAT, "%s: metadata: ", f->path);
    const char *pe = st_meta_get(f, "pe");
    RETURN_IF(!pe, TFM_ERR_FORMAT, "%s: metadata key 'pe' is missing", f->path);
    if (tfm_pe_from_name(pe, &c->pe) != TFM_OK) return tfm_error_prefix(TFM_ERR_UNSUPPORTED, "%s: metadata: ", f->path);
    /* the encoding's options: optional, absent = the default (files written before they existed) */
    const char *layout = st_meta_get(f, "pe_layout");
    if (layout && tfm_pe_layout_from_name(layout, &c->pe_layout) != TFM_OK)
        return tfm_error_prefix(TFM_ERR_FORMAT, "%s: metadata: ", f->path);
    TRY(meta_bool(f, "pe_zero_pad", &c->pe_zero_pad));
    TRY(meta_bool(f, "pe_scale", &c->pe_scale));
    TRY(meta_int(f, "pe_max_distance", 0, &c->pe_max_distance));
    TRY(meta_int(f, "pe_buckets", 0, &c->pe_buckets));
    TRY(meta_bool(f, "pe_shaw_values", &c->pe_shaw_values));
    const char *pairing = st_meta_get(f, "rope_pairing");
    if (pairing && tfm_rope_pairing_from_name(pairing, &c->rope_pairing) != TFM_OK)
        return tfm_error_prefix(TFM_ERR_FORMAT, "%s: metadata: ", f->path);
    TRY(meta_int(f, "type_vocab", 0, &c->type_vocab)); /* BERT's embedding block: absent = 0 */
    TRY(meta_bool(f, "embed_norm", &c->embed_norm));
    TRY(meta_float(f, "layer_norm_eps", 1, &c->layer_norm_eps));
    /* the family traits (docs/MODELS.md): optional, absent = the default (every file before them) */
    TRY(meta_float(f, "embed_scale", 0, &c->embed_scale));
    TRY(meta_int(f, "pe_offset", 0, &c->pe_offset));
    TRY(meta_bool(f, "no_final_norm", &c->no_final_norm));
    TRY(meta_int(f, "decoder_start_id", 0, &c->decoder_start_id));
    TRY(meta_bool(f, "lenpen_count_forced", &c->lenpen_count_forced));
    TRY(meta_bool(f, "forced_eos", &c->forced_eos));
    const char *suppress = st_meta_get(f, "suppress");
    if (suppress && tfm_suppress_from_name(suppress, &c->suppress) != TFM_OK)
        return tfm_error_prefix(TFM_ERR_FORMAT, "%s: metadata: ", f->path);
    tfm_status st = tfm_config_validate(c);
    return st == TFM_OK ? TFM_OK : tfm_error_prefix(st, "%s: metadata makes no sense: ", f->path);
}

static int is_reserved(const char *name) {
    return strncmp(name, "tokenizer.", 10) == 0 || strncmp(name, "train_state.", 12) == 0;
}

static tfm_status check_shape(const st_file *f, const st_tensor *t, const param_entry *e) {
    RETURN_IF(strcmp(t->dtype, "F32") != 0, TFM_ERR_FORMAT, "%s: tensor '%s' has dtype %s, expected F32", f->path,
              t->name, t->dtype);
    int ok = t->ndim == e->ndim && t->shape[0] == e->shape[0] && (e->ndim == 1 || t->shape[1] == e->shape[1]);
    if (!ok) {
        char got[128] = "";
        size_t k = 0;
        for (int i = 0; i < t->ndim && k < sizeof got - 24; i++)
            k += (size_t)snprintf(got + k, sizeof got - k, "%s%llu", i ? ", " : "", (unsigned long long)t->shape[i]);
        if (e->ndim == 2)
            return tfm_set_error(TFM_ERR_FORMAT, "%s: tensor '%s' has shape [%s], expected [%zu, %zu]", f->path,
                                 t->name, got, e->shape[0], e->shape[1]);
        return tfm_set_error(TFM_ERR_FORMAT, "%s: tensor '%s' has shape [%s], expected [%zu]", f->path, t->name, got,
                             e->shape[0]);
    }
    return TFM_OK;
}

static tfm_status check_entries(const st_file *f, const tfm_config *c, const param_entry *entries, size_t n) {
    /* every tensor in the file must be a model tensor or under a reserved prefix */
    for (size_t i = 0; i < f->n_tensors; i++) {
        const st_tensor *t = &f->tensors[i];
        if (is_reserved(t->name)) continue;
        size_t k = 0;
        while (k < n && strcmp(entries[k].name, t->name) != 0) k++;
        RETURN_IF(k == n, TFM_ERR_FORMAT,
                  "%s: unknown tensor '%s' (not a tensor of this %s model, nor under tokenizer. or train_state.)",
                  f->path, t->name, tfm_arch_name(c->arch));
    }
    for (size_t k = 0; k < n; k++) {
        const st_tensor *t = st_find(f, entries[k].name);
        RETURN_IF(!t, TFM_ERR_FORMAT, "%s: model tensor '%s' is missing", f->path, entries[k].name);
        TRY(check_shape(f, t, &entries[k]));
    }
    return TFM_OK;
}

/* Checks the file's tensors (names, dtypes, shapes) against the model `c` describes before anything
 * of that size is allocated: st_open has checked every tensor's bytes lie inside the file, so a
 * header of a few hundred bytes cannot make the loader allocate and clear gigabytes (a slow input
 * fuzz_safetensors found). */
static tfm_status check_tensors(const st_file *f, const tfm_config *c) {
    size_t n;
    params_layout(c, NULL, NULL, NULL, &n);
    param_entry *entries = calloc(n, sizeof *entries);
    RETURN_IF(!entries, TFM_ERR_NOMEM, "out of memory checking %s", f->path);
    params_layout(c, NULL, NULL, entries, &n);
    tfm_status st = check_entries(f, c, entries, n);
    free(entries);
    return st;
}

/* Reads the model tensors check_tensors accepted into m's arena; a tied copy must equal its original. */
static tfm_status load_tensors(tfm_model *m, const st_file *f) {
    float *base = (float *)m->param_arena.base;
    float *scratch = NULL;
    tfm_status st = TFM_OK;
    for (size_t k = 0; k < m->n_entries && st == TFM_OK; k++) {
        const param_entry *e = &m->entries[k];
        const st_tensor *t = st_find(f, e->name);
        if (e->alias_of < 0) {
            st = st_read(f, t, base + e->offset);
            continue;
        }
        /* a tied copy: it must hold the same values as the tensor it is tied to */
        if (!scratch) scratch = malloc(e->numel * sizeof *scratch);
        if (!scratch) {
            st = tfm_set_error(TFM_ERR_NOMEM, "out of memory loading %s", f->path);
            break;
        }
        st = st_read(f, t, scratch);
        if (st == TFM_OK && memcmp(scratch, base + e->offset, e->numel * sizeof *scratch) != 0)
            st = tfm_set_error(TFM_ERR_FORMAT, "%s: tie_embeddings=1 but tensor '%s' differs from '%s'", f->path, e->name,
                               m->entries[e->alias_of].name);
    }
    free(scratch);
    TRY(st);
    const st_tensor *tok = st_find(f, CKPT_TOKENIZER_TENSOR);
    if (tok) {
        RETURN_IF(strcmp(tok->dtype, "U8") != 0 || tok->ndim != 1, TFM_ERR_FORMAT,
                  "%s: tensor '%s' must be a 1-D U8 tensor", f->path, CKPT_TOKENIZER_TENSOR);
        size_t len = (size_t)(tok->end - tok->begin);
        m->tokenizer = malloc(len ? len : 1);
        RETURN_IF(!m->tokenizer, TFM_ERR_NOMEM, "out of memory loading the tokenizer of %s", f->path);
        m->tokenizer_len = len;
        TRY(st_read(f, tok, m->tokenizer));
    }
    return TFM_OK;
}

/* The configuration from the metadata, then the tensors checked against it (before allocating). */
static tfm_status tfm_read_config(const fmt_source *src, tfm_config *cfg) {
    TRY(config_from_meta(&src->st, cfg));
    return check_tensors(&src->st, cfg);
}

static tfm_status tfm_read_tensors(const fmt_source *src, tfm_model *m) { return load_tensors(m, &src->st); }

const model_format model_format_tfm = {
    .name = "tfm checkpoint",
    .read_config = tfm_read_config,
    .read_tensors = tfm_read_tensors, /* the tokenizer.model tensor too: no attach_tokenizer */
};
