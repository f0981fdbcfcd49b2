/* The outputs of every subcommand (output.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "output.h"

#include "args.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int output_dir_ok(const char *cmd, const char *path) {
    if (path == NULL || strcmp(path, "-") == 0) return 1;
    struct stat sb;
    /* a device or a FIFO (/dev/null, /dev/full) is written in place (tfm_atomic_file_open): no
     * probe, whose open of a FIFO would wait for a reader */
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) return 1;
    tfm_atomic_file *af = NULL;
    /* the open names a missing folder as tfm_atomic_file_check_folder does, and also fails on a
     * folder that cannot take a new file */
    if (tfm_atomic_file_open(path, &af) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    tfm_atomic_file_abort(af); /* the folder takes a new file; remove the probe */
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        cli_error(cmd, "cannot save to %s: it is a folder", path);
        return 0;
    }
    return 1;
}

/* stat of an existing regular file that is not standard input/output ("-"); 0 otherwise. */
static int regular_file(const cli_path *p, struct stat *sb) {
    return p->path && strcmp(p->path, "-") != 0 && stat(p->path, sb) == 0 && S_ISREG(sb->st_mode);
}

/* 1 if a and b are one existing regular file (symlinks followed, hard links alike). */
static int same_file(const cli_path *a, const cli_path *b) {
    struct stat sa, sb;
    return regular_file(a, &sa) && regular_file(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* 1 if two outputs name one file: the same existing file (same_file), or, neither existing yet,
 * the same name in the same folder (realpath of the folder: "x", "./x" and "dir/../x" alike). */
static int same_output(const cli_path *a, const cli_path *b) {
    struct stat sa, sb;
    if (!a->path || !b->path || strcmp(a->path, "-") == 0 || strcmp(b->path, "-") == 0) return 0;
    const int ea = stat(a->path, &sa) == 0, eb = stat(b->path, &sb) == 0;
    if (ea || eb) return ea && eb && same_file(a, b);
    char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
    const char *sla = strrchr(a->path, '/'), *slb = strrchr(b->path, '/');
    const char *ba = sla ? sla + 1 : a->path, *bb = slb ? slb + 1 : b->path;
    if (strcmp(ba, bb) != 0) return 0;
    snprintf(da, sizeof da, "%.*s", sla ? (int)(sla - a->path) + 1 : 1, sla ? a->path : ".");
    snprintf(db, sizeof db, "%.*s", slb ? (int)(slb - b->path) + 1 : 1, slb ? b->path : ".");
    return realpath(da, ra) && realpath(db, rb) && strcmp(ra, rb) == 0;
}

int cli_outputs_ok(const char *cmd, const cli_path *in, size_t n_in, const cli_path *out, size_t n_out) {
    for (size_t o = 0; o < n_out; o++)
        if (!output_dir_ok(cmd, out[o].path)) return 0;
    for (size_t o = 0; o < n_out; o++) {
        for (size_t i = 0; i < n_in; i++) {
            if (same_file(&out[o], &in[i])) {
                cli_error(cmd, "%s %s is the same file as %s %s: refusing to overwrite an input (write the output "
                               "elsewhere)", out[o].flag, out[o].path, in[i].flag, in[i].path);
                return 0;
            }
        }
        for (size_t p = 0; p < o; p++) {
            if (same_output(&out[o], &out[p])) {
                cli_error(cmd, "%s %s is the same file as %s %s: two outputs cannot share a file", out[o].flag,
                          out[o].path, out[p].flag, out[p].path);
                return 0;
            }
        }
    }
    return 1;
}

int cli_output_open(const char *cmd, const char *path, cli_output *o) {
    o->af = NULL;
    o->f = stdout;
    o->path = NULL;
    if (path == NULL || strcmp(path, "-") == 0) return 1;
    if (tfm_atomic_file_open(path, &o->af) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    o->f = tfm_atomic_file_stream(o->af);
    o->path = path;
    return 1;
}

/* Flushes f; returns 0 if that or any earlier write failed, and then, when `report`, prints
 * "cannot write NAME: reason". */
static int flushed(const char *cmd, FILE *f, const char *name, int report) {
    errno = 0;
    const int flush_failed = fflush(f) != 0;
    const int err = errno;
    if (!flush_failed && !ferror(f)) return 1;
    if (report) cli_error(cmd, "cannot write %s: %s", name, flush_failed && err ? strerror(err) : "a write failed");
    return 0;
}

int cli_output_close(const char *cmd, cli_output *o, int ok) {
    if (!o->af) return flushed(cmd, stdout, "standard output", 1) && ok;
    tfm_atomic_file *af = o->af;
    o->af = NULL;
    o->f = NULL;
    if (!ok) {
        tfm_atomic_file_abort(af);
        return 0;
    }
    /* the commit checks ferror, the flush, fsync and the close before the rename */
    if (tfm_atomic_file_commit(af) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    return 1;
}

int write_lines(const char *cmd, const char *path, char *const *lines, size_t n) {
    cli_output o;
    if (!cli_output_open(cmd, path, &o)) return 0;
    int ok = 1;
    for (size_t i = 0; ok && i < n; i++) ok = fputs(lines[i], o.f) >= 0 && fputc('\n', o.f) != EOF;
    if (!ok && o.af) cli_error(cmd, "cannot write %s: %s", path, strerror(errno));
    /* standard output: a failed write is reported by the close, with the flush's reason */
    return cli_output_close(cmd, &o, ok || !o.af);
}

int cli_stdout_finish(const char *cmd, int rc) {
    const int ok = flushed(cmd, stdout, "standard output", rc == 0);
    errno = 0;
    const int close_failed = fclose(stdout) != 0 && errno != EBADF;
    const int err = errno;
    if (rc != 0) return rc;
    if (!ok) return EXIT_RUNTIME;
    if (close_failed) {
        cli_error(cmd, "cannot write standard output: %s", strerror(err));
        return EXIT_RUNTIME;
    }
    return 0;
}
