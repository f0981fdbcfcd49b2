/* libFuzzer target: tfm serve's request handling without HTTP (cli/serve/, serve_route): the
 * route table, methods, the API key, JSON and form bodies (UTF-8, NUL, cJSON), every field check
 * of /translate, /v1/completions and /v1/embeddings, /languages, /v1/models, /metrics, /health,
 * and GET / (the page), on a server with no models (so a well-formed request ends in "no model"
 * rather than in computation). The input: byte 0 picks the path and method, byte 1 the
 * Content-Type, byte 2 whether an API key is set (bit 0), sent as a bearer token (bit 1: the body's
 * first line), and
 * whether the models are still loading (bit 2); the rest is the body. Checked: every reply has a
 * known status and a body; an error's body is a JSON object with a string "error" (LibreTranslate's
 * routes) or OpenAI's {"error": {"message", "type", "param": string or null, "code": null}} (/v1/); the
 * page is 200 text/html with its Content-Security-Policy, even while loading; a 405 says
 * which method; a 503 has Retry-After; nothing is streamed without a model. Seeds: fuzz/corpus/serve/. */
#include "fuzz_util.h"

#include "serve/serve.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const paths[][2] = {
        {"/translate", "POST"},      {"/v1/completions", "POST"}, {"/v1/embeddings", "POST"}, {"/languages", "GET"},
        {"/v1/models", "GET"},       {"/health", "GET"},          {"/metrics", "GET"},        {"/translate", "GET"},
        {"/v1/models", "DELETE"},    {"/nope", "GET"},            {"", "POST"},
        {"/", "GET"}, /* appended: the seeds' byte 0 keeps its meaning */
    };
    static const char *const types[] = {NULL, "application/json", "application/x-www-form-urlencoded; charset=utf-8",
                                        "text/plain"};
    if (size < 3) return 0;
    const size_t n_paths = sizeof paths / sizeof paths[0];
    const char *const *route = paths[data[0] % n_paths];
    const char *type = types[data[1] % 4];
    const int key = data[2] & 1, bearer = data[2] & 2, loading = data[2] & 4;
    char *body = malloc(size - 3 + 1);
    char auth[80] = "Bearer ";
    if (!body) return 0;
    memcpy(body, data + 3, size - 3);
    body[size - 3] = '\0';
    if (bearer) {
        size_t n = 0;
        while (n < size - 3 && n < sizeof auth - 8 && body[n] != '\n' && body[n] != '\0') n++;
        memcpy(auth + 7, body, n);
        auth[7 + n] = '\0';
    }
    static serve_state s; /* no models; its counters live on across inputs, as in a server */
    static int init;
    if (!init) {
        s.workers = 1;
        s.max_queue = 1;
        s.max_body = 1 << 20;
        s.dc = tfm_decode_config_default();
        s.batch = 64;
        pthread_mutex_init(&s.mu, NULL);
        pthread_cond_init(&s.cv, NULL);
        init = 1;
    }
    s.api_key = key ? "k3y" : NULL;
    atomic_store(&s.ready, !loading);
    const serve_request q = {route[1], route[0], type, bearer ? auth : NULL, body, size - 3, NULL, NULL};
    serve_reply r = {0};
    serve_route(&s, &q, &r);
    if (r.stream) __builtin_trap(); /* nothing streams without a model */
    if (!r.body) __builtin_trap();
    static const int known[] = {200, 400, 403, 404, 405, 413, 500, 503};
    int ok = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) ok |= r.status == known[i];
    if (!ok) __builtin_trap();
    if (r.status >= 400) {
        cJSON *j = cJSON_Parse(r.body);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
        if (!cJSON_IsObject(j)) __builtin_trap();
        if (strncmp(route[0], "/v1/", 4) == 0) { /* OpenAI's shape */
            const cJSON *param = cJSON_GetObjectItemCaseSensitive(e, "param");
            if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "message")) ||
                !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "type")) ||
                !(cJSON_IsString(param) || cJSON_IsNull(param)) || !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(e, "code")))
                __builtin_trap();
        } else if (!cJSON_IsString(e)) {
            __builtin_trap();
        }
        cJSON_Delete(j);
    }
    if (r.status == 405 && !r.allow) __builtin_trap();
    if (r.status == 503 && !r.retry_after) __builtin_trap();
    const int page = strcmp(route[0], "/") == 0;
    if (loading && r.status == 200 && !page) __builtin_trap(); /* the page is static: served while loading */
    if (page && (r.status != 200 || strcmp(r.content_type, "text/html; charset=utf-8") != 0 || !r.csp)) __builtin_trap();
    free(r.body);
    free(body);
    return 0;
}
