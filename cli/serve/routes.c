/* The routes of tfm serve (docs/SERVE.md): which path and method run what, /health, and the
 * LibreTranslate-compatible /languages and /translate. The OpenAI-compatible routes are in openai.c. */
#include "routes.h"

#include <stdlib.h>
#include <string.h>

/* English names of common codes, for /languages (LibreTranslate gives names); others use the code. */
static const char *lang_name(const char *code) {
    static const char *const names[][2] = {
        {"ar", "Arabic"},  {"de", "German"},     {"en", "English"}, {"es", "Spanish"},  {"fr", "French"},
        {"hi", "Hindi"},   {"it", "Italian"},    {"ja", "Japanese"}, {"ko", "Korean"},  {"nl", "Dutch"},
        {"pl", "Polish"},  {"pt", "Portuguese"}, {"ru", "Russian"}, {"tr", "Turkish"},  {"uk", "Ukrainian"},
        {"zh", "Chinese"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i][0], code) == 0) return names[i][1];
    return code;
}

/* GET /languages: [{"code", "name", "targets": [...]}] for every source language of a loaded pair. */
static void languages(serve_state *s, serve_reply *r) {
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; list && i < s->n_models; i++) {
        const serve_model *m = &s->models[i];
        if (m->kind != SERVE_TRANSLATE) continue;
        cJSON *entry = NULL;
        for (cJSON *e = list->child; e; e = e->next)
            if (strcmp(cJSON_GetObjectItemCaseSensitive(e, "code")->valuestring, m->src) == 0) entry = e;
        if (!entry) {
            entry = cJSON_CreateObject();
            cJSON_AddItemToArray(list, entry);
            cJSON_AddStringToObject(entry, "code", m->src);
            cJSON_AddStringToObject(entry, "name", lang_name(m->src));
            cJSON_AddArrayToObject(entry, "targets");
        }
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(entry, "targets"), cJSON_CreateString(m->tgt));
    }
    serve_json(r, list);
}

/* The translation model of the request's source and target; NULL after a 400. */
static serve_model *pair_model(serve_state *s, const cJSON *body, serve_reply *r) {
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(body, "source"), *tgt = cJSON_GetObjectItemCaseSensitive(body, "target");
    const char *bad = !cJSON_IsString(src) ? "source" : !cJSON_IsString(tgt) ? "target" : NULL;
    if (bad) {
        serve_error(r, 400, "%s: required, a language code (GET /languages lists them)", bad);
        return NULL;
    }
    if (strcmp(src->valuestring, "auto") == 0) {
        serve_error(r, 400, "source: 'auto' (language detection) is not supported: give the source language");
        return NULL;
    }
    int src_known = 0;
    for (int i = 0; i < s->n_models; i++) {
        serve_model *m = &s->models[i];
        if (m->kind != SERVE_TRANSLATE || strcmp(m->src, src->valuestring) != 0) continue;
        src_known = 1;
        if (strcmp(m->tgt, tgt->valuestring) == 0) return m;
    }
    if (!src_known)
        serve_error(r, 400, "source: no loaded model translates from '%.40s' (GET /languages lists them)", src->valuestring);
    else
        serve_error(r, 400, "target: no loaded model translates from '%.40s' to '%.40s' (GET /languages lists them)",
                    src->valuestring, tgt->valuestring);
    return NULL;
}

/* The "alternatives" of sentence i (its out[i·nb + 1 ..]) as a JSON array of strings. */
static cJSON *alternatives_of(char **out, size_t i, int nb) {
    cJSON *a = cJSON_CreateArray();
    for (int k = 1; a && k < nb; k++)
        if (out[i * (size_t)nb + (size_t)k]) cJSON_AddItemToArray(a, cJSON_CreateString(out[i * (size_t)nb + (size_t)k]));
    return a;
}

/* The field "alternatives" into *alt: a JSON integer in [0, beam - 1], or in an HTML form (whose
 * fields are all strings: LibreTranslate's form clients send "2") a string of decimal digits,
 * read as that integer and checked the same. 0 after a 400 naming the field. */
static int read_alternatives(const serve_state *s, const serve_request *req, const cJSON *body, double *alt, serve_reply *r) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(body, "alternatives");
    const size_t nd = cJSON_IsString(f) ? strspn(f->valuestring, "0123456789") : 0;
    cJSON *num = NULL;
    if (serve_body_is_form(req) && nd > 0 && nd <= 9 && f->valuestring[nd] == '\0') {
        num = cJSON_CreateObject();
        if (!num || !cJSON_AddNumberToObject(num, "alternatives", (double)strtol(f->valuestring, NULL, 10))) {
            cJSON_Delete(num);
            serve_error(r, 500, "out of memory");
            return 0;
        }
    }
    const int ok = serve_number(num ? num : body, "alternatives", 1, 0, s->dc.beam - 1, alt, r);
    cJSON_Delete(num);
    if (!ok && s->dc.beam == 1) serve_error(r, 400, "alternatives: this server decodes greedily (--beam 1): none");
    return ok;
}

/* POST /translate: {"q": text or [texts], "source", "target", "format": "text", "alternatives": n} ->
 * {"translatedText": text or [texts], "alternatives": [texts] or [[texts]]}, as LibreTranslate;
 * the alternatives are the beam's next best translations (tfm_translate_text_nbest). */
static void translate(serve_state *s, const serve_request *req, const cJSON *body, serve_reply *r) {
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(body, "format");
    if (fmt && !(cJSON_IsString(fmt) && strcmp(fmt->valuestring, "text") == 0)) {
        serve_error(r, 400, "format: only \"text\" is supported");
        return;
    }
    const char **q;
    size_t n;
    int is_array;
    if (!serve_strings(body, "q", &q, &n, &is_array, r)) return;
    serve_model *m = pair_model(s, body, r);
    double alt = 0;
    if (m && !read_alternatives(s, req, body, &alt, r)) m = NULL;
    const int nb = 1 + (int)alt;
    char **out = m ? calloc(n * (size_t)nb, sizeof *out) : NULL;
    if (m && !out) serve_error(r, 500, "out of memory");
    /* in rounds shared with the other clients' requests (batcher.c) */
    if (out && serve_translate_batched(s, m, req, q, n, nb, out, r)) {
        cJSON *j = cJSON_CreateObject(), *t = is_array ? cJSON_CreateArray() : NULL, *alts = is_array ? cJSON_CreateArray() : NULL;
        for (size_t i = 0; is_array && t && i < n; i++) {
            cJSON_AddItemToArray(t, cJSON_CreateString(out[i * (size_t)nb]));
            if (nb > 1) cJSON_AddItemToArray(alts, alternatives_of(out, i, nb));
        }
        if (!is_array) {
            t = cJSON_CreateString(out[0]);
            alts = nb > 1 ? alternatives_of(out, 0, nb) : NULL;
        }
        if (j && t) cJSON_AddItemToObject(j, "translatedText", t);
        else cJSON_Delete(t);
        if (j && alts && nb > 1) cJSON_AddItemToObject(j, "alternatives", alts);
        else cJSON_Delete(alts);
        serve_json(r, j);
    }
    for (size_t i = 0; out && i < n * (size_t)nb; i++) free(out[i]);
    free(out);
    free(q);
}

typedef enum { R_HEALTH, R_LANGUAGES, R_TRANSLATE, R_MODELS, R_EMBEDDINGS, R_COMPLETIONS, R_METRICS, R_PAGE } route_id;

static const struct {
    const char *path, *method;
    route_id id;
} routes[] = {
    {"/health", "GET", R_HEALTH},         {"/languages", "GET", R_LANGUAGES},         {"/translate", "POST", R_TRANSLATE},
    {"/v1/models", "GET", R_MODELS},      {"/v1/embeddings", "POST", R_EMBEDDINGS}, {"/v1/completions", "POST", R_COMPLETIONS},
    {"/metrics", "GET", R_METRICS},       {"/", "GET", R_PAGE},
};
#define N_ROUTES (sizeof routes / sizeof routes[0])
_Static_assert(N_ROUTES + 1 == SERVE_ROUTES, "SERVE_ROUTES counts the routes and 'other'");

const char *serve_route_path(int k) { return k >= 0 && (size_t)k < N_ROUTES ? routes[k].path : "other"; }

int serve_route_index(const char *path) {
    size_t k = 0;
    while (k < N_ROUTES && strcmp(routes[k].path, path) != 0) k++;
    return (int)k;
}

int serve_openai_path(const char *path) { return strncmp(path, "/v1/", 4) == 0; }

void serve_route(serve_state *s, const serve_request *q, serve_reply *r) {
    r->openai_errors = serve_openai_path(q->path);
    const size_t k = (size_t)serve_route_index(q->path);
    if (k == N_ROUTES) {
        serve_error(r, 404, "no route %.200s (see docs/SERVE.md)", q->path);
        return;
    }
    /* HEAD on a GET route: the GET's status and headers; libmicrohttpd sends no body (RFC 9110 §9.3.2) */
    const int get = strcmp(routes[k].method, "GET") == 0;
    if (strcmp(q->method, routes[k].method) != 0 && !(get && strcmp(q->method, "HEAD") == 0)) {
        serve_error(r, 405, "%.200s takes %s, not %.20s", q->path, get ? "GET (or HEAD)" : routes[k].method, q->method);
        r->allow = get ? "GET, HEAD" : routes[k].method;
        return;
    }
    if (routes[k].id == R_PAGE) { /* static: served while loading too, and without a key (it asks for one) */
        serve_page(r);
        return;
    }
    const int ready = atomic_load(&s->ready);
    if (routes[k].id == R_HEALTH) {
        if (ready) {
            cJSON *j = cJSON_CreateObject();
            if (j) cJSON_AddStringToObject(j, "status", "ok");
            serve_json(r, j);
        } else {
            serve_error(r, 503, "loading the models");
            r->retry_after = 1;
        }
        return;
    }
    if (!ready) {
        serve_error(r, 503, "loading the models; GET /health says when they are ready");
        r->retry_after = 1;
        return;
    }
    if (get) {
        /* /languages needs no key, as LibreTranslate's */
        if (routes[k].id != R_LANGUAGES && !serve_authorized(s, q, NULL, r)) return;
        if (routes[k].id == R_LANGUAGES) languages(s, r);
        else if (routes[k].id == R_METRICS) serve_metrics_reply(s, r);
        else serve_models_list(s, r);
        return;
    }
    cJSON *body = serve_body_object(q, r);
    if (!body) return;
    if (serve_authorized(s, q, body, r)) {
        if (routes[k].id == R_TRANSLATE) translate(s, q, body, r);
        else if (routes[k].id == R_EMBEDDINGS) serve_embeddings(s, body, r);
        else serve_completions(s, q, body, r);
    }
    cJSON_Delete(body);
}
