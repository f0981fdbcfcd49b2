/* tfm train: training on token-id files (docs/FORMATS.md): label-smoothed cross-entropy, Adam or
 * SGD, constant or noam learning rate, dropout, clipping; prints the loss of every step. A thin
 * command line over the library's training loop (include/tfm/train_loop.h) with line-count batches
 * (tfm_batcher_create_lines); `tfm train --data` is in train_text.c. */
#include "args.h"
#include "memory_check.h"
#include "text_io.h"
#include "train_common.h"
#include "train_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_command cmd_train = {
    "train", "train a model on a parallel corpus (--data DIR), plain text (--text, decoder-only) or token-id files",
    "tfm train --data DIR --save M [...]   (tfm train --data x --help for its flags)\n"
    "       tfm train --arch decoder-only --text FILE[,FILE...] [--valid-text F] --save M [...]\n"
    "       tfm train --init M --src-ids F --tgt-ids F --steps N --save OUT [--optimizer adam|sgd] [--lr X] ...",
    run};

static int check_lines(const tfm_config *c, const tfm_id_lines *src, const char *sp, const tfm_id_lines *tgt,
                       const char *tp) {
    if (src->n_lines != tgt->n_lines) {
        cli_error("train", "%s has %zu lines but %s has %zu: the files must be aligned", sp, src->n_lines, tp,
                  tgt->n_lines);
        return 0;
    }
    if (tfm_id_lines_check_vocab(src, sp, c->src_vocab) != TFM_OK ||
        tfm_id_lines_check_vocab(tgt, tp, c->tgt_vocab) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        return 0;
    }
    for (size_t i = 0; i < src->n_lines; i++) {
        size_t ls = tfm_id_lines_len(src, i), lt = tfm_id_lines_len(tgt, i);
        if (ls > (size_t)c->max_len) {
            cli_error("train", "%s:%zu: %zu tokens, longer than the model's max_len %d", sp, i + 1, ls, c->max_len);
            return 0;
        }
        if (lt < 2 || lt - 1 > (size_t)c->max_len) {
            cli_error("train", "%s:%zu: a target line needs BOS and EOS and at most max_len+1 = %d ids, got %zu", tp,
                      i + 1, c->max_len + 1, lt);
            return 0;
        }
        const int32_t *t = tgt->ids + tgt->offsets[i];
        if (t[0] != c->bos_id || t[lt - 1] != c->eos_id) {
            cli_error("train", "%s:%zu: a target line must start with BOS (id %d) and end with EOS (id %d), got %d ... %d",
                      tp, i + 1, c->bos_id, c->eos_id, (int)t[0], (int)t[lt - 1]);
            return 0;
        }
    }
    return 1;
}

/* One line per step on stdout: "step N loss L lr R grad_norm G tokens K". */
static void print_step(const tfm_loop_event *ev, void *user) {
    (void)user;
    if (ev->kind != TFM_LOOP_EVENT_STEP) return;
    printf("step %lld loss %.6f lr %.6g grad_norm %.4f tokens %zu\n", (long long)ev->step, ev->stats.loss,
           ev->stats.lr, ev->stats.grad_norm, ev->stats.n_tokens);
    fflush(stdout);
}

/* Reads and checks both id files and makes the dataset (the lines move into it). */
static int load_data(const tfm_config *c, const char *src_path, const char *tgt_path, tfm_dataset **ds) {
    tfm_id_lines src = {0}, tgt = {0};
    int ok = tfm_id_lines_read(src_path, &src) == TFM_OK && tfm_id_lines_read(tgt_path, &tgt) == TFM_OK;
    if (!ok) cli_error("train", "%s", tfm_last_error());
    ok = ok && check_lines(c, &src, src_path, &tgt, tgt_path);
    if (ok && tfm_dataset_from_id_lines(&src, src_path, &tgt, tgt_path, c->max_len, ds, NULL) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        ok = 0;
    }
    tfm_id_lines_free(&src);
    tfm_id_lines_free(&tgt);
    return ok;
}

/* Fails early, before any training, if --save names a file in a folder that does not exist. */
static int run(int argc, char **argv) {
    for (int i = 1; i < argc; i++) /* training on a text corpus has its own flags */
        if (strcmp(argv[i], "--data") == 0 || strcmp(argv[i], "--text") == 0) return train_text_run(&cmd_train, argc, argv);
    const char *init = NULL, *src_path = NULL, *tgt_path = NULL, *save = NULL;
    int steps = 0, batch = 32;
    train_flags t = TRAIN_FLAGS_IDS;
    cli_opt opts[] = {
        {"--init", OPT_STR, &init, 1, "starting checkpoint (from tfm init, or a PyTorch-made one)"},
        {"--src-ids", OPT_STR, &src_path, 1, "source token ids, one sequence per line"},
        {"--tgt-ids", OPT_STR, &tgt_path, 1, "target token ids (BOS first, EOS last)"},
        {"--steps", OPT_INT, &steps, 1, "optimizer steps"},
        {"--save", OPT_STR, &save, 1, "where to write the trained model (atomically; also on Ctrl-C)"},
        {"--batch-size", OPT_INT, &batch, 0, "sentences per step (lines; with B >= the number of lines every "
                                             "step uses every line, in file order)"},
        TRAIN_OPTS(t),
    };
    int r = cli_parse(&cmd_train, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    if (steps < 1 || batch < 1) {
        cli_error("train", "--steps and --batch-size must be >= 1");
        return EXIT_USAGE;
    }
    tfm_train_config tc;
    if (!train_flags_config(&t, &tc)) return EXIT_USAGE; /* a bad flag is a usage error, found before loading */
    const cli_path ins[] = {{"--init", init}, {"--src-ids", src_path}, {"--tgt-ids", tgt_path}},
                   outs[] = {{"--save", save}};
    if (!cli_outputs_ok("train", ins, 3, outs, 1)) return EXIT_RUNTIME;

    tfm_model *m = NULL;
    tfm_dataset *ds = NULL;
    tfm_batcher *bt = NULL;
    tfm_trainer *tr = NULL;
    tfm_dist *dist = NULL;
    int rc = EXIT_RUNTIME;
    if (!train_dist_start(t.mpi_timeout, &dist)) return EXIT_RUNTIME;
    if (tfm_model_load(init, &m) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    const tfm_config *c = tfm_model_config(m);
    if (!model_arch_ok("train", init, c, MODEL_DECODES)) goto done;
    if (!load_data(c, src_path, tgt_path, &ds)) goto done;
    if (tfm_batcher_create_lines(ds, batch, c->pad_id, 1, (uint64_t)t.seed, &bt) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    if (!memory_fits_train("train", t.max_memory, c, tc.optimizer, bt, NULL, tfm_memory_dataset_bytes(ds), "--batch-size"))
        goto done;
    if (tfm_trainer_create(m, &tc, 1, 1, 2, &tr) != TFM_OK || tfm_trainer_set_dist(tr, dist) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    train_dist_report(dist, c);
    tfm_loop_config lc = tfm_loop_config_default();
    lc.max_steps = steps;
    lc.save_path = save;
    lc.save_resumable = 0; /* a plain model, as tfm init and PyTorch make */
    lc.stop = &train_stop_signal;
    lc.on_event = print_step;
    train_catch_signals();
    tfm_loop_result res;
    rc = train_exit_code(tfm_train_loop(tr, bt, NULL, &lc, &res));
    if (rc != EXIT_RUNTIME && train_is_root(dist))
        fprintf(stderr, "tfm train: %swrote %s after %lld steps\n", rc ? "stopped by a signal; " : "", save,
                (long long)res.steps);
done:
    tfm_trainer_free(tr);
    tfm_batcher_free(bt);
    tfm_dataset_free(ds);
    tfm_model_free(m);
    return train_dist_finish(dist, rc);
}
