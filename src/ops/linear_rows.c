/* nn.Linear for the few rows of a decoding step, without BLIS: out (N, OC) = bias + inp (N, IC) ·
 * weight (OC, IC)ᵀ. BLIS packs the whole weight into panels at every call, whatever N: for the
 * decoder's step (N = the batch's rows, often 1–128) that copy costs as much as the product or more
 * (docs/KERNELS.md, "Decoding"). Two kernels, parallel over fixed chunks of output columns:
 *  - up to linear_rows_max() rows (8; 128 with AVX-512 when the small-product kernels are off):
 *    every output a dot product of two contiguous rows, the weight read in place —
 *    linear_rows_forward; each 64-column chunk to the 4 × 4 register-blocked kernel of
 *    linear_rows_avx512.c with AVX-512, else to the plain kernel below;
 *  - up to linear_panels_max() rows (128, wherever AVX2+FMA is): the outer-product kernel of
 *    gemm_small (12 × 32 register tiles with AVX-512, 6 × 16 with AVX2) on the transposed product
 *    outᵀ = weight · inpᵀ — the weight read in place as op(A), the few input rows copied transposed
 *    as op(B)'s panel — linear_panels_forward.
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
    size_t cols; /* output columns per chunk: LR_COLS, or panel_cols for RK_PANELS */
    enum { RK_PLAIN, RK_AVX512, RK_PANELS } kernel;
    gemm_small_isa isa; /* RK_PANELS: gemm_small's instruction set */
    ops_probe *probe;
} rows_job;

/* The panels' chunk of output columns j0..j1−1, computed transposed: outᵀ[j, n] = bias[j] + Σ_k
 * weight[j, k] · inp[n, k] by gemm_small's A·Bᵀ with the weight's rows as op(A) (read in place,
 * broadcast) and the input rows as op(B) (gemm_small copies each 32-row panel of them transposed
 * onto its stack, once per chunk of IC), into a stack block of at most LR_PANEL_FLOATS, then
 * transposed into out. gemm_small sums every output as one FMA chain over k in order per chunk of
 * GEMM_SMALL_KC whatever its place in a tile (fma(a, b, c) = fma(b, a, c)), and beta = 1 on a block
 * filled with the bias rounds as gemm_small_bias: the bits of the tiled product's
 * out = bias + inp · weightᵀ (test_linear_rows). */
#define LR_PANEL_FLOATS 8192 /* outᵀ of a chunk and block of rows: 32 KiB of stack */
#define LR_PANEL_ROWS 128    /* input rows per block */
/* Above this many rows the chunk runs the product the other way round, out = inp · weight[j0..j1)ᵀ
 * with the weight's 32-column panels copied transposed (once per chunk of IC), the input rows read
 * in place: the same sums, so the same bits. Copying the input rows instead costs N / cols copies
 * per weight element (cols = LR_PANEL_FLOATS / N: 2 at 128 rows, 18 % of a beam-4 batch-32
 * profile), the weight's panels one (docs/KERNELS.md, "Batched steps without weight copies"). */
#define LR_PANEL_T_ROWS 64
/* At this many rows or fewer too: a vector of the transposed product then holds N of its 16
 * lanes, where the weight's copied panels keep every lane busy (256 × 8,000 at 4 rows, 2 threads:
 * 26 against 33 GFLOP/s; 9 rows and up the transposed product is ahead, 74 against 64 at 12). */
#define LR_PANEL_T_MIN_ROWS 8

/* 1 if a panels product of N rows runs transposed (panels_cols). */
static int panel_transposed(size_t N) { return N > LR_PANEL_T_MIN_ROWS && N <= LR_PANEL_T_ROWS; }

static void panels_cols(const rows_job *r, size_t j0, size_t j1) {
    _Alignas(64) float ct[LR_PANEL_FLOATS];
    const size_t nj = j1 - j0, IC = r->IC, OC = r->OC;
    if (!panel_transposed(r->N)) { /* out[:, j0..j1) = bias + inp · weight[j0..j1)ᵀ: the weight's panels copied */
        if (r->bias)
            gemm_small_bias(r->isa, 0, 1, r->N, nj, IC, 1.0f, r->inp, IC, r->weight + j0 * IC, IC, r->bias + j0, r->out + j0,
                            OC);
        else
            gemm_small(r->isa, 0, 1, r->N, nj, IC, 1.0f, r->inp, IC, r->weight + j0 * IC, IC, 0.0f, r->out + j0, OC);
        return;
    }
    for (size_t n0 = 0; n0 < r->N; n0 += LR_PANEL_ROWS) {
        const size_t nb = r->N - n0 < LR_PANEL_ROWS ? r->N - n0 : LR_PANEL_ROWS;
        if (r->bias)
            for (size_t j = 0; j < nj; j++)
                for (size_t n = 0; n < nb; n++) ct[j * nb + n] = r->bias[j0 + j];
        gemm_small(r->isa, 0, 1, nj, nb, IC, 1.0f, r->weight + j0 * IC, IC, r->inp + n0 * IC, IC, r->bias ? 1.0f : 0.0f,
                   ct, nb);
        gemm_small_pack_bt_avx2(r->out + n0 * OC + j0, OC, ct, nb, nj, nb); /* out[n, j0 + j] = ct[j, n] */
    }
}

/* Output columns per chunk of the panels for N rows and OC columns: as many as a block of outᵀ
 * holds (each chunk copies its input panels once per chunk of IC: wider chunks copy less), at most
 * 512, fewer while that leaves under 4 chunks for the team (halved down to 64). Any split gives the
 * same bits. */
static size_t panel_cols(size_t N, size_t OC) {
    if (!panel_transposed(N)) return LR_COLS;
    const size_t nb = N < LR_PANEL_ROWS ? (N > 0 ? N : 1) : LR_PANEL_ROWS;
    size_t cols = LR_PANEL_FLOATS / nb / 16 * 16;
    if (cols > 512) cols = 512;
    while (cols > 64 && (OC + cols - 1) / cols < 4) cols /= 2;
    return cols;
}

/* Chunk c of a rows_job: output columns cols·c .. cols·c + cols − 1 for every row. */
static void rows_chunk(void *arg, size_t c) {
    const rows_job *r = arg;
    const size_t j0 = c * r->cols, j1 = j0 + r->cols < r->OC ? j0 + r->cols : r->OC;
    switch (r->kernel) {
    case RK_AVX512: linear_rows_cols_avx512(r->out, r->inp, r->weight, r->bias, r->N, r->IC, r->OC, j0, j1); break;
    case RK_PLAIN: cols_plain(r->out, r->inp, r->weight, r->bias, r->N, r->IC, r->OC, j0, j1); break;
    case RK_PANELS: panels_cols(r, j0, j1); break;
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
static void run_chunks(float *out, const float *inp, const float *weight, const float *bias, size_t N, size_t IC,
                       size_t OC, int kernel, gemm_small_isa isa) {
    const size_t cols = kernel == RK_PANELS ? panel_cols(N, OC) : LR_COLS;
    const size_t chunks = (OC + cols - 1) / cols, macs = N * IC * OC;
    const int team = macs < LR_PAR_MIN_MACS ? 1 : ops_team_long(macs);
    ops_probe probe;
    ops_probe_begin(&probe, team);
    rows_job r = {out, inp, weight, bias, N, IC, OC, cols, kernel, isa, &probe};
    probe.got = ops_pool_run(chunks, team, rows_chunk, &r);
    ops_probe_end(&probe, chunks, macs);
}

void linear_rows_forward(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *bias, size_t N, size_t IC,
                         size_t OC) {
    run_chunks(out, inp, weight, bias, N, IC, OC, kern->isa == OPS_ISA_AVX512 ? RK_AVX512 : RK_PLAIN, GEMM_SMALL_NONE);
}

void linear_panels_forward(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *bias, size_t N,
                           size_t IC, size_t OC) {
    const gemm_small_isa isa = gemm_small_active(kern);
    if (isa == GEMM_SMALL_NONE) { /* no AVX2+FMA, or the small kernels are off: the dot-product kernels */
        linear_rows_forward(kern, out, inp, weight, bias, N, IC, OC);
        return;
    }
    run_chunks(out, inp, weight, bias, N, IC, OC, RK_PANELS, isa);
}
