/* nn.Linear for a few rows without packing: out (N, OC) = bias + inp (N, IC) · weight (OC, IC)ᵀ
 * read straight from the row-major weight, each output a dot product of two contiguous rows.
 * BLIS packs the whole weight into panels at every call, whatever N: for the decoder's step (N =
 * the batch's rows, often 1–32) that copy costs as much as the product or more (docs/KERNELS.md,
 * "Decoding"). Here the weight is read once per call; BLIS (linear_forward) stays the path for
 * large N and the reference this kernel is tested against (test_linear_rows). With AVX-512 each
 * 64-column chunk goes to the 4 × 4 register-blocked kernel of linear_rows_avx512.c (up to
 * OPS_LINEAR_ROWS_MAX_AVX512 rows: batch-32 greedy and beam-4 × batch-32 steps); without, to the
 * plain kernel below (up to OPS_LINEAR_ROWS_MAX rows). */
#include "cpu.h"
#include "linear_rows_internal.h"
#include "ops.h"
#include "parallel.h"
#include "pool.h"


/* Output columns per chunk: 64 rows of the weight (64 KiB at IC = 256), a fixed split from the
 * sizes alone, so each output is computed by one thread in one order whatever the team. */
#define LR_COLS 64

/* Products of fewer multiply-adds run on the calling thread (linear_rows_forward). */
#define LR_PAR_MIN_MACS (4 * OPS_PAR_MIN_WORK)

/* out[n, j0..j0+4) for one input row x: four weight rows w0..w3 share each load of x */
static void dot4(float *o, const float *x, const float *w0, size_t IC, const float *bias, size_t j) {
    const float *w1 = w0 + IC, *w2 = w1 + IC, *w3 = w2 + IC;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (size_t k = 0; k < IC; k++) {
        s0 += x[k] * w0[k];
        s1 += x[k] * w1[k];
        s2 += x[k] * w2[k];
        s3 += x[k] * w3[k];
    }
    o[0] = (bias ? bias[j] : 0.0f) + s0;
    o[1] = (bias ? bias[j + 1] : 0.0f) + s1;
    o[2] = (bias ? bias[j + 2] : 0.0f) + s2;
    o[3] = (bias ? bias[j + 3] : 0.0f) + s3;
}

static float dot1(const float *x, const float *w, size_t IC) {
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (size_t k = 0; k < IC; k++) s += x[k] * w[k];
    return s;
}

/* Columns j0..j1−1 by the plain kernel: one input row at a time, four weight rows per load of it */
static void cols_plain(float *out, const float *inp, const float *weight, const float *bias, size_t N, size_t IC,
                       size_t OC, size_t j0, size_t j1) {
    size_t j = j0;
    for (; j + 4 <= j1; j += 4)
        for (size_t n = 0; n < N; n++) dot4(out + n * OC + j, inp + n * IC, weight + j * IC, IC, bias, j);
    for (; j < j1; j++)
        for (size_t n = 0; n < N; n++) out[n * OC + j] = (bias ? bias[j] : 0.0f) + dot1(inp + n * IC, weight + j * IC, IC);
}

size_t linear_rows_max(void) { return ops_cpu_avx512() ? OPS_LINEAR_ROWS_MAX_AVX512 : OPS_LINEAR_ROWS_MAX; }

/* One product of linear_rows_forward, as its chunks see it. */
typedef struct {
    float *out;
    const float *inp, *weight, *bias;
    size_t N, IC, OC;
    int wide; /* the AVX-512 kernel */
    ops_probe *probe;
} rows_job;

/* Chunk c of a rows_job: output columns LR_COLS·c .. LR_COLS·c + LR_COLS − 1 for every row. */
static void rows_chunk(void *arg, size_t c) {
    const rows_job *r = arg;
    const size_t j0 = c * LR_COLS, j1 = j0 + LR_COLS < r->OC ? j0 + LR_COLS : r->OC;
    if (r->wide)
        linear_rows_cols_avx512(r->out, r->inp, r->weight, r->bias, r->N, r->IC, r->OC, j0, j1);
    else
        cols_plain(r->out, r->inp, r->weight, r->bias, r->N, r->IC, r->OC, j0, j1);
    ops_probe_chunk(r->probe);
}

void linear_rows_forward(float *out, const float *inp, const float *weight, const float *bias, size_t N, size_t IC,
                         size_t OC) {
    const size_t chunks = (OC + LR_COLS - 1) / LR_COLS, macs = N * IC * OC;
    /* A product under LR_PAR_MIN_MACS multiply-adds runs on the caller; the others report what
     * they saw to the busy-machine backoff (parallel.h). Lower than gemm_tiled's 32 ·
     * OPS_PAR_MIN_WORK: a decoding step is a chain of such products (beam 4 at batch 1: 4 × 256 ×
     * 768 for Q|K|V), the pool's worker spins between back-to-back jobs, and its join never waits
     * for a worker that has no core. Measured at 4 · OPS_PAR_MIN_WORK against 32 · (2026-12-01,
     * AMD EPYC Zen 4, 2 threads, medians of 5 alternated runs): greedy at batch 1 1.39× and beam 4
     * at batch 1 1.15× faster; the training step does not use this kernel. */
    const int team = macs < LR_PAR_MIN_MACS ? 1 : ops_team_long(macs);
    ops_probe probe;
    ops_probe_begin(&probe, team);
    rows_job r = {out, inp, weight, bias, N, IC, OC, ops_cpu_avx512(), &probe};
    probe.got = ops_pool_run(chunks, team, rows_chunk, &r);
    ops_probe_end(&probe, chunks, macs);
}
