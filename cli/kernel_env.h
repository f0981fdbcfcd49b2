/* The kernel choice of the tool's contexts (tfm/kernels.h), from the environment: the library
 * reads none, so the tool turns these variables into tfm_kernel_opts once, in main():
 *   TFM_KERNELS=reference   the reference kernels everywhere (tfm_kernel_opts_reference);
 *   TFM_GEMM=blis | small   every product through BLIS, or every one the small kernels take;
 *   TFM_ATTN=reference      training attention stores its weights (no fused kernel);
 *   TFM_NO_AVX512=1         the AVX2 kernels on an AVX-512 CPU (anything but "" or "0");
 * unset, "auto" (TFM_GEMM, TFM_ATTN, TFM_KERNELS: also "tuned") or "" keep the default. */
#ifndef TFM_CLI_KERNEL_ENV_H
#define TFM_CLI_KERNEL_ENV_H

#include "tfm/kernels.h"

/** Reads the variables above into *opts (starting from the default). Returns 0, or -1 after
 * printing "tfm: error: ..." naming the variable and its accepted values. */
int cli_kernel_opts_from_env(tfm_kernel_opts *opts);

/** The tool's choice, read by main() (the default until then). */
const tfm_kernel_opts *cli_kernels(void);

/** Sets what cli_kernels() returns (main(), benchmarks). */
void cli_kernels_set(const tfm_kernel_opts *opts);

#endif
