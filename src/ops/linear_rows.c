/* nn.Linear for the few rows of a decoding step, without BLIS: out (N, OC) = bias + inp (N, IC) ·
 * weight (OC, IC)ᵀ. BLIS packs the whole weight into panels at every call, whatever N: for the
 * decoder's step (N = the batch's rows, often 1–128) that copy costs as much as the product or more
 * (docs/KERNELS.md, "Decoding"). Two kernels, parallel over fixed chunks of 64 output columns:
 *  - up to linear_rows_max() rows (8; 128 with AVX-512 when the small-product kernels are off):
 *    every output a dot product of two contiguous rows, the weight read in place —
 *    linear_rows_forward; each 64-column chunk to the 4 × 4 register-blocked kernel of
 *    linear_rows_avx512.c with AVX-512, else to the plain kernel below;
 *  - up to linear_panels_max() rows (128, wherever AVX2+FMA is): the outer-product kernel of
 *    gemm_small (12 × 32 register tiles with AVX-512, 6 × 16 with AVX2, each panel of the weight
 *    copied transposed onto the stack once per call) — linear_panels_forward; or, for a decoding
 *    call that transposed its weights once, linear_panels_forward_t, reading them in place.
 * BLIS (linear_forward's tiled product) stays the path for more rows and the reference both are
 * tested against (test_linear_rows). */
#include "cpu.h"
#include "gemm_small.h"
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

size_t linear_rows_max(const ops_kernels *kern) {
    if (gemm_small_active(kern) != GEMM_SMALL_NONE) return OPS_LINEAR_ROWS_MAX; /* then linear_panels_forward */
    return kern->isa == OPS_ISA_AVX512 ? OPS_LINEAR_ROWS_MAX_AVX512 : OPS_LINEAR_ROWS_MAX;
}

size_t linear_panels_max(const ops_kernels *kern) { return gemm_small_active(kern) != GEMM_SMALL_NONE ? OPS_LINEAR_PANELS_MAX : 0; }

/* One product of linear_rows_forward, as its chunks see it. */
typedef struct {
    float *out;
    const float *inp, *weight, *bias;
    size_t N, IC, OC;
    const float *weight_t; /* RK_PANELS: the weight transposed (IC, OC), or NULL */
    enum { RK_PLAIN, RK_AVX512, RK_PANELS } kernel;
    gemm_small_isa isa; /* RK_PANELS: gemm_small's instruction set */
    ops_probe *probe;
} rows_job;

/* Chunk c of a rows_job: output columns LR_COLS·c .. LR_COLS·c + LR_COLS − 1 for every row. */
static void rows_chunk(void *arg, size_t c) {
    const rows_job *r = arg;
    const size_t j0 = c * LR_COLS, j1 = j0 + LR_COLS < r->OC ? j0 + LR_COLS : r->OC;
    switch (r->kernel) {
    case RK_AVX512: linear_rows_cols_avx512(r->out, r->inp, r->weight, r->bias, r->N, r->IC, r->OC, j0, j1); break;
    case RK_PLAIN: cols_plain(r->out, r->inp, r->weight, r->bias, r->N, r->IC, r->OC, j0, j1); break;
    case RK_PANELS: { /* out[:, j0..j1) = bias + inp · weight[j0..j1)ᵀ, each output fl(sum + bias) */
        const int tb = r->weight_t == NULL; /* weight_t read in place: the same sums as the panel copied transposed */
        const float *w = tb ? r->weight + j0 * r->IC : r->weight_t + j0;
        const size_t ldw = tb ? r->IC : r->OC;
        if (r->bias)
            gemm_small_bias(r->isa, 0, tb, r->N, j1 - j0, r->IC, 1.0f, r->inp, r->IC, w, ldw, r->bias + j0, r->out + j0,
                            r->OC);
        else
            gemm_small(r->isa, 0, tb, r->N, j1 - j0, r->IC, 1.0f, r->inp, r->IC, w, ldw, 0.0f, r->out + j0, r->OC);
        break;
    }
    }
    ops_probe_chunk(r->probe);
}

/* Runs a rows_job of `kernel` over its 64-column chunks. A product under LR_PAR_MIN_MACS
 * multiply-adds runs on the caller; the others report what they saw to the busy-machine backoff
 * (parallel.h). Lower than gemm_tiled's 32 · OPS_PAR_MIN_WORK: a decoding step is a chain of such
 * products (beam 4 at batch 1: 4 × 256 × 768 for Q|K|V), the pool's worker spins between
 * back-to-back jobs, and its join never waits for a worker that has no core (docs/KERNELS.md, "The
 * decode step in the four benchmark cases", has the measurement). The training step does not use
 * these kernels. */
static void run_chunks(float *out, const float *inp, const float *weight, const float *weight_t, const float *bias,
                       size_t N, size_t IC, size_t OC, int kernel, gemm_small_isa isa) {
    const size_t chunks = (OC + LR_COLS - 1) / LR_COLS, macs = N * IC * OC;
    const int team = macs < LR_PAR_MIN_MACS ? 1 : ops_team_long(macs);
    ops_probe probe;
    ops_probe_begin(&probe, team);
    rows_job r = {out, inp, weight, bias, N, IC, OC, weight_t, kernel, isa, &probe};
    probe.got = ops_pool_run(chunks, team, rows_chunk, &r);
    ops_probe_end(&probe, chunks, macs);
}

void linear_rows_forward(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *bias, size_t N, size_t IC,
                         size_t OC) {
    run_chunks(out, inp, weight, NULL, bias, N, IC, OC, kern->isa == OPS_ISA_AVX512 ? RK_AVX512 : RK_PLAIN, GEMM_SMALL_NONE);
}

void linear_panels_forward(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *bias, size_t N, size_t IC,
                           size_t OC) {
    const gemm_small_isa isa = gemm_small_active(kern);
    if (isa == GEMM_SMALL_NONE) { /* no AVX2+FMA, or the small kernels are off: the dot-product kernels */
        linear_rows_forward(kern, out, inp, weight, bias, N, IC, OC);
        return;
    }
    run_chunks(out, inp, weight, NULL, bias, N, IC, OC, RK_PANELS, isa);
}

void linear_panels_forward_t(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *weight_t,
                             const float *bias, size_t N, size_t IC, size_t OC) {
    const gemm_small_isa isa = gemm_small_active(kern);
    if (isa == GEMM_SMALL_NONE) { /* no AVX2+FMA in the table, or the small kernels off */
        linear_rows_forward(kern, out, inp, weight, bias, N, IC, OC);
        return;
    }
    run_chunks(out, inp, NULL, weight_t, bias, N, IC, OC, RK_PANELS, isa);
}

/* Rows 32·c .. 32·c + 31 of the weight, transposed: chunk c of linear_weight_transpose's job. */
typedef struct {
    float *weight_t;
    const float *weight;
    size_t OC, IC;
    int avx2; /* gemm_small's 8 × 8 AVX2 transposes (the panels' own packing), else plain loops */
} transpose_job;

static void transpose_chunk(void *arg, size_t c) {
    const transpose_job *t = arg;
    const size_t j0 = c * 32, nj = t->OC - j0 < 32 ? t->OC - j0 : 32;
    if (t->avx2) {
        gemm_small_pack_bt_avx2(t->weight_t + j0, t->OC, t->weight + j0 * t->IC, t->IC, nj, t->IC);
        return;
    }
    for (size_t k = 0; k < t->IC; k++)
        for (size_t j = j0; j < j0 + nj; j++) t->weight_t[k * t->OC + j] = t->weight[j * t->IC + k];
}

void linear_weight_transpose(const ops_kernels *kern, float *weight_t, const float *weight, size_t OC, size_t IC) {
    transpose_job t = {weight_t, weight, OC, IC, kern->isa >= OPS_ISA_AVX2};
    ops_pool_run((OC + 31) / 32, ops_team(OC * IC), transpose_chunk, &t);
}

int linear_panels_t_use(const ops_kernels *kern, size_t kernel_rows) {
    return kernel_rows > linear_rows_max(kern) && kernel_rows <= linear_panels_max(kern);
}
