/* Issue 12, kind 4: a diverging run never replaces a checkpoint or best model (src/train/loop.c).
 * A good run writes a checkpoint and a best model; then runs over the same paths diverge in each
 * way the loop watches — a NaN validation loss (huge learning rate, with validation), a model that
 * overflows just before a save (huge learning rate, no validation), a NaN training loss (no
 * validation, no periodic save), infinite parameters after an update (an overflowing SGD step), a
 * NaN parameter after steps that were saved — and each returns
 * TFM_ERR_NUMERIC with "step N...: QUANTITY is ...; training stopped, nothing saved; kept ...",
 * the step said once, and leaves both files byte for byte as the last finite save left them. A
 * step refused for a NaN loss or gradient norm says which in tfm_step_stats.non_finite, and the
 * loop's message follows that field. */
#define _POSIX_C_SOURCE 200809L

#include "test_tiny_model.h"
#include "test_util.h"

#include "model_internal.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static char g_dir[256];
static tfm_dataset *g_train, *g_valid;

static const char *tmp_path(const char *name) {
    static char buf[8][512];
    static int slot = 0;
    char *b = buf[slot++ & 7];
    snprintf(b, sizeof buf[0], "%s/%s", g_dir, name);
    return b;
}

/* n pairs of ids in [3, 20): sources of 3..7 ids, targets BOS + 2..6 ids + EOS (an LCG). */
static void write_ids(const char *src_path, const char *tgt_path, int n, uint32_t seed) {
    FILE *fs = fopen(src_path, "w"), *ft = fopen(tgt_path, "w");
    uint32_t s = seed;
#define NEXT() (s = s * 1103515245u + 12345u, (int)((s >> 16) % 17u) + 3)
    for (int i = 0; fs && ft && i < n; i++) {
        int ls = 3 + NEXT() % 5, lt = 2 + NEXT() % 5;
        for (int j = 0; j < ls; j++) fprintf(fs, j ? " %d" : "%d", NEXT());
        fprintf(ft, "1");
        for (int j = 0; j < lt; j++) fprintf(ft, " %d", NEXT());
        fprintf(fs, "\n");
        fprintf(ft, " 2\n");
    }
#undef NEXT
    if (fs) fclose(fs);
    if (ft) fclose(ft);
}

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    *n = 0;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    if (b && len > 0 && fread(b, 1, (size_t)len, f) == (size_t)len) *n = (size_t)len;
    fclose(f);
    return b;
}

/* 1 if the file at path holds exactly bytes[0..n). */
static int file_is(const char *path, const unsigned char *bytes, size_t n) {
    size_t m = 0;
    unsigned char *b = slurp(path, &m);
    int same = b && m == n && n > 0 && memcmp(b, bytes, n) == 0;
    free(b);
    return same;
}

typedef struct {
    tfm_model *m;
    tfm_trainer *tr;
    tfm_batcher *tb, *vb;
    int64_t poke_at; /* the STEP event of this step sets a parameter to NaN (0: never) */
} rig;

static int rig_make(rig *r, tfm_optimizer opt, double lr) {
    memset(r, 0, sizeof *r);
    tfm_config c = test_tiny_config();
    tfm_train_config tc = tfm_train_config_default();
    tc.optimizer = opt;
    tc.lr = lr;
    tc.schedule = TFM_SCHEDULE_CONSTANT;
    tc.clip_norm = 0.0f;
    tfm_status s = tfm_model_create(&c, 1, &r->m);
    if (s == TFM_OK) s = tfm_trainer_create(r->m, &tc, 1, 1, 2, &r->tr);
    if (s == TFM_OK) s = tfm_batcher_create_lines(g_train, 8, 0, 1, 11, &r->tb);
    if (s == TFM_OK) s = tfm_batcher_create(g_valid, 40, 0, 0, 0, &r->vb);
    CHECK(s == TFM_OK, "setting up a run: %s", tfm_last_error());
    return s == TFM_OK;
}

static void rig_free(rig *r) {
    tfm_trainer_free(r->tr);
    tfm_batcher_free(r->tb);
    tfm_batcher_free(r->vb);
    tfm_model_free(r->m);
}

static void on_event(const tfm_loop_event *ev, void *user) {
    rig *r = user;
    if (ev->kind == TFM_LOOP_EVENT_STEP && ev->step == r->poke_at) ((float *)r->m->param_arena.base)[7] = NAN;
}

/* Runs the loop over the checkpoint and best paths; returns its status. */
static tfm_status run(rig *r, int with_valid, int64_t steps, int64_t save_every) {
    tfm_loop_config lc = tfm_loop_config_default();
    lc.max_steps = steps;
    lc.eval_every = 1;
    lc.save_every = save_every;
    lc.save_path = tmp_path("ck.safetensors");
    lc.best_path = tmp_path("best.safetensors");
    lc.on_event = on_event;
    lc.user = r;
    return tfm_train_loop(r->tr, r->tb, with_valid ? r->vb : NULL, &lc, NULL);
}

static int contains(const char *s, const char *part) { return strstr(s, part) != NULL; }

/* A diverging run: NUMERIC, the expected words, the step said once, both files unchanged. */
static void expect_diverged(const char *label, tfm_status st, const char *words, const char *kept,
                            const unsigned char *ck, size_t n_ck, const unsigned char *best, size_t n_best) {
    const char *msg = tfm_last_error();
    CHECK(st == TFM_ERR_NUMERIC, "%s: status %d, want TFM_ERR_NUMERIC (%s)", label, (int)st, msg);
    CHECK(contains(msg, words) && contains(msg, "training stopped, nothing saved") && contains(msg, kept),
          "%s: message lacks '%s' or '%s': %s", label, words, kept, msg);
    const char *second = strstr(msg + 1, "step ");
    CHECK(strncmp(msg, "step ", 5) == 0 && (!second || !contains(second + 1, ": step")), "%s: step said twice: %s",
          label, msg);
    CHECK(file_is(tmp_path("ck.safetensors"), ck, n_ck), "%s: the checkpoint changed", label);
    CHECK(file_is(tmp_path("best.safetensors"), best, n_best), "%s: the best model changed", label);
}

int main(void) {
    if (!test_make_tmpdir(g_dir, sizeof g_dir, "diverge")) return 1;
    write_ids(tmp_path("train.src"), tmp_path("train.tgt"), 24, 7);
    write_ids(tmp_path("valid.src"), tmp_path("valid.tgt"), 8, 99);
    tfm_status s = tfm_dataset_from_ids(tmp_path("train.src"), tmp_path("train.tgt"), 16, &g_train, NULL);
    if (s == TFM_OK) s = tfm_dataset_from_ids(tmp_path("valid.src"), tmp_path("valid.tgt"), 16, &g_valid, NULL);
    CHECK(s == TFM_OK, "datasets: %s", tfm_last_error());

    /* a good run: the files every later run must keep */
    rig r;
    if (s != TFM_OK || !rig_make(&r, TFM_OPTIMIZER_ADAM, 3e-3)) return test_finish("hard_diverge");
    CHECK(run(&r, 1, 2, 1) == TFM_OK, "good run: %s", tfm_last_error());
    rig_free(&r);
    size_t n_ck = 0, n_best = 0;
    unsigned char *ck = slurp(tmp_path("ck.safetensors"), &n_ck), *best = slurp(tmp_path("best.safetensors"), &n_best);
    CHECK(ck && best && n_ck > 0 && n_best > 0, "the good run wrote both files");
    const char *before = "as it was before this run";

    /* 1. huge learning rate with validation: the validation loss after step 1 is NaN */
    if (rig_make(&r, TFM_OPTIMIZER_SGD, 1e30)) {
        expect_diverged("validation NaN", run(&r, 1, 5, 1), "step 1: validation loss is NaN", before, ck, n_ck, best,
                        n_best);
        CHECK(tfm_trainer_steps(r.tr) == 1, "validation NaN: stopped at step %lld", (long long)tfm_trainer_steps(r.tr));
        rig_free(&r);
    }
    /* 2. the same without validation, saving every step: the parameters after step 1 are finite but
     * the model overflows; the forward pass before the save finds it (the overwritten file) */
    if (rig_make(&r, TFM_OPTIMIZER_SGD, 1e30)) {
        expect_diverged("model to be saved NaN", run(&r, 0, 5, 1),
                        "step 1: the loss of the model about to be saved is NaN", before, ck, n_ck, best, n_best);
        rig_free(&r);
    }
    /* 3. without validation or periodic saves: the training loss of step 2 is NaN, the trainer
     * refuses the step, and the loop says so once */
    if (rig_make(&r, TFM_OPTIMIZER_SGD, 1e30)) {
        expect_diverged("training loss NaN", run(&r, 0, 5, 0), "training loss is NaN", before, ck, n_ck, best, n_best);
        CHECK(contains(tfm_last_error(), "step 2 (epoch"), "training loss NaN: at step 2: %s", tfm_last_error());
        rig_free(&r);
    }
    /* 4. an SGD step that overflows float: final norms scaled up make gradients of about 1e3, and
     * lr 3e38 makes the update infinite */
    if (rig_make(&r, TFM_OPTIMIZER_SGD, 3e38)) {
        float *base = (float *)r.m->param_arena.base;
        for (size_t e = 0; e < r.m->n_entries; e++) {
            const param_entry *pe = &r.m->entries[e];
            if (pe->alias_of < 0 && strstr(pe->name, "norm") && strstr(pe->name, "weight"))
                for (size_t i = 0; i < pe->numel; i++) base[pe->offset + i] *= 1000.0f;
        }
        tfm_status st = run(&r, 0, 5, 1);
        expect_diverged("infinite parameters", st, "inf after the update", before, ck, n_ck, best, n_best);
        CHECK(contains(tfm_last_error(), "step 1: parameter "), "infinite parameters: at step 1: %s", tfm_last_error());
        rig_free(&r);
    }
    /* 5. a run that saves steps 1 and 2, then a parameter turns NaN during step 3: the files of step
     * 2 (this run's last finite saves) stay, and the message says so */
    if (rig_make(&r, TFM_OPTIMIZER_ADAM, 3e-3)) {
        r.poke_at = 3;
        tfm_status st = run(&r, 1, 6, 1);
        free(ck);
        ck = slurp(tmp_path("ck.safetensors"), &n_ck);
        CHECK(st == TFM_ERR_NUMERIC && contains(tfm_last_error(), "step 3: validation loss is NaN") &&
                  contains(tfm_last_error(), "from step 2"),
              "NaN after saves: %s", tfm_last_error());
        tfm_model *m = NULL;
        CHECK(tfm_model_load(tmp_path("ck.safetensors"), &m) == TFM_OK && isfinite(((float *)m->param_arena.base)[7]),
              "NaN after saves: the checkpoint on disk is the finite one of step 2");
        tfm_model_free(m);
        rig_free(&r);
    }
    /* 7. Adam's second moment overflows while every weight and loss stays finite: the decoder's
     * final norm scaled by 1e22 makes the generator's gradient ~1e22, g² is +inf in float, the
     * update (m / sqrt(v)) is 0 — a resumable checkpoint would freeze those weights for good */
    if (rig_make(&r, TFM_OPTIMIZER_ADAM, 1e-3)) {
        float *base = (float *)r.m->param_arena.base;
        for (size_t e = 0; e < r.m->n_entries; e++) {
            const param_entry *pe = &r.m->entries[e];
            if (strcmp(pe->name, "transformer.decoder.norm.weight") == 0)
                for (size_t i = 0; i < pe->numel; i++) base[pe->offset + i] *= 1e22f;
        }
        tfm_status st = run(&r, 0, 5, 1);
        expect_diverged("optimizer state inf", st, "step 1: the optimizer state train_state.adam_v[", before, ck, n_ck,
                        best, n_best);
        rig_free(&r);
    }
    /* 8. the step itself reports which quantity was not finite, as fields (tfm_step_stats), and the
     * loop's message comes from them: SGD with lr 1e30 overflows the parameters, so the loss of step
     * 2 is NaN; with lr 1e8 the loss of step 2 stays finite but its gradient is NaN */
    const struct {
        double lr;
        tfm_non_finite what;
        const char *words;
    } num[2] = {{1e30, TFM_NON_FINITE_LOSS, "step 2 (epoch 0, batch 1): training loss is NaN; parameters left unchanged"},
                {1e8, TFM_NON_FINITE_GRAD_NORM,
                 "step 2 (epoch 0, batch 1): gradient norm is NaN; parameters left unchanged"}};
    for (int k = 0; k < 2; k++) {
        if (!rig_make(&r, TFM_OPTIMIZER_SGD, num[k].lr)) break;
        tfm_batch b;
        tfm_step_stats st[2];
        tfm_status sk[2] = {TFM_OK, TFM_OK};
        for (int i = 0; i < 2 && sk[0] == TFM_OK; i++) {
            sk[i] = tfm_batcher_next(r.tb, &b);
            if (sk[i] == TFM_OK) sk[i] = tfm_trainer_step(r.tr, b.B, b.S, b.T, b.src, b.tgt, &st[i]);
        }
        CHECK(sk[0] == TFM_OK && st[0].non_finite == TFM_NON_FINITE_NONE && st[0].non_finite_value == 0.0,
              "lr %g, step 1: status %d, non_finite %d (%s)", num[k].lr, (int)sk[0], (int)st[0].non_finite,
              tfm_last_error());
        CHECK(sk[1] == TFM_ERR_NUMERIC && st[1].non_finite == num[k].what && isnan(st[1].non_finite_value) &&
                  isnan(st[1].loss) == (num[k].what == TFM_NON_FINITE_LOSS),
              "lr %g, step 2: status %d, non_finite %d, value %g, loss %g (%s)", num[k].lr, (int)sk[1],
              (int)st[1].non_finite, st[1].non_finite_value, st[1].loss, tfm_last_error());
        rig_free(&r);
        if (rig_make(&r, TFM_OPTIMIZER_SGD, num[k].lr)) {
            expect_diverged(num[k].words, run(&r, 0, 5, 0), num[k].words, before, ck, n_ck, best, n_best);
            rig_free(&r);
        }
    }
    /* 6. no file before and none saved: the message says nothing was kept */
    unlink(tmp_path("ck.safetensors"));
    unlink(tmp_path("best.safetensors"));
    if (rig_make(&r, TFM_OPTIMIZER_SGD, 1e30)) {
        CHECK(run(&r, 1, 5, 1) == TFM_ERR_NUMERIC && contains(tfm_last_error(), "no earlier file to keep") &&
                  access(tmp_path("ck.safetensors"), F_OK) != 0 && access(tmp_path("best.safetensors"), F_OK) != 0,
              "no files: %s", tfm_last_error());
        rig_free(&r);
    }
    free(ck);
    free(best);
    tfm_dataset_free(g_train);
    tfm_dataset_free(g_valid);
    const char *names[] = {"train.src", "train.tgt", "valid.src", "valid.tgt", "ck.safetensors", "best.safetensors"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unlink(tmp_path(names[i]));
    rmdir(g_dir);
    return test_finish("hard_diverge");
}
