/* Registries: one static table per kind (timers, operations, ...); every row starts with
 * name and help, so one lookup/selection routine serves them all. */
#ifndef LATSCOPE_REGISTRY_H
#define LATSCOPE_REGISTRY_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Every registry row type begins with this header. */
typedef struct lts_reg_head {
    const char *name;
    const char *help;
} lts_reg_head_t;

/* A view on a static table: base address, row count and row size. */
typedef struct lts_registry {
    const char *kind;     /* "timer", "p2p operation", ... used in messages */
    const void *rows;
    size_t count;
    size_t stride;
} lts_registry_t;

#define LTS_REGISTRY(kind_, table_) \
    { (kind_), (table_), sizeof(table_) / sizeof((table_)[0]), sizeof((table_)[0]) }

/* Maximum rows in one registry (selections are 64-bit masks). */
#define LTS_REGISTRY_MAX 64

static inline const lts_reg_head_t *lts_reg_row(const lts_registry_t *r, size_t i) {
    return (const lts_reg_head_t *)((const char *)r->rows + i * r->stride);
}

/* Index of the row named `name`, or LTS_ENOTFOUND. */
int lts_reg_find(const lts_registry_t *r, const char *name);

/* Comma-separated valid names into buf (for "allowed: a, b, c" messages). */
void lts_reg_names(const lts_registry_t *r, char *buf, size_t len);

/* Include/exclude grammar "a,b,-c" (also "all", "all,-c"); a list of only exclusions starts
 * from all rows. The result is a bit mask of selected rows. On an unknown name returns
 * LTS_ENOTFOUND and writes the offending name into bad (if not NULL). Names may carry a
 * ":params" suffix (ignored here). Rows whose name starts with "null" are never selected by
 * "all": they exist to test the registry itself. */
int lts_reg_select(const lts_registry_t *r, const char *spec, uint64_t *mask, char *bad, size_t badlen);

#ifdef __cplusplus
}
#endif
#endif
