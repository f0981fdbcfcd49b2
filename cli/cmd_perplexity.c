/* tfm perplexity: how well a decoder-only model predicts a text file (docs/LM.md): each non-blank
 * line is BOS + its subwords + EOS; every subword and EOS is predicted (BOS is given); perplexity =
 * exp(total negative log-likelihood / predicted tokens). */
#include "kernel_env.h"
#include "args.h"
#include "text_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_command cmd_perplexity = {"perplexity", "per-token perplexity of a text file under a decoder-only model",
                                    "tfm perplexity --model M --text FILE [--batch-tokens N]", run};

static int run(int argc, char **argv) {
    const char *model_path = NULL, *text = NULL;
    int batch_tokens = 3000;
    cli_opt opts[] = {
        {"--model", OPT_STR, &model_path, 1, "decoder-only model with its tokenizer (.safetensors)"},
        {"--text", OPT_STR, &text, 1, "UTF-8 text, one sequence per line (blank lines skipped)"},
        {"--batch-tokens", OPT_INT, &batch_tokens, 0, "tokens per scoring batch, padding included"},
    };
    int r = cli_parse(&cmd_perplexity, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    if (batch_tokens < 1) {
        cli_error("perplexity", "--batch-tokens must be >= 1, got %d", batch_tokens);
        return EXIT_USAGE;
    }
    tfm_model *m = NULL;
    tfm_tokenizer *tok = NULL;
    tfm_context *ctx = NULL;
    char **lines = NULL;
    size_t n = 0;
    int rc = EXIT_RUNTIME;
    tfm_perplexity_stats st;
    if (!read_lines("perplexity", text, &lines, &n)) goto done;
    size_t non_blank = 0; /* an input check, before the model loads */
    for (size_t i = 0; i < n && !non_blank; i++) non_blank = !tfm_text_is_blank(lines[i], strlen(lines[i]));
    if (!non_blank) {
        cli_error("perplexity", "%s has no non-blank line to score", text);
        goto done;
    }
    if (!load_model_and_tokenizer("perplexity", model_path, TFM_ARCH_DECODER_ONLY, &m, &tok)) goto done;
    if (tfm_context_create_opts(m, cli_kernels(), &ctx) != TFM_OK ||
        tfm_perplexity_text(ctx, tok, (const char *const *)lines, n, batch_tokens, &st) != TFM_OK) {
        cli_error("perplexity", "%s: %s", text, tfm_last_error());
        goto done;
    }
    if (st.tokens == 0) {
        cli_error("perplexity", "%s has no non-blank line to score", text);
        goto done;
    }
    printf("perplexity %.4f nll_per_token %.6f tokens %zu lines %zu\n", st.perplexity,
           st.nll / (double)st.tokens, st.tokens, st.lines);
    fprintf(stderr, "tfm perplexity: %zu lines (%zu blank skipped, %zu cut to max_len), %zu predicted tokens "
                    "(subwords + EOS), %.4f nats/token\n",
            st.lines, st.skipped_blank, st.truncated, st.tokens, st.nll / (double)st.tokens);
    rc = 0;
done:
    tfm_context_free(ctx);
    free_lines(lines, n);
    tfm_tokenizer_free(tok);
    tfm_model_free(m);
    return rc;
}
