/* Gradient checks of every op's backward against central differences (ggml / llm.c style).
 *
 * Each case turns an op into a scalar loss L = Σ out ⊙ R with a fixed random R (so dout = R),
 * runs the backward once, and compares each input gradient with (L(x+h) − L(x−h)) / (2h).
 *
 * Precision: the ops run in float, but L is summed in double, so the loss itself adds no rounding
 * beyond the ops' own float outputs (relative 6e-8 each). With h = 1e-3 on O(1) inputs the
 * truncation error is O(h²·f''') ≈ 1e-6 and the rounding noise is about
 * √(#outputs)·6e-8·|out| / (2h) ≈ 1e-4, so a correct backward lands near 1e-4 and a wrong one
 * (a missing term, a transposed product) near 1e-1 or worse. The perturbation is divided by the
 * step actually taken in float ((x+h) − (x−h) as floats), not by 2h. The error reported is
 *   err = max_i |analytic_i − numeric_i| / max(1, max_i |numeric_i|)
 * with a per-op tolerance (TOL unless said otherwise); measured values are printed.
 * Backwards accumulate: every gradient buffer starts at ACC0 (not zero) and ACC0 is subtracted
 * before the comparison, which checks the += contract too. */
#include "ops.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>

#define H_STEP 1e-3f
#define TOL 2e-3 /* 10x the worst error measured (2e-4) */
#define ACC0 0.25f

static uint64_t rng_state = 0x853c49e6748fea9bULL;
static void fill(float *x, size_t n, float scale) {
    for (size_t i = 0; i < n; i++) x[i] = scale * test_frand(&rng_state);
}
static void fill_const(float *x, size_t n, float c) {
    for (size_t i = 0; i < n; i++) x[i] = c;
}
static double dot(const float *a, const float *b, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
    return s;
}

typedef double (*loss_fn)(void);

/* Compares grad (accumulated on top of ACC0) with central differences of f over x[0..n). */
static double gradcheck(const char *name, loss_fn f, float *x, const float *grad, size_t n, double tol) {
    double max_err = 0.0, max_num = 0.0;
    int nan = 0;
    double diffs_n[4096];
    for (size_t i = 0; i < n && i < 4096; i++) {
        const float x0 = x[i];
        const float xp = x0 + H_STEP, xm = x0 - H_STEP;
        x[i] = xp;
        double lp = f();
        x[i] = xm;
        double lm = f();
        x[i] = x0;
        double num = (lp - lm) / ((double)xp - (double)xm);
        diffs_n[i] = num;
        if (fabs(num) > max_num) max_num = fabs(num);
    }
    for (size_t i = 0; i < n && i < 4096; i++) {
        double a = (double)grad[i] - (double)ACC0;
        if (isnan(a) || isnan(diffs_n[i])) nan = 1;
        double e = fabs(a - diffs_n[i]);
        if (e > max_err) max_err = e;
    }
    double rel = max_err / fmax(1.0, max_num);
    printf("  %-44s n=%-4zu max|num|=%-9.3g err=%.2e (tol %.0e)\n", name, n, max_num, rel, tol);
    CHECK(!nan && rel <= tol, "gradcheck %s: error %.3g > tol %.3g%s", name, rel, tol, nan ? " (NaN)" : "");
    return rel;
}

/* ---- linear ---------------------------------------------------------------------------------- */
enum { LN_N = 5, LN_IC = 7, LN_OC = 6 };
static float lin_x[LN_N * LN_IC], lin_w[LN_OC * LN_IC], lin_b[LN_OC], lin_out[LN_N * LN_OC], lin_r[LN_N * LN_OC];
static double lin_loss(void) {
    linear_forward(KERN, lin_out, lin_x, lin_w, lin_b, LN_N, LN_IC, LN_OC);
    return dot(lin_out, lin_r, LN_N * LN_OC);
}
static void test_linear(void) {
    fill(lin_x, LN_N * LN_IC, 1.0f);
    fill(lin_w, LN_OC * LN_IC, 0.5f);
    fill(lin_b, LN_OC, 0.5f);
    fill(lin_r, LN_N * LN_OC, 1.0f);
    float dx[LN_N * LN_IC], dw[LN_OC * LN_IC], db[LN_OC];
    fill_const(dx, LN_N * LN_IC, ACC0);
    fill_const(dw, LN_OC * LN_IC, ACC0);
    fill_const(db, LN_OC, ACC0);
    lin_loss();
    linear_backward(KERN, dx, dw, db, lin_r, lin_x, lin_w, LN_N, LN_IC, LN_OC);
    gradcheck("linear dinp", lin_loss, lin_x, dx, LN_N * LN_IC, TOL);
    gradcheck("linear dweight", lin_loss, lin_w, dw, LN_OC * LN_IC, TOL);
    gradcheck("linear dbias", lin_loss, lin_b, db, LN_OC, TOL);
    /* NULL outputs are allowed and leave the others as before */
    float dw2[LN_OC * LN_IC];
    fill_const(dw2, LN_OC * LN_IC, ACC0);
    linear_backward(KERN, NULL, dw2, NULL, lin_r, lin_x, lin_w, LN_N, LN_IC, LN_OC);
    CHECK(memcmp(dw, dw2, sizeof dw) == 0, "linear_backward with NULL dinp/dbias changed dweight");
}

/* ---- layernorm ------------------------------------------------------------------------------- */
enum { LY_N = 4, LY_C = 10 };
static float ly_x[LY_N * LY_C], ly_w[LY_C], ly_b[LY_C], ly_out[LY_N * LY_C], ly_r[LY_N * LY_C], ly_mean[LY_N],
    ly_rstd[LY_N];
static double ly_loss(void) {
    layernorm_forward(ly_out, ly_mean, ly_rstd, ly_x, ly_w, ly_b, LY_N, LY_C, 1e-5f);
    return dot(ly_out, ly_r, LY_N * LY_C);
}
static void test_layernorm(void) {
    fill(ly_x, LY_N * LY_C, 2.0f);
    for (int c = 0; c < LY_C; c++) ly_w[c] = 1.0f + 0.5f * test_frand(&rng_state);
    fill(ly_b, LY_C, 0.5f);
    fill(ly_r, LY_N * LY_C, 1.0f);
    float dx[LY_N * LY_C], dw[LY_C], db[LY_C];
    fill_const(dx, LY_N * LY_C, ACC0);
    fill_const(dw, LY_C, ACC0);
    fill_const(db, LY_C, ACC0);
    ly_loss();
    layernorm_backward(dx, dw, db, ly_r, ly_x, ly_w, ly_mean, ly_rstd, LY_N, LY_C);
    gradcheck("layernorm dinp", ly_loss, ly_x, dx, LY_N * LY_C, TOL);
    gradcheck("layernorm dweight", ly_loss, ly_w, dw, LY_C, TOL);
    gradcheck("layernorm dbias", ly_loss, ly_b, db, LY_C, TOL);
}

/* ---- log-softmax ----------------------------------------------------------------------------- */
enum { LS_N = 3, LS_V = 6 };
static float ls_x[LS_N * LS_V], ls_out[LS_N * LS_V], ls_r[LS_N * LS_V];
static double ls_loss(void) {
    log_softmax_forward(ls_out, ls_x, LS_N, LS_V);
    return dot(ls_out, ls_r, LS_N * LS_V);
}
static void test_log_softmax(void) {
    fill(ls_x, LS_N * LS_V, 3.0f);
    fill(ls_r, LS_N * LS_V, 1.0f);
    float dx[LS_N * LS_V];
    fill_const(dx, LS_N * LS_V, ACC0);
    ls_loss();
    log_softmax_backward(dx, ls_r, ls_out, LS_N, LS_V);
    gradcheck("log_softmax dinp", ls_loss, ls_x, dx, LS_N * LS_V, TOL);
}

/* ---- attention ------------------------------------------------------------------------------- */
/* B = 2, H = 2, d_k = 3 (d = 6); self-attention on a packed (B·T, 3d) Q|K|V buffer, or
 * cross-attention with queries (B·T, d) and a packed (B·S, 2d) K|V memory, S ≠ T. */
enum { AB = 2, AH = 2, ADK = 3, AD = AH * ADK, AT = 4, AS = 5, ATMAX = 5, AMAX = AB * 5 };
static struct {
    int cross, causal;
    const uint8_t *pad;
    float p_drop;
    size_t T, S;
    float q[AMAX * AD], kv[AMAX * 3 * AD]; /* cross: q (B·T, d), kv (B·S, 2d); self: kv holds QKV */
    float out[AB * ATMAX * AD], r[AB * ATMAX * AD];
    float probs[AB * AH * ATMAX * AS], probs_drop[AB * AH * ATMAX * AS];
} at;
static attn_args at_args(void) {
    const size_t qs = at.cross ? AD : 3 * AD, kvs = at.cross ? 2 * AD : 3 * AD;
    attn_args a = attn_args_make(KERN, AB, at.T, at.S, AH, ADK, qs, kvs);
    a.key_pad = at.pad;
    a.causal = at.causal;
    a.dropout_p = at.p_drop;
    a.dropout_seed = 42;
    return a;
}
static void at_forward(void) {
    const float *q = at.cross ? at.q : at.kv;
    const float *k = at.cross ? at.kv : at.kv + AD, *v = at.cross ? at.kv + AD : at.kv + 2 * AD;
    attn_args a = at_args();
    attn_forward(at.out, at.probs, at.p_drop > 0.0f ? at.probs_drop : NULL, q, k, v, &a);
}
static double at_loss(void) {
    at_forward();
    return dot(at.out, at.r, AB * at.T * AD);
}
static void test_attention_case(const char *name, int cross, int causal, const uint8_t *pad, float p_drop) {
    at.cross = cross;
    at.causal = causal;
    at.pad = pad;
    at.p_drop = p_drop;
    at.T = cross ? AT : AS; /* self-attention: T = S = 5; cross: T = 4, S = 5 */
    at.S = AS;
    const size_t nq = AB * at.T * AD, nkv = AB * at.S * (cross ? 2 : 3) * AD;
    fill(at.q, nq, 1.5f);
    fill(at.kv, nkv, 1.5f);
    fill(at.r, AB * at.T * AD, 1.0f);
    float dq[AMAX * AD], dkv[AMAX * 3 * AD], dprobs[AB * AH * ATMAX * AS];
    fill_const(dq, nq, ACC0);
    fill_const(dkv, nkv, ACC0);
    at_forward();
    for (size_t i = 0; i < AB * at.T * AD; i++)
        CHECK(!isnan(at.out[i]), "attention %s: NaN in the forward output", name);
    const float *qp = cross ? at.q : at.kv;
    float *dqp = cross ? dq : dkv;
    const size_t qs = cross ? AD : 3 * AD, kvs = cross ? 2 * AD : 3 * AD;
    const size_t ko = cross ? 0 : AD, vo = cross ? AD : 2 * AD;
    attn_args a = at_args();
    attn_backward(dqp, dkv + ko, dkv + vo, dprobs, at.r, at.probs, p_drop > 0.0f ? at.probs_drop : NULL, qp,
                  at.kv + ko, at.kv + vo, &a);
    char label[96];
    if (cross) {
        snprintf(label, sizeof label, "attention %s dq", name);
        gradcheck(label, at_loss, at.q, dq, nq, TOL);
        snprintf(label, sizeof label, "attention %s dk|dv", name);
        gradcheck(label, at_loss, at.kv, dkv, nkv, TOL);
    } else {
        snprintf(label, sizeof label, "attention %s dq|dk|dv", name);
        gradcheck(label, at_loss, at.kv, dkv, nkv, TOL);
    }
    /* A query that sees no key (all padded, or padded up to it under the causal mask) has a
     * constant zero output: its dq is exactly zero. */
    if (pad) {
        int bad = 0;
        for (size_t b = 0; b < AB; b++)
            for (size_t t = 0; t < at.T; t++) {
                size_t lim = causal ? t + 1 : at.S, seen = 0;
                for (size_t s = 0; s < lim; s++) seen += !pad[b * at.S + s];
                if (seen) continue;
                for (size_t c = 0; c < AD; c++)
                    if (dqp[(b * at.T + t) * qs + c] - ACC0 != 0.0f) bad = 1;
            }
        CHECK(!bad, "attention %s: a fully masked query got a non-zero dq", name);
    }
    /* Gradients of padded keys are exactly zero (never NaN): their probabilities are 0. */
    if (pad) {
        int bad = 0;
        for (size_t b = 0; b < AB; b++)
            for (size_t s = 0; s < at.S; s++) {
                if (!pad[b * at.S + s]) continue;
                const float *row = dkv + (b * at.S + s) * kvs;
                for (size_t c = ko; c < vo + AD; c++)
                    if (row[c] - ACC0 != 0.0f) bad = 1;
            }
        CHECK(!bad, "attention %s: padded keys got a non-zero gradient", name);
    }
}
static void test_attention(void) {
    /* batch 1 has its last two keys padded; in "fully" batch 1 is all padding (every query row of
     * it fully masked); in "first" key 0 of batch 1 is padding, so under the causal mask query 0
     * of batch 1 sees no key at all. */
    static const uint8_t pad_some[AB * AS] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1};
    static const uint8_t pad_fully[AB * AS] = {0, 0, 0, 1, 0, 1, 1, 1, 1, 1};
    static const uint8_t pad_first[AB * AS] = {0, 0, 0, 0, 0, 1, 0, 0, 0, 1};
    test_attention_case("self, no mask", 0, 0, NULL, 0.0f);
    test_attention_case("self, key padding", 0, 0, pad_some, 0.0f);
    test_attention_case("self, key padding, fully masked batch", 0, 0, pad_fully, 0.0f);
    test_attention_case("self, causal", 0, 1, NULL, 0.0f);
    test_attention_case("self, causal + padding (masked row)", 0, 1, pad_first, 0.0f);
    test_attention_case("cross S!=T, no mask", 1, 0, NULL, 0.0f);
    test_attention_case("cross S!=T, source padding", 1, 0, pad_fully, 0.0f);
    test_attention_case("self, causal + padding, dropout 0.3", 0, 1, pad_some, 0.3f);
    test_attention_case("cross, padding, dropout 0.3", 1, 0, pad_some, 0.3f);

    /* The fully masked rows: zero output, and dq of those queries exactly zero. */
    test_attention_case("self, causal + padding (masked row) again", 0, 1, pad_first, 0.0f);
    int zero = 1;
    for (size_t c = 0; c < AD; c++) zero &= at.out[(1 * AS + 0) * AD + c] == 0.0f;
    CHECK(zero, "attention: the fully masked query row's output is not zero");
    /* attn_forward with probs_drop given and p = 0 matches the call without it. */
    at.p_drop = 0.0f;
    at_forward();
    float ref[AB * AS * AD];
    memcpy(ref, at.out, sizeof ref);
    attn_args a = at_args();
    attn_forward(at.out, at.probs, at.probs_drop, at.kv, at.kv + AD, at.kv + 2 * AD, &a);
    CHECK(memcmp(ref, at.out, sizeof ref) == 0, "attn_forward(probs_drop, p=0) differs from attn_forward(NULL)");
}

/* Attention with an additive per-head bias (relative position encodings), a query offset q_pos0
 * and keys/values in a cache of capacity ABC per row (kv_bstride = ABC·kv_stride): dq, dk, dv by
 * central differences, and dL/dbias — which attn_backward leaves in dprobs — against central
 * differences of the bias itself (summed over the batch when the bias is broadcast). */
enum { ABT = 3, ABS = 5, ABC = 7, ABQ0 = 2 }; /* 3 new queries at positions 2..4 over 5 keys */
static struct {
    int shared, causal;
    const uint8_t *pad;
    float p_drop;
    float q[AB * ABT * AD], k[AB * ABC * AD], v[AB * ABC * AD];
    float bias[AB * AH * ABT * ABS], out[AB * ABT * AD], r[AB * ABT * AD];
    float probs[AB * AH * ABT * ABS], probs_drop[AB * AH * ABT * ABS];
} ab;
static attn_args ab_args(void) {
    attn_args a = attn_args_make(KERN, AB, ABT, ABS, AH, ADK, AD, AD);
    a.kv_bstride = ABC * AD;
    a.q_pos0 = ABQ0;
    a.causal = ab.causal;
    a.key_pad = ab.pad;
    a.key_pad_bstride = ABS;
    a.bias = ab.bias;
    a.bias_bstride = ab.shared ? 0 : AH * ABT * ABS;
    a.bias_hstride = ABT * ABS;
    a.bias_tstride = ABS;
    a.dropout_p = ab.p_drop;
    a.dropout_seed = 9;
    return a;
}
static double ab_loss(void) {
    attn_args a = ab_args();
    attn_forward(ab.out, ab.probs, ab.probs_drop, ab.q, ab.k, ab.v, &a);
    return dot(ab.out, ab.r, AB * ABT * AD);
}
static void test_attention_bias_case(const char *name, int shared, int causal, const uint8_t *pad, float p_drop) {
    ab.shared = shared, ab.causal = causal, ab.pad = pad, ab.p_drop = p_drop;
    fill(ab.q, AB * ABT * AD, 1.5f);
    fill(ab.k, AB * ABC * AD, 1.5f);
    fill(ab.v, AB * ABC * AD, 1.5f);
    fill(ab.bias, AB * AH * ABT * ABS, 2.0f);
    fill(ab.r, AB * ABT * AD, 1.0f);
    const size_t nb = (shared ? 1 : AB) * AH * ABT * ABS;
    float dq[AB * ABT * AD], dk[AB * ABC * AD], dv[AB * ABC * AD], dprobs[AB * AH * ABT * ABS], dbias[AB * AH * ABT * ABS];
    fill_const(dq, AB * ABT * AD, ACC0);
    fill_const(dk, AB * ABC * AD, ACC0);
    fill_const(dv, AB * ABC * AD, ACC0);
    ab_loss();
    attn_args a = ab_args();
    attn_backward(dq, dk, dv, dprobs, ab.r, ab.probs, p_drop > 0.0f ? ab.probs_drop : NULL, ab.q, ab.k, ab.v, &a);
    /* the bias gradient: dprobs reduced over what the bias broadcasts */
    fill_const(dbias, nb, ACC0);
    for (size_t b = 0; b < AB; b++)
        for (size_t i = 0; i < AH * ABT * ABS; i++) dbias[(shared ? 0 : b * AH * ABT * ABS) + i] += dprobs[b * AH * ABT * ABS + i];
    char label[96];
    snprintf(label, sizeof label, "attention+bias %s dq", name);
    gradcheck(label, ab_loss, ab.q, dq, AB * ABT * AD, TOL);
    snprintf(label, sizeof label, "attention+bias %s dk", name);
    gradcheck(label, ab_loss, ab.k, dk, AB * ABC * AD, TOL);
    snprintf(label, sizeof label, "attention+bias %s dv", name);
    gradcheck(label, ab_loss, ab.v, dv, AB * ABC * AD, TOL);
    snprintf(label, sizeof label, "attention+bias %s dbias", name);
    gradcheck(label, ab_loss, ab.bias, dbias, nb, TOL);
    /* keys past the S in use (cache slots 5, 6 of each row) are never read: zero gradient */
    int bad = 0;
    for (size_t b = 0; b < AB; b++)
        for (size_t s = ABS; s < ABC; s++)
            for (size_t c = 0; c < AD; c++) bad |= dk[(b * ABC + s) * AD + c] != ACC0 || dv[(b * ABC + s) * AD + c] != ACC0;
    CHECK(!bad, "attention+bias %s: unused cache slots got a gradient", name);
    for (size_t i = 0; i < AB * ABT * AD; i++) CHECK(!isnan(ab.out[i]), "attention+bias %s: NaN output", name);
}
static void test_attention_bias(void) {
    /* row 1: keys 0..2 padded, so under the causal mask query 0 (position 2) sees no key at all */
    static const uint8_t pad_early[AB * ABS] = {0, 0, 0, 0, 1, 1, 1, 1, 0, 0};
    test_attention_bias_case("per-row bias", 0, 0, NULL, 0.0f);
    test_attention_bias_case("shared bias, causal, q_pos0 2", 1, 1, NULL, 0.0f);
    test_attention_bias_case("shared bias, causal, padding", 1, 1, pad_early, 0.0f);
    test_attention_bias_case("per-row bias, causal, dropout 0.3", 0, 1, pad_early, 0.3f);
    /* the fully masked query (row 1, query 0) stays exactly zero whatever the bias */
    ab.shared = 1, ab.causal = 1, ab.pad = pad_early, ab.p_drop = 0.0f;
    fill(ab.bias, AH * ABT * ABS, 50.0f);
    ab_loss();
    int zero = 1;
    for (size_t c = 0; c < AD; c++) zero &= ab.out[(1 * ABT + 0) * AD + c] == 0.0f;
    CHECK(zero, "attention+bias: a fully masked query with a large bias is not a zero row");
}

/* ---- relative position representations (Shaw et al. 2018) ------------------------------------ */
/* Attention with relative key (and value) embeddings a^K, a^V (2k+1, d_k), k = 2: up to 5 queries at
 * positions q_pos0.. over keys in a cache of capacity ARC per row, so offsets reach −6 and clip to
 * row 0 (several keys share it). dq, dk, dv, d a^K, d a^V by central differences; the forward
 * against a direct evaluation of eq. 3–5 with its own clipping. */
enum { ART = 5, ARS = 7, ARC = 8, ARK = 2, ARR = 2 * ARK + 1 }; /* ART, ARS: the most queries and keys of a case */
static struct {
    int causal, values;
    size_t T, S, q_pos0;
    const uint8_t *pad;
    float p_drop;
    float q[AB * ART * AD], k[AB * ARC * AD], v[AB * ARC * AD], rk[ARR * ADK], rv[ARR * ADK];
    float out[AB * ART * AD], r[AB * ART * AD];
    float probs[AB * AH * ART * ARS], probs_drop[AB * AH * ART * ARS];
} ar;
static attn_args ar_args(void) {
    attn_args a = attn_args_make(KERN, AB, ar.T, ar.S, AH, ADK, AD, AD);
    a.kv_bstride = ARC * AD;
    a.q_pos0 = ar.q_pos0;
    a.causal = ar.causal;
    a.key_pad = ar.pad;
    a.key_pad_bstride = ar.S;
    a.dropout_p = ar.p_drop;
    a.dropout_seed = 11;
    a.rel_k = ar.rk;
    a.rel_v = ar.values ? ar.rv : NULL;
    a.rel_clip = ARK;
    return a;
}
static double ar_loss(void) {
    attn_args a = ar_args();
    attn_forward(ar.out, ar.probs, ar.probs_drop, ar.q, ar.k, ar.v, &a);
    return dot(ar.out, ar.r, AB * ar.T * AD);
}
/* eq. 3–5 evaluated directly in double (no dropout): out (B, T, d). */
static void ar_direct(double *out) {
    for (size_t b = 0; b < AB; b++)
        for (size_t h = 0; h < AH; h++)
            for (size_t t = 0; t < ar.T; t++) {
                const long pos = (long)(ar.q_pos0 + t);
                double e[ARS], mx = -INFINITY, z = 0.0;
                const float *qt = ar.q + (b * ar.T + t) * AD + h * ADK;
                for (size_t s = 0; s < ar.S; s++) {
                    long off = (long)s - pos;
                    off = off < -ARK ? -ARK : off > ARK ? ARK : off;
                    const float *ks = ar.k + (b * ARC + s) * AD + h * ADK, *a = ar.rk + (size_t)(off + ARK) * ADK;
                    double x = 0.0;
                    for (size_t c = 0; c < ADK; c++) x += (double)qt[c] * ((double)ks[c] + (double)a[c]);
                    int masked = (ar.causal && (long)s > pos) || (ar.pad && ar.pad[b * ar.S + s]);
                    e[s] = masked ? -INFINITY : x / sqrt((double)ADK);
                    if (e[s] > mx) mx = e[s];
                }
                double *o = out + (b * ar.T + t) * AD + h * ADK;
                for (size_t c = 0; c < ADK; c++) o[c] = 0.0;
                if (mx == -INFINITY) continue;
                for (size_t s = 0; s < ar.S; s++) z += e[s] == -INFINITY ? 0.0 : exp(e[s] - mx);
                for (size_t s = 0; s < ar.S; s++) {
                    if (e[s] == -INFINITY) continue;
                    long off = (long)s - pos;
                    off = off < -ARK ? -ARK : off > ARK ? ARK : off;
                    const double pr = exp(e[s] - mx) / z;
                    for (size_t c = 0; c < ADK; c++)
                        o[c] += pr * ((double)ar.v[(b * ARC + s) * AD + h * ADK + c] +
                                      (ar.values ? (double)ar.rv[(size_t)(off + ARK) * ADK + c] : 0.0));
                }
            }
}
static void test_attention_rel_case(const char *name, int causal, int values, size_t q_pos0, size_t T,
                                    const uint8_t *pad, float p_drop) {
    ar.causal = causal, ar.values = values, ar.q_pos0 = q_pos0, ar.T = T, ar.S = q_pos0 + T, ar.pad = pad;
    ar.p_drop = p_drop;
    fill(ar.q, AB * ART * AD, 1.5f);
    fill(ar.k, AB * ARC * AD, 1.5f);
    fill(ar.v, AB * ARC * AD, 1.5f);
    fill(ar.rk, ARR * ADK, 1.5f);
    fill(ar.rv, ARR * ADK, 1.5f);
    fill(ar.r, AB * ART * AD, 1.0f);
    char label[112];
    if (p_drop == 0.0f) { /* the forward against eq. 3–5 */
        double want[AB * ART * AD];
        ar_loss();
        ar_direct(want);
        double err = 0.0;
        for (size_t i = 0; i < AB * T * AD; i++) err = fmax(err, fabs((double)ar.out[i] - want[i]));
        printf("  %-44s max|out - direct| = %.2e\n", name, err);
        CHECK(err <= 1e-5, "attention+rel %s: forward differs from eq. 3-5 by %.3g", name, err);
    }
    float dq[AB * ART * AD], dk[AB * ARC * AD], dv[AB * ARC * AD], dprobs[AB * AH * ART * ARS];
    float drk[ARR * ADK], drv[ARR * ADK];
    fill_const(dq, AB * ART * AD, ACC0);
    fill_const(dk, AB * ARC * AD, ACC0);
    fill_const(dv, AB * ARC * AD, ACC0);
    fill_const(drk, ARR * ADK, ACC0);
    fill_const(drv, ARR * ADK, ACC0);
    ar_loss();
    attn_args a = ar_args();
    a.drel_k = drk;
    a.drel_v = drv;
    attn_backward(dq, dk, dv, dprobs, ar.r, ar.probs, p_drop > 0.0f ? ar.probs_drop : NULL, ar.q, ar.k, ar.v, &a);
    snprintf(label, sizeof label, "attention+rel %s dq", name);
    gradcheck(label, ar_loss, ar.q, dq, AB * T * AD, TOL);
    snprintf(label, sizeof label, "attention+rel %s dk", name);
    gradcheck(label, ar_loss, ar.k, dk, AB * ARC * AD, TOL);
    snprintf(label, sizeof label, "attention+rel %s dv", name);
    gradcheck(label, ar_loss, ar.v, dv, AB * ARC * AD, TOL);
    snprintf(label, sizeof label, "attention+rel %s d rel_k", name);
    gradcheck(label, ar_loss, ar.rk, drk, ARR * ADK, TOL);
    snprintf(label, sizeof label, "attention+rel %s d rel_v", name);
    if (values)
        gradcheck(label, ar_loss, ar.rv, drv, ARR * ADK, TOL);
    else
        for (size_t i = 0; i < ARR * ADK; i++) CHECK(drv[i] == ACC0, "%s: written without rel_v", label);
    for (size_t i = 0; i < AB * T * AD; i++) CHECK(!isnan(ar.out[i]), "attention+rel %s: NaN output", name);
}
static void test_attention_rel(void) {
    /* row 1: keys 0..3 padded: under the causal mask query 0 (position 3) sees no key at all */
    static const uint8_t pad_early[AB * ARS] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0};
    static const uint8_t pad_end[AB * 5] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1};
    test_attention_rel_case("keys, bidirectional", 0, 0, 0, 5, NULL, 0.0f);
    test_attention_rel_case("keys+values, bidirectional, padding", 0, 1, 0, 5, pad_end, 0.0f);
    test_attention_rel_case("keys+values, causal, q_pos0 3", 1, 1, 3, 4, NULL, 0.0f);
    test_attention_rel_case("keys+values, causal, q_pos0 3, padding", 1, 1, 3, 4, pad_early, 0.0f);
    test_attention_rel_case("keys+values, bidirectional, q_pos0 3, dropout 0.3", 0, 1, 3, 4, NULL, 0.3f);
    /* the fully masked query (row 1, query 0) is exactly zero, relative values included */
    int zero = 1;
    ar.causal = 1, ar.values = 1, ar.q_pos0 = 3, ar.T = 4, ar.S = 7, ar.pad = pad_early, ar.p_drop = 0.0f;
    ar_loss();
    for (size_t c = 0; c < AD; c++) zero &= ar.out[(1 * ar.T + 0) * AD + c] == 0.0f;
    CHECK(zero, "attention+rel: a fully masked query is not a zero row");
}

/* ---- embedding ------------------------------------------------------------------------------- */
enum { EM_V = 5, EM_D = 4, EM_N = 7 };
static const int32_t em_ids[EM_N] = {3, 1, 3, 0, 4, 3, 1}; /* 3 three times, 1 twice, 2 never */
static float em_table[EM_V * EM_D], em_out[EM_N * EM_D], em_r[EM_N * EM_D];
static double em_loss(void) {
    embedding_forward(em_out, em_ids, em_table, 1.7f, EM_N, EM_D);
    return dot(em_out, em_r, EM_N * EM_D);
}
static void test_embedding(void) {
    fill(em_table, EM_V * EM_D, 1.0f);
    fill(em_r, EM_N * EM_D, 1.0f);
    float dt[EM_V * EM_D];
    fill_const(dt, EM_V * EM_D, ACC0);
    em_loss();
    embedding_backward(dt, em_r, em_ids, 1.7f, EM_N, EM_D);
    gradcheck("embedding dtable (repeated ids, scale 1.7)", em_loss, em_table, dt, EM_V * EM_D, TOL);
    int untouched = 1;
    for (int c = 0; c < EM_D; c++) untouched &= dt[2 * EM_D + c] == ACC0;
    CHECK(untouched, "embedding: the row of an unused id got a gradient");
    /* PE has no parameters and its backward is the identity: nothing to check. */
}

/* ---- activations ----------------------------------------------------------------------------- */
enum { AC_N = 40 };
static float ac_x[AC_N], ac_out[AC_N], ac_r[AC_N];
static int ac_gelu;
static double ac_loss(void) {
    if (ac_gelu)
        gelu_forward(ac_out, ac_x, AC_N);
    else
        relu_forward(ac_out, ac_x, AC_N);
    return dot(ac_out, ac_r, AC_N);
}
static void test_activations(void) {
    fill(ac_x, AC_N, 3.0f);
    for (int i = 0; i < AC_N; i++) /* keep ReLU's inputs away from the kink at 0 (|x| > 10h) */
        if (fabsf(ac_x[i]) < 0.01f) ac_x[i] = 0.5f;
    fill(ac_r, AC_N, 1.0f);
    for (ac_gelu = 0; ac_gelu <= 1; ac_gelu++) {
        float dx[AC_N];
        fill_const(dx, AC_N, ACC0);
        if (ac_gelu)
            gelu_backward(dx, ac_r, ac_x, AC_N);
        else
            relu_backward(dx, ac_r, ac_x, AC_N);
        gradcheck(ac_gelu ? "gelu dinp" : "relu dinp", ac_loss, ac_x, dx, AC_N, TOL);
    }
    float dx[2] = {ACC0, ACC0}, r2[2] = {1.0f, 1.0f}, x2[2] = {0.0f, 0.0f};
    gelu_backward(dx, r2, x2, 2);
    CHECK_NEAR(dx[0] - ACC0, 0.5, 1e-7, "gelu'(0) = 0.5");
}

/* ---- residual -------------------------------------------------------------------------------- */
static void test_residual(void) {
    float da[3] = {1, 1, 1}, db[3] = {0, 0, 0}, dy[3] = {0.5f, -2.0f, 3.0f};
    residual_backward(da, db, dy, 3);
    CHECK(da[0] == 1.5f && da[1] == -1.0f && da[2] == 4.0f, "residual_backward: da not accumulated");
    CHECK(db[0] == 0.5f && db[1] == -2.0f && db[2] == 3.0f, "residual_backward: db wrong");
    residual_backward(NULL, db, dy, 3);
    CHECK(db[1] == -4.0f, "residual_backward with da NULL");
}

/* ---- dropout --------------------------------------------------------------------------------- */
enum { DR_N = 64 };
static float dr_x[DR_N], dr_out[DR_N], dr_r[DR_N];
static uint8_t dr_mask[DR_N];
static double dr_loss(void) {
    dropout_forward(dr_out, dr_mask, dr_x, 0.25f, 1234, DR_N); /* fixed seed: fixed mask */
    return dot(dr_out, dr_r, DR_N);
}
static void test_dropout(void) {
    fill(dr_x, DR_N, 1.0f);
    fill(dr_r, DR_N, 1.0f);
    float dx[DR_N];
    fill_const(dx, DR_N, ACC0);
    dr_loss();
    dropout_backward(dx, dr_r, dr_mask, 0.25f, DR_N);
    gradcheck("dropout dinp (p 0.25, fixed seed)", dr_loss, dr_x, dx, DR_N, TOL);

    /* Statistics and reproducibility on a larger vector: keep rate ≈ 1 − p, kept entries scaled
     * by 1/(1 − p), the same mask for the same seed whatever the thread count, a new one for a
     * new seed. */
    enum { BIG = 100000 };
    static float x[BIG], y1[BIG], y2[BIG];
    static uint8_t m1[BIG], m2[BIG];
    fill_const(x, BIG, 1.0f);
    ops_set_threads(1);
    dropout_forward(y1, m1, x, 0.1f, 99, BIG);
    ops_set_threads(2);
    dropout_forward(y2, m2, x, 0.1f, 99, BIG);
    CHECK(memcmp(m1, m2, BIG) == 0 && memcmp(y1, y2, sizeof y1) == 0, "dropout mask depends on the thread count");
    size_t kept = 0;
    int scaled = 1;
    for (size_t i = 0; i < BIG; i++) {
        kept += m1[i];
        scaled &= m1[i] ? y1[i] == 1.0f / 0.9f : y1[i] == 0.0f;
    }
    double rate = (double)kept / BIG; /* binomial sd ≈ 0.001 */
    printf("  dropout p=0.1 keep rate %.4f\n", rate);
    CHECK(fabs(rate - 0.9) < 0.005, "dropout keep rate %.4f, want 0.9", rate);
    CHECK(scaled, "dropout: kept entries not scaled by 1/(1-p)");
    dropout_forward(y2, m2, x, 0.1f, 100, BIG);
    CHECK(memcmp(m1, m2, BIG) != 0, "dropout: a new seed gave the same mask");
    dropout_forward(y2, m2, x, 1.0f, 5, 8);
    CHECK(y2[0] == 0.0f && m2[3] == 0, "dropout p=1 does not zero");
}

/* ---- cross-entropy --------------------------------------------------------------------------- */
enum { CE_N = 6, CE_V = 5 };
static float ce_x[CE_N * CE_V], ce_losses[CE_N], ce_eps;
static const int32_t ce_t[CE_N] = {2, 0, 4, 1, 0, 0}; /* pad = 0: rows 1, 4, 5 ignored */
static double ce_loss(void) {
    return cross_entropy_forward(ce_losses, NULL, ce_x, ce_t, 0, ce_eps, CE_N, CE_V);
}
static void test_cross_entropy(void) {
    fill(ce_x, CE_N * CE_V, 2.0f);
    const float epss[2] = {0.0f, 0.1f};
    for (int e = 0; e < 2; e++) {
        ce_eps = epss[e];
        size_t nn = 0;
        cross_entropy_forward(ce_losses, &nn, ce_x, ce_t, 0, ce_eps, CE_N, CE_V);
        CHECK(nn == 3, "cross-entropy: %zu non-pad rows, want 3", nn);
        float g[CE_N * CE_V], gs[CE_N * CE_V];
        cross_entropy_backward(g, ce_x, ce_t, 0, ce_eps, nn, CE_N, CE_V);
        for (size_t i = 0; i < CE_N * CE_V; i++) gs[i] = g[i] + ACC0; /* written, not accumulated */
        gradcheck(e ? "cross-entropy dlogits (eps 0.1, pad rows)" : "cross-entropy dlogits (eps 0, pad rows)",
                  ce_loss, ce_x, gs, CE_N * CE_V, TOL);
    }
}

int main(void) {
    printf("gradient checks (h = %g, error relative to max(1, max|numeric|)):\n", (double)H_STEP);
    test_linear();
    test_layernorm();
    test_log_softmax();
    test_attention();
    test_attention_bias();
    test_attention_rel();
    test_embedding();
    test_activations();
    test_residual();
    test_dropout();
    test_cross_entropy();
    return test_finish("gradcheck");
}
