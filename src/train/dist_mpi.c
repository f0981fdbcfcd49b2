/* The transport of data-parallel training: the only file that calls MPI (docs/MPI.md). Built with
 * MPI (TFM_HAVE_MPI, set by CMake when find_package(MPI) succeeds) it runs the collectives on a
 * duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN; without MPI every operation is the identity
 * of a one-rank job.
 *
 * Timeouts. Every collective is started non-blocking (MPI_Iallreduce, MPI_Iallgather, MPI_Ibcast)
 * and completed by polling MPI_Testall against a deadline of d->timeout_s, so a rank that hangs or
 * never joins turns into an error naming the operation instead of a silent hang (a blocking
 * MPI_Allreduce has no timeout). A rank that DIES is handled by the launcher: Open MPI's mpirun
 * notices the lost process and kills the job at once ("mpirun noticed that process rank 1 ...
 * exited on signal 9"). Polling yields the core (sched_yield) after a short spin, so ranks that
 * share cores with each other or with other programs do not steal them while they wait. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "core_internal.h"
#include "dist_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The environment variables by which launchers tell a process it is one rank of a job. */
static int launcher_size(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return atoi(v);
    }
    return getenv("PMIX_RANK") ? 2 : 0; /* PMIx without a size: a job of unknown size */
}

#ifdef TFM_HAVE_MPI

#include <mpi.h>
#include <sched.h>

typedef struct {
    MPI_Comm comm;       /* the training collectives */
    MPI_Comm ctl;        /* the final vote (never mixed with a collective still pending on comm) */
    MPI_Request *req;    /* [n_req] one per gradient bucket */
    size_t n_req;
} mpi_state;

int tfm_dist_compiled(void) { return 1; }

const char *tfm_dist_library(char *buf, size_t size) {
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len); /* callable before MPI_Init (MPI-3.0, §8.1.1) */
    v[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    char *nl = strpbrk(v, "\r\n");
    if (nl) *nl = '\0';
    snprintf(buf, size, "%s", v);
    return buf;
}

/* "MPI_ERR_...: text" of an MPI error code. */
static tfm_status mpi_error(const tfm_dist *d, int rc, const char *what) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = '\0';
    return tfm_set_error(TFM_ERR_IO, "rank %d of %d: %s (step %lld): MPI failed: %s", d->rank, d->size, what,
                         (long long)d->step, msg);
}

/* Completes n requests within the timeout. */
static tfm_status wait_all(const tfm_dist *d, int n, MPI_Request *req, const char *what) {
    const double t0 = tfm_now_s();
    for (long spins = 0;; spins++) {
        int done = 0;
        int rc = MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS) return mpi_error(d, rc, what);
        if (done) return TFM_OK;
        if (spins < 1000) continue;
        sched_yield();
        if (spins % 64 == 0 && tfm_now_s() - t0 > d->timeout_s)
            return tfm_set_error(TFM_ERR_IO,
                                 "rank %d of %d: %s (step %lld): no answer from the other ranks for %g s (--mpi-timeout):"
                                 " a rank died, hangs, or runs another command",
                                 d->rank, d->size, what, (long long)d->step, d->timeout_s);
    }
}

tfm_status dist_comm_init(tfm_dist *d) {
    const int n = launcher_size();
    if (n <= 1 && !getenv("PMIX_RANK")) return TFM_OK; /* not started by a launcher: one rank, no MPI */
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    /* Open MPI's non-blocking allreduce (coll/libnbc) would pick a binomial tree (reduce to rank 0,
     * then broadcast: 2·log2(N) transfers of the whole bucket) for in-place buffers or N < 4; the
     * ring moves 2·(N−1)/N of it per rank (docs/MPI.md). An MCA default read by MPI_Init, so a
     * value the user set (environment or mpirun --mca) wins. */
    if (!inited) setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return tfm_set_error(TFM_ERR_IO, "MPI_Init_thread failed (started by mpirun as one of %d ranks)", n);
    mpi_state *s = calloc(1, sizeof *s);
    RETURN_IF(!s, TFM_ERR_NOMEM, "out of memory for the MPI state");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &s->comm);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_dup(MPI_COMM_WORLD, &s->ctl);
    if (rc != MPI_SUCCESS) {
        free(s);
        return mpi_error(d, rc, "MPI_Comm_dup");
    }
    MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(s->ctl, MPI_ERRORS_RETURN);
    MPI_Comm_rank(s->comm, &d->rank);
    MPI_Comm_size(s->comm, &d->size);
    d->comm = s;
    return TFM_OK;
}

tfm_status dist_comm_reserve(tfm_dist *d, size_t n) {
    mpi_state *s = d->comm;
    if (!s) return TFM_OK;
    const size_t need = (n + DIST_BUCKET_FLOATS - 1) / DIST_BUCKET_FLOATS;
    if (need <= s->n_req) return TFM_OK;
    MPI_Request *r = realloc(s->req, need * sizeof *r);
    RETURN_IF(!r, TFM_ERR_NOMEM, "out of memory for %zu allreduce requests", need);
    s->req = r;
    s->n_req = need;
    return TFM_OK;
}

tfm_status dist_sum_f64(tfm_dist *d, double *v, int n, const char *what) {
    mpi_state *s = d->comm;
    if (!s) return TFM_OK;
    MPI_Request req;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, s->comm, &req);
    return rc != MPI_SUCCESS ? mpi_error(d, rc, what) : wait_all(d, 1, &req, what);
}

tfm_status dist_max_i64(tfm_dist *d, int64_t *v, int n, const char *what) {
    mpi_state *s = d->comm;
    if (!s) return TFM_OK;
    MPI_Request req;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_MAX, s->comm, &req);
    return rc != MPI_SUCCESS ? mpi_error(d, rc, what) : wait_all(d, 1, &req, what);
}

tfm_status dist_sum_f32(tfm_dist *d, float *g, size_t n, const char *what) {
    mpi_state *s = d->comm;
    if (!s) return TFM_OK;
    const size_t nb = (n + DIST_BUCKET_FLOATS - 1) / DIST_BUCKET_FLOATS;
    RETURN_IF(nb > s->n_req, TFM_ERR_INVALID_ARG, "%s: %zu floats need %zu buckets but %zu were reserved", what, n,
              nb, s->n_req);
    for (size_t k = 0; k < nb; k++) {
        const size_t off = k * DIST_BUCKET_FLOATS;
        const size_t len = n - off < DIST_BUCKET_FLOATS ? n - off : DIST_BUCKET_FLOATS;
        int rc = MPI_Iallreduce(MPI_IN_PLACE, g + off, (int)len, MPI_FLOAT, MPI_SUM, s->comm, &s->req[k]);
        if (rc != MPI_SUCCESS) return mpi_error(d, rc, what);
    }
    return wait_all(d, (int)nb, s->req, what);
}

tfm_status dist_gather_u64(tfm_dist *d, uint64_t mine, uint64_t *all, const char *what) {
    mpi_state *s = d->comm;
    if (!s) {
        all[0] = mine;
        return TFM_OK;
    }
    MPI_Request req;
    int rc = MPI_Iallgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, s->comm, &req);
    return rc != MPI_SUCCESS ? mpi_error(d, rc, what) : wait_all(d, 1, &req, what);
}

tfm_status dist_bcast_bytes(tfm_dist *d, void *buf, size_t bytes) {
    mpi_state *s = d->comm;
    if (!s) return TFM_OK;
    const size_t piece = (size_t)1 << 30;
    for (size_t off = 0; off < bytes; off += piece) {
        const size_t len = bytes - off < piece ? bytes - off : piece;
        MPI_Request req;
        int rc = MPI_Ibcast((char *)buf + off, (int)len, MPI_BYTE, 0, s->comm, &req);
        if (rc != MPI_SUCCESS) return mpi_error(d, rc, "broadcast from rank 0");
        TRY(wait_all(d, 1, &req, "broadcast from rank 0"));
    }
    return TFM_OK;
}

int dist_comm_finish(tfm_dist *d, int *code) {
    mpi_state *s = d->comm;
    if (!s) return 1;
    int v = *code;
    MPI_Request req;
    if (MPI_Iallreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, s->ctl, &req) != MPI_SUCCESS ||
        wait_all(d, 1, &req, "the end of the run") != TFM_OK)
        return 0;
    /* a rank that ends in error makes every rank's exit code non-zero */
    if (*code == 0) *code = v;
    MPI_Comm_free(&s->comm);
    MPI_Comm_free(&s->ctl);
    MPI_Finalize();
    return 1;
}

void dist_comm_abort(tfm_dist *d, int code) {
    (void)d;
    MPI_Abort(MPI_COMM_WORLD, code);
}

void dist_comm_free(tfm_dist *d) {
    mpi_state *s = d->comm;
    if (!s) return;
    free(s->req);
    free(s);
    d->comm = NULL;
}

#else /* built without MPI: a job of one rank */

int tfm_dist_compiled(void) { return 0; }

const char *tfm_dist_library(char *buf, size_t size) {
    snprintf(buf, size, "none (built without MPI)");
    return buf;
}

tfm_status dist_comm_init(tfm_dist *d) {
    const int n = launcher_size();
    RETURN_IF(n > 1, TFM_ERR_UNSUPPORTED,
              "started by an MPI launcher as one of %d ranks, but this tfm was built without MPI: every rank "
              "would train alone and overwrite the others' files; install libopenmpi-dev (scripts/install-deps "
              "libopenmpi-dev openmpi-bin) and rebuild",
              n);
    (void)d;
    return TFM_OK;
}

tfm_status dist_comm_reserve(tfm_dist *d, size_t n) {
    (void)d;
    (void)n;
    return TFM_OK;
}

tfm_status dist_sum_f64(tfm_dist *d, double *v, int n, const char *what) {
    (void)d, (void)v, (void)n, (void)what;
    return TFM_OK;
}

tfm_status dist_max_i64(tfm_dist *d, int64_t *v, int n, const char *what) {
    (void)d, (void)v, (void)n, (void)what;
    return TFM_OK;
}

tfm_status dist_sum_f32(tfm_dist *d, float *g, size_t n, const char *what) {
    (void)d, (void)g, (void)n, (void)what;
    return TFM_OK;
}

tfm_status dist_gather_u64(tfm_dist *d, uint64_t mine, uint64_t *all, const char *what) {
    (void)d, (void)what;
    all[0] = mine;
    return TFM_OK;
}

tfm_status dist_bcast_bytes(tfm_dist *d, void *buf, size_t bytes) {
    (void)d, (void)buf, (void)bytes;
    return TFM_OK;
}

int dist_comm_finish(tfm_dist *d, int *code) {
    (void)d, (void)code;
    return 1;
}

void dist_comm_abort(tfm_dist *d, int code) {
    (void)d, (void)code;
}

void dist_comm_free(tfm_dist *d) { (void)d; }

#endif
