/* tfm score: teacher-forced log-probabilities of (source, target) id-file pairs (docs/FORMATS.md),
 * optionally dumping the generator's logits. */
#include "kernel_env.h"
#include "args.h"
#include "text_io.h"
#include "tfm/tfm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_command cmd_score = {
    "score", "print log p(target | source) per pair, in nats, and the number of predicted tokens",
    "tfm score --model M --src-ids F --tgt-ids F [--dump-logits OUT] [--batch-size B]", run};

/* Checks the pairs against the model: same line counts, ids inside the vocabularies, lengths. */
static int check_pairs(const tfm_config *c, const tfm_id_lines *src, const char *src_path, const tfm_id_lines *tgt,
                       const char *tgt_path) {
    if (src->n_lines != tgt->n_lines) {
        cli_error("score", "%s has %zu lines but %s has %zu: the files must be aligned", src_path, src->n_lines,
                  tgt_path, tgt->n_lines);
        return 0;
    }
    if (tfm_id_lines_check_vocab(src, src_path, c->src_vocab) != TFM_OK ||
        tfm_id_lines_check_vocab(tgt, tgt_path, c->tgt_vocab) != TFM_OK) {
        cli_error("score", "%s", tfm_last_error());
        return 0;
    }
    for (size_t i = 0; i < src->n_lines; i++) {
        size_t ls = tfm_id_lines_len(src, i), lt = tfm_id_lines_len(tgt, i);
        if (ls > (size_t)c->max_len) {
            cli_error("score", "%s:%zu: %zu tokens, longer than the model's max_len %d", src_path, i + 1, ls, c->max_len);
            return 0;
        }
        if (lt < 2) {
            cli_error("score", "%s:%zu: a target line needs at least BOS and EOS (2 ids), got %zu", tgt_path, i + 1, lt);
            return 0;
        }
        if (lt - 1 > (size_t)c->max_len) {
            cli_error("score", "%s:%zu: %zu decoder positions, more than the model's max_len %d", tgt_path, i + 1,
                      lt - 1, c->max_len);
            return 0;
        }
    }
    return 1;
}

/* Copies lines [first, first+B) of `lines` into a (B, L) pad-filled matrix. */
static void pack(int32_t *dst, const tfm_id_lines *lines, size_t first, int B, int L, int pad) {
    for (int b = 0; b < B; b++) {
        size_t i = first + (size_t)b, n = tfm_id_lines_len(lines, i);
        for (int t = 0; t < L; t++) dst[(size_t)b * (size_t)L + (size_t)t] = (size_t)t < n ? lines->ids[lines->offsets[i] + (size_t)t] : pad;
    }
}

static int run(int argc, char **argv) {
    const char *model_path = NULL, *src_path = NULL, *tgt_path = NULL, *dump = NULL;
    int batch = 32;
    cli_opt opts[] = {
        {"--model", OPT_STR, &model_path, 1, "model checkpoint (.safetensors)"},
        {"--src-ids", OPT_STR, &src_path, 1, "source token ids, one sequence per line"},
        {"--tgt-ids", OPT_STR, &tgt_path, 1, "target token ids (BOS first, EOS last), one per line"},
        {"--dump-logits", OPT_STR, &dump, 0, "write float32 logits [lines, T-1, V] here"},
        {"--batch-size", OPT_INT, &batch, 0, "pairs per forward pass"},
    };
    int r = cli_parse(&cmd_score, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    if (batch < 1) {
        cli_error("score", "--batch-size must be at least 1, got %d", batch);
        return EXIT_USAGE;
    }
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    tfm_id_lines src = {0}, tgt = {0};
    int32_t *sbuf = NULL, *tbuf = NULL;
    double *lp = NULL;
    int *nt = NULL;
    float *logits = NULL, *zero_row = NULL;
    cli_output dump_out = {NULL, NULL, NULL}; /* --dump-logits, written atomically */
    FILE *df = NULL;
    int rc = EXIT_RUNTIME;
    const cli_path ins[] = {{"--model", model_path}, {"--src-ids", src_path}, {"--tgt-ids", tgt_path}},
                   outs[] = {{"--dump-logits", dump}};
    if (!cli_outputs_ok("score", ins, 3, outs, 1)) goto done; /* fail early: before loading anything */
    if (tfm_model_load(model_path, &m) != TFM_OK) {
        cli_error("score", "%s", tfm_last_error());
        goto done;
    }
    if (!model_arch_ok("score", model_path, tfm_model_config(m), MODEL_DECODES)) goto done;
    if (tfm_context_create_opts(m, cli_kernels(), &ctx) != TFM_OK || tfm_id_lines_read(src_path, &src) != TFM_OK ||
        tfm_id_lines_read(tgt_path, &tgt) != TFM_OK) {
        cli_error("score", "%s", tfm_last_error());
        goto done;
    }
    const tfm_config *c = tfm_model_config(m);
    if (!check_pairs(c, &src, src_path, &tgt, tgt_path)) goto done;
    size_t S_file = 0, T_file = 0; /* the longest lines: the buffers hold the data, not the limits */
    for (size_t i = 0; i < tgt.n_lines; i++) {
        if (tfm_id_lines_len(&src, i) > S_file) S_file = tfm_id_lines_len(&src, i);
        if (tfm_id_lines_len(&tgt, i) > T_file) T_file = tfm_id_lines_len(&tgt, i);
    }
    if ((size_t)batch > src.n_lines) batch = src.n_lines > 0 ? (int)src.n_lines : 1; /* no rows for lines not there */
    const size_t V = (size_t)c->tgt_vocab;
    if (dump) {
        if (!cli_output_open("score", dump, &dump_out)) goto done;
        df = dump_out.f;
    }
    sbuf = malloc((size_t)batch * S_file * sizeof *sbuf + sizeof *sbuf);
    tbuf = malloc((size_t)batch * T_file * sizeof *tbuf + sizeof *tbuf);
    lp = malloc((size_t)batch * sizeof *lp);
    nt = malloc((size_t)batch * sizeof *nt);
    if (dump) logits = malloc((size_t)batch * (T_file - 1) * V * sizeof *logits);
    if (dump) zero_row = calloc(V, sizeof *zero_row);
    if (!sbuf || !tbuf || !lp || !nt || (dump && (!logits || !zero_row))) goto oom;
    for (size_t first = 0; first < src.n_lines; first += (size_t)batch) {
        int B = (int)(src.n_lines - first < (size_t)batch ? src.n_lines - first : (size_t)batch);
        int S = 0, T = 0;
        for (int b = 0; b < B; b++) {
            int ls = (int)tfm_id_lines_len(&src, first + (size_t)b), lt = (int)tfm_id_lines_len(&tgt, first + (size_t)b);
            S = ls > S ? ls : S;
            T = lt > T ? lt : T;
        }
        pack(sbuf, &src, first, B, S, c->pad_id);
        pack(tbuf, &tgt, first, B, T, c->pad_id);
        if (tfm_model_score(ctx, B, S, T, sbuf, tbuf, lp, nt, logits) != TFM_OK) {
            cli_error("score", "lines %zu-%zu: %s", first + 1, first + (size_t)B, tfm_last_error());
            goto done;
        }
        for (int b = 0; b < B; b++) printf("%.6f %d\n", lp[b], nt[b]);
        if (df) {
            /* rows padded to the file's longest target: positions past this batch's T are zero */
            for (int b = 0; b < B; b++) {
                const size_t row = (size_t)(T - 1) * V;
                int ok = fwrite(logits + (size_t)b * row, sizeof(float), row, df) == row;
                for (size_t t = (size_t)(T - 1); ok && t < T_file - 1; t++) ok = fwrite(zero_row, sizeof(float), V, df) == V;
                if (!ok) {
                    cli_error("score", "cannot write %s: %s", dump, strerror(errno));
                    goto done;
                }
            }
        }
    }
    if (df) {
        df = NULL;
        if (!cli_output_close("score", &dump_out, 1)) goto done;
    }
    rc = 0; /* standard output: checked by main (cli_stdout_finish) */
    goto done;
oom:
    cli_error("score", "out of memory");
done:
    if (dump_out.af) cli_output_close("score", &dump_out, 0);
    free(sbuf);
    free(tbuf);
    free(lp);
    free(nt);
    free(logits);
    free(zero_row);
    tfm_id_lines_free(&src);
    tfm_id_lines_free(&tgt);
    tfm_context_free(ctx);
    tfm_model_free(m);
    return rc;
}
