/* transformer.c — data-parallel training across processes with MPI (docs/MPI.md).
 *
 * `mpirun -np N tfm train ...` starts N copies of the same command (ranks). Each rank holds the
 * whole model; every global batch the batcher makes (the same on every rank: same seed, same data)
 * is split into N contiguous row shares, rank r taking rows [⌊rB/N⌋, ⌊(r+1)B/N⌋); each rank runs
 * forward and backward on its share, the gradients are summed across ranks (MPI_Iallreduce in
 * place, in buckets), and every rank applies the same optimizer update to the same summed gradient,
 * so the weights stay identical everywhere (checked at every checkpoint). The loss is normalised by
 * the GLOBAL number of non-pad targets, so N ranks compute the gradient of 1 process on the same
 * global batch (up to the order of float additions). Rank 0 alone validates, reports progress and
 * writes checkpoints. This is the data parallelism of Li et al. 2020 ("PyTorch Distributed",
 * VLDB) and Sergeev & Del Balso 2018 (Horovod), with the ring allreduce of Patarasuk & Yuan 2009.
 *
 * A build without MPI (no libopenmpi-dev when CMake ran) keeps the same calls with one rank.
 *
 *     tfm_dist *d;
 *     tfm_dist_init(600.0, &d);                // MPI_Init when started by mpirun
 *     tfm_trainer_create(model, &cfg, 1, 1, 2, &tr);
 *     tfm_trainer_set_dist(tr, d);             // steps now take the global batch and share it
 *     st = tfm_train_loop(tr, train, valid, &lc, &res);   // rank 0 validates, saves, reports
 *     exit(tfm_dist_finish(d, st == TFM_OK ? 0 : 1));      // MPI_Finalize, or MPI_Abort */
#ifndef TFM_DIST_H
#define TFM_DIST_H

#include "tfm/export.h"

#include "tfm/train.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfm_dist tfm_dist;

/** 1 when this build has MPI (CMake found an MPI library), 0 otherwise. */
TFM_API int tfm_dist_compiled(void);

/** Writes the MPI library's one-line description (e.g. "Open MPI v4.1.4, ...") into buf, or
 * "none (built without MPI)", and returns buf. Callable before tfm_dist_init. */
TFM_API const char *tfm_dist_library(char *buf, size_t size);

/** Joins the job. Started by an MPI launcher (the environment holds OMPI_COMM_WORLD_SIZE,
 * PMIX_RANK or PMI_SIZE) in an MPI build: MPI_Init_thread (MPI_THREAD_FUNNELED: only the calling
 * thread talks to MPI; OpenMP threads never do), the ranks are MPI_COMM_WORLD's. Otherwise a job of
 * one rank without MPI. timeout_s (> 0, seconds) bounds every wait for the other ranks: a
 * collective that does not complete in time fails with TFM_ERR_IO naming the operation, the step
 * and the rank (a rank that died, hangs, or runs another command), instead of hanging.
 * Errors: TFM_ERR_INVALID_ARG (timeout), TFM_ERR_UNSUPPORTED (started by a launcher as one of N > 1
 * ranks but built without MPI: every copy would train alone and overwrite the others' files),
 * TFM_ERR_IO (MPI_Init failed), TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_dist_init(double timeout_s, tfm_dist **out);

/** Changes the longest wait for the other ranks (seconds, > 0; other values are ignored), e.g.
 * longer while rank 0 alone does a long task the others wait for. NULL is fine. */
TFM_API void tfm_dist_set_timeout(tfm_dist *d, double timeout_s);

/** The longest wait for the other ranks, seconds (0 for NULL). */
TFM_API double tfm_dist_timeout(const tfm_dist *d);

/** This process's rank in [0, size): 0 for NULL. */
TFM_API int tfm_dist_rank(const tfm_dist *d);
/** The number of ranks N: 1 for NULL. */
TFM_API int tfm_dist_size(const tfm_dist *d);

/** Makes every step of `t` a data-parallel step over the ranks of `d` (NULL: back to one
 * process): tfm_trainer_step then takes the GLOBAL batch (B, S, T) — the same on every rank — and
 * trains on this rank's share of rows; tfm_trainer_reserve sizes memory for a share only
 * (⌈B/N⌉ rows). Dropout masks of rank r > 0 use the step's seed mixed with r (rank 0 keeps the
 * one-process seed), so N ranks with dropout draw other masks than 1 process; without dropout
 * they compute the same step up to rounding. Call before the first step. Errors:
 * TFM_ERR_INVALID_ARG (t NULL), TFM_ERR_NOMEM (the buckets' request table). */
TFM_API tfm_status tfm_trainer_set_dist(tfm_trainer *t, tfm_dist *d);

/** Sends `bytes` bytes at buf from rank 0 to every rank (in pieces under 2 GiB), e.g. a tokenizer
 * that rank 0 alone trained; a no-op with one rank. Errors: TFM_ERR_IO (timeout, MPI failure). */
TFM_API tfm_status tfm_dist_bcast(tfm_dist *d, void *buf, size_t bytes);

/** Ends the job's use of MPI and frees d; returns the exit code the process should use.
 * With one rank (or NULL): returns exit_code. With N ranks: a run that succeeded everywhere, that
 * every rank stopped at the same step (exit_code 128 + signal, see tfm_loop_config.stop), or whose
 * error every rank saw at once (different data or settings, a diverging step) waits for all ranks
 * (within the timeout), calls MPI_Finalize and returns exit_code; any other failure — seen by this
 * rank alone, e.g. a checkpoint that could not be written or a timeout — calls
 * MPI_Abort(MPI_COMM_WORLD, exit_code), which ends every rank of the job and does NOT return
 * (the caller has printed its error first). */
TFM_API int tfm_dist_finish(tfm_dist *d, int exit_code);

#ifdef __cplusplus
}
#endif
#endif
