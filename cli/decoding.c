#include "kernel_env.h"
#include "decoding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int make_config(const char *cmd, const decode_flags *f, tfm_decode_config *dc) {
    *dc = tfm_decode_config_default();
    dc->beam = f->beam;
    dc->lenpen = f->lenpen;
    dc->max_len_a = f->max_len_a;
    dc->max_len_b = f->max_len_b;
    dc->use_cache = !f->no_cache;
    if (f->beam < 1 || f->beam > 256 || f->batch < 1 || f->lenpen < 0 || f->max_len_a < 0 || f->max_len_b < 0) {
        cli_error(cmd, "--beam must be in [1, 256], --batch-size >= 1, --lenpen, --max-len-a and --max-len-b >= 0");
        return 0;
    }
    if (f->beam_stop && tfm_beam_stop_from_name(f->beam_stop, &dc->beam_stop) != TFM_OK) {
        cli_error(cmd, "--beam-stop: %s", tfm_last_error());
        return 0;
    }
    return memory_flag_ok(cmd, f->max_memory);
}

int translate_lines(const char *cmd, const char *input, const tfm_model *m, tfm_tokenizer *tok,
                    const tfm_decode_config *dc, int batch, char **lines, size_t n, char **out) {
    tfm_translate_stats st;
    const char *name = input && strcmp(input, "-") != 0 ? input : "<stdin>";
    tfm_context *ctx = NULL;
    tfm_status rc = tfm_context_create_opts(m, cli_kernels(), &ctx);
    const tfm_kernel_opts def = tfm_kernel_opts_default();
    if (rc == TFM_OK && memcmp(cli_kernels(), &def, sizeof def) != 0) { /* said when the environment chose */
        char kernels[96];
        fprintf(stderr, "tfm %s: kernels: %s\n", cmd, tfm_context_kernels(ctx, kernels, sizeof kernels));
    }
    if (rc == TFM_OK) rc = tfm_translate_text(ctx, tok, dc, (const char *const *)lines, n, batch, out, &st);
    tfm_context_free(ctx);
    if (rc != TFM_OK) {
        cli_error(cmd, "%s: %s", name, tfm_last_error());
        return 0;
    }
    if (st.n_truncated)
        fprintf(stderr, "tfm %s: warning: %zu source line(s) longer than the model's max_len %d tokens were cut "
                        "to it (first: line %zu)\n",
                cmd, st.n_truncated, tfm_model_config(m)->max_len, st.first_truncated + 1);
    double s = st.seconds > 0 ? st.seconds : 1e-9;
    fprintf(stderr, "tfm %s: %zu sentences in %.2f s: %.1f sentences/s, %.1f output tokens/s (beam %d)\n", cmd,
            st.sentences, st.seconds, (double)st.sentences / s, (double)st.out_tokens / s, dc->beam);
    return 1;
}


int apply_tgt_lang(const char *cmd, const tfm_tokenizer *tok, const char *lang, char **lines, size_t n) {
    if (!lang) return 1;
    char code[80];
    if (!lang[0] || strlen(lang) > 64 || strpbrk(lang, " \t<>")) {
        cli_error(cmd, "--tgt-lang '%s' must be a language code such as es or fra", lang);
        return 0;
    }
    snprintf(code, sizeof code, ">>%s<<", lang);
    const int32_t id = tfm_tokenizer_piece_to_id(tok, code);
    if (id < 0 || id == tfm_tokenizer_unk_id(tok)) {
        cli_error(cmd, "--tgt-lang %s: the model's vocabulary has no %s (a multilingual opus-mt model lists its "
                       "target languages as >>xx<< pieces in vocab.json)", lang, code);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (tfm_text_is_blank(lines[i], strlen(lines[i]))) continue; /* a blank line stays blank */
        const size_t len = strlen(code) + 1 + strlen(lines[i]) + 1;
        char *p = malloc(len);
        if (!p) {
            cli_error(cmd, "out of memory");
            return 0;
        }
        snprintf(p, len, "%s %s", code, lines[i]);
        free(lines[i]);
        lines[i] = p;
    }
    return 1;
}
