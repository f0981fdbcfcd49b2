/* tfm eval: translate a source file and score it against references with corpus BLEU and chrF2,
 * as sacreBLEU does (tfm bleu). */
#include "decoding.h"
#include "eval_lengths.h"
#include "text_io.h"

#include <stdio.h>
#include <stdlib.h>

static int run(int argc, char **argv);

const cli_command cmd_eval = {"eval", "translate a file and print BLEU and chrF2 against references",
                              "tfm eval --model M --src F --ref F [--beam K] [--output HYP] [--by-length [--buckets E1,E2,...] "
                              "[--csv FILE]] [--src-lang L] [--tgt-lang L]",
                              run};

static int run(int argc, char **argv) {
    const char *model_path = NULL, *src_path = NULL, *ref_path = NULL, *output = NULL, *csv = NULL;
    const char *buckets = LEN_BUCKETS_DEFAULT;
    int by_length = 0;
    decode_flags f = DECODE_FLAGS_DEFAULT;
    cli_opt opts[] = {
        {"--model", OPT_STR, &model_path, 1, "trained model with its tokenizer (.safetensors)"},
        {"--src", OPT_STR, &src_path, 1, "source sentences, one per line"},
        {"--ref", OPT_STR, &ref_path, 1, "reference translations, aligned with --src"},
        {"--output", OPT_STR, &output, 0, "also write the translations here"},
        {"--by-length", OPT_FLAG, &by_length, 0, "also BLEU, chrF2, lines and hyp/ref length ratio per source-length "
                                                 "bucket (subword tokens)"},
        {"--buckets", OPT_STR, &buckets, 0, "--by-length: upper bucket edges in tokens, inclusive; a last bucket "
                                            "holds the longer lines"},
        {"--csv", OPT_STR, &csv, 0, "--by-length: also write the buckets' table here as CSV"},
        DECODE_OPTS(f),
        LANG_OPTS(f),
    };
    int r = cli_parse(&cmd_eval, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    tfm_decode_config dc;
    if (!make_config("eval", &f, &dc)) return EXIT_USAGE;
    len_buckets lb;
    if (csv && !by_length) {
        cli_error("eval", "--csv goes with --by-length");
        return EXIT_USAGE;
    }
    if (by_length && !len_buckets_parse("eval", buckets, &lb)) return EXIT_USAGE;
    tfm_model *m = NULL;
    tfm_tokenizer *tok = NULL;
    char **src = NULL, **ref = NULL, **hyp = NULL;
    size_t n = 0, n_ref = 0;
    int rc = EXIT_RUNTIME;
    /* fail early: the destination, both inputs and their validation (the one tfm bleu uses), then
     * the model, before any decoding */
    const cli_path ins[] = {{"--src", src_path}, {"--ref", ref_path}, {"--model", model_path}},
                   outs[] = {{"--output", output}, {"--csv", csv}};
    if (!cli_outputs_ok("eval", ins, 3, outs, 2)) goto done;
    if (!read_lines("eval", src_path, &src, &n) || !read_lines("eval", ref_path, &ref, &n_ref)) goto done;
    if (tfm_bleu_check_segments("source", src_path, (const char *const *)src, n, ref_path, (const char *const *)ref,
                                n_ref) != TFM_OK) {
        cli_error("eval", "%s", tfm_last_error());
        goto done;
    }
    if (!load_model_and_tokenizer("eval", model_path, TFM_ARCH_ENCODER_DECODER, &m, &tok)) goto done;
    if (!apply_langs("eval", &f, tok, &dc, src, n)) goto done;
    hyp = calloc(n ? n : 1, sizeof *hyp);
    if (!memory_fits_decode("eval", f.max_memory, m, tok, &dc, f.batch, src, n)) goto done;
    if (!hyp || !translate_lines("eval", src_path, m, tok, &dc, f.batch, src, n, hyp)) goto done;
    if (output && !write_lines("eval", output, hyp, n)) goto done;
    tfm_bleu_stats bleu = {0};
    tfm_chrf_stats chrf = {0};
    for (size_t i = 0; i < n; i++) {
        if (tfm_bleu_add(&bleu, hyp[i], ref[i]) != TFM_OK || tfm_chrf_add(&chrf, hyp[i], ref[i]) != TFM_OK) {
            cli_error("eval", "%s:%zu: %s", ref_path, i + 1, tfm_last_error());
            goto done;
        }
    }
    tfm_bleu_score score = tfm_bleu_compute(&bleu);
    char line[256];
    tfm_bleu_format(&score, line, sizeof line);
    printf("%s\n%s\nchrF2 = %.2f\n%s\n", line, tfm_bleu_signature(), tfm_chrf_compute(&chrf), tfm_chrf_signature());
    if (by_length && !eval_by_length("eval", tok, src, hyp, ref, n, &lb, csv)) goto done;
    rc = 0;
done:
    free_lines(hyp, n);
    free_lines(src, n);
    free_lines(ref, n_ref);
    tfm_tokenizer_free(tok);
    tfm_model_free(m);
    return rc;
}
