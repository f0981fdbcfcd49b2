/* Sentence embeddings with a Hugging Face sentence-transformers folder (e.g. all-MiniLM-L6-v2:
 * config.json, model.safetensors, tokenizer.json): prints each sentence's cosine similarity to the
 * first one.
 *
 *   cc embed.c $(pkg-config --cflags --libs tfm) -o embed
 *   ./embed all-MiniLM-L6-v2 "A man is eating food." "A man eats." "The sky is blue."
 */
#include <tfm/tfm.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
    fprintf(stderr, "embed: %s: %s\n", what, tfm_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL_DIR SENTENCE...\n", argv[0]);
        return 2;
    }
    tfm_embedder *emb = NULL;
    tfm_context *ctx = NULL;
    if (tfm_embedder_open(argv[1], &emb) != TFM_OK) return fail(argv[1]);
    if (tfm_context_create(tfm_embedder_model(emb), &ctx) != TFM_OK) return fail("context");

    const size_t n = (size_t)(argc - 2);
    const int dim = tfm_embedder_dim(emb);
    size_t *lens = malloc(n * sizeof *lens);
    float *vec = malloc(n * (size_t)dim * sizeof *vec); /* (n, dim), row i for sentence i */
    if (!lens || !vec) return fail("out of memory");
    for (size_t i = 0; i < n; i++) lens[i] = strlen(argv[2 + i]);
    if (tfm_embedder_encode(emb, ctx, (const char *const *)(argv + 2), lens, n, NULL, vec) != TFM_OK)
        return fail("encode");

    for (size_t i = 0; i < n; i++) {
        double dot = 0, a = 0, b = 0;
        for (int j = 0; j < dim; j++) {
            dot += (double)vec[j] * vec[i * (size_t)dim + (size_t)j];
            a += (double)vec[j] * vec[j];
            b += (double)vec[i * (size_t)dim + (size_t)j] * vec[i * (size_t)dim + (size_t)j];
        }
        printf("%.4f\t%s\n", dot / (sqrt(a * b) + 1e-30), argv[2 + i]);
    }
    free(vec);
    free(lens);
    tfm_context_free(ctx);
    tfm_embedder_free(emb);
    return 0;
}
