#define _POSIX_C_SOURCE 200809L /* BLIS headers need pthread barriers */
/* BLIS's internal pools, filled up front for a team of threads, so that no training step
 * allocates (tests/unit/train/test_step_noalloc.c; docs/KERNELS.md, "Element-wise").
 *
 * Every BLIS product checks out, for its whole duration, one array of small-block pools (the "sba":
 * its thread-info and control-tree nodes) and one packing buffer for A and one for B (the "pba"),
 * and grows a pool with malloc when it finds it empty. So the pools grow, once, on the first step in
 * which k products of the team happen to overlap — a step in the middle of a run on a machine whose
 * cores were busy during the first steps (seen: 23-43 allocator calls in a step after warm-up).
 * ops_blas_reserve makes that growth happen now, on one thread: for k = 0 .. threads − 1 it holds k
 * of each resource checked out and runs one real product, which must then take (and fill, with the
 * kernels' own block sizes) the (k + 1)-th. */
#include "blas.h"
#include "gemm_small.h"
#include "ops.h"
#include "parallel.h"

#include <stddef.h>

#define RESERVE_MAX 64 /* threads reserved for at most (more: pools grow lazily, as before) */

void ops_blas_reserve(int threads) {
    static int reserved = 1; /* a team of 1 needs nothing up front: the first product fills it */
    if (threads > RESERVE_MAX) threads = RESERVE_MAX;
#pragma omp critical(tfm_blas_reserve)
    if (threads > reserved) {
        array_t *held_arrays[RESERVE_MAX];
        mem_t held_a[RESERVE_MAX], held_b[RESERVE_MAX];
        rntm_t rntm = BLIS_RNTM_INITIALIZER;
        bli_rntm_set_num_threads(1, &rntm);
        bli_pba_rntm_set_pba(&rntm);
        pba_t *pba = bli_pba_query();
        static float a[64 * 64], b[64 * 64], c[64 * 64]; /* 48 KiB, off the caller's stack */
        for (size_t i = 0; i < 64 * 64; i++) a[i] = b[i] = 1.0f / 64.0f;
        for (int k = 0; k < threads; k++) {
            /* the (k + 1)-th of each, taken and used by a real product, with k held elsewhere */
            ops_gemm_blis(0, 0, 64, 64, 64, 1.0f, a, 64, b, 64, 0.0f, c, 64); /* not the small kernel */
            if (k + 1 == threads) break;
            held_arrays[k] = bli_sba_checkout_array(1);
            const siz_t size_a = bli_pool_block_size(bli_pba_pool(bli_packbuf_index(BLIS_BUFFER_FOR_A_BLOCK), pba));
            const siz_t size_b = bli_pool_block_size(bli_pba_pool(bli_packbuf_index(BLIS_BUFFER_FOR_B_PANEL), pba));
            bli_pba_acquire_m(&rntm, size_a, BLIS_BUFFER_FOR_A_BLOCK, &held_a[k]);
            bli_pba_acquire_m(&rntm, size_b, BLIS_BUFFER_FOR_B_PANEL, &held_b[k]);
        }
        for (int k = 0; k + 1 < threads; k++) {
            bli_pba_release(&rntm, &held_a[k]);
            bli_pba_release(&rntm, &held_b[k]);
            bli_sba_checkin_array(held_arrays[k]);
        }
        reserved = threads;
    }
}
