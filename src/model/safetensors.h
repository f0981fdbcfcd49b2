/* The safetensors file format (https://github.com/huggingface/safetensors, "format"): 8-byte
 * little-endian header length N, N bytes of JSON header, then raw little-endian tensor data.
 * A generic, fully checked reader and an atomic writer; checkpoint.c maps it onto models. */
#ifndef TFM_SAFETENSORS_H
#define TFM_SAFETENSORS_H

#include "core_internal.h"

#include <stdint.h>
#include <stdio.h>

#define ST_MAX_HEADER_BYTES (100u * 1000u * 1000u) /* 100 MB, as the reference implementation */
#define ST_MAX_DIMS 8

typedef struct {
    char *name;
    char dtype[8];    /* "F32", "U8", ... */
    size_t dtype_size;
    int ndim;
    uint64_t shape[ST_MAX_DIMS];
    uint64_t begin, end; /* byte offsets relative to the start of the data section */
} st_tensor;

typedef struct {
    char *key;
    char *value;
} st_meta;

typedef struct {
    FILE *f;
    char *path;
    uint64_t data_start; /* 8 + N */
    uint64_t data_len;   /* file size − data_start */
    st_tensor *tensors;
    size_t n_tensors;
    st_meta *meta;
    size_t n_meta;
} st_file;

/** Opens and checks a safetensors file: the header length against the file size and the 100 MB
 * limit, the JSON, duplicate names, dtypes, shapes × dtype sizes against the byte ranges (64-bit,
 * overflow-checked), ranges inside the data section and not overlapping, string metadata.
 * Errors: TFM_ERR_IO, TFM_ERR_FORMAT (naming the tensor or byte offset), TFM_ERR_NOMEM. */
tfm_status st_open(const char *path, st_file *out);

/** The tensor called `name`, or NULL. */
const st_tensor *st_find(const st_file *f, const char *name);
/** The metadata value of `key`, or NULL. */
const char *st_meta_get(const st_file *f, const char *key);
/** Reads a tensor's end − begin bytes into dst. Errors: TFM_ERR_IO naming the tensor. */
tfm_status st_read(const st_file *f, const st_tensor *t, void *dst);
void st_close(st_file *f);

typedef struct {
    const char *name;
    const char *dtype; /* "F32", "U8" */
    int ndim;
    uint64_t shape[2];
    const void *data;
    uint64_t nbytes;
} st_out_tensor;

/** Writes a safetensors file atomically (tfm_atomic_file, include/tfm/fileio.h: a temporary file
 * beside `path` with mode 0666 & ~umask, fsync, rename, folder fsync), so an interrupted write
 * leaves any previous file intact. meta_kv holds n_meta (key, value) pairs.
 * Errors: TFM_ERR_IO naming the path, TFM_ERR_NOMEM. */
tfm_status st_write(const char *path, const char *const *meta_kv, size_t n_meta, const st_out_tensor *t,
                    size_t n);

#endif
