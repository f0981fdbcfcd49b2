/* tfm generate: text from a decoder-only model (docs/LM.md). Writes the prompt, then each sampled
 * token's text as soon as it is chosen (stdout flushed per token), then a newline. */
#include "args.h"
#include "text_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_command cmd_generate = {
    "generate", "write text with a decoder-only model (sampling on the KV cache)",
    "tfm generate --model M [--prompt TEXT] [--max-tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S]",
    run};

/* The stream: every token re-decodes prompt + tokens so far and prints what is new. A trailing
 * U+FFFD (an incomplete byte sequence the next byte piece may finish) is held back; line breaks
 * become spaces, so the output is one line. */
typedef struct {
    const tfm_tokenizer *tok;
    int32_t *ids;   /* prompt, then the generated tokens */
    size_t n, cap;
    size_t printed; /* bytes of the decoded text written so far */
    int failed;
} stream;

static void flush_new(stream *s, int final) {
    char *text = NULL;
    size_t len = 0;
    if (tfm_tokenizer_decode(s->tok, s->ids, s->n, &text, &len) != TFM_OK) {
        s->failed = 1;
        return;
    }
    size_t end = len;
    if (!final && end >= 3 && memcmp(text + end - 3, "\xEF\xBF\xBD", 3) == 0) end -= 3;
    if (end > s->printed) {
        size_t n = tfm_text_one_line(text + s->printed, end - s->printed);
        fwrite(text + s->printed, 1, n, stdout);
        fflush(stdout);
        s->printed = end;
    }
    free(text);
}

static int on_token(int32_t id, void *user) {
    stream *s = user;
    if (s->n < s->cap) s->ids[s->n++] = id;
    flush_new(s, 0);
    return s->failed;
}

static int run(int argc, char **argv) {
    const char *model_path = NULL, *prompt = "";
    int max_tokens = 100, top_k = 0, seed = 1, no_cache = 0;
    float temperature = 1.0f, top_p = 1.0f;
    cli_opt opts[] = {
        {"--model", OPT_STR, &model_path, 1, "decoder-only model with its tokenizer (.safetensors)"},
        {"--prompt", OPT_STR, &prompt, 0, "text to continue (default: none, start from BOS)"},
        {"--max-tokens", OPT_INT, &max_tokens, 0, "generate at most N subword tokens (EOS ends earlier)"},
        {"--temperature", OPT_FLOAT, &temperature, 0, "softmax temperature; 0 = greedy"},
        {"--top-k", OPT_INT, &top_k, 0, "sample among the K most likely tokens (0: all)"},
        {"--top-p", OPT_FLOAT, &top_p, 0, "nucleus: the most likely tokens holding probability P (1: all)"},
        {"--seed", OPT_INT, &seed, 0, "seed of the draws: the same seed gives the same text"},
        {"--no-kv-cache", OPT_FLAG, &no_cache, 0, "recompute the prefix every step (slow; for tests)"},
    };
    int r = cli_parse(&cmd_generate, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    tfm_sample_config sc = {temperature, top_k, top_p, (uint64_t)seed};
    if (max_tokens < 0 || seed < 0 || tfm_sample_config_validate(&sc) != TFM_OK) {
        cli_error("generate", "%s", max_tokens < 0 || seed < 0 ? "--max-tokens and --seed must be >= 0"
                                                                : tfm_last_error());
        return EXIT_USAGE;
    }
    tfm_model *m = NULL;
    tfm_tokenizer *tok = NULL;
    tfm_context *ctx = NULL;
    int32_t *pids = NULL;
    size_t np = 0;
    stream s = {0};
    int rc = EXIT_RUNTIME;
    if (!load_model_and_tokenizer("generate", model_path, &m, &tok)) goto done;
    if (tfm_tokenizer_encode(tok, prompt, strlen(prompt), &pids, &np) != TFM_OK) {
        cli_error("generate", "--prompt: %s", tfm_last_error());
        goto done;
    }
    s.tok = tok;
    s.cap = np + (size_t)max_tokens;
    s.ids = malloc(sizeof(int32_t) * (s.cap ? s.cap : 1));
    if (!s.ids || tfm_context_create(m, &ctx) != TFM_OK) {
        cli_error("generate", "out of memory");
        goto done;
    }
    if (np) memcpy(s.ids, pids, np * sizeof *pids);
    s.n = np;
    flush_new(&s, 0); /* the prompt as the tokenizer spells it */
    int n_out = 0;
    if (tfm_generate(ctx, &sc, pids, (int)np, max_tokens, !no_cache, NULL, 0, &n_out, on_token, &s) != TFM_OK ||
        s.failed) {
        fputc('\n', stdout);
        cli_error("generate", "%s", tfm_last_error());
        goto done;
    }
    flush_new(&s, 1);
    fputc('\n', stdout);
    fprintf(stderr, "tfm generate: %zu tokens (seed %d, temperature %g, top-k %d, top-p %g)\n", s.n - np, seed,
            (double)temperature, top_k, (double)top_p);
    rc = 0;
done:
    free(s.ids);
    free(pids);
    tfm_context_free(ctx);
    tfm_tokenizer_free(tok);
    tfm_model_free(m);
    return rc;
}
