/* Length buckets (len_buckets.h). */
#include "len_buckets.h"

#include "args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int len_buckets_parse(const char *cmd, const char *spec, len_buckets *b) {
    b->n_edges = 0;
    const char *p = spec;
    while (*p) {
        char *end = NULL;
        errno = 0;
        const long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > 1000000 || (*end != ',' && *end != '\0')) {
            cli_error(cmd, "--buckets '%s': want increasing positive integers E1,E2,... (upper edges in tokens)", spec);
            return 0;
        }
        if (b->n_edges == LEN_BUCKETS_MAX) {
            cli_error(cmd, "--buckets '%s': at most %d edges", spec, LEN_BUCKETS_MAX);
            return 0;
        }
        if (b->n_edges > 0 && v <= b->edges[b->n_edges - 1]) {
            cli_error(cmd, "--buckets '%s': the edges must increase (%ld after %d)", spec, v, b->edges[b->n_edges - 1]);
            return 0;
        }
        b->edges[b->n_edges++] = (int)v;
        p = *end ? end + 1 : end;
        if (*end == ',' && !*p) {
            cli_error(cmd, "--buckets '%s': a trailing comma", spec);
            return 0;
        }
    }
    if (b->n_edges == 0) {
        cli_error(cmd, "--buckets is empty: want E1,E2,... (upper edges in tokens)");
        return 0;
    }
    return 1;
}

int len_bucket_of(const len_buckets *b, size_t len) {
    int i = 0;
    while (i < b->n_edges && len > (size_t)b->edges[i]) i++;
    return i;
}

int len_bucket_lo(const len_buckets *b, int i) { return i == 0 ? 0 : b->edges[i - 1] + 1; }

int len_bucket_hi(const len_buckets *b, int i) { return i < b->n_edges ? b->edges[i] : -1; }

const char *len_bucket_label(const len_buckets *b, int i, char *buf, size_t cap) {
    const int hi = len_bucket_hi(b, i);
    if (hi < 0)
        snprintf(buf, cap, "%d+", len_bucket_lo(b, i));
    else
        snprintf(buf, cap, "%d-%d", len_bucket_lo(b, i), hi);
    return buf;
}
