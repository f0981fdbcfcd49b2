#include "model_flags.h"

model_flags model_flags_default(void) {
    model_flags f;
    f.c = tfm_config_default();
    f.arch = tfm_arch_name(f.c.arch);
    f.activation = tfm_activation_name(f.c.activation);
    f.pe = tfm_pe_name(f.c.pe);
    f.pe_layout = tfm_pe_layout_name(f.c.pe_layout);
    f.rope_pairing = tfm_rope_pairing_name(f.c.rope_pairing);
    /* unset until model_flags_resolve fills in the architecture's default */
    f.c.n_enc_layers = f.c.norm_first = f.c.tie_embeddings = OPT_INT_UNSET;
    return f;
}

int model_flags_resolve(const char *cmd, model_flags *f) {
    if (tfm_arch_from_name(f->arch, &f->c.arch) != TFM_OK) {
        cli_error(cmd, "--arch must be %s, got '%s'", tfm_arch_names(), f->arch);
        return 0;
    }
    /* per-architecture defaults of the flags not given: decoder-only (docs/LM.md) has no encoder,
     * is pre-LN and ties its embedding to the generator (GPT-2); the others keep
     * tfm_config_default's (3 encoder layers, post-LN, untied) */
    const tfm_config d = tfm_config_default();
    const int lm = f->c.arch == TFM_ARCH_DECODER_ONLY;
    if (f->c.n_enc_layers == OPT_INT_UNSET) f->c.n_enc_layers = lm ? 0 : d.n_enc_layers;
    if (f->c.norm_first == OPT_INT_UNSET) f->c.norm_first = lm ? 1 : d.norm_first;
    if (f->c.tie_embeddings == OPT_INT_UNSET) f->c.tie_embeddings = lm ? 1 : d.tie_embeddings;
    if (tfm_activation_from_name(f->activation, &f->c.activation) != TFM_OK) {
        cli_error(cmd, "--activation must be %s, got '%s'", tfm_activation_names(), f->activation);
        return 0;
    }
    if (tfm_pe_from_name(f->pe, &f->c.pe) != TFM_OK) {
        cli_error(cmd, "--pe must be %s, got '%s'", tfm_pe_names(), f->pe);
        return 0;
    }
    if (tfm_pe_layout_from_name(f->pe_layout, &f->c.pe_layout) != TFM_OK) {
        cli_error(cmd, "--pe-layout must be %s, got '%s'", tfm_pe_layout_names(), f->pe_layout);
        return 0;
    }
    if (tfm_rope_pairing_from_name(f->rope_pairing, &f->c.rope_pairing) != TFM_OK) {
        cli_error(cmd, "--rope-pairing must be %s, got '%s'", tfm_rope_pairing_names(), f->rope_pairing);
        return 0;
    }
    if (tfm_config_validate(&f->c) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    return 1;
}
