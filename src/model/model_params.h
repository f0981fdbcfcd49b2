/* A model's parameters as one object: struct tfm_model (its configuration, every parameter in one
 * arena laid out by the table of params.h, and its tokenizer: read-only once built), how one is
 * allocated, the batch check every pass starts with, and what the trainer and the training loop
 * read or write of the parameters (the block as a whole, the first non-finite value). */
#ifndef TFM_MODEL_PARAMS_H
#define TFM_MODEL_PARAMS_H

#include "arena.h"
#include "params.h"
#include "tfm/model.h"

#include <stdint.h>

/* Read-only while any context uses it; only a trainer (which owns its own context) writes the
 * parameters, between its forward/backward passes. */
struct tfm_model {
    tfm_config cfg;
    tfm_arena param_arena;
    model_params p;
    param_entry *entries;
    size_t n_entries;
    size_t n_params; /* floats of parameter storage */

    unsigned char *tokenizer; /* serialized tokenizer (tokenizer.model), or NULL */
    size_t tokenizer_len;
};

/** Allocates a model with its parameter arena (zeroed) and table, no workspace yet. */
tfm_status model_alloc(const tfm_config *cfg, tfm_model **out);

/** Checks a batch of src (B, S) and whole target rows tgt (B, T) against the model: sizes, max_len,
 * every id inside its vocabulary. Errors: TFM_ERR_INVALID_ARG, TFM_ERR_RANGE naming row and
 * position. */
tfm_status model_check_batch(const tfm_model *m, int B, int S, int T, const int32_t *src, const int32_t *tgt);

/** Floats of parameter storage (tied tensors counted once): the length of model_param_data, and
 * of any buffer laid out as the parameters (gradients, optimizer moments). */
size_t model_n_params(const tfm_model *m);

/** Every parameter, [model_n_params] floats laid out by params_layout. Writing through it (a
 * trainer's update, between its passes) changes the model. */
float *model_param_data(tfm_model *m);

/** 1 if a parameter is NaN or infinite, naming the first one: its tensor (tied tensors are checked
 * once, under their owner's name), the index inside it and the value; 0 if every one is finite. */
int model_params_non_finite(const tfm_model *m, const char **tensor, size_t *index, float *value);

#endif
