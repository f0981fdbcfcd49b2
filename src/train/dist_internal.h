/* Internals of data-parallel training (include/tfm/dist.h, docs/MPI.md), shared by dist.c (the
 * logic: shares, fingerprints, agreement), dist_mpi.c (the only file that calls MPI, with a
 * one-rank fallback when built without it), trainer.c (the step's seam between backward and the
 * optimizer update) and loop.c (rank 0 alone validates, saves and reports; stop decisions agreed). */
#ifndef TFM_DIST_INTERNAL_H
#define TFM_DIST_INTERNAL_H

#include "tfm/dist.h"
#include "tfm/train_loop.h"

#include <stdint.h>

struct tfm_dist {
    int rank, size;
    double timeout_s;   /* the longest wait in one collective, seconds */
    int agreed_error;   /* the last error returned was seen by every rank at once */
    int64_t step;       /* the step being taken, for messages (set by the trainer) */
    void *comm;         /* dist_mpi.c's state (communicators, bucket requests); NULL with one rank */
};

/* The number of floats summed by one MPI_Iallreduce of the gradient: 2^20 (4 MiB). */
#define DIST_BUCKET_FLOATS ((size_t)1 << 20)

/* ---- dist_mpi.c: transport (every function is trivial with one rank) ------------------------ */

/* Sets d->rank and d->size: MPI_Init_thread when launched by mpirun (and built with MPI). */
tfm_status dist_comm_init(tfm_dist *d);
/* Prepares the requests for summing n floats in buckets of DIST_BUCKET_FLOATS (allocates: call
 * before the first step). */
tfm_status dist_comm_reserve(tfm_dist *d, size_t n);
/* v[0..n) ← Σ over ranks, in place. `what` names the operation in a timeout message. */
tfm_status dist_sum_f64(tfm_dist *d, double *v, int n, const char *what);
/* v[0..n) ← max over ranks, in place. */
tfm_status dist_max_i64(tfm_dist *d, int64_t *v, int n, const char *what);
/* g[0..n) ← Σ over ranks, in place, in buckets of DIST_BUCKET_FLOATS all in flight at once
 * (MPI_Iallreduce on MPI_IN_PLACE; no allocation: dist_comm_reserve made the requests). */
tfm_status dist_sum_f32(tfm_dist *d, float *g, size_t n, const char *what);
/* all[r] ← rank r's `mine`, for every r (all: [size]). */
tfm_status dist_gather_u64(tfm_dist *d, uint64_t mine, uint64_t *all, const char *what);
/* buf[0..bytes) of rank 0 to every rank. */
tfm_status dist_bcast_bytes(tfm_dist *d, void *buf, size_t bytes);
/* The end: with vote, agrees on the exit code within the timeout and finalises (returns 1), else
 * (or when agreement fails) returns 0 and the caller aborts with dist_comm_abort. */
int dist_comm_finish(tfm_dist *d, int *code);
/* MPI_Abort(MPI_COMM_WORLD, code): does not return. */
void dist_comm_abort(tfm_dist *d, int code);
/* Frees the transport state (after finish). */
void dist_comm_free(tfm_dist *d);

/* ---- dist.c ------------------------------------------------------------------------------- */

/* Rank d's share of a global batch of B rows: rows [*row0, *row0 + *rows), contiguous,
 * ⌊rB/N⌋ to ⌊(r+1)B/N⌋ (sizes differ by at most one; a share is empty when B < N). */
void dist_share(const tfm_dist *d, int B, int *row0, int *rows);
/* The most rows any rank's share of B rows holds: ⌈B/N⌉. */
int dist_share_max(const tfm_dist *d, int B);
/* The dropout seed of this rank for a step seeded `seed`: `seed` itself on rank 0, a mix of
 * (seed, rank) elsewhere, so that ranks draw independent masks. */
uint64_t dist_dropout_seed(const tfm_dist *d, uint64_t seed);
/* A 64-bit fingerprint of `bytes` bytes at p, continuing h (splitmix64 over 8-byte words). */
uint64_t dist_fingerprint(uint64_t h, const void *p, size_t bytes);
/* Checks that every rank holds the same fingerprint of `what`; a difference is an error on every
 * rank (agreed), naming the ranks that differ from rank 0. */
tfm_status dist_check_same(tfm_dist *d, uint64_t fp, const char *what);
/* Before the first step: every rank must hold the same settings, weights, optimizer state, step
 * count, RNG, batches of the current epoch and loop limits (max_steps, save_every); a difference
 * is an error on every rank. Moves `train` and returns it to its position. */
tfm_status dist_check_run(tfm_dist *d, const tfm_trainer *t, tfm_batcher *train, const tfm_loop_config *c);
/* Returns st after recording whether every rank returns it too (for tfm_dist_finish). */
tfm_status dist_fail(tfm_dist *d, tfm_status st, int agreed);

/* ---- trainer.c: what the loop and the checks need of the trainer -------------------------- */

/* The trainer's dist, NULL when training alone. */
tfm_dist *trainer_dist(const tfm_trainer *t);
/* A fingerprint of what must be equal on every rank before the first step: the training
 * settings, the weights, the optimizer moments, the step count and the dropout RNG. */
uint64_t trainer_fingerprint(const tfm_trainer *t);
/* A fingerprint of the weights alone (equal on every rank after every step). */
uint64_t trainer_weights_fingerprint(const tfm_trainer *t);
/* 1 if an optimizer moment (Adam's m or v) is NaN or infinite, naming it ("adam_m"/"adam_v") and the
 * parameter index; 0 otherwise (also for SGD). A moment can overflow while every weight stays
 * finite (v = (1 − β2)·g² with |g| > ~1e19 and no clipping), and would freeze those weights. */
int trainer_optimizer_non_finite(const tfm_trainer *t, const char **which, size_t *index);
/* The gradient of the last step (after the allreduce, before clipping: the optimizer multiplies
 * by the clipping coefficient as it reads them): [n_params]. */
const float *trainer_gradients(const tfm_trainer *t);

#endif
