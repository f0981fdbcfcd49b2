/* Token embeddings scaled by √d_model (Vaswani et al. 2017, §3.4). The position encodings' kernels
 * are in position.c. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

#include <math.h>

/* An embedding pass, as its chunks see it (pool.h). */
typedef struct {
    float *y;        /* forward: out; backward: dtable */
    const float *x;  /* forward: table; backward: dout */
    const int32_t *ids;
    float scale;
    size_t N, d;
} emb_job;

static void forward_rows(void *arg, size_t n0, size_t n1) {
    const emb_job *j = arg;
    const size_t d = j->d;
    const float scale = j->scale;
    for (size_t n = n0; n < n1; n++) {
        const float *row = j->x + (size_t)j->ids[n] * d;
        float *y = j->y + n * d;
        for (size_t c = 0; c < d; c++) y[c] = row[c] * scale;
    }
}

void embedding_forward(float *out, const int32_t *ids, const float *table, float scale, size_t N,
                       size_t d) {
    emb_job j = {out, table, ids, scale, N, d};
    ops_pool_for(N, (size_t)ops_rows_per_chunk(d), ops_team(N * d), forward_rows, &j);
}

/* Columns 64·blk .. of embedding_backward, every row in order. */
static void backward_block(void *arg, size_t blk) {
    const emb_job *j = arg;
    const size_t d = j->d, c0 = blk * 64, c1 = c0 + 64 < d ? c0 + 64 : d;
    const float scale = j->scale;
    for (size_t n = 0; n < j->N; n++) {
        float *row = j->y + (size_t)j->ids[n] * d;
        const float *dy = j->x + n * d;
        for (size_t c = c0; c < c1; c++) row[c] += scale * dy[c];
    }
}

void embedding_backward(float *dtable, const float *dout, const int32_t *ids, float scale, size_t N,
                        size_t d) {
    /* Rows of ids repeat, so threads split the columns (blocks of 64) and each walks every row in
     * order: race-free and the same sums whatever the thread count. */
    emb_job j = {dtable, dout, ids, scale, N, d};
    ops_pool_run((d + 63) / 64, ops_team(N * d), backward_block, &j);
}
