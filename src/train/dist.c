/* Data-parallel training, the part without MPI calls (docs/MPI.md): each rank's share of a global
 * batch, per-rank dropout seeds, fingerprints that every rank must share (settings, weights,
 * optimizer state, data), and the end of a job. The transport is dist_mpi.c. */
#include "core_internal.h"
#include "dist_internal.h"
#include "hash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tfm_status tfm_dist_init(double timeout_s, tfm_dist **out) {
    *out = NULL;
    RETURN_IF(!(timeout_s > 0.0) || !isfinite(timeout_s), TFM_ERR_INVALID_ARG,
              "MPI: the timeout must be a positive number of seconds, got %g", timeout_s);
    tfm_dist *d = calloc(1, sizeof *d);
    RETURN_IF(!d, TFM_ERR_NOMEM, "out of memory for the MPI state");
    d->rank = 0;
    d->size = 1;
    d->timeout_s = timeout_s;
    tfm_status st = dist_comm_init(d);
    if (st != TFM_OK) {
        free(d);
        return st;
    }
    *out = d;
    return TFM_OK;
}

void tfm_dist_set_timeout(tfm_dist *d, double timeout_s) {
    if (d && timeout_s > 0.0 && isfinite(timeout_s)) d->timeout_s = timeout_s;
}

double tfm_dist_timeout(const tfm_dist *d) { return d ? d->timeout_s : 0.0; }

int tfm_dist_rank(const tfm_dist *d) { return d ? d->rank : 0; }

int tfm_dist_size(const tfm_dist *d) { return d ? d->size : 1; }

tfm_status tfm_dist_bcast(tfm_dist *d, void *buf, size_t bytes) {
    if (!d || d->size == 1 || bytes == 0) return TFM_OK;
    return dist_bcast_bytes(d, buf, bytes);
}

int tfm_dist_finish(tfm_dist *d, int exit_code) {
    if (!d) return exit_code;
    int code = exit_code;
    /* an agreed end (success, a stop every rank took at the same step, an error every rank saw)
     * meets the others and finalises; a failure of this rank alone ends the whole job */
    const int agreed = d->size == 1 || code == 0 || code > 128 || d->agreed_error;
    if (!(agreed && dist_comm_finish(d, &code))) { /* (mpirun -np 1 finalises too) */
        fprintf(stderr, "tfm: rank %d of %d: %s; ending every rank of the job (MPI_Abort)\n", d->rank, d->size,
                agreed ? "the other ranks did not reach the end in time" : "this rank failed alone");
        fflush(stderr);
        dist_comm_abort(d, code ? code : 1);
    }
    dist_comm_free(d);
    free(d);
    return code;
}

void dist_share(const tfm_dist *d, int B, int *row0, int *rows) {
    const long long N = tfm_dist_size(d), r = tfm_dist_rank(d);
    const long long a = r * B / N, b = (r + 1) * B / N;
    *row0 = (int)a;
    *rows = (int)(b - a);
}

int dist_share_max(const tfm_dist *d, int B) {
    const int N = tfm_dist_size(d);
    return (B + N - 1) / N;
}

uint64_t dist_dropout_seed(const tfm_dist *d, uint64_t seed) {
    const int r = tfm_dist_rank(d);
    return r == 0 ? seed : hash_derive_seed(seed, (uint64_t)r);
}

uint64_t dist_fingerprint(uint64_t h, const void *p, size_t bytes) {
    const unsigned char *c = p;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, c + i, 8);
        h = hash_mix64(h ^ w) + HASH_GOLDEN_GAMMA;
    }
    uint64_t tail = 0;
    memcpy(&tail, c + i, bytes - i);
    return hash_mix64(h ^ tail ^ ((uint64_t)bytes << 56));
}

tfm_status dist_fail(tfm_dist *d, tfm_status st, int agreed) {
    if (d) d->agreed_error = st != TFM_OK && agreed;
    return st;
}

tfm_status dist_check_same(tfm_dist *d, uint64_t fp, const char *what) {
    if (!d || d->size == 1) return TFM_OK;
    uint64_t *all = malloc((size_t)d->size * sizeof *all); /* once per run or per checkpoint, not per step */
    RETURN_IF(!all, TFM_ERR_NOMEM, "out of memory for %d fingerprints", d->size);
    tfm_status st = dist_gather_u64(d, fp, all, what);
    if (st != TFM_OK) {
        free(all);
        return st;
    }
    int first = -1, count = 0;
    for (int r = 1; r < d->size; r++)
        if (all[r] != all[0]) {
            if (first < 0) first = r;
            count++;
        }
    free(all);
    if (first < 0) return TFM_OK;
    return dist_fail(d,
                     tfm_set_error(TFM_ERR_INVALID_ARG,
                                   "rank %d of %d: %s differ between ranks (rank %d%s differs from rank 0): "
                                   "every rank must run the same command on the same files",
                                   d->rank, d->size, what, first, count > 1 ? " and others" : ""),
                     1);
}

/* A fingerprint of the batches of the current epoch (their ids and shapes), leaving the batcher
 * where it was: equal on two ranks when they hold the same data, batching and seed. */
static tfm_status batches_fingerprint(tfm_batcher *b, uint64_t *out) {
    uint64_t epoch, index, h = 0x6261746368ULL;
    tfm_batcher_position(b, &epoch, &index);
    TRY(tfm_batcher_seek(b, epoch, 0));
    const size_t n = tfm_batcher_batches_per_epoch(b);
    for (size_t k = 0; k < n; k++) {
        tfm_batch x;
        TRY(tfm_batcher_next(b, &x));
        const int dims[3] = {x.B, x.S, x.T};
        h = dist_fingerprint(h, dims, sizeof dims);
        h = dist_fingerprint(h, x.src, (size_t)x.B * (size_t)x.S * sizeof *x.src);
        h = dist_fingerprint(h, x.tgt, (size_t)x.B * (size_t)x.T * sizeof *x.tgt);
    }
    *out = h;
    return tfm_batcher_seek(b, epoch, index);
}

tfm_status dist_check_run(tfm_dist *d, const tfm_trainer *t, tfm_batcher *train, const tfm_loop_config *c) {
    if (!d || d->size == 1) return TFM_OK;
    /* what decides which collectives a rank takes part in; the time limit is rank 0's alone */
    const int64_t loop[3] = {c->max_steps, c->save_every, c->save_path != NULL};
    uint64_t data = 0;
    TRY(batches_fingerprint(train, &data));
    TRY(dist_check_same(d, trainer_fingerprint(t), "the model configuration, training settings, weights or optimizer state"));
    TRY(dist_check_same(d, data, "the training batches (data files, batch size or seed)"));
    return dist_check_same(d, dist_fingerprint(0, loop, sizeof loop), "--steps or --save-every");
}
