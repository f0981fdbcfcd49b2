/* The library training loop (include/tfm/train_loop.h), through the public API alone: a tiny model
 * on 24 id pairs in temp files. The step limit is honoured; the stop flag set from the progress
 * callback ends the run after that step with a resumable checkpoint; stopped + resumed (in a fresh
 * model and trainer, or by calling the loop again) equals uninterrupted, bit for bit; the best
 * checkpoint scores the lowest validation loss reported; a save into a missing folder fails before
 * any step; the time limit; a resume with other batches is refused. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include "test_tiny_model.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <stdint.h>
#include <unistd.h>

static char g_dir[256];

static const char *tmp_path(const char *name) {
    static char buf[8][512];
    static int slot = 0;
    char *b = buf[slot++ & 7];
    snprintf(b, sizeof buf[0], "%s/%s", g_dir, name);
    return b;
}

/* 24 pairs: sources of 3..7 ids, targets BOS + 2..6 ids + EOS, ids in [3, 20) (an LCG). The first
 * `n_valid` of a second draw make the validation files. */
static void write_ids(const char *src_path, const char *tgt_path, int n, uint32_t seed) {
    FILE *fs = fopen(src_path, "w"), *ft = fopen(tgt_path, "w");
    if (!fs || !ft) {
        fprintf(stderr, "cannot write %s or %s\n", src_path, tgt_path);
        exit(1);
    }
    uint32_t s = seed;
#define NEXT() (s = s * 1103515245u + 12345u, (int)((s >> 16) % 17u) + 3)
    for (int i = 0; i < n; i++) {
        int ls = 3 + NEXT() % 5, lt = 2 + NEXT() % 5;
        for (int j = 0; j < ls; j++) fprintf(fs, j ? " %d" : "%d", NEXT());
        fprintf(ft, "1");
        for (int j = 0; j < lt; j++) fprintf(ft, " %d", NEXT());
        fprintf(fs, "\n");
        fprintf(ft, " 2\n");
    }
#undef NEXT
    fclose(fs);
    fclose(ft);
}

static tfm_train_config train_config(void) {
    tfm_train_config tc = tfm_train_config_default();
    tc.lr = 3e-3;
    tc.dropout = 0.1f; /* the dropout RNG must resume too */
    tc.label_smoothing = 0.1f;
    tc.seed = 5;
    return tc;
}

static tfm_dataset *g_train, *g_valid;

/* A run's pieces: a model (new, seed 1, or loaded), its trainer (state loaded from `resume`), the
 * batchers. */
typedef struct {
    tfm_model *m;
    tfm_trainer *tr;
    tfm_batcher *tb, *vb;
} rig;

static int rig_make(rig *r, const char *resume, int batch_lines) {
    memset(r, 0, sizeof *r);
    tfm_train_config tc = train_config();
    tfm_config c = test_tiny_config();
    tfm_status s = resume ? tfm_model_load(resume, &r->m) : tfm_model_create(&c, 1, &r->m);
    if (s == TFM_OK) s = tfm_trainer_create(r->m, &tc, 1, 1, 2, &r->tr);
    if (s == TFM_OK && resume) s = tfm_trainer_load_state(r->tr, resume);
    if (s == TFM_OK) s = tfm_batcher_create_lines(g_train, batch_lines, 0, 1, 11, &r->tb);
    if (s == TFM_OK) s = tfm_batcher_create(g_valid, 40, 0, 0, 0, &r->vb);
    CHECK(s == TFM_OK, "setting up a run%s%s: %s", resume ? " from " : "", resume ? resume : "", tfm_last_error());
    return s == TFM_OK;
}

static void rig_free(rig *r) {
    tfm_trainer_free(r->tr);
    tfm_batcher_free(r->tb);
    tfm_batcher_free(r->vb);
    tfm_model_free(r->m);
}

/* What the callback saw. */
typedef struct {
    int steps, validations, saves, stops;
    int64_t stop_at;              /* set *stop during this step's event (0: never) */
    volatile sig_atomic_t *stop;
    double valid_loss[64];        /* by validation */
    int improved[64];
    int bad_order;                /* a STEP event whose step is not the previous + 1 */
    int64_t last_step;
} recorder;

static void record(const tfm_loop_event *ev, void *user) {
    recorder *r = user;
    switch (ev->kind) {
    case TFM_LOOP_EVENT_STEP:
        if (r->last_step && ev->step != r->last_step + 1) r->bad_order++;
        r->last_step = ev->step;
        r->steps++;
        if (r->stop_at && ev->step == r->stop_at) *r->stop = 1;
        break;
    case TFM_LOOP_EVENT_VALIDATION:
        if (r->validations < 64) {
            r->valid_loss[r->validations] = ev->valid_loss;
            r->improved[r->validations] = ev->improved;
        }
        r->validations++;
        break;
    case TFM_LOOP_EVENT_SAVE:
        r->saves++;
        break;
    case TFM_LOOP_EVENT_STOP:
        r->stops++;
        break;
    }
}

static tfm_loop_config loop_config(recorder *rec, volatile sig_atomic_t *stop, int64_t max_steps, const char *save,
                                   const char *best) {
    tfm_loop_config lc = tfm_loop_config_default();
    lc.max_steps = max_steps;
    lc.eval_every = 3;
    lc.save_path = save;
    lc.best_path = best;
    lc.stop = stop;
    lc.on_event = record;
    lc.user = rec;
    rec->stop = stop;
    return lc;
}

/* The bytes of a file (NULL if unreadable); *n its size. */
static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    *n = b && len >= 0 && fread(b, 1, (size_t)len, f) == (size_t)len ? (size_t)len : 0;
    fclose(f);
    return b;
}

static int same_file(const char *a, const char *b) {
    size_t na = 0, nb = 0;
    unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = x && y && na == nb && na > 0 && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* Mean negative log-likelihood per target of the validation set under the model in `path`. */
static double valid_loss_of(const char *path) {
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    tfm_batcher *vb = NULL;
    double sum = 0.0, lp[64];
    long n = 0;
    int nt[64];
    if (tfm_model_load(path, &m) != TFM_OK || tfm_context_create(m, &ctx) != TFM_OK ||
        tfm_batcher_create(g_valid, 40, 0, 0, 0, &vb) != TFM_OK) {
        CHECK(0, "scoring %s: %s", path, tfm_last_error());
        tfm_context_free(ctx);
        tfm_model_free(m);
        return NAN;
    }
    for (size_t k = 0; k < tfm_batcher_batches_per_epoch(vb); k++) {
        tfm_batch b;
        tfm_batcher_next(vb, &b);
        if (b.B > 64 || tfm_model_score(ctx, b.B, b.S, b.T, b.src, b.tgt, lp, nt, NULL) != TFM_OK) {
            CHECK(0, "scoring %s: %s", path, tfm_last_error());
            break;
        }
        for (int r = 0; r < b.B; r++) {
            sum -= lp[r];
            n += nt[r];
        }
    }
    tfm_batcher_free(vb);
    tfm_context_free(ctx);
    tfm_model_free(m);
    return n ? sum / (double)n : NAN;
}

/* 12 steps straight; the step limit, the events, the best model. */
static void test_straight(void) {
    rig r;
    if (!rig_make(&r, NULL, 5)) return;
    recorder rec = {0};
    volatile sig_atomic_t stop = 0;
    tfm_loop_config lc = loop_config(&rec, &stop, 12, tmp_path("straight.st"), tmp_path("straight.best.st"));
    tfm_loop_result res;
    tfm_status s = tfm_train_loop(r.tr, r.tb, r.vb, &lc, &res);
    CHECK(s == TFM_OK, "straight run: %s", tfm_last_error());
    CHECK(res.end == TFM_LOOP_END_STEPS && res.steps == 12 && res.run_steps == 12 && tfm_trainer_steps(r.tr) == 12,
          "step limit: end %d, %lld steps (%lld this run), want 12", (int)res.end, (long long)res.steps,
          (long long)res.run_steps);
    CHECK(rec.steps == 12 && rec.bad_order == 0, "%d STEP events (%d out of order), want 12", rec.steps,
          rec.bad_order);
    CHECK(rec.validations == 4 && rec.saves == 1 && rec.stops == 0,
          "every 3 of 12 steps: %d validations (want 4), %d saves (want 1), %d stops", rec.validations, rec.saves,
          rec.stops);
    /* improved marks exactly the running minima; the best file scores the lowest loss */
    double best = INFINITY;
    int flags_ok = 1;
    for (int k = 0; k < rec.validations && k < 64; k++) {
        flags_ok &= rec.improved[k] == (rec.valid_loss[k] < best);
        if (rec.valid_loss[k] < best) best = rec.valid_loss[k];
    }
    CHECK(flags_ok, "the improved flags are not the running minima of the validation losses");
    CHECK(res.best_valid_loss == best, "result best %.9g, lowest reported %.9g", res.best_valid_loss, best);
    CHECK_NEAR(valid_loss_of(tmp_path("straight.best.st")), best, 1e-9, "the best checkpoint's validation loss");
    CHECK(res.last_valid_loss == rec.valid_loss[rec.validations - 1], "result last_valid_loss");

    /* the whole run again reproduces the checkpoint (same seeds, same thread count) */
    rig r2;
    if (rig_make(&r2, NULL, 5)) {
        recorder rec2 = {0};
        tfm_loop_config lc2 = loop_config(&rec2, &stop, 12, tmp_path("again.st"), NULL);
        CHECK(tfm_train_loop(r2.tr, r2.tb, r2.vb, &lc2, NULL) == TFM_OK, "second straight run: %s", tfm_last_error());
        CHECK(same_file(tmp_path("straight.st"), tmp_path("again.st")), "two identical runs, different checkpoints");
        rig_free(&r2);
    }
    rig_free(&r);
}

/* Stopped from the callback at step 5, then resumed to 12: the same checkpoint as straight. */
static void test_stop_resume(void) {
    rig r;
    if (!rig_make(&r, NULL, 5)) return;
    recorder rec = {0};
    volatile sig_atomic_t stop = 0;
    rec.stop_at = 5;
    tfm_loop_config lc = loop_config(&rec, &stop, 12, tmp_path("split.st"), tmp_path("split.best.st"));
    tfm_loop_result res;
    tfm_status s = tfm_train_loop(r.tr, r.tb, r.vb, &lc, &res);
    CHECK(s == TFM_ERR_INTERRUPTED, "a stopped run returns TFM_ERR_INTERRUPTED, got %s (%s)", tfm_status_name(s),
          tfm_last_error());
    CHECK(res.end == TFM_LOOP_END_STOPPED && res.steps == 5 && rec.steps == 5 && rec.stops == 1,
          "stop at step 5: end %d, %lld steps, %d STEP and %d STOP events", (int)res.end, (long long)res.steps,
          rec.steps, rec.stops);
    CHECK(rec.saves == 1 && rec.validations == 1, "stopped at 5: %d saves (want 1), %d validations (want 1, at 3)",
          rec.saves, rec.validations);
    rig_free(&r);

    /* a fresh model and trainer from the checkpoint */
    if (!rig_make(&r, tmp_path("split.st"), 5)) return;
    CHECK(tfm_trainer_steps(r.tr) == 5, "the stopped checkpoint holds %lld steps, want 5",
          (long long)tfm_trainer_steps(r.tr));
    recorder rec2 = {0};
    stop = 0;
    lc = loop_config(&rec2, &stop, 12, tmp_path("split.st"), tmp_path("split.best.st"));
    s = tfm_train_loop(r.tr, r.tb, r.vb, &lc, &res);
    CHECK(s == TFM_OK && res.steps == 12 && res.run_steps == 7 && rec2.steps == 7,
          "resumed run: %s, %lld steps (%lld this run)", tfm_status_name(s), (long long)res.steps,
          (long long)res.run_steps);
    CHECK(same_file(tmp_path("straight.st"), tmp_path("split.st")),
          "12 steps straight != 5, stop, resume, 7 (checkpoints differ)");
    CHECK(same_file(tmp_path("straight.best.st"), tmp_path("split.best.st")),
          "best checkpoints differ between the straight and the resumed run");
    rig_free(&r);

    /* the same in one process: stop, then call the loop again on the same trainer */
    if (!rig_make(&r, NULL, 5)) return;
    recorder rec3 = {0};
    stop = 0;
    rec3.stop_at = 8;
    lc = loop_config(&rec3, &stop, 12, tmp_path("twice.st"), NULL);
    s = tfm_train_loop(r.tr, r.tb, r.vb, &lc, NULL);
    stop = 0;
    rec3.stop_at = 0;
    tfm_status s2 = tfm_train_loop(r.tr, r.tb, r.vb, &lc, &res);
    CHECK(s == TFM_ERR_INTERRUPTED && s2 == TFM_OK && res.steps == 12 && rec3.steps == 12,
          "stop at 8 then continue: %s, %s, %lld steps, %d STEP events", tfm_status_name(s), tfm_status_name(s2),
          (long long)res.steps, rec3.steps);
    CHECK(same_file(tmp_path("straight.st"), tmp_path("twice.st")),
          "12 steps straight != 8, stop, loop again to 12 (checkpoints differ)");
    rig_free(&r);

    /* a checkpoint of other batches is refused before any step */
    if (!rig_make(&r, tmp_path("split.st"), 6)) return;
    recorder rec4 = {0};
    lc = loop_config(&rec4, &stop, 20, tmp_path("other.st"), NULL);
    s = tfm_train_loop(r.tr, r.tb, r.vb, &lc, NULL);
    CHECK(s == TFM_ERR_INVALID_ARG && rec4.steps == 0 && strstr(tfm_last_error(), "same batches"),
          "resume with batches of 6 lines instead of 5: %s, %d steps (%s)", tfm_status_name(s), rec4.steps,
          tfm_last_error());
    rig_free(&r);
}

/* A save into a missing folder fails before training; the time limit ends a run. */
static void test_refusals_and_limits(void) {
    rig r;
    if (!rig_make(&r, NULL, 5)) return;
    recorder rec = {0};
    volatile sig_atomic_t stop = 0;
    tfm_loop_config lc = loop_config(&rec, &stop, 5, tmp_path("missing/m.st"), NULL);
    tfm_status s = tfm_train_loop(r.tr, r.tb, r.vb, &lc, NULL);
    CHECK(s == TFM_ERR_IO && rec.steps == 0 && tfm_trainer_steps(r.tr) == 0 &&
              strstr(tfm_last_error(), "is not an existing folder"),
          "save into a missing folder: %s after %d steps (%s)", tfm_status_name(s), rec.steps, tfm_last_error());
    lc = loop_config(&rec, &stop, 5, tmp_path("m.st"), tmp_path("missing/best.st"));
    s = tfm_train_loop(r.tr, r.tb, r.vb, &lc, NULL);
    CHECK(s == TFM_ERR_IO && rec.steps == 0, "best model into a missing folder: %s after %d steps",
          tfm_status_name(s), rec.steps);
    lc = loop_config(&rec, &stop, 0, NULL, NULL);
    CHECK(tfm_train_loop(r.tr, r.tb, r.vb, &lc, NULL) == TFM_ERR_INVALID_ARG, "max_steps 0 is refused");

    /* a time limit already reached: no step, ends by time, still saves */
    lc = loop_config(&rec, &stop, 1000, tmp_path("timed.st"), NULL);
    lc.time_limit_s = 1e-9;
    tfm_loop_result res;
    s = tfm_train_loop(r.tr, r.tb, r.vb, &lc, &res);
    CHECK(s == TFM_OK && res.end == TFM_LOOP_END_TIME && res.steps < 1000 && rec.saves == 1,
          "time limit: %s, end %d, %lld steps, %d saves", tfm_status_name(s), (int)res.end, (long long)res.steps,
          rec.saves);
    /* a stop flag set before the call: no step, a save, TFM_ERR_INTERRUPTED */
    stop = 1;
    lc = loop_config(&rec, &stop, 1000, tmp_path("timed.st"), NULL);
    int64_t before = tfm_trainer_steps(r.tr);
    s = tfm_train_loop(r.tr, r.tb, r.vb, &lc, &res);
    CHECK(s == TFM_ERR_INTERRUPTED && res.steps == before && res.end == TFM_LOOP_END_STOPPED,
          "stop set before the call: %s, %lld steps (had %lld)", tfm_status_name(s), (long long)res.steps,
          (long long)before);
    rig_free(&r);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "%s/tfm-loop-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "cannot make a temp dir under %s\n", g_dir);
        return 1;
    }
    write_ids(tmp_path("train.src"), tmp_path("train.tgt"), 24, 7);
    write_ids(tmp_path("valid.src"), tmp_path("valid.tgt"), 8, 99);
    if (tfm_dataset_from_ids(tmp_path("train.src"), tmp_path("train.tgt"), 16, &g_train, NULL) != TFM_OK ||
        tfm_dataset_from_ids(tmp_path("valid.src"), tmp_path("valid.tgt"), 16, &g_valid, NULL) != TFM_OK) {
        CHECK(0, "datasets: %s", tfm_last_error());
        return test_finish("train_loop");
    }
    test_straight();
    test_stop_resume();
    test_refusals_and_limits();
    tfm_dataset_free(g_train);
    tfm_dataset_free(g_valid);
    const char *names[] = {"train.src", "train.tgt", "valid.src", "valid.tgt", "straight.st", "straight.best.st",
                           "again.st", "split.st", "split.best.st", "twice.st", "other.st", "m.st", "timed.st"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) unlink(tmp_path(names[k]));
    rmdir(g_dir);
    return test_finish("train_loop");
}
