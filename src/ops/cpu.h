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

/** 1 when this CPU runs AVX-512F (__builtin_cpu_supports, read at the first call), else 0. The
 * environment variable TFM_NO_AVX512, set to anything but "" or "0" (read with it, and again by
 * ops_cpu_avx512_select(1)), makes it 0: the library's AVX2 kernels on an AVX-512 CPU, to time what
 * an AVX2-only CPU runs (docs/KERNELS.md "Which products take it": build for that CPU too; BLIS
 * keeps its own choice). */
int ops_cpu_avx512(void);

/** 1 when this CPU runs AVX2 and FMA (__builtin_cpu_supports, read once), else 0. */
int ops_cpu_avx2_fma(void);

/** Tests only: on = 0 makes ops_cpu_avx512() answer 0 (the plain kernels, as on a CPU without
 * AVX-512), on = 1 restores what the CPU has (less AVX-512 under TFM_NO_AVX512). Call between
 * parallel regions. */
void ops_cpu_avx512_select(int on);

#endif
