/* Reading one tensor of a Hugging Face safetensors file, checked, as floats (model_format.h): the
 * one reader of every Hugging Face format (BERT, GPT-2, Llama, Marian, M2M100). */
#include "model_format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* IEEE 754 binary16 → binary32, exactly (every half is a float): normal, subnormal, ±0, ±∞, NaN. */
static float f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (e == 0) { /* ±0 and subnormals: man · 2^−24 */
        const float f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    const uint32_t bits = e == 31 ? sign | 0x7f800000u | (man << 13) : sign | ((e + 112u) << 23) | (man << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* bfloat16 → binary32: the upper half of a float, exactly. */
static float bf16_to_f32(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Reads tensor t into dst as floats: F32 as stored; BF16 and F16 widened exactly (transformers'
 * from_pretrained(torch_dtype=float32) gives the same values). */
static tfm_status read_as_f32(const st_file *f, const st_tensor *t, float *dst, size_t numel) {
    if (strcmp(t->dtype, "F32") == 0) return st_read(f, t, dst);
    uint16_t *h = malloc(numel * sizeof *h + 1);
    RETURN_IF(!h, TFM_ERR_NOMEM, "out of memory reading tensor '%s' of %s", t->name, f->path);
    tfm_status st = st_read(f, t, h);
    const int bf = strcmp(t->dtype, "BF16") == 0;
    for (size_t i = 0; st == TFM_OK && i < numel; i++) dst[i] = bf ? bf16_to_f32(h[i]) : f16_to_f32(h[i]);
    free(h);
    return st;
}

tfm_status hf_read_tensor(const st_file *f, const char *name, size_t rows, size_t cols, int transposed, float *dst,
                          float *tmp, uint8_t *used, const char *what) {
    const st_tensor *t = st_find(f, name);
    RETURN_IF(!t, TFM_ERR_FORMAT, "%s: tensor '%s' is missing (%s needs it)", f->path, name, what);
    RETURN_IF(strcmp(t->dtype, "F32") != 0 && strcmp(t->dtype, "BF16") != 0 && strcmp(t->dtype, "F16") != 0,
              TFM_ERR_UNSUPPORTED, "%s: tensor '%s' has dtype %s: tfm reads F32, BF16 and F16 weights", f->path, name,
              t->dtype);
    const size_t r = transposed ? cols : rows, k = transposed ? rows : cols;
    const int ok = t->ndim == (cols ? 2 : 1) && t->shape[0] == r && (!cols || t->shape[1] == k);
    if (!ok) {
        char got[96] = "";
        size_t n = 0;
        for (int i = 0; i < t->ndim && n < sizeof got - 24; i++)
            n += (size_t)snprintf(got + n, sizeof got - n, "%s%llu", i ? ", " : "", (unsigned long long)t->shape[i]);
        if (cols)
            return tfm_set_error(TFM_ERR_FORMAT, "%s: tensor '%s' has shape [%s], expected [%zu, %zu] (config.json)",
                                 f->path, name, got, r, k);
        return tfm_set_error(TFM_ERR_FORMAT, "%s: tensor '%s' has shape [%s], expected [%zu] (config.json)", f->path,
                             name, got, r);
    }
    if (used) used[t - f->tensors] = 1;
    const size_t numel = cols ? rows * cols : rows;
    if (!transposed) return read_as_f32(f, t, dst, numel);
    TFM_ASSERT(tmp != NULL);
    TRY(read_as_f32(f, t, tmp, numel)); /* (cols, rows) as stored → (rows, cols) */
    for (size_t i = 0; i < cols; i++)
        for (size_t j = 0; j < rows; j++) dst[j * cols + i] = tmp[i * rows + j];
    return TFM_OK;
}

tfm_status hf_read_f32(const st_file *f, const char *name, size_t rows, size_t cols, float *dst, const char *what) {
    return hf_read_tensor(f, name, rows, cols, 0, dst, NULL, NULL, what);
}
