#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime, sigwait, nanosleep, strncasecmp */
/* Loading the models of tfm serve (serve.h): each --model once, then `workers` contexts of it.
 * A spec is PATH or PATH@SRC:TGT (the language pair of a translation model, e.g. m.st@en:es). */
#include "args.h"
#include "kernel_env.h"
#include "serve.h"
#include "text_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A language code as LibreTranslate's — letters, digits and '-' (en, pt-BR, zh-Hans) — or NLLB's
 * (eng_Latn: '_' too), 1-31 bytes. */
static int lang_ok(const char *s, size_t n) {
    if (n == 0 || n > 31) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              ((s[i] == '-' || s[i] == '_') && i > 0)))
            return 0;
    return 1;
}

/* Splits spec into m->path (spec itself, cut at the '@') and the pair; 0 after an error. */
static int parse_spec(const char *cmd, char *spec, serve_model *m) {
    char *at = strrchr(spec, '@');
    if (at) {
        char *colon = strchr(at + 1, ':');
        if (!colon || !lang_ok(at + 1, (size_t)(colon - at - 1)) || !lang_ok(colon + 1, strlen(colon + 1))) {
            cli_error(cmd, "--model %s: after '@' give the language pair as SRC:TGT (e.g. m.safetensors@en:es)", spec);
            return 0;
        }
        memcpy(m->src, at + 1, (size_t)(colon - at - 1));
        strcpy(m->tgt, colon + 1);
        *at = '\0';
    }
    m->path = spec;
    /* the name: the last path component without a trailing '/' or '.safetensors' */
    size_t len = strlen(spec);
    while (len > 1 && spec[len - 1] == '/') len--;
    size_t start = len;
    while (start > 0 && spec[start - 1] != '/') start--;
    size_t n = len - start;
    const char *ext = ".safetensors";
    if (n > strlen(ext) && memcmp(spec + len - strlen(ext), ext, strlen(ext)) == 0) n -= strlen(ext);
    if (n >= sizeof m->name) n = sizeof m->name - 1;
    memcpy(m->name, spec + start, n);
    m->name[n] = '\0';
    return 1;
}

/* Opens m (weights, tokenizer) and checks its kind against its pair; 0 after an error. */
static int open_one(const char *cmd, serve_model *m) {
    /* any format (a tfm checkpoint, a Hugging Face BERT or Marian folder): the arch decides */
    if (tfm_model_load(m->path, &m->model) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    const tfm_arch a = tfm_model_config(m->model)->arch;
    m->kind = a == TFM_ARCH_ENCODER_DECODER ? SERVE_TRANSLATE : a == TFM_ARCH_DECODER_ONLY ? SERVE_GENERATE : SERVE_EMBED;
    if (m->kind == SERVE_EMBED) { /* the embedder opens it with its tokenizer and pooling */
        tfm_model_free(m->model);
        m->model = NULL;
        if (tfm_embedder_open(m->path, &m->emb) != TFM_OK) {
            cli_error(cmd, "%s", tfm_last_error());
            return 0;
        }
    } else if (!model_tokenizer(cmd, m->path, m->model, &m->tok)) {
        return 0;
    }
    if (m->kind == SERVE_TRANSLATE && !m->src[0]) {
        cli_error(cmd, "--model %s is a translation model: give its language pair as --model %s@SRC:TGT "
                       "(e.g. @en:es)", m->path, m->path);
        return 0;
    }
    if (m->kind != SERVE_TRANSLATE && m->src[0]) {
        cli_error(cmd, "--model %s@%s:%s: only a translation (encoder-decoder) model has a language pair", m->path,
                  m->src, m->tgt);
        return 0;
    }
    m->first_id = -1;
    if (m->kind == SERVE_TRANSLATE && tfm_tokenizer_lang(m->tok, 0, NULL)) {
        /* a multilingual tokenizer (NLLB): the pair is its codes; each source row then carries
         * SRC's code and every translation starts with TGT's (docs/NLLB.md) */
        if (tfm_tokenizer_set_langs(m->tok, m->src, m->tgt, 0) != TFM_OK) {
            cli_error(cmd, "--model %s@%s:%s: %s", m->path, m->src, m->tgt, tfm_last_error());
            return 0;
        }
        m->first_id = tfm_tokenizer_forced_first(m->tok);
    }
    return 1;
}

/* Creates m's `workers` contexts and starts its threads; 0 after an error. */
static int start_one(const char *cmd, serve_state *s, serve_model *m) {
    const tfm_model *weights = m->kind == SERVE_EMBED ? tfm_embedder_model(m->emb) : m->model;
    m->ctx = calloc((size_t)s->workers, sizeof *m->ctx);
    m->busy = calloc((size_t)s->workers, 1);
    if (!m->ctx || !m->busy) {
        cli_error(cmd, "out of memory for %d contexts", s->workers);
        return 0;
    }
    for (int i = 0; i < s->workers; i++)
        if (tfm_context_create_opts(weights, cli_kernels(), &m->ctx[i]) != TFM_OK) {
            cli_error(cmd, "%s", tfm_last_error());
            return 0;
        }
    if ((m->kind == SERVE_TRANSLATE && !serve_batcher_start(s, m)) || (m->kind == SERVE_GENERATE && !serve_gen_start(s, m))) {
        cli_error(cmd, "cannot start the threads of %s", m->path);
        return 0;
    }
    return 1;
}

int serve_models_start(const char *cmd, serve_state *s) {
    for (int i = 0; i < s->n_models; i++)
        if (!start_one(cmd, s, &s->models[i])) return 0;
    return 1;
}

int serve_models_open(const char *cmd, serve_state *s, char **specs, int n) {
    s->models = calloc((size_t)n, sizeof *s->models);
    if (!s->models) return 0;
    s->n_models = n;
    for (int i = 0; i < n; i++) {
        serve_model *m = &s->models[i];
        if (!parse_spec(cmd, specs[i], m) || !open_one(cmd, m)) return 0;
        for (int j = 0; j < i; j++)
            if (strcmp(s->models[j].name, m->name) == 0) {
                cli_error(cmd, "--model %s and --model %s have the same name '%s'", s->models[j].path, m->path,
                          m->name);
                return 0;
            }
        fprintf(stderr, "tfm serve: loaded %s as '%s' (%s%s%s%s)\n", m->path, m->name,
                m->kind == SERVE_TRANSLATE ? "translation " : m->kind == SERVE_GENERATE ? "completions" : "embeddings",
                m->src, m->kind == SERVE_TRANSLATE ? "->" : "", m->tgt);
    }
    return 1;
}

void serve_models_free(serve_state *s) {
    for (int i = 0; s->models && i < s->n_models; i++) {
        serve_model *m = &s->models[i];
        serve_batcher_stop(m); /* their threads use the contexts */
        serve_gen_stop(m);
        for (int k = 0; m->ctx && k < s->workers; k++) tfm_context_free(m->ctx[k]);
        free(m->ctx);
        free(m->busy);
        tfm_tokenizer_free(m->tok);
        tfm_embedder_free(m->emb);
        tfm_model_free(m->model);
    }
    free(s->models);
    s->models = NULL;
    s->n_models = 0;
}
