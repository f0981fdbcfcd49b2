/* Tokenizer models as files: whole-file read, atomic write (temporary file + rename). */
#define _POSIX_C_SOURCE 200809L

#include "core_internal.h"
#include "tfm/tokenizer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Models are a few hundred KB to a few MB; anything past this is not one. */
#define TOK_MODEL_MAX_BYTES ((size_t)1 << 30)

tfm_status tfm_tokenizer_load_file(const char *path, tfm_tokenizer **out) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    RETURN_IF(!f, TFM_ERR_IO, "%s: cannot open tokenizer model: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return tfm_set_error(TFM_ERR_NOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (len == cap) {
            uint8_t *nb = cap < TOK_MODEL_MAX_BYTES ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                fclose(f);
                return tfm_set_error(cap < TOK_MODEL_MAX_BYTES ? TFM_ERR_NOMEM : TFM_ERR_FORMAT,
                                     "%s: %s", path,
                                     cap < TOK_MODEL_MAX_BYTES ? "out of memory"
                                                               : "over 1 GiB, not a tokenizer model");
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        free(buf);
        return tfm_set_error(TFM_ERR_IO, "%s: read error", path);
    }
    tfm_status st = tfm_tokenizer_load_bytes(buf, len, out);
    free(buf);
    if (st != TFM_OK) {
        char msg[768];
        snprintf(msg, sizeof msg, "%s", tfm_last_error());
        return tfm_set_error(st, "%s: %s", path, msg);
    }
    return TFM_OK;
}

tfm_status tfm_tokenizer_save_file(const tfm_tokenizer *tok, const char *path) {
    uint8_t *bytes = NULL;
    size_t len = 0;
    TRY(tfm_tokenizer_serialize(tok, &bytes, &len));
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp) {
        free(bytes);
        return tfm_set_error(TFM_ERR_INVALID_ARG, "%s: path too long", path);
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int e = errno;
        free(bytes);
        return tfm_set_error(TFM_ERR_IO, "%s: cannot create %s: %s", path, tmp, strerror(e));
    }
    int ok = fwrite(bytes, 1, len, f) == len;
    ok = fflush(f) == 0 && ok;
    ok = fsync(fileno(f)) == 0 && ok;
    int e = errno;
    ok = fclose(f) == 0 && ok;
    free(bytes);
    if (!ok) {
        remove(tmp);
        return tfm_set_error(TFM_ERR_IO, "%s: write failed: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        remove(tmp);
        return tfm_set_error(TFM_ERR_IO, "%s: cannot rename %s into place: %s", path, tmp, strerror(e));
    }
    return TFM_OK;
}
