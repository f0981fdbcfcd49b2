/* bench_tfm train: the training step (forward with dropout and the label-smoothed loss, backward,
 * the Adam update) of a named configuration on random ids, timed part by part
 * (tfm_step_stats.forward_s / backward_s / update_s), with the analytic GFLOP/s (bench_flops.c).
 *   ref   the reference configuration of issue 3: d_model 256, 4 heads, d_ff 1024, 3+3 layers,
 *         vocab 8000, 32 sentences × 32 tokens (bench/train_step.c's)
 *   base  the paper's base model (Vaswani et al. 2017, Table 3): 512, 8 heads, 2048, 6+6,
 *         vocab 32000, 16 sentences × 32 tokens
 *   tiny  d_model 32, 2 heads, d_ff 64, 1+1, vocab 64, 4 × 8 (the smoke test's)
 *   long  512, 8 heads, 2048, 3+3, vocab 8000, 8 sentences × 256 tokens: where attention's
 *         [B, H, T, S] tensors weigh (the fused attention's case, docs/KERNELS.md)
 * Post-LN (the paper; tfm's default), dropout 0.1, label smoothing 0.1, Adam β (0.9, 0.98) ε 1e-9,
 * no clipping. bench/bench_torch.py is the PyTorch twin of the same step. */
#include "kernel_env.h"
#include "bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int d, heads, ff, n_enc, n_dec, vocab, batch, len;
} bench_train_shape;

static const bench_train_shape k_shapes[] = {
    {"ref", 256, 4, 1024, 3, 3, 8000, 32, 32},
    {"base", 512, 8, 2048, 6, 6, 32000, 16, 32},
    {"tiny", 32, 2, 64, 1, 1, 64, 4, 8},
    {"long", 512, 8, 2048, 3, 3, 8000, 8, 256}, /* attention-heavy: T = S = 256, d_k 64 (docs/KERNELS.md) */
};

int bench_cmd_train(int argc, char **argv) {
    const bench_train_shape *sh = NULL;
    int reps = 5, warmup = 2, flops_only = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--config") == 0 && v) {
            for (size_t k = 0; k < sizeof k_shapes / sizeof *k_shapes; k++)
                if (strcmp(v, k_shapes[k].name) == 0) sh = &k_shapes[k];
            if (!sh) {
                fprintf(stderr, "bench_tfm train: unknown --config %s (ref, base, tiny, long)\n", v);
                return 2;
            }
            i++;
        } else if (strcmp(argv[i], "--flops-only") == 0) {
            flops_only = 1;
        } else if (strcmp(argv[i], "--reps") == 0) {
            reps = bench_int_arg(argv[i], v), i++;
        } else if (strcmp(argv[i], "--warmup") == 0) {
            warmup = bench_int_arg(argv[i], v), i++;
        } else {
            fprintf(stderr, "usage: bench_tfm train --config ref|base|tiny|long [--reps N] [--warmup W] [--flops-only]\n");
            return 2;
        }
    }
    if (!sh) sh = &k_shapes[0];
    tfm_config c = tfm_config_default();
    c.d_model = sh->d, c.n_heads = sh->heads, c.d_ff = sh->ff;
    c.n_enc_layers = sh->n_enc, c.n_dec_layers = sh->n_dec;
    c.src_vocab = c.tgt_vocab = sh->vocab;
    const int B = sh->batch, L = sh->len, T = L + 1; /* target rows: BOS + (L − 1) ids + EOS */
    if (c.max_len < T) c.max_len = T; /* long: 257 target positions */
    if (flops_only) { /* the analytic count alone (tests, docs/BENCH.md) */
        printf("RESULT flops config=%s gflop=%.4f params=%zu\n", sh->name, 3e-9 * bench_flops_forward(&c, B, L, L),
               tfm_config_param_count(&c));
        return 0;
    }
    tfm_model *m = NULL;
    tfm_trainer *tr = NULL;
    tfm_train_config tc = tfm_train_config_default();
    tc.kernels = *cli_kernels();
    tc.lr = 1e-4;
    tc.dropout = 0.1f;
    tc.label_smoothing = 0.1f;
    if (tfm_model_create(&c, 1, &m) != TFM_OK || tfm_trainer_create(m, &tc, B, L, T, &tr) != TFM_OK) {
        fprintf(stderr, "bench_tfm train: %s\n", tfm_last_error());
        tfm_model_free(m);
        return 1;
    }
    int32_t *src = malloc(sizeof(int32_t) * (size_t)B * (size_t)L);
    int32_t *tgt = malloc(sizeof(int32_t) * (size_t)B * (size_t)T);
    double *t_all = malloc(sizeof(double) * 4 * (size_t)reps);
    if (!src || !tgt || !t_all) {
        fprintf(stderr, "bench_tfm train: out of memory\n");
        return 1;
    }
    uint64_t s = 42; /* random ids in [4, V) from a fixed LCG; no padding, like the twin */
    for (size_t i = 0; i < (size_t)B * (size_t)L; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        src[i] = 4 + (int32_t)((s >> 33) % (uint64_t)(c.src_vocab - 4));
    }
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            int32_t id = 4 + (int32_t)((s >> 33) % (uint64_t)(c.tgt_vocab - 4));
            tgt[(size_t)b * (size_t)T + (size_t)t] = t == 0 ? c.bos_id : t == T - 1 ? c.eos_id : id;
        }
    const double flop = 3.0 * bench_flops_forward(&c, B, L, L);
    printf("tfm train step, config %s: d_model %d, %d heads, d_ff %d, %d+%d layers, vocab %d, batch %d x %d, "
           "%zu parameters, %d threads, %.2f GFLOP per step (analytic)\n",
           sh->name, c.d_model, c.n_heads, c.d_ff, c.n_enc_layers, c.n_dec_layers, c.tgt_vocab, B, L,
           tfm_config_param_count(&c), tfm_get_threads(), flop * 1e-9);
    double *t_step = t_all, *t_fwd = t_all + reps, *t_bwd = t_all + 2 * reps, *t_upd = t_all + 3 * reps;
    tfm_step_stats st;
    for (int i = 0; i < warmup + reps; i++) {
        const double t0 = bench_now_s();
        if (tfm_trainer_step(tr, B, L, T, src, tgt, &st) != TFM_OK) {
            fprintf(stderr, "bench_tfm train: step %d: %s\n", i + 1, tfm_last_error());
            return 1;
        }
        const double dt = bench_now_s() - t0;
        printf("  step %2d%s %.4f s (forward %.4f, backward %.4f, update %.4f) loss %.4f\n", i + 1,
               i < warmup ? " (warm-up)" : "          ", dt, st.forward_s, st.backward_s, st.update_s, st.loss);
        if (i >= warmup) {
            const int r = i - warmup;
            t_step[r] = dt, t_fwd[r] = st.forward_s, t_bwd[r] = st.backward_s, t_upd[r] = st.update_s;
        }
    }
    double med[4], mn[4];
    for (int k = 0; k < 4; k++) bench_median_min(t_all + (size_t)k * (size_t)reps, reps, &med[k], &mn[k]);
    printf("RESULT train impl=tfm config=%s step_med=%.6f step_min=%.6f fwd_med=%.6f fwd_min=%.6f bwd_med=%.6f "
           "bwd_min=%.6f upd_med=%.6f upd_min=%.6f gflop=%.4f reps=%d threads=%d rss_mib=%.1f\n",
           sh->name, med[0], mn[0], med[1], mn[1], med[2], mn[2], med[3], mn[3], flop * 1e-9, reps,
           tfm_get_threads(), bench_peak_rss_mib());
    free(src);
    free(tgt);
    free(t_all);
    tfm_trainer_free(tr);
    tfm_model_free(m);
    return 0;
}
