/* The OpenAI-compatible routes of tfm serve (openai.c, complete.c), called by serve_route. */
#ifndef TFM_CLI_SERVE_ROUTES_H
#define TFM_CLI_SERVE_ROUTES_H

#include "serve.h"

/* GET /v1/models: {"object": "list", "data": [{"id", "object": "model", "created", "owned_by"}]}. */
void serve_models_list(serve_state *s, serve_reply *r);

/* POST /v1/embeddings: {"input": text or [texts], "model"?, "encoding_format"?: "float"}. */
void serve_embeddings(serve_state *s, const cJSON *body, serve_reply *r);

/* POST /v1/completions: {"prompt", "model"?, "max_tokens", "temperature", "top_p", "top_k", "seed",
 * "stop", "stream"}; stream: true answers with Server-Sent Events (r->stream). Generated in groups
 * shared across clients (generator.c); q's client gone cancels it. */
void serve_completions(serve_state *s, const serve_request *q, const cJSON *body, serve_reply *r);

/* GET /: the web page (page.c), text/html with its Content-Security-Policy. */
void serve_page(serve_reply *r);

/* Reads an optional number field into *v: 0 after a 400 naming it (not a number, not an integer
 * when `integer`, outside [lo, hi]). */
int serve_number(const cJSON *body, const char *name, int integer, double lo, double hi, double *v, serve_reply *r);

#endif
