/* bench_tfm (make bench, docs/BENCH.md): the pieces of the benchmark program. Public API only
 * (include/tfm/, docs/ARCHITECTURE.md). Each subcommand prints a human-readable report and one
 * last line
 *   RESULT <case> key=value ...
 * that bench/bench.sh collects into its table. */
#ifndef TFM_BENCH_H
#define TFM_BENCH_H

#include "tfm/tfm.h"

#include <stddef.h>

/* Wall-clock seconds (for differences only). */
double bench_now_s(void);
/* Median and minimum of x[0..n) (sorts x in place); n >= 1. */
void bench_median_min(double *x, int n, double *median, double *min);
/* Peak resident set size of this process so far, MiB (getrusage ru_maxrss). */
double bench_peak_rss_mib(void);
/* Parses a positive integer flag value (1..1e6) or exits the PROGRAM (not the library) with 2. */
int bench_int_arg(const char *flag, const char *v);

/* The FMA-throughput kernel: the fp32 peak this CPU reaches, GFLOP/s (an FMA counts 2 FLOP).
 * isa_out receives the widest instruction set found AT RUN TIME (cpuid): "avx512f", "avx2+fma",
 * "sse2" (no FMA: a multiply and an add per lane, counted 2 FLOP). threads: how many OpenMP
 * threads run the kernel at once (each on its own registers; the result is their sum). */
double bench_fma_peak_gflops(int threads, double seconds, const char **isa_out);
int bench_cmd_peak(int argc, char **argv);

/* Analytic FLOP counts (docs/BENCH.md, "What is counted"): a multiply-add is 2 FLOP; GEMMs and
 * attention's QKᵀ and weights·V only (LayerNorm, softmax, activations, embeddings and the
 * optimizer are O(tokens·d) or O(params), well under 1 % at these sizes). */
/* Forward of a batch of B sentences, S source and T decoder positions (Vaswani et al. 2017 §3:
 * encoder: QKV, output projection, the full S×S scores and weighted sum, FFN; decoder: the same
 * with the full T×T square, cross-attention Q/out per target, K/V per source, T×S scores; generator
 * d × V per target). A training step counts 3× this (backward: dX and dW for every product). */
double bench_flops_forward(const tfm_config *c, double B, double S, double T);
/* Greedy/beam decoding on a KV cache: the encoder over B·S source tokens, cross K/V once per
 * sentence, and per generated position of each live hypothesis one decoder column (self-attention
 * over the t positions so far, cross-attention over S) and the generator. hyp_steps: Σ over the
 * decoding steps of the hypotheses computed; hyp_pos_sum: Σ over those of their position t. */
double bench_flops_decode(const tfm_config *c, double B, double S, double hyp_steps, double hyp_pos_sum);

int bench_cmd_train(int argc, char **argv);
int bench_cmd_decode(int argc, char **argv);

#endif
