/* Memory up front (include/tfm/memory.h): the decoding estimate, the machine's available memory,
 * sizes as people write them, and the check that refuses a run before it starts. The training
 * estimate, which needs the batchers' shapes, is in src/train/memory_train.c. */
#include "batch_plan.h"
#include "model_internal.h"
#include "memory_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a + b, saturating at SIZE_MAX (an estimate that large is refused anyway) */
static size_t add_sat(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

size_t memory_total(tfm_memory_estimate *e) {
    size_t t = 0;
    const size_t parts[] = {e->params, e->grads, e->optimizer, e->activations, e->workspace, e->cache, e->data,
                            e->base};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) t = add_sat(t, parts[i]);
    e->total = t;
    return t;
}

tfm_status tfm_memory_estimate_decode(const tfm_config *cfg, int rows, int max_src, int max_out, int use_cache,
                                      size_t text_bytes, tfm_memory_estimate *out) {
    return tfm_memory_estimate_decode_beams(cfg, rows, 1, max_src, max_out, use_cache, text_bytes, out);
}

tfm_status tfm_memory_estimate_decode_beams(const tfm_config *cfg, int sentences, int beams, int max_src, int max_out,
                                            int use_cache, size_t text_bytes, tfm_memory_estimate *out) {
    RETURN_IF(!cfg || !out, TFM_ERR_INVALID_ARG, "memory estimate: NULL argument");
    memset(out, 0, sizeof *out);
    RETURN_IF(sentences < 1 || beams < 1 || sentences > INT_MAX / beams, TFM_ERR_INVALID_ARG,
              "memory estimate: decoding needs sentences >= 1 and beams >= 1, got %d and %d", sentences, beams);
    const int rows = sentences * beams;
    RETURN_IF(rows < 1 || max_src < 0 || max_out < 0, TFM_ERR_INVALID_ARG,
              "memory estimate: decoding needs rows >= 1, max_src >= 0, max_out >= 0; got %d, %d, %d", rows,
              max_src, max_out);
    const int cap = max_out + 1; /* BOS and the outputs */
    RETURN_IF(tfm_model_estimate_bytes(cfg, rows, max_src, cap) == 0, TFM_ERR_NOMEM,
              "memory estimate: decoding %d rows of %d source and %d output tokens overflows the address space",
              rows, max_src, max_out);
    out->params = tfm_config_param_count(cfg) * sizeof(float);
    if (use_cache) {
        out->cache = kv_cache_bytes_beams(cfg, sentences, beams, max_src, cap);
        out->activations = activations_encode_bytes(ops_kernels_tuned(), cfg, sentences, max_src);
        /* a decoder-only model's prompt goes through the batched prefill (prefill.h): its workspace,
         * kept with the cache and shared by the rows (each prefilled alone), for a prompt of up to
         * cap positions in chunks of PREFILL_CHUNK */
        if (cfg->arch == TFM_ARCH_DECODER_ONLY) out->workspace = model_prefill_bytes(cfg, cap);
    } else {
        out->activations = activations_bytes(ops_kernels_tuned(), cfg, rows, max_src, cap, 0);
    }
    out->data = text_bytes;
    out->base = TFM_MEMORY_BASE_BYTES;
    memory_total(out);
    return TFM_OK;
}

tfm_status tfm_memory_estimate_translate(const tfm_config *cfg, const tfm_decode_config *dc, int batch_sentences,
                                         const size_t *src_len, size_t n, size_t text_bytes,
                                         tfm_memory_estimate *out) {
    RETURN_IF(!cfg || !dc || !out || (n && !src_len), TFM_ERR_INVALID_ARG, "memory estimate: NULL argument");
    memset(out, 0, sizeof *out);
    RETURN_IF(batch_sentences < 1 || dc->beam < 1 || !(dc->max_len_a >= 0.0f) || dc->max_len_b < 0,
              TFM_ERR_INVALID_ARG, "memory estimate: batch_sentences %d, beam %d, max_len_a %g, max_len_b %d",
              batch_sentences, dc->beam, (double)dc->max_len_a, dc->max_len_b);
    size_t *len = malloc((n ? n : 1) * sizeof *len);
    RETURN_IF(!len, TFM_ERR_NOMEM, "memory estimate: out of memory for %zu source lengths", n);
    size_t tokens = 0;
    for (size_t i = 0; i < n; i++) {
        len[i] = src_len[i] < (size_t)cfg->max_len ? src_len[i] : (size_t)cfg->max_len;
        tokens = add_sat(tokens, len[i]);
    }
    const int per = batch_sentences / dc->beam > 0 ? batch_sentences / dc->beam : 1;
    batch_plan plan; /* tfm_translate_text's batches: short first, blank lines apart */
    tfm_status st = batch_plan_make(&plan, len, n, (batch_limits){.max_rows = (size_t)per});
    for (size_t j = 0; st == TFM_OK && j < plan.n_batches; j++) {
        const int B = (int)plan.batch[j].rows, S = (int)plan.batch[j].len;
        double lim = (double)dc->max_len_a * S + dc->max_len_b;
        if (lim > cfg->max_len - 1) lim = cfg->max_len - 1;
        tfm_memory_estimate b;
        st = tfm_memory_estimate_decode_beams(cfg, B, dc->beam, S, lim < 0 ? 0 : (int)lim, dc->use_cache, 0, &b);
        if (st == TFM_OK && b.activations > out->activations) out->activations = b.activations;
        if (st == TFM_OK && b.cache > out->cache) out->cache = b.cache;
        if (st == TFM_OK && b.workspace > out->workspace) out->workspace = b.workspace;
    }
    batch_plan_free(&plan);
    free(len);
    if (st != TFM_OK) {
        memset(out, 0, sizeof *out);
        return st;
    }
    out->params = tfm_config_param_count(cfg) * sizeof(float);
    out->data = add_sat(text_bytes, tokens > SIZE_MAX / sizeof(int32_t) ? SIZE_MAX : tokens * sizeof(int32_t));
    out->base = TFM_MEMORY_BASE_BYTES;
    memory_total(out);
    return TFM_OK;
}

tfm_status tfm_memory_available(size_t *bytes) {
    *bytes = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    RETURN_IF(!f, TFM_ERR_IO, "cannot read /proc/meminfo: %s", strerror(errno));
    char line[256];
    unsigned long long kib = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    fclose(f);
    RETURN_IF(!found, TFM_ERR_IO, "/proc/meminfo has no MemAvailable line (Linux 3.14 or later has one)");
    *bytes = kib > SIZE_MAX / 1024 ? SIZE_MAX : (size_t)kib * 1024;
    return TFM_OK;
}

tfm_status tfm_memory_parse(const char *text, size_t *bytes) {
    RETURN_IF(!text || !bytes, TFM_ERR_INVALID_ARG, "memory size: NULL argument");
    *bytes = 0;
    const char *p = text;
    double v = 0.0;
    int digits = 0, dot = 0;
    double scale = 1.0;
    for (; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++) {
        if (*p == '.') {
            dot = 1;
            continue;
        }
        digits++;
        if (dot) {
            scale /= 10.0;
            v += (*p - '0') * scale;
        } else {
            v = v * 10.0 + (*p - '0');
        }
    }
    RETURN_IF(digits == 0 || digits > 30, TFM_ERR_INVALID_ARG,
              "memory size '%.40s': expected a number of bytes with an optional unit K, M, G or T, e.g. 2G", text);
    static const char units[] = "KMGT";
    double mult = 1.0;
    if (*p) {
        const char *u = strchr(units, *p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        if (u && *p != '\0') {
            for (const char *k = units; k <= u; k++) mult *= 1024.0;
            p++;
            if (*p == 'i') p++;
        }
        if (*p == 'B' || *p == 'b') p++;
    }
    RETURN_IF(*p != '\0', TFM_ERR_INVALID_ARG,
              "memory size '%.40s': expected a number of bytes with an optional unit K, M, G or T, e.g. 2G", text);
    const double b = v * mult;
    RETURN_IF(!(b < 18446744073709551615.0) || b >= (double)SIZE_MAX, TFM_ERR_INVALID_ARG,
              "memory size '%.40s' is too large", text);
    *bytes = (size_t)b;
    return TFM_OK;
}

int tfm_memory_format(size_t bytes, char *buf, size_t cap) {
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int k = 0;
    while (v >= 1024.0 && k < 6) {
        v /= 1024.0;
        k++;
    }
    if (k == 0) return snprintf(buf, cap, "%zu B", bytes);
    return snprintf(buf, cap, v < 10.0 ? "%.2f %s" : v < 100.0 ? "%.1f %s" : "%.0f %s", v, names[k]);
}

tfm_status tfm_memory_check(const tfm_memory_estimate *e, size_t limit, const char *limit_name, const char *advice) {
    if (e->total <= limit) return TFM_OK;
    char total[32], lim[32], params[32], opt[32], act[32], cache[32], rest[32];
    tfm_memory_format(e->total, total, sizeof total);
    tfm_memory_format(limit, lim, sizeof lim);
    tfm_memory_format(e->params, params, sizeof params);
    tfm_memory_format(add_sat(e->grads, e->optimizer), opt, sizeof opt);
    tfm_memory_format(add_sat(e->activations, e->workspace), act, sizeof act);
    tfm_memory_format(e->cache, cache, sizeof cache);
    tfm_memory_format(add_sat(e->data, e->base), rest, sizeof rest);
    return tfm_set_error(TFM_ERR_NOMEM,
                         "this run needs about %s of memory but %s allows %s (parameters %s, gradients and "
                         "optimizer state %s, activations %s, KV cache %s, data and the program %s); %s",
                         total, limit_name ? limit_name : "the limit", lim, params, opt, act, cache, rest,
                         advice ? advice : "use a smaller model or batch");
}
