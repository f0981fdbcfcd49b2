/* Tokenizer models as files: whole-file read, atomic write (include/tfm/fileio.h). */
#include "core_internal.h"
#include "tfm/fileio.h"
#include "tfm/tokenizer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
    return st == TFM_OK ? TFM_OK : tfm_error_prefix(st, "%s: ", path);
}

tfm_status tfm_tokenizer_save_file(const tfm_tokenizer *tok, const char *path) {
    uint8_t *bytes = NULL;
    size_t len = 0;
    TRY(tfm_tokenizer_serialize(tok, &bytes, &len));
    tfm_status st = tfm_atomic_file_write(path, bytes, len);
    free(bytes);
    return st;
}
