/* tfm generate: text from a decoder-only model (docs/LM.md). Writes the prompt, then each sampled
 * token's text as soon as it is chosen (stdout flushed per token), then a newline. */
#include "kernel_env.h"
#include "args.h"
#include "lm_load.h"
#include "text_io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_command cmd_generate = {
    "generate", "write text with a decoder-only model (sampling on the KV cache)",
    "tfm generate --model M [--prompt TEXT] [--max-tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S]",
    run};

/* The stream (tfm_text_stream): every token re-decodes prompt + tokens so far and prints the newly
 * settled bytes (trailing U+FFFDs of an unfinished byte sequence wait); line breaks become spaces,
 * so the output is one line. */
typedef struct {
    tfm_text_stream ts;
    int failed;
    int write_errno; /* failed because standard output could not be written (errno, or -1) */
} stream;

/* Prints why the stream failed: the library's error, or the write to standard output. */
static void stream_error(const stream *s) {
    if (s->write_errno)
        cli_error("generate", "cannot write standard output: %s",
                  s->write_errno > 0 ? strerror(s->write_errno) : "a write failed");
    else
        cli_error("generate", "%s", tfm_last_error());
}

static void emit(stream *s, const int32_t *ids, size_t n, int final) {
    const char *p;
    size_t len;
    if (tfm_text_stream_push(&s->ts, ids, n, final, &p, &len) != TFM_OK) {
        s->failed = 1;
        return;
    }
    if (len) {
        char *w = s->ts.text + (p - s->ts.text); /* p points into the stream's own last decode */
        const size_t n_out = tfm_text_one_line(w, len);
        errno = 0;
        if (fwrite(w, 1, n_out, stdout) != n_out || fflush(stdout) != 0 || ferror(stdout)) {
            /* a full disk or a closed pipe: stop generating, the text is lost */
            s->failed = 1;
            s->write_errno = errno ? errno : -1;
        }
    }
}

static int on_token(int32_t id, void *user) {
    stream *s = user;
    emit(s, &id, 1, 0);
    return s->failed;
}

static int run(int argc, char **argv) {
    const char *model_path = NULL, *prompt = "";
    int max_tokens = 100, top_k = 0, seed = 1, no_cache = 0;
    float temperature = 1.0f, top_p = 1.0f;
    cli_opt opts[] = {
        {"--model", OPT_STR, &model_path, 1, "decoder-only model with its tokenizer (.safetensors), or a Hugging "
                                             "Face GPT-2 / Llama folder (docs/LLM.md)"},
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
    lm_model lm = {0};
    tfm_context *ctx = NULL;
    int32_t *pids = NULL;
    size_t np = 0;
    stream s = {0};
    int rc = EXIT_RUNTIME;
    if (!lm_load("generate", model_path, &lm)) goto done;
    tfm_model *m = lm.m;
    /* a Hugging Face model's prompt is whole as its tokenizer's template writes it (Llama's BOS,
     * GPT-2 none; an empty one starts from BOS, as transformers' generate); tfm's own gets BOS */
    const int hf = lm.bpe != NULL, bos = !hf;
    if (lm_encode(&lm, prompt, strlen(prompt), &pids, &np) != TFM_OK) {
        cli_error("generate", "--prompt: %s", tfm_last_error());
        goto done;
    }
    if (hf && np == 0) {
        free(pids);
        pids = malloc(sizeof *pids);
        if (!pids) goto done;
        pids[0] = tfm_model_config(m)->bos_id;
        np = 1;
    }
    const int max_len = tfm_model_config(m)->max_len;
    if (np + (size_t)bos > (size_t)max_len) {
        cli_error("generate", "--prompt is %zu tokens; %sthat exceeds the model's max_len %d", np, bos ? "with BOS " : "",
                  max_len);
        goto done;
    }
    /* token k is predicted at position np + bos − 1 + k < max_len: no more can be written */
    if ((size_t)max_tokens > (size_t)max_len - np - (size_t)bos + 1) max_tokens = max_len - (int)np - bos + 1;
    if ((hf ? tfm_text_stream_init_bpe(&s.ts, lm.bpe, lm.clean_up, pids, np, (size_t)max_tokens)
            : tfm_text_stream_init(&s.ts, lm.tok, pids, np, (size_t)max_tokens)) != TFM_OK ||
        tfm_context_create_opts(m, cli_kernels(), &ctx) != TFM_OK) {
        cli_error("generate", "%s", tfm_last_error());
        goto done;
    }
    emit(&s, NULL, 0, 0); /* the prompt as the tokenizer spells it */
    if (s.failed) {
        stream_error(&s);
        goto done;
    }
    int n_out = 0;
    if ((hf ? tfm_generate_prefix(ctx, &sc, pids, (int)np, max_tokens, !no_cache, NULL, 0, &n_out, on_token, &s)
            : tfm_generate(ctx, &sc, pids, (int)np, max_tokens, !no_cache, NULL, 0, &n_out, on_token, &s)) != TFM_OK ||
        s.failed) {
        fputc('\n', stdout);
        stream_error(&s);
        goto done;
    }
    emit(&s, NULL, 0, 1);
    if (s.failed) {
        fputc('\n', stdout);
        stream_error(&s);
        goto done;
    }
    if (s.ts.diverged) { /* not expected of SentencePiece: show the final text whole, on its own line */
        fputc('\n', stdout);
        fwrite(s.ts.text, 1, tfm_text_one_line(s.ts.text, s.ts.len), stdout);
        fprintf(stderr, "tfm generate: the decoded text changed after it was printed; its final form follows\n");
    }
    fputc('\n', stdout);
    fprintf(stderr, "tfm generate: %zu tokens (seed %d, temperature %g, top-k %d, top-p %g)\n", s.ts.n - np, seed,
            (double)temperature, top_k, (double)top_p);
    rc = 0;
done:
    tfm_text_stream_free(&s.ts);
    free(pids);
    tfm_context_free(ctx);
    lm_free(&lm);
    return rc;
}
