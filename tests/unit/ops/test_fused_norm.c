/* The fused residual-wrapper kernels (src/ops/fused_norm.c) against their reference path, the
 * unfused kernels (dropout_forward, residual_forward, layernorm_forward, layernorm_backward,
 * dropout_backward), which compute the same floats in the same order: every comparison is exact
 * (==), values, masks, saved statistics and gradients, post-LN and pre-LN, dropout 0 and 0.1,
 * odd sizes, and 1 thread against 2 (bit-identical). */
#include "ops.h"
#include "rng.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t first_diff(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(a[i] == b[i])) return i;
    return n;
}

static void fill(float *x, size_t n, tfm_rng *r, float scale, float shift) {
    for (size_t i = 0; i < n; i++) x[i] = shift + scale * rng_normal(r);
}

#define SAME(a, b, n, what)                                                                                     \
    do {                                                                                                        \
        size_t j_ = first_diff((a), (b), (n));                                                                  \
        CHECK(j_ == (n), "%s: %s differs at %zu: %.9g vs %.9g", name, what, j_, (double)(a)[j_ < (n) ? j_ : 0], \
              (double)(b)[j_ < (n) ? j_ : 0]);                                                                  \
    } while (0)

/* One case: N rows of C, post-LN (norm = 1) or pre-LN, dropout p, the fused kernels run with
 * `threads` threads, the reference with 2. */
static void norm_case(size_t N, size_t C, int post_ln, float p, int threads) {
    char name[96];
    snprintf(name, sizeof name, "%s p=%.1f N=%zu C=%zu threads=%d", post_ln ? "post-LN" : "pre-LN", (double)p, N, C,
             threads);
    const size_t n = N * C;
    tfm_rng r;
    rng_seed(&r, 3, (uint64_t)(n + (size_t)post_ln));
    float *x = malloc(n * sizeof(float)), *sub = malloc(n * sizeof(float)), *sub_ref = malloc(n * sizeof(float));
    float *w = malloc(C * sizeof(float)), *b = malloc(C * sizeof(float)), *dout = malloc(n * sizeof(float));
    float *res = malloc(n * sizeof(float)), *ln = malloc(n * sizeof(float)), *mean = malloc(N * sizeof(float));
    float *rstd = malloc(N * sizeof(float)), *res_r = malloc(n * sizeof(float)), *ln_r = malloc(n * sizeof(float));
    float *mean_r = malloc(N * sizeof(float)), *rstd_r = malloc(N * sizeof(float));
    float *g = malloc(n * sizeof(float)), *dsub = malloc(n * sizeof(float)), *dres_r = malloc(n * sizeof(float));
    float *dsub_r = malloc(n * sizeof(float)), *dw = malloc(C * sizeof(float)), *db = malloc(C * sizeof(float));
    float *dw_r = malloc(C * sizeof(float)), *db_r = malloc(C * sizeof(float));
    uint8_t *mask = malloc(n), *mask_r = malloc(n);
    fill(x, n, &r, 1.0f, 0.3f), fill(sub, n, &r, 2.0f, -0.1f), fill(w, C, &r, 0.2f, 1.0f), fill(b, C, &r, 0.1f, 0.0f);
    fill(dout, n, &r, 1.0f, 0.0f);
    memcpy(sub_ref, sub, n * sizeof(float));
    const uint64_t seed = 0x51deULL;
    const int drop = p > 0.0f;

    /* forward: reference (dropout in place on the sub-layer output, residual, LayerNorm) */
    ops_set_threads(2);
    if (drop) dropout_forward(sub_ref, mask_r, sub_ref, p, seed, n);
    residual_forward(res_r, x, sub_ref, n);
    if (post_ln) layernorm_forward(ln_r, mean_r, rstd_r, res_r, w, b, N, C, 1e-5f);
    ops_set_threads(threads);
    residual_dropout_layernorm_forward(res, drop ? mask : NULL, post_ln ? ln : NULL, post_ln ? mean : NULL,
                                       post_ln ? rstd : NULL, x, sub, w, b, p, seed, N, C, 1e-5f);
    SAME(res, res_r, n, "residual sum");
    if (drop) CHECK(memcmp(mask, mask_r, n) == 0, "%s: dropout masks differ", name);
    if (post_ln) {
        SAME(ln, ln_r, n, "LayerNorm output");
        SAME(mean, mean_r, N, "mean");
        SAME(rstd, rstd_r, N, "rstd");
    }

    if (post_ln) { /* backward of the post-LN exit: fused in place on a copy of dout */
        for (size_t c = 0; c < C; c++) dw[c] = dw_r[c] = 0.5f, db[c] = db_r[c] = -0.5f;
        ops_set_threads(2);
        memset(dres_r, 0, n * sizeof(float));
        layernorm_backward(dres_r, dw_r, db_r, dout, res_r, w, mean_r, rstd_r, N, C);
        const float *ds_ref = dres_r;
        if (drop) {
            memset(dsub_r, 0, n * sizeof(float));
            dropout_backward(dsub_r, dres_r, mask_r, p, n);
            ds_ref = dsub_r;
        }
        ops_set_threads(threads);
        memcpy(g, dout, n * sizeof(float));
        layernorm_dropout_backward(g, dsub, dw, db, g, res, w, mean, rstd, drop ? mask : NULL, p, N, C);
        SAME(g, dres_r, n, "LayerNorm input gradient");
        SAME(dsub, ds_ref, n, "sub-layer output gradient");
        SAME(dw, dw_r, C, "LayerNorm weight gradient");
        SAME(db, db_r, C, "LayerNorm bias gradient");
    } else if (drop) { /* pre-LN: the sub-layer's gradient through its dropout, written */
        memset(dsub_r, 0, n * sizeof(float));
        ops_set_threads(2);
        dropout_backward(dsub_r, dout, mask_r, p, n);
        ops_set_threads(threads);
        for (size_t i = 0; i < n; i++) dsub[i] = 123.0f; /* written, not accumulated */
        dropout_backward_write(dsub, dout, mask, p, n);
        SAME(dsub, dsub_r, n, "dropout gradient (written)");
    }
    free(x), free(sub), free(sub_ref), free(w), free(b), free(dout), free(res), free(ln), free(mean), free(rstd);
    free(res_r), free(ln_r), free(mean_r), free(rstd_r), free(g), free(dsub), free(dres_r), free(dsub_r);
    free(dw), free(db), free(dw_r), free(db_r), free(mask), free(mask_r);
}

int main(void) {
    for (int post = 0; post < 2; post++)
        for (int k = 0; k < 2; k++) {
            const float p = k ? 0.1f : 0.0f;
            norm_case(5, 7, post, p, 1);      /* tiny, odd */
            norm_case(97, 131, post, p, 1);   /* odd, C past two column blocks, one region */
            norm_case(301, 257, post, p, 1);  /* big enough for parallel regions */
            norm_case(301, 257, post, p, 2);
        }
    return test_finish("test_fused_norm");
}
