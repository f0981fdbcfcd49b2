/* Model checkpoints: the safetensors contract of docs/FORMATS.md (PyTorch names, config in the
 * header's __metadata__, reserved prefixes tokenizer. and train_state.): writing them, and their
 * extra tensors. Reading a model is io/fmt_tfm.c (one of the model formats, io/model_format.h). */
#include "checkpoint.h"
#include "model_internal.h"
#include "safetensors.h"
#include "tfm/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
    /* the family traits (docs/MODELS.md): written only when not the default, so a model tfm trains
     * writes the file it always did */
    if (c->embed_scale > 0.0f) {
        snprintf(vals[nm], sizeof vals[nm], "%.9g", (double)c->embed_scale);
        META_STR("embed_scale", vals[nm]);
    }
    if (c->pe_offset) META_INT("pe_offset", c->pe_offset);
    if (c->no_final_norm) META_INT("no_final_norm", c->no_final_norm);
    if (c->decoder_start_id >= 0) META_INT("decoder_start_id", c->decoder_start_id);
    if (c->suppress != TFM_SUPPRESS_PAD_BOS) META_STR("suppress", tfm_suppress_name(c->suppress));
    if (c->lenpen_count_forced) META_INT("lenpen_count_forced", c->lenpen_count_forced);
    if (c->forced_eos) META_INT("forced_eos", c->forced_eos);
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
    const char *llm = tfm_config_inference_only(&m->cfg);
    RETURN_IF(llm, TFM_ERR_UNSUPPORTED,
              "saving %s: a model with %s has no tfm checkpoint keys yet; load it from its Hugging Face folder "
              "(docs/LLM.md)", path, llm);
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
        t[n++] = (st_out_tensor){CKPT_TOKENIZER_TENSOR, "U8", 1, {m->tokenizer_len, 0}, m->tokenizer, m->tokenizer_len};
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
