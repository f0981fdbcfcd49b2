/* The table of position-encoding kinds (pe.h), indexed by tfm_pe, and the checks every kind shares. */
#include "pe.h"

#include "core_internal.h"
#include "tfm/names.h"

static const pe_kind *const k_kinds[] = {
    [TFM_PE_SINUSOIDAL] = &pe_kind_sinusoidal,
    [TFM_PE_NONE] = &pe_kind_none,
    [TFM_PE_LEARNED] = &pe_kind_learned,
    [TFM_PE_SHAW] = &pe_kind_shaw,
    [TFM_PE_FLOATER] = &pe_kind_floater,
    [TFM_PE_T5] = &pe_kind_t5,
    [TFM_PE_ROPE] = &pe_kind_rope,
    [TFM_PE_ALIBI] = &pe_kind_alibi,
};

static const pe_kind *kind_of(tfm_pe pe) {
    const size_t i = (size_t)pe;
    return i < sizeof k_kinds / sizeof k_kinds[0] ? k_kinds[i] : NULL;
}

/* Each option: its bit, whether cfg holds a value other than the default, its metadata key. */
static tfm_status check_options(const tfm_config *c, const pe_kind *k) {
    const struct {
        unsigned bit;
        int set;
        const char *key, *flag;
    } opts[] = {
        {PE_OPT_LAYOUT, c->pe_layout != TFM_PE_LAYOUT_INTERLEAVED, "pe_layout", "--pe-layout"},
        {PE_OPT_ZERO_PAD, c->pe_zero_pad != 0, "pe_zero_pad", "--pe-zero-pad"},
        {PE_OPT_SCALE, c->pe_scale != 0, "pe_scale", "--pe-scale"},
        {PE_OPT_MAX_DISTANCE, c->pe_max_distance != 0, "pe_max_distance", "--pe-max-distance"},
        {PE_OPT_BUCKETS, c->pe_buckets != 0, "pe_buckets", "--pe-buckets"},
        {PE_OPT_SHAW_VALUES, c->pe_shaw_values != 0, "pe_shaw_values", "--pe-shaw-values"},
        {PE_OPT_ROPE_PAIRING, c->rope_pairing != TFM_ROPE_INTERLEAVED, "rope_pairing", "--rope-pairing"},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        RETURN_IF(opts[i].set && !(k->options & opts[i].bit), TFM_ERR_INVALID_ARG,
                  "%s (flag %s) is not an option of position encoding '%s'", opts[i].key, opts[i].flag, k->name);
    RETURN_IF(tfm_pe_layout_name(c->pe_layout) == NULL, TFM_ERR_INVALID_ARG, "pe_layout %d is not one of %s",
              (int)c->pe_layout, tfm_pe_layout_names());
    RETURN_IF(tfm_rope_pairing_name(c->rope_pairing) == NULL, TFM_ERR_INVALID_ARG,
              "rope_pairing %d is not one of %s", (int)c->rope_pairing, tfm_rope_pairing_names());
    RETURN_IF(c->pe_zero_pad != 0 && c->pe_zero_pad != 1, TFM_ERR_INVALID_ARG, "pe_zero_pad must be 0 or 1");
    RETURN_IF(c->pe_scale != 0 && c->pe_scale != 1, TFM_ERR_INVALID_ARG, "pe_scale must be 0 or 1");
    RETURN_IF(c->pe_shaw_values != 0 && c->pe_shaw_values != 1, TFM_ERR_INVALID_ARG, "pe_shaw_values must be 0 or 1");
    RETURN_IF(c->pe_max_distance < 0 || c->pe_max_distance > 1048576, TFM_ERR_INVALID_ARG,
              "pe_max_distance must be in [0, 1048576] (0: the encoding's default), got %d", c->pe_max_distance);
    RETURN_IF(c->pe_buckets < 0 || c->pe_buckets > 65536, TFM_ERR_INVALID_ARG,
              "pe_buckets must be in [0, 65536] (0: the encoding's default), got %d", c->pe_buckets);
    return TFM_OK;
}

tfm_status pe_validate(const tfm_config *cfg) {
    const pe_kind *k = kind_of(cfg->pe);
    if (!k) {
        const char *name = tfm_pe_name(cfg->pe);
        if (name) return tfm_set_error(TFM_ERR_UNSUPPORTED, "position encoding '%s' is not in this build", name);
        return tfm_set_error(TFM_ERR_INVALID_ARG, "position encoding %d is not one of %s", (int)cfg->pe,
                             tfm_pe_names());
    }
    TRY(check_options(cfg, k));
    return k->validate ? k->validate(cfg) : TFM_OK;
}

void pe_fill_defaults(tfm_config *cfg) {
    const pe_kind *k = kind_of(cfg->pe);
    if (k && k->fill_defaults) k->fill_defaults(cfg);
}

const pe_kind *pe_of(const tfm_config *cfg) {
    const pe_kind *k = kind_of(cfg->pe);
    TFM_ASSERT(k != NULL); /* tfm_config_validate admits only the kinds of the table */
    return k;
}
