/* The folder a path names (core_internal.h): the library's one copy, for the Hugging Face model
 * folders (src/model/io/hf_json.c) and the tokenizer folder (src/text/bpe_folder.c). */
#include "core_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int tfm_path_folder(const char *path, char *dir, size_t n) {
    struct stat sb;
    int len;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        len = snprintf(dir, n, "%s", path);
    } else {
        const char *slash = strrchr(path, '/');
        len = !slash ? snprintf(dir, n, ".") : slash == path ? snprintf(dir, n, "/")
                                                              : snprintf(dir, n, "%.*s", (int)(slash - path), path);
    }
    return len >= 0 && (size_t)len < n;
}
