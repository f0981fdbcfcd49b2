/* Which BLIS kernels the library's matrix products run (blas.c). Internal to src/ops. */
#ifndef TFM_OPS_BLAS_H
#define TFM_OPS_BLAS_H

#include <blis.h>

/** The BLIS context (kernels and block sizes) every product of src/ops passes to BLIS's expert
 * interface: NULL when BLIS's own choice for this CPU stands, else the library's own context for
 * kernels the CPU runs (docs/THREADS.md, "Which BLIS kernels"). Chosen once per process, on the
 * first call, thread-safely; read-only afterwards. Never changes BLIS's global state. */
cntx_t *ops_blis_cntx(void);

#endif
