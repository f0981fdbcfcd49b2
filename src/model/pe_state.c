/* The per-context state of position encodings that keep one (pe.h pe_state: FLOATER's table and
 * its RK4 intermediates): one arena per context for every stack, grown on demand, never shrunk. */
#include "pe.h"

#include <string.h>

tfm_status pe_states_reserve(pe_states *s, const tfm_config *cfg, size_t positions, int training) {
    const pe_kind *k = pe_of(cfg);
    if (!k->state_floats) return TFM_OK;
    model_desc md;
    model_describe(cfg, &md);
    const pe_state *first = &s->stack[0];
    const int have = s->arena.base != NULL;
    if (!have || positions > first->positions || (training && !first->with_backward)) {
        /* lay out for the larger of what is held and what is asked, every stack alike */
        const size_t want = have && first->positions > positions ? first->positions : positions;
        const int back = training || (have && first->with_backward);
        const size_t floats = k->state_floats(cfg, want, back);
        /* the same takes count the bytes (base NULL), then hand out the pointers */
        tfm_arena counter = {NULL, 0, 0};
        for (int i = 0; i < md.n_stacks; i++) arena_take_f32(&counter, floats);
        arena_free(&s->arena);
        TRY(arena_init(&s->arena, counter.used, "the position encoding's state"));
        for (int i = 0; i < md.n_stacks; i++) {
            pe_state *st = &s->stack[i];
            st->buf = arena_take_f32(&s->arena, floats);
            st->positions = want;
            st->with_backward = back;
            st->n_valid = 0;
        }
    }
    for (int i = 0; i < md.n_stacks; i++) s->stack[i].training = training;
    return TFM_OK;
}

void pe_states_free(pe_states *s) {
    arena_free(&s->arena);
    memset(s, 0, sizeof *s);
}
