/* The line reader and a UTF-8 byte order mark (include/tfm/fileio.h, docs/HARDENING.md kind 8):
 * EF BB BF at the start of a file is dropped, from a file and from a stream, before CRLF, with or
 * without a line end; a BOM alone is an empty file; a BOM on line 2 or a second BOM is text; a
 * partial BOM is kept; the length limit and the NUL column count from after the BOM. */
#include "test_util.h"
#include "tfm/tfm.h"

/* Reads every line of bytes[0..n) (written to a temporary file, or given as a stream) joined by
 * '|' into out; returns the status of the last read. */
static tfm_status read_all(const char *bytes, size_t n, int stream, size_t max, char *out, size_t cap) {
    FILE *f = tmpfile();
    if (!f) return TFM_ERR_IO;
    fwrite(bytes, 1, n, f);
    rewind(f);
    tfm_line_reader *r = NULL;
    tfm_status st = TFM_OK;
    char path[64] = "";
    FILE *named = NULL;
    if (stream) {
        st = tfm_line_reader_from_stream(f, "<stream>", max, &r);
    } else {
        snprintf(path, sizeof path, "/tmp/tfm-bom-%ld.txt", (long)getpid());
        named = fopen(path, "wb");
        if (named) fwrite(bytes, 1, n, named), fclose(named);
        st = tfm_line_reader_open(path, max, &r);
    }
    out[0] = '\0';
    const char *line;
    size_t len, lines = 0;
    while (st == TFM_OK && (st = tfm_line_reader_next(r, &line, &len)) == TFM_OK && line) {
        if (lines++) strncat(out, "|", cap - strlen(out) - 1);
        strncat(out, line, cap - strlen(out) - 1);
    }
    if (lines == 0) snprintf(out, cap, "(no lines)");
    tfm_line_reader_free(r);
    fclose(f);
    if (*path) remove(path);
    return st;
}

int main(void) {
    static const struct {
        const char *bytes;
        size_t n;
        const char *want;
    } cases[] = {
        {"\xEF\xBB\xBFhello\nworld\n", 15, "hello|world"},
        {"\xEF\xBB\xBFhello\r\nworld\r\n", 17, "hello|world"},
        {"\xEF\xBB\xBFhello", 8, "hello"},
        {"\xEF\xBB\xBF", 3, "(no lines)"},
        {"\xEF\xBB\xBF\n", 4, ""},
        {"\xEF\xBB\xBF\xEF\xBB\xBFx\n", 8, "\xEF\xBB\xBFx"},
        {"a\n\xEF\xBB\xBF" "b\n", 7, "a|\xEF\xBB\xBF" "b"},
        {"\xEF\xBB" "x\n", 4, "\xEF\xBB" "x"},
        {"\xEF\xBB\n", 3, "\xEF\xBB"},
        {"hello\n", 6, "hello"},
    };
    char got[256];
    for (int stream = 0; stream < 2; stream++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tfm_status st = read_all(cases[i].bytes, cases[i].n, stream, 0, got, sizeof got);
            CHECK(st == TFM_OK && strcmp(got, cases[i].want) == 0, "%s case %zu: got '%s' (status %d), want '%s'",
                  stream ? "stream" : "file", i, got, (int)st, cases[i].want);
        }
    }
    /* a line of exactly the limit after a BOM is accepted; the NUL column counts from after it */
    CHECK(read_all("\xEF\xBB\xBF" "abcd\n", 8, 0, 4, got, sizeof got) == TFM_OK && strcmp(got, "abcd") == 0,
          "a 4-byte line after a BOM under a 4-byte limit: '%s'", got);
    CHECK(read_all("\xEF\xBB\xBF" "ab\0c\n", 8, 1, 0, got, sizeof got) == TFM_ERR_FORMAT &&
              strstr(tfm_last_error(), "NUL byte at byte column 3") != NULL,
          "NUL after a BOM: %s", tfm_last_error());
    return test_finish("line_reader_bom");
}
