/* tfm train: training on token-id files (DESIGN.md §5): label-smoothed cross-entropy, Adam or SGD,
 * constant or noam learning rate, dropout, clipping; prints the loss of every step. */
#include "args.h"
#include "text_io.h"
#include "train_text.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run(int argc, char **argv);

const cli_command cmd_train = {
    "train", "train a model on a text corpus (--data DIR) or on token-id files, and save it",
    "tfm train --data DIR --save M [...]   (tfm train --data x --help for its flags)\n"
    "       tfm train --init M --src-ids F --tgt-ids F --steps N --save OUT [--optimizer adam|sgd] [--lr X] ...",
    run};

/* Line order of each epoch: file order when one batch holds every line, else a seeded shuffle
 * (Fisher–Yates on a splitmix64 stream). */
static void shuffle(size_t *order, size_t n, uint64_t *state) {
    for (size_t i = n; i > 1; i--) {
        uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        size_t j = (size_t)(z % i), tmp = order[i - 1];
        order[i - 1] = order[j];
        order[j] = tmp;
    }
}

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

/* Fails early, before any training, if --save names a file in a folder that does not exist. */
static int run(int argc, char **argv) {
    for (int i = 1; i < argc; i++) /* training on a text corpus has its own flags */
        if (strcmp(argv[i], "--data") == 0) return train_text_run(&cmd_train, argc, argv);
    const char *init = NULL, *src_path = NULL, *tgt_path = NULL, *save = NULL;
    const char *optimizer = "adam", *schedule = "constant";
    int steps = 0, batch = 32, warmup = 4000, seed = 1;
    float lr = 1e-3f, dropout = 0.0f, smoothing = 0.0f, clip = 0.0f;
    cli_opt opts[] = {
        {"--init", OPT_STR, &init, 1, "starting checkpoint (from tfm init, or a PyTorch-made one)"},
        {"--src-ids", OPT_STR, &src_path, 1, "source token ids, one sequence per line"},
        {"--tgt-ids", OPT_STR, &tgt_path, 1, "target token ids (BOS first, EOS last)"},
        {"--steps", OPT_INT, &steps, 1, "optimizer steps"},
        {"--save", OPT_STR, &save, 1, "where to write the trained model (atomically)"},
        {"--optimizer", OPT_STR, &optimizer, 0, "adam or sgd"},
        {"--lr", OPT_FLOAT, &lr, 0, "learning rate (constant) or factor (noam)"},
        {"--schedule", OPT_STR, &schedule, 0, "constant or noam"},
        {"--warmup", OPT_INT, &warmup, 0, "warm-up steps of the noam schedule"},
        {"--dropout", OPT_FLOAT, &dropout, 0, "dropout probability"},
        {"--label-smoothing", OPT_FLOAT, &smoothing, 0, "label smoothing epsilon"},
        {"--batch-size", OPT_INT, &batch, 0, "sentences per step"},
        {"--clip-norm", OPT_FLOAT, &clip, 0, "clip the global gradient norm (0: off)"},
        {"--seed", OPT_INT, &seed, 0, "seed of dropout and shuffling"},
    };
    int r = cli_parse(&cmd_train, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    tfm_train_config tc = tfm_train_config_default();
    if (strcmp(optimizer, "adam") == 0) tc.optimizer = TFM_OPTIMIZER_ADAM;
    else if (strcmp(optimizer, "sgd") == 0) tc.optimizer = TFM_OPTIMIZER_SGD;
    else {
        cli_error("train", "--optimizer must be adam or sgd, got '%s'", optimizer);
        return EXIT_USAGE;
    }
    if (strcmp(schedule, "constant") == 0) tc.schedule = TFM_SCHEDULE_CONSTANT;
    else if (strcmp(schedule, "noam") == 0) tc.schedule = TFM_SCHEDULE_NOAM;
    else {
        cli_error("train", "--schedule must be constant or noam, got '%s'", schedule);
        return EXIT_USAGE;
    }
    if (steps < 1 || batch < 1 || seed < 0) {
        cli_error("train", "--steps and --batch-size must be >= 1 and --seed >= 0");
        return EXIT_USAGE;
    }
    /* the trainer checks these too, but a bad flag is a usage error, found before any loading */
    const char *bad = !(dropout >= 0.0f && dropout < 1.0f)           ? "--dropout must be in [0, 1)"
                      : !(smoothing >= 0.0f && smoothing <= 1.0f)     ? "--label-smoothing must be in [0, 1]"
                      : !(lr > 0.0f) || !isfinite(lr)                 ? "--lr must be positive"
                      : !(clip >= 0.0f) || !isfinite(clip)            ? "--clip-norm must be >= 0 (0: off)"
                      : tc.schedule == TFM_SCHEDULE_NOAM && warmup < 1 ? "--warmup must be >= 1 with noam"
                                                                       : NULL;
    if (bad) {
        cli_error("train", "%s; got --dropout %g --label-smoothing %g --lr %g --clip-norm %g --warmup %d", bad,
                  (double)dropout, (double)smoothing, (double)lr, (double)clip, warmup);
        return EXIT_USAGE;
    }
    if (!output_dir_ok("train", save)) return EXIT_RUNTIME;
    tc.lr = lr;
    tc.warmup = warmup;
    tc.dropout = dropout;
    tc.label_smoothing = smoothing;
    tc.clip_norm = clip;
    tc.seed = (uint64_t)seed;

    tfm_model *m = NULL;
    tfm_trainer *tr = NULL;
    tfm_id_lines src = {0}, tgt = {0};
    int32_t *sb = NULL, *tb = NULL;
    size_t *order = NULL;
    int rc = EXIT_RUNTIME;
    if (tfm_model_load(init, &m) != TFM_OK || tfm_id_lines_read(src_path, &src) != TFM_OK ||
        tfm_id_lines_read(tgt_path, &tgt) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    const tfm_config *c = tfm_model_config(m);
    if (!check_lines(c, &src, src_path, &tgt, tgt_path)) goto done;
    const size_t n = src.n_lines, B = (size_t)batch < n ? (size_t)batch : n;
    int maxS = 0, maxT = 0;
    for (size_t i = 0; i < n; i++) {
        if ((int)tfm_id_lines_len(&src, i) > maxS) maxS = (int)tfm_id_lines_len(&src, i);
        if ((int)tfm_id_lines_len(&tgt, i) > maxT) maxT = (int)tfm_id_lines_len(&tgt, i);
    }
    if (tfm_trainer_create(m, &tc, (int)B, maxS, maxT, &tr) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    sb = malloc(B * (size_t)(maxS + 1) * sizeof *sb);
    tb = malloc(B * (size_t)maxT * sizeof *tb);
    order = malloc(n * sizeof *order);
    if (!sb || !tb || !order) {
        cli_error("train", "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) order[i] = i;
    uint64_t shuffle_state = (uint64_t)seed * 0x2545F4914F6CDD1DULL + 1;
    size_t pos = n; /* start of the next batch in `order`; n forces a (re)shuffle */
    for (int step = 1; step <= steps; step++) {
        if (pos + B > n) {
            if (B < n) shuffle(order, n, &shuffle_state);
            pos = 0;
        }
        int S = 0, T = 0;
        for (size_t b = 0; b < B; b++) {
            size_t i = order[pos + b];
            if ((int)tfm_id_lines_len(&src, i) > S) S = (int)tfm_id_lines_len(&src, i);
            if ((int)tfm_id_lines_len(&tgt, i) > T) T = (int)tfm_id_lines_len(&tgt, i);
        }
        for (size_t b = 0; b < B; b++) {
            size_t i = order[pos + b], ls = tfm_id_lines_len(&src, i), lt = tfm_id_lines_len(&tgt, i);
            for (int t = 0; t < S; t++) sb[b * (size_t)S + (size_t)t] = (size_t)t < ls ? src.ids[src.offsets[i] + (size_t)t] : c->pad_id;
            for (int t = 0; t < T; t++) tb[b * (size_t)T + (size_t)t] = (size_t)t < lt ? tgt.ids[tgt.offsets[i] + (size_t)t] : c->pad_id;
        }
        pos += B;
        tfm_step_stats st;
        if (tfm_trainer_step(tr, (int)B, S, T, sb, tb, &st) != TFM_OK) {
            cli_error("train", "%s", tfm_last_error());
            goto done;
        }
        printf("step %d loss %.6f lr %.6g grad_norm %.4f tokens %zu\n", step, st.loss, st.lr, st.grad_norm, st.n_tokens);
        fflush(stdout);
    }
    if (tfm_model_save(m, save) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        goto done;
    }
    fprintf(stderr, "tfm train: wrote %s after %d steps\n", save, steps);
    rc = 0;
done:
    free(sb);
    free(tb);
    free(order);
    tfm_trainer_free(tr);
    tfm_id_lines_free(&src);
    tfm_id_lines_free(&tgt);
    tfm_model_free(m);
    return rc;
}
