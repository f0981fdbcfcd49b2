/* Minimal test harness: CHECK records a named failure and keeps going; test_finish() prints
 * "N passed, N failed" and returns the process exit code (non-zero if anything failed). */
#ifndef TFM_TEST_UTIL_H
#define TFM_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The exit code of a test that cannot run here (ctest SKIP_RETURN_CODE): print "SKIP: reason" first. */
#define TEST_SKIP 77
#include <unistd.h> /* rmdir; mkdtemp comes from <stdlib.h> (tests build with _POSIX_C_SOURCE) */

#include "hash.h" /* src/core: the project's one generator */
#include "kernels.h" /* src/ops: the kernel table */

/* The kernel table the tests' direct kernel calls pass (KERN): the tuned one for this CPU unless a
 * test chooses another with test_kernels_use (a table of its own: tests of the reference path and
 * of each instruction set). Contexts carry their own (tfm_context_create_opts). */
static const ops_kernels *test_kernels_current_;
static inline void test_kernels_use(const ops_kernels *k) { test_kernels_current_ = k; }
static inline const ops_kernels *test_kernels(void) {
    return test_kernels_current_ ? test_kernels_current_ : ops_kernels_tuned();
}
#define KERN (test_kernels())

/** The tuned table with its instruction set capped at `isa` (what the CPU runs, at most), for tests
 * of each kernel variant; gemm_blis = 1 sends every product to BLIS. */
static inline ops_kernels test_kernels_with(ops_isa isa, int gemm_blis) {
    ops_kernels k = *ops_kernels_tuned();
    if (isa < k.isa) k.isa = isa;
    if (gemm_blis) k.gemm = OPS_GEMM_BLIS;
    return k;
}

/** Test data: the next uniform float in [-1, 1) (24 random bits, exactly representable) of the
 * sequential splitmix64 stream whose state is *state (src/core/hash.h hash_next). The one random
 * source of the unit tests: any seed works, including 0. */
static inline float test_frand(uint64_t *state) {
    return (float)(hash_next(state) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

/** x[0..n) = the first n test_frand values of the stream seeded `seed` (x[i] depends only on
 * (seed, i): hash_stream(seed, i + 1)). */
static inline void test_fill_uniform(float *x, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; i++) x[i] = test_frand(&seed);
}

static int test_passed_ = 0, test_failed_ = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            test_passed_++;                                                                        \
        } else {                                                                                   \
            test_failed_++;                                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol, name)                                                                \
    do {                                                                                           \
        double ca_ = (double)(a), cb_ = (double)(b);                                               \
        CHECK(fabs(ca_ - cb_) <= (tol) && !isnan(ca_) && !isnan(cb_),                             \
              "%s: got %.9g, want %.9g (tol %g)", name, ca_, cb_, (double)(tol));                  \
    } while (0)

/* Largest |a[i] − b[i]| over n floats, a NaN on either side counting as infinitely wrong. */
static inline double test_max_abs_err(const float *a, const float *b, size_t n) {
    double e = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= e)) e = d;
    }
    return e;
}

/* Path of a file under the source tree (tests run with TFM_SOURCE_DIR set by ctest). */
static inline const char *test_path(const char *rel) {
    static char buf[4][4096];
    static int slot = 0;
    const char *root = getenv("TFM_SOURCE_DIR");
    char *b = buf[slot++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", root ? root : ".", rel);
    return b;
}

/* Makes a fresh private folder for a test's files and writes its path into buf[size]: mkdtemp of
 * "$TMPDIR/tfm-<tag>.XXXXXX" (ctest gives every test its own TMPDIR inside the build tree; /tmp
 * when unset), so no two runs share a file name. Returns buf, or NULL after printing why. Remove
 * what you wrote in it, then the folder (rmdir). */
static inline char *test_make_tmpdir(char *buf, size_t size, const char *tag) {
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    int n = snprintf(buf, size, "%s/tfm-%s.XXXXXX", base, tag);
    if (n < 0 || (size_t)n >= size) {
        fprintf(stderr, "test_make_tmpdir: path too long under %s\n", base);
        return NULL;
    }
    if (!mkdtemp(buf)) {
        fprintf(stderr, "test_make_tmpdir: mkdtemp %s: ", buf);
        perror(NULL);
        return NULL;
    }
    return buf;
}

/* Copies the file `from` to `to`; 1 on success. */
static inline int test_copy_file(const char *from, const char *to) {
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    int ok = a && b;
    char buf[8192];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0) ok = fwrite(buf, 1, n, b) == n;
    if (a) fclose(a);
    if (b && fclose(b) != 0) ok = 0;
    return ok;
}

/* Replaces the first occurrence of `from` by `to` in the file `path` (at most 1 MiB), in place; 1
 * if `from` was there and the file was rewritten. */
static inline int test_edit_file(const char *path, const char *from, const char *to) {
    FILE *f = fopen(path, "rb");
    char *buf = f ? malloc(1 << 20) : NULL;
    const size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    if (f) fclose(f);
    if (!buf) return 0;
    buf[n] = '\0';
    char *at = strstr(buf, from);
    int ok = at && (f = fopen(path, "wb")) != NULL;
    if (ok) {
        ok = fwrite(buf, 1, (size_t)(at - buf), f) == (size_t)(at - buf) && fputs(to, f) >= 0 &&
             fputs(at + strlen(from), f) >= 0;
        ok = fclose(f) == 0 && ok;
    }
    free(buf);
    return ok;
}

static inline int test_finish(const char *suite) {
    printf("%s: %d passed, %d failed\n", suite, test_passed_, test_failed_);
    return test_failed_ == 0 ? 0 : 1;
}

#endif
