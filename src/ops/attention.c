/* Multi-head scaled dot-product attention (Vaswani et al. 2017, §3.2.1–3.2.2) with an optional
 * additive per-head bias, a query position offset (blocks of new positions against a KV cache)
 * and dropout on the weights: one (batch, head) pair per OpenMP iteration, each with two BLAS
 * products on strided views of the packed projections (no copies); and its backward, four BLAS
 * products per pair. Optional relative key/value embeddings (Shaw et al. 2018) add
 * O(T·(S + min(S, 2k + 1)·d_k)) per pair, whatever the clip distance k; absent, they cost one
 * pointer test. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

#include <math.h>

attn_args attn_args_make(const ops_kernels *kern, size_t B, size_t T, size_t S, size_t H, size_t d_k, size_t q_stride,
                         size_t kv_stride) {
    attn_args a = {0};
    a.kernels = kern;
    a.B = B, a.T = T, a.S = S, a.H = H, a.d_k = d_k;
    a.q_stride = q_stride, a.q_bstride = T * q_stride;
    a.kv_stride = kv_stride, a.kv_bstride = S * kv_stride;
    a.key_pad_bstride = S;
    return a;
}

/* The keys query t may see: those at positions s <= q_pos0 + t (causal), else all S. */
static size_t key_limit(const attn_args *a, size_t t) {
    if (!a->causal) return a->S;
    const size_t lim = a->q_pos0 + t + 1;
    return lim < a->S ? lim : a->S;
}

/* Relative position representations (Shaw et al. 2018, eq. 3–4): the keys s of a query at
 * position pos (keys below lim) whose offset s − pos, clipped to [−k, k], selects row r of the
 * (2k+1, d_k) tables: the range [*s0, *s1), empty when none. Rows 0 and 2k gather every key at
 * distance ≥ k on their side; an inner row is one key. */
static void rel_keys(size_t pos, size_t k, size_t lim, size_t r, size_t *s0, size_t *s1) {
    size_t a, b;
    if (k == 0) { /* every offset clips to 0 */
        a = 0, b = lim;
    } else if (r == 0) { /* s − pos <= −k */
        a = 0, b = pos >= k ? pos - k + 1 : 0;
    } else if (r == 2 * k) { /* s − pos >= k */
        a = pos + k, b = lim;
    } else if (pos + r >= k) { /* s − pos = r − k */
        a = pos + r - k, b = a + 1;
    } else {
        a = b = 0;
    }
    if (b > lim) b = lim;
    if (a > b) a = b;
    *s0 = a, *s1 = b;
}

/* The rows [*r0, *r1] of the (2k+1, d_k) tables that a query at position pos reaches through its
 * keys s in [0, lim): r = k + clip(s − pos, ±k) is monotone in s, so they run from
 * k + clip(−pos) to k + clip(lim − 1 − pos); at most lim rows however large k is. Returns 0
 * (no rows) when lim is 0. */
static int rel_rows(size_t pos, size_t k, size_t lim, size_t *r0, size_t *r1) {
    if (lim == 0) return 0;
    const size_t last = lim - 1; /* the farthest key */
    *r0 = k - (pos < k ? pos : k);
    if (last >= pos)
        *r1 = k + (last - pos < k ? last - pos : k);
    else
        *r1 = k - (pos - last < k ? pos - last : k);
    return 1;
}

static float dot_f(const float *x, const float *y, size_t n) {
    float s = 0.0f;
    for (size_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

static void axpy_f(float *y, float alpha, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] += alpha * x[i];
}

static float sum_f(const float *x, size_t s0, size_t s1) {
    float s = 0.0f;
    for (size_t i = s0; i < s1; i++) s += x[i];
    return s;
}

/* rows (T, S) of one (b, h) += alpha · X_t·table[r(t, s)] for the keys each query may see, X (T,
 * d_k) with row stride x_stride: the relative key scores of the forward (X = Q, table a^K) and the
 * relative value term of dP' in the backward (X = dO, table a^V). One dot product per row r that
 * some key uses, shared by its keys: O(S + rows·d_k) per query, rows ≤ S (rel_rows). */
static void rel_add_dots(float *rows, const float *X, size_t x_stride, const float *table, float alpha,
                         const attn_args *a) {
    const size_t k = a->rel_clip, S = a->S, d_k = a->d_k;
    for (size_t t = 0; t < a->T; t++) {
        const size_t pos = a->q_pos0 + t, lim = key_limit(a, t);
        float *row = rows + t * S;
        size_t r0, r1;
        if (!rel_rows(pos, k, lim, &r0, &r1)) continue;
        for (size_t r = r0; r <= r1; r++) {
            size_t s0, s1;
            rel_keys(pos, k, lim, r, &s0, &s1);
            if (s0 == s1) continue;
            const float e = alpha * dot_f(X + t * x_stride, table + r * d_k, d_k);
            for (size_t s = s0; s < s1; s++) row[s] += e;
        }
    }
}

/* Y_t (T, d_k; row stride y_stride) += alpha · Σ_s W[t, s] table[r(t, s)], W (T, S) one (b, h)'s
 * weights: the relative value term of the output (W = P', table a^V) and the relative key term of
 * dQ in the backward (W = dS, table a^K, alpha = 1/√d_k). The weights of keys sharing a row are
 * summed first: one axpy per row the query reaches (rel_rows). */
static void rel_add_rows(float *Y, size_t y_stride, const float *W, const float *table, float alpha,
                         const attn_args *a) {
    const size_t k = a->rel_clip, S = a->S, d_k = a->d_k;
    for (size_t t = 0; t < a->T; t++) {
        const size_t pos = a->q_pos0 + t, lim = key_limit(a, t);
        size_t r0, r1;
        if (!rel_rows(pos, k, lim, &r0, &r1)) continue;
        for (size_t r = r0; r <= r1; r++) {
            size_t s0, s1;
            rel_keys(pos, k, lim, r, &s0, &s1);
            const float w = sum_f(W + t * S, s0, s1);
            if (w != 0.0f) axpy_f(Y + t * y_stride, alpha * w, table + r * d_k, d_k);
        }
    }
}

/* scores P (T, S) of one (b, h) = Q Kᵀ/√d_k (+ Q a^Kᵀ/√d_k) (+ bias), then the masked softmax of
 * each row. */
static void attn_scores(float *P, const float *Q, const float *K, const attn_args *a, size_t b, size_t kb,
                        size_t h, float scale) {
    const size_t T = a->T, S = a->S, d_k = a->d_k;
    const ops_kernels *kern = a->kernels;
    if (T == 1)
        attn_row_scores(kern, P, Q, K, S, d_k, a->kv_stride, scale);
    else
        ops_gemm_serial(kern, 0, 1, T, S, d_k, scale, Q, a->q_stride, K, a->kv_stride, 0.0f, P, S);
    if (a->rel_k) rel_add_dots(P, Q, a->q_stride, a->rel_k, scale, a);
    if (a->bias) {
        const float *bb = a->bias + b * a->bias_bstride + h * a->bias_hstride;
        for (size_t t = 0; t < T; t++) {
            float *row = P + t * S;
            const float *br = bb + t * a->bias_tstride;
            for (size_t s = 0; s < S; s++) row[s] += br[s];
        }
    }
    const uint8_t *pad = a->key_pad ? a->key_pad + kb * a->key_pad_bstride : NULL; /* kb: the keys' row */
    for (size_t t = 0; t < T; t++) softmax_row_masked(P + t * S, pad, S, key_limit(a, t));
}

/* A reference attention pass, as its chunks see it (pool.h): chunk p is the pair (b, h) =
 * (p / H, p % H); rel_table_grads' chunk c is table row lo + c. */
typedef struct {
    const attn_args *a;
    float scale;
    float *out, *probs, *probs_drop;             /* forward: written */
    float *dq, *dk, *dv, *dprobs;                /* backward */
    const float *dout, *probs_c, *probs_drop_c;  /* backward: read */
    const float *dS_c;                           /* rel_table_grads: the scores' gradients */
    const float *q, *k, *v;
    size_t lo;                                   /* rel_table_grads: the first row */
} ref_job;

static void forward_pair(void *arg, size_t pair) {
    const ref_job *j = arg;
    const size_t b = pair / j->a->H, h = pair % j->a->H;
    attn_args row; /* a row at its own position (q_pos): the call that row alone would make */
    if (j->a->q_pos) {
        row = *j->a;
        row.q_pos0 = (size_t)j->a->q_pos[b];
        row.S = row.q_pos0 + row.T;
        TFM_ASSERT(row.S <= j->a->S);
    }
    const attn_args *a = j->a->q_pos ? &row : j->a;
    const ops_kernels *kern = a->kernels;
    const size_t T = a->T, S = a->S, H = a->H, d_k = a->d_k, d = H * d_k;
    const float p = a->dropout_p;
    const int drop = p > 0.0f && j->probs_drop != NULL;
    const float keep_scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    const size_t off = ((b * H + h) * T) * j->a->S; /* first element of this (b, h) in [B,H,T,S] */
    float *P = j->probs + off;                /* (T, S) */
    const float *Q = j->q + b * a->q_bstride + h * d_k;
    const size_t kb = a->kv_row ? (size_t)a->kv_row[b] : b; /* the row of its keys/values */
    const size_t kvh = a->kv_heads && a->kv_heads != H ? h / (H / a->kv_heads) : h; /* its key/value head */
    const float *K = j->k + kb * a->kv_bstride + kvh * d_k;
    const float *Vh = j->v + kb * a->kv_bstride + kvh * d_k;
    float *O = j->out + b * T * d + h * d_k;
    if (T == 0) return;
    if (S == 0 || d_k == 0) { /* no keys: a zero output */
        for (size_t t = 0; t < T; t++)
            for (size_t c = 0; c < d_k; c++) O[t * d + c] = 0.0f;
        return;
    }
    attn_scores(P, Q, K, a, b, kb, h, j->scale);
    const float *Pv = P; /* the weights that multiply V */
    if (j->probs_drop) {
        float *Pd = j->probs_drop + off;
        for (size_t i = 0; i < T * S; i++)
            Pd[i] = !drop ? P[i] : dropout_keep(a->dropout_seed, off + i, p) ? P[i] * keep_scale : 0.0f;
        Pv = Pd;
    }
    if (T == 1)
        attn_row_values(kern, O, Pv, Vh, S, d_k, a->kv_stride);
    else
        ops_gemm_serial(kern, 0, 0, T, d_k, S, 1.0f, Pv, S, Vh, a->kv_stride, 0.0f, O, d);
    if (a->rel_v) rel_add_rows(O, d, Pv, a->rel_v, 1.0f, a);
}

void attn_forward(float *out, float *probs, float *probs_drop, const float *q, const float *k,
                  const float *v, const attn_args *a) {
    TFM_ASSERT(a->kv_heads == 0 || (a->kv_heads <= a->H && a->H % a->kv_heads == 0));
    TFM_ASSERT(!a->q_pos || a->T == 1); /* rows at their own positions: one query each (ops.h) */
    ref_job j = {.a = a, .scale = 1.0f / sqrtf((float)a->d_k), .out = out, .probs = probs,
                 .probs_drop = probs_drop, .q = q, .k = k, .v = v};
    ops_pool_run(a->B * a->H, ops_team(a->B * a->H * a->T * a->S * a->d_k), forward_pair, &j);
}

/* Row lo + c of rel_table_grads (below): summed in the order b, h, t. */
static void rel_table_row(void *arg, size_t c) {
    const ref_job *j = arg;
    const attn_args *a = j->a;
    const size_t B = a->B, T = a->T, S = a->S, H = a->H, d_k = a->d_k, d = H * d_k, k = a->rel_clip, r = j->lo + c;
    float *gk = a->drel_k ? a->drel_k + r * d_k : NULL;
    float *gv = a->drel_v ? a->drel_v + r * d_k : NULL;
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t t = 0; t < T; t++) {
                size_t s0, s1;
                rel_keys(a->q_pos0 + t, k, key_limit(a, t), r, &s0, &s1);
                if (s0 == s1) continue;
                const size_t row = ((b * H + h) * T + t) * S;
                if (gk) {
                    const float w = sum_f(j->dS_c + row, s0, s1);
                    axpy_f(gk, j->scale * w, j->q + b * a->q_bstride + t * a->q_stride + h * d_k, d_k);
                }
                if (gv) axpy_f(gv, sum_f(j->probs_drop_c + row, s0, s1), j->dout + (b * T + t) * d + h * d_k, d_k);
            }
}

/* The table gradients of the relative terms, after the per-(b, h) backward left dS in dprobs:
 * row r of drel_k += Σ_{b,h,t} (Σ_{s: r(t,s)=r} dS[b,h,t,s]) Q[b,t,h]/√d_k, and of drel_v +=
 * Σ_{b,h,t} (Σ_{s: r(t,s)=r} P'[b,h,t,s]) dO[b,t,h]. Only the rows some query reaches
 * (rel_rows, fewer than T + S of the 2k+1): the others get nothing. Parallel over rows r: each row is
 * summed by one thread in a fixed order, so the result does not depend on the thread count. */
static void rel_table_grads(const float *dprobs, const float *Pd_all, const float *dout, const float *q,
                            const attn_args *a, float scale) {
    const size_t B = a->B, T = a->T, S = a->S, H = a->H, d_k = a->d_k, k = a->rel_clip;
    size_t lo = 2 * k + 1, hi = 0; /* the rows [lo, hi) some query reaches */
    for (size_t t = 0; t < T; t++) {
        size_t r0, r1;
        if (!rel_rows(a->q_pos0 + t, k, key_limit(a, t), &r0, &r1)) continue;
        if (r0 < lo) lo = r0;
        if (r1 + 1 > hi) hi = r1 + 1;
    }
    if (lo >= hi) return;
    const size_t R = hi - lo;
    ref_job j = {.a = a, .scale = scale, .dS_c = dprobs, .probs_drop_c = Pd_all, .dout = dout, .q = q,
                 .lo = lo};
    ops_pool_run(R, ops_team(B * H * T * (S + R * d_k)), rel_table_row, &j);
}

static void backward_pair(void *arg, size_t pair) {
    const ref_job *j = arg;
    const attn_args *a = j->a;
    const ops_kernels *kern = a->kernels;
    const size_t T = a->T, S = a->S, H = a->H, d_k = a->d_k, d = H * d_k, b = pair / H, h = pair % H;
    const size_t qs = a->q_stride, kvs = a->kv_stride;
    const float scale = j->scale;
    const size_t off = ((b * H + h) * T) * S;
    const float *P = j->probs_c + off;                              /* (T, S) softmax output */
    const float *Pd = j->probs_drop_c ? j->probs_drop_c + off : P; /* (T, S) what multiplied V */
    float *dS = j->dprobs + off;                                    /* (T, S) workspace */
    const float *Q = j->q + b * a->q_bstride + h * d_k;             /* (T, d_k), ld q_stride */
    const float *K = j->k + b * a->kv_bstride + h * d_k;            /* (S, d_k), ld kv_stride */
    const float *Vh = j->v + b * a->kv_bstride + h * d_k;
    const float *dO = j->dout + b * T * d + h * d_k; /* (T, d_k), ld d */
    float *dQ = j->dq + b * a->q_bstride + h * d_k;
    float *dK = j->dk + b * a->kv_bstride + h * d_k;
    float *dV = j->dv + b * a->kv_bstride + h * d_k;
    /* out = P'·V:  dV += P'ᵀ·dO,  dP' = dO·Vᵀ */
    ops_gemm_serial(kern, 1, 0, S, d_k, T, 1.0f, Pd, S, dO, d, 1.0f, dV, kvs);
    ops_gemm_serial(kern, 0, 1, T, S, d_k, 1.0f, dO, d, Vh, kvs, 0.0f, dS, S);
    if (a->rel_v) rel_add_dots(dS, dO, d, a->rel_v, 1.0f, a); /* out += P'·a^V: dP' += dO·a^Vᵀ */
    /* Softmax backward through the dropout P' = P ⊙ M/(1−p): with dP = dP' ⊙ M/(1−p),
     * P ⊙ dP = P' ⊙ dP', so dS = P ⊙ (dP − Σ P ⊙ dP) = P' ⊙ dP' − P · Σ(P' ⊙ dP').
     * Masked keys and fully masked rows have P = P' = 0: zero gradient, never NaN.
     * dS is dL/d(score), the bias gradient too (score = QKᵀ/√d_k + bias). */
    for (size_t t = 0; t < T; t++) {
        float *ds = dS + t * S;
        const float *pr = P + t * S, *pd = Pd + t * S;
        double dot = 0.0;
        for (size_t s = 0; s < S; s++) dot += (double)pd[s] * (double)ds[s];
        const float fdot = (float)dot;
        for (size_t s = 0; s < S; s++) ds[s] = pd[s] * ds[s] - pr[s] * fdot;
    }
    /* scores = Q·Kᵀ/√d_k:  dQ += dS·K/√d_k,  dK += dSᵀ·Q/√d_k */
    ops_gemm_serial(kern, 0, 0, T, d_k, S, scale, dS, S, K, kvs, 1.0f, dQ, qs);
    ops_gemm_serial(kern, 1, 0, S, d_k, T, scale, dS, S, Q, qs, 1.0f, dK, kvs);
    if (a->rel_k) rel_add_rows(dQ, qs, dS, a->rel_k, scale, a); /* scores += Q·a^Kᵀ/√d_k */
}

void attn_backward(float *dq, float *dk, float *dv, float *dprobs, const float *dout, const float *probs,
                   const float *probs_drop, const float *q, const float *k, const float *v, const attn_args *a) {
    const size_t B = a->B, T = a->T, S = a->S, H = a->H, d_k = a->d_k;
    /* grouped-query attention and rows at their own positions: forward only */
    TFM_ASSERT((a->kv_heads == 0 || a->kv_heads == H) && !a->q_pos);
    if (T == 0 || S == 0 || d_k == 0) return; /* no keys: the output was a constant zero */
    const float scale = 1.0f / sqrtf((float)d_k);
    ref_job j = {.a = a, .scale = scale, .dq = dq, .dk = dk, .dv = dv, .dprobs = dprobs, .dout = dout,
                 .probs_c = probs, .probs_drop_c = probs_drop, .q = q, .k = k, .v = v};
    ops_pool_run(B * H, ops_team(B * H * T * S * d_k), backward_pair, &j);
    if ((a->rel_k && a->drel_k) || (a->rel_v && a->drel_v)) {
        attn_args g = *a;
        if (!a->rel_k) g.drel_k = NULL;
        if (!a->rel_v) g.drel_v = NULL;
        rel_table_grads(dprobs, probs_drop ? probs_drop : probs, dout, q, &g, scale);
    }
}
