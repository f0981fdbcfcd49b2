/* Kernels of the absolute position encodings added at the embeddings (docs/POSITION.md): the fixed
 * sinusoidal table (Vaswani et al. 2017, §3.5) in its column orders and options, and a learned
 * table (BERT, GPT-2) with its backward. */
#include "ops.h"
#include "parallel.h"

#include <math.h>

void pe_sinusoidal_add(float *x, size_t B, size_t T, size_t d, size_t pos0, const pe_sinusoid_opts *o) {
    /* ω_i = 10000^(−2i/d) = exp(−2i · ln(10000) / d), shared by pair i's sine and cosine, or with
     * t2t_freq ω_i = exp(−i · ln(10000) / max(d/2 − 1, 1)) (get_timing_signal_1d: num_timescales =
     * d/2, log_timescale_increment = ln(10000) / max(num_timescales − 1, 1)); angles in double so
     * large positions keep their precision. Interleaved: sine at column 2i, cosine
     * at 2i+1 (odd d: the last column is a sine). Concatenated (d even): sine at i, cosine at
     * d/2 + i. */
    const double log_base = log(10000.0);
    const size_t half = (d + 1) / 2; /* pairs; the cosine of pair half−1 is absent when d is odd */
    const size_t cos_off = o->concat ? d / 2 : 1, step = o->concat ? 1 : 2;
    const double t2t_step = log_base / (double)(d / 2 >= 2 ? d / 2 - 1 : 1);
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(B * d)) num_threads(ops_team(T * B * d))
    for (size_t t = 0; t < T; t++) {
        const size_t p = pos0 + t;
        if (o->zero_pad && p == 0) continue; /* TF's zero_pad: row 0 of the table is zero */
        const double pos = (double)p;
        for (size_t i = 0; i < half; i++) {
            const double omega =
                o->t2t_freq ? exp(-(double)i * t2t_step) : exp(-(double)(2 * i) * log_base / (double)d);
            const float s = (float)(sin(pos * omega) * o->scale), co = (float)(cos(pos * omega) * o->scale);
            const size_t cs = i * step, cc = cs + cos_off;
            const int has_cos = 2 * i + 1 < d;
            for (size_t b = 0; b < B; b++) {
                float *row = x + (b * T + t) * d;
                row[cs] += s;
                if (has_cos) row[cc] += co;
            }
        }
    }
}

void pos_table_add(float *x, const float *table, size_t B, size_t T, size_t d, size_t pos0) {
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(d)) num_threads(ops_team(B * T * d))
    for (size_t n = 0; n < B * T; n++) {
        const float *w = table + (pos0 + n % T) * d;
        float *y = x + n * d;
        for (size_t c = 0; c < d; c++) y[c] += w[c];
    }
}

void pos_table_backward(float *dtable, const float *dx, size_t B, size_t T, size_t d, size_t pos0) {
    /* Position t owns table row pos0 + t: threads split the positions (no races) and each sums
     * the batch rows in order b = 0..B−1, so the result does not depend on the thread count. */
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(B * d)) num_threads(ops_team(B * T * d))
    for (size_t t = 0; t < T; t++) {
        float *g = dtable + (pos0 + t) * d;
        for (size_t b = 0; b < B; b++) {
            const float *dy = dx + (b * T + t) * d;
            for (size_t c = 0; c < d; c++) g[c] += dy[c];
        }
    }
}
