/* sentence-transformers' settings in a model folder (hf.h): which modules run after the encoder
 * (modules.json), how token vectors are pooled (1_Pooling/config.json), and the truncation
 * length (sentence_bert_config.json). */
#include "hf.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int flag(const cJSON *root, const char *key) { return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, key)); }

/* modules.json: a list of {"type": ..., "path": ...}; finds the Pooling module's folder and whether a
 * Normalize module is listed. */
static tfm_status read_modules(const char *path, char *pool_dir, size_t n, int *normalize) {
    cJSON *root;
    TRY(hf_json_load(path, &root));
    tfm_status st = TFM_OK;
    if (!cJSON_IsArray(root)) st = tfm_set_error(TFM_ERR_FORMAT, "%s: expected a JSON list of modules", path);
    *normalize = 0;
    const cJSON *mod;
    cJSON_ArrayForEach(mod, root) {
        if (st != TFM_OK) break;
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(mod, "type");
        const cJSON *mpath = cJSON_GetObjectItemCaseSensitive(mod, "path");
        if (!cJSON_IsString(type)) {
            st = tfm_set_error(TFM_ERR_FORMAT, "%s: a module without a string 'type'", path);
            break;
        }
        const char *t = type->valuestring;
        if (strcmp(t, "sentence_transformers.models.Normalize") == 0)
            *normalize = 1;
        else if (strcmp(t, "sentence_transformers.models.Pooling") == 0 && cJSON_IsString(mpath))
            snprintf(pool_dir, n, "%s", mpath->valuestring);
        else if (strcmp(t, "sentence_transformers.models.Transformer") != 0)
            st = tfm_set_error(TFM_ERR_UNSUPPORTED, "%s: module type '%.80s' is not supported (Transformer, Pooling "
                               "and Normalize are)", path, t);
    }
    cJSON_Delete(root);
    return st;
}

static tfm_status read_pooling(const char *path, hf_pooling *out) {
    cJSON *root;
    TRY(hf_json_load(path, &root));
    const int mean = flag(root, "pooling_mode_mean_tokens"), cls = flag(root, "pooling_mode_cls_token"),
              max = flag(root, "pooling_mode_max_tokens");
    const int other = flag(root, "pooling_mode_mean_sqrt_len_tokens") || flag(root, "pooling_mode_weightedmean_tokens") ||
                      flag(root, "pooling_mode_lasttoken");
    cJSON_Delete(root);
    RETURN_IF(other || mean + cls + max != 1, TFM_ERR_UNSUPPORTED,
              "%s: tfm pools with exactly one of pooling_mode_mean_tokens, pooling_mode_cls_token, "
              "pooling_mode_max_tokens", path);
    *out = mean ? HF_POOL_MEAN : cls ? HF_POOL_CLS : HF_POOL_MAX;
    return TFM_OK;
}

static tfm_status read_max_seq(const char *path, int *out) {
    cJSON *root;
    TRY(hf_json_load(path, &root));
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "max_seq_length");
    tfm_status st = TFM_OK;
    if (cJSON_IsNumber(j) && j->valuedouble >= 2 && j->valuedouble <= 1048576)
        *out = (int)j->valuedouble;
    else if (j && !cJSON_IsNull(j))
        st = tfm_set_error(TFM_ERR_FORMAT, "%s: max_seq_length must be an integer in [2, 1048576]", path);
    cJSON_Delete(root);
    return st;
}

tfm_status hf_st_settings_load(const char *dir, hf_st_settings *out) {
    out->pooling = HF_POOL_MEAN;
    out->normalize = 1;
    out->max_seq_length = 0;
    char path[4400], pool_dir[256] = "1_Pooling";
    snprintf(path, sizeof path, "%s/modules.json", dir);
    if (exists(path)) TRY(read_modules(path, pool_dir, sizeof pool_dir, &out->normalize));
    snprintf(path, sizeof path, "%s/%s/config.json", dir, pool_dir);
    if (exists(path)) TRY(read_pooling(path, &out->pooling));
    snprintf(path, sizeof path, "%s/sentence_bert_config.json", dir);
    if (exists(path)) TRY(read_max_seq(path, &out->max_seq_length));
    return TFM_OK;
}
