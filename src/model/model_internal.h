/* The whole inside of the model layer, for src/model/ itself and the tests: each concern has its
 * own header, and the other layers include only those they use (tests/build/check_layering.sh
 * refuses this one outside src/model/). */
#ifndef TFM_MODEL_INTERNAL_H
#define TFM_MODEL_INTERNAL_H

#include "activations.h"   /* the forward pass's saved activations and their layout */
#include "checkpoint.h"    /* the configuration as metadata; extra tensors beside the model's */
#include "kv_cache.h"      /* incremental decoding */
#include "model_context.h" /* struct tfm_context, its workspace, the forward pass */
#include "model_grad.h"    /* the backward pass */
#include "model_params.h"  /* struct tfm_model, its parameters as a whole */
#include "pe.h"
#include "stack.h"

#endif
