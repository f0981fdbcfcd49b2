/* Thread-local error message storage behind tfm_last_error(). */
#include "core_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char g_last_error[1024];

const char *tfm_last_error(void) { return g_last_error; }

const char *tfm_status_name(tfm_status status) {
    switch (status) {
    case TFM_OK: return "ok";
    case TFM_ERR_IO: return "io error";
    case TFM_ERR_FORMAT: return "format error";
    case TFM_ERR_INVALID_ARG: return "invalid argument";
    case TFM_ERR_RANGE: return "out of range";
    case TFM_ERR_NOMEM: return "out of memory";
    case TFM_ERR_UNSUPPORTED: return "unsupported";
    case TFM_ERR_NUMERIC: return "numeric error";
    case TFM_ERR_INTERRUPTED: return "interrupted";
    }
    return "unknown status";
}

tfm_status tfm_set_error(tfm_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_last_error, sizeof g_last_error, fmt, ap);
    va_end(ap);
    return status;
}

tfm_status tfm_error_prefix(tfm_status status, const char *fmt, ...) {
    /* both parts are formatted apart first: an argument may be tfm_last_error() itself */
    char old[sizeof g_last_error], prefix[sizeof g_last_error];
    memcpy(old, g_last_error, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    snprintf(g_last_error, sizeof g_last_error, "%s%s", prefix, old);
    return status;
}

void tfm_clear_error(void) { g_last_error[0] = '\0'; }
