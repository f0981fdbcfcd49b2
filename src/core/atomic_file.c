/* The atomic file writer of include/tfm/fileio.h: mkstemp beside the target, fchmod to
 * 0666 & ~umask, write, fflush, fsync, rename, fsync of the folder. A writer holds an flock on its
 * temporary file until the rename, so the next save to the same path can tell the files a killed
 * writer left (no lock) from a live writer's, and removes them. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fchmod, fsync, fdopen */
#define _DEFAULT_SOURCE         /* flock */

#include "core_internal.h"
#include "tfm/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct tfm_atomic_file {
    FILE *f;
    char *path; /* the target */
    char *tmp;  /* the temporary file beside it; NULL: written in place (a device or a FIFO) */
    char *target; /* what the rename replaces: path, or the file a symlink at path names */
};

/* 1 if `path` exists and is neither a regular file nor a folder: a device (/dev/null, /dev/full,
 * /dev/stdout) or a FIFO, which a rename would replace by a regular file, so it is written in
 * place. */
static int is_special(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode);
}

/* The folder part of `path` into dir[cap]: "." for a bare name, "/" for "/x". 0 if too long. */
static int parent_dir(const char *path, char *dir, size_t cap) {
    const char *slash = strrchr(path, '/');
    if (!slash) return snprintf(dir, cap, ".") < (int)cap;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= cap) return 0;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return 1;
}

/* The process umask without changing it (umask() can only be read by setting it, which races with
 * other threads creating files): the "Umask:" line of /proc/self/status (Linux 4.7 and later),
 * else the common default 022. */
static mode_t process_umask(void) {
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return mask;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Umask:", 6) == 0) {
            char *end;
            unsigned long v = strtoul(line + 6, &end, 8);
            if (end != line + 6 && v <= 0777) mask = (mode_t)v;
            break;
        }
    }
    fclose(f);
    return mask;
}

static void sync_dir(const char *path) {
    char dir[4096];
    if (!parent_dir(path, dir, sizeof dir)) return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;
    (void)fsync(fd); /* best effort: some file systems refuse fsync on a folder */
    close(fd);
}

static void af_free(tfm_atomic_file *af) {
    free(af->path);
    free(af->target);
    free(af->tmp);
    free(af);
}

tfm_status tfm_atomic_file_check_folder(const char *path) {
    char dir[4096];
    struct stat sb;
    if (!parent_dir(path, dir, sizeof dir))
        return tfm_set_error(TFM_ERR_IO, "cannot save to %s: the folder name is too long", path);
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tfm_set_error(TFM_ERR_IO, "cannot save to %s: %s is not an existing folder", path, dir);
    return TFM_OK;
}

/* The message for a failed mkstemp: name the missing folder when that is the reason. */
static tfm_status open_error(const char *path, int err) {
    if (tfm_atomic_file_check_folder(path) != TFM_OK) return TFM_ERR_IO;
    return tfm_set_error(TFM_ERR_IO, "cannot save to %s: cannot create a temporary file beside it: %s", path,
                         strerror(err));
}

/* Removes the temporary files "BASE.tmp.XXXXXX" of `path` (BASE its last component) that earlier
 * writers left when they were killed between mkstemp and rename: those whose flock can be taken,
 * i.e. that no live process is writing. Best effort: anything unexpected leaves the file alone. */
static void remove_stale_temps(const char *path) {
    char dir[4096], full[4096 + 512];
    if (!parent_dir(path, dir, sizeof dir)) return;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const size_t blen = strlen(base);
    if (blen == 0) return;
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const char *n = e->d_name;
        if (strncmp(n, base, blen) != 0 || strncmp(n + blen, ".tmp.", 5) != 0 || strlen(n + blen + 5) != 6) continue;
        if (snprintf(full, sizeof full, "%s/%s", dir, n) >= (int)sizeof full) continue;
        int fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat sb;
        if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0) unlink(full);
        close(fd); /* releases the lock */
    }
    closedir(d);
}

tfm_status tfm_atomic_file_open(const char *path, tfm_atomic_file **out) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "tfm_atomic_file_open: NULL output");
    *out = NULL;
    RETURN_IF(!path || !*path, TFM_ERR_INVALID_ARG, "tfm_atomic_file_open: empty path");
    tfm_atomic_file *af = calloc(1, sizeof *af);
    /* a symlink to an existing file: the file it names is replaced (beside it) and the link stays
     * a link; a rename over the link itself would turn it into a regular file */
    struct stat lsb;
    char *resolved = lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode) ? realpath(path, NULL) : NULL;
    const char *target = resolved ? resolved : path;
    const size_t plen = strlen(path), tlen = strlen(target);
    if (af) {
        af->path = malloc(plen + 1);
        af->target = malloc(tlen + 1);
        af->tmp = malloc(tlen + sizeof ".tmp.XXXXXX");
    }
    if (!af || !af->path || !af->target || !af->tmp) {
        free(resolved);
        if (af) af_free(af);
        return tfm_set_error(TFM_ERR_NOMEM, "out of memory saving %s", path);
    }
    memcpy(af->path, path, plen + 1);
    memcpy(af->target, target, tlen + 1);
    free(resolved); /* af->target from here on */
    if (is_special(path)) {
        free(af->tmp);
        af->tmp = NULL;
        af->f = fopen(path, "wb");
        if (!af->f) {
            int e = errno;
            af_free(af);
            return tfm_set_error(TFM_ERR_IO, "cannot save to %s: %s", path, strerror(e));
        }
        *out = af;
        return TFM_OK;
    }
    memcpy(af->tmp, af->target, tlen);
    memcpy(af->tmp + tlen, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX"); /* mkstemp replaces the six X */
    remove_stale_temps(af->target);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        tfm_status st = open_error(path, errno);
        af_free(af);
        return st;
    }
    (void)flock(fd, LOCK_EX); /* "being written": remove_stale_temps leaves a locked file alone */
    /* mkstemp creates the file for its owner only (0600); give it what open(2) would have. Best
     * effort: a file system without permissions refuses, and the file stays private. */
    (void)fchmod(fd, 0666 & ~process_umask());
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        int e = errno;
        close(fd);
        unlink(af->tmp);
        af_free(af);
        return tfm_set_error(TFM_ERR_IO, "cannot save to %s: %s", path, strerror(e));
    }
    *out = af;
    return TFM_OK;
}

FILE *tfm_atomic_file_stream(tfm_atomic_file *af) { return af->f; }

void tfm_atomic_file_abort(tfm_atomic_file *af) {
    if (!af) return;
    fclose(af->f);
    if (af->tmp) unlink(af->tmp);
    af_free(af);
}

tfm_status tfm_atomic_file_commit(tfm_atomic_file *af) {
    RETURN_IF(!af, TFM_ERR_INVALID_ARG, "tfm_atomic_file_commit: NULL file");
    errno = 0;
    int ok = !ferror(af->f); /* an earlier fwrite/fprintf failed */
    ok = ok && fflush(af->f) == 0;
    ok = ok && (!af->tmp || fsync(fileno(af->f)) == 0); /* a device or FIFO: no fsync */
    int e = errno;
    ok = fclose(af->f) == 0 && ok;
    if (e == 0) e = errno;
    tfm_status st = TFM_OK;
    if (!ok && !af->tmp) {
        st = tfm_set_error(TFM_ERR_IO, "cannot write %s: %s", af->path, e ? strerror(e) : "write error");
        af_free(af);
        return st;
    }
    if (!af->tmp) {
        af_free(af);
        return TFM_OK;
    }
    if (!ok) {
        st = tfm_set_error(TFM_ERR_IO, "cannot write %s (for %s): %s", af->tmp, af->path,
                           e ? strerror(e) : "write error");
    } else if (rename(af->tmp, af->target) != 0) {
        st = tfm_set_error(TFM_ERR_IO, "cannot rename %s to %s: %s", af->tmp, af->path, strerror(errno));
    }
    if (st != TFM_OK) unlink(af->tmp);
    else sync_dir(af->target); /* make the new name itself durable */
    af_free(af);
    return st;
}

tfm_status tfm_atomic_file_write(const char *path, const void *data, size_t len) {
    RETURN_IF(!data && len > 0, TFM_ERR_INVALID_ARG, "tfm_atomic_file_write: NULL data");
    tfm_atomic_file *af = NULL;
    TRY(tfm_atomic_file_open(path, &af));
    if (len > 0 && fwrite(data, 1, len, af->f) != len) {
        int e = errno;
        tfm_atomic_file_abort(af);
        return tfm_set_error(TFM_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    return tfm_atomic_file_commit(af);
}
