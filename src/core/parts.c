/* Named parts in one blob (parts.h). */
#include "parts.h"

#include <stdlib.h>
#include <string.h>

tfm_status parts_pack(const char *magic, const blob_part *parts, size_t n, unsigned char **out, size_t *len) {
    *out = NULL;
    *len = 0;
    size_t total = strlen(magic) + 1;
    for (size_t i = 0; i < n; i++) {
        RETURN_IF(!parts[i].name[0] || strpbrk(parts[i].name, " \n"), TFM_ERR_INVALID_ARG,
                  "part name '%s' is empty or has a space or newline", parts[i].name);
        total += strlen(parts[i].name) + 24 + parts[i].len + 1;
    }
    unsigned char *b = malloc(total);
    RETURN_IF(!b, TFM_ERR_NOMEM, "out of memory packing %zu bytes", total);
    size_t k = (size_t)snprintf((char *)b, total, "%s\n", magic);
    for (size_t i = 0; i < n; i++) {
        k += (size_t)snprintf((char *)b + k, total - k, "%s %zu\n", parts[i].name, parts[i].len);
        if (parts[i].len) memcpy(b + k, parts[i].data, parts[i].len);
        k += parts[i].len;
        b[k++] = '\n';
    }
    *out = b;
    *len = k;
    return TFM_OK;
}

int parts_is(const void *blob, size_t len, const char *magic) {
    const size_t m = strlen(magic);
    return blob && len > m && memcmp(blob, magic, m) == 0 && ((const char *)blob)[m] == '\n';
}

tfm_status parts_find(const void *blob, size_t len, const char *magic, const char *name, const unsigned char **data,
                      size_t *n) {
    *data = NULL;
    *n = 0;
    RETURN_IF(!parts_is(blob, len, magic), TFM_ERR_FORMAT, "not a '%s' blob", magic);
    const unsigned char *b = blob;
    size_t k = strlen(magic) + 1;
    int found = 0;
    while (k < len) {
        const unsigned char *nl = memchr(b + k, '\n', len - k);
        const unsigned char *sp = nl ? memchr(b + k, ' ', (size_t)(nl - (b + k))) : NULL;
        RETURN_IF(!nl || !sp || sp == b + k, TFM_ERR_FORMAT, "'%s' blob: bad part header at byte %zu", magic, k);
        size_t plen = 0;
        const unsigned char *d = sp + 1;
        RETURN_IF(d == nl, TFM_ERR_FORMAT, "'%s' blob: no length at byte %zu", magic, k);
        for (; d < nl; d++) {
            RETURN_IF(*d < '0' || *d > '9' || plen > (SIZE_MAX - 9) / 10, TFM_ERR_FORMAT,
                      "'%s' blob: bad length at byte %zu", magic, (size_t)(d - b));
            plen = plen * 10 + (size_t)(*d - '0');
        }
        const size_t start = (size_t)(nl - b) + 1;
        RETURN_IF(plen > len - start || len - start - plen < 1 || b[start + plen] != '\n', TFM_ERR_FORMAT,
                  "'%s' blob: part at byte %zu runs past the end", magic, k);
        const size_t nlen = (size_t)(sp - (b + k));
        if (!found && strlen(name) == nlen && memcmp(b + k, name, nlen) == 0) {
            *data = b + start;
            *n = plen;
            found = 1;
        }
        k = start + plen + 1;
    }
    RETURN_IF(!found, TFM_ERR_FORMAT, "'%s' blob: no part '%s'", magic, name);
    return TFM_OK;
}
