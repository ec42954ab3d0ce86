/* Helpers shared by the files of the decision tables (not public): tune_table.c (the table and
 * its decision), tune_json.c (reading and writing it), tune_dispatch.c (the tuned calls); the
 * measuring is src/bench/tune_measure.c (docs/architecture.md, "Decision tables"). */
#ifndef LTS_TUNE_INTERNAL_H
#define LTS_TUNE_INTERNAL_H
#include "latscope/tune.h"
#include <stdarg.h>
#include <string.h>

static inline const char *lts_tune_op_name(lts_coll_op_t op) {
    return lts_reg_row(&lts_coll_op_names, (size_t)op)->name;
}

/* msg may be NULL (the caller does not want the reason) */
static inline void lts_tune_msg(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void lts_tune_msg(char *msg, size_t len, const char *fmt, ...) {
    if (!msg || !len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
}

/* bounded copy; a too-long source is cut (the MPI library string: the first 255 characters) */
static inline void lts_tune_copystr(char *dst, size_t n, const char *src) {
    size_t k = src ? strnlen(src, n - 1) : 0;
    if (k) memcpy(dst, src, k);
    dst[k] = '\0';
}
#endif
