/* Forward kernels against small cases computed by hand (or by the formula in double here). */
#include "ops.h"
#include "test_util.h"

#include <stdint.h>

static void softmax_cases(void) {
    float x[3] = {1.0f, 2.0f, 3.0f};
    softmax_row_masked(x, NULL, 3, 3);
    double z = exp(1.0) + exp(2.0) + exp(3.0);
    CHECK_NEAR(x[0], exp(1.0) / z, 1e-7, "softmax[0]");
    CHECK_NEAR(x[2], exp(3.0) / z, 1e-7, "softmax[2]");

    float y[3] = {1.0f, 2.0f, 3.0f};
    uint8_t mask[3] = {0, 1, 0};
    softmax_row_masked(y, mask, 3, 3);
    CHECK_NEAR(y[1], 0.0, 0.0, "masked entry is 0");
    CHECK_NEAR(y[0], exp(1.0) / (exp(1.0) + exp(3.0)), 1e-7, "masked softmax[0]");

    float c[3] = {5.0f, -1.0f, 9.0f}; /* causal limit 2: entry 2 excluded */
    softmax_row_masked(c, NULL, 3, 2);
    CHECK_NEAR(c[2], 0.0, 0.0, "causal entry is 0");
    CHECK_NEAR(c[0], exp(6.0) / (exp(6.0) + 1.0), 1e-7, "causal softmax[0]");

    float all[2] = {1.0f, 2.0f};
    uint8_t full[2] = {1, 1};
    int live = softmax_row_masked(all, full, 2, 2);
    CHECK(live == 0 && all[0] == 0.0f && all[1] == 0.0f, "fully masked row must be zeros, got %g %g", all[0], all[1]);

    float big[2] = {1000.0f, 0.0f}; /* max subtraction keeps it finite */
    softmax_row_masked(big, NULL, 2, 2);
    CHECK(big[0] == 1.0f && big[1] == 0.0f, "softmax of large logits: %g %g", big[0], big[1]);

    float lg[3] = {1.0f, 2.0f, 3.0f}, out[3];
    log_softmax_forward(out, lg, 1, 3);
    CHECK_NEAR(out[1], 2.0 - log(z), 1e-6, "log_softmax[1]");
}

static void layernorm_case(void) {
    const float x[4] = {1, 2, 3, 4}, w[4] = {1, 2, 0.5f, 1}, b[4] = {0, 0.5f, 0, -1};
    float out[4], mean, rstd;
    layernorm_forward(out, &mean, &rstd, x, w, b, 1, 4, 1e-5f);
    /* mean 2.5, biased variance 1.25 */
    double r = 1.0 / sqrt(1.25 + 1e-5);
    CHECK_NEAR(mean, 2.5, 1e-7, "layernorm mean");
    CHECK_NEAR(rstd, r, 1e-6, "layernorm rstd");
    for (int i = 0; i < 4; i++) CHECK_NEAR(out[i], (x[i] - 2.5) * r * w[i] + b[i], 1e-6, "layernorm out");
}

/* One batch, two heads of d_k = 2, T = 2 queries, S = 3 keys, key 2 padded; checked against the
 * formula evaluated in double. Then a query row with every key masked gives zeros. */
static void attention_case(void) {
    enum { T = 2, S = 3, H = 2, DK = 2, D = H * DK };
    float q[T * D], k[S * D], v[S * D];
    for (int i = 0; i < T * D; i++) q[i] = (float)sin(0.7 * i + 0.1);
    for (int i = 0; i < S * D; i++) k[i] = (float)cos(0.3 * i - 0.2), v[i] = (float)(0.5 * i - 1.0);
    uint8_t pad[S] = {0, 0, 1};
    float out[T * D], probs[H * T * S];
    attn_args a = attn_args_make(KERN, 1, T, S, H, DK, D, D);
    a.key_pad = pad;
    attn_forward(out, probs, NULL, q, k, v, &a);
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++) {
            double sc[S], z = 0.0;
            for (int s = 0; s < S; s++) {
                sc[s] = 0.0;
                for (int c = 0; c < DK; c++) sc[s] += (double)q[t * D + h * DK + c] * k[s * D + h * DK + c];
                sc[s] = pad[s] ? 0.0 : exp(sc[s] / sqrt((double)DK));
                z += sc[s];
            }
            for (int c = 0; c < DK; c++) {
                double o = 0.0;
                for (int s = 0; s < S; s++) o += sc[s] / z * v[s * D + h * DK + c];
                CHECK_NEAR(out[t * D + h * DK + c], o, 1e-6, "attention output");
            }
            CHECK_NEAR(probs[(h * T + t) * S + 2], 0.0, 0.0, "padded key weight");
        }
    uint8_t all[S] = {1, 1, 1};
    a.key_pad = all;
    attn_forward(out, probs, NULL, q, k, v, &a);
    int zero = 1;
    for (int i = 0; i < T * D; i++) zero &= out[i] == 0.0f;
    CHECK(zero, "a query whose keys are all masked must give a zero output row");
    /* causal: query 0 sees only key 0, so its output is exactly v[0] */
    a.key_pad = NULL;
    a.causal = 1;
    attn_forward(out, probs, NULL, q, k, v, &a);
    for (int c = 0; c < D; c++) CHECK_NEAR(out[c], v[c], 1e-6, "causal query 0 = v[0]");
}

static void pe_case(void) {
    enum { T = 3, D = 6 };
    float x[T * D] = {0};
    const pe_sinusoid_opts paper = {0, 0, 1.0, 0};
    pe_sinusoidal_add(x, 1, T, D, 0, &paper);
    CHECK_NEAR(x[0], 0.0, 1e-7, "PE(0, 0) = sin 0");
    CHECK_NEAR(x[1], 1.0, 1e-7, "PE(0, 1) = cos 0");
    CHECK_NEAR(x[D + 0], sin(1.0), 1e-7, "PE(1, 0) = sin 1");
    CHECK_NEAR(x[D + 1], cos(1.0), 1e-7, "PE(1, 1) = cos 1");
    /* both components of pair i use the exponent 2i/d (the seed's 2i+1 in the cosine is a typo) */
    CHECK_NEAR(x[2 * D + 3], cos(2.0 / pow(10000.0, 2.0 / D)), 1e-7, "PE(2, 3) = cos(2 / 10000^(2/d))");
    CHECK_NEAR(x[2 * D + 4], sin(2.0 / pow(10000.0, 4.0 / D)), 1e-7, "PE(2, 4)");
    float far[D] = {0}; /* positions past any table are computed, not wrapped */
    pe_sinusoidal_add(far, 1, 1, D, 100000, &paper);
    CHECK_NEAR(far[0], sin(100000.0), 1e-6, "PE(100000, 0)");
    CHECK_NEAR(far[5], cos(100000.0 / pow(10000.0, 4.0 / D)), 1e-6, "PE(100000, 5)");
}

static void small_ops(void) {
    float g[3] = {-1.0f, 0.0f, 1.0f}, o[3];
    gelu_forward(o, g, 3);
    CHECK_NEAR(o[2], 0.8413447460685429, 1e-6, "gelu(1) exact erf form");
    CHECK_NEAR(o[0], -0.15865525393145707, 1e-6, "gelu(-1)");
    relu_forward(o, g, 3);
    CHECK(o[0] == 0.0f && o[2] == 1.0f, "relu");
    const float in[2 * 3] = {1, 2, 3, 4, 5, 6}, w[2 * 3] = {1, 0, -1, 0.5f, 0.5f, 0.5f}, b[2] = {10, 20};
    float y[4];
    linear_forward(KERN, y, in, w, b, 2, 3, 2);
    CHECK_NEAR(y[0], 1 - 3 + 10, 1e-6, "linear[0,0]");
    CHECK_NEAR(y[3], 0.5 * 15 + 20, 1e-6, "linear[1,1]");
    const float table[3 * 2] = {1, 2, 3, 4, 5, 6};
    const int32_t ids[2] = {2, 0};
    float e[4];
    embedding_forward(e, ids, table, 2.0f, 2, 2);
    CHECK(e[0] == 10.0f && e[1] == 12.0f && e[2] == 2.0f && e[3] == 4.0f, "embedding × scale");
}

/* The scalar definition row_argmax must reproduce (ops.h): first index of the largest, NaN never
 * chosen, 0 when x[0] is NaN. */
static size_t argmax_scalar(const float *x, size_t n) {
    size_t best = 0;
    for (size_t j = 1; j < n; j++)
        if (x[j] > x[best]) best = j;
    return best;
}

/* row_argmax against the scalar scan on rows of every length 1..80 (vector bodies and tails), with
 * ties, NaN (first entry included), ±0, ±∞, rows of −∞; the lse of a row with NaN or +∞ is NaN. */
static void argmax_cases(void) {
    uint64_t st = 7;
    float x[80];
    int bad = 0, rows = 0;
    for (size_t n = 1; n <= 80; n++)
        for (int rep = 0; rep < 40; rep++) {
            for (size_t j = 0; j < n; j++) {
                const float u = test_frand(&st);
                x[j] = rep % 4 == 0 ? (float)(int)(3.0f * u) : u; /* every 4th row: many ties */
            }
            const size_t at = (size_t)((test_frand(&st) + 1.0f) * 0.5f * (float)n) % n;
            switch (rep % 8) {
            case 1: x[at] = NAN; break;
            case 2: x[0] = NAN; break;
            case 3: x[at] = -INFINITY; break;
            case 4: for (size_t j = 0; j < n; j++) x[j] = -INFINITY; break; /* clang: lanes start at -FLT_MAX */
            case 5: x[at] = INFINITY; break;
            case 6: /* only zeros of both signs, and -inf */
                for (size_t j = 0; j < n; j++) x[j] = j % 3 == 0 ? -0.0f : j % 3 == 1 ? 0.0f : -INFINITY;
                break;
            case 7: for (size_t j = 0; j < n; j++) x[j] = NAN; break;
            default: break;
            }
            rows++;
            if (row_argmax(x, n) != argmax_scalar(x, n)) {
                if (bad++ < 3) CHECK(0, "row_argmax: n %zu rep %d: %zu, the scalar scan %zu", n, rep, row_argmax(x, n),
                                     argmax_scalar(x, n));
            }
        }
    CHECK(bad == 0, "row_argmax differs from the scalar scan on %d of %d rows", bad, rows);
    CHECK(row_argmax(x, 0) == 0, "row_argmax of an empty row");
    float lse[2];
    float r[2 * 40];
    for (int j = 0; j < 80; j++) r[j] = (float)j * 0.1f;
    r[17] = NAN, r[40 + 33] = INFINITY;
    log_softmax_lse(lse, r, NULL, 2, 40);
    CHECK(isnan(lse[0]) && isnan(lse[1]), "lse of a row with NaN %g, with +inf %g: want NaN", lse[0], lse[1]);
}

int main(void) {
    softmax_cases();
    layernorm_case();
    attention_case();
    pe_case();
    small_ops();
    argmax_cases();
    return test_finish("ops_forward");
}
