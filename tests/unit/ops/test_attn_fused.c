/* The fused attention (attn_fused_forward/backward, src/ops/attention_fused.c) against the reference
 * path (attn_forward/attn_backward, src/ops/attention.c): the output and dQ, dK, dV (accumulated onto
 * non-zero buffers) over a grid of T ≠ S, key padding with a fully padded batch row, causal masks
 * with q_pos0 > 0, an ALiBi-like fixed bias, dropout 0 and 0.3 (the same counter-based mask), d_k not
 * a multiple of 16, tiles that divide neither T nor S, separate and packed (self-attention) Q|K|V;
 * then the result bit for bit with 1 and 2 threads.
 *
 * Tolerance: both paths sum the same float terms in different orders (tiles, online rescaling,
 * e^(S − lse) instead of e^(S − max)/Σ), so each value may differ by a few float roundings of the
 * magnitudes summed: |fused − ref| ≤ 1e-5 · (1 + |ref|) per element, values O(1) (measured maximum
 * about 1e-6). */
#include "core_internal.h"
#include "ops.h"
#include "test_util.h"
#include "tfm/threads.h"

#include <stdint.h>

static uint64_t st = 0x243F6A8885A308D3ULL;

typedef struct {
    const char *name;
    size_t B, T, S, H, d_k;
    int packed;   /* 1: self-attention layout, Q|K|V in one (B·T, 3d) buffer (T == S) */
    int causal;
    size_t q_pos0;
    int pad;      /* 1: some keys padded, batch row 1 entirely */
    int bias;     /* 1: an ALiBi-like bias −slope_h·|t + q_pos0 − s| shared by the batch rows */
    float p;      /* attention dropout */
} tcase;

static double worst; /* the largest |fused − ref| / (1 + |ref|) seen */

static void compare(const char *c, const char *what, const float *got, const float *want, size_t n) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        const double e = fabs((double)got[i] - (double)want[i]) / (1.0 + fabs((double)want[i]));
        if (!(e <= 1e-5)) {
            if (!bad) first = i;
            bad++;
        }
        if (e > worst) worst = e;
    }
    CHECK(bad == 0, "%s: %s: %zu of %zu values differ, first [%zu] %.9g vs reference %.9g", c, what, bad, n,
          first, bad ? (double)got[first] : 0.0, bad ? (double)want[first] : 0.0);
}

/* The buffers of one case: inputs, and what each path produced. */
typedef struct {
    float *q, *k, *v, *dout, *bias;
    uint8_t *pad;
    float *out, *dq, *dk, *dv; /* dq/dk/dv: packed cases point into one (B·T, 3d) buffer */
    size_t nq, nkv;            /* floats of the q and k/v buffers (dq/dk/dv alike) */
    attn_args a;
} bufs;

static float *fill(size_t n, float s) {
    float *x = malloc((n ? n : 1) * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = s * test_frand(&st);
    return x;
}

static void setup(bufs *u, const tcase *c) {
    const size_t d = c->H * c->d_k;
    if (c->packed) {
        u->nq = u->nkv = c->B * c->T * 3 * d;
        u->q = fill(u->nq, 1.5f);
        u->k = u->q + d, u->v = u->q + 2 * d;
        u->a = attn_args_make(KERN, c->B, c->T, c->S, c->H, c->d_k, 3 * d, 3 * d);
    } else {
        u->nq = c->B * c->T * d, u->nkv = c->B * c->S * 2 * d;
        u->q = fill(u->nq, 1.5f);
        u->k = fill(u->nkv, 1.5f);
        u->v = u->k + d;
        u->a = attn_args_make(KERN, c->B, c->T, c->S, c->H, c->d_k, d, 2 * d);
    }
    u->dout = fill(c->B * c->T * d, 1.0f);
    attn_args *a = &u->a;
    a->causal = c->causal;
    a->q_pos0 = c->q_pos0;
    u->pad = calloc(c->B * c->S, 1);
    if (c->pad) {
        for (size_t b = 0; b < c->B; b++)
            for (size_t s = 0; s < c->S; s++)
                u->pad[b * c->S + s] = b == 1 || (b == 0 && s % 7 == 3) || (b == 2 && s >= c->S - 5);
        a->key_pad = u->pad;
    }
    u->bias = NULL;
    if (c->bias) {
        u->bias = malloc(c->H * c->T * c->S * sizeof(float));
        for (size_t h = 0; h < c->H; h++)
            for (size_t t = 0; t < c->T; t++)
                for (size_t s = 0; s < c->S; s++) {
                    const double rel = (double)(t + c->q_pos0) - (double)s;
                    u->bias[(h * c->T + t) * c->S + s] = (float)(-ldexp(1.0, -(int)(h + 1)) * fabs(rel));
                }
        a->bias = u->bias;
        a->bias_hstride = c->T * c->S;
        a->bias_tstride = c->S;
    }
    a->dropout_p = c->p;
    a->dropout_seed = 0xD1CEu + (uint64_t)c->T;
}

/* Runs one path: *out, and dq, dk, dv accumulated onto the same non-zero start, in *gq (the dq buffer;
 * packed: dQ|dK|dV) and *gkv (the dK|dV buffer; packed: == *gq). */
static void run(bufs *u, const tcase *c, int fused, float **out, float **gq_buf, float **gkv_buf) {
    const size_t d = c->H * c->d_k, nbhts = c->B * c->H * c->T * c->S;
    *out = malloc(c->B * c->T * d * sizeof(float));
    uint64_t keep = st;
    st = 0x5EEDu; /* the same starting gradients for both paths */
    float *g1 = fill(u->nq, 0.25f), *g2 = c->packed ? g1 : fill(u->nkv, 0.25f);
    st = keep;
    float *gq = g1, *gk = c->packed ? g1 + d : g2, *gv = c->packed ? g1 + 2 * d : g2 + d;
    if (fused) {
        const int slots = 2;
        float *ws = malloc(attn_fused_workspace_floats(c->T, c->S, slots) * sizeof(float));
        float *lse = malloc((c->B * c->H * c->T + 1) * sizeof(float));
        attn_fused_forward(*out, lse, u->q, u->k, u->v, &u->a, ws, slots);
        attn_fused_backward(gq, gk, gv, u->dout, *out, lse, u->q, u->k, u->v, &u->a, ws, slots);
        if (c->pad) /* batch row 1 sees no key: lse +∞, a zero output */
            for (size_t h = 0; h < c->H; h++)
                for (size_t t = 0; t < c->T; t++) {
                    const float L = lse[(1 * c->H + h) * c->T + t];
                    CHECK(isinf(L) && L > 0, "%s: fully padded row (1, %zu, %zu): lse %g, want +inf", c->name, h, t,
                          (double)L);
                }
        free(ws);
        free(lse);
    } else {
        float *P = malloc((nbhts + 1) * sizeof(float)), *Pd = malloc((nbhts + 1) * sizeof(float));
        float *dS = malloc((nbhts + 1) * sizeof(float));
        attn_forward(*out, P, c->p > 0 ? Pd : NULL, u->q, u->k, u->v, &u->a);
        attn_backward(gq, gk, gv, dS, u->dout, P, c->p > 0 ? Pd : NULL, u->q, u->k, u->v, &u->a);
        free(P), free(Pd), free(dS);
    }
    *gq_buf = g1, *gkv_buf = g2;
}

static void run_case(const tcase *c) {
    bufs u;
    setup(&u, c);
    const size_t d = c->H * c->d_k, nout = c->B * c->T * d;
    float *o_ref, *q_ref, *k_ref, *o_f, *q_f, *k_f;
    run(&u, c, 0, &o_ref, &q_ref, &k_ref);
    run(&u, c, 1, &o_f, &q_f, &k_f);
    compare(c->name, "output", o_f, o_ref, nout);
    for (size_t i = 0; i < nout; i++) CHECK(!isnan(o_f[i]), "%s: NaN in the output", c->name);
    if (c->packed) {
        compare(c->name, "dQ|dK|dV", q_f, q_ref, u.nq);
    } else {
        compare(c->name, "dQ", q_f, q_ref, u.nq);
        compare(c->name, "dK|dV", k_f, k_ref, u.nkv);
    }
    if (c->pad) /* batch row 1: every key padded, so its queries get no gradient beyond the start */
        for (size_t t = 0; t < c->T; t++)
            for (size_t cc = 0; cc < d; cc++) {
                const size_t i = (1 * c->T + t) * (c->packed ? 3 * d : d) + cc;
                CHECK(q_f[i] == q_ref[i] && o_f[(1 * c->T + t) * d + cc] == 0.0f,
                      "%s: a fully padded row changed dQ or has a non-zero output", c->name);
            }

    /* the same numbers, bit for bit, on 1 and 2 threads */
    float *o1, *q1, *k1;
    tfm_set_threads(1);
    run(&u, c, 1, &o1, &q1, &k1);
    tfm_set_threads(2);
    CHECK(memcmp(o1, o_f, nout * sizeof(float)) == 0 && memcmp(q1, q_f, u.nq * sizeof(float)) == 0 &&
              (c->packed || memcmp(k1, k_f, u.nkv * sizeof(float)) == 0),
          "%s: 1 and 2 threads differ", c->name);
    free(o1), free(q1);
    if (!c->packed) free(k1);
    free(o_ref), free(q_ref), free(o_f), free(q_f);
    if (!c->packed) free(k_ref), free(k_f), free(u.k);
    free(u.q), free(u.dout), free(u.pad), free(u.bias);
}

/* test_attn_fused --bench B T H d_k p reps: the wall time of both paths' forward and backward on
 * causal self-attention of B rows of T positions (packed Q|K|V, dropout p), the best of reps, on
 * tfm_get_threads() threads: the kernels alone, for a quiet machine (docs/KERNELS.md). */
static int bench(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: test_attn_fused --bench B T H d_k p reps\n");
        return 2;
    }
    const size_t B = (size_t)atol(argv[2]), T = (size_t)atol(argv[3]), H = (size_t)atol(argv[4]),
                 dk = (size_t)atol(argv[5]), d = H * dk, n = B * H * T * T;
    const float p = (float)atof(argv[6]);
    const int reps = atoi(argv[7]), slots = tfm_get_threads();
    float *qkv = fill(B * T * 3 * d, 1.0f), *dout = fill(B * T * d, 1.0f), *out = fill(B * T * d, 0.0f);
    float *g = fill(B * T * 3 * d, 0.0f), *P = fill(n, 0.0f), *Pd = fill(n, 0.0f), *dS = fill(n, 0.0f);
    float *lse = fill(B * H * T, 0.0f), *ws = fill(attn_fused_workspace_floats(T, T, slots), 0.0f);
    attn_args a = attn_args_make(KERN, B, T, T, H, dk, 3 * d, 3 * d);
    a.causal = 1, a.dropout_p = p, a.dropout_seed = 7;
    double best[2][2] = {{1e30, 1e30}, {1e30, 1e30}};
    for (int r = 0; r < reps; r++)
        for (int f = 0; f < 2; f++) {
            const double t0 = tfm_now_s();
            if (f)
                attn_fused_forward(out, lse, qkv, qkv + d, qkv + 2 * d, &a, ws, slots);
            else
                attn_forward(out, P, p > 0 ? Pd : NULL, qkv, qkv + d, qkv + 2 * d, &a);
            const double t1 = tfm_now_s();
            if (f)
                attn_fused_backward(g, g + d, g + 2 * d, dout, out, lse, qkv, qkv + d, qkv + 2 * d, &a, ws, slots);
            else
                attn_backward(g, g + d, g + 2 * d, dS, dout, P, p > 0 ? Pd : NULL, qkv, qkv + d, qkv + 2 * d, &a);
            const double t2 = tfm_now_s();
            const double tf = t1 - t0, tb = t2 - t1;
            if (tf < best[f][0]) best[f][0] = tf;
            if (tb < best[f][1]) best[f][1] = tb;
        }
    printf("attention B %zu, T = S %zu, H %zu, d_k %zu, causal, dropout %.2f, %d threads, best of %d:\n"
           "  reference: forward %.3f ms, backward %.3f ms ([B,H,T,S] tensors: %.1f MB)\n"
           "  fused:     forward %.3f ms, backward %.3f ms (lse + workspace: %.2f MB)\n",
           B, T, H, dk, (double)p, slots, reps, best[0][0] * 1e3, best[0][1] * 1e3, 3.0 * (double)n * 4e-6,
           best[1][0] * 1e3, best[1][1] * 1e3,
           (double)(B * H * T + attn_fused_workspace_floats(T, T, slots)) * 4e-6);
    free(qkv), free(dout), free(out), free(g), free(P), free(Pd), free(dS), free(lse), free(ws);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) return bench(argc, argv);
    tfm_set_threads(2);
    static const tcase cases[] = {
        /* name                        B  T    S    H  d_k packed causal q_pos0 pad bias p */
        {"cross T<S pad", 3, 70, 150, 2, 12, 0, 0, 0, 1, 0, 0.0f},
        {"cross T<S pad dropout", 3, 70, 150, 2, 12, 0, 0, 0, 1, 0, 0.3f},
        {"cross T>S d_k 20", 2, 131, 45, 3, 20, 0, 0, 0, 0, 0, 0.0f},
        {"causal q_pos0 80", 2, 70, 150, 2, 12, 0, 1, 80, 0, 0, 0.0f},
        {"causal q_pos0 80 pad bias dropout", 3, 70, 150, 2, 12, 0, 1, 80, 1, 1, 0.3f},
        {"self packed causal pad", 3, 67, 67, 2, 9, 1, 1, 0, 1, 0, 0.0f},
        {"self packed causal bias dropout", 2, 67, 67, 2, 9, 1, 1, 0, 0, 1, 0.3f},
        {"self packed bias pad dropout", 3, 129, 129, 2, 16, 1, 0, 0, 1, 1, 0.3f},
        {"one query", 2, 1, 37, 2, 8, 0, 0, 0, 1, 1, 0.3f},
        {"2x2 tiles causal q_pos0 150 pad bias dropout", 3, 150, 300, 2, 12, 0, 1, 150, 1, 1, 0.3f},
        {"cross 2x2 tiles", 2, 200, 290, 2, 7, 0, 0, 0, 0, 0, 0.0f},
        {"self packed 3x2 tiles causal pad dropout", 3, 270, 270, 1, 9, 1, 1, 0, 1, 0, 0.3f},
        {"d_k 1", 2, 5, 7, 3, 1, 0, 1, 2, 0, 0, 0.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
    printf("largest |fused - reference| / (1 + |reference|): %.3g\n", worst);
    return test_finish("test_attn_fused");
}
