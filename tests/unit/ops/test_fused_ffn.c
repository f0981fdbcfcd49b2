/* The fused FFN kernels (src/ops/fused_ffn.c) against their reference path, the unfused kernels
 * (relu/gelu_forward, dropout_forward, linear_backward, dropout_backward, relu/gelu_backward),
 * which compute the same floats in the same order: every comparison is exact (==), values, masks
 * and gradients, for ReLU and GELU, dropout 0 and 0.1, odd sizes (F not a multiple of the column
 * block), and 1 thread against 2 (bit-identical). */
#include "ops.h"
#include "rng.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Index of the first difference of two float arrays (== compare: −0 equals +0), or n. */
static size_t first_diff(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(a[i] == b[i])) return i;
    return n;
}

static void fill(float *x, size_t n, tfm_rng *r, float scale) {
    for (size_t i = 0; i < n; i++) x[i] = scale * rng_normal(r);
}

static const char *kind_name(int kind) {
    return kind == OPS_ACT_GELU ? "GELU" : kind == OPS_ACT_SILU ? "SiLU" : "ReLU";
}

/* The reference activation kernels of activation.c, by kind. */
static void ref_forward(int kind, float *out, const float *pre, size_t n) {
    if (kind == OPS_ACT_GELU)
        gelu_forward(out, pre, n);
    else if (kind == OPS_ACT_SILU)
        silu_forward(out, pre, n);
    else
        relu_forward(out, pre, n);
}

static void ref_backward(int kind, float *dinp, const float *dout, const float *pre, size_t n) {
    if (kind == OPS_ACT_GELU)
        gelu_backward(dinp, dout, pre, n);
    else if (kind == OPS_ACT_SILU)
        silu_backward(dinp, dout, pre, n);
    else
        relu_backward(dinp, dout, pre, n);
}

/* The activation + dropout pass and its backward, fused against the reference, at N × F. */
static void act_case(size_t N, size_t F, int gelu, float p, int threads) {
    const size_t n = N * F;
    char name[96];
    snprintf(name, sizeof name, "%s p=%.1f N=%zu F=%zu threads=%d", kind_name(gelu), (double)p, N, F, threads);
    ops_set_threads(threads);
    tfm_rng r;
    rng_seed(&r, 11, (uint64_t)(N * 7 + F));
    float *pre = malloc(n * sizeof *pre), *act = malloc(n * sizeof *act), *ref = malloc(n * sizeof *ref);
    float *dact = malloc(n * sizeof *dact), *dpre = malloc(n * sizeof *dpre), *dref = malloc(n * sizeof *dref);
    float *tmp = malloc(n * sizeof *tmp), *db = malloc(F * sizeof *db), *dbref = malloc(F * sizeof *dbref);
    uint8_t *mask = malloc(n), *mref = malloc(n);
    fill(pre, n, &r, 1.0f);
    fill(dact, n, &r, 1.0f);
    for (size_t i = 0; i < F; i++) db[i] = dbref[i] = 0.5f; /* the bias gradient accumulates */
    const uint64_t seed = 0xfeedULL;
    const int drop = p > 0.0f;

    /* forward */
    ffn_act_dropout_forward(act, drop ? mask : NULL, pre, gelu, p, seed, n);
    ref_forward(gelu, ref, pre, n);
    if (drop) dropout_forward(ref, mref, ref, p, seed, n);
    size_t i = first_diff(act, ref, n);
    CHECK(i == n, "%s: forward differs at %zu: %.9g vs %.9g", name, i, (double)act[i < n ? i : 0],
          (double)ref[i < n ? i : 0]);
    if (drop) CHECK(memcmp(mask, mref, n) == 0, "%s: dropout masks differ", name);

    /* backward: fused (in place on a copy of dact) vs dropout_backward, relu/gelu_backward, bias sum */
    memcpy(dpre, dact, n * sizeof *dpre);
    ffn_act_dropout_backward(dpre, db, dpre, drop ? mask : NULL, pre, gelu, p, N, F);
    const float *g = dact;
    if (drop) {
        memset(tmp, 0, n * sizeof *tmp);
        dropout_backward(tmp, dact, mref, p, n);
        g = tmp;
    }
    memset(dref, 0, n * sizeof *dref);
    ref_backward(gelu, dref, g, pre, n);
    linear_backward(KERN, NULL, NULL, dbref, dref, NULL, NULL, N, 0, F);
    i = first_diff(dpre, dref, n);
    CHECK(i == n, "%s: backward differs at %zu: %.9g vs %.9g", name, i, (double)dpre[i < n ? i : 0],
          (double)dref[i < n ? i : 0]);
    i = first_diff(db, dbref, F);
    CHECK(i == F, "%s: bias gradient differs at %zu: %.9g vs %.9g", name, i, (double)db[i < F ? i : 0],
          (double)dbref[i < F ? i : 0]);
    free(pre), free(act), free(ref), free(dact), free(dpre), free(dref), free(tmp), free(db), free(dbref);
    free(mask), free(mref);
}

/* The whole FFN forward and backward, fused against the reference chain of backward.c's unfused
 * path; and the fused one with 1 thread against 2 threads. out/dx/parameter gradients compared. */
typedef struct {
    float *out, *pre, *act, *dx, *dw1, *db1, *dw2, *db2, *dhid;
    uint8_t *mask;
} ffn_run;

static void ffn_run_alloc(ffn_run *f, size_t N, size_t d, size_t F) {
    f->out = malloc(N * d * sizeof(float));
    f->pre = malloc(N * F * sizeof(float));
    f->act = malloc(N * F * sizeof(float));
    f->dhid = malloc(N * F * sizeof(float));
    f->mask = malloc(N * F);
    f->dx = malloc(N * d * sizeof(float));
    f->dw1 = malloc(F * d * sizeof(float));
    f->db1 = malloc(F * sizeof(float));
    f->dw2 = malloc(d * F * sizeof(float));
    f->db2 = malloc(d * sizeof(float));
    for (size_t i = 0; i < N * d; i++) f->dx[i] = 0.25f;
    for (size_t i = 0; i < F * d; i++) f->dw1[i] = f->dw2[i] = -0.125f;
    for (size_t i = 0; i < F; i++) f->db1[i] = 0.5f;
    for (size_t i = 0; i < d; i++) f->db2[i] = 0.5f;
}

static void ffn_run_free(ffn_run *f) {
    free(f->out), free(f->pre), free(f->act), free(f->dhid), free(f->mask);
    free(f->dx), free(f->dw1), free(f->db1), free(f->dw2), free(f->db2);
}

#define SAME(a, b, n, what)                                                                                     \
    do {                                                                                                        \
        size_t j_ = first_diff((a), (b), (n));                                                                  \
        CHECK(j_ == (n), "%s: %s differs at %zu: %.9g vs %.9g", name, what, j_, (double)(a)[j_ < (n) ? j_ : 0], \
              (double)(b)[j_ < (n) ? j_ : 0]);                                                                  \
    } while (0)

static void ffn_case(size_t N, size_t d, size_t F, int gelu, float p) {
    char name[96];
    snprintf(name, sizeof name, "FFN %s p=%.1f N=%zu d=%zu F=%zu", kind_name(gelu), (double)p, N, d, F);
    tfm_rng r;
    rng_seed(&r, 5, (uint64_t)(N + d + F));
    float *x = malloc(N * d * sizeof(float)), *dout = malloc(N * d * sizeof(float));
    float *w1 = malloc(F * d * sizeof(float)), *b1 = malloc(F * sizeof(float));
    float *w2 = malloc(d * F * sizeof(float)), *b2 = malloc(d * sizeof(float)), *tmp = malloc(N * F * sizeof(float));
    fill(x, N * d, &r, 1.0f), fill(dout, N * d, &r, 1.0f), fill(w1, F * d, &r, 0.3f), fill(b1, F, &r, 0.1f);
    fill(w2, d * F, &r, 0.3f), fill(b2, d, &r, 0.1f);
    const uint64_t seed = 0xabcULL;
    const int drop = p > 0.0f;
    ffn_run fz[2], rf;
    for (int t = 0; t < 2; t++) { /* fused, with 1 and 2 threads */
        ops_set_threads(t + 1);
        ffn_run *f = &fz[t];
        ffn_run_alloc(f, N, d, F);
        ffn_forward_fused(KERN, f->out, f->pre, f->act, drop ? f->mask : NULL, x, w1, b1, w2, b2, gelu, p, seed, N, d, F);
        ffn_backward_fused(KERN, f->dx, f->dw1, f->db1, f->dw2, f->db2, f->dhid, dout, x, f->pre, f->act,
                           drop ? f->mask : NULL, w1, w2, gelu, p, N, d, F);
    }
    /* reference: layer.c's and backward.c's unfused chain, 2 threads */
    ffn_run_alloc(&rf, N, d, F);
    linear_forward(KERN, rf.pre, x, w1, b1, N, d, F);
    if (gelu)
        ref_forward(gelu, rf.act, rf.pre, N * F);
    else
        relu_forward(rf.act, rf.pre, N * F);
    if (drop) dropout_forward(rf.act, rf.mask, rf.act, p, seed, N * F);
    linear_forward(KERN, rf.out, rf.act, w2, b2, N, F, d);
    memset(rf.dhid, 0, N * F * sizeof(float));
    linear_backward(KERN, rf.dhid, rf.dw2, rf.db2, dout, rf.act, w2, N, F, d);
    const float *g = rf.dhid;
    if (drop) {
        memset(tmp, 0, N * F * sizeof(float));
        dropout_backward(tmp, rf.dhid, rf.mask, p, N * F);
        g = tmp;
    }
    float *dpre = malloc(N * F * sizeof(float));
    memset(dpre, 0, N * F * sizeof(float));
    if (gelu)
        ref_backward(gelu, dpre, g, rf.pre, N * F);
    else
        relu_backward(dpre, g, rf.pre, N * F);
    linear_backward(KERN, rf.dx, rf.dw1, rf.db1, dpre, x, w1, N, d, F);

    for (int t = 0; t < 2; t++) {
        const ffn_run *f = &fz[t];
        SAME(f->out, rf.out, N * d, t ? "out (2 threads)" : "out (1 thread)");
        SAME(f->act, rf.act, N * F, t ? "hidden (2 threads)" : "hidden (1 thread)");
        if (drop) CHECK(memcmp(f->mask, rf.mask, N * F) == 0, "%s: masks differ (%d threads)", name, t + 1);
        SAME(f->dx, rf.dx, N * d, t ? "dx (2 threads)" : "dx (1 thread)");
        SAME(f->dw1, rf.dw1, F * d, t ? "dW1 (2 threads)" : "dW1 (1 thread)");
        SAME(f->db1, rf.db1, F, t ? "db1 (2 threads)" : "db1 (1 thread)");
        SAME(f->dw2, rf.dw2, d * F, t ? "dW2 (2 threads)" : "dW2 (1 thread)");
        SAME(f->db2, rf.db2, d, t ? "db2 (2 threads)" : "db2 (1 thread)");
    }
    ffn_run_free(&fz[0]), ffn_run_free(&fz[1]), ffn_run_free(&rf);
    free(x), free(dout), free(w1), free(b1), free(w2), free(b2), free(tmp), free(dpre);
}

int main(void) {
    for (int gelu = OPS_ACT_RELU; gelu <= OPS_ACT_SILU; gelu++) /* `gelu`: the OPS_ACT_* kind */
        for (int k = 0; k < 2; k++) {
            const float p = k ? 0.1f : 0.0f;
            act_case(7, 13, gelu, p, 1);     /* tiny, odd */
            act_case(67, 1031, gelu, p, 1);  /* odd sizes big enough for a parallel region */
            act_case(67, 1031, gelu, p, 2);
            ffn_case(37, 24, 131, gelu, p);   /* F past one column block, odd N */
            ffn_case(130, 64, 300, gelu, p);  /* large enough for threaded regions and tiled products */
        }
    return test_finish("test_fused_ffn");
}
