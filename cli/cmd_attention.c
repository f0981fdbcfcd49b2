/* tfm attention: the attention weights of one sentence under a model (include/tfm/attention.h) —
 * encoder self-attention, decoder self-attention and encoder–decoder (cross) attention, per layer
 * and head — as JSON or CSV, and with --png one heatmap per head with the subwords on the axes
 * (cli/attention_png.h). An encoder–decoder model without --tgt attends over its own greedy
 * translation of --src; a decoder-only model reads --src as its text (BOS first); an encoder-only
 * one (with a tokenizer stored, e.g. tfm init --arch encoder-only --tokenizer) has its encoder's maps. docs/STUDY.md, "Attention maps". */
#define _POSIX_C_SOURCE 200809L /* mkdir */
#include "args.h"
#include "attention_png.h"
#include "commands.h"
#include "kernel_env.h"
#include "output.h"
#include "text_io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run(int argc, char **argv);

const cli_command cmd_attention = {
    "attention", "attention weights of one sentence per layer and head (JSON/CSV; --png heatmaps)",
    "tfm attention --model M --src TEXT [--tgt TEXT] [--format json|csv] [--output F] [--png DIR]", run};

/* One sentence's two sides: ids and their pieces (labels). */
typedef struct {
    int32_t *ids;
    int n;
    const char **lab;
} side;

static void side_free(side *s) {
    free(s->ids);
    free((void *)s->lab);
    memset(s, 0, sizeof *s);
}

static int side_labels(const tfm_tokenizer *tok, side *s) {
    s->lab = malloc(sizeof *s->lab * (size_t)(s->n ? s->n : 1));
    if (!s->lab) return 0;
    for (int i = 0; i < s->n; i++) {
        const char *p = tfm_tokenizer_id_to_piece(tok, s->ids[i]);
        s->lab[i] = p ? p : "?";
    }
    return 1;
}

/* Encodes `text` (flag names it in errors); with bos, the id `first` first (BOS, or an
 * encoder–decoder model's decoder start token). Refuses blank text and more than max_len tokens
 * (an attention map of a cut sentence would mislead). */
static int encode_side(const char *flag, const char *text, const tfm_tokenizer *tok, int bos, int32_t first,
                       int max_len, side *s) {
    if (tfm_text_is_blank(text, strlen(text))) {
        cli_error("attention", "%s is empty: give a sentence to attend over", flag);
        return 0;
    }
    int32_t *ids = NULL;
    size_t n = 0;
    if (tfm_tokenizer_encode(tok, text, strlen(text), &ids, &n) != TFM_OK) {
        cli_error("attention", "%s: %s", flag, tfm_last_error());
        return 0;
    }
    if (n + (size_t)bos > (size_t)max_len) {
        cli_error("attention", "%s has %zu subword tokens%s, more than the model's max_len %d", flag, n,
                  bos ? " after BOS" : "", max_len);
        free(ids);
        return 0;
    }
    s->n = (int)n + bos;
    s->ids = malloc(sizeof *s->ids * (size_t)s->n);
    if (!s->ids) {
        free(ids);
        cli_error("attention", "out of memory");
        return 0;
    }
    if (bos) s->ids[0] = first;
    memcpy(s->ids + bos, ids, n * sizeof *ids);
    free(ids);
    return side_labels(tok, s);
}

/* The greedy translation of src as the decoder input (the decoder start token + its tokens). */
static int translate_side(tfm_context *ctx, const tfm_tokenizer *tok, const side *src, side *t) {
    const int max_len = tfm_model_config(tfm_context_model(ctx))->max_len;
    tfm_decode_config dc = tfm_decode_config_default();
    t->ids = malloc(sizeof *t->ids * (size_t)(max_len + 1));
    int n = 0;
    if (!t->ids || tfm_model_translate(ctx, &dc, 1, src->n, src->ids, t->ids + 1, max_len, &n) != TFM_OK) {
        cli_error("attention", "translating --src: %s", t->ids ? tfm_last_error() : "out of memory");
        return 0;
    }
    t->ids[0] = tfm_config_decoder_start(tfm_model_config(tfm_context_model(ctx)));
    t->n = n + 1;
    return side_labels(tok, t);
}

/* JSON string: quotes, backslashes and control characters escaped; UTF-8 passed through. */
static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* CSV field: quoted, quotes doubled (RFC 4180). */
static void csv_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void json_labels(FILE *f, const char *key, const side *s) {
    fprintf(f, "  \"%s\": [", key);
    for (int i = 0; i < s->n; i++) {
        if (i) fputs(", ", f);
        json_str(f, s->lab[i]);
    }
    fputs("],\n", f);
}

typedef struct {
    tfm_attn_kind kind;
    int layers;
    const side *q, *k;
    const char *qname, *kname;
} map_set;

static int write_maps(tfm_context *ctx, const map_set *sets, int n_sets, int csv, const char *model_path,
                      const side *src, const side *tgt, const char *tgt_from, cli_output *o) {
    FILE *f = o->f;
    const tfm_config *c = tfm_model_config(tfm_context_model(ctx));
    if (csv) {
        fprintf(f, "kind,layer,head,query,key,query_token,key_token,weight\n");
    } else {
        fputs("{\n  \"model\": ", f);
        json_str(f, model_path);
        fprintf(f, ",\n  \"arch\": \"%s\",\n  \"pe\": \"%s\",\n  \"n_heads\": %d,\n", tfm_arch_name(c->arch),
                tfm_pe_name(c->pe), c->n_heads);
        if (src->n) json_labels(f, "src_tokens", src);
        if (tgt->n) json_labels(f, "tgt_tokens", tgt);
        if (tgt_from) fprintf(f, "  \"tgt_from\": \"%s\",\n", tgt_from);
        fputs("  \"maps\": [", f);
    }
    int first = 1;
    for (int m = 0; m < n_sets; m++)
        for (int l = 0; l < sets[m].layers; l++) {
            int H, Tq, Tk;
            const float *w = tfm_context_attention(ctx, sets[m].kind, l, &H, &Tq, &Tk);
            if (!w) {
                cli_error("attention", "no %s weights at layer %d", tfm_attn_kind_name(sets[m].kind), l);
                return 0;
            }
            for (int h = 0; h < H; h++) {
                const float *wh = w + (size_t)h * (size_t)Tq * (size_t)Tk;
                if (!csv) {
                    fprintf(f, "%s\n    {\"kind\": \"%s\", \"layer\": %d, \"head\": %d, \"queries\": \"%s\", \"keys\": "
                               "\"%s\", \"weights\": [",
                            first ? "" : ",", tfm_attn_kind_name(sets[m].kind), l, h, sets[m].qname, sets[m].kname);
                    first = 0;
                }
                for (int q = 0; q < Tq; q++) {
                    if (!csv) fprintf(f, "%s[", q ? ", " : "");
                    for (int k = 0; k < Tk; k++) {
                        const double v = (double)wh[(size_t)q * (size_t)Tk + (size_t)k];
                        if (csv) {
                            fprintf(f, "%s,%d,%d,%d,%d,", tfm_attn_kind_name(sets[m].kind), l, h, q, k);
                            csv_str(f, sets[m].q->lab[q]);
                            fputc(',', f);
                            csv_str(f, sets[m].k->lab[k]);
                            fprintf(f, ",%.9g\n", v);
                        } else {
                            fprintf(f, "%s%.9g", k ? ", " : "", v);
                        }
                    }
                    if (!csv) fputc(']', f);
                }
                if (!csv) fputs("]}", f);
            }
        }
    if (!csv) fputs("\n  ]\n}\n", f);
    return 1;
}

/* One PNG per (kind, layer, head) in dir: <kind>_l<layer>_h<head>.png; each named on stderr with its size. */
static int write_pngs(tfm_context *ctx, const map_set *sets, int n_sets, const char *dir) {
    for (int m = 0; m < n_sets; m++)
        for (int l = 0; l < sets[m].layers; l++) {
            int H, Tq, Tk;
            const float *w = tfm_context_attention(ctx, sets[m].kind, l, &H, &Tq, &Tk);
            for (int h = 0; w && h < H; h++) {
                char path[4200], title[160];
                int W = 0, Ht = 0;
                snprintf(path, sizeof path, "%s/%s_l%d_h%d.png", dir, tfm_attn_kind_name(sets[m].kind), l, h);
                snprintf(title, sizeof title, "%s attention, layer %d, head %d (rows: %s queries, columns: %s keys)",
                         tfm_attn_kind_name(sets[m].kind), l, h, sets[m].qname, sets[m].kname);
                if (!attention_png_write("attention", path, title, w + (size_t)h * (size_t)Tq * (size_t)Tk, Tq, Tk,
                                         sets[m].q->lab, sets[m].k->lab, &W, &Ht))
                    return 0;
                fprintf(stderr, "tfm attention: wrote %s (%d x %d)\n", path, W, Ht);
            }
        }
    return 1;
}

static int run(int argc, char **argv) {
    const char *model_path = NULL, *src_text = NULL, *tgt_text = NULL, *format = "json", *output = NULL, *png = NULL;
    cli_opt opts[] = {
        {"--model", OPT_STR, &model_path, 1, "a model with its tokenizer (.safetensors): encoder-decoder, decoder-only "
                                             "or encoder-only"},
        {"--src", OPT_STR, &src_text, 1, "the sentence (decoder-only: the text)"},
        {"--tgt", OPT_STR, &tgt_text, 0, "encoder-decoder: the target the decoder reads (default: its greedy "
                                         "translation of --src)"},
        {"--format", OPT_STR, &format, 0, "json or csv"},
        {"--output", OPT_STR, &output, 0, "write the weights here (default: standard output)"},
        {"--png", OPT_STR, &png, 0, "also draw one heatmap per layer and head into this existing folder"},
    };
    int r = cli_parse(&cmd_attention, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    const int csv = strcmp(format, "csv") == 0;
    if (!csv && strcmp(format, "json") != 0) {
        cli_error("attention", "--format must be json or csv, got '%s'", format);
        return EXIT_USAGE;
    }
    struct stat sb;
    if (png && !attention_png_library()) {
        cli_error("attention", "--png: this tfm was built without cairo (apt-get install libcairo2-dev and rebuild)");
        return EXIT_USAGE;
    }
    if (png && (stat(png, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        cli_error("attention", "--png %s is not an existing folder", png);
        return EXIT_RUNTIME;
    }
    const cli_path ins[] = {{"--model", model_path}}, outs[] = {{"--output", output}};
    if (!cli_outputs_ok("attention", ins, 1, outs, 1)) return EXIT_RUNTIME;
    tfm_model *m = NULL;
    tfm_tokenizer *tok = NULL;
    tfm_context *ctx = NULL;
    side src = {0}, tgt = {0};
    int rc = EXIT_RUNTIME;
    if (tfm_model_load(model_path, &m) != TFM_OK) {
        cli_error("attention", "%s", tfm_last_error());
        goto done;
    }
    const tfm_config *c = tfm_model_config(m);
    if (c->arch == TFM_ARCH_ENCODER_ONLY && tgt_text) {
        cli_error("attention", "%s is an encoder-only model: it has no decoder, so --tgt has nothing to attend with "
                               "(give --src alone)", model_path);
        rc = EXIT_USAGE;
        goto done;
    }
    if (c->arch == TFM_ARCH_DECODER_ONLY && tgt_text) {
        cli_error("attention", "%s is a decoder-only model: it reads one text, give it as --src (no --tgt)", model_path);
        rc = EXIT_USAGE;
        goto done;
    }
    if (!model_tokenizer("attention", model_path, m, &tok)) goto done;
    if (tfm_context_create_opts(m, cli_kernels(), &ctx) != TFM_OK) {
        cli_error("attention", "%s", tfm_last_error());
        goto done;
    }
    const int dec_only = c->arch == TFM_ARCH_DECODER_ONLY;
    const char *tgt_from = NULL;
    if (dec_only) {
        if (!encode_side("--src", src_text, tok, 1, tfm_tokenizer_bos_id(tok), c->max_len, &tgt)) goto done;
    } else {
        if (!encode_side("--src", src_text, tok, 0, 0, c->max_len, &src)) goto done;
        if (c->arch == TFM_ARCH_ENCODER_ONLY) {
            /* the encoder alone */
        } else if (tgt_text) {
            if (!encode_side("--tgt", tgt_text, tok, 1, tfm_config_decoder_start(c), c->max_len, &tgt)) goto done;
            tgt_from = "--tgt";
        } else {
            if (!translate_side(ctx, tok, &src, &tgt)) goto done;
            tgt_from = "greedy translation";
        }
    }
    if (tfm_model_attention(ctx, src.n, src.ids, tgt.n, tgt.ids) != TFM_OK) {
        cli_error("attention", "%s", tfm_last_error());
        goto done;
    }
    map_set sets[3];
    int n_sets = 0;
    if (!dec_only) sets[n_sets++] = (map_set){TFM_ATTN_ENCODER_SELF, c->n_enc_layers, &src, &src, "source", "source"};
    if (c->arch != TFM_ARCH_ENCODER_ONLY)
        sets[n_sets++] = (map_set){TFM_ATTN_DECODER_SELF, c->n_dec_layers, &tgt, &tgt, "target", "target"};
    if (c->arch == TFM_ARCH_ENCODER_DECODER) sets[n_sets++] = (map_set){TFM_ATTN_CROSS, c->n_dec_layers, &tgt, &src, "target", "source"};
    cli_output o;
    if (!cli_output_open("attention", output, &o)) goto done;
    const int ok = write_maps(ctx, sets, n_sets, csv, model_path, &src, &tgt, tgt_from, &o);
    if (!cli_output_close("attention", &o, ok) || !ok) goto done;
    if (png && !write_pngs(ctx, sets, n_sets, png)) goto done;
    rc = 0;
done:
    side_free(&src);
    side_free(&tgt);
    tfm_context_free(ctx);
    tfm_tokenizer_free(tok);
    tfm_model_free(m);
    return rc;
}
