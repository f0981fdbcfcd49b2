/* Shared by the two halves of the memory estimate (src/model/memory.c, src/train/memory_train.c). */
#ifndef TFM_MEMORY_INTERNAL_H
#define TFM_MEMORY_INTERNAL_H

#include "tfm/memory.h"

/** Sets e->total to the sum of the parts (saturating at SIZE_MAX) and returns it. */
size_t memory_total(tfm_memory_estimate *e);

#endif
