/* tfm train --data DIR: the main job. Trains (or loads) the joint SentencePiece tokenizer, encodes
 * the corpus, batches by token count with length bucketing, and hands the rest to the library's
 * training loop (include/tfm/train_loop.h): the paper's recipe (noam warm-up, label smoothing,
 * dropout, clipping), validation and checkpoints every N steps, the best model, --steps and
 * --time-limit, Ctrl-C (a resumable save, exit 130). This file only turns flags into calls and
 * events into the progress bar and log lines. `tfm train --arch decoder-only --text FILE[,FILE...]`
 * runs the same way on plain text, one sequence per line (a language model: cli/train_lm.h,
 * docs/LM.md). */
#define _POSIX_C_SOURCE 200809L /* access, isatty */
#include "kernel_env.h"
#include "memory_check.h"
#include "model_flags.h"
#include "text_io.h"
#include "train_common.h"
#include "train_lm.h"
#include "train_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int file_exists(const char *p) { return access(p, R_OK) == 0; }

typedef struct {
    const char *data, *src, *tgt, *init, *resume, *save, *save_best;
    int steps, batch_tokens, vocab_size, eval_every, log_every, save_every;
    float time_limit;
    const char *text, *valid_text; /* --text mode: a decoder-only LM on plain text (cli/train_lm.h) */
    train_flags t;                 /* the training flags (train_common.h) */
} text_flags;

/* Everything the run holds, freed by run_free. */
typedef struct {
    char path[4][4096]; /* train.SRC, train.TGT, valid.SRC, valid.TGT */
    tfm_model *m;
    tfm_tokenizer *tok;
    tfm_dataset *train, *valid;
    tfm_batcher *tb, *vb;
    tfm_trainer *tr;
    char *best;         /* the default --save-best */
    tfm_dist *dist;     /* the MPI ranks (one without mpirun) */
    int root;           /* this process reports (rank 0) */
    int lm;             /* --text: the files below instead of path[] */
    lm_files text, valid_text;
} text_run;

static void run_free(text_run *r) {
    free(r->best);
    tfm_trainer_free(r->tr);
    tfm_batcher_free(r->tb);
    tfm_batcher_free(r->vb);
    tfm_dataset_free(r->train);
    tfm_dataset_free(r->valid);
    tfm_tokenizer_free(r->tok);
    tfm_model_free(r->m);
    lm_files_free(&r->text);
    lm_files_free(&r->valid_text);
}

/* ---- progress: the loop's events as a progress bar (terminal) or log lines ------------------ */

typedef struct {
    int tty;
    int open;          /* a progress bar line without its newline is on the terminal */
    int log_every;
    int64_t max_steps;
    double limit_s;
    const char *save;
} progress_view;

static void show_step(progress_view *v, const tfm_loop_event *ev) {
    const int64_t step = ev->step;
    if (!v->tty && step % v->log_every != 0 && step != 1) return;
    double per_step = ev->run_steps > 0 ? ev->elapsed_s / (double)ev->run_steps : 0.0;
    double eta = per_step * (double)(v->max_steps - step);
    if (v->limit_s > 0 && v->limit_s - ev->elapsed_s < eta) eta = v->limit_s - ev->elapsed_s;
    if (eta < 0) eta = 0;
    if (v->tty) {
        double frac = (double)step / (double)v->max_steps;
        if (v->limit_s > 0 && ev->elapsed_s / v->limit_s > frac) frac = ev->elapsed_s / v->limit_s;
        int filled = (int)(frac * 24);
        char bar[25];
        for (int i = 0; i < 24; i++) bar[i] = i < filled ? '#' : '.';
        bar[24] = '\0';
        fprintf(stderr, "\r[%s] step %lld loss %.4f lr %.2e %.0f tok/s ETA %02d:%02d   ", bar, (long long)step,
                ev->stats.loss, ev->stats.lr, ev->tokens_per_s, (int)(eta / 60), (int)eta % 60);
        v->open = 1;
    } else {
        fprintf(stderr, "step %lld loss %.4f lr %.3e tokens/s %.0f elapsed %.0fs eta %.0fs\n", (long long)step,
                ev->stats.loss, ev->stats.lr, ev->tokens_per_s, ev->elapsed_s, eta);
    }
}

/* Ends an open progress bar line so that a message starts on a line of its own. */
static void close_bar(progress_view *v) {
    if (v->open) fputc('\n', stderr);
    v->open = 0;
}

static void on_event(const tfm_loop_event *ev, void *user) {
    progress_view *v = user;
    switch (ev->kind) {
    case TFM_LOOP_EVENT_STEP:
        show_step(v, ev);
        break;
    case TFM_LOOP_EVENT_VALIDATION:
        close_bar(v);
        fprintf(stderr, "step %lld validation loss %.4f perplexity %.2f%s\n", (long long)ev->step, ev->valid_loss,
                ev->valid_perplexity, ev->improved ? " (best)" : "");
        break;
    case TFM_LOOP_EVENT_STOP:
        close_bar(v);
        fprintf(stderr, "tfm train: stopped by signal %d at step %lld; saving %s\n", (int)train_stop_signal,
                (long long)ev->step, v->save);
        break;
    case TFM_LOOP_EVENT_SAVE:
        break;
    }
}

/* ---- setting up: tokenizer, model, corpus, trainer ------------------------------------------ */

/* Under mpirun: rank 0 trains the tokenizer and sends it to the other ranks (so every rank encodes
 * the corpus with the same pieces, whatever SentencePiece's training does with threads). The
 * others wait up to a day for it: training on a big corpus can outlast --mpi-timeout, and a rank 0
 * that dies meanwhile ends the job through the launcher anyway. */
#define TOKENIZER_WAIT_S 86400.0
#define TRAIN_VOCAB_DEFAULT 8000 /* --vocab-size's default: an upper bound (get_tokenizer) */
static int share_tokenizer(tfm_dist *d, const char *const *paths, size_t n_paths, const tfm_tokenizer_train_opts *o,
                           tfm_tokenizer **tok) {
    const int root = train_is_root(d);
    uint8_t *bytes = NULL;
    size_t len = 0;
    uint64_t n = 0;
    if (root) {
        if (tfm_tokenizer_train(paths, n_paths, o, tok) != TFM_OK || tfm_tokenizer_serialize(*tok, &bytes, &len) != TFM_OK)
            cli_error("train", "tokenizer: %s", tfm_last_error());
        else
            n = len;
    }
    const double timeout = tfm_dist_timeout(d);
    if (timeout < TOKENIZER_WAIT_S) tfm_dist_set_timeout(d, TOKENIZER_WAIT_S);
    tfm_status st = tfm_dist_bcast(d, &n, sizeof n);
    tfm_dist_set_timeout(d, timeout);
    if (st == TFM_OK && n == 0 && !root) cli_error("train", "rank 0 could not train the tokenizer");
    if (st == TFM_OK && n > 0 && !root) {
        bytes = malloc((size_t)n);
        st = bytes ? TFM_OK : TFM_ERR_NOMEM;
    }
    if (st == TFM_OK && n > 0) st = tfm_dist_bcast(d, bytes, (size_t)n);
    if (st == TFM_OK && n > 0 && !root) st = tfm_tokenizer_load_bytes(bytes, (size_t)n, tok);
    if (st != TFM_OK) cli_error("train", "tokenizer from rank 0: %s", tfm_last_error());
    free(bytes);
    return st == TFM_OK && n > 0;
}

/* The tokenizer of --init's model, or one trained jointly on the training files (both sides, or
 * the --text files). */
static int get_tokenizer(tfm_dist *d, tfm_model *m, const char *const *paths, size_t n_paths, int vocab,
                         tfm_tokenizer **tok) {
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
    /* --vocab-size not given: up to the default, fewer where the text supports fewer (a few
     * thousand lines do not support 8000 pieces); given: exactly that many or an error */
    o.vocab_size_at_most = vocab == OPT_INT_UNSET;
    o.vocab_size = o.vocab_size_at_most ? TRAIN_VOCAB_DEFAULT : vocab;
    if (train_is_root(d)) {
        fprintf(stderr, "tfm train: training a joint %s%d-piece SentencePiece vocabulary on %s",
                o.vocab_size_at_most ? "up to " : "", o.vocab_size, paths[0]);
        for (size_t i = 1; i < n_paths; i++) fprintf(stderr, "%s%s", i + 1 == n_paths ? " and " : ", ", paths[i]);
        fputc('\n', stderr);
    }
    int ok;
    if (tfm_dist_size(d) > 1) {
        ok = share_tokenizer(d, paths, n_paths, &o, tok);
    } else {
        ok = tfm_tokenizer_train(paths, n_paths, &o, tok) == TFM_OK;
        if (!ok) cli_error("train", "tokenizer: %s%s", tfm_last_error(), o.vocab_size_at_most ? "" : " (lower --vocab-size)");
    }
    if (ok && o.vocab_size_at_most && train_is_root(d) && tfm_tokenizer_vocab_size(*tok) < o.vocab_size)
        fprintf(stderr, "tfm train: the vocabulary has %d pieces, as many as the text supports (under the default %d; "
                        "--vocab-size N asks for exactly N)\n", tfm_tokenizer_vocab_size(*tok), o.vocab_size);
    return ok;
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

/* The model of --resume or --init, or a new one from the model flags with the tokenizer's
 * vocabulary; the tokenizer goes into the model (and so into every checkpoint). Returns 0, or the
 * exit code of a failure (printed). */
static int setup_model(text_run *r, const text_flags *f, model_flags *mf) {
    const char *start = f->resume ? f->resume : f->init;
    if (start && tfm_model_load(start, &r->m) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        return EXIT_RUNTIME;
    }
    if (!start && !model_flags_resolve("train", mf)) return EXIT_USAGE;
    const tfm_arch arch = r->m ? tfm_model_config(r->m)->arch : mf->c.arch; /* checked before any tokenizer work */
    if (arch == TFM_ARCH_ENCODER_ONLY) { /* a BERT folder: neither mode trains it */
        model_arch_ok("train", start ? start : "the new model", r->m ? tfm_model_config(r->m) : &mf->c,
                      r->lm ? TFM_ARCH_DECODER_ONLY : TFM_ARCH_ENCODER_DECODER);
        return EXIT_USAGE;
    }
    if ((arch == TFM_ARCH_DECODER_ONLY) != r->lm) {
        cli_error("train", "%s is %s: %s", start ? start : "the new model", tfm_arch_name(arch),
                  r->lm ? "--text trains a decoder-only model (--arch decoder-only)"
                        : "--data trains an encoder-decoder; a decoder-only model trains on --text");
        return EXIT_USAGE;
    }
    const char *const pair_paths[2] = {r->path[0], r->path[1]};
    const char *const *train_paths = r->lm ? r->text.path : pair_paths;
    if (!get_tokenizer(r->dist, r->m, train_paths, r->lm ? r->text.n : 2,
                       r->m ? tfm_model_config(r->m)->src_vocab : f->vocab_size, &r->tok))
        return EXIT_RUNTIME;
    if (!r->m) {
        mf->c.src_vocab = mf->c.tgt_vocab = tfm_tokenizer_vocab_size(r->tok);
        mf->c.pad_id = tfm_tokenizer_pad_id(r->tok);
        mf->c.bos_id = tfm_tokenizer_bos_id(r->tok);
        mf->c.eos_id = tfm_tokenizer_eos_id(r->tok);
        if (tfm_model_create(&mf->c, (uint64_t)f->t.seed, &r->m) != TFM_OK) {
            cli_error("train", "%s", tfm_last_error());
            return EXIT_RUNTIME;
        }
    }
    if (tfm_tokenizer_check_model(r->tok, tfm_model_config(r->m)) != TFM_OK) {
        cli_error("train", "%s: %s", start ? start : "the new model", tfm_last_error());
        return EXIT_RUNTIME;
    }
    if (!tfm_model_tokenizer(r->m, &(size_t){0})) {
        uint8_t *bytes;
        size_t len;
        tfm_status st = tfm_tokenizer_serialize(r->tok, &bytes, &len);
        if (st == TFM_OK) {
            st = tfm_model_set_tokenizer(r->m, bytes, len);
            free(bytes);
        }
        if (st != TFM_OK) {
            cli_error("train", "%s", tfm_last_error());
            return EXIT_RUNTIME;
        }
    }
    return 0;
}

/* Cuts the training (shuffled) and validation datasets into batches of --batch-tokens. */
static int make_batchers(text_run *r, const text_flags *f) {
    const int pad = tfm_model_config(r->m)->pad_id;
    if (tfm_batcher_create(r->train, f->batch_tokens, pad, 1, (uint64_t)f->t.seed, &r->tb) != TFM_OK ||
        (r->valid && tfm_batcher_create(r->valid, f->batch_tokens, pad, 0, 0, &r->vb) != TFM_OK)) {
        cli_error("train", "%s", tfm_last_error());
        return 0;
    }
    return 1;
}

/* Encodes the training (and, when present, validation) pairs and cuts them into batches. */
static int setup_corpus(text_run *r, const text_flags *f) {
    const tfm_config *c = tfm_model_config(r->m);
    if (r->lm) /* one line = one sequence (docs/LM.md) */
        return lm_load_dataset(r->tok, c, &r->text, "training", r->root, &r->train) &&
               (!r->valid_text.n || lm_load_dataset(r->tok, c, &r->valid_text, "validation", r->root, &r->valid)) &&
               make_batchers(r, f);
    const int have_valid = file_exists(r->path[2]) && file_exists(r->path[3]);
    tfm_dataset_stats ts, vs;
    if (tfm_dataset_from_text(r->tok, r->path[0], r->path[1], c->max_len, c->bos_id, c->eos_id, &r->train, &ts) !=
            TFM_OK ||
        (have_valid && tfm_dataset_from_text(r->tok, r->path[2], r->path[3], c->max_len, c->bos_id, c->eos_id,
                                             &r->valid, &vs) != TFM_OK)) {
        cli_error("train", "%s", tfm_last_error());
        return 0;
    }
    if (r->root)
        fprintf(stderr, "tfm train: %zu training pairs (%zu skipped: empty side; %zu: longer than max_len %d), "
                    "%zu source and %zu target tokens\n",
            ts.n_pairs, ts.n_skipped_empty, ts.n_skipped_long, c->max_len, ts.src_tokens, ts.tgt_tokens);
    return make_batchers(r, f);
}

/* The trainer; with --resume its saved state, checked against this run's batches. */
static int setup_trainer(text_run *r, const text_flags *f, const tfm_train_config *tc) {
    if (tfm_trainer_create(r->m, tc, 1, 1, 2, &r->tr) != TFM_OK || /* the loop reserves every batch shape */
        tfm_trainer_set_dist(r->tr, r->dist) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        return 0;
    }
    if (!f->resume) return 1;
    if (tfm_trainer_load_state(r->tr, f->resume) != TFM_OK) {
        cli_error("train", "--resume: %s", tfm_last_error());
        return 0;
    }
    tfm_train_progress prog = tfm_trainer_progress(r->tr);
    if (prog.batch_tokens != f->batch_tokens) {
        cli_error("train", "%s was trained with --batch-tokens %lld but this run has %d: an exact resume "
                           "needs the same batches", f->resume, (long long)prog.batch_tokens, f->batch_tokens);
        return 0;
    }
    if (r->root)
        fprintf(stderr, "tfm train: resuming %s at step %lld (epoch %llu, batch %llu)\n", f->resume,
            (long long)tfm_trainer_steps(r->tr), (unsigned long long)prog.epoch, (unsigned long long)prog.index);
    return 1;
}

/* ---- flags ----------------------------------------------------------------------------------- */

/* Parses and checks the flags into f, mf and tc. Returns 0, or an exit code (1 after --help
 * means 0: see the caller). */
static int parse_flags(const cli_command *cmd, int argc, char **argv, text_flags *fp, model_flags *mfp,
                       tfm_train_config *tc) {
    text_flags f = {.src = "en", .tgt = "es", .steps = 1000000, .batch_tokens = 3000, .vocab_size = OPT_INT_UNSET,
                    .eval_every = 500, .log_every = 50, .t = TRAIN_FLAGS_TEXT};
    model_flags mf = model_flags_default();
    mf.c.norm_first = 1; /* pre-LN trains stably at this learning rate (docs/BENCH.md) */
    mf.c.tie_embeddings = 1;
    cli_opt opts[] = {
        {"--data", OPT_STR, &f.data, 0, "corpus folder with train.SRC, train.TGT (and valid.*)"},
        {"--text", OPT_STR, &f.text, 0, "instead of --data: train a decoder-only LM (--arch decoder-only) on "
                                        "FILE[,FILE...], one sequence per line (docs/LM.md)"},
        {"--valid-text", OPT_STR, &f.valid_text, 0, "with --text: validation FILE[,FILE...] (none: no validation)"},
        {"--src", OPT_STR, &f.src, 0, "source language suffix"},
        {"--tgt", OPT_STR, &f.tgt, 0, "target language suffix"},
        {"--save", OPT_STR, &f.save, 1, "checkpoint to write (atomically; also every --save-every steps)"},
        {"--save-best", OPT_STR, &f.save_best, 0, "where the best model by validation loss goes "
                                                  "(default: SAVE with .best.safetensors)"},
        {"--init", OPT_STR, &f.init, 0, "start from this checkpoint's weights and configuration (a model flag "
                                        "that differs from it is an error)"},
        {"--resume", OPT_STR, &f.resume, 0, "continue a run exactly: weights, Adam moments, step, data position, "
                                            "RNG (same training flags; a model flag that differs is an error)"},
        {"--steps", OPT_INT, &f.steps, 0, "stop after this many steps"},
        {"--time-limit", OPT_FLOAT, &f.time_limit, 0, "stop after this many minutes of training (0: none)"},
        {"--batch-tokens", OPT_INT, &f.batch_tokens, 0, "tokens per batch, padding included"},
        {"--vocab-size", OPT_INT, &f.vocab_size, 0, "joint subword vocabulary (when the model has no tokenizer): exactly N pieces; "
                                                   "default: up to 8000, as many as the text supports"},
        {"--eval-every", OPT_INT, &f.eval_every, 0, "validate (and checkpoint) every N steps"},
        {"--save-every", OPT_INT, &f.save_every, 0, "checkpoint every N steps (default: --eval-every)"},
        {"--log-every", OPT_INT, &f.log_every, 0, "log line every N steps when stderr is not a terminal"},
        TRAIN_OPTS(f.t),
        MODEL_OPTS(mf),
    };
    int r = cli_parse(cmd, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? -1 : EXIT_USAGE;
    if (!train_flags_config(&f.t, tc)) return EXIT_USAGE;
    if (f.steps < 1 || f.batch_tokens < 1 || f.eval_every < 1 || f.log_every < 1 || f.save_every < 0 ||
        !(f.time_limit >= 0)) {
        cli_error("train", "--steps, --batch-tokens, --eval-every and --log-every must be >= 1; --save-every and "
                           "--time-limit >= 0");
        return EXIT_USAGE;
    }
    if (f.save_every == 0) f.save_every = f.eval_every;
    if (!f.data == !f.text || (f.valid_text && !f.text)) {
        cli_error("train", "give either --data DIR (encoder-decoder) or --text FILE[,FILE...] (decoder-only); "
                           "--valid-text goes with --text");
        return EXIT_USAGE;
    }
    if (f.init && f.resume) {
        cli_error("train", "--init and --resume exclude each other (--resume also restores the optimizer)");
        return EXIT_USAGE;
    }
    /* --init/--resume bring the model's own configuration: a model flag that says otherwise would be
     * ignored, so it is an error (the same flags repeated with --resume are fine) */
    const char *start = f.resume ? f.resume : f.init;
    if (start && cli_given_within(argc, argv, opts, sizeof opts / sizeof opts[0], &mf, &mf + 1)) {
        tfm_model *m = NULL;
        if (tfm_model_load(start, &m) != TFM_OK) {
            cli_error("train", "%s", tfm_last_error());
            return EXIT_RUNTIME;
        }
        if (tfm_model_config(m)->arch == TFM_ARCH_ENCODER_ONLY) { /* BERT: said before any flag of it */
            model_arch_ok("train", start, tfm_model_config(m), f.text ? TFM_ARCH_DECODER_ONLY : TFM_ARCH_ENCODER_DECODER);
            tfm_model_free(m);
            return EXIT_USAGE;
        }
        char why[256];
        const int bad = model_flags_mismatch("train", opts, sizeof opts / sizeof opts[0], argc, argv, &mf,
                                             tfm_model_config(m), why, sizeof why);
        tfm_model_free(m);
        if (bad) {
            if (bad > 0)
                cli_error("train", "%s: %s keeps the checkpoint's model configuration; drop the flag or start a "
                                   "new model", why, f.resume ? "--resume" : "--init");
            return EXIT_USAGE;
        }
    }
    *fp = f;
    *mfp = mf;
    return 0;
}

/* ---- the command ----------------------------------------------------------------------------- */

/* Scans one text input (tfm_text_file_scan) into *st; prints the error naming the flag. An empty
 * file is refused, as the datasets refuse it. */
static int scan_text(const char *flag, const char *path, tfm_text_file_stats *st) {
    if (tfm_text_file_scan(path, TFM_DATA_MAX_LINE_BYTES, st) != TFM_OK) {
        cli_error("train", "%s: %s", flag, tfm_last_error());
        return 0;
    }
    if (st->lines == 0) {
        cli_error("train", "%s: %s is empty (no lines)", flag, path);
        return 0;
    }
    return 1;
}

/* Every text input checked before the tokenizer trains or anything else is done (docs/HARDENING.md,
 * kind 8): readable, valid UTF-8 without NUL bytes, not empty, some text that is not blank; the
 * --data pairs with equal line counts. The datasets check the same later; here it costs one read. */
static int inputs_ok(const text_run *r) {
    tfm_text_file_stats st[4];
    if (r->lm) {
        const lm_files *lists[2] = {&r->text, &r->valid_text};
        const char *flags[2] = {"--text", "--valid-text"};
        for (int k = 0; k < 2; k++) {
            size_t text_lines = 0;
            for (size_t i = 0; i < lists[k]->n; i++) {
                if (!scan_text(flags[k], lists[k]->path[i], &st[0])) return 0;
                text_lines += st[0].lines - st[0].blank;
            }
            if (lists[k]->n && text_lines == 0) {
                cli_error("train", "%s %s holds no text: every line is blank", flags[k], lists[k]->path[0]);
                return 0;
            }
        }
        return 1;
    }
    const int have_valid = file_exists(r->path[2]) && file_exists(r->path[3]);
    for (int i = 0; i < (have_valid ? 4 : 2); i++) {
        if (!scan_text("--data", r->path[i], &st[i])) return 0;
        if (st[i].blank == st[i].lines) {
            cli_error("train", "--data: %s holds no text: every line is blank", r->path[i]);
            return 0;
        }
    }
    for (int i = 0; i < (have_valid ? 4 : 2); i += 2) {
        if (st[i].lines != st[i + 1].lines) {
            cli_error("train", "--data: %s has %zu lines but %s has %zu: the files must be aligned, line by line",
                      r->path[i], st[i].lines, r->path[i + 1], st[i + 1].lines);
            return 0;
        }
    }
    return 1;
}

/* Before any work: no output (--save, the best model) is the same file as an input (the corpus
 * files, --text, --valid-text, --init; cli_outputs_ok). --resume R --save R is how a run goes on in
 * place (the checkpoint is read whole first and replaced atomically), so --resume is compared with
 * the best model only. */
static int outputs_distinct(const text_run *r, const text_flags *f, const char *best_file) {
    cli_path ins[4 + 2 * TRAIN_LM_MAX_FILES + 1];
    size_t n = 0;
    for (int i = 0; i < 4 && !r->lm; i++) ins[n++] = (cli_path){"--data", r->path[i]};
    for (size_t i = 0; i < r->text.n; i++) ins[n++] = (cli_path){"--text", r->text.path[i]};
    for (size_t i = 0; i < r->valid_text.n; i++) ins[n++] = (cli_path){"--valid-text", r->valid_text.path[i]};
    ins[n++] = (cli_path){"--init", f->init};
    const cli_path outs[] = {{"--save", f->save}, {f->save_best ? "--save-best" : "--save-best (default)", best_file}};
    const cli_path resume = {"--resume", f->resume};
    return cli_outputs_ok("train", ins, n, outs, 2) && cli_outputs_ok("train", &resume, 1, outs + 1, 1);
}

int train_text_run(const cli_command *cmd, int argc, char **argv) {
    text_flags f;
    model_flags mf;
    tfm_train_config tc;
    int rc = parse_flags(cmd, argc, argv, &f, &mf, &tc);
    if (rc) return rc < 0 ? 0 : rc;
    if (!output_dir_ok("train", f.save) || (f.save_best && !output_dir_ok("train", f.save_best))) return EXIT_RUNTIME;
    text_run r;
    memset(&r, 0, sizeof r);
    r.lm = f.text != NULL;
    if (r.lm && !(lm_files_parse("--text", f.text, &r.text) &&
                  (!f.valid_text || lm_files_parse("--valid-text", f.valid_text, &r.valid_text)))) {
        run_free(&r);
        return EXIT_RUNTIME;
    }
    if (!r.lm) {
        snprintf(r.path[0], sizeof r.path[0], "%s/train.%s", f.data, f.src);
        snprintf(r.path[1], sizeof r.path[1], "%s/train.%s", f.data, f.tgt);
        snprintf(r.path[2], sizeof r.path[2], "%s/valid.%s", f.data, f.src);
        snprintf(r.path[3], sizeof r.path[3], "%s/valid.%s", f.data, f.tgt);
    }
    for (int i = 0; i < 2 && !r.lm; i++)
        if (!file_exists(r.path[i])) {
            cli_error("train", "no corpus: %s is missing (scripts/get-corpus makes data/bible-en-es)", r.path[i]);
            return EXIT_RUNTIME;
        }
    r.best = f.save_best ? NULL : best_path(f.save);
    const char *best_file = f.save_best ? f.save_best : r.best;
    if (!outputs_distinct(&r, &f, best_file) || !inputs_ok(&r)) {
        run_free(&r);
        return EXIT_RUNTIME;
    }
    if (!train_dist_start(f.t.mpi_timeout, &r.dist)) {
        run_free(&r);
        return EXIT_RUNTIME;
    }
    r.root = train_is_root(r.dist);
    rc = setup_model(&r, &f, &mf);
    if (rc == 0 && !(setup_corpus(&r, &f) &&
                     memory_fits_train("train", f.t.max_memory, tfm_model_config(r.m), tc.optimizer, r.tb, r.vb,
                                       tfm_memory_dataset_bytes(r.train) + tfm_memory_dataset_bytes(r.valid),
                                       "--batch-tokens") &&
                     setup_trainer(&r, &f, &tc)))
        rc = EXIT_RUNTIME;
    if (rc != 0) {
        run_free(&r);
        return train_dist_finish(r.dist, rc);
    }
    const tfm_config *c = tfm_model_config(r.m);
    if (r.root)
        fprintf(stderr, "tfm train: d_model %d, %d heads, %d+%d layers, d_ff %d, vocab %d, %zu parameters; "
                    "%zu batches/epoch of <= %d tokens; %s lr %s %g (peak %.3g), warm-up %d\n",
            c->d_model, c->n_heads, c->n_enc_layers, c->n_dec_layers, c->d_ff, c->tgt_vocab,
            tfm_config_param_count(c), tfm_batcher_batches_per_epoch(r.tb), f.batch_tokens, f.t.optimizer, f.t.schedule,
            (double)f.t.lr,
            tc.schedule == TFM_SCHEDULE_NOAM ? (double)f.t.lr / sqrt((double)c->d_model * f.t.warmup) : (double)f.t.lr,
            f.t.warmup);
    char kernels[96];
    if (r.root) fprintf(stderr, "tfm train: kernels: %s\n", tfm_trainer_kernels(r.tr, kernels, sizeof kernels));

    train_dist_report(r.dist, c);
    progress_view view = {isatty(STDERR_FILENO), 0, f.log_every, f.steps, (double)f.time_limit * 60.0, f.save};
    tfm_loop_config lc = tfm_loop_config_default();
    lc.max_steps = f.steps;
    lc.time_limit_s = view.limit_s;
    lc.eval_every = f.eval_every;
    lc.save_every = f.save_every;
    lc.save_path = f.save;
    lc.save_resumable = 1;
    lc.best_path = r.vb ? best_file : NULL;
    lc.stop = &train_stop_signal;
    lc.on_event = on_event;
    lc.user = &view;
    train_catch_signals();
    tfm_loop_result res;
    tfm_status st = tfm_train_loop(r.tr, r.tb, r.vb, &lc, &res);
    close_bar(&view);
    rc = train_exit_code(st);
    if (rc != EXIT_RUNTIME && r.root)
        fprintf(stderr, "tfm train: %lld steps in %.1f min; wrote %s%s%s\n", (long long)res.steps,
                res.elapsed_s / 60.0, f.save, r.vb ? ", best model " : "", r.vb ? best_file : "");
    run_free(&r);
    return train_dist_finish(r.dist, rc);
}
