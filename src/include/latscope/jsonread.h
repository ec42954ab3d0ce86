/* A small strict JSON reader (RFC 8259) for latscope's own documented files: the whole text is
 * parsed into a tree of values. Strict: no comments, no trailing commas, no NaN, no duplicate
 * keys, nothing after the top-level value; nesting at most LTS_JV_MAX_DEPTH. Errors come with a
 * message naming the line and column. Format-specific checks (schema, fields) belong to the
 * format's own loader (e.g. lts_tune_parse), which walks the tree. */
#ifndef LATSCOPE_JSONREAD_H
#define LATSCOPE_JSONREAD_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

#define LTS_JV_MAX_DEPTH 64

typedef enum { LTS_JV_NULL = 0, LTS_JV_BOOL, LTS_JV_NUM, LTS_JV_STR, LTS_JV_ARR, LTS_JV_OBJ } lts_jv_type_t;

typedef struct lts_jv {
    lts_jv_type_t type;
    int line, col;          /* where the value starts (1-based), for messages */
    int boolean;            /* LTS_JV_BOOL */
    double num;             /* LTS_JV_NUM */
    int is_integer;         /* LTS_JV_NUM written without fraction or exponent, and fits in `integer` */
    long long integer;
    char *str;              /* LTS_JV_STR: UTF-8, NUL-terminated (an embedded \u0000 is refused) */
    size_t n;               /* LTS_JV_ARR / LTS_JV_OBJ: number of items */
    struct lts_jv *items;   /* array items / object values, in document order */
    char **keys;            /* LTS_JV_OBJ: keys[i] names items[i] */
} lts_jv_t;

/* Parse text[0..len) into a newly allocated tree (free with lts_jv_free). Returns 0, LTS_EINVAL
 * with "line L, column C: what was wrong" in msg, or LTS_ENOMEM. */
int lts_jv_parse(const char *text, size_t len, lts_jv_t **out, char *msg, size_t msglen);
void lts_jv_free(lts_jv_t *v);

/* The value of `key` in an object, or NULL (also when v is not an object). */
const lts_jv_t *lts_jv_get(const lts_jv_t *v, const char *key);

/* Name of a value type for messages: "null", "boolean", "number", "string", "array", "object". */
const char *lts_jv_type_name(lts_jv_type_t t);

#ifdef __cplusplus
}
#endif
#endif
