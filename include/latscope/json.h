/* A minimal JSON object builder for the results stream (JSON Lines): one record per line,
 * flushed when written. NaN/Inf are written as null (undefined is never a zero). */
#ifndef LATSCOPE_JSON_H
#define LATSCOPE_JSON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct lts_json {
    char *buf;
    size_t len, cap;
    int need_comma[32];
    int depth;
    int oom;
} lts_json_t;

void lts_json_init(lts_json_t *j);
void lts_json_free(lts_json_t *j);
void lts_json_obj_begin(lts_json_t *j, const char *key);   /* key NULL inside arrays / at top */
void lts_json_obj_end(lts_json_t *j);
void lts_json_arr_begin(lts_json_t *j, const char *key);
void lts_json_arr_end(lts_json_t *j);
void lts_json_str(lts_json_t *j, const char *key, const char *v);   /* v NULL -> null */
void lts_json_dbl(lts_json_t *j, const char *key, double v);         /* NaN -> null */
void lts_json_int(lts_json_t *j, const char *key, long long v);
void lts_json_bool(lts_json_t *j, const char *key, int v);
void lts_json_null(lts_json_t *j, const char *key);
/* Write the finished top-level value and a newline, then flush. Returns 0 or LTS_EIO. */
int lts_json_emit(lts_json_t *j, FILE *f);
/* The finished top-level value laid out for people, as a malloc'd text ending in a newline: a
 * container whose text (with ", " and ": ") fits in `width` columns at its indentation stays on
 * one line, a larger one gets one item per line, indented by 2. Deterministic, so a file read and
 * written again keeps its bytes. Returns 0 or LTS_ENOMEM. */
int lts_json_pretty(const lts_json_t *j, int width, char **text);

#ifdef __cplusplus
}
#endif
#endif
