/* Internal helpers shared by every layer: error propagation, assertions, small utilities. */
#ifndef TFM_CORE_INTERNAL_H
#define TFM_CORE_INTERNAL_H

#include "tfm/status.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__)
#define TFM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TFM_PRINTF(a, b)
#endif

/* Records a formatted message for tfm_last_error() and returns `status` (for `return tfm_set_error(...)`). */
tfm_status tfm_set_error(tfm_status status, const char *fmt, ...) TFM_PRINTF(2, 3);
void tfm_clear_error(void);
/* Puts a formatted prefix in front of the current message and returns `status`, e.g.
 * `return tfm_error_prefix(st, "%s:%zu: ", path, line);` turns "invalid UTF-8 at byte 3" into
 * "a.txt:7: invalid UTF-8 at byte 3". The result is cut to the message buffer (1 KiB). */
tfm_status tfm_error_prefix(tfm_status status, const char *fmt, ...) TFM_PRINTF(2, 3);

/* Return `status` with a message if `cond` holds. */
#define RETURN_IF(cond, status, ...)                                                               \
    do {                                                                                           \
        if (cond) return tfm_set_error((status), __VA_ARGS__);                                     \
    } while (0)

/* Propagate a failing status (its message is already set). */
#define TRY(expr)                                                                                  \
    do {                                                                                           \
        tfm_status tfm_try_st_ = (expr);                                                           \
        if (tfm_try_st_ != TFM_OK) return tfm_try_st_;                                             \
    } while (0)

/* Internal invariant: a violated one is a bug in transformer.c, reported with file:line. */
#define TFM_ASSERT(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) tfm_assert_fail(#cond, __FILE__, __LINE__);                                  \
    } while (0)
void tfm_assert_fail(const char *expr, const char *file, int line);

/* The library's one clock: CLOCK_MONOTONIC in nanoseconds (for differences only: timing reports,
 * time limits, timeouts, the thread pool's spin limits; no result depends on it). */
int_least64_t tfm_now_ns(void);
/* The same clock in seconds. */
static inline double tfm_now_s(void) { return 1e-9 * (double)tfm_now_ns(); }

/* The folder `path` names into dir[n]: `path` itself when it is a folder, the folder of the file
 * when it is a regular file ("." for a bare name, "/" for "/x"). Errors: TFM_ERR_IO naming `path`
 * as given when it does not exist (or is neither a folder nor a regular file);
 * TFM_ERR_INVALID_ARG when the folder does not fit in n bytes (dir is then cut). */
tfm_status tfm_path_folder(const char *path, char *dir, size_t n);

/* Overflow-checked size arithmetic: returns 0 and leaves *out untouched on overflow. */
static inline int size_mul_ok(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

#endif
