/* FLOATER (Liu, Yu, Dhillon & Hsieh, "Learning to Encode Position for Transformer with Continuous
 * Dynamical Model", ICML 2020, §3): the position encoding is a continuous trajectory p(t)
 * in R^d_model that solves a learned ODE,
 *     dp/dt = h(t, p; θ),    p(0) = p0 (learned),
 * sampled at t = pos·Δ; the table P[pos] = p(pos·Δ) is added at the embeddings like the sinusoid.
 * Our choices (docs/POSITION.md "floater"):
 *   h(t, p) = W2·tanh(W1·[p; t] + b1) + b2, W1 (H, d+1), W2 (d, H), H = max(4, d_model/4): one
 *     hidden layer whose input is the state and the time (non-autonomous, so the velocity can change
 *     along the sequence); H = d/4 keeps the table's cost ≈ 16·d·H = 4·d² FLOPs per position, the
 *     price of one d×d projection of two tokens, and its 2·d·H + H + 2·d ≈ d²/2 parameters per
 *     side small beside a layer's 4·d² + 2·d·d_ff;
 *   Δ = 0.1, one classic RK4 step per Δ (src/ops/ode_rk4.c), so position k costs k steps from 0;
 *   p0 learned, initialised to zero; W1, W2 Xavier-uniform, b1, b2 U(±1/√fan_in) as nn.Linear.
 * Gradients: backpropagation through the RK4 stages (discretise-then-differentiate), the slopes
 * and hidden activations of every stage kept in the context's state during a training forward.
 *
 * Where the table lives: in the calling context (pe_state, pe.h), never in the model (read-only,
 * shared by threads). A training forward (state->training) integrates 0..T−1 afresh with the
 * intermediates; inference integrates only the positions not yet cached and reuses the rest while
 * the parameters are those the cache was computed from (a copy of θ and p0 is kept and compared:
 * a trainer changes them every step, so its own context's cache is invalidated by any step, and a
 * loaded model's cache lives as long as the context). Extending 0..m by m..n gives bit for bit the
 * table computed 0..n (ode_rk4.h), so cached decoding equals recomputation exactly.
 *
 * Tensors per stack (under the stack's prefix, e.g. transformer.encoder.floater.linear1.weight):
 *   floater.linear1.weight (H, d+1), floater.linear1.bias (H), floater.linear2.weight (d, H),
 *   floater.linear2.bias (d), floater.p0 (d). */
#include "pe.h"

#include "ode_rk4.h"

#include <math.h>
#include <string.h>

#define FLOATER_DELTA 0.1f /* Δ: time between consecutive positions, one RK4 step each */
enum { W1, B1, W2, B2, P0, N_TENSORS };

static size_t hidden_of(size_t d) { return d / 4 > 4 ? d / 4 : 4; }

/* floats of each tensor, in registration order */
static void tensor_sizes(size_t d, size_t sz[N_TENSORS]) {
    const size_t H = hidden_of(d);
    sz[W1] = H * (d + 1);
    sz[B1] = H;
    sz[W2] = d * H;
    sz[B2] = d;
    sz[P0] = d;
}

static void floater_add_params(param_builder *b, const tfm_config *cfg, int stack, const stack_desc *sd, pe_params *sp,
                               layer_params *lp) {
    (void)stack;
    (void)lp;
    const size_t d = (size_t)cfg->d_model, H = hidden_of(d);
    char name[TFM_PARAM_NAME_MAX + 32];
    static const char *const suffix[N_TENSORS] = {"linear1.weight", "linear1.bias", "linear2.weight",
                                                  "linear2.bias", "p0"};
    const size_t rows[N_TENSORS] = {H, H, d, d, d}, cols[N_TENSORS] = {d + 1, 0, H, 0, 0};
    const param_init init[N_TENSORS] = {PARAM_INIT_XAVIER, PARAM_INIT_LINEAR_BIAS, PARAM_INIT_XAVIER,
                                        PARAM_INIT_LINEAR_BIAS, PARAM_INIT_ZERO};
    const size_t fan_in[N_TENSORS] = {d + 1, d + 1, H, H, d};
    for (int i = 0; i < N_TENSORS; i++) {
        snprintf(name, sizeof name, "%s.floater.%s", sd->prefix, suffix[i]);
        param_add(b, name, rows[i], cols[i], sp ? &sp->w[i] : NULL, init[i], fan_in[i]);
    }
}

/* ---- the vector field h(t, p) = W2·tanh(W1·[p; t] + b1) + b2 and its vector-Jacobian product ---- */

typedef struct {
    const float *w1, *b1, *w2, *b2; /* (H, d+1), (H), (d, H), (d) */
    float *gw1, *gb1, *gw2, *gb2;   /* their gradients (backward only) */
    float *hid;                     /* (H) scratch: the hidden activation, then its gradient */
    size_t d, H;
} field_ctx;

static void field_eval(const ode_field *f, float t, const float *p, float *dp, float *stash) {
    const field_ctx *c = f->ctx;
    const size_t d = c->d, H = c->H;
    float *a = stash ? stash : c->hid; /* tanh(W1·[p; t] + b1), (H) */
    for (size_t h = 0; h < H; h++) {
        const float *w = c->w1 + h * (d + 1);
        float u = c->b1[h];
        for (size_t j = 0; j < d; j++) u += w[j] * p[j];
        a[h] = tanhf(u + w[d] * t);
    }
    for (size_t i = 0; i < d; i++) {
        const float *w = c->w2 + i * H;
        float v = c->b2[i];
        for (size_t h = 0; h < H; h++) v += w[h] * a[h];
        dp[i] = v;
    }
}

/* Given ā = dL/d(dp): ∂/∂W2 += ā·aᵀ, ∂/∂b2 += ā; g = (W2ᵀā) ⊙ (1 − a²); ∂/∂W1 += g·[p; t]ᵀ,
 * ∂/∂b1 += g; dL/dp += W1[:, :d]ᵀ·g. */
static void field_vjp(const ode_field *f, float t, const float *p, const float *a, const float *abar, float *pbar) {
    const field_ctx *c = f->ctx;
    const size_t d = c->d, H = c->H;
    float *g = c->hid;
    for (size_t h = 0; h < H; h++) g[h] = 0.0f;
    for (size_t i = 0; i < d; i++) {
        const float *w = c->w2 + i * H;
        float *gw = c->gw2 + i * H;
        const float ai = abar[i];
        c->gb2[i] += ai;
        for (size_t h = 0; h < H; h++) {
            g[h] += w[h] * ai;
            gw[h] += ai * a[h];
        }
    }
    for (size_t h = 0; h < H; h++) {
        const float gh = g[h] * (1.0f - a[h] * a[h]);
        const float *w = c->w1 + h * (d + 1);
        float *gw = c->gw1 + h * (d + 1);
        c->gb1[h] += gh;
        for (size_t j = 0; j < d; j++) {
            gw[j] += gh * p[j];
            pbar[j] += w[j] * gh;
        }
        gw[d] += gh * t;
    }
}

/* ---- the per-context state of one stack (pe_state.buf), n = positions ----
 *   snap (n_theta)          the parameters the cached table was computed from
 *   P (n, d)                the table, P[pos] = p(pos·Δ)
 *   work (5d + H)           RK4 scratch, the field's hidden scratch
 *   with_backward:
 *   K (n−1, 4, d)           every step's four RK4 slopes
 *   A (n−1, 4, H)           every stage's hidden activation (the field's stash)
 *   dP (n, d)               dL/dP, then the total gradient of each sampled state */
typedef struct {
    float *snap, *P, *work, *hid, *K, *A, *dP;
} floater_view;

static size_t n_theta(size_t d) {
    size_t sz[N_TENSORS], n = 0;
    tensor_sizes(d, sz);
    for (int i = 0; i < N_TENSORS; i++) n += sz[i];
    return n;
}

static size_t carve(floater_view *v, float *base, size_t n, size_t d, int with_backward) {
    const size_t H = hidden_of(d), steps = n > 0 ? n - 1 : 0;
    const size_t sizes[7] = {n_theta(d), n * d, 5 * d, H, with_backward ? steps * 4 * d : 0,
                             with_backward ? steps * 4 * H : 0, with_backward ? n * d : 0};
    float **slots[7] = {&v->snap, &v->P, &v->work, &v->hid, &v->K, &v->A, &v->dP};
    size_t off = 0;
    for (int i = 0; i < 7; i++) {
        *slots[i] = base && sizes[i] ? base + off : NULL;
        off += sizes[i];
    }
    return off;
}

static size_t floater_state_floats(const tfm_config *cfg, size_t positions, int with_backward) {
    floater_view v;
    return carve(&v, NULL, positions > 0 ? positions : 1, (size_t)cfg->d_model, with_backward);
}

static floater_view view_of(const pe_state *st, size_t d) {
    floater_view v;
    carve(&v, st->buf, st->positions > 0 ? st->positions : 1, d, st->with_backward);
    return v;
}

static ode_field make_field(field_ctx *c, const pe_params *p, pe_params *g, float *hid, size_t d) {
    memset(c, 0, sizeof *c);
    c->w1 = p->w[W1];
    c->b1 = p->w[B1];
    c->w2 = p->w[W2];
    c->b2 = p->w[B2];
    if (g) {
        c->gw1 = g->w[W1];
        c->gb1 = g->w[B1];
        c->gw2 = g->w[W2];
        c->gb2 = g->w[B2];
    }
    c->hid = hid;
    c->d = d;
    c->H = hidden_of(d);
    return (ode_field){d, c->H, field_eval, field_vjp, c};
}

/* Whether the snapshot holds the current parameters; copies them there when `take`. */
static int snapshot_matches(float *snap, const pe_params *p, size_t d, int take) {
    size_t sz[N_TENSORS], off = 0;
    tensor_sizes(d, sz);
    int same = 1;
    for (int i = 0; i < N_TENSORS; i++) {
        if (take)
            memcpy(snap + off, p->w[i], sz[i] * sizeof(float));
        else if (same && memcmp(snap + off, p->w[i], sz[i] * sizeof(float)) != 0)
            same = 0;
        off += sz[i];
    }
    return same;
}

/* Makes P[0..need) current: a training forward recomputes it all with the intermediates; inference
 * extends the cached table (or restarts it if the parameters changed). */
static void table_update(pe_state *st, const pe_params *p, size_t need, size_t d) {
    TFM_ASSERT(need <= st->positions);
    floater_view v = view_of(st, d);
    field_ctx c;
    ode_field f = make_field(&c, p, NULL, v.hid, d);
    const int fresh = st->training || st->n_valid == 0 || !snapshot_matches(v.snap, p, d, 0);
    if (fresh) {
        memcpy(v.P, p->w[P0], d * sizeof(float));
        snapshot_matches(v.snap, p, d, 1);
        st->n_valid = 1;
    }
    if (st->training) {
        TFM_ASSERT(st->with_backward);
        ode_rk4_forward(&f, 0.0f, FLOATER_DELTA, 0, need - 1, v.P, v.K, v.A, v.work);
        st->n_valid = need;
    } else if (need > st->n_valid) {
        ode_rk4_forward(&f, 0.0f, FLOATER_DELTA, st->n_valid - 1, need - 1, v.P, NULL, NULL, v.work);
        st->n_valid = need;
    }
}

/* x (B, T, d) += P[pos0 + t] (Liu et al. 2020, §3: the sampled trajectory added to the input). */
static void floater_forward(const tfm_config *cfg, const pe_params *p, float *x, size_t B, size_t T, size_t d,
                            size_t pos0) {
    (void)cfg;
    if (T == 0) return;
    pe_state *st = p->state;
    TFM_ASSERT(st != NULL);
    table_update(st, p, pos0 + T, d);
    const float *P = view_of(st, d).P + pos0 * d;
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < T * d; i++) x[b * T * d + i] += P[i];
}

/* dL/dP[t] = Σ_b dx[b, t]; back through the RK4 steps into W1, b1, W2, b2 and p0 (ACCUMULATED). */
static void floater_backward(const tfm_config *cfg, pe_params *g, const pe_params *p, const float *dx, size_t B,
                             size_t T, size_t d, size_t pos0) {
    (void)cfg;
    if (T == 0) return;
    pe_state *st = p->state;
    TFM_ASSERT(st != NULL && st->with_backward && pos0 == 0 && st->n_valid >= T);
    floater_view v = view_of(st, d);
    memset(v.dP, 0, T * d * sizeof(float));
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < T * d; i++) v.dP[i] += dx[b * T * d + i];
    field_ctx c;
    ode_field f = make_field(&c, p, g, v.hid, d);
    ode_rk4_backward(&f, 0.0f, FLOATER_DELTA, T - 1, v.P, v.K, v.A, v.dP, v.work);
    for (size_t i = 0; i < d; i++) g->w[P0][i] += v.dP[i];
}

const pe_kind pe_kind_floater = {
    .name = "floater",
    .options = 0,
    .add_params = floater_add_params,
    .embed_forward = floater_forward,
    .embed_backward = floater_backward,
    .state_floats = floater_state_floats,
};
