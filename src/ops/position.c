/* Kernels of the absolute position encodings added at the embeddings (docs/POSITION.md): the fixed
 * sinusoidal table (Vaswani et al. 2017, §3.5) in its column orders and options, and a learned
 * table (BERT, GPT-2) with its backward. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

#include <math.h>

/* A position-encoding pass, as its chunks see it (pool.h). */
typedef struct {
    float *x;            /* pe_sinusoidal_add, pos_table_add: the activations; backward: dtable */
    const float *table;  /* pos_table_add: the table; backward: dx */
    const pe_sinusoid_opts *o;
    size_t B, T, d, pos0, half, cos_off, step;
    double log_base, t2t_step;
} pe_job;

/* Positions t0 .. t1 − 1 of pe_sinusoidal_add, every batch row. */
static void sinusoid_positions(void *arg, size_t t0, size_t t1) {
    const pe_job *j = arg;
    const pe_sinusoid_opts *o = j->o;
    const size_t B = j->B, T = j->T, d = j->d, half = j->half, step = j->step, cos_off = j->cos_off;
    for (size_t t = t0; t < t1; t++) {
        const size_t p = j->pos0 + t;
        if (o->zero_pad && p == 0) continue; /* TF's zero_pad: row 0 of the table is zero */
        const double pos = (double)p;
        for (size_t i = 0; i < half; i++) {
            const double omega = o->t2t_freq ? exp(-(double)i * j->t2t_step)
                                             : exp(-(double)(2 * i) * j->log_base / (double)d);
            const float s = (float)(sin(pos * omega) * o->scale), co = (float)(cos(pos * omega) * o->scale);
            const size_t cs = i * step, cc = cs + cos_off;
            const int has_cos = 2 * i + 1 < d;
            for (size_t b = 0; b < B; b++) {
                float *row = j->x + (b * T + t) * d;
                row[cs] += s;
                if (has_cos) row[cc] += co;
            }
        }
    }
}

void pe_sinusoidal_add(float *x, size_t B, size_t T, size_t d, size_t pos0, const pe_sinusoid_opts *o) {
    /* ω_i = 10000^(−2i/d) = exp(−2i · ln(10000) / d), shared by pair i's sine and cosine, or with
     * t2t_freq ω_i = exp(−i · ln(10000) / max(d/2 − 1, 1)) (get_timing_signal_1d: num_timescales =
     * d/2, log_timescale_increment = ln(10000) / max(num_timescales − 1, 1)); angles in double so
     * large positions keep their precision. Interleaved: sine at column 2i, cosine
     * at 2i+1 (odd d: the last column is a sine). Concatenated (d even): sine at i, cosine at
     * d/2 + i. */
    const double log_base = log(10000.0);
    pe_job j = {.x = x, .o = o, .B = B, .T = T, .d = d, .pos0 = pos0,
                .half = (d + 1) / 2, /* pairs; the cosine of pair half−1 is absent when d is odd */
                .cos_off = o->concat ? d / 2 : 1, .step = o->concat ? 1 : 2, .log_base = log_base,
                .t2t_step = log_base / (double)(d / 2 >= 2 ? d / 2 - 1 : 1)};
    ops_pool_for(T, (size_t)ops_rows_per_chunk(B * d), ops_team(T * B * d), sinusoid_positions, &j);
}

/* Rows n0 .. n1 − 1 (of B·T) of pos_table_add. */
static void table_add_rows(void *arg, size_t n0, size_t n1) {
    const pe_job *j = arg;
    const size_t T = j->T, d = j->d;
    for (size_t n = n0; n < n1; n++) {
        const float *w = j->table + (j->pos0 + n % T) * d;
        float *y = j->x + n * d;
        for (size_t c = 0; c < d; c++) y[c] += w[c];
    }
}

void pos_table_add(float *x, const float *table, size_t B, size_t T, size_t d, size_t pos0) {
    pe_job j = {.x = x, .table = table, .B = B, .T = T, .d = d, .pos0 = pos0};
    ops_pool_for(B * T, (size_t)ops_rows_per_chunk(d), ops_team(B * T * d), table_add_rows, &j);
}

/* Positions t0 .. t1 − 1 of pos_table_backward, the batch rows in order. */
static void table_backward_positions(void *arg, size_t t0, size_t t1) {
    const pe_job *j = arg;
    const size_t B = j->B, T = j->T, d = j->d;
    for (size_t t = t0; t < t1; t++) {
        float *g = j->x + (j->pos0 + t) * d;
        for (size_t b = 0; b < B; b++) {
            const float *dy = j->table + (b * T + t) * d;
            for (size_t c = 0; c < d; c++) g[c] += dy[c];
        }
    }
}

void pos_table_backward(float *dtable, const float *dx, size_t B, size_t T, size_t d, size_t pos0) {
    /* Position t owns table row pos0 + t: threads split the positions (no races) and each sums
     * the batch rows in order b = 0..B−1, so the result does not depend on the thread count. */
    pe_job j = {.x = dtable, .table = dx, .B = B, .T = T, .d = d, .pos0 = pos0};
    ops_pool_for(T, (size_t)ops_rows_per_chunk(B * d), ops_team(B * T * d), table_backward_positions, &j);
}
