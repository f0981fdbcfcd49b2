/* The OpenAI-compatible /v1/models and /v1/embeddings of tfm serve (routes.h); /v1/completions is
 * complete.c. */
#include "routes.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int serve_number(const cJSON *body, const char *name, int integer, double lo, double hi, double *v, serve_reply *r) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(body, name);
    if (!f || cJSON_IsNull(f)) return 1;
    if (!cJSON_IsNumber(f) || (integer && f->valuedouble != floor(f->valuedouble)) || !(f->valuedouble >= lo) ||
        !(f->valuedouble <= hi)) {
        serve_error(r, 400, "%s: must be %s in [%g, %g]", name, integer ? "an integer" : "a number", lo, hi);
        return 0;
    }
    *v = f->valuedouble;
    return 1;
}

void serve_models_list(serve_state *s, serve_reply *r) {
    cJSON *j = cJSON_CreateObject(), *data = cJSON_AddArrayToObject(j, "data");
    cJSON_AddStringToObject(j, "object", "list");
    for (int i = 0; data && i < s->n_models; i++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddItemToArray(data, m);
        cJSON_AddStringToObject(m, "id", s->models[i].name);
        cJSON_AddStringToObject(m, "object", "model");
        cJSON_AddNumberToObject(m, "created", 0);
        cJSON_AddStringToObject(m, "owned_by", "tfm");
        const serve_kind k = s->models[i].kind;
        /* an extension: what the model serves */
        cJSON_AddStringToObject(m, "tfm_route", k == SERVE_TRANSLATE ? "/translate" : k == SERVE_GENERATE ? "/v1/completions"
                                                                                                         : "/v1/embeddings");
    }
    serve_json(r, j);
}

/* The d floats of v as OpenAI's encoding_format "base64": their little-endian IEEE-754 bytes in
 * base64 (RFC 4648, with padding), as a cJSON string; NULL when out of memory. */
static cJSON *base64_floats(const float *v, size_t d) {
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const size_t n = 4 * d;
    char *out = malloc(4 * ((n + 2) / 3) + 1);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = 0;
        for (size_t k = 0; k < 3; k++) {
            uint32_t bits = 0;
            if (i + k < n) memcpy(&bits, &v[(i + k) / 4], sizeof bits);
            w = w << 8 | ((bits >> (8 * ((i + k) % 4))) & 0xFF); /* byte (i+k)%4 of the float, little-endian */
        }
        for (size_t k = 0; k < 4; k++) out[o++] = i + k <= n ? digits[(w >> (18 - 6 * k)) & 63] : '=';
    }
    out[o] = '\0';
    cJSON *j = cJSON_CreateString(out);
    free(out);
    return j;
}

void serve_embeddings(serve_state *s, const cJSON *body, serve_reply *r) {
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(body, "encoding_format");
    const int b64 = cJSON_IsString(fmt) && strcmp(fmt->valuestring, "base64") == 0;
    if (fmt && !cJSON_IsNull(fmt) && !b64 && !(cJSON_IsString(fmt) && strcmp(fmt->valuestring, "float") == 0)) {
        serve_error(r, 400, "encoding_format: \"float\" or \"base64\"");
        return;
    }
    serve_model *m = serve_find_model(s, SERVE_EMBED, body, r);
    const char **in = NULL;
    size_t n = 0;
    int is_array;
    if (!m || !serve_strings(body, "input", &in, &n, &is_array, r)) return;
    const size_t d = (size_t)tfm_embedder_dim(m->emb);
    float *v = malloc(n * d * sizeof *v);
    size_t *lens = malloc(n * sizeof *lens);
    tfm_context *ctx = v && lens ? serve_acquire(s, m, r) : NULL;
    if (!v || !lens) serve_error(r, 500, "out of memory");
    if (ctx) {
        for (size_t i = 0; i < n; i++) lens[i] = strlen(in[i]);
        tfm_status st = tfm_embedder_encode(m->emb, ctx, in, lens, n, "input", v);
        serve_release(s, m, ctx);
        /* usage: the tokens the encoder read, [CLS] and [SEP] included (as llama.cpp's server counts its BOS) */
        size_t tokens = 0;
        for (size_t i = 0; st == TFM_OK && i < n; i++) {
            size_t k = 0;
            st = tfm_embedder_count_tokens(m->emb, in[i], lens[i], &k);
            tokens += k;
        }
        if (st != TFM_OK) {
            serve_error(r, st == TFM_ERR_NOMEM ? 500 : 400, "%s", tfm_last_error());
        } else {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "object", "list");
            cJSON *data = cJSON_AddArrayToObject(j, "data");
            for (size_t i = 0; data && i < n; i++) {
                cJSON *e = cJSON_CreateObject(), *vec = b64 ? base64_floats(v + i * d, d) : cJSON_CreateArray();
                cJSON_AddItemToArray(data, e);
                cJSON_AddStringToObject(e, "object", "embedding");
                cJSON_AddNumberToObject(e, "index", (double)i);
                /* each float with 9 significant digits: read back as a float it is the same float
                 * (cJSON's own printing rounds to 15 digits when those come within an epsilon) */
                for (size_t c = 0; vec && !b64 && c < d; c++) {
                    char num[32];
                    snprintf(num, sizeof num, "%.9g", (double)v[i * d + c]);
                    cJSON_AddItemToArray(vec, cJSON_CreateRaw(num));
                }
                cJSON_AddItemToObject(e, "embedding", vec);
            }
            cJSON_AddStringToObject(j, "model", m->name);
            cJSON *usage = cJSON_AddObjectToObject(j, "usage");
            cJSON_AddNumberToObject(usage, "prompt_tokens", (double)tokens);
            cJSON_AddNumberToObject(usage, "total_tokens", (double)tokens);
            serve_json(r, j);
        }
    }
    free(lens);
    free(v);
    free(in);
}
