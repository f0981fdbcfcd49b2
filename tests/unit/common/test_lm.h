/* Small models the unit tests build in memory: a tiny decoder-only language model, a generation
 * stopper, and every position encoding this build has as a list of configuration variants. */
#ifndef TFM_TEST_LM_H
#define TFM_TEST_LM_H

#include "test_util.h"
#include "tfm/tfm.h"

/** A small decoder-only LM: d_model 16, 2 heads, d_ff 32, 2 layers, vocabulary V
 * (pad 0, BOS 1, EOS 2), max_len positions, the default (sinusoidal) position encoding. */
static inline tfm_config test_lm_config(int V, int max_len) {
    tfm_config c = tfm_config_default();
    c.arch = TFM_ARCH_DECODER_ONLY;
    c.d_model = 16;
    c.n_heads = 2;
    c.d_ff = 32;
    c.n_enc_layers = 0;
    c.n_dec_layers = 2;
    c.src_vocab = c.tgt_vocab = V;
    c.max_len = max_len;
    return c;
}

/** A tfm_token_fn (user: a test_stop_after) that stops a generation after stop_after tokens (0:
 * never), counting them in n. */
typedef struct {
    int n, stop_after;
} test_stop_after;

static inline int test_stop_after_fn(int32_t id, void *user) {
    (void)id;
    test_stop_after *s = user;
    return s->stop_after > 0 && ++s->n >= s->stop_after;
}

typedef struct {
    const char *label;
    tfm_config c;
} test_pe_variant;

/** Every position encoding this build has, found by listing the tfm_pe values whose configuration
 * (base with that pe) validates — a kind added later is listed without editing the tests — and
 * after sinusoidal its options concat, zero_pad and scale: up to `max` variants into vs, their
 * count returned. A kind the build lacks (TFM_ERR_UNSUPPORTED) is printed and skipped; one that
 * does not validate otherwise is a test failure. *n_none counts TFM_PE_NONE (nullable). */
static inline int test_pe_variants(const tfm_config *base, test_pe_variant *vs, int max, int *n_none) {
    int n = 0;
    if (n_none) *n_none = 0;
    for (int pe = 0; tfm_pe_name((tfm_pe)pe) != NULL && n + 4 <= max; pe++) {
        test_pe_variant v = {tfm_pe_name((tfm_pe)pe), *base};
        v.c.pe = (tfm_pe)pe;
        tfm_status st = tfm_config_validate(&v.c);
        if (st == TFM_ERR_UNSUPPORTED) {
            printf("%-22s not in this build\n", v.label);
            continue;
        }
        CHECK(st == TFM_OK, "%s: a small model does not validate: %s", v.label, tfm_last_error());
        if (st != TFM_OK) continue;
        vs[n++] = v;
        if (n_none) *n_none += pe == TFM_PE_NONE;
        if (pe == TFM_PE_SINUSOIDAL) { /* and its options */
            vs[n] = v;
            vs[n].label = "sinusoidal concat";
            vs[n++].c.pe_layout = TFM_PE_LAYOUT_CONCAT;
            vs[n] = v;
            vs[n].label = "sinusoidal zero_pad";
            vs[n++].c.pe_zero_pad = 1;
            vs[n] = v;
            vs[n].label = "sinusoidal scale";
            vs[n++].c.pe_scale = 1;
        }
    }
    return n;
}

#endif
