/* Sampling and generation (include/tfm/generate.h, docs/LM.md):
 *  - tfm_sample_token on known distributions: greedy at T = 0 (ties to the lowest id, pad and BOS
 *    never chosen); top-k = 1 == greedy; top-p → 0 == greedy and top-p = 1 == the full
 *    distribution; top-k and top-p truncate and renormalise exactly; the same (seed, step) gives
 *    the same draw and other steps differ;
 *  - temperature: 40,000 draws from p ∝ q^(1/T) for T = 0.5, 1, 2 — each token's frequency within
 *    5 standard deviations of its probability (deterministic: the draws are a function of the seed);
 *  - tfm_generate on the golden decoder-only model (tests/golden/lm_pre_tied): the same seed gives
 *    the same tokens, the KV cache gives what recomputing the prefix gives (sampled and greedy),
 *    top-k = 1 equals greedy, the callback can stop it, max_len bounds it, bad arguments fail. */
#include "test_util.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define V 8

static tfm_config small_cfg(void) {
    tfm_config c = tfm_config_default();
    c.src_vocab = c.tgt_vocab = V; /* pad 0, bos 1, eos 2 */
    return c;
}

/* logits = ln q for a fixed q over ids 2..7 (pad and BOS get large logits: they must be ignored) */
static const double Q[V] = {0, 0, 0.05, 0.30, 0.10, 0.25, 0.18, 0.12};

static void fill_logits(float *z) {
    for (int i = 0; i < V; i++) z[i] = Q[i] > 0 ? (float)log(Q[i]) : 10.0f;
}

static void test_truncation(void) {
    const tfm_config mc = small_cfg();
    int32_t scratch[V];
    float z[V];
    tfm_sample_config sc = tfm_sample_config_default();
    /* greedy: the most likely of the allowed ids; the ids after it in a tie lose */
    sc.temperature = 0.0f;
    fill_logits(z);
    CHECK(tfm_sample_token(&sc, &mc, z, V, 0, scratch) == 3, "greedy picks id 3");
    float tie[V] = {0, 0, 1, 5, 1, 5, 2, 2};
    CHECK(tfm_sample_token(&sc, &mc, tie, V, 0, scratch) == 3, "greedy ties go to the lowest id");
    /* top-k = 1 and top-p → 0 are greedy for every seed and step */
    for (uint64_t step = 0; step < 200; step++) {
        tfm_sample_config k1 = {1.0f, 1, 1.0f, 99}, p0 = {1.0f, 0, 1e-6f, 99};
        fill_logits(z);
        int a = tfm_sample_token(&k1, &mc, z, V, step, scratch);
        fill_logits(z);
        int b = tfm_sample_token(&p0, &mc, z, V, step, scratch);
        CHECK(a == 3 && b == 3, "step %llu: top-k 1 gave %d, top-p 1e-6 gave %d (want the greedy 3)",
              (unsigned long long)step, a, b);
    }
    /* top-p = 1, top-k = 0: the full distribution, pad and BOS at 0 */
    fill_logits(z);
    tfm_sample_token(&sc, &mc, z, V, 0, scratch);
    sc.temperature = 1.0f;
    fill_logits(z);
    tfm_sample_token(&sc, &mc, z, V, 0, scratch);
    for (int i = 0; i < V; i++) CHECK(fabs(z[i] - Q[i]) < 1e-6, "full distribution: p[%d] = %g, want %g", i, z[i], Q[i]);
    /* top-k = 3: {3, 5, 6} renormalised */
    sc.top_k = 3;
    fill_logits(z);
    tfm_sample_token(&sc, &mc, z, V, 0, scratch);
    const double k3 = Q[3] + Q[5] + Q[6];
    for (int i = 0; i < V; i++) {
        const double want = (i == 3 || i == 5 || i == 6) ? Q[i] / k3 : 0.0;
        CHECK(fabs(z[i] - want) < 1e-6, "top-k 3: p[%d] = %g, want %g", i, z[i], want);
    }
    /* top-p = 0.6: 0.30 + 0.25 = 0.55 < 0.6, + 0.18 reaches it: {3, 5, 6}; top-p = 0.55 exactly
     * the first two (the cumulative sum reaches p) */
    sc.top_k = 0;
    sc.top_p = 0.6f;
    fill_logits(z);
    tfm_sample_token(&sc, &mc, z, V, 0, scratch);
    CHECK(z[3] > 0 && z[5] > 0 && z[6] > 0 && z[7] == 0 && z[4] == 0 && z[2] == 0, "top-p 0.6 keeps {3, 5, 6}");
    sc.top_p = 0.5f;
    fill_logits(z);
    tfm_sample_token(&sc, &mc, z, V, 0, scratch);
    CHECK(fabs(z[3] - 0.30 / 0.55) < 1e-6 && fabs(z[5] - 0.25 / 0.55) < 1e-6 && z[6] == 0,
          "top-p 0.5 keeps {3, 5}: %g %g %g", z[3], z[5], z[6]);
    /* top-k then top-p measures the nucleus on what top-k kept, renormalised (Hugging Face's
     * warpers): top-k 2 keeps {3, 5} = 0.55; 0.30 / 0.55 = 0.545 reaches top-p 0.5 alone */
    sc.top_k = 2;
    sc.top_p = 0.5f;
    fill_logits(z);
    tfm_sample_token(&sc, &mc, z, V, 0, scratch);
    CHECK(fabs(z[3] - 1.0) < 1e-6 && z[5] == 0, "top-k 2 + top-p 0.5 keeps {3} only: %g %g", z[3], z[5]);
    sc.top_k = 0;
    /* a subnormal temperature is (nearly) greedy, never NaN and never pad */
    tfm_sample_config tiny = {1e-40f, 0, 1.0f, 5};
    for (uint64_t step = 0; step < 20; step++) {
        fill_logits(z);
        const int y = tfm_sample_token(&tiny, &mc, z, V, step, scratch);
        CHECK(y == 3 && fabs(z[3] - 1.0) < 1e-6, "temperature 1e-40, step %llu: drew %d, p[3] = %g",
              (unsigned long long)step, y, z[3]);
    }
    /* reproducible: a draw is a function of (seed, step) */
    tfm_sample_config a = {1.0f, 0, 1.0f, 7}, b = a;
    b.seed = 8;
    int same = 1, diff_seed = 0;
    for (uint64_t step = 0; step < 100; step++) {
        float z1[V], z2[V], z3[V];
        fill_logits(z1);
        fill_logits(z2);
        fill_logits(z3);
        int x = tfm_sample_token(&a, &mc, z1, V, step, scratch), y = tfm_sample_token(&a, &mc, z2, V, step, scratch);
        int w = tfm_sample_token(&b, &mc, z3, V, step, scratch);
        same &= x == y;
        diff_seed += x != w;
        CHECK(x >= 2, "step %llu drew pad or BOS (%d)", (unsigned long long)step, x);
    }
    CHECK(same, "the same (seed, step) drew different tokens");
    CHECK(diff_seed > 20, "seeds 7 and 8 differ in only %d of 100 draws", diff_seed);
}

/* Frequencies of N draws with temperature T against p ∝ q^(1/T). */
static void test_temperature(float T) {
    const tfm_config mc = small_cfg();
    enum { N = 40000 };
    int32_t scratch[V];
    int count[V] = {0};
    tfm_sample_config sc = {T, 0, 1.0f, 12345};
    for (int n = 0; n < N; n++) {
        float z[V];
        fill_logits(z);
        count[tfm_sample_token(&sc, &mc, z, V, (uint64_t)n, scratch)]++;
    }
    double norm = 0.0;
    for (int i = 2; i < V; i++) norm += pow(Q[i], 1.0 / T);
    double worst = 0.0;
    for (int i = 0; i < V; i++) {
        const double p = i >= 2 ? pow(Q[i], 1.0 / T) / norm : 0.0, f = (double)count[i] / N;
        const double sd = sqrt(p * (1.0 - p) / N), z = sd > 0 ? fabs(f - p) / sd : (f == 0 ? 0 : INFINITY);
        CHECK(z <= 5.0, "T = %g: id %d drawn %.4f of the time, p = %.4f (%.1f sd)", (double)T, i, f, p, z);
        if (z > worst) worst = z;
    }
    printf("temperature %g: %d draws, worst deviation %.2f sd\n", (double)T, N, worst);
}

typedef struct {
    int n, stop_after;
} counter;

static int count_tokens(int32_t id, void *user) {
    (void)id;
    counter *c = user;
    return ++c->n >= c->stop_after;
}

static void test_generate(void) {
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    CHECK(tfm_model_load(test_path("tests/golden/lm_pre_tied/model.safetensors"), &m) == TFM_OK &&
              tfm_context_create(m, &ctx) == TFM_OK,
          "load: %s", tfm_last_error());
    if (!ctx) {
        tfm_model_free(m);
        return;
    }
    const tfm_config *c = tfm_model_config(m);
    const int32_t prompt[3] = {5, 9, 4};
    int32_t a[64], b[64];
    int na = -1, nb = -1;
    /* sampled: same seed → same tokens; cache == recompute */
    tfm_sample_config sc = {1.0f, 0, 1.0f, 0};
    /* this random model often says EOS early: the first seed that writes at least 8 tokens */
    for (na = 0; sc.seed < 100 && na < 8; sc.seed++)
        CHECK(tfm_generate(ctx, &sc, prompt, 3, 20, 1, a, 64, &na, NULL, NULL) == TFM_OK, "generate: %s",
              tfm_last_error());
    sc.seed--;
    CHECK(na >= 8, "no seed below 100 writes 8 tokens");
    CHECK(tfm_generate(ctx, &sc, prompt, 3, 20, 1, a, 64, &na, NULL, NULL) == TFM_OK, "generate: %s", tfm_last_error());
    CHECK(tfm_generate(ctx, &sc, prompt, 3, 20, 0, b, 64, &nb, NULL, NULL) == TFM_OK, "recompute: %s", tfm_last_error());
    CHECK(na == nb && na > 0 && memcmp(a, b, sizeof(int32_t) * (size_t)na) == 0,
          "sampled: cache (%d tokens) != recompute (%d tokens)", na, nb);
    CHECK(tfm_generate(ctx, &sc, prompt, 3, 20, 1, b, 64, &nb, NULL, NULL) == TFM_OK && nb == na &&
              memcmp(a, b, sizeof(int32_t) * (size_t)na) == 0,
          "the same seed gave different tokens");
    for (int i = 0; i < na; i++) CHECK(a[i] > c->eos_id && a[i] < c->tgt_vocab, "token %d is %d", i, a[i]);
    /* greedy: cache == recompute, and top-k 1 at any temperature == greedy */
    tfm_sample_config g = {0.0f, 0, 1.0f, 1}, k1 = {1.5f, 1, 1.0f, 77};
    CHECK(tfm_generate(ctx, &g, prompt, 3, 25, 1, a, 64, &na, NULL, NULL) == TFM_OK &&
              tfm_generate(ctx, &g, prompt, 3, 25, 0, b, 64, &nb, NULL, NULL) == TFM_OK && na == nb &&
              memcmp(a, b, sizeof(int32_t) * (size_t)na) == 0,
          "greedy: cache (%d) != recompute (%d)", na, nb);
    CHECK(tfm_generate(ctx, &k1, prompt, 3, 25, 1, b, 64, &nb, NULL, NULL) == TFM_OK && na == nb &&
              memcmp(a, b, sizeof(int32_t) * (size_t)na) == 0,
          "top-k 1 (%d tokens) != greedy (%d tokens)", nb, na);
    /* the callback stops it; max_len bounds it (positions read stay below max_len) */
    counter cnt = {0, 4};
    CHECK(tfm_generate(ctx, &sc, prompt, 3, 20, 1, a, 64, &na, count_tokens, &cnt) == TFM_OK && na == 4 && cnt.n == 4,
          "stopped by the callback after %d tokens (want 4)", na);
    int32_t big[64];
    tfm_sample_config hot = {3.0f, 0, 1.0f, 5};
    CHECK(tfm_generate(ctx, &hot, prompt, 3, 1000, 1, big, 64, &na, NULL, NULL) == TFM_OK && na <= c->max_len - 3,
          "%d tokens after a 3-token prompt with max_len %d", na, c->max_len);
    /* bad arguments */
    const int32_t bad_prompt[1] = {c->tgt_vocab};
    CHECK(tfm_generate(ctx, &sc, bad_prompt, 1, 5, 1, a, 64, &na, NULL, NULL) == TFM_ERR_RANGE,
          "a prompt id outside the vocabulary");
    tfm_sample_config bad = {-1.0f, 0, 1.0f, 1};
    CHECK(tfm_generate(ctx, &bad, prompt, 3, 5, 1, a, 64, &na, NULL, NULL) == TFM_ERR_INVALID_ARG &&
              strstr(tfm_last_error(), "temperature"),
          "a negative temperature: %s", tfm_last_error());
    bad = (tfm_sample_config){1.0f, 0, 0.0f, 1};
    CHECK(tfm_sample_config_validate(&bad) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "top_p"), "top_p 0");
    tfm_context_free(ctx);
    tfm_model_free(m);
    /* an encoder-decoder model is refused */
    tfm_config ed = tfm_config_default();
    ed.d_model = 8;
    ed.n_heads = 2;
    ed.d_ff = 8;
    ed.src_vocab = ed.tgt_vocab = 10;
    CHECK(tfm_model_create(&ed, 1, &m) == TFM_OK && tfm_context_create(m, &ctx) == TFM_OK, "ed model");
    CHECK(tfm_generate(ctx, &sc, prompt, 3, 5, 1, a, 64, &na, NULL, NULL) == TFM_ERR_INVALID_ARG &&
              strstr(tfm_last_error(), "decoder-only"),
          "generate on an encoder-decoder: %s", tfm_last_error());
    tfm_context_free(ctx);
    tfm_model_free(m);
}

int main(void) {
    test_truncation();
    test_temperature(0.5f);
    test_temperature(1.0f);
    test_temperature(2.0f);
    test_generate();
    return test_finish("sample");
}
