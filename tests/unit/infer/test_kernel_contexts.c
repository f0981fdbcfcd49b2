/* One model, two kernel tables at once (include/tfm/kernels.h): a context on the reference kernels
 * and one on the tuned kernels run in two threads at the same time — teacher-forced scoring (the
 * logits, bit for bit), greedy and beam-4 decoding, and a trainer's steps (loss and weights) — and
 * each must give exactly what it gives alone. The two tables must also give different logits and
 * training losses (in the last bits: their products sum in other orders), else the choice would not
 * reach the kernels;
 * and the reference table must read nothing of the tuned one (no process-wide switch): it gives
 * the same bits before, during and after the tuned one runs. */
#include "kernels.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { B = 6, S = 9, T = 8, MAXO = 16, V = 40, STEPS = 3 };

typedef struct {
    const tfm_model *m;
    tfm_kernel_opts opts;
    const int32_t *src, *tgt;
    float logits[B * (T - 1) * V];
    int32_t greedy[B * MAXO], beam[B * MAXO];
    int greedy_len[B], beam_len[B];
    char kernels[96];
    tfm_status st;
} infer_job;

static void *run_infer(void *arg) {
    infer_job *j = arg;
    tfm_context *ctx = NULL;
    j->st = tfm_context_create_opts(j->m, &j->opts, &ctx);
    if (j->st == TFM_OK) j->st = tfm_model_score(ctx, B, S, T, j->src, j->tgt, NULL, NULL, j->logits);
    tfm_decode_config dc = tfm_decode_config_default();
    dc.max_len_a = 1.0f, dc.max_len_b = 4;
    if (j->st == TFM_OK) j->st = tfm_model_translate(ctx, &dc, B, S, j->src, j->greedy, MAXO, j->greedy_len);
    dc.beam = 4;
    if (j->st == TFM_OK) j->st = tfm_model_translate(ctx, &dc, B, S, j->src, j->beam, MAXO, j->beam_len);
    if (ctx) tfm_context_kernels(ctx, j->kernels, sizeof j->kernels);
    tfm_context_free(ctx);
    return NULL;
}

typedef struct {
    tfm_model *m; /* the job's own copy: a trainer writes its model */
    tfm_kernel_opts opts;
    const int32_t *src, *tgt;
    double loss[STEPS];
    tfm_status st;
} train_job;

static void *run_train(void *arg) {
    train_job *j = arg;
    tfm_train_config tc = tfm_train_config_default();
    tc.dropout = 0.1f, tc.label_smoothing = 0.1f, tc.kernels = j->opts;
    tfm_trainer *tr = NULL;
    j->st = tfm_trainer_create(j->m, &tc, B, S, T, &tr);
    for (int s = 0; j->st == TFM_OK && s < STEPS; s++) {
        tfm_step_stats stats;
        j->st = tfm_trainer_step(tr, B, S, T, j->src, j->tgt, &stats);
        j->loss[s] = stats.loss;
    }
    tfm_trainer_free(tr);
    return NULL;
}

static int same_infer(const infer_job *a, const infer_job *b) {
    return memcmp(a->logits, b->logits, sizeof a->logits) == 0 && memcmp(a->greedy, b->greedy, sizeof a->greedy) == 0 &&
           memcmp(a->greedy_len, b->greedy_len, sizeof a->greedy_len) == 0 &&
           memcmp(a->beam, b->beam, sizeof a->beam) == 0 && memcmp(a->beam_len, b->beam_len, sizeof a->beam_len) == 0;
}

static tfm_model *make_model(void) {
    tfm_config c = tfm_config_default();
    c.d_model = 64, c.n_heads = 4, c.n_enc_layers = 2, c.n_dec_layers = 2, c.d_ff = 128;
    c.src_vocab = c.tgt_vocab = V, c.max_len = 32;
    tfm_model *m = NULL;
    CHECK(tfm_model_create(&c, 11, &m) == TFM_OK, "model: %s", tfm_last_error());
    return m;
}

int main(void) {
    static int32_t src[B * S], tgt[B * T];
    uint64_t st = 5;
    for (int b = 0; b < B; b++) {
        const int ls = 3 + b % 5, lt = 3 + (b * 3) % 5;
        for (int s = 0; s < S; s++) src[b * S + s] = s < ls ? 3 + (int)(hash_next(&st) % (V - 3)) : 0;
        tgt[b * T] = 1;
        for (int t = 1; t < T; t++)
            tgt[b * T + t] = t < lt ? 3 + (int)(hash_next(&st) % (V - 3)) : t == lt ? 2 : 0;
    }
    tfm_model *m = make_model();
    if (!m) return test_finish("kernel_contexts");
    const tfm_kernel_opts ref = tfm_kernel_opts_reference(), tuned = tfm_kernel_opts_default();

    /* inference: each alone, then both at once */
    static infer_job alone[2], both[2], ref_after;
    for (int k = 0; k < 2; k++) {
        alone[k] = (infer_job){.m = m, .opts = k ? tuned : ref, .src = src, .tgt = tgt};
        run_infer(&alone[k]);
        CHECK(alone[k].st == TFM_OK, "%s alone: %s", k ? "tuned" : "reference", tfm_last_error());
        both[k] = (infer_job){.m = m, .opts = k ? tuned : ref, .src = src, .tgt = tgt};
    }
    printf("reference: %s\ntuned:     %s\n", alone[0].kernels, alone[1].kernels);
    CHECK(strcmp(alone[0].kernels, "isa baseline, gemm blis, attention reference, layers reference") == 0,
          "the reference context runs '%s'", alone[0].kernels);
    pthread_t th[2];
    for (int k = 0; k < 2; k++) CHECK(pthread_create(&th[k], NULL, run_infer, &both[k]) == 0, "pthread_create");
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < 2; k++) {
        CHECK(both[k].st == TFM_OK, "%s beside the other: status %d", k ? "tuned" : "reference", (int)both[k].st);
        CHECK(same_infer(&both[k], &alone[k]), "%s: scores or translations beside the other context differ from alone",
              k ? "tuned" : "reference");
    }
    ref_after = (infer_job){.m = m, .opts = ref, .src = src, .tgt = tgt};
    run_infer(&ref_after);
    CHECK(same_infer(&ref_after, &alone[0]), "the reference context after the tuned one differs from before");
    /* where the CPU has the library's own SIMD kernels, the tables must reach them */
    if (ops_kernels_tuned()->isa != OPS_ISA_BASELINE)
        CHECK(memcmp(alone[0].logits, alone[1].logits, sizeof alone[0].logits) != 0,
              "the reference and tuned tables gave the same logits bit for bit: is the table ignored?");
    double worst = 0;
    for (size_t i = 0; i < sizeof alone[0].logits / sizeof(float); i++) {
        const double d = fabs((double)alone[0].logits[i] - alone[1].logits[i]);
        if (!(d <= worst)) worst = d;
    }
    CHECK(worst < 1e-4, "reference and tuned logits differ by %g (more than rounding)", worst);

    /* training: a model copy per job, each alone and then both at once */
    static train_job talone[2], tboth[2];
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < 2; k++) {
            train_job *j = pass ? &tboth[k] : &talone[k];
            *j = (train_job){.m = make_model(), .opts = k ? tuned : ref, .src = src, .tgt = tgt};
        }
    for (int k = 0; k < 2; k++) {
        run_train(&talone[k]);
        CHECK(talone[k].st == TFM_OK, "training alone: %s", tfm_last_error());
    }
    /* the trainer runs the table its config names: on a CPU with SIMD kernels the two train apart */
    if (ops_kernels_tuned()->isa != OPS_ISA_BASELINE)
        CHECK(memcmp(talone[0].loss, talone[1].loss, sizeof talone[0].loss) != 0,
              "reference and tuned training gave the same losses bit for bit: does the trainer ignore its kernels?");
    for (int k = 0; k < 2; k++) CHECK(pthread_create(&th[k], NULL, run_train, &tboth[k]) == 0, "pthread_create");
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < 2; k++) {
        CHECK(tboth[k].st == TFM_OK, "training beside the other: status %d", (int)tboth[k].st);
        CHECK(memcmp(tboth[k].loss, talone[k].loss, sizeof tboth[k].loss) == 0,
              "%s training: losses beside the other (%.9g) differ from alone (%.9g)", k ? "tuned" : "reference",
              tboth[k].loss[STEPS - 1], talone[k].loss[STEPS - 1]);
    }
    /* the trained weights: compared through a tensor's bytes saved by both (the same file layout) */
    char pa[64], pb[64];
    const char *tmp = getenv("TMPDIR");
    char tdir[512];
    snprintf(tdir, sizeof tdir, "%s/tfm-kernel-ctx.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(tdir)) {
        for (int k = 0; k < 2; k++) {
            snprintf(pa, sizeof pa, "a%d.st", k), snprintf(pb, sizeof pb, "b%d.st", k);
            char fa[600], fb[600];
            snprintf(fa, sizeof fa, "%s/%s", tdir, pa), snprintf(fb, sizeof fb, "%s/%s", tdir, pb);
            CHECK(tfm_model_save(talone[k].m, fa) == TFM_OK && tfm_model_save(tboth[k].m, fb) == TFM_OK, "save: %s",
                  tfm_last_error());
            FILE *a = fopen(fa, "rb"), *b = fopen(fb, "rb");
            int same = a && b;
            while (same) {
                const int ca = fgetc(a), cb = fgetc(b);
                if (ca != cb) same = 0;
                if (ca == EOF || cb == EOF) break;
            }
            CHECK(same, "%s training: the weights beside the other differ from alone", k ? "tuned" : "reference");
            if (a) fclose(a);
            if (b) fclose(b);
            remove(fa), remove(fb);
        }
        rmdir(tdir);
    } else {
        CHECK(0, "mkdtemp %s", tdir);
    }
    for (int k = 0; k < 2; k++) tfm_model_free(talone[k].m), tfm_model_free(tboth[k].m);
    tfm_model_free(m);
    return test_finish("kernel_contexts");
}
