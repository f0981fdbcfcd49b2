/* Data-parallel training (docs/MPI.md): 2 MPI ranks sharing a global batch of B sentences compute
 * the same gradient (<= 1e-5) and, after 3 Adam steps, the same parameters (<= 1e-5) as 1 process
 * on the same B sentences; the loss, the target count and the (clipped, global) gradient norm agree
 * (the key rows of in_proj_bias excepted under Adam, as docs/NUMERICS.md explains); the weights are
 * bit-identical on both ranks; a share may be empty (B = 1 < 2 ranks).
 * The rows have very different lengths, so a loss normalised per rank instead of by the global
 * target count fails (tried by mutation: gradients 0.27 off).
 *
 * ctest runs this binary alone; it then runs itself under `mpirun -np 2` (TFM_MPIEXEC from CMake,
 * else mpirun on PATH), with the flags Open MPI needs as root and on 2 shared cores, and returns
 * that run's status (by hand, `mpirun -np 3 build/test_mpi_train` tests 3 ranks). SKIP when this build has no MPI or no launcher is installed. */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include "dist_internal.h"
#include "model_internal.h"
#include "test_tiny_model.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <stdint.h>
#include <sys/wait.h>

enum { MAX_B = 5, S = 9, T = 10 };

/* B rows of ids in [3, 20): source i has 2 + 2i ids, target row i BOS + (1 + 2i) ids + EOS, padded
 * with 0, so the later rows (rank 1's share) hold most of the targets. */
static void make_batch(int B, int32_t *src, int32_t *tgt) {
    uint32_t s = 7;
    memset(src, 0, sizeof(int32_t) * (size_t)B * S);
    memset(tgt, 0, sizeof(int32_t) * (size_t)B * T);
    for (int b = 0; b < B; b++) {
        const int ls = 2 + (2 * b) % 8, lt = 1 + (2 * b) % 8;
        for (int j = 0; j < ls; j++) src[b * S + j] = (int32_t)((s = s * 1103515245u + 12345u) >> 16) % 17 + 3;
        tgt[b * T] = 1;
        for (int j = 0; j < lt; j++) tgt[b * T + 1 + j] = (int32_t)((s = s * 1103515245u + 12345u) >> 16) % 17 + 3;
        tgt[b * T + 1 + lt] = 2;
    }
}

/* The largest |a − b| over every parameter except the key rows [d, 2d) of each in_proj_bias: their
 * true gradient is exactly zero (a constant added to a query's scores cancels in the softmax), so
 * Adam turns their rounding noise into lr-sized steps in any implementation (docs/NUMERICS.md; as
 * test_golden_backward). */
static double max_param_diff(const tfm_model *m, const float *a, const float *b) {
    const size_t d = (size_t)m->cfg.d_model;
    double worst = 0.0;
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        const int key_bias = strstr(e->name, "in_proj_bias") != NULL;
        for (size_t i = 0; i < e->numel; i++) {
            if (key_bias && i >= d && i < 2 * d) continue;
            const double x = fabs((double)a[e->offset + i] - (double)b[e->offset + i]);
            if (!(x <= worst)) worst = x;
        }
    }
    return worst;
}

static double max_abs_diff(const float *a, const float *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= m)) m = d; /* NaN counts as the largest */
    }
    return m;
}

/* One case: B rows, `clip` (0: off), checked against one process on every rank. */
static void check_case(tfm_dist *d, int B, float clip, const char *name) {
    const tfm_config cfg = test_tiny_config();
    tfm_train_config tc = tfm_train_config_default();
    tc.label_smoothing = 0.1f;
    tc.clip_norm = clip;
    int32_t src[MAX_B * S], tgt[MAX_B * T];
    make_batch(B, src, tgt);
    tfm_model *m1 = NULL, *mN = NULL;
    tfm_trainer *t1 = NULL, *tN = NULL;
    if (tfm_model_create(&cfg, 11, &m1) != TFM_OK || tfm_model_create(&cfg, 11, &mN) != TFM_OK ||
        tfm_trainer_create(m1, &tc, B, S, T, &t1) != TFM_OK || tfm_trainer_create(mN, &tc, B, S, T, &tN) != TFM_OK ||
        tfm_trainer_set_dist(tN, d) != TFM_OK) {
        CHECK(0, "%s: setup: %s", name, tfm_last_error());
        goto done;
    }
    const size_t n = m1->n_params;
    float *g1 = malloc(n * sizeof *g1);
    CHECK(g1 != NULL, "out of memory");
    for (int step = 1; g1 && step <= 3; step++) {
        tfm_step_stats s1, sN;
        tfm_status a = tfm_trainer_step(t1, B, S, T, src, tgt, &s1);
        tfm_status b = tfm_trainer_step(tN, B, S, T, src, tgt, &sN);
        CHECK(a == TFM_OK && b == TFM_OK, "%s step %d: %s", name, step, tfm_last_error());
        CHECK(s1.n_tokens == sN.n_tokens, "%s step %d: %zu targets on 2 ranks, %zu in one process", name, step,
              sN.n_tokens, s1.n_tokens);
        CHECK_NEAR(sN.loss, s1.loss, 1e-6 * fabs(s1.loss), "loss (2 ranks vs 1 process)");
        CHECK_NEAR(sN.grad_norm, s1.grad_norm, 1e-5 * s1.grad_norm, "global gradient norm");
        if (step == 1) {
            memcpy(g1, trainer_gradients(t1), n * sizeof *g1);
            const double e = max_abs_diff(trainer_gradients(tN), g1, n);
            CHECK(e <= 1e-5, "%s: gradients of 2 ranks differ from 1 process by %.3g (> 1e-5)", name, e);
        }
    }
    const double e = max_param_diff(m1, (const float *)mN->param_arena.base, (const float *)m1->param_arena.base);
    CHECK(e <= 1e-5, "%s: parameters after 3 Adam steps differ from 1 process by %.3g (> 1e-5)", name, e);
    CHECK(dist_check_same(d, trainer_weights_fingerprint(tN), "the weights") == TFM_OK,
          "%s: the ranks' weights are not bit-identical: %s", name, tfm_last_error());
    free(g1);
done:
    tfm_trainer_free(t1);
    tfm_trainer_free(tN);
    tfm_model_free(m1);
    tfm_model_free(mN);
}

static int run_rank(void) {
    tfm_dist *d = NULL;
    if (tfm_dist_init(60.0, &d) != TFM_OK) {
        fprintf(stderr, "FAIL: tfm_dist_init: %s\n", tfm_last_error());
        return 1;
    }
    const int N = tfm_dist_size(d), r = tfm_dist_rank(d);
    CHECK(N >= 2, "want 2 ranks or more, got %d", N); /* ctest runs 2; any N works by hand */
    int r0, rows;
    dist_share(d, 5, &r0, &rows);
    CHECK(r0 == r * 5 / N && r0 + rows == (r + 1) * 5 / N, "rank %d's share of 5 rows: [%d, %d)", r, r0, r0 + rows);
    check_case(d, 5, 0.0f, "B=5");
    check_case(d, 5, 0.5f, "B=5, clip 0.5");
    check_case(d, 1, 0.0f, "B=1 (rank 1's share empty)");
    char name[32];
    snprintf(name, sizeof name, "mpi_train rank %d", tfm_dist_rank(d));
    const int rc = test_finish(name);
    return tfm_dist_finish(d, rc);
}

int main(int argc, char **argv) {
    (void)argc;
    if (!tfm_dist_compiled()) {
        printf("SKIP: this build has no MPI (install libopenmpi-dev openmpi-bin: scripts/install-deps; then "
               "reconfigure)\n");
        return TEST_SKIP;
    }
    if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK")) return run_rank();
    const char *mpiexec = getenv("TFM_MPIEXEC");
    if (!mpiexec || !*mpiexec) mpiexec = "mpirun";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "command -v '%s' > /dev/null", mpiexec);
    if (system(cmd) != 0) {
        printf("SKIP: no MPI launcher '%s' (install openmpi-bin: scripts/install-deps)\n", mpiexec);
        return TEST_SKIP;
    }
    /* Open MPI refuses root without these; 2 ranks on a 2-core machine need --oversubscribe, and
     * --bind-to none lets the ranks share the cores with the other tests */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    /* under AddressSanitizer (make test-asan): Open MPI's own never-freed memory is not ours */
    setenv("OMPI_MCA_mca_base_component_disable_dlclose", "1", 1);
    char lsan[4200];
    snprintf(lsan, sizeof lsan, "suppressions=%s", test_path("tests/fixtures/mpi/lsan.supp"));
    setenv("LSAN_OPTIONS", lsan, 0);
    /* the slow unwinder: Open MPI's libraries have no frame pointers, and the suppressions match
     * library names anywhere in the stack */
    const char *asan = getenv("ASAN_OPTIONS");
    char asan_opts[4200];
    snprintf(asan_opts, sizeof asan_opts, "%s%sfast_unwind_on_malloc=0", asan ? asan : "", asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", asan_opts, 1);
    snprintf(cmd, sizeof cmd, "'%s' --oversubscribe --bind-to none -np 2 '%s'", mpiexec, argv[0]);
    const int st = system(cmd);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "FAIL: %s: status %d\n", cmd, st);
        return 1;
    }
    printf("mpi_train: 2 ranks passed\n");
    return 0;
}
