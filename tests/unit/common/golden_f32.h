/* Reader of the binary golden files (little-endian float32, no header) written by the scripts of
 * tests/reference/ (logits.f32, ...). */
#ifndef TFM_GOLDEN_F32_H
#define TFM_GOLDEN_F32_H

#include <stdio.h>
#include <stdlib.h>

/* The floats of `path` (malloc'd, *n of them), or NULL when it cannot be opened. */
static inline float *read_f32(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    *n = 0;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *p = bytes >= 0 ? malloc((size_t)bytes + 1) : NULL;
    *n = p ? fread(p, sizeof(float), (size_t)bytes / sizeof(float), f) : 0;
    fclose(f);
    return p;
}

#endif
