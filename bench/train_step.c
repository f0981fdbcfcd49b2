/* Benchmark: the wall-clock time of one training step (forward with dropout, label-smoothed loss,
 * backward, Adam update) of the reference configuration of issue 3 — d_model 256, 4 heads, d_ff 1024,
 * 3+3 layers, vocabularies of 8000, a batch of 32 sentences × 32 tokens (source 32 ids, target
 * rows BOS + 31 ids + EOS, so 32 decoder positions and 32 prediction targets per sentence),
 * dropout 0.1, label smoothing 0.1, Adam with the paper's β and ε. Its PyTorch twin is
 * bench/train_step_torch.py; bench/run_train_step.sh runs both side by side.
 *
 *   bench_train_step [--steps N] [--warmup W] [--batch B] [--len L]
 *
 * Uses only the public API (include/tfm/). The first W steps (default 3) are not timed (first-touch
 * page faults, BLAS packing buffers); then N steps (default 10) are timed one by one and the median
 * is reported, with the minimum and maximum. The last line is machine-readable:
 *   RESULT tfm median_s=... min_s=... max_s=... steps=N params=P */
#include "kernel_env.h"
#include "tfm/tfm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int int_arg(const char *flag, const char *v) {
    char *end = NULL;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end != '\0' || x < 1 || x > 1000000) {
        fprintf(stderr, "bench_train_step: %s needs a positive integer\n", flag);
        exit(2);
    }
    return (int)x;
}

int main(int argc, char **argv) {
    (void)tfm_reexec_for_shared_cores(argv); /* as tfm does: the OpenMP waiting policy, docs/THREADS.md */
    tfm_kernel_opts kernels; /* TFM_GEMM, TFM_ATTN, TFM_NO_AVX512, TFM_KERNELS, as tfm reads them */
    if (cli_kernel_opts_from_env(&kernels) != 0) return 2;
    int steps = 10, warmup = 3, B = 32, L = 32;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--steps") == 0) steps = int_arg(argv[i], v), i++;
        else if (strcmp(argv[i], "--warmup") == 0) warmup = int_arg(argv[i], v), i++;
        else if (strcmp(argv[i], "--batch") == 0) B = int_arg(argv[i], v), i++;
        else if (strcmp(argv[i], "--len") == 0) L = int_arg(argv[i], v), i++;
        else {
            fprintf(stderr, "usage: bench_train_step [--steps N] [--warmup W] [--batch B] [--len L]\n");
            return 2;
        }
    }
    tfm_config c = tfm_config_default(); /* the reference configuration */
    c.d_model = 256;
    c.n_heads = 4;
    c.d_ff = 1024;
    c.n_enc_layers = 3;
    c.n_dec_layers = 3;
    c.src_vocab = 8000;
    c.tgt_vocab = 8000;
    tfm_model *m = NULL;
    tfm_trainer *tr = NULL;
    if (tfm_model_create(&c, 1, &m) != TFM_OK) {
        fprintf(stderr, "bench_train_step: %s\n", tfm_last_error());
        return 1;
    }
    tfm_train_config tc = tfm_train_config_default(); /* Adam, β (0.9, 0.98), ε 1e-9 */
    tc.kernels = kernels;
    tc.lr = 1e-4;
    tc.dropout = 0.1f;
    tc.label_smoothing = 0.1f;
    const int T = L + 1; /* whole target rows: BOS + (L − 1) ids + EOS */
    if (tfm_trainer_create(m, &tc, B, L, T, &tr) != TFM_OK) {
        fprintf(stderr, "bench_train_step: %s\n", tfm_last_error());
        tfm_model_free(m);
        return 1;
    }
    /* Random ids in [4, V) from a fixed LCG; no padding, like the twin. */
    int32_t *src = malloc(sizeof(int32_t) * (size_t)B * (size_t)L);
    int32_t *tgt = malloc(sizeof(int32_t) * (size_t)B * (size_t)T);
    double *times = malloc(sizeof(double) * (size_t)steps);
    if (!src || !tgt || !times) {
        fprintf(stderr, "bench_train_step: out of memory\n");
        return 1;
    }
    uint64_t s = 42;
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

    printf("tfm train step: d_model %d, %d heads, d_ff %d, %d+%d layers, vocab %d, batch %d x %d tokens, "
           "%zu parameters, Adam, dropout %.1f, label smoothing %.1f\n",
           c.d_model, c.n_heads, c.d_ff, c.n_enc_layers, c.n_dec_layers, c.tgt_vocab, B, L,
           tfm_config_param_count(&c), (double)tc.dropout, (double)tc.label_smoothing);
    tfm_step_stats st;
    for (int i = 0; i < warmup + steps; i++) {
        const double t0 = now_s();
        if (tfm_trainer_step(tr, B, L, T, src, tgt, &st) != TFM_OK) {
            fprintf(stderr, "bench_train_step: step %d: %s\n", i + 1, tfm_last_error());
            return 1;
        }
        const double dt = now_s() - t0;
        if (i >= warmup) times[i - warmup] = dt;
        printf("  step %2d%s %.4f s  loss %.4f\n", i + 1, i < warmup ? " (warm-up)" : "          ", dt, st.loss);
    }
    qsort(times, (size_t)steps, sizeof *times, cmp_double);
    const double median = steps % 2 ? times[steps / 2] : 0.5 * (times[steps / 2 - 1] + times[steps / 2]);
    printf("tfm: median %.4f s per step over %d steps (min %.4f, max %.4f), %.0f target tokens/s\n", median, steps,
           times[0], times[steps - 1], (double)B * (double)L / median);
    printf("RESULT tfm median_s=%.6f min_s=%.6f max_s=%.6f steps=%d params=%zu\n", median, times[0],
           times[steps - 1], steps, tfm_config_param_count(&c));
    free(src);
    free(tgt);
    free(times);
    tfm_trainer_free(tr);
    tfm_model_free(m);
    return 0;
}
