/* What tfm embed and tfm similarity share: opening an embedder and embedding lines. */
#ifndef TFM_CLI_EMBED_IO_H
#define TFM_CLI_EMBED_IO_H

#include "tfm/embed.h"

#include <stddef.h>

/* Opens the embedder of --model and a context for it; prints the error and returns 0 on failure. */
int embed_open(const char *cmd, const char *model, tfm_embedder **e, tfm_context **ctx);

/* Embeds n lines (NUL-terminated) into a malloc'd (n, dim) array *out; errors name `name`:line
 * (`name` NULL: "text i"). Prints the error and returns 0 on failure. */
int embed_lines(const char *cmd, const tfm_embedder *e, tfm_context *ctx, char *const *lines, size_t n,
                const char *name, float **out);

#endif
