/* tfm perplexity: how well a decoder-only model predicts a text file (docs/LM.md): each non-blank
 * line is BOS + its subwords + EOS; every subword and EOS is predicted (BOS is given); perplexity =
 * exp(total negative log-likelihood / predicted tokens). --by-position and --by-length write the
 * loss per position and per line-length bucket as CSV (docs/STUDY.md uses them). */
#include "kernel_env.h"
#include "args.h"
#include "len_buckets.h"
#include "text_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_command cmd_perplexity = {"perplexity", "per-token perplexity of a text file under a decoder-only model",
                                    "tfm perplexity --model M --text FILE [--batch-tokens N] [--by-position CSV] "
                                    "[--by-length CSV [--buckets E1,E2,...]]",
                                    run};

/* position,tokens,nll,mean_nll: one row per position some line reaches. */
static int write_positions(const char *path, const tfm_perplexity_detail *dt) {
    cli_output o;
    if (!cli_output_open("perplexity", path, &o)) return 0;
    fprintf(o.f, "position,tokens,nll,mean_nll\n");
    for (size_t p = 0; p < dt->n_positions && dt->tokens_at[p]; p++)
        fprintf(o.f, "%zu,%zu,%.9g,%.9g\n", p, dt->tokens_at[p], dt->nll_at[p], dt->nll_at[p] / (double)dt->tokens_at[p]);
    return cli_output_close("perplexity", &o, 1);
}

/* bucket,lo,hi,lines,tokens,nll,mean_nll,perplexity: lines by their predicted tokens (subwords + EOS). */
static int write_lengths(const char *path, const len_buckets *b, const tfm_perplexity_detail *dt, size_t n) {
    const int k = b->n_edges + 1;
    size_t lines[LEN_BUCKETS_MAX + 1] = {0}, toks[LEN_BUCKETS_MAX + 1] = {0};
    double nll[LEN_BUCKETS_MAX + 1] = {0};
    for (size_t i = 0; i < n; i++) {
        if (!dt->line_tokens[i]) continue; /* blank */
        const int j = len_bucket_of(b, dt->line_tokens[i]);
        lines[j]++;
        toks[j] += dt->line_tokens[i];
        nll[j] += dt->line_nll[i];
    }
    cli_output o;
    if (!cli_output_open("perplexity", path, &o)) return 0;
    fprintf(o.f, "bucket,lo,hi,lines,tokens,nll,mean_nll,perplexity\n");
    for (int j = 0; j < k; j++) {
        char label[48], hi[24];
        if (len_bucket_hi(b, j) < 0)
            snprintf(hi, sizeof hi, "inf");
        else
            snprintf(hi, sizeof hi, "%d", len_bucket_hi(b, j));
        const double mean = toks[j] ? nll[j] / (double)toks[j] : NAN;
        fprintf(o.f, "%s,%d,%s,%zu,%zu,%.9g,%.9g,%.6g\n", len_bucket_label(b, j, label, sizeof label),
                len_bucket_lo(b, j), hi, lines[j], toks[j], nll[j], mean, exp(mean));
    }
    return cli_output_close("perplexity", &o, 1);
}

static int run(int argc, char **argv) {
    const char *model_path = NULL, *text = NULL, *by_pos = NULL, *by_len = NULL, *buckets = LEN_BUCKETS_DEFAULT;
    int batch_tokens = 3000;
    cli_opt opts[] = {
        {"--model", OPT_STR, &model_path, 1, "decoder-only model with its tokenizer (.safetensors)"},
        {"--text", OPT_STR, &text, 1, "UTF-8 text, one sequence per line (blank lines skipped)"},
        {"--batch-tokens", OPT_INT, &batch_tokens, 0, "tokens per scoring batch, padding included"},
        {"--by-position", OPT_STR, &by_pos, 0, "write the loss per position as CSV (position,tokens,nll,mean_nll; "
                                               "position p predicts the token after p subwords)"},
        {"--by-length", OPT_STR, &by_len, 0, "write the loss per line-length bucket (predicted tokens: subwords + "
                                             "EOS) as CSV"},
        {"--buckets", OPT_STR, &buckets, 0, "--by-length: upper bucket edges in tokens, inclusive"},
    };
    int r = cli_parse(&cmd_perplexity, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    if (batch_tokens < 1) {
        cli_error("perplexity", "--batch-tokens must be >= 1, got %d", batch_tokens);
        return EXIT_USAGE;
    }
    len_buckets lb;
    if (by_len && !len_buckets_parse("perplexity", buckets, &lb)) return EXIT_USAGE;
    const cli_path ins[] = {{"--text", text}, {"--model", model_path}},
                   outs[] = {{"--by-position", by_pos}, {"--by-length", by_len}};
    if (!cli_outputs_ok("perplexity", ins, 2, outs, 2)) return EXIT_RUNTIME;
    tfm_model *m = NULL;
    tfm_tokenizer *tok = NULL;
    tfm_context *ctx = NULL;
    char **lines = NULL;
    size_t n = 0;
    int rc = EXIT_RUNTIME;
    tfm_perplexity_stats st;
    tfm_perplexity_detail dt = {0};
    if (!read_lines("perplexity", text, &lines, &n)) goto done;
    size_t non_blank = 0; /* an input check, before the model loads */
    for (size_t i = 0; i < n && !non_blank; i++) non_blank = !tfm_text_is_blank(lines[i], strlen(lines[i]));
    if (!non_blank) {
        cli_error("perplexity", "%s has no non-blank line to score", text);
        goto done;
    }
    if (!load_model_and_tokenizer("perplexity", model_path, TFM_ARCH_DECODER_ONLY, &m, &tok)) goto done;
    const int detail = by_pos || by_len;
    if (detail) {
        dt.n_positions = (size_t)tfm_model_config(m)->max_len;
        dt.nll_at = calloc(dt.n_positions, sizeof *dt.nll_at);
        dt.tokens_at = calloc(dt.n_positions, sizeof *dt.tokens_at);
        dt.line_nll = calloc(n, sizeof *dt.line_nll);
        dt.line_tokens = calloc(n, sizeof *dt.line_tokens);
        if (!dt.nll_at || !dt.tokens_at || !dt.line_nll || !dt.line_tokens) {
            cli_error("perplexity", "out of memory for --by-position/--by-length");
            goto done;
        }
    }
    if (tfm_context_create_opts(m, cli_kernels(), &ctx) != TFM_OK ||
        tfm_perplexity_text_detail(ctx, tok, (const char *const *)lines, n, batch_tokens, &st,
                                   detail ? &dt : NULL) != TFM_OK) {
        cli_error("perplexity", "%s: %s", text, tfm_last_error());
        goto done;
    }
    if (st.tokens == 0) {
        cli_error("perplexity", "%s has no non-blank line to score", text);
        goto done;
    }
    if ((by_pos && !write_positions(by_pos, &dt)) || (by_len && !write_lengths(by_len, &lb, &dt, n))) goto done;
    printf("perplexity %.4f nll_per_token %.6f tokens %zu lines %zu nll %.6f\n", st.perplexity,
           st.nll / (double)st.tokens, st.tokens, st.lines, st.nll);
    fprintf(stderr, "tfm perplexity: %zu lines (%zu blank skipped, %zu cut to max_len), %zu predicted tokens "
                    "(subwords + EOS), %.4f nats/token\n",
            st.lines, st.skipped_blank, st.truncated, st.tokens, st.nll / (double)st.tokens);
    rc = 0;
done:
    free(dt.nll_at);
    free(dt.tokens_at);
    free(dt.line_nll);
    free(dt.line_tokens);
    tfm_context_free(ctx);
    free_lines(lines, n);
    tfm_tokenizer_free(tok);
    tfm_model_free(m);
    return rc;
}
