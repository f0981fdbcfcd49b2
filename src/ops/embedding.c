/* Token embeddings scaled by √d_model (Vaswani et al. 2017, §3.4) and the sinusoidal position
 * encoding (§3.5). */
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

void pe_sinusoidal_add(float *x, size_t B, size_t T, size_t d, size_t pos0) {
    /* ω_i = 10000^(−2i/d) = exp(−2i · ln(10000) / d), shared by the sin (2i) and cos (2i+1)
     * components; angles in double so large positions keep their precision. */
    const double log_base = log(10000.0);
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(B * d)) num_threads(ops_team(T * B * d))
    for (size_t t = 0; t < T; t++) {
        double pos = (double)(pos0 + t);
        for (size_t c = 0; c < d; c += 2) {
            double omega = exp(-(double)c * log_base / (double)d);
            float s = (float)sin(pos * omega), co = (float)cos(pos * omega);
            for (size_t b = 0; b < B; b++) {
                float *row = x + (b * T + t) * d;
                row[c] += s;
                if (c + 1 < d) row[c + 1] += co;
            }
        }
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
