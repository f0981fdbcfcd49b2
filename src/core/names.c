/* The enum <-> name tables of include/tfm/names.h: one table per enum, written once. */
#include "core_internal.h"
#include "tfm/names.h"

#include <string.h>

typedef struct {
    int value;
    const char *name;
} name_entry;

typedef struct {
    const char *kind;        /* what the names name, for messages */
    const name_entry *table; /* [n] */
    size_t n;
    const char *list; /* the names as an English list: "a, b or c" */
} name_table;

#define TABLE(kind, t, list) {kind, t, sizeof t / sizeof t[0], list}

static const name_entry k_arch[] = {
    {TFM_ARCH_ENCODER_DECODER, "encoder-decoder"},
    {TFM_ARCH_DECODER_ONLY, "decoder-only"},
    {TFM_ARCH_ENCODER_ONLY, "encoder-only"},
};
static const name_entry k_activation[] = {{TFM_ACT_RELU, "relu"}, {TFM_ACT_GELU, "gelu"}, {TFM_ACT_SILU, "silu"}};
static const name_entry k_suppress[] = {
    {TFM_SUPPRESS_PAD_BOS, "pad_bos"}, {TFM_SUPPRESS_PAD, "pad"}, {TFM_SUPPRESS_NONE, "none"}};
static const name_entry k_pe[] = {
    {TFM_PE_SINUSOIDAL, "sinusoidal"}, {TFM_PE_NONE, "none"}, {TFM_PE_LEARNED, "learned"},
    {TFM_PE_FLOATER, "floater"},       {TFM_PE_SHAW, "shaw"}, {TFM_PE_T5, "t5"},
    {TFM_PE_ROPE, "rope"},             {TFM_PE_ALIBI, "alibi"},
};
static const name_entry k_pe_layout[] = {{TFM_PE_LAYOUT_INTERLEAVED, "interleaved"},
                                         {TFM_PE_LAYOUT_CONCAT, "concat"},
                                         {TFM_PE_LAYOUT_TENSOR2TENSOR, "tensor2tensor"}};
static const name_entry k_rope_pairing[] = {{TFM_ROPE_INTERLEAVED, "interleaved"}, {TFM_ROPE_HALF, "half"}};
static const name_entry k_optimizer[] = {{TFM_OPTIMIZER_ADAM, "adam"}, {TFM_OPTIMIZER_SGD, "sgd"}};
static const name_entry k_schedule[] = {{TFM_SCHEDULE_CONSTANT, "constant"}, {TFM_SCHEDULE_NOAM, "noam"}};
static const name_entry k_beam_stop[] = {{TFM_BEAM_STOP_FINISHED, "finished"}, {TFM_BEAM_STOP_BOUND, "bound"}};

static const name_table t_arch = TABLE("arch", k_arch, "encoder-decoder, decoder-only or encoder-only");
static const name_table t_activation = TABLE("activation", k_activation, "relu, gelu or silu");
static const name_table t_suppress = TABLE("suppressed ids", k_suppress, "pad_bos, pad or none");
static const name_table t_pe =
    TABLE("position encoding", k_pe, "sinusoidal, none, learned, floater, shaw, t5, rope or alibi");
static const name_table t_pe_layout = TABLE("sinusoidal layout", k_pe_layout, "interleaved, concat or tensor2tensor");
static const name_table t_rope_pairing = TABLE("rope pairing", k_rope_pairing, "interleaved or half");
static const name_table t_optimizer = TABLE("optimizer", k_optimizer, "adam or sgd");
static const name_table t_schedule = TABLE("schedule", k_schedule, "constant or noam");
static const name_table t_beam_stop = TABLE("beam stop rule", k_beam_stop, "finished or bound");

static const char *name_of(const name_table *t, int value) {
    for (size_t i = 0; i < t->n; i++)
        if (t->table[i].value == value) return t->table[i].name;
    return NULL;
}

static tfm_status value_of(const name_table *t, const char *name, int *value) {
    RETURN_IF(!name, TFM_ERR_INVALID_ARG, "%s: no name given (must be %s)", t->kind, t->list);
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->table[i].name, name) == 0) {
            *value = t->table[i].value;
            return TFM_OK;
        }
    }
    return tfm_set_error(TFM_ERR_INVALID_ARG, "%s '%.60s' must be %s", t->kind, name, t->list);
}

const char *tfm_arch_name(tfm_arch arch) { return name_of(&t_arch, (int)arch); }
tfm_status tfm_arch_from_name(const char *name, tfm_arch *arch) {
    int v = 0;
    TRY(value_of(&t_arch, name, &v));
    *arch = (tfm_arch)v;
    return TFM_OK;
}
const char *tfm_arch_names(void) { return t_arch.list; }

const char *tfm_activation_name(tfm_activation activation) { return name_of(&t_activation, (int)activation); }
tfm_status tfm_activation_from_name(const char *name, tfm_activation *activation) {
    int v = 0;
    TRY(value_of(&t_activation, name, &v));
    *activation = (tfm_activation)v;
    return TFM_OK;
}
const char *tfm_activation_names(void) { return t_activation.list; }

const char *tfm_pe_name(tfm_pe pe) { return name_of(&t_pe, (int)pe); }
tfm_status tfm_pe_from_name(const char *name, tfm_pe *pe) {
    int v = 0;
    TRY(value_of(&t_pe, name, &v));
    *pe = (tfm_pe)v;
    return TFM_OK;
}
const char *tfm_pe_names(void) { return t_pe.list; }

const char *tfm_pe_layout_name(tfm_pe_layout layout) { return name_of(&t_pe_layout, (int)layout); }
tfm_status tfm_pe_layout_from_name(const char *name, tfm_pe_layout *layout) {
    int v = 0;
    TRY(value_of(&t_pe_layout, name, &v));
    *layout = (tfm_pe_layout)v;
    return TFM_OK;
}
const char *tfm_pe_layout_names(void) { return t_pe_layout.list; }

const char *tfm_rope_pairing_name(tfm_rope_pairing pairing) { return name_of(&t_rope_pairing, (int)pairing); }
tfm_status tfm_rope_pairing_from_name(const char *name, tfm_rope_pairing *pairing) {
    int v = 0;
    TRY(value_of(&t_rope_pairing, name, &v));
    *pairing = (tfm_rope_pairing)v;
    return TFM_OK;
}
const char *tfm_rope_pairing_names(void) { return t_rope_pairing.list; }

const char *tfm_optimizer_name(tfm_optimizer optimizer) { return name_of(&t_optimizer, (int)optimizer); }
tfm_status tfm_optimizer_from_name(const char *name, tfm_optimizer *optimizer) {
    int v = 0;
    TRY(value_of(&t_optimizer, name, &v));
    *optimizer = (tfm_optimizer)v;
    return TFM_OK;
}
const char *tfm_optimizer_names(void) { return t_optimizer.list; }

const char *tfm_schedule_name(tfm_schedule schedule) { return name_of(&t_schedule, (int)schedule); }
tfm_status tfm_schedule_from_name(const char *name, tfm_schedule *schedule) {
    int v = 0;
    TRY(value_of(&t_schedule, name, &v));
    *schedule = (tfm_schedule)v;
    return TFM_OK;
}
const char *tfm_schedule_names(void) { return t_schedule.list; }

const char *tfm_beam_stop_name(tfm_beam_stop stop) { return name_of(&t_beam_stop, (int)stop); }
tfm_status tfm_beam_stop_from_name(const char *name, tfm_beam_stop *stop) {
    int v = 0;
    TRY(value_of(&t_beam_stop, name, &v));
    *stop = (tfm_beam_stop)v;
    return TFM_OK;
}
const char *tfm_beam_stop_names(void) { return t_beam_stop.list; }

const char *tfm_suppress_name(tfm_suppress suppress) { return name_of(&t_suppress, (int)suppress); }
tfm_status tfm_suppress_from_name(const char *name, tfm_suppress *suppress) {
    int v = 0;
    TRY(value_of(&t_suppress, name, &v));
    *suppress = (tfm_suppress)v;
    return TFM_OK;
}
const char *tfm_suppress_names(void) { return t_suppress.list; }
