#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime, sigwait, nanosleep, strncasecmp */
/* Reading request bodies and writing JSON replies for tfm serve (serve.h). */
#include "serve.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The length of the field a message starts with ("max_tokens: ...", "input[1]: ..."): a JSON name
 * and its [index]es followed by ':'; 0 when it names none. */
static size_t field_prefix(const char *msg) {
    size_t i = 0;
    while ((msg[i] >= 'a' && msg[i] <= 'z') || (msg[i] >= 'A' && msg[i] <= 'Z') || msg[i] == '_' ||
           (i && msg[i] >= '0' && msg[i] <= '9'))
        i++;
    while (i && msg[i] == '[' && msg[i + 1] >= '0' && msg[i + 1] <= '9') {
        size_t k = i + 1;
        while (msg[k] >= '0' && msg[k] <= '9') k++;
        if (msg[k] != ']') return 0;
        i = k + 1;
    }
    return i && msg[i] == ':' ? i : 0;
}

void serve_error(serve_reply *r, int status, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *j = cJSON_CreateObject();
    if (j && !r->openai_errors) cJSON_AddStringToObject(j, "error", msg);
    if (j && r->openai_errors) {
        /* OpenAI's shape, as its clients read it (type by status, as llama.cpp's server) */
        cJSON *e = cJSON_AddObjectToObject(j, "error");
        const char *type = status == 400 || status == 405 || status == 413 ? "invalid_request_error"
                           : status == 403                                 ? "authentication_error"
                           : status == 404                                 ? "not_found_error"
                           : status == 503                                 ? "unavailable_error"
                                                                           : "server_error";
        char param[128];
        const size_t n = status == 400 ? field_prefix(msg) : 0;
        snprintf(param, sizeof param, "%.*s", (int)n, msg);
        cJSON_AddStringToObject(e, "message", msg);
        cJSON_AddStringToObject(e, "type", type);
        if (n && n < sizeof param) cJSON_AddStringToObject(e, "param", param);
        else cJSON_AddNullToObject(e, "param");
        cJSON_AddNullToObject(e, "code");
    }
    free(r->body);
    r->body = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    r->status = r->body ? status : 500;
    r->content_type = "application/json";
}

void serve_json(serve_reply *r, cJSON *j) {
    free(r->body);
    r->body = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    r->status = r->body ? 200 : 500;
    r->content_type = "application/json";
}

/* The offset of the first byte of s[0..n) that is not well-formed UTF-8 (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or n when all of it is. */
static size_t utf8_bad_offset(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        const unsigned c = s[i];
        size_t k;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            return i;
        }
        if (i + k >= n) return i; /* cut short */
        if (s[i + 1] < lo || s[i + 1] > hi) return i;
        for (size_t j = 2; j <= k; j++)
            if (s[i + j] < 0x80 || s[i + j] > 0xBF) return i;
        i += k + 1;
    }
    return n;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes application/x-www-form-urlencoded text s[0..n) ('+' is a space, %XX a byte) into out
 * (n + 1 bytes); returns its length, or -1 for a bad %-escape. */
static long form_decode(const char *s, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '+') {
            out[o++] = ' ';
        } else if (s[i] == '%') {
            if (i + 2 >= n) return -1;
            const int h = hexval((unsigned char)s[i + 1]), l = hexval((unsigned char)s[i + 2]);
            if (h < 0 || l < 0) return -1;
            out[o++] = (char)(h * 16 + l);
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return (long)o;
}

/* An HTML form as a JSON object of strings (a repeated field: the last one). NULL after a 400. */
static cJSON *form_object(const serve_request *q, serve_reply *r) {
    cJSON *obj = cJSON_CreateObject();
    char *key = malloc(q->len + 1), *val = malloc(q->len + 1);
    if (!obj || !key || !val) {
        serve_error(r, 500, "out of memory");
        goto fail;
    }
    const char *p = q->body, *end = q->body + q->len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        if (!amp) amp = end;
        const char *eq = memchr(p, '=', (size_t)(amp - p));
        if (amp > p) {
            const char *ke = eq ? eq : amp;
            const long kl = form_decode(p, (size_t)(ke - p), key);
            const long vl = eq ? form_decode(eq + 1, (size_t)(amp - eq - 1), val) : 0;
            if (!eq) val[0] = '\0';
            if (kl < 0 || vl < 0) {
                serve_error(r, 400, "the form has a bad %%-escape near byte %zu", (size_t)(p - q->body));
                goto fail;
            }
            if (strlen(key) != (size_t)kl || strlen(val) != (size_t)vl) {
                serve_error(r, 400, "%s: the form field holds a NUL byte", key);
                goto fail;
            }
            if (utf8_bad_offset((const unsigned char *)key, (size_t)kl) != (size_t)kl ||
                utf8_bad_offset((const unsigned char *)val, (size_t)vl) != (size_t)vl) {
                serve_error(r, 400, "%s: invalid UTF-8 in the form field", key);
                goto fail;
            }
            cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
            if (!cJSON_AddStringToObject(obj, key, val)) {
                serve_error(r, 500, "out of memory");
                goto fail;
            }
        }
        p = amp + 1;
    }
    free(key);
    free(val);
    return obj;
fail:
    free(key);
    free(val);
    cJSON_Delete(obj);
    return NULL;
}

/* 1 if the Content-Type's media type (before any ';') is `type`, case-insensitively. */
static int media_is(const char *ct, const char *type) {
    const size_t n = strlen(type);
    while (*ct == ' ') ct++;
    return strncasecmp(ct, type, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

int serve_body_is_form(const serve_request *q) {
    return q->content_type && media_is(q->content_type, "application/x-www-form-urlencoded");
}

cJSON *serve_body_object(const serve_request *q, serve_reply *r) {
    if (serve_body_is_form(q)) return form_object(q, r);
    if (q->content_type && !media_is(q->content_type, "application/json")) {
        serve_error(r, 400, "Content-Type %s is not read here: send application/json or "
                            "application/x-www-form-urlencoded", q->content_type);
        return NULL;
    }
    const size_t bad = utf8_bad_offset((const unsigned char *)q->body, q->len);
    if (bad != q->len) {
        serve_error(r, 400, "the body is not valid UTF-8 (byte offset %zu, byte 0x%02X)", bad,
                    (unsigned)(unsigned char)q->body[bad]);
        return NULL;
    }
    const char *nul = memchr(q->body, '\0', q->len);
    if (nul) {
        serve_error(r, 400, "the body holds a NUL byte at byte offset %zu", (size_t)(nul - q->body));
        return NULL;
    }
    /* a JSON string may spell NUL as \u0000; cJSON would cut the string there, silently */
    for (size_t i = 0; i + 1 < q->len; i++) {
        if (q->body[i] != '\\') continue;
        if (q->len - i >= 6 && q->body[i + 1] == 'u' && memcmp(q->body + i + 2, "0000", 4) == 0) {
            serve_error(r, 400, "a string holds \\u0000 (NUL) at byte %zu: text cannot hold NUL", i);
            return NULL;
        }
        i++; /* the escaped character */
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(q->body, q->len, &end, 0);
    if (!j) {
        const size_t at = end && end >= q->body ? (size_t)(end - q->body) : 0;
        if (q->len)
            serve_error(r, 400, "invalid JSON near byte %zu", at);
        else
            serve_error(r, 400, "the body is empty: send a JSON object");
        return NULL;
    }
    size_t at = (size_t)(end - q->body);
    while (at < q->len && strchr(" \t\r\n", q->body[at]) && q->body[at]) at++;
    if (at != q->len) {
        cJSON_Delete(j);
        serve_error(r, 400, "invalid JSON: text after the object at byte %zu", at);
        return NULL;
    }
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        serve_error(r, 400, "the body must be a JSON object");
        return NULL;
    }
    return j;
}

int serve_authorized(const serve_state *s, const serve_request *q, const cJSON *body, serve_reply *r) {
    if (!s->api_key) return 1;
    const char *given = NULL;
    if (q->auth && strncasecmp(q->auth, "Bearer ", 7) == 0) given = q->auth + 7;
    const cJSON *f = body ? cJSON_GetObjectItemCaseSensitive(body, "api_key") : NULL;
    if (!given && cJSON_IsString(f)) given = f->valuestring;
    if (!given) {
        serve_error(r, 403, "api_key: this server needs an API key (Authorization: Bearer KEY, or the field api_key)");
        return 0;
    }
    /* constant time in the key's contents: every byte of the longer of the two is compared */
    const size_t a = strlen(s->api_key), b = strlen(given), n = a > b ? a : b;
    unsigned diff = (unsigned)(a ^ b);
    for (size_t i = 0; i < n; i++) {
        const unsigned char x = i < a ? (unsigned char)s->api_key[i] : 0, y = i < b ? (unsigned char)given[i] : 0;
        diff |= (unsigned)(x ^ y);
    }
    if (diff != 0) {
        serve_error(r, 403, "api_key: wrong API key");
        return 0;
    }
    return 1;
}

static const char *kind_name(serve_kind k) {
    return k == SERVE_TRANSLATE ? "translation" : k == SERVE_GENERATE ? "decoder-only" : "encoder-only";
}

serve_model *serve_find_model(serve_state *s, serve_kind kind, const cJSON *body, serve_reply *r) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(body, "model");
    if (f && !cJSON_IsNull(f)) {
        if (!cJSON_IsString(f)) {
            serve_error(r, 400, "model: must be a string");
            return NULL;
        }
        for (int i = 0; i < s->n_models; i++)
            if (strcmp(s->models[i].name, f->valuestring) == 0) {
                if (s->models[i].kind == kind) return &s->models[i];
                serve_error(r, 400, "model: '%s' is a %s model; this route needs a %s one", f->valuestring,
                            kind_name(s->models[i].kind), kind_name(kind));
                return NULL;
            }
        serve_error(r, 400, "model: no model '%s' is loaded (GET /v1/models lists them)", f->valuestring);
        return NULL;
    }
    serve_model *found = NULL;
    int n = 0;
    for (int i = 0; i < s->n_models; i++)
        if (s->models[i].kind == kind) {
            found = &s->models[i];
            n++;
        }
    if (n == 1) return found;
    if (n)
        serve_error(r, 400, "model: required: %d %s models are loaded (GET /v1/models lists them)", n,
                    kind_name(kind));
    else
        serve_error(r, 400, "model: no %s model is loaded", kind_name(kind));
    return NULL;
}

int serve_strings(const cJSON *body, const char *name, const char ***items, size_t *n, int *is_array,
                  serve_reply *r) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(body, name);
    *items = NULL;
    *n = 0;
    *is_array = cJSON_IsArray(f);
    if (!f) {
        serve_error(r, 400, "%s: required", name);
        return 0;
    }
    if (cJSON_IsString(f)) {
        if (!f->valuestring[0]) {
            serve_error(r, 400, "%s: empty", name);
            return 0;
        }
        *items = malloc(sizeof **items);
        if (!*items) goto nomem;
        (*items)[0] = f->valuestring;
        *n = 1;
        return 1;
    }
    if (!cJSON_IsArray(f)) {
        serve_error(r, 400, "%s: must be a string or an array of strings", name);
        return 0;
    }
    const size_t count = (size_t)cJSON_GetArraySize(f);
    if (count == 0) {
        serve_error(r, 400, "%s: empty array", name);
        return 0;
    }
    *items = malloc(count * sizeof **items);
    if (!*items) goto nomem;
    size_t i = 0;
    for (const cJSON *e = f->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e)) {
            serve_error(r, 400, "%s[%zu]: must be a string", name, i);
            free(*items);
            *items = NULL;
            return 0;
        }
        (*items)[i] = e->valuestring;
    }
    *n = count;
    return 1;
nomem:
    serve_error(r, 500, "out of memory");
    return 0;
}
