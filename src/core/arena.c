#include "arena.h"

#include <stdlib.h>
#include <string.h>

tfm_status arena_init(tfm_arena *a, size_t bytes, const char *what) {
    a->used = 0;
    a->cap = 0;
    a->base = NULL;
    size_t rounded = (bytes + TFM_ARENA_ALIGN - 1) / TFM_ARENA_ALIGN * TFM_ARENA_ALIGN;
    if (rounded == 0) rounded = TFM_ARENA_ALIGN;
    void *p = aligned_alloc(TFM_ARENA_ALIGN, rounded);
    RETURN_IF(p == NULL, TFM_ERR_NOMEM, "out of memory allocating %zu bytes for %s", rounded, what);
    memset(p, 0, rounded);
    a->base = p;
    a->cap = rounded;
    return TFM_OK;
}

void arena_free(tfm_arena *a) {
    free(a->base);
    a->base = NULL;
    a->used = a->cap = 0;
}

void *arena_take_bytes(tfm_arena *a, size_t bytes) {
    size_t start = (a->used + TFM_ARENA_ALIGN - 1) / TFM_ARENA_ALIGN * TFM_ARENA_ALIGN;
    a->used = start + bytes;
    if (a->base == NULL) return NULL;
    TFM_ASSERT(a->used <= a->cap);
    if (a->used > a->cap) return NULL;
    return a->base + start;
}

float *arena_take_f32(tfm_arena *a, size_t n) {
    return (float *)arena_take_bytes(a, n * sizeof(float));
}
