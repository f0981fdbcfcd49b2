/* GET / of tfm serve (docs/SERVE.md, "The web page"): cli/serve/page.html, built into the binary
 * by cmake/embed_file.cmake, with a Content-Security-Policy that lets it load nothing but itself
 * and talk to nothing but this server. */
#include "routes.h"

#include <stdlib.h>
#include <string.h>

extern const unsigned char serve_page_html[];
extern const size_t serve_page_html_len;

void serve_page(serve_reply *r) {
    free(r->body);
    r->body = malloc(serve_page_html_len + 1);
    if (!r->body) {
        serve_error(r, 500, "out of memory");
        return;
    }
    memcpy(r->body, serve_page_html, serve_page_html_len + 1);
    r->status = 200;
    r->content_type = "text/html; charset=utf-8";
    /* inline script and style only; fetch() only to this origin; no frames, forms, plugins */
    r->csp = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
             "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
}
