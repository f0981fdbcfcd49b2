/* bench_tfm — the benchmark program behind `make bench` (bench/bench.sh, docs/BENCH.md).
 *
 *   bench_tfm peak   [--seconds X]
 *   bench_tfm train  --config ref|base|tiny|long [--reps N] [--warmup W] [--flops-only]
 *   bench_tfm decode --model M --src FILE [--beam K] [--batch B] [--sentences N] [--reps R]
 *                    [--ids-out FILE]
 *
 * Each prints its report and a last line "RESULT ..." (bench.h); the peak RSS of the process is
 * in it (one case per process, so each RSS is that case's). */
#include "bench.h"
#include "kernel_env.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    (void)tfm_reexec_for_shared_cores(argv); /* as tfm does: the OpenMP waiting policy, docs/THREADS.md */
    tfm_kernel_opts kernels; /* TFM_GEMM, TFM_ATTN, TFM_NO_AVX512, TFM_KERNELS, as tfm reads them */
    if (cli_kernel_opts_from_env(&kernels) != 0) return 2;
    cli_kernels_set(&kernels);
    if (argc >= 2 && strcmp(argv[1], "peak") == 0) return bench_cmd_peak(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "train") == 0) return bench_cmd_train(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "decode") == 0) return bench_cmd_decode(argc - 1, argv + 1);
    fprintf(stderr, "usage: bench_tfm peak|train|decode [options] (docs/BENCH.md)\n");
    return 2;
}
