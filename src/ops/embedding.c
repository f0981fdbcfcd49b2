/* Token embeddings scaled by √d_model (Vaswani et al. 2017, §3.4). The position encodings' kernels
 * are in position.c. */
#include "ops.h"
#include "parallel.h"

#include <math.h>

void embedding_forward(float *out, const int32_t *ids, const float *table, float scale, size_t N,
                       size_t d) {
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(d)) num_threads(ops_team(N * d))
    for (size_t n = 0; n < N; n++) {
        const float *row = table + (size_t)ids[n] * d;
        float *y = out + n * d;
        for (size_t c = 0; c < d; c++) y[c] = row[c] * scale;
    }
}

void embedding_backward(float *dtable, const float *dout, const int32_t *ids, float scale, size_t N,
                        size_t d) {
    /* Rows of ids repeat, so threads split the columns (blocks of 64) and each walks every row in
     * order: race-free and the same sums whatever the thread count. */
    const size_t nblk = (d + 63) / 64;
#pragma omp parallel for schedule(dynamic, 1) num_threads(ops_team(N * d))
    for (size_t blk = 0; blk < nblk; blk++) {
        const size_t c0 = blk * 64, c1 = c0 + 64 < d ? c0 + 64 : d;
        for (size_t n = 0; n < N; n++) {
            float *row = dtable + (size_t)ids[n] * d;
            const float *dy = dout + n * d;
            for (size_t c = c0; c < c1; c++) row[c] += scale * dy[c];
        }
    }
}
