/* The folder a path names (core_internal.h): the library's one copy, for the Hugging Face model
 * folders (src/model/io/hf_json.c) and the tokenizer folder (src/text/bpe_folder.c). */
#include "core_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

tfm_status tfm_path_folder(const char *path, char *dir, size_t n) {
    struct stat sb;
    /* a path that does not exist is an error, not a file whose folder is used: a mistyped folder
     * must not load the files of its parent */
    RETURN_IF(stat(path, &sb) != 0, TFM_ERR_IO, "%s: %s", path, strerror(errno));
    RETURN_IF(!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode), TFM_ERR_IO, "%s: neither a folder nor a regular file",
              path);
    int len;
    if (S_ISDIR(sb.st_mode)) {
        len = snprintf(dir, n, "%s", path);
    } else {
        const char *slash = strrchr(path, '/');
        len = !slash ? snprintf(dir, n, ".") : slash == path ? snprintf(dir, n, "/")
                                                              : snprintf(dir, n, "%.*s", (int)(slash - path), path);
    }
    RETURN_IF(len < 0 || (size_t)len >= n, TFM_ERR_INVALID_ARG, "path too long: %.80s...", path);
    return TFM_OK;
}
