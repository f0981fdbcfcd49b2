/* A bump allocator over one aligned block: a model's parameters, gradients, optimizer state and
 * activations are carved from arenas sized before the first step, so the hot path never mallocs.
 *
 * Use: arena_reserve() to count (with a NULL base), then arena_init() with the total,
 * then the same arena_take() sequence hands out the pointers. */
#ifndef TFM_ARENA_H
#define TFM_ARENA_H

#include "core_internal.h"

typedef struct {
    unsigned char *base; /* NULL while only counting */
    size_t used;         /* bytes handed out (or counted) so far */
    size_t cap;          /* bytes available (0 while counting) */
} tfm_arena;

#define TFM_ARENA_ALIGN 64

/** Allocates `bytes` (zeroed, 64-byte aligned). Errors: TFM_ERR_NOMEM naming `what`. */
tfm_status arena_init(tfm_arena *a, size_t bytes, const char *what);
void arena_free(tfm_arena *a);

/** Hands out n floats (64-byte aligned). With a counting arena (base NULL) returns NULL and only
 * advances `used`. Returns NULL on overflow of a real arena (a sizing bug: asserted). */
float *arena_take_f32(tfm_arena *a, size_t n);
/** Same for raw bytes. */
void *arena_take_bytes(tfm_arena *a, size_t bytes);

#endif
