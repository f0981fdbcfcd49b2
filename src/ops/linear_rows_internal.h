/* Between linear_rows.c (the parallel loop, the plain kernel) and linear_rows_avx512.c (the
 * register-blocked kernel chosen at run time). */
#ifndef TFM_LINEAR_ROWS_INTERNAL_H
#define TFM_LINEAR_ROWS_INTERNAL_H

#include <stddef.h>

/** Columns j0..j1−1 of out (N, OC) = bias (OC, nullable) + inp (N, IC) · weight (OC, IC)ᵀ, every
 * output by the same fixed sequence of operations (linear_rows_avx512.c). Call only when
 * ops_cpu_avx512(). */
void linear_rows_cols_avx512(float *out, const float *inp, const float *weight, const float *bias, size_t N,
                             size_t IC, size_t OC, size_t j0, size_t j1);

#endif
