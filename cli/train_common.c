/* What both modes of `tfm train` share (cli/train_common.h). */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include "train_common.h"

#include "args.h"

#include <stdio.h>
#include <string.h>

volatile sig_atomic_t train_stop_signal = 0;

static void on_signal(int sig) { train_stop_signal = sig; }

void train_catch_signals(void) {
    train_stop_signal = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int train_parse_optim(const char *optimizer, const char *schedule, tfm_train_config *tc) {
    if (tfm_optimizer_from_name(optimizer, &tc->optimizer) != TFM_OK) {
        cli_error("train", "--optimizer must be %s, got '%s'", tfm_optimizer_names(), optimizer);
        return 0;
    }
    if (tfm_schedule_from_name(schedule, &tc->schedule) != TFM_OK) {
        cli_error("train", "--schedule must be %s, got '%s'", tfm_schedule_names(), schedule);
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
    if (tfm_dist_size(*d) > 1 && tfm_dist_rank(*d) == 0)
        fprintf(stderr, "tfm train: data-parallel over %d MPI ranks (rank 0 validates, saves and reports)\n",
                tfm_dist_size(*d));
    return 1;
}

int train_is_root(const tfm_dist *d) { return tfm_dist_rank(d) == 0; }

int train_dist_finish(tfm_dist *d, int rc) { return tfm_dist_finish(d, rc); }
