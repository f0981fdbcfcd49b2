/* Continue a prompt with a tfm decoder-only language model (a checkpoint made by
 * `tfm train --arch decoder-only --text ...`), sampling with temperature 0.8 and top-k 40.
 *
 *   cc generate.c $(pkg-config --cflags --libs tfm) -o generate
 *   ./generate lm.safetensors "And God said" 30
 */
#include <tfm/tfm.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
    fprintf(stderr, "generate: %s: %s\n", what, tfm_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL PROMPT [MAX_TOKENS]\n", argv[0]);
        return 2;
    }
    const int max_tokens = argc > 3 ? atoi(argv[3]) : 30;
    tfm_model *model = NULL;
    tfm_tokenizer *tok = NULL;
    tfm_context *ctx = NULL;
    size_t tok_len = 0;
    if (tfm_model_load(argv[1], &model) != TFM_OK) return fail(argv[1]);
    const unsigned char *tok_bytes = tfm_model_tokenizer(model, &tok_len);
    if (!tok_bytes || tfm_tokenizer_load_bytes(tok_bytes, tok_len, &tok) != TFM_OK) return fail("tokenizer");
    if (tfm_context_create(model, &ctx) != TFM_OK) return fail("context");

    int32_t *prompt = NULL, *out = malloc((size_t)(max_tokens > 0 ? max_tokens : 1) * sizeof *out);
    size_t n_prompt = 0;
    int n_out = 0;
    if (!out || tfm_tokenizer_encode(tok, argv[2], strlen(argv[2]), &prompt, &n_prompt) != TFM_OK)
        return fail("prompt");

    tfm_sample_config cfg = tfm_sample_config_default();
    cfg.temperature = 0.8f;
    cfg.top_k = 40;
    cfg.seed = 42; /* the same seed gives the same text */
    if (tfm_generate(ctx, &cfg, prompt, (int)n_prompt, max_tokens, 1, out, max_tokens, &n_out, NULL, NULL) != TFM_OK)
        return fail("generate");

    /* the prompt and the new tokens decoded together, as tfm generate prints them: a token that
     * continues the prompt's last word (no leading space piece) joins it */
    int32_t *all = malloc((n_prompt + (size_t)n_out + 1) * sizeof *all);
    if (!all) return fail("out of memory");
    memcpy(all, prompt, n_prompt * sizeof *all);
    memcpy(all + n_prompt, out, (size_t)n_out * sizeof *all);
    char *text = NULL;
    size_t text_len = 0;
    if (tfm_tokenizer_decode(tok, all, n_prompt + (size_t)n_out, &text, &text_len) != TFM_OK) return fail("decode");
    printf("%s\n", text);
    free(all);

    free(text);
    free(prompt);
    free(out);
    tfm_context_free(ctx);
    tfm_tokenizer_free(tok);
    tfm_model_free(model);
    return 0;
}
