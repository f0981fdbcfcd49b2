/* What both modes of `tfm train` share (cli/train_common.h). */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include "train_common.h"

#include "args.h"
#include "kernel_env.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

volatile sig_atomic_t train_stop_signal = 0;

/* Under mpirun, what a rank says when a signal arrives (the launcher sends SIGTERM to every rank
 * when it ends the job, e.g. after a rank died), written by the handler itself: a rank waiting for
 * a dead peer may be killed before it could print anything later. */
static char g_signal_note[192];
static size_t g_signal_note_len = 0;

static void on_signal(int sig) {
    train_stop_signal = sig;
    if (g_signal_note_len) {
        ssize_t w = write(STDERR_FILENO, g_signal_note, g_signal_note_len);
        (void)w;
    }
}

void train_catch_signals(void) {
    train_stop_signal = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* The flag behind a config the library refused: each flag's value alone on the defaults, checked by
 * the library's own rule (no second copy of the rules, no reading of the message). */
static const char *culprit_flag(const tfm_train_config *tc) {
    const tfm_train_config d = tfm_train_config_default();
    tfm_train_config t[5] = {d, d, d, d, d};
    t[0].lr = tc->lr, t[0].schedule = tc->schedule;
    t[1].warmup = tc->warmup, t[1].schedule = tc->schedule;
    t[2].dropout = tc->dropout;
    t[3].label_smoothing = tc->label_smoothing;
    t[4].clip_norm = tc->clip_norm;
    static const char *const flag[5] = {"--lr", "--warmup", "--dropout", "--label-smoothing", "--clip-norm"};
    for (int i = 0; i < 5; i++)
        if (tfm_train_config_check(&t[i]) != TFM_OK) return flag[i];
    return "a training flag";
}

int train_flags_config(const train_flags *f, tfm_train_config *tc) {
    *tc = tfm_train_config_default();
    tc->kernels = *cli_kernels();
    if (tfm_optimizer_from_name(f->optimizer, &tc->optimizer) != TFM_OK) {
        cli_error("train", "--optimizer must be %s, got '%s'", tfm_optimizer_names(), f->optimizer);
        return 0;
    }
    if (tfm_schedule_from_name(f->schedule, &tc->schedule) != TFM_OK) {
        cli_error("train", "--schedule must be %s, got '%s'", tfm_schedule_names(), f->schedule);
        return 0;
    }
    if (f->seed < 0 || !(f->mpi_timeout > 0.0f)) {
        cli_error("train", "--seed must be >= 0 and --mpi-timeout > 0, got %d and %g", f->seed, (double)f->mpi_timeout);
        return 0;
    }
    if (!memory_flag_ok("train", f->max_memory)) return 0;
    tc->lr = f->lr;
    tc->warmup = f->warmup;
    tc->dropout = f->dropout;
    tc->label_smoothing = f->smoothing;
    tc->clip_norm = f->clip;
    tc->seed = (uint64_t)f->seed;
    if (tfm_train_config_check(tc) != TFM_OK) { /* the trainer's own rules, before any loading */
        cli_error("train", "%s: %s", culprit_flag(tc), tfm_last_error());
        return 0;
    }
    return 1;
}

int train_exit_code(tfm_status st) {
    if (st == TFM_OK) return 0;
    if (st == TFM_ERR_INTERRUPTED && train_stop_signal) return 128 + (int)train_stop_signal;
    cli_error("train", "%s", tfm_last_error());
    return EXIT_RUNTIME;
}

int train_dist_start(float timeout_s, tfm_dist **d) {
    if (tfm_dist_init((double)timeout_s, d) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        return 0;
    }
    if (tfm_dist_size(*d) > 1) {
        int n = snprintf(g_signal_note, sizeof g_signal_note,
                         "tfm train: rank %d of %d: stopping on a signal (Ctrl-C, or the MPI launcher ending the job, "
                         "e.g. because a rank died); the last checkpoint stays as saved\n",
                         tfm_dist_rank(*d), tfm_dist_size(*d));
        g_signal_note_len = n > 0 && (size_t)n < sizeof g_signal_note ? (size_t)n : 0;
    }
    return 1;
}

void train_dist_report(const tfm_dist *d, const tfm_config *c) {
    const int n = tfm_dist_size(d);
    if (n == 1 || tfm_dist_rank(d) != 0) return;
    const double mb = 4.0 * (double)tfm_config_param_count(c) / 1e6;
    fprintf(stderr, "tfm train: data-parallel over %d MPI ranks (rank 0 validates, saves and reports); each step "
                    "sums %.1f MB of gradients, %.1f MB sent per rank (ring allreduce)\n",
            n, mb, 2.0 * (n - 1) / n * mb);
}

int train_is_root(const tfm_dist *d) { return tfm_dist_rank(d) == 0; }

int train_dist_finish(tfm_dist *d, int rc) { return tfm_dist_finish(d, rc); }
