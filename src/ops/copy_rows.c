/* Independent row copies across the thread pool (ops.h ops_copy_rows): beam search's KV-cache
 * reordering moves whole histories (up to cap_T · d floats a row) at every step. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

#include <string.h>

typedef struct {
    float *const *dst;
    const float *const *src;
    size_t n;
} copy_job;

static void copy_range(void *arg, size_t i0, size_t i1) {
    const copy_job *j = arg;
    for (size_t i = i0; i < i1; i++) memcpy(j->dst[i], j->src[i], j->n * sizeof(float));
}

void ops_copy_rows(float *const *dst, const float *const *src, size_t count, size_t n) {
    if (count == 0 || n == 0) return;
    copy_job j = {dst, src, n};
    const size_t per = n >= OPS_ELEM_CHUNK ? 1 : OPS_ELEM_CHUNK / n; /* rows per chunk: ~64 KB */
    ops_pool_for(count, per, ops_team(count * n), copy_range, &j);
}
