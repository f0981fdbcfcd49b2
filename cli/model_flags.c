#include "model_flags.h"

#include <stdio.h>
#include <string.h>

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

/* The enum field of the configuration that a string flag of f names, or NULL. */
static const int *enum_field(const model_flags *f, const tfm_config *c, const void *dst) {
    if (dst == &f->arch) return (const int *)&c->arch;
    if (dst == &f->activation) return (const int *)&c->activation;
    if (dst == &f->pe) return (const int *)&c->pe;
    if (dst == &f->pe_layout) return (const int *)&c->pe_layout;
    if (dst == &f->rope_pairing) return (const int *)&c->rope_pairing;
    return NULL;
}

int model_flags_mismatch(const char *cmd, const cli_opt *opts, size_t n_opts, int argc, char **argv,
                         model_flags *f, const tfm_config *have, char *msg, size_t cap) {
    if (!cli_given_within(argc, argv, opts, n_opts, f, f + 1)) return 0;
    /* the names given, each into its enum field (no whole-config validation: the fields not given
     * hold new-model defaults, which need not fit the flags given — the checkpoint's do) */
    if (tfm_arch_from_name(f->arch, &f->c.arch) != TFM_OK ||
        tfm_activation_from_name(f->activation, &f->c.activation) != TFM_OK ||
        tfm_pe_from_name(f->pe, &f->c.pe) != TFM_OK || tfm_pe_layout_from_name(f->pe_layout, &f->c.pe_layout) != TFM_OK ||
        tfm_rope_pairing_from_name(f->rope_pairing, &f->c.rope_pairing) != TFM_OK) {
        cli_error(cmd, "unknown name in --arch, --activation, --pe, --pe-layout or --rope-pairing (%s, %s, %s, %s, %s)",
                  f->arch, f->activation, f->pe, f->pe_layout, f->rope_pairing);
        return -1;
    }
    /* numbers are compared as the model runs them (tfm_config_effective): --pe-buckets 32 is what a
     * stored 0 ("the default") means; the defaults are those of the checkpoint's encoding (a --pe
     * that differs is reported by its own flag) */
    tfm_config ours_eff = f->c;
    ours_eff.pe = have->pe;
    ours_eff = tfm_config_effective(&ours_eff);
    const tfm_config have_eff = tfm_config_effective(have);
    for (int i = 1; i < argc; i++) {
        size_t k = 0;
        while (k < n_opts && strcmp(opts[k].name, argv[i]) != 0) k++;
        if (k == n_opts) continue;
        const cli_opt *o = &opts[k];
        if (o->kind != OPT_FLAG) i++;
        const char *dst = o->dst;
        if (!(dst >= (const char *)f && dst < (const char *)(f + 1))) continue;
        if (o->kind == OPT_STR) { /* a name, resolved into its enum field of f->c */
            const int *want = enum_field(f, &f->c, dst), *got = enum_field(f, have, dst);
            if (want && *want != *got) {
                snprintf(msg, cap, "%s %s (the checkpoint has %s)", o->name, *(const char *const *)(const void *)dst,
                         dst == (const char *)&f->pe ? tfm_pe_name(have->pe)
                         : dst == (const char *)&f->arch ? tfm_arch_name(have->arch)
                         : dst == (const char *)&f->activation ? tfm_activation_name(have->activation)
                         : dst == (const char *)&f->pe_layout ? tfm_pe_layout_name(have->pe_layout)
                                                              : tfm_rope_pairing_name(have->rope_pairing));
                return 1;
            }
            continue;
        }
        /* an int or float field of f->c: the same field of the checkpoint's configuration */
        const size_t off = (size_t)(dst - (const char *)&f->c);
        const char *ours = (const char *)&ours_eff + off, *theirs = (const char *)&have_eff + off;
        if (o->kind == OPT_FLOAT) {
            float a, b;
            memcpy(&a, ours, sizeof a), memcpy(&b, theirs, sizeof b);
            if (a != b) {
                snprintf(msg, cap, "%s %g (the checkpoint has %g)", o->name, (double)a, (double)b);
                return 1;
            }
        } else {
            int a, b;
            memcpy(&a, ours, sizeof a), memcpy(&b, theirs, sizeof b);
            if (a != b) {
                snprintf(msg, cap, "%s %d (the checkpoint has %d)", o->name, a, b);
                return 1;
            }
        }
    }
    return 0;
}
