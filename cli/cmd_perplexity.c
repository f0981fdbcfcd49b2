/* tfm perplexity: how well a decoder-only model predicts a text file (docs/LM.md): each non-blank
 * line is BOS + its subwords + EOS; every subword and EOS is predicted (BOS is given); perplexity =
 * exp(total negative log-likelihood / predicted tokens). --by-position and --by-length write the
 * loss per position and per line-length bucket as CSV (docs/STUDY.md uses them). A Hugging Face
 * model's lines are as its tokenizer encodes them, every token after the first predicted
 * (docs/LLM.md). */
#include "kernel_env.h"
#include "args.h"
#include "len_buckets.h"
#include "lm_load.h"
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

/* A Hugging Face model (docs/LLM.md): each non-blank line as its tokenizer encodes it (the
 * template's BOS for Llama, nothing for GPT-2), scored as transformers' model(ids, labels=ids).loss
 * counts: every token after the first. Blank lines are counted in skipped_blank. Returns 1, or 0
 * after printing the error. */
static int hf_perplexity(const lm_model *lm, tfm_context *ctx, const char *path, char **lines, size_t n,
                         int batch_tokens, tfm_perplexity_stats *st) {
    int32_t **rows = calloc(n ? n : 1, sizeof *rows);
    size_t *len = calloc(n ? n : 1, sizeof *len), k = 0, blank = 0;
    int ok = rows && len;
    if (!ok) cli_error("perplexity", "out of memory reading %s", path);
    for (size_t i = 0; ok && i < n; i++) {
        const size_t bytes = strlen(lines[i]);
        if (tfm_text_is_blank(lines[i], bytes)) {
            blank++;
            continue;
        }
        ok = lm_encode(lm, lines[i], bytes, &rows[k], &len[k]) == TFM_OK;
        if (!ok) cli_error("perplexity", "%s:%zu: %s", path, i + 1, tfm_last_error());
        k++;
    }
    if (ok && tfm_perplexity_ids(ctx, (const int32_t *const *)rows, len, k, batch_tokens, st) != TFM_OK) {
        cli_error("perplexity", "%s: %s", path, tfm_last_error());
        ok = 0;
    }
    st->skipped_blank = blank;
    for (size_t i = 0; rows && i < k; i++) free(rows[i]);
    free(rows);
    free(len);
    return ok;
}

static int run(int argc, char **argv) {
    const char *model_path = NULL, *text = NULL, *by_pos = NULL, *by_len = NULL, *buckets = LEN_BUCKETS_DEFAULT;
    int batch_tokens = 3000;
    cli_opt opts[] = {
        {"--model", OPT_STR, &model_path, 1, "decoder-only model with its tokenizer (.safetensors), or a Hugging "
                                             "Face GPT-2 / Llama folder (docs/LLM.md)"},
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
    lm_model lm = {0};
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
    if (!lm_load("perplexity", model_path, &lm)) goto done;
    tfm_model *m = lm.m;
    const int detail = by_pos || by_len;
    if (detail && lm.bpe) {
        cli_error("perplexity", "--by-position and --by-length are for tfm's own models, not a Hugging Face folder");
        goto done;
    }
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
    if (tfm_context_create_opts(m, cli_kernels(), &ctx) != TFM_OK) {
        cli_error("perplexity", "%s", tfm_last_error());
        goto done;
    }
    if (lm.bpe) {
        if (!hf_perplexity(&lm, ctx, text, lines, n, batch_tokens, &st)) goto done;
    } else if (tfm_perplexity_text_detail(ctx, lm.tok, (const char *const *)lines, n, batch_tokens, &st,
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
                    "(%s), %.4f nats/token\n",
            st.lines, st.skipped_blank, st.truncated, st.tokens,
            lm.bpe ? "every token after each line's first, as transformers' loss" : "subwords + EOS",
            st.nll / (double)st.tokens);
    rc = 0;
done:
    free(dt.nll_at);
    free(dt.tokens_at);
    free(dt.line_nll);
    free(dt.line_tokens);
    tfm_context_free(ctx);
    free_lines(lines, n);
    lm_free(&lm);
    return rc;
}
