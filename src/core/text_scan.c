/* tfm_text_file_scan (include/tfm/fileio.h): a text file checked as training will read it, before
 * any work. */
#include "core_internal.h"
#include "tfm/fileio.h"
#include "tfm/text.h"
#include "utf8.h"

tfm_status tfm_text_file_scan(const char *path, size_t max_line_bytes, tfm_text_file_stats *st) {
    RETURN_IF(!path || !st, TFM_ERR_INVALID_ARG, "tfm_text_file_scan: NULL argument");
    st->lines = st->blank = 0;
    tfm_line_reader *r = NULL;
    TRY(tfm_line_reader_open(path, max_line_bytes, &r));
    tfm_status s = TFM_OK;
    for (;;) {
        const char *line;
        size_t len;
        if ((s = tfm_line_reader_next(r, &line, &len)) != TFM_OK || !line) break;
        st->lines++;
        const size_t bad = utf8_first_invalid(line, len); /* the reader refused NUL bytes */
        if (bad < len) {
            s = tfm_set_error(TFM_ERR_FORMAT, "%s:%zu: invalid UTF-8 at byte offset %zu of the line", path, st->lines,
                              bad);
            break;
        }
        st->blank += (size_t)tfm_text_is_blank(line, len);
    }
    tfm_line_reader_free(r);
    return s;
}
