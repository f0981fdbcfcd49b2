/* Model checkpoints: the safetensors contract of docs/FORMATS.md (PyTorch names, config in the
 * header's __metadata__, reserved prefixes tokenizer. and train_state.). */
#include "checkpoint.h"
#include "hf.h"
#include "model_internal.h"
#include "safetensors.h"
#include "tfm/embed.h"
#include "tfm/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TOKENIZER_TENSOR "tokenizer.model"


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
    const char *eps = st_meta_get(f, "layer_norm_eps");
    RETURN_IF(!eps, TFM_ERR_FORMAT, "%s: metadata key 'layer_norm_eps' is missing", f->path);
    char *end;
    errno = 0;
    c->layer_norm_eps = strtof(eps, &end);
    RETURN_IF(errno || end == eps || *end, TFM_ERR_FORMAT, "%s: metadata layer_norm_eps='%.40s' is not a number",
              f->path, eps);
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
    const st_tensor *tok = st_find(f, TOKENIZER_TENSOR);
    if (tok) {
        RETURN_IF(strcmp(tok->dtype, "U8") != 0 || tok->ndim != 1, TFM_ERR_FORMAT,
                  "%s: tensor '%s' must be a 1-D U8 tensor", f->path, TOKENIZER_TENSOR);
        size_t len = (size_t)(tok->end - tok->begin);
        m->tokenizer = malloc(len ? len : 1);
        RETURN_IF(!m->tokenizer, TFM_ERR_NOMEM, "out of memory loading the tokenizer of %s", f->path);
        m->tokenizer_len = len;
        TRY(st_read(f, tok, m->tokenizer));
    }
    return TFM_OK;
}

tfm_status tfm_model_load(const char *path, tfm_model **out) {
    *out = NULL;
    if (hf_is_model(path)) return tfm_model_load_hf(path, out); /* a Hugging Face folder or file (hf_bert.c) */
    st_file f;
    TRY(st_open(path, &f));
    tfm_config cfg;
    tfm_status st = config_from_meta(&f, &cfg);
    tfm_model *m = NULL;
    if (st == TFM_OK) st = check_tensors(&f, &cfg);
    if (st == TFM_OK) st = model_alloc(&cfg, &m);
    if (st == TFM_OK) st = load_tensors(m, &f);
    st_close(&f);
    if (st != TFM_OK) {
        tfm_model_free(m);
        return st;
    }
    *out = m;
    return TFM_OK;
}

tfm_status tfm_model_save(const tfm_model *m, const char *path) { return model_save_extra(m, path, NULL, 0); }

size_t model_metadata(const tfm_config *c, model_meta *out) {
    char (*vals)[32] = out->vals;
    const char **kv = out->kv;
    size_t nm = 0;
#define META_STR(key, val) (kv[2 * nm] = (key), kv[2 * nm + 1] = (val), nm++)
#define META_INT(key, val) (snprintf(vals[nm], sizeof vals[nm], "%d", (val)), META_STR(key, vals[nm]))
    META_STR("format", "tfm/1");
    META_STR("arch", tfm_arch_name(c->arch));
    META_INT("d_model", c->d_model);
    META_INT("n_heads", c->n_heads);
    META_INT("n_enc_layers", c->n_enc_layers);
    META_INT("n_dec_layers", c->n_dec_layers);
    META_INT("d_ff", c->d_ff);
    META_INT("src_vocab", c->src_vocab);
    META_INT("tgt_vocab", c->tgt_vocab);
    META_INT("max_len", c->max_len);
    META_INT("norm_first", c->norm_first);
    META_STR("activation", tfm_activation_name(c->activation));
    META_STR("pe", tfm_pe_name(c->pe));
    META_STR("pe_layout", tfm_pe_layout_name(c->pe_layout));
    META_INT("pe_zero_pad", c->pe_zero_pad);
    META_INT("pe_scale", c->pe_scale);
    META_INT("pe_max_distance", c->pe_max_distance);
    META_INT("pe_buckets", c->pe_buckets);
    META_INT("pe_shaw_values", c->pe_shaw_values);
    META_STR("rope_pairing", tfm_rope_pairing_name(c->rope_pairing));
    META_INT("pad_id", c->pad_id);
    META_INT("bos_id", c->bos_id);
    META_INT("eos_id", c->eos_id);
    snprintf(vals[nm], sizeof vals[nm], "%.9g", (double)c->layer_norm_eps);
    META_STR("layer_norm_eps", vals[nm]);
    META_INT("tie_embeddings", c->tie_embeddings);
    if (c->type_vocab) META_INT("type_vocab", c->type_vocab); /* BERT only: other files stay as they were */
    if (c->embed_norm) META_INT("embed_norm", c->embed_norm);
#undef META_INT
#undef META_STR
    TFM_ASSERT(nm <= MODEL_META_MAX);
    return nm;
}

/* Bytes of one element of `dtype`, 0 if not one ckpt_tensor takes. */
static size_t ckpt_dtype_size(const char *dtype) {
    static const struct {
        const char *name;
        size_t size;
    } k[] = {{"F32", 4}, {"F64", 8}, {"I64", 8}, {"U8", 1}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcmp(dtype, k[i].name) == 0) return k[i].size;
    return 0;
}

tfm_status model_save_extra(const tfm_model *m, const char *path, const ckpt_tensor *extra, size_t n_extra) {
    for (size_t i = 0; i < n_extra; i++)
        RETURN_IF(!ckpt_dtype_size(extra[i].dtype), TFM_ERR_INVALID_ARG, "saving %s: tensor '%s' has dtype '%s'",
                  path, extra[i].name, extra[i].dtype);
    model_meta meta;
    const size_t nm = model_metadata(&m->cfg, &meta);
    st_out_tensor *t = calloc(m->n_entries + 1 + n_extra, sizeof *t);
    RETURN_IF(!t, TFM_ERR_NOMEM, "out of memory saving %s", path);
    const float *base = (const float *)m->param_arena.base;
    size_t n = 0;
    for (size_t k = 0; k < m->n_entries; k++, n++) {
        const param_entry *e = &m->entries[k];
        t[n] = (st_out_tensor){e->name, "F32", e->ndim, {e->shape[0], e->shape[1]}, base + e->offset,
                               (uint64_t)e->numel * sizeof(float)};
    }
    if (m->tokenizer)
        t[n++] = (st_out_tensor){TOKENIZER_TENSOR, "U8", 1, {m->tokenizer_len, 0}, m->tokenizer, m->tokenizer_len};
    for (size_t i = 0; i < n_extra; i++, n++) {
        const ckpt_tensor *x = &extra[i];
        t[n] = (st_out_tensor){x->name, x->dtype, 1, {x->count, 0}, x->data,
                               (uint64_t)x->count * ckpt_dtype_size(x->dtype)};
    }
    tfm_status st = st_write(path, meta.kv, nm, t, n);
    free(t);
    return st;
}

/* Reads one extra tensor of an open checkpoint (model_read_extra). */
static tfm_status read_extra(const st_file *f, const ckpt_tensor *x, const char *missing) {
    const size_t size = ckpt_dtype_size(x->dtype), bytes = x->count * size;
    RETURN_IF(!size, TFM_ERR_INVALID_ARG, "reading %s: tensor '%s' has dtype '%s'", f->path, x->name, x->dtype);
    const st_tensor *e = st_find(f, x->name);
    RETURN_IF(!e, TFM_ERR_FORMAT, "%s: no tensor '%s': %s", f->path, x->name, missing);
    RETURN_IF(strcmp(e->dtype, x->dtype) != 0 || e->ndim != 1 || e->shape[0] != x->count ||
                  e->end - e->begin != bytes,
              TFM_ERR_FORMAT, "%s: tensor '%s' must be %s with %zu bytes (was it saved for another model or optimizer?)",
              f->path, x->name, x->dtype, bytes);
    return st_read(f, e, x->data);
}

tfm_status model_read_extra(const char *path, const ckpt_tensor *extra, size_t n_extra, const char *missing) {
    st_file f;
    TRY(st_open(path, &f));
    tfm_status st = TFM_OK;
    for (size_t i = 0; i < n_extra && st == TFM_OK; i++) st = read_extra(&f, &extra[i], missing);
    st_close(&f);
    return st;
}
