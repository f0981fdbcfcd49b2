/* Choosing the next token from the logits (include/tfm/generate.h): greedy, or temperature
 * softmax truncated by top-k (Fan et al. 2018) and top-p (Holtzman et al. 2020, §3.1), drawn with
 * one counter-based uniform number per step (src/core/hash.h). */
#include "decode_internal.h"
#include "hash.h"
#include "tfm/generate.h"

#include <math.h>

tfm_sample_config tfm_sample_config_default(void) {
    tfm_sample_config c = {1.0f, 0, 1.0f, 1};
    return c;
}

tfm_status tfm_sample_config_validate(const tfm_sample_config *c) {
    RETURN_IF(!c, TFM_ERR_INVALID_ARG, "sampling: NULL configuration");
    RETURN_IF(!(c->temperature >= 0.0f) || !isfinite(c->temperature), TFM_ERR_INVALID_ARG,
              "sampling: temperature must be a finite number >= 0 (0: greedy), got %g", (double)c->temperature);
    RETURN_IF(c->top_k < 0, TFM_ERR_INVALID_ARG, "sampling: top_k must be >= 0 (0: off), got %d", c->top_k);
    RETURN_IF(!(c->top_p > 0.0f && c->top_p <= 1.0f), TFM_ERR_INVALID_ARG,
              "sampling: top_p must be in (0, 1] (1: off), got %g", (double)c->top_p);
    return TFM_OK;
}

/* Logits closer than this count as tied at a top-k/top-p cut. The KV cache and a recomputed prefix
 * give logits that differ by rounding, about 1e-6 for the models of docs/LM.md; 1e-4 makes the
 * kept set the same on both paths, and two tokens this close differ in probability by 0.01 % / T. */
#define SAMPLE_TIE_LOGIT 1e-4f

/* i comes before j: more probable, or equally probable and a lower id (a total order, so the
 * result does not depend on the sort). */
static int before(const float *p, int32_t i, int32_t j) { return p[i] > p[j] || (p[i] == p[j] && i < j); }

static void sift_down(const float *p, int32_t *a, size_t root, size_t n) {
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        /* a max-heap of "after": the root is the item that comes last */
        if (child + 1 < n && before(p, a[child], a[child + 1])) child++;
        if (!before(p, a[root], a[child])) return;
        int32_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

/* idx[0..n) = 0..n−1 sorted most probable first (heapsort: no allocation, O(n log n)). */
static void sort_by_prob(const float *p, int32_t *idx, size_t n) {
    for (size_t i = 0; i < n; i++) idx[i] = (int32_t)i;
    for (size_t i = n / 2; i-- > 0;) sift_down(p, idx, i, n);
    for (size_t end = n; end-- > 1;) {
        int32_t t = idx[0];
        idx[0] = idx[end];
        idx[end] = t;
        sift_down(p, idx, 0, end);
    }
}

/* Uniform in [0, 1) with 53 bits: draw `step` of the seed's splitmix64 stream. */
static double uniform_at(uint64_t seed, uint64_t step) {
    return (double)(hash_stream(seed, step + 1) >> 11) * (1.0 / 9007199254740992.0);
}

int32_t tfm_sample_token(const tfm_sample_config *cfg, const tfm_config *mc, float *z, int Vi, uint64_t step,
                         int32_t *scratch) {
    const size_t V = (size_t)Vi;
    forbid_specials(mc, z);
    if (cfg->temperature == 0.0f) { /* greedy */
        const int32_t y = (int32_t)row_argmax(z, V);
        for (size_t i = 0; i < V; i++) z[i] = (int32_t)i == y ? 1.0f : 0.0f;
        return y;
    }
    /* p ∝ exp(z / T), computed stably from the largest logit; divided, not multiplied by 1/T: a
     * subnormal T makes 1/T infinite and (zmax − zmax)·∞ NaN, while 0 / T stays 0 */
    const float zmax = z[row_argmax(z, V)], T = cfg->temperature;
    double total = 0.0;
    for (size_t i = 0; i < V; i++) {
        z[i] = expf((z[i] - zmax) / T);
        total += z[i];
    }
    for (size_t i = 0; i < V; i++) z[i] = (float)(z[i] / total);
    size_t keep = V;
    if (cfg->top_k > 0 && (size_t)cfg->top_k < keep) keep = (size_t)cfg->top_k;
    if (keep < V || cfg->top_p < 1.0f) { /* truncation: the most likely first decides what is kept */
        sort_by_prob(z, scratch, V);
        if (cfg->top_p < 1.0f) { /* the smallest most-likely-first prefix reaching top_p of what top-k
                                  * kept (renormalised first, as Hugging Face's warpers do); at least one */
            double in_k = 0.0;
            for (size_t r = 0; r < keep; r++) in_k += z[scratch[r]];
            double cum = 0.0;
            size_t m = 0;
            while (m < keep) {
                cum += z[scratch[m++]];
                if (cum >= (double)cfg->top_p * in_k) break;
            }
            keep = m;
        }
        /* a token tied with the last one kept, within SAMPLE_TIE_LOGIT of its logit, is kept too
         * (Hugging Face's top-k keeps exact ties at the cut): which of two near-equal tokens
         * rounding puts first must not decide what is kept */
        const float tied = z[scratch[keep - 1]] * expf(-SAMPLE_TIE_LOGIT / T);
        while (keep < V && z[scratch[keep]] > 0.0f && z[scratch[keep]] >= tied) keep++;
        double kept = 0.0;
        for (size_t r = 0; r < keep; r++) kept += z[scratch[r]];
        for (size_t r = keep; r < V; r++) z[scratch[r]] = 0.0f;
        for (size_t r = 0; r < keep; r++) z[scratch[r]] = (float)(z[scratch[r]] / kept);
    }
    /* inverse CDF over the kept tokens in id order, not most likely first: two probabilities that
     * rounding orders differently (the logits of the KV cache and of a recomputed prefix differ in
     * their last bits) then draw the same token; only a u within rounding of a boundary of the
     * cumulative sum can draw another (docs/LM.md, tests/unit/infer/test_sample_ties.c) */
    const double u = uniform_at(cfg->seed, step);
    double cum = 0.0;
    int32_t last = -1;
    for (size_t i = 0; i < V; i++) {
        if (z[i] <= 0.0f) continue;
        last = (int32_t)i;
        cum += z[i];
        if (u < cum) return last;
    }
    return last >= 0 ? last : (int32_t)row_argmax(z, V); /* u beyond the rounded total: the last token with any probability */
}
