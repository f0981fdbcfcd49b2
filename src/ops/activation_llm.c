/* The activations of the Hugging Face language-model families (docs/LLM.md): GPT-2's tanh GELU and
 * Llama's gated SiLU (SwiGLU). Each loop is a pool job (pool.h) of OPS_ELEM_CHUNK elements per
 * chunk, element-wise, so the result does not depend on the thread count. Inference only: no
 * backward (tfm trains neither family). */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

#include <math.h>

typedef struct {
    float *out;
    const float *inp;
    size_t F; /* glu: the hidden width; the input rows hold 2F (gate | up) */
} llm_act_job;

static void gelu_tanh_range(void *arg, size_t i0, size_t i1) {
    const llm_act_job *j = arg;
    /* transformers' NewGELUActivation, in its operation order:
     * 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) */
    const float k = 0.7978845608028654f; /* √(2/π) */
    for (size_t i = i0; i < i1; i++) {
        const float x = j->inp[i];
        j->out[i] = 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * (x * x * x))));
    }
}

void gelu_tanh_forward(float *out, const float *inp, size_t n) {
    llm_act_job j = {out, inp, 0};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), gelu_tanh_range, &j);
}

static void silu_glu_range(void *arg, size_t r0, size_t r1) {
    const llm_act_job *j = arg;
    const size_t F = j->F;
    for (size_t r = r0; r < r1; r++) {
        const float *gate = j->inp + r * 2 * F, *up = gate + F;
        float *o = j->out + r * F;
        for (size_t f = 0; f < F; f++) {
            const float g = gate[f];
            o[f] = g / (1.0f + expf(-g)) * up[f]; /* silu(gate) · up, as LlamaMLP */
        }
    }
}

void silu_glu_forward(float *out, const float *pre, size_t N, size_t F) {
    llm_act_job j = {out, pre, F};
    ops_pool_for(N, (size_t)ops_rows_per_chunk(F), ops_team(N * F), silu_glu_range, &j);
}
