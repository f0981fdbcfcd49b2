/* The one loader of every model format (model_format.h): find the format of a path, open its
 * weights, and run its operations. tfm_model_load and tfm_model_load_hf are this file. */
#include "model_format.h"

#include "io/hf.h"
#include "model_internal.h"
#include "tfm/embed.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Every format, tried in this order; tfm's own checkpoint (anything that is not a Hugging Face
 * model) last. A new family: one line here and its file in src/model/io/. */
static const model_format *const k_formats[] = {&model_format_hf_bert, &model_format_hf_marian, &model_format_hf_m2m100,
                                                &model_format_hf_gpt2, &model_format_hf_llama, &model_format_hf_qwen2,
                                                &model_format_hf_mistral, &model_format_tfm};
#define N_FORMATS (sizeof k_formats / sizeof k_formats[0])

static int is_file(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The model_types of the Hugging Face formats, as "'bert', 'marian'", into buf. */
static const char *hf_types(char *buf, size_t n) {
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_FORMATS; i++)
        if (k_formats[i]->hf_model_type && k < n)
            k += (size_t)snprintf(buf + k, n - k, "%s'%s'", k ? ", " : "", k_formats[i]->hf_model_type);
    return buf;
}

/* Whether format f reads path (model_type: see model_format.recognise). */
static int recognises(const model_format *f, const char *path, const char *model_type) {
    if (f->recognise) return f->recognise(path, model_type);
    if (!f->hf_model_type) return model_type == NULL;
    return model_type && strcmp(model_type, f->hf_model_type) == 0;
}

/* A Hugging Face folder (or a .safetensors file inside one): its config.json parsed into
 * src->config, the format its model_type names, the weights file (model.safetensors). */
static tfm_status locate_hf(const char *path, fmt_source *src, cJSON **root, const model_format **fmt) {
    TRY(hf_model_dir(path, src->dir, sizeof src->dir));
    snprintf(src->config_path, sizeof src->config_path, "%s/config.json", src->dir);
    RETURN_IF(!is_file(src->config_path), TFM_ERR_IO,
              "%s: no config.json (a Hugging Face model folder holds config.json and model.safetensors)", src->dir);
    TRY(hf_json_load(src->config_path, root));
    src->config = *root;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(*root, "model_type");
    RETURN_IF(!cJSON_IsString(mt), TFM_ERR_FORMAT,
              "%s: key 'model_type' is missing (is this a Hugging Face config.json?)", src->config_path);
    for (size_t i = 0; i < N_FORMATS && !*fmt; i++)
        if (recognises(k_formats[i], path, mt->valuestring)) *fmt = k_formats[i];
    char types[160];
    RETURN_IF(!*fmt, TFM_ERR_UNSUPPORTED,
              "%s: model_type '%.60s' is not supported: tfm loads Hugging Face models of model_type %s",
              src->config_path, mt->valuestring, hf_types(types, sizeof types));
    if (!hf_is_dir(path)) {
        snprintf(src->weights, sizeof src->weights, "%s", path);
        return TFM_OK;
    }
    snprintf(src->weights, sizeof src->weights, "%s/model.safetensors", src->dir);
    if (is_file(src->weights)) return TFM_OK;
    char bin[4200];
    snprintf(bin, sizeof bin, "%s/pytorch_model.bin", src->dir);
    /* a pickle runs code when it is read: tfm never unpickles, it says how to convert */
    RETURN_IF(is_file(bin), TFM_ERR_UNSUPPORTED,
              "%s: only pytorch_model.bin (a Python pickle, which tfm does not read); convert it to "
              "model.safetensors with: python -c \"from transformers import %s as M; "
              "M.from_pretrained('%s').save_pretrained('%s', safe_serialization=True)\"",
              src->dir, (*fmt)->hf_auto_class ? (*fmt)->hf_auto_class : "AutoModel", src->dir, src->dir);
    return tfm_set_error(TFM_ERR_IO, "%s: no model.safetensors (the %s needs config.json and model.safetensors)",
                         src->dir, (*fmt)->name);
}

tfm_status model_format_load(const char *path, int hf_only, tfm_model **out) {
    *out = NULL;
    fmt_source *src = calloc(1, sizeof *src);
    RETURN_IF(!src, TFM_ERR_NOMEM, "out of memory loading %s", path);
    src->path = path;
    cJSON *root = NULL;
    const model_format *fmt = NULL;
    tfm_status st = TFM_OK;
    if (hf_only || hf_is_model(path)) {
        st = locate_hf(path, src, &root, &fmt);
    } else {
        fmt = &model_format_tfm;
        snprintf(src->weights, sizeof src->weights, "%s", path);
    }
    int opened = 0;
    if (st == TFM_OK) st = st_open(src->weights, &src->st);
    opened = st == TFM_OK;
    tfm_config cfg;
    tfm_model *m = NULL;
    if (st == TFM_OK) st = fmt->read_config(src, &cfg);
    if (st == TFM_OK) st = model_alloc(&cfg, &m);
    if (st == TFM_OK) st = fmt->read_tensors(src, m);
    if (st == TFM_OK && fmt->attach_tokenizer) st = fmt->attach_tokenizer(src, m);
    if (opened) st_close(&src->st);
    cJSON_Delete(root);
    free(src);
    if (st != TFM_OK) {
        tfm_model_free(m);
        return st;
    }
    *out = m;
    return TFM_OK;
}

tfm_status tfm_model_load(const char *path, tfm_model **out) { return model_format_load(path, 0, out); }

tfm_status tfm_model_load_hf(const char *path, tfm_model **out) {
    RETURN_IF(!out || !path, TFM_ERR_INVALID_ARG, "tfm_model_load_hf: NULL argument");
    return model_format_load(path, 1, out);
}
