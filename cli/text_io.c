#define _POSIX_C_SOURCE 200809L
#include "text_io.h"

#include "args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int load_model_and_tokenizer(const char *cmd, const char *path, tfm_model **m, tfm_tokenizer **tok) {
    *tok = NULL;
    if (tfm_model_load(path, m) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    size_t len;
    const unsigned char *bytes = tfm_model_tokenizer(*m, &len);
    if (!bytes) {
        cli_error(cmd, "%s has no tokenizer: models trained with `tfm train --data` store theirs; "
                       "this one can only score token ids (tfm score)", path);
        tfm_model_free(*m);
        *m = NULL;
        return 0;
    }
    if (tfm_tokenizer_load_bytes(bytes, len, tok) != TFM_OK) {
        cli_error(cmd, "%s: its tokenizer.model tensor is not a valid tokenizer: %s", path, tfm_last_error());
        tfm_model_free(*m);
        *m = NULL;
        return 0;
    }
    if (tfm_tokenizer_check_model(*tok, tfm_model_config(*m)) != TFM_OK) {
        cli_error(cmd, "%s: %s", path, tfm_last_error());
        tfm_tokenizer_free(*tok);
        *tok = NULL;
        tfm_model_free(*m);
        *m = NULL;
        return 0;
    }
    return 1;
}

int output_dir_ok(const char *cmd, const char *path) {
    if (path == NULL || strcmp(path, "-") == 0) return 1;
    tfm_atomic_file *af = NULL;
    /* the open names a missing folder as tfm_atomic_file_check_folder does, and also fails on a
     * folder that cannot take a new file */
    if (tfm_atomic_file_open(path, &af) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    tfm_atomic_file_abort(af); /* the folder takes a new file; remove the probe */
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        cli_error(cmd, "cannot save to %s: it is a folder", path);
        return 0;
    }
    return 1;
}

int write_lines(const char *cmd, const char *path, char *const *lines, size_t n) {
    if (path == NULL || strcmp(path, "-") == 0) {
        int ok = 1;
        for (size_t i = 0; ok && i < n; i++) ok = fputs(lines[i], stdout) >= 0 && fputc('\n', stdout) != EOF;
        if (!(fflush(stdout) == 0 && ok)) {
            cli_error(cmd, "cannot write <stdout>: %s", strerror(errno));
            return 0;
        }
        return 1;
    }
    tfm_atomic_file *af = NULL;
    if (tfm_atomic_file_open(path, &af) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    FILE *f = tfm_atomic_file_stream(af);
    for (size_t i = 0; i < n; i++) {
        if (fputs(lines[i], f) < 0 || fputc('\n', f) == EOF) {
            cli_error(cmd, "cannot write %s: %s", path, strerror(errno));
            tfm_atomic_file_abort(af);
            return 0;
        }
    }
    if (tfm_atomic_file_commit(af) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    return 1;
}
