/* attn_forward's positions: queries [q0, q0 + T) of a sequence, attending over a KV cache that
 * holds keys [0, q0 + T) (q_pos0 = q0, kv_bstride = capacity·kv_stride), give exactly the rows
 * q0.. of the whole-sequence call — causal or not, with key padding, an additive bias and relative
 * key/value embeddings (Shaw et al. 2018: offsets from absolute positions) — for
 * one new position (T = 1, the matrix–vector path) and for blocks of several. This is what lets a
 * cached decode step run the same layer code as the batched pass. */
#include "ops.h"
#include "test_util.h"

#include <stdint.h>

enum { B = 3, H = 2, DK = 4, D = H * DK, L = 6, CAP = 9 };

static uint64_t st = 0x9E3779B97F4A7C15ULL;

/* whole sequence: packed Q|K|V (B·L, 3d); cache: K and V copied into (B, CAP, d) buffers */
static float qkv[B * L * 3 * D], kc[B * CAP * D], vc[B * CAP * D];
static float bias[H * L * L]; /* shared by the batch: bias[h, t, s] (a relative-position table) */
static uint8_t pad[B * L];
/* relative key/value embeddings (Shaw et al. 2018), clip 2 < L: offsets past ±2 share the edge rows;
 * with use_rel set, every call of run_case gets them (positions q_pos0 + t and s, as in the cache) */
enum { RELK = 2, RELR = 2 * RELK + 1 };
static float rel_k[RELR * DK], rel_v[RELR * DK];
static int use_rel;
static void set_rel(attn_args *a) {
    if (!use_rel) return;
    a->rel_k = rel_k;
    a->rel_v = rel_v;
    a->rel_clip = RELK;
}

static void run_case(const char *name, int causal, int use_bias, int use_pad) {
    float out_full[B * L * D], probs_full[B * H * L * L];
    attn_args a = attn_args_make(KERN, B, L, L, H, DK, 3 * D, 3 * D);
    a.causal = causal;
    a.key_pad = use_pad ? pad : NULL;
    if (use_bias) {
        a.bias = bias;
        a.bias_hstride = L * L;
        a.bias_tstride = L;
    }
    set_rel(&a);
    attn_forward(out_full, probs_full, NULL, qkv, qkv + D, qkv + 2 * D, &a);
    for (size_t i = 0; i < B * L * D; i++) CHECK(!isnan(out_full[i]), "%s: NaN in the whole-sequence output", name);

    /* blocks of new positions [q0, q0 + T) against the cache, as a decoder consumes them */
    static const size_t blocks[][2] = {{0, 1}, {1, 1}, {2, 3}, {5, 1}, {0, 6}, {3, 2}};
    for (size_t c = 0; c < sizeof blocks / sizeof blocks[0]; c++) {
        const size_t q0 = blocks[c][0], T = blocks[c][1], S = q0 + T;
        if (!causal && S < L) continue; /* without the causal mask a query sees later keys too */
        float q[B * 6 * D], out[B * 6 * D], probs[B * H * 6 * L];
        for (size_t b = 0; b < B; b++)
            for (size_t t = 0; t < T; t++)
                memcpy(q + (b * T + t) * D, qkv + (b * L + q0 + t) * 3 * D, D * sizeof(float));
        attn_args s = attn_args_make(KERN, B, T, S, H, DK, D, D);
        s.kv_bstride = CAP * D;
        s.q_pos0 = q0;
        s.causal = causal;
        s.key_pad = use_pad ? pad : NULL;
        s.key_pad_bstride = L;
        if (use_bias) {
            s.bias = bias + q0 * L; /* rows q0.. of the table, keys 0..S-1 */
            s.bias_hstride = L * L;
            s.bias_tstride = L;
        }
        set_rel(&s);
        attn_forward(out, probs, NULL, q, kc, vc, &s);
        double err = 0.0;
        for (size_t b = 0; b < B; b++)
            for (size_t t = 0; t < T; t++)
                for (size_t j = 0; j < D; j++) {
                    double e = fabs((double)out[(b * T + t) * D + j] - (double)out_full[(b * L + q0 + t) * D + j]);
                    if (!(e <= err)) err = isnan(e) ? INFINITY : e;
                }
        CHECK(err <= 1e-6, "%s: queries [%zu, %zu) against the cache differ from the whole sequence by %.3g", name, q0,
              q0 + T, err);
    }
}

int main(void) {
    for (size_t i = 0; i < sizeof qkv / sizeof qkv[0]; i++) qkv[i] = 1.5f * test_frand(&st);
    for (size_t i = 0; i < sizeof bias / sizeof bias[0]; i++) bias[i] = 2.0f * test_frand(&st);
    for (size_t i = 0; i < sizeof kc / sizeof kc[0]; i++) kc[i] = vc[i] = NAN; /* unused slots: never read */
    for (size_t b = 0; b < B; b++)
        for (size_t s = 0; s < L; s++) {
            memcpy(kc + (b * CAP + s) * D, qkv + (b * L + s) * 3 * D + D, D * sizeof(float));
            memcpy(vc + (b * CAP + s) * D, qkv + (b * L + s) * 3 * D + 2 * D, D * sizeof(float));
        }
    /* row 1: key 0 padded (its query 0 sees nothing under the causal mask); row 2: keys 4, 5 */
    pad[1 * L + 0] = 1;
    pad[2 * L + 4] = pad[2 * L + 5] = 1;
    run_case("causal", 1, 0, 0);
    run_case("causal + bias", 1, 1, 0);
    run_case("causal + bias + padding", 1, 1, 1);
    run_case("bidirectional + bias + padding", 0, 1, 1);
    for (size_t i = 0; i < RELR * DK; i++) rel_k[i] = 1.5f * test_frand(&st), rel_v[i] = 1.5f * test_frand(&st);
    use_rel = 1;
    run_case("causal + relative keys/values + padding", 1, 0, 1);
    run_case("bidirectional + bias + relative keys/values + padding", 0, 1, 1);
    return test_finish("attn_cache");
}
