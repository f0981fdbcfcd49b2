#define _POSIX_C_SOURCE 200809L /* getline */
#include "text_io.h"

#include "args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int read_lines(const char *cmd, const char *path, char ***lines, size_t *n) {
    const int use_stdin = path == NULL || strcmp(path, "-") == 0;
    const char *name = use_stdin ? "<stdin>" : path;
    FILE *f = use_stdin ? stdin : fopen(path, "rb");
    *lines = NULL;
    *n = 0;
    if (!f) {
        cli_error(cmd, "cannot open %s: %s", path, strerror(errno));
        return 0;
    }
    size_t cap = 0;
    char *buf = NULL;
    size_t bufcap = 0;
    ssize_t len;
    int ok = 1;
    while ((len = getline(&buf, &bufcap, f)) >= 0) {
        if (memchr(buf, '\0', (size_t)len)) {
            cli_error(cmd, "%s:%zu: NUL byte (is this a text file?)", name, *n + 1);
            ok = 0;
            break;
        }
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            char **p = realloc(*lines, cap * sizeof *p);
            if (!p) {
                ok = 0;
                break;
            }
            *lines = p;
        }
        (*lines)[*n] = malloc((size_t)len + 1);
        if (!(*lines)[*n]) {
            ok = 0;
            break;
        }
        memcpy((*lines)[*n], buf, (size_t)len + 1);
        (*n)++;
    }
    if (ok && ferror(f)) {
        cli_error(cmd, "error reading %s: %s", name, strerror(errno));
        ok = 0;
    }
    free(buf);
    if (!use_stdin) fclose(f);
    if (!ok) {
        free_lines(*lines, *n);
        *lines = NULL;
        *n = 0;
    }
    return ok;
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
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) return 1;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof dir) n = sizeof dir - 1;
    memcpy(dir, path, n);
    dir[n] = '\0';
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        cli_error(cmd, "cannot save to %s: %s is not an existing folder", path, dir);
        return 0;
    }
    return 1;
}

int write_lines(const char *cmd, const char *path, char *const *lines, size_t n) {
    const int use_stdout = path == NULL || strcmp(path, "-") == 0;
    char *tmp = NULL;
    FILE *f = stdout;
    if (!use_stdout) {
        tmp = malloc(strlen(path) + 8);
        if (!tmp) return 0;
        sprintf(tmp, "%s.tmp", path);
        f = fopen(tmp, "wb");
        if (!f) {
            cli_error(cmd, "cannot create %s: %s", tmp, strerror(errno));
            free(tmp);
            return 0;
        }
    }
    int ok = 1;
    for (size_t i = 0; ok && i < n; i++) ok = fputs(lines[i], f) >= 0 && fputc('\n', f) != EOF;
    ok = fflush(f) == 0 && ok;
    if (!use_stdout) {
        ok = fclose(f) == 0 && ok;
        if (ok && rename(tmp, path) != 0) ok = 0;
        if (!ok) remove(tmp);
    }
    if (!ok) cli_error(cmd, "cannot write %s: %s", use_stdout ? "<stdout>" : path, strerror(errno));
    free(tmp);
    return ok;
}
