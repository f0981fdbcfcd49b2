/* Helpers of the model tests that compare two paths of one small random model (test_pe_kinds,
 * test_prefill): a model whose every parameter is moved off its initial value, and an error
 * maximum that keeps a NaN. Include after test_util.h and model_internal.h. */
#ifndef TFM_TEST_MODELS_H
#define TFM_TEST_MODELS_H

/** max(w, e) that keeps a NaN (fmax drops it): an error maximum must not hide one. */
static inline double test_worse(double w, double e) { return isnan(e) || e > w ? e : w; }

/** A model of c (tfm_model_create with `seed`) with every parameter moved by up to ±0.3 from its
 * initial value, so that a table or bias initialised to zero takes part; NULL, with a failed
 * CHECK naming `label`, if it cannot be created. */
static inline tfm_model *test_model_moved(const tfm_config *c, const char *label, uint64_t seed) {
    tfm_model *m = NULL;
    CHECK(tfm_model_create(c, seed, &m) == TFM_OK, "%s: create: %s", label, tfm_last_error());
    if (!m) return NULL;
    float *base = (float *)m->param_arena.base;
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; i < m->n_params; i++) base[i] += 0.3f * test_frand(&s);
    return m;
}

#endif
