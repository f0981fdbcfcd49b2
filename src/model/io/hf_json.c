/* Hugging Face folders: paths and JSON files (hf.h). */
#include "hf.h"
#include "parts.h"
#include "safetensors.h"
#include "tfm/model.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HF_JSON_MAX_BYTES (64u << 20)

int hf_is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

tfm_status hf_model_dir(const char *path, char *dir, size_t n) {
    return tfm_path_folder(path, dir, n);
}

int hf_is_model(const char *path) {
    if (!path) return 0;
    if (hf_is_dir(path)) return 1;
    char dir[4096], cfg[4200];
    if (hf_model_dir(path, dir, sizeof dir) != TFM_OK) {
        tfm_clear_error();
        return 0;
    }
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    struct stat sb;
    if (stat(cfg, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    st_file f;
    if (st_open(path, &f) != TFM_OK) {
        tfm_clear_error();
        return 0;
    }
    const int hf = st_meta_get(&f, "arch") == NULL;
    st_close(&f);
    return hf;
}

tfm_status hf_json_load(const char *path, cJSON **out) {
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    RETURN_IF(!fp, TFM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > HF_JSON_MAX_BYTES) {
        fclose(fp);
        return tfm_set_error(TFM_ERR_FORMAT, "%s: not a regular file of at most 64 MiB", path);
    }
    const size_t size = (size_t)sb.st_size;
    char *buf = malloc(size + 1);
    if (!buf) {
        fclose(fp);
        return tfm_set_error(TFM_ERR_NOMEM, "%s: out of memory", path);
    }
    const size_t len = fread(buf, 1, size, fp);
    const int bad = ferror(fp) || len != size;
    fclose(fp);
    if (bad) {
        free(buf);
        return tfm_set_error(TFM_ERR_IO, "%s: read error", path);
    }
    cJSON *root = cJSON_ParseWithLength(buf, len);
    if (!root) {
        const char *ep = cJSON_GetErrorPtr();
        size_t at = ep && ep >= buf && ep <= buf + len ? (size_t)(ep - buf) : 0, line = 1, col = 1;
        for (size_t i = 0; i < at; i++, col++)
            if (buf[i] == '\n') line++, col = 0;
        free(buf);
        return tfm_set_error(TFM_ERR_FORMAT, "%s:%zu:%zu: not valid JSON", path, line, col);
    }
    free(buf);
    *out = root;
    return TFM_OK;
}

/* Value j of key `key` (file `path`) as an integer in [0, 16777216] into *out. */
static tfm_status cfg_int_value(const char *path, const char *key, const cJSON *j, int *out) {
    RETURN_IF(!cJSON_IsNumber(j) || j->valuedouble != floor(j->valuedouble) || j->valuedouble < 0 ||
                  j->valuedouble > 16777216.0,
              TFM_ERR_FORMAT, "%s: '%s' must be an integer in [0, 16777216]", path, key);
    *out = (int)j->valuedouble;
    return TFM_OK;
}

tfm_status hf_cfg_int(const char *path, const cJSON *root, const char *key, int required, int *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!j || cJSON_IsNull(j)) {
        RETURN_IF(required, TFM_ERR_FORMAT, "%s: key '%s' is missing", path, key);
        return TFM_OK;
    }
    return cfg_int_value(path, key, j, out);
}

/* forced_eos_token_id of `root` (file `path`) into *id (unchanged when absent or null): an int, or
 * a list of ints as transformers' GenerationConfig allows — one id only (tfm forces one EOS). */
static tfm_status forced_eos_id(const char *path, const cJSON *root, int *id) {
    const char *key = "forced_eos_token_id";
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsArray(j)) return hf_cfg_int(path, root, key, 0, id);
    const int n = cJSON_GetArraySize(j);
    RETURN_IF(n != 1, TFM_ERR_UNSUPPORTED, "%s: '%s' lists %d ids: tfm forces one EOS (an int or a list of one)", path,
              key, n);
    return cfg_int_value(path, key, cJSON_GetArrayItem(j, 0), id);
}

tfm_status hf_cfg_same_int(const char *path, const cJSON *root, const char *a, const char *b, int *out) {
    int x = 0, y = 0;
    TRY(hf_cfg_int(path, root, a, 1, &x));
    TRY(hf_cfg_int(path, root, b, 1, &y));
    RETURN_IF(x != y, TFM_ERR_UNSUPPORTED, "%s: '%s' (%d) differs from '%s' (%d): tfm's encoder and decoder share it",
              path, a, x, b, y);
    *out = x;
    return TFM_OK;
}

tfm_status hf_forced_eos(const char *dir, const char *cfg_path, const cJSON *cfg, int eos_id, int *forced) {
    char gen[4200];
    snprintf(gen, sizeof gen, "%s/generation_config.json", dir);
    cJSON *g = NULL;
    struct stat sb;
    if (stat(gen, &sb) == 0) {
        TRY(hf_json_load(gen, &g));
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "_from_model_config"))) {
            cJSON_Delete(g);
            g = NULL;
        }
    }
    const char *path = g ? gen : cfg_path;
    int id = -1;
    tfm_status st = forced_eos_id(path, g ? g : cfg, &id);
    cJSON_Delete(g);
    TRY(st);
    RETURN_IF(id >= 0 && id != eos_id, TFM_ERR_UNSUPPORTED,
              "%s: forced_eos_token_id %d is not eos_token_id %d: tfm forces only EOS at the length limit", path, id,
              eos_id);
    *forced = id >= 0;
    return TFM_OK;
}

const char *hf_cfg_str(const cJSON *root, const char *key) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

tfm_status hf_cfg_bool(const char *path, const cJSON *root, const char *key, int dflt, int *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!j || cJSON_IsNull(j)) {
        *out = dflt;
        return TFM_OK;
    }
    RETURN_IF(!cJSON_IsBool(j), TFM_ERR_FORMAT, "%s: '%s' must be true or false", path, key);
    *out = cJSON_IsTrue(j);
    return TFM_OK;
}

tfm_status hf_cfg_float(const char *path, const cJSON *root, const char *key, float dflt, float *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!j || cJSON_IsNull(j)) {
        *out = dflt;
        return TFM_OK;
    }
    RETURN_IF(!cJSON_IsNumber(j), TFM_ERR_FORMAT, "%s: '%s' must be a number", path, key);
    *out = (float)j->valuedouble;
    return TFM_OK;
}

tfm_status hf_read_file(const char *dir, const char *name, const char *hint, unsigned char **data, size_t *len) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    *data = NULL;
    *len = 0;
    FILE *fp = fopen(path, "rb");
    RETURN_IF(!fp, TFM_ERR_IO, "%s: cannot open: %s (%s)", path, strerror(errno), hint);
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > (1 << 30)) {
        fclose(fp);
        return tfm_set_error(TFM_ERR_IO, "%s: not a regular file of at most 1 GiB", path);
    }
    *len = (size_t)sb.st_size;
    *data = malloc(*len ? *len : 1);
    if (!*data || fread(*data, 1, *len, fp) != *len) {
        fclose(fp);
        const int nomem = !*data;
        free(*data);
        *data = NULL;
        return tfm_set_error(nomem ? TFM_ERR_NOMEM : TFM_ERR_IO, "%s: cannot read", path);
    }
    fclose(fp);
    return TFM_OK;
}

tfm_status hf_attach_files(struct tfm_model *m, const char *dir, const char *magic, const char *const *names, size_t n,
                           size_t n_required, const char *hint) {
    blob_part parts[8] = {{NULL, NULL, 0}};
    unsigned char *data[8] = {NULL};
    RETURN_IF(n > 8, TFM_ERR_INVALID_ARG, "hf_attach_files: at most 8 files");
    size_t k = 0;
    tfm_status st = TFM_OK;
    for (size_t i = 0; i < n && st == TFM_OK; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat sb;
        if (i >= n_required && (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))) continue; /* optional, absent */
        size_t len = 0;
        st = hf_read_file(dir, names[i], hint, &data[k], &len);
        parts[k] = (blob_part){names[i], data[k], len};
        k++;
    }
    unsigned char *blob = NULL;
    size_t blen = 0;
    if (st == TFM_OK) st = parts_pack(magic, parts, k, &blob, &blen);
    if (st == TFM_OK) st = tfm_model_set_tokenizer(m, blob, blen);
    for (size_t i = 0; i < k; i++) free(data[i]);
    free(blob);
    return st;
}
