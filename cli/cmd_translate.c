/* tfm translate: one sentence a line in, one translation a line out (docs/FORMATS.md); an empty
 * line gives an empty line, so files stay aligned. Speed is reported on stderr. */
#include "args.h"
#include "decoding.h"
#include "text_io.h"

#include <stdio.h>
#include <stdlib.h>

static int run(int argc, char **argv);

const cli_command cmd_translate = {
    "translate", "translate text, one sentence per line (stdin to stdout by default)",
    "tfm translate --model M [--beam K] [--lenpen A] [--input F] [--output F] [--src-lang L] [--tgt-lang L] "
    "[--list-langs]", run};

static int run(int argc, char **argv) {
    const char *model_path = NULL, *input = NULL, *output = NULL;
    int list = 0;
    decode_flags f = DECODE_FLAGS_DEFAULT;
    cli_opt opts[] = {
        {"--model", OPT_STR, &model_path, 1, "trained model with its tokenizer (.safetensors)"},
        {"--input", OPT_STR, &input, 0, "source sentences, one per line (default stdin)"},
        {"--output", OPT_STR, &output, 0, "translations, one per line (default stdout; written atomically)"},
        DECODE_OPTS(f),
        LANG_OPTS(f),
        {"--list-langs", OPT_FLAG, &list, 0, "print the model's language codes and their ids, and stop"},
    };
    int r = cli_parse(&cmd_translate, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    tfm_decode_config dc;
    if (!make_config("translate", &f, &dc)) return EXIT_USAGE;
    tfm_model *m = NULL;
    tfm_tokenizer *tok = NULL;
    char **lines = NULL, **out = NULL;
    size_t n = 0;
    int rc = EXIT_RUNTIME;
    /* fail early: the destination, then the input, then the model, before any decoding */
    const cli_path ins[] = {{"--input", input}, {"--model", model_path}}, outs[] = {{"--output", output}};
    if (list) {
        if (load_model_and_tokenizer("translate", model_path, TFM_ARCH_ENCODER_DECODER, &m, &tok) &&
            list_langs("translate", model_path, tok))
            rc = 0;
        goto done;
    }
    if (!cli_outputs_ok("translate", ins, 2, outs, 1)) goto done;
    if (!read_lines("translate", input, &lines, &n)) goto done;
    if (!load_model_and_tokenizer("translate", model_path, TFM_ARCH_ENCODER_DECODER, &m, &tok)) goto done;
    if (!apply_langs("translate", &f, tok, &dc, lines, n)) goto done;
    if (!memory_fits_decode("translate", f.max_memory, m, tok, &dc, f.batch, lines, n)) goto done;
    out = calloc(n ? n : 1, sizeof *out);
    if (!out) goto done;
    if (!translate_lines("translate", input, m, tok, &dc, f.batch, lines, n, out)) goto done;
    if (!write_lines("translate", output, out, n)) goto done;
    rc = 0;
done:
    free_lines(out, n);
    free_lines(lines, n);
    tfm_tokenizer_free(tok);
    tfm_model_free(m);
    return rc;
}
