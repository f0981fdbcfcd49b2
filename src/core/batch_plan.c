/* Length-bucketed batches (batch_plan.h). */
#include "batch_plan.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t len, index;
} keyed;

static int by_length(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* 1 if `rows` sequences padded to `len` stay within the token and cell limits (no overflow:
 * rows·len > M exactly when rows > ⌊M / len⌋). */
static int fits(const batch_limits *lim, size_t rows, size_t len) {
    if (len == 0) return 1;
    if (lim->max_tokens && rows > lim->max_tokens / len) return 0;
    if (lim->max_cells && rows > lim->max_cells / len / len) return 0;
    return 1;
}

tfm_status batch_plan_make(batch_plan *p, const size_t *len, size_t n, batch_limits lim) {
    memset(p, 0, sizeof *p);
    RETURN_IF(lim.max_rows < 1, TFM_ERR_INVALID_ARG, "batch plan: max_rows must be >= 1");
    RETURN_IF(n > 0 && !len, TFM_ERR_INVALID_ARG, "batch plan: no lengths");
    if (n == 0) return TFM_OK;
    size_t bytes;
    RETURN_IF(!size_mul_ok(n, sizeof(size_t) + sizeof(batch_span), &bytes), TFM_ERR_NOMEM,
              "batch plan: %zu sequences overflow the address space", n);
    keyed *k = malloc(n * sizeof *k);
    unsigned char *mem = malloc(bytes);
    if (!k || !mem) {
        free(k);
        free(mem);
        return tfm_set_error(TFM_ERR_NOMEM, "out of memory planning batches of %zu sequences", n);
    }
    for (size_t i = 0; i < n; i++) k[i] = (keyed){len[i], i};
    qsort(k, n, sizeof *k, by_length);
    p->order = (size_t *)mem;
    p->batch = (batch_span *)(mem + n * sizeof(size_t));
    p->n = n;
    for (size_t i = 0; i < n; i++) p->order[i] = k[i].index;
    while (p->skipped < n && k[p->skipped].len == 0) p->skipped++;
    for (size_t at = p->skipped; at < n;) {
        size_t rows = 1;
        while (at + rows < n && rows < lim.max_rows && fits(&lim, rows + 1, k[at + rows].len)) rows++;
        const size_t L = k[at + rows - 1].len; /* sorted: the last is the longest */
        p->batch[p->n_batches++] = (batch_span){at, rows, L};
        if (rows > p->max_rows) p->max_rows = rows;
        if (L > p->max_len) p->max_len = L;
        if (rows * L > p->max_tokens) p->max_tokens = rows * L;
        at += rows;
    }
    free(k);
    return TFM_OK;
}

void batch_plan_free(batch_plan *p) {
    free(p->order); /* the one block, batch spans included */
    memset(p, 0, sizeof *p);
}
