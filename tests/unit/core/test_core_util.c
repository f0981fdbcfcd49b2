/* The one-of-each utilities of src/core: the splitmix64 hash (values pinned, and equal to the
 * copies it replaced), PCG32, UTF-8 validation, the line reader, the atomic file writer, error
 * prefixing and the enum <-> name tables. Files go to a fresh mkdtemp folder, removed at the end. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, umask */

#include "test_util.h"

#include "core_internal.h"
#include "hash.h"
#include "ops.h"
#include "rng.h"
#include "tfm/fileio.h"
#include "tfm/names.h"
#include "utf8.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[4096];

/* g_dir/name, in one of four rotating buffers: copy it to keep it past three more calls. */
static const char *in_dir(const char *name) {
    static char buf[4][sizeof g_dir + 64];
    static int slot = 0;
    char *b = buf[slot++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", g_dir, name);
    return b;
}

static void write_raw(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, len, f);
    fclose(f);
}

static size_t read_raw(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return (size_t)-1;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n;
}

/* Entries of g_dir whose name contains ".tmp." (temporary files an atomic write left behind). */
static int temp_files_left(void) {
    DIR *d = opendir(g_dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* ---- hash and RNG ------------------------------------------------------------------------ */

/* The copies the hash replaced, written out as they were (ops.h dropout_keep, forward.c site_seed,
 * batcher.c splitmix64, cmd_train.c shuffle): the core hash must give the same bits. */
static uint64_t old_finaliser(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static uint64_t old_dropout_hash(uint64_t seed, uint64_t i) { return old_finaliser(seed + (i + 1u) * 0x9E3779B97F4A7C15ULL); }
static uint64_t old_site_seed(uint64_t seed, uint64_t site) { return old_finaliser(seed + site * 0xD1B54A32D192ED03ULL); }
static uint64_t old_splitmix64(uint64_t x) { return old_finaliser(x + 0x9E3779B97F4A7C15ULL); }

static void test_hash(void) {
    /* splitmix64 from state 0: the reference sequence of Vigna's splitmix64.c */
    static const uint64_t ref0[3] = {0xE220A8397B1DCDAFULL, 0x6E789E6AA1B965F4ULL, 0x06C45D188009454FULL};
    uint64_t state = 0;
    for (int k = 0; k < 3; k++) {
        CHECK(hash_stream(0, (uint64_t)k + 1) == ref0[k], "hash_stream(0, %d) = %016llx", k + 1,
              (unsigned long long)hash_stream(0, (uint64_t)k + 1));
        CHECK(hash_next(&state) == ref0[k], "hash_next value %d", k + 1);
    }
    /* pinned (computed independently in Python from the formulas in hash.h) */
    CHECK(hash_mix64(0) == 0 && hash_mix64(UINT64_MAX) == 0xB4D055FCF2CBBD7BULL, "hash_mix64 pinned");
    CHECK(hash_stream(1234567, 1) == 0x599ED017FB08FC85ULL && hash_stream(1234567, 1000000) == 0x6492D7B764F06FEBULL,
          "hash_stream pinned");
    CHECK(hash_site_seed(42, 1) == 0x0B4CD618FFFDB248ULL && hash_site_seed(42, 2) == 0x9D48BDC15C330EACULL,
          "hash_site_seed pinned");
    CHECK(hash_derive_seed(1, 0) == 0x08B4FDA8C892B50EULL && hash_derive_seed(1, 5) == 0xE17B6D147DA182DAULL,
          "hash_derive_seed pinned");
    /* the same bits as every copy it replaced, over many inputs */
    int same = 1;
    for (uint64_t i = 0; i < 10000; i++) {
        uint64_t seed = old_splitmix64(i * 7919u);
        same &= hash_stream(seed, i + 1) == old_dropout_hash(seed, i);
        same &= hash_site_seed(seed, i) == old_site_seed(seed, i);
        same &= hash_stream(seed, 1) == old_splitmix64(seed);
        same &= hash_derive_seed(seed, i) == old_splitmix64(seed ^ old_splitmix64(i));
    }
    CHECK(same, "core hash differs from the copies it replaced");
    /* dropout_keep (ops.h) on the core hash: the keep mask of 32 elements at p = 0.5, pinned */
    uint32_t bits = 0;
    for (uint32_t i = 0; i < 32; i++) bits |= (uint32_t)dropout_keep(0x0123456789ABCDEFULL, i, 0.5f) << i;
    CHECK(bits == 0x04CCB5CAu, "dropout_keep mask %08x, want 04ccb5ca", (unsigned)bits);
}

static void test_rng(void) {
    /* PCG32 seeded (42, 54): the first outputs of O'Neill's pcg32-demo */
    static const uint32_t want[6] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u, 0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    tfm_rng r;
    rng_seed(&r, 42, 54);
    for (int i = 0; i < 6; i++) CHECK(rng_u32(&r) == want[i], "pcg32 output %d", i);
    tfm_rng a, b;
    rng_seed(&a, 7, 1);
    rng_seed(&b, 7, 1);
    uint64_t hi = rng_u32(&b), lo = rng_u32(&b);
    CHECK(rng_u64(&a) == ((hi << 32) | lo), "rng_u64 takes the first draw as the high half");
    size_t counts[3] = {0, 0, 0};
    int in_range = 1;
    for (int i = 0; i < 30000; i++) {
        uint64_t x = rng_below(&a, 3);
        in_range &= x < 3;
        if (x < 3) counts[x]++;
    }
    CHECK(in_range && counts[0] > 9500 && counts[1] > 9500 && counts[2] > 9500, "rng_below(3): %zu %zu %zu",
          counts[0], counts[1], counts[2]);
    CHECK(rng_below(&a, 1) == 0, "rng_below(1) is 0");
    uint64_t big = (UINT64_MAX / 2) + 2; /* rejection of almost half the draws */
    int ok = 1;
    for (int i = 0; i < 100; i++) ok &= rng_below(&a, big) < big;
    CHECK(ok, "rng_below(2^63 + 1) in range");
}

/* ---- UTF-8 ------------------------------------------------------------------------------- */

static void test_utf8(void) {
    static const struct {
        const char *name, *s;
        size_t len, bad; /* bad == len: valid */
    } cases[] = {
        {"ASCII", "plain text", 10, 10},
        {"boundaries", "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 19, 19},
        {"just below the surrogates", "\xed\x9f\xbf", 3, 3},
        {"just above the surrogates", "\xee\x80\x80", 3, 3},
        {"overlong 2-byte NUL", "a\xc0\x80", 3, 1},
        {"overlong 2-byte C1", "\xc1\xbf", 2, 0},
        {"overlong 3-byte", "ab\xe0\x9f\xbf", 5, 2},
        {"overlong 4-byte", "\xf0\x8f\xbf\xbf", 4, 0},
        {"high surrogate", "x\xed\xa0\x80", 4, 1},
        {"low surrogate", "\xed\xbf\xbf", 3, 0},
        {"above U+10FFFF", "\xf4\x90\x80\x80", 4, 0},
        {"lead F5", "\xf5\x80\x80\x80", 4, 0},
        {"lead FF", "ok\xff", 3, 2},
        {"lone continuation", "\x80", 1, 0},
        {"truncated 2-byte at end", "ab\xc3", 3, 2},
        {"truncated 3-byte at end", "\xe2\x82", 2, 0},
        {"truncated 4-byte at end", "\xf0\x9f\x98", 3, 0},
        {"truncated by ASCII", "\xe2\x82" "A", 3, 0},
        {"NUL byte", "a\0b", 3, 1},
        {"empty", "", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t got = utf8_first_invalid(cases[i].s, cases[i].len);
        CHECK(got == cases[i].bad, "utf8 %s: first invalid %zu, want %zu", cases[i].name, got, cases[i].bad);
    }
    CHECK(utf8_first_invalid(NULL, 0) == 0, "NULL with length 0");
    uint32_t cp = 0;
    CHECK(utf8_decode((const unsigned char *)"\xe2\x82\xac", 3, &cp) == 3 && cp == 0x20AC, "decode U+20AC");
    CHECK(utf8_decode((const unsigned char *)"\xf4\x8f\xbf\xbf", 4, &cp) == 4 && cp == 0x10FFFF, "decode U+10FFFF");
    CHECK(utf8_decode((const unsigned char *)"\xc3\xb1", 2, &cp) == 2 && cp == 0xF1, "decode U+00F1");
    cp = 7;
    CHECK(utf8_decode((const unsigned char *)"\xed\xa0\x80", 3, &cp) == 0 && cp == 7, "surrogate not decoded");
}

/* ---- line reader ------------------------------------------------------------------------- */

/* Reads every line of `path` with limit `max`, joining them with '|' into out; returns the status. */
static tfm_status read_joined(const char *path, size_t max, char *out, size_t cap, size_t *n_lines) {
    tfm_line_reader *r = NULL;
    out[0] = '\0';
    *n_lines = 0;
    tfm_status st = tfm_line_reader_open(path, max, &r);
    const char *line;
    size_t len, used = 0;
    while (st == TFM_OK && (st = tfm_line_reader_next(r, &line, &len)) == TFM_OK && line) {
        (*n_lines)++;
        CHECK(tfm_line_reader_line_number(r) == *n_lines && strlen(line) == len, "line %zu numbered and measured",
              *n_lines);
        used += (size_t)snprintf(out + used, cap - used, "%s%s", *n_lines > 1 ? "|" : "", line);
        if (used >= cap) used = cap - 1;
    }
    tfm_line_reader_free(r);
    return st;
}

static void test_line_reader(void) {
    char got[256];
    size_t n = 0;
    char p[sizeof g_dir + 64];
    snprintf(p, sizeof p, "%s", in_dir("lines.txt"));
    write_raw(p, "a\r\nb\n\nc", 7);
    CHECK(read_joined(p, 0, got, sizeof got, &n) == TFM_OK && n == 4 && strcmp(got, "a|b||c") == 0,
          "CRLF, LF, an empty line, no final newline: %zu '%s'", n, got);
    write_raw(p, "x\r", 2);
    CHECK(read_joined(p, 0, got, sizeof got, &n) == TFM_OK && n == 1 && strcmp(got, "x") == 0,
          "a lone CR at the end of the last line is dropped: '%s'", got);
    write_raw(p, "a\r\r\nb\rc\n", 8);
    CHECK(read_joined(p, 0, got, sizeof got, &n) == TFM_OK && n == 2 && strcmp(got, "a\r|b\rc") == 0,
          "only one CR before LF is stripped, inner CRs stay: '%s'", got);
    write_raw(p, "", 0);
    CHECK(read_joined(p, 0, got, sizeof got, &n) == TFM_OK && n == 0, "an empty file has no lines");
    write_raw(p, "\n", 1);
    CHECK(read_joined(p, 0, got, sizeof got, &n) == TFM_OK && n == 1 && got[0] == '\0', "\"\\n\" is one empty line");

    /* a line of 1 MiB + 7 without a limit (the buffer grows), then the limit on both sides */
    size_t big = ((size_t)1 << 20) + 7;
    char *buf = malloc(big + 3);
    if (buf) {
        memset(buf, 'x', big);
        memcpy(buf + big, "\nz", 2);
        write_raw(p, buf, big + 2);
        tfm_line_reader *r = NULL;
        const char *line = NULL;
        size_t len = 0;
        tfm_status st = tfm_line_reader_open(p, 0, &r);
        if (st == TFM_OK) st = tfm_line_reader_next(r, &line, &len);
        CHECK(st == TFM_OK && line && len == big && line[big - 1] == 'x' && line[big] == '\0', "a 1 MiB line: %zu",
              len);
        if (st == TFM_OK) st = tfm_line_reader_next(r, &line, &len);
        CHECK(st == TFM_OK && line && strcmp(line, "z") == 0, "the line after it");
        tfm_line_reader_free(r);
        free(buf);
    }
    write_raw(p, "0123456789\n0123456789\r\n", 23);
    CHECK(read_joined(p, 10, got, sizeof got, &n) == TFM_OK && n == 2, "lines of exactly the limit (CR not counted)");
    write_raw(p, "ok\n01234567890\n", 15);
    CHECK(read_joined(p, 10, got, sizeof got, &n) == TFM_ERR_FORMAT && n == 1 &&
              strstr(tfm_last_error(), "lines.txt:2: line longer than the limit of 10 bytes"),
          "a line over the limit: '%s'", tfm_last_error());
    write_raw(p, "01234567890", 11);
    CHECK(read_joined(p, 10, got, sizeof got, &n) == TFM_ERR_FORMAT && n == 0, "over the limit without newline");

    write_raw(p, "ok\nab\0c\n", 8);
    CHECK(read_joined(p, 0, got, sizeof got, &n) == TFM_ERR_FORMAT && n == 1 &&
              strstr(tfm_last_error(), "lines.txt:2: NUL byte at byte column 3"),
          "a NUL byte names line and column: '%s'", tfm_last_error());

    write_raw(p, "a\nb\nc", 5);
    tfm_line_reader *r = NULL;
    const char *line = NULL;
    size_t rest = 0;
    tfm_status st = tfm_line_reader_open(p, 0, &r);
    if (st == TFM_OK) st = tfm_line_reader_next(r, &line, NULL);
    if (st == TFM_OK) st = tfm_line_reader_count_rest(r, &rest);
    CHECK(st == TFM_OK && rest == 2, "count_rest after one line: %zu", rest);
    tfm_line_reader_free(r);

    FILE *f = fopen(p, "rb");
    r = NULL;
    if (f && tfm_line_reader_from_stream(f, "<stream>", 0, &r) == TFM_OK) {
        CHECK(strcmp(tfm_line_reader_name(r), "<stream>") == 0, "stream name");
        CHECK(tfm_line_reader_next(r, &line, NULL) == TFM_OK && line && strcmp(line, "a") == 0, "stream line");
        tfm_line_reader_free(r);
        CHECK(fgetc(f) == 'b', "the stream stays open and positioned after the line read");
    } else {
        CHECK(0, "from_stream failed: %s", tfm_last_error());
    }
    if (f) fclose(f);

    r = (tfm_line_reader *)&r; /* must be reset to NULL */
    st = tfm_line_reader_open(in_dir("missing.txt"), 0, &r);
    CHECK(st == TFM_ERR_IO && r == NULL && strstr(tfm_last_error(), "missing.txt"), "a missing file: '%s'",
          tfm_last_error());
}

/* ---- atomic file writer ------------------------------------------------------------------ */

static unsigned file_mode(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (unsigned)(sb.st_mode & 0777) : 0xFFFFu;
}

static void test_atomic_file(void) {
    char got[64];
    char p[sizeof g_dir + 64];
    snprintf(p, sizeof p, "%s", in_dir("out.bin"));

    /* the new file's mode is 0666 & ~umask, for two masks (the library reads the umask, never sets it) */
    mode_t saved = umask(027);
    CHECK(tfm_atomic_file_write(p, "one", 3) == TFM_OK, "write: %s", tfm_last_error());
    CHECK(file_mode(p) == 0640, "mode %o with umask 027, want 640", file_mode(p));
    umask(002);
    CHECK(tfm_atomic_file_write(p, "two", 3) == TFM_OK && read_raw(p, got, sizeof got) == 3 && strcmp(got, "two") == 0,
          "overwrite");
    CHECK(file_mode(p) == 0664, "mode %o with umask 002, want 664", file_mode(p));
    umask(saved);
    CHECK(temp_files_left() == 0, "no temporary file after commits");

    /* abort: the old file untouched, the temporary file gone */
    tfm_atomic_file *af = NULL;
    CHECK(tfm_atomic_file_open(p, &af) == TFM_OK, "open");
    if (af) {
        fputs("partial", tfm_atomic_file_stream(af));
        fflush(tfm_atomic_file_stream(af));
        CHECK(temp_files_left() == 1, "the temporary file exists while writing");
        tfm_atomic_file_abort(af);
    }
    CHECK(read_raw(p, got, sizeof got) == 3 && strcmp(got, "two") == 0 && temp_files_left() == 0,
          "abort leaves the old file and no temporary file");

    /* a stream error (here: reading from the write-only stream) makes commit fail cleanly */
    af = NULL;
    CHECK(tfm_atomic_file_open(p, &af) == TFM_OK, "open 2");
    if (af) {
        FILE *f = tfm_atomic_file_stream(af);
        fputs("broken", f);
        (void)fgetc(f); /* sets the stream's error flag */
        tfm_status st = tfm_atomic_file_commit(af);
        CHECK(st == TFM_ERR_IO && strstr(tfm_last_error(), "out.bin"), "commit after a stream error: %d '%s'", st,
              tfm_last_error());
    }
    CHECK(read_raw(p, got, sizeof got) == 3 && strcmp(got, "two") == 0 && temp_files_left() == 0,
          "a failed commit leaves the old file and no temporary file");

    /* rename refused: the target is a folder */
    const char *d = in_dir("a-folder");
    mkdir(d, 0755);
    tfm_status st = tfm_atomic_file_write(d, "x", 1);
    struct stat sb;
    CHECK(st == TFM_ERR_IO && strstr(tfm_last_error(), "a-folder") && stat(d, &sb) == 0 && S_ISDIR(sb.st_mode),
          "saving over a folder fails, the folder stays: '%s'", tfm_last_error());
    CHECK(temp_files_left() == 0, "no temporary file after a refused rename");
    rmdir(d);

    /* a missing folder is named */
    st = tfm_atomic_file_write(in_dir("no-such-dir/x.bin"), "x", 1);
    CHECK(st == TFM_ERR_IO && strstr(tfm_last_error(), "no-such-dir") && strstr(tfm_last_error(), "is not an existing folder"),
          "missing folder: '%s'", tfm_last_error());
    af = (tfm_atomic_file *)&af;
    CHECK(tfm_atomic_file_open(in_dir("no-such-dir/x.bin"), &af) == TFM_ERR_IO && af == NULL, "open sets NULL");
    CHECK(tfm_atomic_file_write(in_dir("empty.bin"), NULL, 0) == TFM_OK && read_raw(in_dir("empty.bin"), got, sizeof got) == 0,
          "an empty file");
    unlink(in_dir("empty.bin"));
    unlink(p);
}

/* ---- error prefix and names ---------------------------------------------------------------- */

static void test_error_prefix(void) {
    tfm_set_error(TFM_ERR_FORMAT, "invalid UTF-8 at byte %d", 3);
    tfm_status st = tfm_error_prefix(TFM_ERR_FORMAT, "%s:%zu: ", "a.txt", (size_t)7);
    CHECK(st == TFM_ERR_FORMAT && strcmp(tfm_last_error(), "a.txt:7: invalid UTF-8 at byte 3") == 0, "prefix: '%s'",
          tfm_last_error());
    char long_prefix[2000];
    memset(long_prefix, 'p', sizeof long_prefix - 1);
    long_prefix[sizeof long_prefix - 1] = '\0';
    tfm_error_prefix(TFM_ERR_IO, "%s", long_prefix);
    CHECK(strlen(tfm_last_error()) < 1024 && tfm_last_error()[0] == 'p', "a prefix longer than the buffer is cut");
}

static void test_names(void) {
    tfm_arch a = TFM_ARCH_ENCODER_DECODER;
    CHECK(tfm_arch_from_name("decoder-only", &a) == TFM_OK && a == TFM_ARCH_DECODER_ONLY, "arch from name");
    CHECK(strcmp(tfm_arch_name(TFM_ARCH_ENCODER_ONLY), "encoder-only") == 0, "arch name");
    CHECK(tfm_arch_name((tfm_arch)99) == NULL, "unknown arch value has no name");
    tfm_activation act = TFM_ACT_GELU;
    CHECK(tfm_activation_from_name("tanh", &act) == TFM_ERR_INVALID_ARG && act == TFM_ACT_GELU &&
              strcmp(tfm_last_error(), "activation 'tanh' must be relu, gelu or silu") == 0,
          "unknown activation: '%s'", tfm_last_error());
    CHECK(tfm_activation_from_name("relu", &act) == TFM_OK && act == TFM_ACT_RELU, "relu");
    CHECK(tfm_activation_from_name(NULL, &act) == TFM_ERR_INVALID_ARG, "NULL name");
    tfm_pe pe = (tfm_pe)5;
    CHECK(tfm_pe_from_name("sinusoidal", &pe) == TFM_OK && pe == TFM_PE_SINUSOIDAL, "pe");
    tfm_optimizer o = TFM_OPTIMIZER_ADAM;
    CHECK(tfm_optimizer_from_name("sgd", &o) == TFM_OK && o == TFM_OPTIMIZER_SGD, "optimizer");
    CHECK(strcmp(tfm_optimizer_name(TFM_OPTIMIZER_ADAM), "adam") == 0, "optimizer name");
    tfm_schedule s = TFM_SCHEDULE_CONSTANT;
    CHECK(tfm_schedule_from_name("noam", &s) == TFM_OK && s == TFM_SCHEDULE_NOAM, "schedule");
    CHECK(tfm_schedule_from_name("Noam", &s) == TFM_ERR_INVALID_ARG, "names are case-sensitive");

    /* each list names exactly the table's names, each of which round-trips */
    const char *const lists[] = {tfm_arch_names(),      tfm_activation_names(),    tfm_pe_names(),
                                 tfm_optimizer_names(), tfm_schedule_names(),      tfm_pe_layout_names(),
                                 tfm_rope_pairing_names(), tfm_beam_stop_names(), tfm_suppress_names()};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
        char copy[256];
        snprintf(copy, sizeof copy, "%s", lists[k]);
        size_t words = 0, found = 0;
        for (char *w = strtok(copy, ", "); w; w = strtok(NULL, ", ")) {
            if (strcmp(w, "or") == 0) continue;
            words++;
            int v = -1;
            tfm_arch av;
            tfm_activation cv;
            tfm_pe pv;
            tfm_optimizer ov;
            tfm_schedule sv;
            tfm_pe_layout lv;
            tfm_rope_pairing rv;
            tfm_beam_stop bv;
            tfm_suppress uv;
            switch (k) {
            case 0: v = tfm_arch_from_name(w, &av) == TFM_OK && strcmp(tfm_arch_name(av), w) == 0; break;
            case 1: v = tfm_activation_from_name(w, &cv) == TFM_OK && strcmp(tfm_activation_name(cv), w) == 0; break;
            case 2: v = tfm_pe_from_name(w, &pv) == TFM_OK && strcmp(tfm_pe_name(pv), w) == 0; break;
            case 3: v = tfm_optimizer_from_name(w, &ov) == TFM_OK && strcmp(tfm_optimizer_name(ov), w) == 0; break;
            case 4: v = tfm_schedule_from_name(w, &sv) == TFM_OK && strcmp(tfm_schedule_name(sv), w) == 0; break;
            case 5: v = tfm_pe_layout_from_name(w, &lv) == TFM_OK && strcmp(tfm_pe_layout_name(lv), w) == 0; break;
            case 6: v = tfm_rope_pairing_from_name(w, &rv) == TFM_OK && strcmp(tfm_rope_pairing_name(rv), w) == 0; break;
            case 7: v = tfm_beam_stop_from_name(w, &bv) == TFM_OK && strcmp(tfm_beam_stop_name(bv), w) == 0; break;
            default: v = tfm_suppress_from_name(w, &uv) == TFM_OK && strcmp(tfm_suppress_name(uv), w) == 0; break;
            }
            found += v == 1;
        }
        static const size_t want[] = {3, 3, 8, 2, 2, 3, 2, 2, 3};
        CHECK(words == want[k] && found == words, "list '%s': %zu names, %zu round-trip", lists[k], words, found);
    }
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/tfm_core_util.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "cannot create a temporary folder %s\n", g_dir);
        return 1;
    }
    test_hash();
    test_rng();
    test_utf8();
    test_line_reader();
    test_atomic_file();
    test_error_prefix();
    test_names();
    unlink(in_dir("lines.txt"));
    if (rmdir(g_dir) != 0) CHECK(0, "the test folder %s is not empty", g_dir);
    return test_finish("test_core_util");
}
