/* What both modes of `tfm train` share (cli/train_text.c, cli/cmd_train.c): the training flags
 * (one table, TRAIN_OPTS, with each mode's defaults) and their check, the signal handlers that set the training loop's stop flag, the exit code of a
 * stopped run. */
#ifndef TFM_CLI_TRAIN_COMMON_H
#define TFM_CLI_TRAIN_COMMON_H

#include "memory_check.h"
#include "tfm/dist.h"
#include "tfm/tfm.h"

#include <signal.h>

/* The stop flag of tfm_loop_config: the number of the signal (SIGINT, SIGTERM) that asked to stop,
 * 0 while none has. */
extern volatile sig_atomic_t train_stop_signal;

/* Installs handlers that make SIGINT and SIGTERM set train_stop_signal (the loop then saves and
 * returns), and resets the flag. */
void train_catch_signals(void);

/* The default of --mpi-timeout: the longest wait for the other ranks, seconds (docs/MPI.md). It
 * must exceed rank 0's validation pass and checkpoint write, which the other ranks wait for. */
#define TRAIN_MPI_TIMEOUT_S 300

/* The flags of the training itself, the same in both modes (TRAIN_OPTS); each mode keeps its own
 * defaults (below) and its data and run flags (--steps, batches, checkpoints). */
typedef struct {
    const char *optimizer, *schedule;
    float lr, dropout, smoothing, clip, mpi_timeout;
    int warmup, seed;
    const char *max_memory; /* --max-memory, NULL: MemAvailable */
} train_flags;

/* Defaults of tfm train on token-id files: a plain trainer, as tfm init and PyTorch make models
 * (tfm_train_config_default: Adam, constant lr 1e-3, no dropout, smoothing or clipping). */
#define TRAIN_FLAGS_IDS                                                                                ((train_flags){.optimizer = "adam", .schedule = "constant", .lr = 1e-3f, .warmup = 4000, .seed = 1,                         .mpi_timeout = (float)TRAIN_MPI_TIMEOUT_S})
/* Defaults of tfm train --data / --text: the paper's recipe (noam warm-up, dropout 0.1, label
 * smoothing 0.1) at the scale of the Bible corpus, with clipping (docs/TRAINING.md). */
#define TRAIN_FLAGS_TEXT                                                                               ((train_flags){.optimizer = "adam", .schedule = "noam", .lr = 0.32f, .warmup = 400, .dropout = 0.1f,                        .smoothing = 0.1f, .clip = 1.0f, .seed = 1, .mpi_timeout = (float)TRAIN_MPI_TIMEOUT_S})

/* The cli_opt entries of the training flags in f (a train_flags), for a command's option table. */
#define TRAIN_OPTS(f)                                                                                  {"--optimizer", OPT_STR, &(f).optimizer, 0, "adam or sgd"},                                            {"--lr", OPT_FLOAT, &(f).lr, 0, "learning rate (constant) or noam factor (peak = lr / sqrt(d_model * warmup))"},         {"--schedule", OPT_STR, &(f).schedule, 0, "constant or noam"},                                     {"--warmup", OPT_INT, &(f).warmup, 0, "warm-up steps of the noam schedule"},                       {"--dropout", OPT_FLOAT, &(f).dropout, 0, "dropout probability"},                                  {"--label-smoothing", OPT_FLOAT, &(f).smoothing, 0, "label smoothing epsilon"},                    {"--clip-norm", OPT_FLOAT, &(f).clip, 0, "clip the global gradient norm (0: off)"},                {"--seed", OPT_INT, &(f).seed, 0, "seed of initialisation (a new model), shuffling and dropout"},         {"--mpi-timeout", OPT_FLOAT, &(f).mpi_timeout, 0, "under mpirun: seconds to wait for the other ranks "                                                           "before failing (docs/MPI.md)"},                 MEMORY_OPT((f).max_memory)

/* The trainer's configuration from the flags, checked before anything is loaded: --optimizer and
 * --schedule by name, --seed >= 0, --mpi-timeout > 0, --max-memory's form, and the rest by the
 * library's own check (tfm_train_config_check). On a bad value prints it and returns 0 (a usage
 * error). */
int train_flags_config(const train_flags *f, tfm_train_config *tc);

/* The process exit code of a finished tfm_train_loop: 0; 128 + the signal when stopped by one
 * (130 for SIGINT, 143 for SIGTERM); 1 for an error (printed here). */
int train_exit_code(tfm_status st);

/* Joins the MPI job when started by mpirun (tfm_dist_init); with one rank *d may still be used.
 * Prints the error and returns 0 on failure. */
int train_dist_start(float timeout_s, tfm_dist **d);

/* Rank 0 of N > 1 ranks says so, with the gradient bytes each step sums and sends (docs/MPI.md). */
void train_dist_report(const tfm_dist *d, const tfm_config *c);

/* 1 on the rank that reports (rank 0, or the only process). */
int train_is_root(const tfm_dist *d);

/* Ends the MPI job (tfm_dist_finish) and returns the process exit code for `rc`; may not return
 * when this rank failed alone (MPI_Abort ends every rank). */
int train_dist_finish(tfm_dist *d, int rc);

#endif
