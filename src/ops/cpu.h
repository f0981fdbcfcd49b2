/* The instruction sets this CPU runs, read at run time, for the kernels that have a variant
 * compiled with __attribute__((target(...))) (never decided by CPU model or at build time: the
 * portable build runs on any x86-64). */
#ifndef TFM_OPS_CPU_H
#define TFM_OPS_CPU_H

/* 1 where the AVX2/AVX-512 kernels (files *_avx2.c, *_avx512.c, attention_decode.c) are compiled:
 * x86 only. Elsewhere (aarch64) those files compile to stubs that are never called, since
 * ops_cpu_avx512() and ops_cpu_avx2_fma() are 0 there. */
#if defined(__x86_64__) || defined(__i386__)
#define OPS_X86_KERNELS 1
#else
#define OPS_X86_KERNELS 0
#endif

/** 1 when this CPU runs AVX-512F (__builtin_cpu_supports, read at the first call), else 0. What
 * a context may use is its kernel table's instruction set (kernels.h), capped at this. */
int ops_cpu_avx512(void);

/** 1 when this CPU runs AVX2 and FMA (__builtin_cpu_supports, read once), else 0. */
int ops_cpu_avx2_fma(void);

#endif
