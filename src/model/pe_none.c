/* No position encoding at all: x = E[id]·√d_model and nothing else. Without it self-attention is
 * permutation-equivariant (Vaswani et al. 2017, §3.5: "our model contains no recurrence and no
 * convolution"), so the encoder's outputs permute with its inputs — the demonstration of why an
 * encoding is needed (tests/unit/model/test_pe_kinds.c). A kind with no hooks and no tensors. */
#include "pe.h"

const pe_kind pe_kind_none = {
    .name = "none",
};
