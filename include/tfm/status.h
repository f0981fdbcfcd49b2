/* transformer.c — status codes and error messages.
 *
 * Every public function that can fail returns a tfm_status. On failure the library also records
 * a human-readable message (naming the file, line, tensor or byte offset that was wrong), which
 * tfm_last_error() returns. The message is thread-local and stays valid until the next failing
 * call on the same thread. The library never calls exit(). */
#ifndef TFM_STATUS_H
#define TFM_STATUS_H

#include "tfm/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TFM_OK = 0,
    TFM_ERR_IO = 1,          /* a file could not be opened, read or written */
    TFM_ERR_FORMAT = 2,      /* a file's contents are malformed (checkpoint, id file, text) */
    TFM_ERR_INVALID_ARG = 3, /* an argument or configuration value makes no sense */
    TFM_ERR_RANGE = 4,       /* a value is outside its allowed range (token id, length) */
    TFM_ERR_NOMEM = 5,       /* an allocation failed */
    TFM_ERR_UNSUPPORTED = 6, /* a valid request this build does not handle */
    TFM_ERR_NUMERIC = 7,     /* a NaN or infinity appeared where a finite value is required */
    TFM_ERR_INTERRUPTED = 8  /* the operation was stopped by a signal */
} tfm_status;

/** The message recorded by the last failing call on this thread ("" if none). Never NULL. */
TFM_API const char *tfm_last_error(void);

/** A short constant name for a status ("ok", "io error", "format error", ...). Never NULL. */
TFM_API const char *tfm_status_name(tfm_status status);

#ifdef __cplusplus
}
#endif
#endif
