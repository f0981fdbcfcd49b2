/* Opening an embedder and embedding lines, for tfm embed and tfm similarity (embed_io.h). */
#include "kernel_env.h"
#include "embed_io.h"

#include "args.h"

#include <stdlib.h>
#include <string.h>

int embed_open(const char *cmd, const char *model, tfm_embedder **e, tfm_context **ctx) {
    *e = NULL;
    *ctx = NULL;
    if (tfm_embedder_open(model, e) != TFM_OK || tfm_context_create_opts(tfm_embedder_model(*e), cli_kernels(), ctx) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        tfm_embedder_free(*e);
        *e = NULL;
        return 0;
    }
    return 1;
}

int embed_lines(const char *cmd, const tfm_embedder *e, tfm_context *ctx, char *const *lines, size_t n,
                const char *name, float **out) {
    const size_t d = (size_t)tfm_embedder_dim(e);
    *out = malloc((n ? n : 1) * d * sizeof **out);
    size_t *lens = malloc((n ? n : 1) * sizeof *lens);
    if (!*out || !lens) {
        cli_error(cmd, "out of memory for %zu vectors", n);
        free(lens);
        free(*out);
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < n; i++) lens[i] = strlen(lines[i]);
    tfm_status st = tfm_embedder_encode(e, ctx, (const char *const *)lines, lens, n, name, *out);
    free(lens);
    if (st != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        free(*out);
        *out = NULL;
        return 0;
    }
    return 1;
}
