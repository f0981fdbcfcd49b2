/* The seed corpora and regression inputs as ordinary tests (docs/FUZZING.md): a main() that feeds
 * every file of the folders (or files) named on the command line, in name order, to the target's
 * LLVMFuzzerTestOneInput, as libFuzzer would, without libFuzzer. A crash, a sanitizer report (in
 * the sanitizer build) or a __builtin_trap of the target's own checks fails the test; a folder
 * with no files fails it too, so a corpus that went missing is not a silent pass. */
#define _DEFAULT_SOURCE /* DT_DIR */
#include "fuzz_util.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 0;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            uint8_t *b = realloc(buf, cap);
            if (!b) abort();
            buf = b;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 1;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Runs every regular file of a folder, sorted; returns how many. */
static size_t run_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
            if (!names) abort();
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n]) abort();
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    size_t ran = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) ran += (size_t)run_file(names[i]);
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FOLDER|FILE...\n", argv[0]);
        return 2;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            rc = 1;
        } else if (S_ISDIR(st.st_mode)) {
            size_t k = run_dir(argv[i]);
            printf("replay: %zu inputs from %s\n", k, argv[i]);
            if (k == 0) {
                fprintf(stderr, "replay: %s holds no input\n", argv[i]);
                rc = 1;
            }
        } else if (!run_file(argv[i])) {
            rc = 1;
        } else {
            printf("replay: 1 input, %s\n", argv[i]);
        }
    }
    return rc;
}
