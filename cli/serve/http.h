/* tfm serve's HTTP server (http.c, libmicrohttpd): what cmd_serve.c starts and stops. */
#ifndef TFM_CLI_SERVE_HTTP_H
#define TFM_CLI_SERVE_HTTP_H

#include "serve.h"

/* Starts listening on host:port (IPv4; port 0: a free one, *bound_port says which) with at most
 * max_conn connections, each closed after timeout_s seconds without progress. Requests are
 * answered by serve_route(s, ...). Returns the daemon, or NULL after printing why. */
void *serve_http_start(serve_state *s, const char *host, int port, int max_conn, int timeout_s, int *bound_port);

/* Stops accepting connections (new ones are refused, those not yet accepted reset); those open go on. */
void serve_http_quiesce(void *daemon);

/* The connections open now. */
unsigned serve_http_connections(void *daemon);

/* Closes every connection and stops. */
void serve_http_stop(void *daemon);

/* libmicrohttpd's version, e.g. "0.9.75". */
const char *serve_http_version(void);

#endif
