/* tfm train --data DIR: the main job. Trains (or loads) the joint SentencePiece tokenizer, encodes
 * the corpus, batches by token count with length bucketing, trains with the paper's recipe
 * (noam warm-up, label smoothing, dropout, clipping), validates and checkpoints every N steps,
 * keeps the best model, stops at --steps or --time-limit, and saves on Ctrl-C. */
#define _POSIX_C_SOURCE 200809L /* sigaction, clock_gettime */
#include "model_flags.h"
#include "text_io.h"
#include "train_text.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop_signal = 0;

static void on_signal(int sig) { g_stop_signal = sig; }

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int file_exists(const char *p) { return access(p, R_OK) == 0; }

typedef struct {
    const char *data, *src, *tgt, *init, *resume, *save, *save_best;
    int steps, batch_tokens, warmup, seed, vocab_size, eval_every, log_every, save_every;
    float lr, dropout, smoothing, clip, time_limit;
    const char *optimizer, *schedule;
} text_flags;

/* Mean negative log-likelihood per target token over a whole (unshuffled) set, in nats. */
static int validation_loss(tfm_model *m, tfm_batcher *vb, double *loss) {
    double sum = 0.0;
    long long ntok = 0;
    size_t n = tfm_batcher_batches_per_epoch(vb);
    int max_B, max_S, max_T;
    tfm_batcher_max_dims(vb, &max_B, &max_S, &max_T);
    double *lp = malloc((size_t)max_B * sizeof *lp);
    int *nt = malloc((size_t)max_B * sizeof *nt);
    if (!lp || !nt) {
        free(lp);
        free(nt);
        cli_error("train", "out of memory");
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        tfm_batch b;
        tfm_context *ctx = NULL; /* scoring needs a context (part A's API); one per batch keeps this edit small */
        if (tfm_batcher_next(vb, &b) != TFM_OK || tfm_context_create(m, &ctx) != TFM_OK ||
            tfm_model_score(ctx, b.B, b.S, b.T, b.src, b.tgt, lp, nt, NULL) != TFM_OK) {
            cli_error("train", "validation: %s", tfm_last_error());
            tfm_context_free(ctx);
            free(lp);
            free(nt);
            return 0;
        }
        tfm_context_free(ctx);
        for (int r = 0; r < b.B; r++) {
            sum += lp[r];
            ntok += nt[r];
        }
    }
    free(lp);
    free(nt);
    *loss = ntok > 0 ? -sum / (double)ntok : 0.0;
    return 1;
}

/* Validation loss of the current model; saves it to best_file if it is the best so far. */
static int validate(tfm_model *m, tfm_batcher *vb, int tty, int step, double *best_loss, const char *best_file) {
    double vl;
    if (!validation_loss(m, vb, &vl)) return 0;
    int improved = vl < *best_loss;
    if (improved) *best_loss = vl;
    fprintf(stderr, "%sstep %d validation loss %.4f perplexity %.2f%s\n", tty ? "\n" : "", step, vl, exp(vl),
            improved ? " (best)" : "");
    if (improved && tfm_model_save(m, best_file) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        return 0;
    }
    return 1;
}

/* The model plus everything --resume needs (the trainer's state and the data position). */
static int save_resumable(tfm_trainer *tr, const tfm_batcher *tb, double best_loss, const char *path) {
    tfm_train_progress p;
    tfm_batcher_position(tb, &p.epoch, &p.index);
    p.best_valid_loss = best_loss;
    p.batch_tokens = tfm_trainer_progress(tr).batch_tokens;
    tfm_trainer_set_progress(tr, &p);
    if (tfm_trainer_save(tr, path) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        return 0;
    }
    return 1;
}

/* "<save minus .safetensors>.best.safetensors" */
static char *best_path(const char *save) {
    size_t n = strlen(save);
    const char *ext = ".safetensors";
    size_t e = strlen(ext);
    size_t stem = n >= e && strcmp(save + n - e, ext) == 0 ? n - e : n;
    char *p = malloc(stem + 32);
    if (p) snprintf(p, stem + 32, "%.*s.best.safetensors", (int)stem, save);
    return p;
}

static void progress(int tty, int step, int steps, int done_here, double loss, double lr, double tok_s,
                     double elapsed, double limit_s) {
    double per_step = done_here > 0 ? elapsed / done_here : 0.0;
    double eta = per_step * (steps - step);
    if (limit_s > 0 && limit_s - elapsed < eta) eta = limit_s - elapsed;
    if (eta < 0) eta = 0;
    if (tty) {
        double frac = limit_s > 0 && elapsed / limit_s > (double)step / steps ? elapsed / limit_s : (double)step / steps;
        int filled = (int)(frac * 24);
        char bar[25];
        for (int i = 0; i < 24; i++) bar[i] = i < filled ? '#' : '.';
        bar[24] = '\0';
        fprintf(stderr, "\r[%s] step %d loss %.4f lr %.2e %.0f tok/s ETA %02d:%02d   ", bar, step, loss, lr, tok_s,
                (int)(eta / 60), (int)eta % 60);
    } else {
        fprintf(stderr, "step %d loss %.4f lr %.3e tokens/s %.0f elapsed %.0fs eta %.0fs\n", step, loss, lr, tok_s,
                elapsed, eta);
    }
}

/* The tokenizer of --init's model, or one trained jointly on both training sides. */
static int get_tokenizer(tfm_model *m, const char *const paths[2], int vocab, tfm_tokenizer **tok) {
    size_t len = 0;
    const unsigned char *bytes = m ? tfm_model_tokenizer(m, &len) : NULL;
    if (bytes) {
        if (tfm_tokenizer_load_bytes(bytes, len, tok) != TFM_OK) {
            cli_error("train", "the model's tokenizer: %s", tfm_last_error());
            return 0;
        }
        return 1;
    }
    tfm_tokenizer_train_opts o;
    tfm_tokenizer_train_opts_default(&o);
    o.vocab_size = vocab;
    fprintf(stderr, "tfm train: training a joint %d-piece SentencePiece vocabulary on %s and %s\n", vocab, paths[0],
            paths[1]);
    if (tfm_tokenizer_train(paths, 2, &o, tok) != TFM_OK) {
        cli_error("train", "tokenizer: %s", tfm_last_error());
        return 0;
    }
    return 1;
}

int train_text_run(const cli_command *cmd, int argc, char **argv) {
    model_flags mf = model_flags_default();
    mf.c.norm_first = 1; /* pre-LN trains stably at this learning rate (DESIGN.md §6) */
    mf.c.tie_embeddings = 1;
    text_flags f = {NULL, "en", "es", NULL, NULL, NULL, NULL, 1000000, 3000, 400, 1, 8000, 500, 50, 0,
                    0.32f, 0.1f, 0.1f, 1.0f, 0.0f, "adam", "noam"};
    cli_opt opts[] = {
        {"--data", OPT_STR, &f.data, 1, "corpus folder with train.SRC, train.TGT (and valid.*)"},
        {"--src", OPT_STR, &f.src, 0, "source language suffix"},
        {"--tgt", OPT_STR, &f.tgt, 0, "target language suffix"},
        {"--save", OPT_STR, &f.save, 1, "checkpoint to write (atomically; also every --save-every steps)"},
        {"--save-best", OPT_STR, &f.save_best, 0, "where the best model by validation loss goes "
                                                  "(default: SAVE with .best.safetensors)"},
        {"--init", OPT_STR, &f.init, 0, "start from this checkpoint's weights instead of a fresh model (model "
                                        "flags are then ignored)"},
        {"--resume", OPT_STR, &f.resume, 0, "continue a run exactly: weights, Adam moments, step, data position, "
                                            "RNG (same training flags; model flags are ignored)"},
        {"--steps", OPT_INT, &f.steps, 0, "stop after this many steps"},
        {"--time-limit", OPT_FLOAT, &f.time_limit, 0, "stop after this many minutes of training (0: none)"},
        {"--batch-tokens", OPT_INT, &f.batch_tokens, 0, "tokens per batch, padding included"},
        {"--optimizer", OPT_STR, &f.optimizer, 0, "adam or sgd"},
        {"--lr", OPT_FLOAT, &f.lr, 0, "noam factor (peak = lr / sqrt(d_model * warmup)) or constant lr"},
        {"--schedule", OPT_STR, &f.schedule, 0, "noam or constant"},
        {"--warmup", OPT_INT, &f.warmup, 0, "warm-up steps"},
        {"--dropout", OPT_FLOAT, &f.dropout, 0, "dropout probability"},
        {"--label-smoothing", OPT_FLOAT, &f.smoothing, 0, "label smoothing epsilon"},
        {"--clip-norm", OPT_FLOAT, &f.clip, 0, "clip the global gradient norm (0: off)"},
        {"--seed", OPT_INT, &f.seed, 0, "seed of initialisation, shuffling and dropout"},
        {"--vocab-size", OPT_INT, &f.vocab_size, 0, "joint subword vocabulary (when the model has no tokenizer)"},
        {"--eval-every", OPT_INT, &f.eval_every, 0, "validate (and checkpoint) every N steps"},
        {"--save-every", OPT_INT, &f.save_every, 0, "checkpoint every N steps (default: --eval-every)"},
        {"--log-every", OPT_INT, &f.log_every, 0, "log line every N steps when stderr is not a terminal"},
        MODEL_OPTS(mf),
    };
    int r = cli_parse(cmd, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    tfm_train_config tc = tfm_train_config_default();
    if (strcmp(f.optimizer, "adam") == 0) tc.optimizer = TFM_OPTIMIZER_ADAM;
    else if (strcmp(f.optimizer, "sgd") == 0) tc.optimizer = TFM_OPTIMIZER_SGD;
    else {
        cli_error("train", "--optimizer must be adam or sgd, got '%s'", f.optimizer);
        return EXIT_USAGE;
    }
    if (strcmp(f.schedule, "noam") == 0) tc.schedule = TFM_SCHEDULE_NOAM;
    else if (strcmp(f.schedule, "constant") == 0) tc.schedule = TFM_SCHEDULE_CONSTANT;
    else {
        cli_error("train", "--schedule must be noam or constant, got '%s'", f.schedule);
        return EXIT_USAGE;
    }
    if (f.steps < 1 || f.batch_tokens < 1 || f.seed < 0 || f.eval_every < 1 || f.log_every < 1 || f.save_every < 0 ||
        !(f.time_limit >= 0)) {
        cli_error("train", "--steps, --batch-tokens, --eval-every and --log-every must be >= 1; --seed, "
                           "--save-every and --time-limit >= 0");
        return EXIT_USAGE;
    }
    if (f.save_every == 0) f.save_every = f.eval_every;
    if (f.init && f.resume) {
        cli_error("train", "--init and --resume exclude each other (--resume also restores the optimizer)");
        return EXIT_USAGE;
    }
    const char *start = f.resume ? f.resume : f.init;
    if (!output_dir_ok("train", f.save) || (f.save_best && !output_dir_ok("train", f.save_best))) return EXIT_RUNTIME;
    tc.lr = f.lr;
    tc.warmup = f.warmup;
    tc.dropout = f.dropout;
    tc.label_smoothing = f.smoothing;
    tc.clip_norm = f.clip;
    tc.seed = (uint64_t)f.seed;

    char path[4][4096];
    snprintf(path[0], sizeof path[0], "%s/train.%s", f.data, f.src);
    snprintf(path[1], sizeof path[1], "%s/train.%s", f.data, f.tgt);
    snprintf(path[2], sizeof path[2], "%s/valid.%s", f.data, f.src);
    snprintf(path[3], sizeof path[3], "%s/valid.%s", f.data, f.tgt);
    for (int i = 0; i < 2; i++)
        if (!file_exists(path[i])) {
            cli_error("train", "no corpus: %s is missing (scripts/get-corpus makes data/bible-en-es)", path[i]);
            return EXIT_RUNTIME;
        }
    const int have_valid = file_exists(path[2]) && file_exists(path[3]);

    tfm_model *m = NULL;
    tfm_tokenizer *tok = NULL;
    tfm_dataset *train = NULL, *valid = NULL;
    tfm_batcher *tb = NULL, *vb = NULL;
    tfm_trainer *tr = NULL;
    char *best = f.save_best ? NULL : best_path(f.save);
    const char *best_file = f.save_best ? f.save_best : best;
    int rc = EXIT_RUNTIME;
    if (start && tfm_model_load(start, &m) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    if (!start && !model_flags_resolve("train", &mf)) {
        rc = EXIT_USAGE;
        goto done;
    }
    const char *const train_paths[2] = {path[0], path[1]};
    if (!get_tokenizer(m, train_paths, m ? tfm_model_config(m)->src_vocab : f.vocab_size, &tok)) goto done;
    const int V = tfm_tokenizer_vocab_size(tok);
    if (!m) {
        mf.c.src_vocab = mf.c.tgt_vocab = V;
        mf.c.pad_id = tfm_tokenizer_pad_id(tok);
        mf.c.bos_id = tfm_tokenizer_bos_id(tok);
        mf.c.eos_id = tfm_tokenizer_eos_id(tok);
        if (tfm_model_create(&mf.c, (uint64_t)f.seed, &m) != TFM_OK) {
            cli_error("train", "%s", tfm_last_error());
            goto done;
        }
    }
    const tfm_config *c = tfm_model_config(m);
    if (tfm_tokenizer_check_model(tok, c) != TFM_OK) {
        cli_error("train", "%s: %s", start ? start : "the new model", tfm_last_error());
        goto done;
    }
    if (!tfm_model_tokenizer(m, &(size_t){0})) {
        uint8_t *bytes;
        size_t len;
        if (tfm_tokenizer_serialize(tok, &bytes, &len) != TFM_OK || tfm_model_set_tokenizer(m, bytes, len) != TFM_OK) {
            cli_error("train", "%s", tfm_last_error());
            goto done;
        }
        free(bytes);
    }
    tfm_dataset_stats ts, vs;
    if (tfm_dataset_from_text(tok, path[0], path[1], c->max_len, c->bos_id, c->eos_id, &train, &ts) != TFM_OK ||
        (have_valid &&
         tfm_dataset_from_text(tok, path[2], path[3], c->max_len, c->bos_id, c->eos_id, &valid, &vs) != TFM_OK)) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    fprintf(stderr, "tfm train: %zu training pairs (%zu skipped: empty side; %zu: longer than max_len %d), "
                    "%zu source and %zu target tokens\n",
            ts.n_pairs, ts.n_skipped_empty, ts.n_skipped_long, c->max_len, ts.src_tokens, ts.tgt_tokens);
    if (tfm_batcher_create(train, f.batch_tokens, c->pad_id, 1, (uint64_t)f.seed, &tb) != TFM_OK ||
        (valid && tfm_batcher_create(valid, f.batch_tokens, c->pad_id, 0, 0, &vb) != TFM_OK)) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    /* reserve memory for every batch shape of an epoch (they repeat), then start over */
    tfm_batch first;
    if (tfm_batcher_next(tb, &first) != TFM_OK || tfm_trainer_create(m, &tc, first.B, first.S, first.T, &tr) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    for (size_t i = 1; i < tfm_batcher_batches_per_epoch(tb); i++) {
        tfm_batch b;
        if (tfm_batcher_next(tb, &b) != TFM_OK || tfm_trainer_reserve(tr, b.B, b.S, b.T) != TFM_OK) {
            cli_error("train", "%s", tfm_last_error());
            goto done;
        }
    }
    tfm_train_progress prog = {0, 0, INFINITY, f.batch_tokens};
    if (f.resume) {
        if (tfm_trainer_load_state(tr, f.resume) != TFM_OK) {
            cli_error("train", "--resume: %s", tfm_last_error());
            goto done;
        }
        prog = tfm_trainer_progress(tr);
        if (prog.batch_tokens != f.batch_tokens) {
            cli_error("train", "%s was trained with --batch-tokens %lld but this run has %d: an exact resume "
                               "needs the same batches", f.resume, (long long)prog.batch_tokens, f.batch_tokens);
            goto done;
        }
        fprintf(stderr, "tfm train: resuming %s at step %lld (epoch %llu, batch %llu)\n", f.resume,
                (long long)tfm_trainer_steps(tr), (unsigned long long)prog.epoch, (unsigned long long)prog.index);
    }
    tfm_trainer_set_progress(tr, &prog);
    if (tfm_batcher_seek(tb, prog.epoch, prog.index) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    fprintf(stderr, "tfm train: d_model %d, %d heads, %d+%d layers, d_ff %d, vocab %d, %zu parameters; "
                    "%zu batches/epoch of <= %d tokens; %s lr %s %g (peak %.3g), warm-up %d\n",
            c->d_model, c->n_heads, c->n_enc_layers, c->n_dec_layers, c->d_ff, V, tfm_config_param_count(c),
            tfm_batcher_batches_per_epoch(tb), f.batch_tokens, f.optimizer, f.schedule, (double)f.lr,
            tc.schedule == TFM_SCHEDULE_NOAM ? (double)f.lr / sqrt((double)c->d_model * f.warmup) : (double)f.lr,
            f.warmup);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    const int tty = isatty(STDERR_FILENO);
    const double t0 = now_seconds(), limit_s = (double)f.time_limit * 60.0;
    double best_loss = prog.best_valid_loss, window_tok = 0, window_t = t0, tok_s = 0;
    int step = (int)tfm_trainer_steps(tr);
    const int step0 = step;
    int validated = step; /* the step whose model was last validated */
    while (step < f.steps) {
        if (g_stop_signal) {
            fprintf(stderr, "\ntfm train: stopped by signal %d at step %d; saving %s\n", (int)g_stop_signal, step, f.save);
            break;
        }
        if (limit_s > 0 && now_seconds() - t0 >= limit_s) break;
        tfm_batch b;
        tfm_step_stats st;
        if (tfm_batcher_next(tb, &b) != TFM_OK || tfm_trainer_step(tr, b.B, b.S, b.T, b.src, b.tgt, &st) != TFM_OK) {
            cli_error("train", "step %d: %s", step + 1, tfm_last_error());
            goto done;
        }
        step++;
        window_tok += (double)st.n_tokens;
        double now = now_seconds();
        if (now - window_t >= 2.0) {
            tok_s = window_tok / (now - window_t);
            window_tok = 0;
            window_t = now;
        }
        if (tty || step % f.log_every == 0 || step == 1)
            progress(tty, step, f.steps, step - step0, st.loss, st.lr, tok_s, now - t0, limit_s);
        const int last = step == f.steps || (limit_s > 0 && now_seconds() - t0 >= limit_s);
        if (vb && (step % f.eval_every == 0 || last)) {
            if (!validate(m, vb, tty, step, &best_loss, best_file)) goto done;
            validated = step;
        }
        if (step % f.save_every == 0 && !last && !save_resumable(tr, tb, best_loss, f.save)) goto done;
    }
    if (tty) fputc('\n', stderr);
    /* stopped by the time limit or a signal between validations: validate the last model too */
    if (vb && validated != step && !g_stop_signal && !validate(m, vb, tty, step, &best_loss, best_file)) goto done;
    if (!save_resumable(tr, tb, best_loss, f.save)) goto done;
    fprintf(stderr, "tfm train: %d steps in %.1f min; wrote %s%s%s\n", step, (now_seconds() - t0) / 60.0, f.save,
            vb ? ", best model " : "", vb ? best_file : "");
    rc = g_stop_signal ? 128 + (int)g_stop_signal : 0;
done:
    free(best);
    tfm_trainer_free(tr);
    tfm_batcher_free(tb);
    tfm_batcher_free(vb);
    tfm_dataset_free(train);
    tfm_dataset_free(valid);
    tfm_tokenizer_free(tok);
    tfm_model_free(m);
    return rc;
}
