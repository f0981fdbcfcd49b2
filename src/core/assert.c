/* Internal invariant failures. A failed TFM_ASSERT is a bug in transformer.c, not bad input:
 * bad input is always reported through tfm_status. We print where it happened and trap so a
 * debugger or sanitizer shows the stack; this is the one deliberate stop inside the library. */
#include "core_internal.h"

#include <signal.h>

void tfm_assert_fail(const char *expr, const char *file, int line) {
    fprintf(stderr, "transformer.c internal error: assertion `%s` failed at %s:%d\n", expr, file, line);
    fflush(stderr);
    raise(SIGTRAP);
    __builtin_trap(); /* never continue past a broken invariant, even with SIGTRAP ignored */
}
