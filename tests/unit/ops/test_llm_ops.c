/* The language-model families' kernels (docs/LLM.md) against PyTorch / transformers 4.40.2 values
 * (NewGELUActivation, silu, LlamaRMSNorm, printed by the snippet in this file's comments) and
 * against plain loops: gelu_tanh_forward, silu_glu_forward, rmsnorm_forward, and grouped-query
 * attention (attn_args.kv_heads) — equal, bit for bit, to multi-head attention over keys and values
 * whose heads were repeated (transformers' repeat_kv), for T = 1 steps and whole sequences, causal
 * and with a KV cache's row stride.
 *
 * The reference values came from (transformers 4.40.2, torch 1.13, float32):
 *   x = torch.tensor([-3., -2., -1., -.5, 0., .25, .5, 1., 2., 3., 5.])
 *   NewGELUActivation()(x); torch.nn.functional.silu(x)
 *   n = LlamaRMSNorm(8, eps=1e-6); n.weight = W below; n(X) for the two rows X below. */
#include "ops.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const float X[11] = {-3.0f, -2.0f, -1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 1.0f, 2.0f, 3.0f, 5.0f};
static const float GELU_NEW[11] = {-0.00363743305f, -0.0454022884f, -0.158807993f, -0.154285997f, 0.0f, 0.149675354f,
                                   0.345714003f, 0.841192007f, 1.95459771f, 2.99636269f, 4.99999952f};
static const float SILU[11] = {-0.142277613f, -0.238405839f, -0.268941432f, -0.188770339f, 0.0f, 0.140544131f,
                               0.311229676f, 0.731058598f, 1.76159406f, 2.85772252f, 4.96653557f};
static const float RMS_W[8] = {1.0f, 0.5f, -2.0f, 1.5f, 0.25f, 3.0f, -1.0f, 0.75f};
static const float RMS_X[16] = {0.1f, -0.2f, 0.3f, 1.5f, -2.5f, 0.0f, 0.7f, -0.05f,
                                3.0f, 1.0f, -4.0f, 1.0f, 5.0f, -9.0f, 2.0f, 6.0f};
static const float RMS_Y[16] = {0.0935944244f, -0.0935944244f, -0.561566591f, 2.10587454f, -0.584965169f, 0.0f,
                                -0.655160964f, -0.0350979082f, 0.645123959f, 0.107520662f, 1.7203306f, 0.322561979f,
                                0.268801659f, -5.80611563f, -0.430082649f, 0.967685938f};

static void test_gelu_tanh(void) {
    float y[11];
    gelu_tanh_forward(y, X, 11);
    for (int i = 0; i < 11; i++) CHECK_NEAR(y[i], GELU_NEW[i], 2e-7 * (1.0 + fabs(GELU_NEW[i])), "gelu_new");
    /* the tanh form is not the exact GELU: they differ by up to ~4.7e-4 near x = −2.7 */
    float e[1], xm = -2.7f;
    gelu_tanh_forward(y, &xm, 1);
    gelu_forward(e, &xm, 1);
    CHECK(fabs(y[0] - e[0]) > 4e-4 && fabs(y[0] - e[0]) < 5e-4, "gelu_new − gelu at −2.7: %g", y[0] - e[0]);
}

static void test_silu_glu(void) {
    /* two rows of F = 11: gate X, up 1 (row 0) and up 2 (row 1) */
    float pre[44], out[22];
    for (int r = 0; r < 2; r++)
        for (int f = 0; f < 11; f++) {
            pre[r * 22 + f] = X[f];
            pre[r * 22 + 11 + f] = (float)(r + 1);
        }
    silu_glu_forward(out, pre, 2, 11);
    for (int f = 0; f < 11; f++) {
        CHECK_NEAR(out[f], SILU[f], 2e-7 * (1.0 + fabs(SILU[f])), "silu·1");
        CHECK_NEAR(out[11 + f], 2.0f * SILU[f], 4e-7 * (1.0 + fabs(SILU[f])), "silu·2");
    }
}

static void test_rmsnorm(void) {
    float y[16], rstd[2];
    rmsnorm_forward(y, rstd, RMS_X, RMS_W, 2, 8, 1e-6f);
    for (int i = 0; i < 16; i++) CHECK_NEAR(y[i], RMS_Y[i], 3e-7 * (1.0 + fabs(RMS_Y[i])), "rmsnorm");
    CHECK(rstd[0] > 0.0f && rstd[1] > 0.0f, "rmsnorm rstd");
}

/* GQA: H query heads over Hkv key/value heads vs MHA over the heads repeated. q (B, T, H·dk) at
 * row stride qs; k, v (B, S, Hkv·dk) at row stride kvs (a cache's), row b at b·S·kvs. */
static void test_gqa_case(size_t B, size_t T, size_t S, size_t H, size_t Hkv, size_t dk, int causal) {
    const size_t qs = H * dk + 3, kvs = Hkv * dk + 5, d = H * dk;
    float *q = malloc(B * T * qs * sizeof(float)), *k = malloc(B * S * kvs * sizeof(float));
    float *v = malloc(B * S * kvs * sizeof(float)), *kr = malloc(B * S * d * sizeof(float));
    float *vr = malloc(B * S * d * sizeof(float)), *o1 = malloc(B * T * d * sizeof(float));
    float *o2 = malloc(B * T * d * sizeof(float)), *p1 = malloc(B * H * T * S * sizeof(float));
    float *p2 = malloc(B * H * T * S * sizeof(float));
    test_fill_uniform(q, B * T * qs, 11 + T), test_fill_uniform(k, B * S * kvs, 12 + S), test_fill_uniform(v, B * S * kvs, 13);
    const size_t g = H / Hkv;
    for (size_t r = 0; r < B * S; r++) /* repeat_kv: head h of the copy is head h / g */
        for (size_t h = 0; h < H; h++) {
            memcpy(kr + r * d + h * dk, k + r * kvs + (h / g) * dk, dk * sizeof(float));
            memcpy(vr + r * d + h * dk, v + r * kvs + (h / g) * dk, dk * sizeof(float));
        }
    attn_args a = attn_args_make(KERN, B, T, S, H, dk, qs, kvs);
    a.kv_heads = Hkv;
    a.causal = causal;
    a.q_pos0 = causal ? S - T : 0;
    attn_forward(o1, p1, NULL, q, k, v, &a);
    attn_args r = attn_args_make(KERN, B, T, S, H, dk, qs, d);
    r.causal = causal;
    r.q_pos0 = a.q_pos0;
    attn_forward(o2, p2, NULL, q, kr, vr, &r);
    CHECK(memcmp(o1, o2, B * T * d * sizeof(float)) == 0 && memcmp(p1, p2, B * H * T * S * sizeof(float)) == 0,
          "GQA B %zu T %zu S %zu H %zu Hkv %zu dk %zu causal %d: differs from MHA over repeated heads", B, T, S, H, Hkv,
          dk, causal);
    /* and it is not MHA over the first Hkv·dk columns read as H heads (the mutation of ignoring
     * kv_heads would read past them) */
    if (Hkv < H) {
        double diff = 0.0;
        for (size_t i = 0; i < B * T * d; i++) diff += fabs(o1[i]);
        CHECK(diff > 0.0, "GQA output is zero");
    }
    free(q), free(k), free(v), free(kr), free(vr), free(o1), free(o2), free(p1), free(p2);
}

int main(void) {
    test_gelu_tanh();
    test_silu_glu();
    test_rmsnorm();
    const size_t cases[][4] = {{4, 2, 8, 0}, {4, 1, 8, 0}, {8, 2, 16, 1}, {6, 3, 4, 1}, {4, 4, 8, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const size_t H = cases[c][0], Hkv = cases[c][1], dk = cases[c][2];
        test_gqa_case(2, 1, 9, H, Hkv, dk, 1);  /* a decoding step on a cache */
        test_gqa_case(2, 7, 7, H, Hkv, dk, 1);  /* a whole causal sequence */
        test_gqa_case(3, 5, 11, H, Hkv, dk, 0); /* bidirectional, S != T */
    }
    return test_finish("llm_ops");
}
