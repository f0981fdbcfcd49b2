/* Fused multi-head attention for training (Dao et al. 2022, "FlashAttention": Alg. 1, and Alg. 2 of
 * Appendix B with masking and dropout, forward; Alg. 4 backward; Milakov & Gimelshein 2018 for the
 * online softmax): per (batch row, head) and per
 * tile of ATTN_FUSED_BQ queries, the scores of one tile of ATTN_FUSED_BK keys at a time, masked,
 * folded into a running max and sum, and the output accumulated with rescaling; only each query
 * row's log-sum-exp is kept. The backward recomputes the probabilities tile by tile from it and the
 * dropout mask from its counter (dropout_keep), so no [B, H, T, S] tensor exists in either pass.
 * Same attn_args, masks, bias and dropout numbering as attention.c (the reference path, which
 * tests/unit/ops/test_attn_fused.c compares against); relative key/value tables are not served here. */
#include "core_internal.h"
#include "ops.h"
#include "parallel.h"
#include "pool.h"
#include "vmath.h"

#include <math.h>

/* The tiles of an attention of T queries over S keys: bq = min(T, BQ) rows of bk = min(S, BK)
 * columns, bk also their row stride, so short sequences take small tiles (at least 1 × 1). */
static size_t tile_rows(size_t T) { return T == 0 ? 1 : T < ATTN_FUSED_BQ ? T : ATTN_FUSED_BQ; }
static size_t tile_cols(size_t S) { return S == 0 ? 1 : S < ATTN_FUSED_BK ? S : ATTN_FUSED_BK; }

/* One thread's scratch: three (bq, bk) tiles (scores/P, P' and dP'/dS), then bq floats each for the
 * running max, the running sum (forward) or D = rowsum(dO ⊙ O) (backward). */
static size_t slot_floats(size_t T, size_t S) { return 3 * tile_rows(T) * tile_cols(S) + 2 * tile_rows(T); }

size_t attn_fused_workspace_floats(size_t T, size_t S, int slots) {
    return (slots > 0 ? (size_t)slots : 1) * slot_floats(T, S);
}

/* The keys query t may see (attention.c's key_limit): s <= q_pos0 + t when causal, else all S. */
static size_t key_limit(const attn_args *a, size_t t) {
    if (!a->causal) return a->S;
    const size_t lim = a->q_pos0 + t + 1;
    return lim < a->S ? lim : a->S;
}

/* The team of a loop over the B·H pairs: ops_team's size, at most the workspace's slots. */
static int team_of(const attn_args *a, int slots) {
    const int t = ops_team(a->B * a->H * a->T * a->S * a->d_k);
    return t < slots ? t : (slots > 0 ? slots : 1);
}

/* Scores of queries [t0, t0 + nq) against keys [s0, s0 + ns) of one (b, h), in X (nq, bk):
 * Q Kᵀ/√d_k + bias, −∞ where masked (key padding, causal limit). */
static void tile_scores(float *X, const float *Q, const float *K, const attn_args *a, size_t b, size_t h,
                        size_t t0, size_t nq, size_t s0, size_t ns, float scale) {
    const ops_kernels *kern = a->kernels;
    const size_t BK = tile_cols(a->S);
    ops_gemm_serial(kern, 0, 1, nq, ns, a->d_k, scale, Q + t0 * a->q_stride, a->q_stride, K + s0 * a->kv_stride,
                    a->kv_stride, 0.0f, X, BK);
    const uint8_t *pad = a->key_pad ? a->key_pad + b * a->key_pad_bstride + s0 : NULL;
    for (size_t r = 0; r < nq; r++) {
        float *row = X + r * BK;
        if (a->bias) {
            const float *br = a->bias + b * a->bias_bstride + h * a->bias_hstride + (t0 + r) * a->bias_tstride + s0;
#pragma omp simd
            for (size_t j = 0; j < ns; j++) row[j] += br[j];
        }
        const size_t lim = key_limit(a, t0 + r);
        const size_t vis = lim > s0 ? (lim - s0 < ns ? lim - s0 : ns) : 0; /* keys below the limit */
        for (size_t j = vis; j < ns; j++) row[j] = -INFINITY;
        if (pad)
            for (size_t j = 0; j < vis; j++)
                if (pad[j]) row[j] = -INFINITY;
    }
}

/* In place over a tile of weights W (nq, bk) of queries t0.. and keys s0..: W ← W·keep/(1 − p) with
 * keep = dropout_keep(seed, element index in [B, H, T, S]), the reference's numbering. */
static void tile_dropout(float *W, const attn_args *a, size_t off, size_t t0, size_t nq, size_t s0, size_t ns) {
    const float p = a->dropout_p, ks = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    for (size_t r = 0; r < nq; r++) {
        float *row = W + r * tile_cols(a->S);
        const size_t base = off + (t0 + r) * a->S + s0;
        for (size_t j = 0; j < ns; j++) row[j] = dropout_keep(a->dropout_seed, base + j, p) ? row[j] * ks : 0.0f;
    }
}

/* Forward of one (b, h), queries [t0, t0 + nq): Alg. 2's inner loop over key tiles. */
static void fwd_tile(float *O, float *lse, const float *Q, const float *K, const float *Vh, const attn_args *a,
                     size_t b, size_t h, size_t t0, size_t nq, float *ws, float scale) {
    const ops_kernels *kern = a->kernels;
    const size_t BK = tile_cols(a->S), d = a->H * a->d_k, d_k = a->d_k;
    const size_t off = ((b * a->H + h) * a->T) * a->S; /* (b, h)'s first element in [B, H, T, S] */
    const size_t tile = tile_rows(a->T) * BK;
    float *X = ws, *m = ws + 3 * tile, *l = m + tile_rows(a->T);
    const int drop = a->dropout_p > 0.0f;
    for (size_t r = 0; r < nq; r++) {
        m[r] = -INFINITY, l[r] = 0.0f;
        for (size_t c = 0; c < d_k; c++) O[(t0 + r) * d + c] = 0.0f;
    }
    const size_t kend = key_limit(a, t0 + nq - 1); /* the last query of the tile sees the most keys */
    for (size_t s0 = 0; s0 < kend; s0 += BK) {
        const size_t ns = kend - s0 < BK ? kend - s0 : BK;
        tile_scores(X, Q, K, a, b, h, t0, nq, s0, ns, scale);
        for (size_t r = 0; r < nq; r++) {
            float *row = X + r * BK;
            float mx = -INFINITY;
            for (size_t j = 0; j < ns; j++) mx = row[j] > mx ? row[j] : mx;
            const float mnew = mx > m[r] ? mx : m[r];
            if (mnew == -INFINITY) { /* no key seen yet: weights 0, nothing to rescale */
                for (size_t j = 0; j < ns; j++) row[j] = 0.0f;
                continue;
            }
            /* m_new = max(m, rowmax(S)); P = exp(S − m_new); l ← e^(m − m_new)·l + rowsum(P);
             * O ← e^(m − m_new)·O (Alg. 1's update; e^(−∞) = 0 for the first tile) */
            float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
            for (size_t j = 0; j < ns; j++) {
                const float e = ops_expf(row[j] - mnew); /* −∞ (masked) gives 0 */
                row[j] = e;
                sum += e;
            }
            const float alpha = ops_expf(m[r] - mnew);
            l[r] = l[r] * alpha + sum;
            m[r] = mnew;
            if (alpha != 1.0f)
                for (size_t c = 0; c < d_k; c++) O[(t0 + r) * d + c] *= alpha;
        }
        if (drop) tile_dropout(X, a, off, t0, nq, s0, ns); /* l keeps the undropped sum: P' = P·M/(1−p) */
        ops_gemm_serial(kern, 0, 0, nq, d_k, ns, 1.0f, X, BK, Vh + s0 * a->kv_stride, a->kv_stride, 1.0f, O + t0 * d, d);
    }
    for (size_t r = 0; r < nq; r++) {
        float *o = O + (t0 + r) * d;
        if (l[r] > 0.0f) {
            const float inv = 1.0f / l[r];
            for (size_t c = 0; c < d_k; c++) o[c] *= inv;
            lse[t0 + r] = m[r] + logf(l[r]);
        } else { /* every key masked: a zero row; lse = +∞ makes the backward's P = e^(S − lse) zero */
            for (size_t c = 0; c < d_k; c++) o[c] = 0.0f;
            lse[t0 + r] = INFINITY;
        }
    }
}

/* One fused attention pass (forward or backward), as its chunks see it: chunk p is the pair
 * (b, h) = (p / H, p % H), run with the scratch slot of the thread running it (ops_pool_slot). */
typedef struct {
    const attn_args *a;
    float *ws;
    float scale;
    float *out, *lse;                /* forward: written */
    float *dq, *dk, *dv;             /* backward: accumulated */
    const float *dout, *out_c, *lse_c; /* backward: read */
    const float *q, *k, *v;
} fused_job;

static void fwd_pair(void *arg, size_t p) {
    const fused_job *j = arg;
    const attn_args *a = j->a;
    const size_t T = a->T, S = a->S, H = a->H, d_k = a->d_k, d = H * d_k, b = p / H, h = p % H;
    float *w = j->ws + (size_t)ops_pool_slot() * slot_floats(T, S);
    float *O = j->out + b * T * d + h * d_k;
    float *L = j->lse + (b * H + h) * T;
    if (T == 0) return;
    if (S == 0 || d_k == 0) { /* no keys: a zero output */
        for (size_t t = 0; t < T; t++) {
            for (size_t c = 0; c < d_k; c++) O[t * d + c] = 0.0f;
            L[t] = INFINITY;
        }
        return;
    }
    const float *Q = j->q + b * a->q_bstride + h * d_k;
    const float *K = j->k + b * a->kv_bstride + h * d_k;
    const float *Vh = j->v + b * a->kv_bstride + h * d_k;
    for (size_t t0 = 0; t0 < T; t0 += ATTN_FUSED_BQ) {
        const size_t nq = T - t0 < ATTN_FUSED_BQ ? T - t0 : ATTN_FUSED_BQ;
        fwd_tile(O, L, Q, K, Vh, a, b, h, t0, nq, w, j->scale);
    }
}

void attn_fused_forward(float *out, float *lse, const float *q, const float *k, const float *v, const attn_args *a,
                        float *ws, int slots) {
    TFM_ASSERT(!a->rel_k && !a->rel_v && !a->kv_row && (a->kv_heads == 0 || a->kv_heads == a->H)); /* not served here: the reference path */
    fused_job j = {.a = a, .ws = ws, .scale = 1.0f / sqrtf((float)a->d_k), .out = out, .lse = lse, .q = q,
                   .k = k, .v = v};
    ops_pool_run(a->B * a->H, team_of(a, slots), fwd_pair, &j);
}

/* Backward of one (b, h), queries [t0, t0 + nq): Alg. 4's body for every key tile the queries see.
 * Writes nothing but dQ, dK, dV (accumulated). */
static void bwd_tile(float *dQ, float *dK, float *dV, const float *dO, const float *O, const float *lse,
                     const float *Q, const float *K, const float *Vh, const attn_args *a, size_t b, size_t h,
                     size_t t0, size_t nq, float *ws, float scale) {
    const ops_kernels *kern = a->kernels;
    const size_t BK = tile_cols(a->S), d = a->H * a->d_k, d_k = a->d_k, qs = a->q_stride, kvs = a->kv_stride;
    const size_t off = ((b * a->H + h) * a->T) * a->S;
    const size_t tile = tile_rows(a->T) * BK;
    float *P = ws, *Pd = ws + tile, *dS = ws + 2 * tile, *D = ws + 3 * tile;
    const int drop = a->dropout_p > 0.0f;
    /* D_t = rowsum(dO ⊙ O) = Σ_s P'·dP' (O = P'·V), once per row (Dao et al. 2022, App. B.2) */
    for (size_t r = 0; r < nq; r++) {
        const float *o = O + (t0 + r) * d, *g = dO + (t0 + r) * d;
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (size_t c = 0; c < d_k; c++) s += o[c] * g[c];
        D[r] = s;
    }
    const size_t kend = key_limit(a, t0 + nq - 1);
    for (size_t s0 = 0; s0 < kend; s0 += BK) {
        const size_t ns = kend - s0 < BK ? kend - s0 : BK;
        /* P = exp(S − lse): the forward's softmax, recomputed (masked: e^(−∞) = 0) */
        tile_scores(P, Q, K, a, b, h, t0, nq, s0, ns, scale);
        for (size_t r = 0; r < nq; r++) {
            float *row = P + r * BK;
            const float L = lse[t0 + r];
#pragma omp simd
            for (size_t j = 0; j < ns; j++) row[j] = ops_expf(row[j] - L);
        }
        const float *Pv = P; /* what multiplied V */
        if (drop) {
            for (size_t r = 0; r < nq; r++)
                for (size_t j = 0; j < ns; j++) Pd[r * BK + j] = P[r * BK + j];
            tile_dropout(Pd, a, off, t0, nq, s0, ns);
            Pv = Pd;
        }
        /* out = P'·V:  dV_j += P'ᵀ·dO_i,  dP' = dO_i·V_jᵀ */
        ops_gemm_serial(kern, 1, 0, ns, d_k, nq, 1.0f, Pv, BK, dO + t0 * d, d, 1.0f, dV + s0 * kvs, kvs);
        ops_gemm_serial(kern, 0, 1, nq, ns, d_k, 1.0f, dO + t0 * d, d, Vh + s0 * kvs, kvs, 0.0f, dS, BK);
        /* dS = P' ⊙ dP' − P·D = P ⊙ (dP'·M/(1−p) − D): the reference's softmax backward through the
         * dropout; masked keys have P = 0 and get nothing */
        for (size_t r = 0; r < nq; r++) {
            float *ds = dS + r * BK;
            const float *pr = P + r * BK, *pd = Pv + r * BK, Dr = D[r];
#pragma omp simd
            for (size_t j = 0; j < ns; j++) ds[j] = pd[j] * ds[j] - pr[j] * Dr;
        }
        /* scores = Q·Kᵀ/√d_k:  dQ_i += dS·K_j/√d_k,  dK_j += dSᵀ·Q_i/√d_k */
        ops_gemm_serial(kern, 0, 0, nq, d_k, ns, scale, dS, BK, K + s0 * kvs, kvs, 1.0f, dQ + t0 * qs, qs);
        ops_gemm_serial(kern, 1, 0, ns, d_k, nq, scale, dS, BK, Q + t0 * qs, qs, 1.0f, dK + s0 * kvs, kvs);
    }
}

static void bwd_pair(void *arg, size_t p) {
    const fused_job *j = arg;
    const attn_args *a = j->a;
    const size_t T = a->T, S = a->S, H = a->H, d_k = a->d_k, d = H * d_k, b = p / H, h = p % H;
    float *w = j->ws + (size_t)ops_pool_slot() * slot_floats(T, S);
    const float *Q = j->q + b * a->q_bstride + h * d_k;
    const float *K = j->k + b * a->kv_bstride + h * d_k;
    const float *Vh = j->v + b * a->kv_bstride + h * d_k;
    const float *dO = j->dout + b * T * d + h * d_k, *O = j->out_c + b * T * d + h * d_k;
    const float *L = j->lse_c + (b * H + h) * T;
    float *dQ = j->dq + b * a->q_bstride + h * d_k;
    float *dK = j->dk + b * a->kv_bstride + h * d_k;
    float *dV = j->dv + b * a->kv_bstride + h * d_k;
    for (size_t t0 = 0; t0 < T; t0 += ATTN_FUSED_BQ) {
        const size_t nq = T - t0 < ATTN_FUSED_BQ ? T - t0 : ATTN_FUSED_BQ;
        bwd_tile(dQ, dK, dV, dO, O, L, Q, K, Vh, a, b, h, t0, nq, w, j->scale);
    }
}

void attn_fused_backward(float *dq, float *dk, float *dv, const float *dout, const float *out, const float *lse,
                         const float *q, const float *k, const float *v, const attn_args *a, float *ws, int slots) {
    TFM_ASSERT(!a->rel_k && !a->rel_v && !a->kv_row && (a->kv_heads == 0 || a->kv_heads == a->H)); /* not served here: the reference path */
    if (a->T == 0 || a->S == 0 || a->d_k == 0) return; /* no keys: the output was a constant zero */
    fused_job j = {.a = a, .ws = ws, .scale = 1.0f / sqrtf((float)a->d_k), .dq = dq, .dk = dk, .dv = dv,
                   .dout = dout, .out_c = out, .lse_c = lse, .q = q, .k = k, .v = v};
    ops_pool_run(a->B * a->H, team_of(a, slots), bwd_pair, &j);
}
