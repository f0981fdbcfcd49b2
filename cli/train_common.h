/* What both modes of `tfm train` share (cli/train_text.c, cli/cmd_train.c): the optimizer and
 * schedule flags, the signal handlers that set the training loop's stop flag, the exit code of a
 * stopped run. */
#ifndef TFM_CLI_TRAIN_COMMON_H
#define TFM_CLI_TRAIN_COMMON_H

#include "tfm/dist.h"
#include "tfm/tfm.h"

#include <signal.h>

/* The stop flag of tfm_loop_config: the number of the signal (SIGINT, SIGTERM) that asked to stop,
 * 0 while none has. */
extern volatile sig_atomic_t train_stop_signal;

/* Installs handlers that make SIGINT and SIGTERM set train_stop_signal (the loop then saves and
 * returns), and resets the flag. */
void train_catch_signals(void);

/* Sets tc->optimizer and tc->schedule from the flag values; on a bad value prints
 * "--optimizer must be adam or sgd, got 'x'" (or --schedule's) and returns 0. */
int train_parse_optim(const char *optimizer, const char *schedule, tfm_train_config *tc);

/* The process exit code of a finished tfm_train_loop: 0; 128 + the signal when stopped by one
 * (130 for SIGINT, 143 for SIGTERM); 1 for an error (printed here). */
int train_exit_code(tfm_status st);

/* The default of --mpi-timeout: the longest wait for the other ranks, seconds (docs/MPI.md). It
 * must exceed rank 0's validation pass and checkpoint write, which the other ranks wait for. */
#define TRAIN_MPI_TIMEOUT_S 300

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
