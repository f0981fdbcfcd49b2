/* A small trained encoder–decoder shared by the decoding tests (test_decode.c, test_threads.c). */
#ifndef TFM_TEST_COPY_TASK_H
#define TFM_TEST_COPY_TASK_H

#include "tfm/tfm.h"

#include <stdint.h>
#include <stdio.h>

/* A small copy-with-shift task: target = source tokens + 1 (ids 4..14, 15 wraps to 4; pad 0, BOS 1,
 * EOS 2), trained for `steps` steps (a few hundred make the model's decisions confident: a trained
 * model, not random weights). Returns NULL if the model cannot be created. */
static inline tfm_model *copy_task_model(int steps) {
    tfm_config c = tfm_config_default();
    c.d_model = 32;
    c.n_heads = 4;
    c.d_ff = 64;
    c.n_enc_layers = 2;
    c.n_dec_layers = 2;
    c.src_vocab = c.tgt_vocab = 16;
    c.max_len = 32;
    c.norm_first = 1;
    tfm_model *m = NULL;
    if (tfm_model_create(&c, 11, &m) != TFM_OK) return NULL;
    enum { B = 16, S = 6, T = 8 };
    int32_t src[B * S], tgt[B * T];
    uint32_t x = 12345;
    tfm_train_config tc = tfm_train_config_default();
    tc.lr = 3e-3;
    tfm_trainer *tr = NULL;
    if (tfm_trainer_create(m, &tc, B, S, T, &tr) != TFM_OK) return m;
    for (int step = 0; step < steps; step++) {
        for (int b = 0; b < B; b++) {
            x = x * 1103515245u + 12345u;
            int len = 2 + (int)((x >> 16) % 5); /* 2..6 tokens */
            tgt[b * T] = 1;
            for (int s = 0; s < S; s++) {
                x = x * 1103515245u + 12345u;
                int tokv = 4 + (int)((x >> 16) % 11); /* 4..14 */
                src[b * S + s] = s < len ? tokv : 0;
                if (s < len) tgt[b * T + 1 + s] = tokv + 1 > 15 ? 4 : tokv + 1;
            }
            tgt[b * T + 1 + len] = 2;
            for (int t = len + 2; t < T; t++) tgt[b * T + t] = 0;
        }
        tfm_step_stats st;
        tfm_trainer_step(tr, B, S, T, src, tgt, &st);
        if (step == steps - 1) printf("copy task: loss after %d steps %.4f\n", steps, st.loss);
    }
    tfm_trainer_free(tr);
    return m;
}

#endif
