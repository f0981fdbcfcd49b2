#define _POSIX_C_SOURCE 200809L
#include "text_io.h"

#include "args.h"

#include <stdlib.h>
#include <string.h>

int read_lines(const char *cmd, const char *path, char ***lines, size_t *n) {
    const int use_stdin = path == NULL || strcmp(path, "-") == 0;
    *lines = NULL;
    *n = 0;
    tfm_line_reader *r = NULL;
    tfm_status st = use_stdin ? tfm_line_reader_from_stream(stdin, "<stdin>", 0, &r) : tfm_line_reader_open(path, 0, &r);
    size_t cap = 0;
    const char *line = NULL;
    size_t len = 0;
    int oom = 0;
    while (st == TFM_OK && (st = tfm_line_reader_next(r, &line, &len)) == TFM_OK && line) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            char **p = realloc(*lines, cap * sizeof *p);
            if (!p) {
                oom = 1;
                break;
            }
            *lines = p;
        }
        char *copy = malloc(len + 1);
        if (!copy) {
            oom = 1;
            break;
        }
        memcpy(copy, line, len + 1);
        (*lines)[(*n)++] = copy;
    }
    tfm_line_reader_free(r);
    if (st != TFM_OK || oom) {
        if (st != TFM_OK) cli_error(cmd, "%s", tfm_last_error());
        else cli_error(cmd, "out of memory reading %s (line %zu)", use_stdin ? "<stdin>" : path, *n + 1);
        free_lines(*lines, *n);
        *lines = NULL;
        *n = 0;
        return 0;
    }
    return 1;
}

void free_lines(char **lines, size_t n) {
    for (size_t i = 0; lines && i < n; i++) free(lines[i]);
    free(lines);
}

int model_arch_ok(const char *cmd, const char *path, const tfm_config *c, int want) {
    const int have = (int)c->arch;
    if (have == want || (want == MODEL_DECODES && have != TFM_ARCH_ENCODER_ONLY)) return 1;
    const char *need = want == TFM_ARCH_DECODER_ONLY     ? "a decoder-only model"
                       : want == TFM_ARCH_ENCODER_DECODER ? "an encoder-decoder model"
                       : want == TFM_ARCH_ENCODER_ONLY    ? "an encoder-only model"
                                                          : "an encoder-decoder or decoder-only model";
    const char *use = have == TFM_ARCH_ENCODER_ONLY   ? "use tfm embed or tfm similarity for this one"
                      : have == TFM_ARCH_DECODER_ONLY ? "use tfm generate or tfm perplexity for this one"
                                                      : "use tfm translate or tfm eval for this one";
    cli_error(cmd, "%s is %s model%s: tfm %s needs %s; %s", path,
              have == TFM_ARCH_ENCODER_ONLY ? "an encoder-only" : have == TFM_ARCH_DECODER_ONLY ? "a decoder-only"
                                                                                                  : "an encoder-decoder",
              have == TFM_ARCH_ENCODER_ONLY ? " (BERT)" : "", cmd, need, use);
    return 0;
}

int model_tokenizer(const char *cmd, const char *path, const tfm_model *m, tfm_tokenizer **tok) {
    *tok = NULL;
    size_t len;
    const unsigned char *bytes = tfm_model_tokenizer(m, &len);
    if (!bytes) {
        cli_error(cmd, "%s has no tokenizer: models trained with `tfm train --data` store theirs; "
                       "this one can only score token ids (tfm score)", path);
        return 0;
    }
    if (tfm_tokenizer_load_bytes(bytes, len, tok) != TFM_OK) {
        cli_error(cmd, "%s: its tokenizer (a checkpoint's tokenizer.model tensor, a Hugging Face folder's tokenizer "
                       "files) is not valid: %s", path, tfm_last_error());
        return 0;
    }
    if (tfm_tokenizer_check_model(*tok, tfm_model_config(m)) != TFM_OK) {
        cli_error(cmd, "%s: %s", path, tfm_last_error());
        tfm_tokenizer_free(*tok);
        *tok = NULL;
        return 0;
    }
    return 1;
}

int load_model_and_tokenizer(const char *cmd, const char *path, int want, tfm_model **m, tfm_tokenizer **tok) {
    *tok = NULL;
    if (tfm_model_load(path, m) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    if (!model_arch_ok(cmd, path, tfm_model_config(*m), want) || !model_tokenizer(cmd, path, *m, tok)) {
        tfm_model_free(*m);
        *m = NULL;
        return 0;
    }
    return 1;
}
