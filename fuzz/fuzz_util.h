/* Helpers shared by the libFuzzer targets in fuzz/ (docs/FUZZING.md).
 *
 * The readers under test take file paths, as the tool gives them, so each input is put in an
 * anonymous in-memory file (memfd_create) and handed over as /proc/self/fd/N: no disk, no name
 * left behind, and the reader runs exactly as it does on a real file. Targets that need two files
 * (a parallel corpus, a hypothesis and a reference) cut the input at its first NUL byte: the text
 * readers refuse NUL bytes anyway, so no file they would accept is lost by the cut. */
#ifndef TFM_FUZZ_UTIL_H
#define TFM_FUZZ_UTIL_H

#define _GNU_SOURCE /* memfd_create */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/** The one entry point of every target: libFuzzer's, also called by fuzz/replay_main.c. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** An input held in an in-memory file. */
typedef struct {
    int fd;
    char path[64]; /* "/proc/self/fd/N" */
} fuzz_file;

/** Puts size bytes into a fresh in-memory file. Returns 0 (and f->fd = -1) if that failed, which
 * a target treats as "nothing to test" rather than a finding. */
static inline int fuzz_file_open(fuzz_file *f, const void *data, size_t size) {
    f->fd = memfd_create("tfm-fuzz", 0);
    if (f->fd < 0) return 0;
    const char *p = data;
    size_t left = size;
    while (left > 0) {
        ssize_t w = write(f->fd, p, left);
        if (w <= 0) {
            close(f->fd);
            f->fd = -1;
            return 0;
        }
        p += w;
        left -= (size_t)w;
    }
    snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    return 1;
}

static inline void fuzz_file_close(fuzz_file *f) {
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
}

/** Cuts data at its first NUL byte: [0, *first) and [*second_at, size). Without a NUL the whole
 * input is the first part and the second is empty. */
static inline void fuzz_split(const uint8_t *data, size_t size, size_t *first, size_t *second_at) {
    const uint8_t *nul = size ? memchr(data, 0, size) : NULL;
    *first = nul ? (size_t)(nul - data) : size;
    *second_at = nul ? *first + 1 : size;
}

#endif
