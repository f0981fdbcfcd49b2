#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime, sigwait, nanosleep, strncasecmp */
/* tfm serve's HTTP side (http.h): libmicrohttpd, one thread per connection, the body read whole
 * up to --max-body, then serve_route; one access-log line per request on stderr. */
#include "http.h"

#include <microhttpd.h>

#include <arpa/inet.h>
#include <errno.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char *body;
    size_t len, cap;
    int too_big;
    size_t dropped; /* bytes of a body over the cap, read and dropped */
    struct timespec start;
} conn_state;

static double seconds_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    const long n = serve_stream_read(cls, buf, max);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void stream_free(void *cls) { serve_stream_close(cls); }

static enum MHD_Result send_reply(serve_state *s, struct MHD_Connection *conn, const char *method, const char *url,
                                  serve_reply *r, const conn_state *cs) {
    struct MHD_Response *resp;
    if (r->stream) {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_reader, r->stream, stream_free);
        if (!resp) serve_stream_close(r->stream);
    } else {
        const char *b = r->body ? r->body : "";
        resp = MHD_create_response_from_buffer(strlen(b), (void *)b, MHD_RESPMEM_MUST_COPY);
    }
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", r->content_type ? r->content_type : "application/json");
    if (r->stream) MHD_add_response_header(resp, "Cache-Control", "no-cache");
    if (r->retry_after) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", r->retry_after);
        MHD_add_response_header(resp, "Retry-After", ra);
    }
    if (r->allow) MHD_add_response_header(resp, "Allow", r->allow);
    if (r->truncated && r->status == 200) {
        char tr[96];
        snprintf(tr, sizeof tr, "%d; max_len=%d", r->truncated, r->max_len);
        MHD_add_response_header(resp, "X-Tfm-Truncated", tr);
    }
    /* stopping: a keep-alive client gets its answer, then the connection closes (not cut later) */
    if (atomic_load(&s->stopping)) MHD_add_response_header(resp, "Connection", "close");
    if (r->csp) {
        MHD_add_response_header(resp, "Content-Security-Policy", r->csp);
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    }
    const enum MHD_Result ok = MHD_queue_response(conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    const double secs = cs ? seconds_since(&cs->start) : 0.0;
    serve_metrics_record(s, url, r->status, secs);
    fprintf(stderr, "tfm serve: %s %s %d %zu %.1f ms\n", method, url, r->status, cs ? cs->len : 0, 1e3 * secs);
    free(r->body);
    return ok;
}

/* 1 once the client has closed its side of the connection (or reset it): a peek reads 0 bytes or
 * fails for good. A pipelined request waiting to be read is not a close. */
static int client_gone(const void *conn) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info((struct MHD_Connection *)conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!info) return 0;
    char c;
    const ssize_t n = recv(info->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    (void)version;
    serve_state *s = cls;
    conn_state *cs = *con_cls;
    if (!cs) { /* the headers are in: refuse a body announced too big before reading it */
        cs = calloc(1, sizeof *cs);
        if (!cs) return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &cs->start);
        *con_cls = cs;
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->max_body) cs->too_big = 1;
        if (!cs->too_big) return MHD_YES;
    }
    if (cs->too_big && *upload_size) {
        /* a body without Content-Length (chunked) went over the cap: read and drop the rest, to
         * answer 413 after it; one far over the cap closes the connection instead */
        cs->dropped += *upload_size;
        *upload_size = 0;
        return cs->dropped > 16 * s->max_body ? MHD_NO : MHD_YES;
    }
    if (*upload_size) {
        if (cs->len + *upload_size > s->max_body) {
            cs->too_big = 1;
            cs->dropped = cs->len + *upload_size;
            *upload_size = 0;
            return MHD_YES;
        } else {
            if (cs->len + *upload_size + 1 > cs->cap) {
                size_t nc = cs->cap ? cs->cap : 4096;
                while (nc < cs->len + *upload_size + 1) nc *= 2;
                char *b = realloc(cs->body, nc);
                if (!b) return MHD_NO;
                cs->body = b;
                cs->cap = nc;
            }
            memcpy(cs->body + cs->len, upload, *upload_size);
            cs->len += *upload_size;
            *upload_size = 0;
            return MHD_YES;
        }
    }
    serve_reply r = {0};
    if (cs->too_big) {
        /* announced too big: answered at once, before the body (libmicrohttpd then closes the
         * connection); else answered after the body was read and dropped */
        r.openai_errors = serve_openai_path(url);
        serve_error(&r, 413, "the body is larger than --max-body %zu bytes", s->max_body);
        return send_reply(s, conn, method, url, &r, cs);
    }
    const serve_request q = {
        method, url, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION), cs->body ? cs->body : "",
        cs->len, client_gone, conn};
    serve_route(s, &q, &r);
    return send_reply(s, conn, method, url, &r, cs);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe) {
    (void)cls;
    (void)conn;
    conn_state *cs = *con_cls;
    if (cs && toe == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN) /* still open --drain seconds after SIGTERM */
        fprintf(stderr, "tfm serve: a request was cut by the shutdown, unanswered\n");
    if (cs) free(cs->body);
    free(cs);
    *con_cls = NULL;
}

void *serve_http_start(serve_state *s, const char *host, int port, int max_conn, int timeout_s, int *bound_port) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        fprintf(stderr, "tfm serve: error: --host %s is not an IPv4 address (e.g. 127.0.0.1 or 0.0.0.0)\n", host);
        return NULL;
    }
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG, (uint16_t)port,
        NULL,
        NULL, handle, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)max_conn, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)timeout_s, MHD_OPTION_NOTIFY_COMPLETED,
        completed, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "tfm serve: error: cannot listen on %s:%d (in use, or not allowed)\n", host, port);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    *bound_port = info ? (int)info->port : port;
    return d;
}

/* The listening socket after serve_http_quiesce: shut down at once (connections waiting to be
 * accepted are reset, new ones refused), closed after MHD_stop_daemon (libmicrohttpd's rule). */
static MHD_socket quiesced = MHD_INVALID_SOCKET;

void serve_http_quiesce(void *daemon) {
    quiesced = MHD_quiesce_daemon(daemon);
    if (quiesced != MHD_INVALID_SOCKET) shutdown(quiesced, SHUT_RDWR);
}

unsigned serve_http_connections(void *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info ? info->num_connections : 0;
}

void serve_http_stop(void *daemon) {
    MHD_stop_daemon(daemon);
    if (quiesced != MHD_INVALID_SOCKET) close(quiesced);
    quiesced = MHD_INVALID_SOCKET;
}

const char *serve_http_version(void) { return MHD_get_version(); }
