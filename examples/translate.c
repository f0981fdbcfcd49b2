/* Translate sentences with a tfm translation model (a checkpoint made by `tfm train --data`, whose
 * SentencePiece tokenizer is stored inside it), beam search with 4 beams.
 *
 *   cc translate.c $(pkg-config --cflags --libs tfm) -o translate
 *   ./translate model.safetensors "In the beginning was the Word."
 */
#include <tfm/tfm.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what) {
    fprintf(stderr, "translate: %s: %s\n", what, tfm_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL SENTENCE...\n", argv[0]);
        return 2;
    }
    tfm_model *model = NULL;
    if (tfm_model_load(argv[1], &model) != TFM_OK) return fail(argv[1]);

    /* the tokenizer travels inside the checkpoint */
    size_t tok_len = 0;
    const unsigned char *tok_bytes = tfm_model_tokenizer(model, &tok_len);
    tfm_tokenizer *tok = NULL;
    if (!tok_bytes || tfm_tokenizer_load_bytes(tok_bytes, tok_len, &tok) != TFM_OK) {
        tfm_model_free(model);
        return fail("the model's tokenizer");
    }

    /* a context holds one caller's workspace and KV cache; the model is shared and read-only */
    tfm_context *ctx = NULL;
    if (tfm_context_create(model, &ctx) != TFM_OK) return fail("context");

    tfm_decode_config cfg = tfm_decode_config_default();
    cfg.beam = 4;
    const size_t n = (size_t)(argc - 2);
    char **out = calloc(n, sizeof *out);
    int rc = 0;
    if (!out || tfm_translate_text(ctx, tok, &cfg, (const char *const *)(argv + 2), n, 32, out, NULL) != TFM_OK)
        rc = fail("translate");
    for (size_t i = 0; rc == 0 && i < n; i++) printf("%s\n", out[i]);

    for (size_t i = 0; out && i < n; i++) free(out[i]);
    free(out);
    tfm_context_free(ctx);
    tfm_tokenizer_free(tok);
    tfm_model_free(model);
    return rc;
}
