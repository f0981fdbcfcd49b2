/* The training loop (include/tfm/train_loop.h): steps, validation, best model, checkpoints, limits,
 * the stop flag and progress events, over the public trainer, batcher and scoring calls.
 *
 * The order of work in one iteration is fixed, because exact resume depends on it: check *stop and
 * the time limit; take the next batch; step; report; validate (every eval_every steps and after the
 * last); save (every save_every steps but the last). The final save records the batcher position of
 * the next batch, so a resumed run takes exactly the batches (and, through the trainer's RNG, the
 * dropout masks) the uninterrupted run would have taken.
 *
 * Divergence (docs/HARDENING.md): a non-finite training loss or gradient norm (the trainer refuses
 * the step), non-finite parameters after an update, a non-finite validation loss, or — just before
 * a save that no finite validation of the same step vouches for — a non-finite loss of the model
 * about to be saved on the last training batch (a forward pass, dropout off: parameters can be
 * finite yet so large that the next forward overflows) ends the run with TFM_ERR_NUMERIC at once:
 * no checkpoint or best model is ever written from a diverged model, so the files on disk are the
 * last finite ones, and the message says which.
 *
 * With ranks (tfm_trainer_set_dist, docs/MPI.md) every rank runs this loop over the same batches;
 * rank 0 alone validates, writes files and emits events; the stop flag and the time limit are
 * agreed by all ranks before each step (any rank's stop flag, rank 0's clock), so every rank takes
 * the same steps; before the first step every rank must hold the same settings, weights, optimizer
 * state and data, and at every checkpoint the same weights (fingerprints, dist.c). */
#include "core_internal.h"
#include "data_internal.h"
#include "dist_internal.h"
#include "model_params.h"
#include "tfm/fileio.h"
#include "tfm/score.h"
#include "tfm/train_loop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The window over which tokens per second are measured, in seconds. */
#define TOKENS_WINDOW_S 2.0

tfm_loop_config tfm_loop_config_default(void) {
    tfm_loop_config c;
    memset(&c, 0, sizeof c);
    c.max_steps = 1;
    c.save_resumable = 1;
    return c;
}

/* TFM_ERR_IO unless a file could be saved at `path` (its folder exists), naming `what`. */
static tfm_status check_folder(const char *what, const char *path) {
    if (tfm_atomic_file_check_folder(path) == TFM_OK) return TFM_OK;
    return tfm_error_prefix(TFM_ERR_IO, "%s: ", what);
}

static tfm_status check_config(const tfm_loop_config *c) {
    RETURN_IF(c->max_steps < 1, TFM_ERR_INVALID_ARG, "training loop: max_steps must be >= 1, got %lld",
              (long long)c->max_steps);
    RETURN_IF(!(c->time_limit_s >= 0.0), TFM_ERR_INVALID_ARG,
              "training loop: time_limit_s must be >= 0 (0: none), got %g", c->time_limit_s);
    RETURN_IF(c->eval_every < 0 || c->save_every < 0, TFM_ERR_INVALID_ARG,
              "training loop: eval_every and save_every must be >= 0 (0: only at the end), got %lld and %lld",
              (long long)c->eval_every, (long long)c->save_every);
    RETURN_IF(c->save_resumable != 0 && c->save_resumable != 1, TFM_ERR_INVALID_ARG,
              "training loop: save_resumable must be 0 or 1, got %d", c->save_resumable);
    if (c->save_path) TRY(check_folder("checkpoint", c->save_path));
    if (c->best_path) TRY(check_folder("best model", c->best_path));
    return TFM_OK;
}

/* Everything one run keeps between steps. */
typedef struct {
    tfm_trainer *tr;
    tfm_batcher *train, *valid;
    const tfm_loop_config *cfg;
    double *logprob; /* [max_B of valid and train] scores of one batch */
    int *ntok;       /* [max_B of valid and train] */
    tfm_context *vctx; /* the scoring passes' own workspace (the trainer's stays laid out for steps) */
    tfm_batch last_batch; /* the last training batch (the batcher's buffers stay valid until its next call) */
    int64_t last_step;   /* the step that trained on last_batch; -1: none in this call */
    int64_t vouched_step; /* the step whose model a finite validation loss vouched for; -1: none */
    double t0;       /* start of the call, seconds */
    int64_t step0;   /* the trainer's step count at the start */
    double best;     /* lowest validation loss so far */
    double last;     /* the last validation loss of this call */
    int64_t saved_step; /* step of this call's last write of save_path; -1: none yet */
    int64_t best_step;  /* step of this call's last write of best_path; -1: none yet */
    tfm_dist *dist;  /* the trainer's ranks (NULL: one process) */
    int root;        /* this process validates, saves and reports (rank 0) */
} loop_state;

/* "NaN", "+inf" or "-inf" for a non-finite x. */
static const char *non_finite_name(double x) { return isnan(x) ? "NaN" : x > 0 ? "+inf" : "-inf"; }

/* Appends to buf what a stopped run leaves on disk for `path` (the `what` file), e.g.
 * "; kept m.safetensors from step 10". */
static void describe_kept(char *buf, size_t cap, const char *what, const char *path, int64_t step) {
    if (!path) return;
    const size_t used = strlen(buf);
    if (step >= 0)
        snprintf(buf + used, cap - used, "; kept %s %s from step %lld", what, path, (long long)step);
    else if (access(path, F_OK) == 0)
        snprintf(buf + used, cap - used, "; kept %s %s as it was before this run", what, path);
}

/* Ends the run on a non-finite quantity: TFM_ERR_NUMERIC with "step N[ WHERE]: WHAT; training
 * stopped, nothing saved; kept ...". `what` was formatted by the caller (e.g. "validation loss is
 * NaN"); `where` is "" or e.g. " (epoch 0, batch 3)". */
static tfm_status diverged(const loop_state *s, int64_t step, const char *where, const char *what) {
    char kept[768] = "";
    describe_kept(kept, sizeof kept, "checkpoint", s->cfg->save_path, s->saved_step);
    describe_kept(kept, sizeof kept, "best model", s->cfg->best_path, s->best_step);
    return tfm_set_error(TFM_ERR_NUMERIC, "step %lld%s: %s; training stopped, nothing saved%s", (long long)step,
                         where, what, kept[0] ? kept : "; no earlier file to keep");
}

/* TFM_ERR_NUMERIC (through diverged) if a parameter of the model is NaN or infinite after the
 * update of `step`, naming the first such tensor and element. */
static tfm_status check_params(const loop_state *s, int64_t step) {
    const char *tensor = NULL;
    size_t i = 0;
    float v = 0.0f;
    if (!model_params_non_finite(tfm_trainer_model(s->tr), &tensor, &i, &v)) return TFM_OK;
    char what[256];
    snprintf(what, sizeof what, "parameter %s[%zu] is %s after the update", tensor, i, non_finite_name((double)v));
    return diverged(s, step, "", what);
}

static void emit(const loop_state *s, tfm_loop_event *ev) {
    ev->step = tfm_trainer_steps(s->tr);
    ev->run_steps = ev->step - s->step0;
    ev->elapsed_s = tfm_now_s() - s->t0;
    if (s->cfg->on_event && s->root) s->cfg->on_event(ev, s->cfg->user);
}

/* Mean negative log-likelihood per target token over one pass of the validation batcher, nats. */
static tfm_status validation_loss(loop_state *s, double *loss) {
    TRY(tfm_batcher_seek(s->valid, 0, 0));
    double sum = 0.0;
    long long n = 0;
    const size_t nb = tfm_batcher_batches_per_epoch(s->valid);
    for (size_t k = 0; k < nb; k++) {
        tfm_batch b;
        tfm_status st = tfm_batcher_next(s->valid, &b);
        if (st == TFM_OK) st = tfm_model_score(s->vctx, b.B, b.S, b.T, b.src, b.tgt, s->logprob, s->ntok, NULL);
        if (st != TFM_OK) return tfm_error_prefix(st, "validation: ");
        for (int r = 0; r < b.B; r++) {
            sum += s->logprob[r];
            n += s->ntok[r];
        }
    }
    *loss = n > 0 ? -sum / (double)n : 0.0;
    return TFM_OK;
}

/* Before a save: unless a finite validation of this step vouched for the model, scores the last
 * training batch (last_batch) and ends the run (diverged) if its loss is not finite. */
static tfm_status check_before_save(loop_state *s) {
    const int64_t step = tfm_trainer_steps(s->tr);
    if (s->vouched_step == step || s->last_step != step) return TFM_OK; /* vouched for, or not trained here */
    const tfm_batch *b = &s->last_batch;
    TRY(tfm_model_score(s->vctx, b->B, b->S, b->T, b->src, b->tgt, s->logprob, s->ntok, NULL));
    double sum = 0.0;
    for (int r = 0; r < b->B; r++) sum += s->logprob[r];
    if (!isfinite(sum)) {
        char what[128];
        snprintf(what, sizeof what, "the loss of the model about to be saved is %s on the last training batch",
                 non_finite_name(-sum));
        return diverged(s, step, "", what);
    }
    s->vouched_step = step;
    return TFM_OK;
}

/* Validates, keeps the best model, reports. */
static tfm_status validate(loop_state *s) {
    double vl = 0.0;
    TRY(validation_loss(s, &vl));
    if (!isfinite(vl)) { /* before the best model is considered: a diverged model is never saved */
        char what[64];
        snprintf(what, sizeof what, "validation loss is %s", non_finite_name(vl));
        return diverged(s, tfm_trainer_steps(s->tr), "", what);
    }
    tfm_loop_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = TFM_LOOP_EVENT_VALIDATION;
    ev.valid_loss = vl;
    ev.valid_perplexity = exp(vl);
    ev.improved = vl < s->best;
    s->last = vl;
    s->vouched_step = tfm_trainer_steps(s->tr);
    if (ev.improved) {
        s->best = vl;
        if (s->cfg->best_path) {
            TRY(tfm_model_save(tfm_trainer_model(s->tr), s->cfg->best_path));
            s->best_step = tfm_trainer_steps(s->tr);
            ev.path = s->cfg->best_path;
        }
    }
    emit(s, &ev);
    return TFM_OK;
}

/* Records the position of the next batch and the best loss in the trainer, then writes save_path. */
static tfm_status save(loop_state *s) {
    tfm_train_progress p = tfm_trainer_progress(s->tr);
    tfm_batcher_position(s->train, &p.epoch, &p.index);
    p.best_valid_loss = s->best;
    p.batch_tokens = tfm_batcher_batching(s->train);
    tfm_trainer_set_progress(s->tr, &p);
    if (!s->cfg->save_path) return TFM_OK;
    TRY(dist_check_same(s->dist, trainer_weights_fingerprint(s->tr), "the weights at the checkpoint"));
    if (!s->root) return TFM_OK;
    TRY(check_before_save(s));
    const char *moment = NULL;
    size_t at = 0;
    if (s->cfg->save_resumable && trainer_optimizer_non_finite(s->tr, &moment, &at)) {
        char what[128];
        snprintf(what, sizeof what, "the optimizer state train_state.%s[%zu] is not finite", moment, at);
        return diverged(s, tfm_trainer_steps(s->tr), "", what);
    }
    if (s->cfg->save_resumable) TRY(tfm_trainer_save(s->tr, s->cfg->save_path));
    else TRY(tfm_model_save(tfm_trainer_model(s->tr), s->cfg->save_path));
    s->saved_step = tfm_trainer_steps(s->tr);
    tfm_loop_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = TFM_LOOP_EVENT_SAVE;
    ev.path = s->cfg->save_path;
    emit(s, &ev);
    return TFM_OK;
}

/* Seeks to the trainer's recorded position and reserves memory for every batch shape. */
static tfm_status prepare(loop_state *s) {
    tfm_train_progress p = tfm_trainer_progress(s->tr);
    const int64_t batching = tfm_batcher_batching(s->train);
    RETURN_IF(p.batch_tokens != 0 && p.batch_tokens != batching, TFM_ERR_INVALID_ARG,
              "training loop: the trainer's data position (epoch %llu, batch %llu) refers to batches of %lld %s "
              "but the batcher makes batches of %lld %s: an exact resume needs the same batches",
              (unsigned long long)p.epoch, (unsigned long long)p.index,
              (long long)(p.batch_tokens > 0 ? p.batch_tokens : -p.batch_tokens),
              p.batch_tokens > 0 ? "tokens" : "lines", (long long)(batching > 0 ? batching : -batching),
              batching > 0 ? "tokens" : "lines");
    TRY(tfm_batcher_seek(s->train, p.epoch, p.index));
    p.batch_tokens = batching;
    tfm_trainer_set_progress(s->tr, &p);
    s->best = p.best_valid_loss;
    for (size_t k = 0; k < batcher_shape_count(s->train); k++) {
        int B, S, T;
        batcher_shape(s->train, k, &B, &S, &T);
        TRY(tfm_trainer_reserve(s->tr, B, S, T));
    }
    TRY(dist_check_run(s->dist, s->tr, s->train, s->cfg));
    int max_B = 0, valid_B = 0;
    tfm_batcher_max_dims(s->train, &max_B, NULL, NULL);
    if (s->valid) tfm_batcher_max_dims(s->valid, &valid_B, NULL, NULL);
    if (valid_B > max_B) max_B = valid_B;
    s->logprob = malloc((size_t)max_B * sizeof *s->logprob);
    s->ntok = malloc((size_t)max_B * sizeof *s->ntok);
    RETURN_IF(!s->logprob || !s->ntok, TFM_ERR_NOMEM, "out of memory for %d scores", max_B);
    TRY(tfm_context_create_opts(tfm_trainer_model(s->tr), &tfm_trainer_config(s->tr)->kernels, &s->vctx));
    return TFM_OK;
}

/* The steps: returns how the run ended, or an error. */
static tfm_status run(loop_state *s, tfm_loop_end *end) {
    const tfm_loop_config *c = s->cfg;
    const double limit = c->time_limit_s;
    double window_tok = 0.0, window_t = s->t0, tok_s = 0.0;
    int64_t step = tfm_trainer_steps(s->tr), validated = step;
    *end = TFM_LOOP_END_STEPS;
    const int agree = tfm_dist_size(s->dist) > 1;
    while (step < c->max_steps) {
        int64_t v[2] = {c->stop ? *c->stop : 0, s->root && limit > 0 && tfm_now_s() - s->t0 >= limit};
        if (agree) { /* any rank's stop flag, rank 0's clock */
            TRY(dist_max_i64(s->dist, v, 2, "waiting for rank 0 (validation, checkpoint) and the stop decision"));
            if (v[0] && c->stop) *c->stop = (sig_atomic_t)v[0];
        }
        if (v[0]) {
            *end = TFM_LOOP_END_STOPPED;
            break;
        }
        if (v[1]) {
            *end = TFM_LOOP_END_TIME;
            break;
        }
        uint64_t epoch, index;
        tfm_batcher_position(s->train, &epoch, &index);
        tfm_batch b;
        tfm_loop_event ev;
        memset(&ev, 0, sizeof ev);
        tfm_status st = tfm_batcher_next(s->train, &b);
        if (st == TFM_OK) st = tfm_trainer_step(s->tr, b.B, b.S, b.T, b.src, b.tgt, &ev.stats);
        if (st == TFM_ERR_NUMERIC && ev.stats.non_finite != TFM_NON_FINITE_NONE) {
            /* the trainer refused a non-finite loss or gradient norm: said again here in the loop's
             * words, the step once (not "step 2: step 2:") */
            char what[128], where[64];
            snprintf(what, sizeof what, "%s is %s; parameters left unchanged",
                     ev.stats.non_finite == TFM_NON_FINITE_GRAD_NORM ? "gradient norm" : "training loss",
                     non_finite_name(ev.stats.non_finite_value));
            snprintf(where, sizeof where, " (epoch %llu, batch %llu)", (unsigned long long)epoch,
                     (unsigned long long)index);
            return diverged(s, step + 1, where, what);
        }
        if (st != TFM_OK) {
            char where[96];
            snprintf(where, sizeof where, "training step %lld (epoch %llu, batch %llu)", (long long)step + 1,
                     (unsigned long long)epoch, (unsigned long long)index);
            return tfm_error_prefix(st, "%s: ", where);
        }
        step++;
        s->last_batch = b;
        s->last_step = step;
        TRY(check_params(s, step));
        const double now = tfm_now_s();
        window_tok += (double)ev.stats.n_tokens;
        if (now - window_t >= TOKENS_WINDOW_S) {
            tok_s = window_tok / (now - window_t);
            window_tok = 0.0;
            window_t = now;
        }
        ev.kind = TFM_LOOP_EVENT_STEP;
        ev.tokens_per_s = tok_s;
        emit(s, &ev);
        /* with ranks the time limit is decided (agreed) at the top of the next iteration, which
         * then validates after the loop: the same steps, one small allreduce fewer per step */
        const int time_up = !agree && limit > 0 && tfm_now_s() - s->t0 >= limit;
        const int last = step == c->max_steps || time_up;
        if (time_up) *end = TFM_LOOP_END_TIME;
        if (s->valid && ((c->eval_every > 0 && step % c->eval_every == 0) || last)) {
            TRY(validate(s));
            validated = step;
        }
        if (c->save_every > 0 && step % c->save_every == 0 && !last) TRY(save(s));
        if (time_up) break;
    }
    /* stopped by the time limit between validations: validate the last model too */
    if (s->valid && validated != step && *end != TFM_LOOP_END_STOPPED) TRY(validate(s));
    return TFM_OK;
}

tfm_status tfm_train_loop(tfm_trainer *tr, tfm_batcher *train, tfm_batcher *valid, const tfm_loop_config *cfg,
                          tfm_loop_result *result) {
    RETURN_IF(!tr || !train || !cfg, TFM_ERR_INVALID_ARG, "training loop: NULL trainer, batcher or configuration");
    TRY(check_config(cfg));
    loop_state s;
    memset(&s, 0, sizeof s);
    s.tr = tr;
    s.train = train;
    s.dist = trainer_dist(tr);
    s.root = tfm_dist_rank(s.dist) == 0;
    s.valid = s.root ? valid : NULL; /* rank 0 alone validates */
    s.cfg = cfg;
    s.last = NAN;
    s.saved_step = s.best_step = s.last_step = s.vouched_step = -1;
    s.step0 = tfm_trainer_steps(tr);
    tfm_loop_end end = TFM_LOOP_END_STEPS;
    tfm_status st = prepare(&s);
    s.t0 = tfm_now_s(); /* the time limit counts training, not the reservation before it */
    if (st == TFM_OK) st = run(&s, &end);
    if (st == TFM_OK && end == TFM_LOOP_END_STOPPED) {
        tfm_loop_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = TFM_LOOP_EVENT_STOP;
        emit(&s, &ev);
    }
    if (st == TFM_OK) st = save(&s);
    free(s.logprob);
    free(s.ntok);
    tfm_context_free(s.vctx);
    if (result) {
        result->end = end;
        result->steps = tfm_trainer_steps(tr);
        result->run_steps = result->steps - s.step0;
        result->elapsed_s = tfm_now_s() - s.t0;
        result->best_valid_loss = s.best;
        result->last_valid_loss = s.last;
    }
    TRY(st);
    RETURN_IF(end == TFM_LOOP_END_STOPPED, TFM_ERR_INTERRUPTED, "training stopped at step %lld%s%s",
              (long long)tfm_trainer_steps(tr), cfg->save_path ? "; saved " : "",
              cfg->save_path ? cfg->save_path : "");
    return TFM_OK;
}
