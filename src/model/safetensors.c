#define _POSIX_C_SOURCE 200809L
#include "safetensors.h"
#include "tfm/fileio.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} k_dtypes[] = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2},
                {"I8", 1},  {"U64", 8}, {"U32", 4}, {"U16", 2}, {"U8", 1},   {"BOOL", 1}, {"F8_E4M3", 1},
                {"F8_E5M2", 1}};

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* A JSON number that is a non-negative integer exactly representable in a double. */
static int json_u64(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return 0;
    double v = j->valuedouble;
    if (!(v >= 0.0) || v > 9007199254740992.0 || floor(v) != v) return 0;
    *out = (uint64_t)v;
    return 1;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(((const st_tensor *)a)->name, ((const st_tensor *)b)->name);
}

static int cmp_begin(const void *a, const void *b) {
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end < y->end ? -1 : x->end > y->end);
}

static tfm_status parse_tensor(const char *path, const cJSON *item, st_tensor *t, uint64_t data_len) {
    const char *name = item->string;
    RETURN_IF(!cJSON_IsObject(item), TFM_ERR_FORMAT, "%s: tensor '%s': header entry is not an object", path, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    RETURN_IF(!cJSON_IsString(dt), TFM_ERR_FORMAT, "%s: tensor '%s': missing or non-string dtype", path, name);
    RETURN_IF(!cJSON_IsArray(shape), TFM_ERR_FORMAT, "%s: tensor '%s': missing or non-array shape", path, name);
    RETURN_IF(!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2, TFM_ERR_FORMAT,
              "%s: tensor '%s': data_offsets must be an array [begin, end]", path, name);
    t->dtype_size = 0;
    for (size_t i = 0; i < sizeof k_dtypes / sizeof k_dtypes[0]; i++)
        if (strcmp(dt->valuestring, k_dtypes[i].name) == 0) {
            t->dtype_size = k_dtypes[i].size;
            snprintf(t->dtype, sizeof t->dtype, "%s", k_dtypes[i].name);
        }
    RETURN_IF(t->dtype_size == 0, TFM_ERR_FORMAT, "%s: tensor '%s': unknown dtype '%.16s'", path, name,
              dt->valuestring);
    int nd = cJSON_GetArraySize(shape);
    RETURN_IF(nd > ST_MAX_DIMS, TFM_ERR_FORMAT, "%s: tensor '%s': %d dimensions (at most %d supported)", path, name,
              nd, ST_MAX_DIMS);
    t->ndim = nd;
    uint64_t numel = 1;
    for (int i = 0; i < nd; i++) {
        uint64_t v;
        RETURN_IF(!json_u64(cJSON_GetArrayItem(shape, i), &v), TFM_ERR_FORMAT,
                  "%s: tensor '%s': shape[%d] is not a non-negative integer", path, name, i);
        t->shape[i] = v;
        RETURN_IF(v != 0 && numel > UINT64_MAX / v, TFM_ERR_FORMAT, "%s: tensor '%s': shape overflows 64 bits", path,
                  name);
        numel *= v;
    }
    RETURN_IF(numel > UINT64_MAX / t->dtype_size, TFM_ERR_FORMAT, "%s: tensor '%s': size overflows 64 bits", path,
              name);
    RETURN_IF(!json_u64(cJSON_GetArrayItem(offs, 0), &t->begin) || !json_u64(cJSON_GetArrayItem(offs, 1), &t->end),
              TFM_ERR_FORMAT, "%s: tensor '%s': data_offsets are not non-negative integers", path, name);
    RETURN_IF(t->end < t->begin, TFM_ERR_FORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] end before they begin",
              path, name, (unsigned long long)t->begin, (unsigned long long)t->end);
    RETURN_IF(t->end - t->begin != numel * t->dtype_size, TFM_ERR_FORMAT,
              "%s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes but %s with this shape needs %llu", path,
              name, (unsigned long long)t->begin, (unsigned long long)t->end,
              (unsigned long long)(t->end - t->begin), t->dtype, (unsigned long long)(numel * t->dtype_size));
    RETURN_IF(t->end > data_len, TFM_ERR_FORMAT,
              "%s: tensor '%s': data_offsets end at byte %llu of the data section, past the end of the file "
              "(data section is %llu bytes)",
              path, name, (unsigned long long)t->end, (unsigned long long)data_len);
    t->name = dup_str(name);
    RETURN_IF(!t->name, TFM_ERR_NOMEM, "out of memory reading %s", path);
    return TFM_OK;
}

static tfm_status parse_header(st_file *sf, const char *buf, size_t n) {
    const char *path = sf->path;
    RETURN_IF(n == 0 || buf[0] != '{', TFM_ERR_FORMAT,
              "%s: not a safetensors file (the header at byte 8 does not start with '{')", path);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(buf, n, &end, 0);
    if (!root) {
        const char *ep = cJSON_GetErrorPtr();
        size_t off = ep && ep >= buf && ep <= buf + n ? (size_t)(ep - buf) : 0;
        return tfm_set_error(TFM_ERR_FORMAT, "%s: bad JSON in the safetensors header near byte offset %zu", path,
                             8 + off);
    }
    tfm_status st = TFM_OK;
    for (const char *p = end; p && p < buf + n; p++)
        if (*p != ' ' && *p != '\0' && *p != '\n' && *p != '\t' && *p != '\r') {
            st = tfm_set_error(TFM_ERR_FORMAT, "%s: trailing bytes after the JSON header at byte offset %zu", path,
                               8 + (size_t)(p - buf));
            break;
        }
    if (st == TFM_OK && !cJSON_IsObject(root))
        st = tfm_set_error(TFM_ERR_FORMAT, "%s: the safetensors header is not a JSON object", path);
    size_t count = 0;
    for (const cJSON *it = root->child; st == TFM_OK && it; it = it->next) count++;
    if (st == TFM_OK) {
        sf->tensors = calloc(count ? count : 1, sizeof *sf->tensors);
        sf->meta = NULL;
        if (!sf->tensors) st = tfm_set_error(TFM_ERR_NOMEM, "out of memory reading %s", path);
    }
    int seen_meta = 0;
    for (const cJSON *it = root->child; st == TFM_OK && it; it = it->next) {
        if (strcmp(it->string, "__metadata__") == 0) {
            if (seen_meta) {
                st = tfm_set_error(TFM_ERR_FORMAT, "%s: __metadata__ appears twice in the header", path);
                break;
            }
            seen_meta = 1;
            if (!cJSON_IsObject(it)) {
                st = tfm_set_error(TFM_ERR_FORMAT, "%s: __metadata__ is not an object", path);
                break;
            }
            size_t nm = 0;
            for (const cJSON *m = it->child; m; m = m->next) nm++;
            sf->meta = calloc(nm ? nm : 1, sizeof *sf->meta);
            if (!sf->meta) {
                st = tfm_set_error(TFM_ERR_NOMEM, "out of memory reading %s", path);
                break;
            }
            for (const cJSON *m = it->child; m; m = m->next) {
                if (!cJSON_IsString(m)) {
                    st = tfm_set_error(TFM_ERR_FORMAT, "%s: metadata value of '%s' is not a string", path, m->string);
                    break;
                }
                if (st_meta_get(sf, m->string)) {
                    st = tfm_set_error(TFM_ERR_FORMAT, "%s: metadata key '%s' appears twice", path, m->string);
                    break;
                }
                sf->meta[sf->n_meta].key = dup_str(m->string);
                sf->meta[sf->n_meta].value = dup_str(m->valuestring);
                sf->n_meta++;
                if (!sf->meta[sf->n_meta - 1].key || !sf->meta[sf->n_meta - 1].value) {
                    st = tfm_set_error(TFM_ERR_NOMEM, "out of memory reading %s", path);
                    break;
                }
            }
            continue;
        }
        st = parse_tensor(path, it, &sf->tensors[sf->n_tensors], sf->data_len);
        if (st == TFM_OK) sf->n_tensors++;
    }
    cJSON_Delete(root);
    TRY(st);

    /* duplicate names: sort a copy by name (cJSON keeps duplicate keys, so we must check) */
    if (sf->n_tensors > 1) {
        st_tensor *sorted = malloc(sf->n_tensors * sizeof *sorted);
        const st_tensor **by_begin = malloc(sf->n_tensors * sizeof *by_begin);
        if (!sorted || !by_begin) {
            free(sorted);
            free(by_begin);
            return tfm_set_error(TFM_ERR_NOMEM, "out of memory reading %s", path);
        }
        memcpy(sorted, sf->tensors, sf->n_tensors * sizeof *sorted);
        qsort(sorted, sf->n_tensors, sizeof *sorted, cmp_names);
        for (size_t i = 1; i < sf->n_tensors && st == TFM_OK; i++)
            if (strcmp(sorted[i - 1].name, sorted[i].name) == 0)
                st = tfm_set_error(TFM_ERR_FORMAT, "%s: tensor '%s' appears twice in the header", path, sorted[i].name);
        for (size_t i = 0; i < sf->n_tensors; i++) by_begin[i] = &sf->tensors[i];
        qsort(by_begin, sf->n_tensors, sizeof *by_begin, cmp_begin);
        for (size_t i = 1; i < sf->n_tensors && st == TFM_OK; i++)
            if (by_begin[i]->begin < by_begin[i - 1]->end)
                st = tfm_set_error(TFM_ERR_FORMAT,
                                   "%s: tensors '%s' [%llu, %llu) and '%s' [%llu, %llu) overlap in the data section",
                                   path, by_begin[i - 1]->name, (unsigned long long)by_begin[i - 1]->begin,
                                   (unsigned long long)by_begin[i - 1]->end, by_begin[i]->name,
                                   (unsigned long long)by_begin[i]->begin, (unsigned long long)by_begin[i]->end);
        free(sorted);
        free(by_begin);
    }
    return st;
}

tfm_status st_open(const char *path, st_file *out) {
    memset(out, 0, sizeof *out);
    out->path = dup_str(path);
    RETURN_IF(!out->path, TFM_ERR_NOMEM, "out of memory");
    out->f = fopen(path, "rb");
    if (!out->f) {
        tfm_status st = tfm_set_error(TFM_ERR_IO, "cannot open checkpoint %s: %s", path, strerror(errno));
        st_close(out);
        return st;
    }
    tfm_status st = TFM_OK;
    unsigned char len8[8];
    uint64_t fsize = 0, n = 0;
    if (fseeko(out->f, 0, SEEK_END) != 0 || (fsize = (uint64_t)ftello(out->f), fseeko(out->f, 0, SEEK_SET) != 0))
        st = tfm_set_error(TFM_ERR_IO, "cannot seek in %s (is it a regular file?)", path);
    else if (fsize < 8 || fread(len8, 1, 8, out->f) != 8)
        st = tfm_set_error(TFM_ERR_FORMAT, "%s: not a safetensors file (%llu bytes, shorter than the 8-byte header length)",
                           path, (unsigned long long)fsize);
    if (st == TFM_OK) {
        for (int i = 7; i >= 0; i--) n = (n << 8) | len8[i];
        if (memcmp(len8, "PK\x03\x04", 4) == 0)
            st = tfm_set_error(TFM_ERR_FORMAT,
                               "%s: this is a zip archive (a PyTorch .pt/.pth checkpoint?), not safetensors; "
                               "save with safetensors or tests/reference's writer",
                               path);
        else if (len8[0] == 0x80 && len8[1] <= 5)
            st = tfm_set_error(TFM_ERR_FORMAT, "%s: this is a Python pickle, not safetensors", path);
        else if (n > ST_MAX_HEADER_BYTES)
            st = tfm_set_error(TFM_ERR_FORMAT,
                               "%s: header length %llu at byte 0 is over the 100 MB limit (not a safetensors file?)",
                               path, (unsigned long long)n);
        else if (n > fsize - 8)
            st = tfm_set_error(TFM_ERR_FORMAT,
                               "%s: header length %llu at byte 0 runs past the end of the file (%llu bytes)", path,
                               (unsigned long long)n, (unsigned long long)fsize);
    }
    char *buf = NULL;
    if (st == TFM_OK) {
        buf = malloc((size_t)n + 1);
        if (!buf) st = tfm_set_error(TFM_ERR_NOMEM, "out of memory reading the header of %s", path);
        else if (fread(buf, 1, (size_t)n, out->f) != (size_t)n)
            st = tfm_set_error(TFM_ERR_IO, "cannot read the %llu-byte header of %s", (unsigned long long)n, path);
    }
    if (st == TFM_OK) {
        buf[n] = '\0';
        out->data_start = 8 + n;
        out->data_len = fsize - 8 - n;
        st = parse_header(out, buf, (size_t)n);
    }
    free(buf);
    if (st != TFM_OK) st_close(out);
    return st;
}

const st_tensor *st_find(const st_file *f, const char *name) {
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}

const char *st_meta_get(const st_file *f, const char *key) {
    for (size_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[i].key, key) == 0) return f->meta[i].value;
    return NULL;
}

tfm_status st_read(const st_file *f, const st_tensor *t, void *dst) {
    uint64_t nbytes = t->end - t->begin;
    if (nbytes == 0) return TFM_OK;
    RETURN_IF(fseeko(f->f, (off_t)(f->data_start + t->begin), SEEK_SET) != 0 ||
                  fread(dst, 1, (size_t)nbytes, f->f) != (size_t)nbytes,
              TFM_ERR_IO, "%s: cannot read tensor '%s' (%llu bytes at byte offset %llu)", f->path, t->name,
              (unsigned long long)nbytes, (unsigned long long)(f->data_start + t->begin));
    return TFM_OK;
}

void st_close(st_file *f) {
    if (f->f) fclose(f->f);
    for (size_t i = 0; i < f->n_tensors; i++) free(f->tensors[i].name);
    for (size_t i = 0; i < f->n_meta; i++) {
        free(f->meta[i].key);
        free(f->meta[i].value);
    }
    free(f->tensors);
    free(f->meta);
    free(f->path);
    memset(f, 0, sizeof *f);
}

/* ---- writing ------------------------------------------------------------------------------ */

static char *build_header(const char *const *meta_kv, size_t n_meta, const st_out_tensor *t, size_t n,
                          size_t *len) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    int ok = 1;
    if (n_meta > 0) {
        cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
        ok = meta != NULL;
        for (size_t i = 0; ok && i < n_meta; i++) ok = cJSON_AddStringToObject(meta, meta_kv[2 * i], meta_kv[2 * i + 1]) != NULL;
    }
    uint64_t off = 0;
    for (size_t i = 0; ok && i < n; i++) {
        cJSON *e = cJSON_AddObjectToObject(root, t[i].name);
        cJSON *shape = e ? cJSON_AddArrayToObject(e, "shape") : NULL;
        cJSON *offs = e ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
        ok = e && shape && offs && cJSON_AddStringToObject(e, "dtype", t[i].dtype);
        for (int k = 0; ok && k < t[i].ndim; k++) ok = cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t[i].shape[k]));
        ok = ok && cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
        off += t[i].nbytes;
        ok = ok && cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
    }
    char *json = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!json) return NULL;
    size_t jl = strlen(json), padded = (jl + 7) / 8 * 8;
    char *out = malloc(padded);
    if (out) {
        memcpy(out, json, jl);
        memset(out + jl, ' ', padded - jl); /* pad with spaces to 8-byte alignment */
        *len = padded;
    }
    cJSON_free(json);
    return out;
}

tfm_status st_write(const char *path, const char *const *meta_kv, size_t n_meta, const st_out_tensor *t,
                    size_t n) {
    size_t hlen = 0;
    char *header = build_header(meta_kv, n_meta, t, n, &hlen);
    RETURN_IF(!header, TFM_ERR_NOMEM, "out of memory building the header of %s", path);
    tfm_atomic_file *af = NULL;
    tfm_status st = tfm_atomic_file_open(path, &af);
    if (st != TFM_OK) {
        free(header);
        return st;
    }
    FILE *f = tfm_atomic_file_stream(af);
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    int ok = fwrite(len8, 1, 8, f) == 8 && fwrite(header, 1, hlen, f) == hlen;
    for (size_t i = 0; ok && i < n; i++)
        ok = t[i].nbytes == 0 || fwrite(t[i].data, 1, (size_t)t[i].nbytes, f) == (size_t)t[i].nbytes;
    free(header);
    if (!ok) {
        int e = errno;
        tfm_atomic_file_abort(af);
        return tfm_set_error(TFM_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    return tfm_atomic_file_commit(af);
}
