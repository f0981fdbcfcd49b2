#include "kernel_env.h"
#include "memory_check.h"

#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int memory_flag_ok(const char *cmd, const char *max_memory) {
    size_t bytes;
    if (!max_memory || tfm_memory_parse(max_memory, &bytes) == TFM_OK) return 1;
    cli_error(cmd, "--max-memory: %s", tfm_last_error());
    return 0;
}

/* The limit and its name; 0 when none is known (no flag, no /proc/meminfo). */
static int memory_limit(const char *max_memory, size_t *limit, char *name, size_t cap) {
    if (max_memory) {
        snprintf(name, cap, "--max-memory %s", max_memory);
        return tfm_memory_parse(max_memory, limit) == TFM_OK;
    }
    snprintf(name, cap, "the available memory (MemAvailable of /proc/meminfo; --max-memory sets another limit)");
    return tfm_memory_available(limit) == TFM_OK;
}

static int fits(const char *cmd, const char *max_memory, const tfm_memory_estimate *e, const char *advice) {
    size_t limit;
    char name[160];
    if (!memory_limit(max_memory, &limit, name, sizeof name)) return 1;
    if (tfm_memory_check(e, limit, name, advice) == TFM_OK) return 1;
    cli_error(cmd, "%s", tfm_last_error());
    return 0;
}

int memory_fits_train(const char *cmd, const char *max_memory, const tfm_config *c, tfm_optimizer opt,
                      const tfm_batcher *train, const tfm_batcher *valid, size_t data_bytes,
                      const char *batch_flag) {
    tfm_memory_estimate e;
    if (tfm_memory_estimate_train(c, opt, cli_kernels(), train, valid, data_bytes, &e) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    char advice[128];
    snprintf(advice, sizeof advice, "lower %s (the largest batch), or use a smaller model", batch_flag);
    return fits(cmd, max_memory, &e, advice);
}

int memory_fits_decode(const char *cmd, const char *max_memory, const tfm_model *m, const tfm_tokenizer *tok,
                       const tfm_decode_config *dc, int batch, char *const *lines, size_t n) {
    size_t *len = malloc((n ? n : 1) * sizeof *len), text = 0;
    if (!len) {
        cli_error(cmd, "out of memory for %zu source lengths", n);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const size_t bytes = strlen(lines[i]);
        text += 2 * (bytes + 1) + 2 * sizeof(char *); /* the line, its translation (about as long) */
        len[i] = 0;
        if (tfm_text_is_blank(lines[i], bytes)) continue; /* not decoded (tfm_translate_text) */
        int32_t *ids = NULL;
        if (tfm_tokenizer_encode(tok, lines[i], bytes, &ids, &len[i]) != TFM_OK) {
            /* decoding encodes every line before it decodes any, and reports this one with its
             * file and line: let it */
            free(len);
            return 1;
        }
        free(ids);
    }
    tfm_memory_estimate e;
    const tfm_status st = tfm_memory_estimate_translate(tfm_model_config(m), dc, batch, len, n, text, &e);
    free(len);
    if (st != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    return fits(cmd, max_memory, &e, "lower --batch-size, --beam or --max-len-a/--max-len-b");
}
