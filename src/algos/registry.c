/* The collective-algorithm registry: the built-in table (native.c) split into one view per
 * operation, plus rows registered at run time. Views are what lts_reg_select works on. */
#include "internal.h"
#include "latscope/errors.h"
#include <stdlib.h>
#include <string.h>

extern const lts_coll_alg_t lts_coll_builtin[];
extern const size_t lts_coll_builtin_count;

static const lts_reg_head_t op_rows[] = {
    {"barrier", "MPI_Barrier"},
    {"bcast", "MPI_Bcast: size = the message"},
    {"reduce", "MPI_Reduce (MPI_BOR on bytes): size = each rank's vector"},
    {"allreduce", "MPI_Allreduce (MPI_BOR on bytes): size = each rank's vector"},
    {"scatter", "MPI_Scatter: size = the root's whole buffer; each rank gets size/P"},
    {"gather", "MPI_Gather: size = the root's whole buffer; each rank sends size/P"},
    {"allgather", "MPI_Allgather: size = each rank's whole result; each contributes size/P"},
    {"alltoall", "MPI_Alltoall: size = each rank's whole send buffer; size/P to each rank"},
};
_Static_assert(sizeof(op_rows) / sizeof(op_rows[0]) == LTS_COLL_NOPS, "one name per collective operation");
const lts_registry_t lts_coll_op_names = LTS_REGISTRY("collective operation", op_rows);

static lts_coll_alg_t rows[LTS_COLL_NOPS][LTS_REGISTRY_MAX];
static lts_registry_t views[LTS_COLL_NOPS];
static int ready;

static void init(void) {
    if (ready) return;
    for (int op = 0; op < LTS_COLL_NOPS; op++) {
        views[op].kind = "algorithm";
        views[op].rows = rows[op];
        views[op].stride = sizeof(lts_coll_alg_t);
        views[op].count = 0;
    }
    for (size_t i = 0; i < lts_coll_builtin_count; i++) {
        lts_coll_op_t op = lts_coll_builtin[i].op;
        rows[op][views[op].count++] = lts_coll_builtin[i];
    }
    ready = 1;
}

const lts_registry_t *lts_coll_registry(lts_coll_op_t op) {
    if ((int)op < 0 || op >= LTS_COLL_NOPS) return NULL;
    init();
    return &views[op];
}

const lts_coll_alg_t *lts_coll_find(lts_coll_op_t op, const char *name) {
    const lts_registry_t *r = lts_coll_registry(op);
    int i = r ? lts_reg_find(r, name) : LTS_ENOTFOUND;
    return i < 0 ? NULL : &rows[op][i];
}

int lts_coll_op_find(const char *name) { return lts_reg_find(&lts_coll_op_names, name); }

int lts_coll_register(lts_coll_op_t op, const char *name, const char *help, lts_coll_fn_t fn) {
    const lts_registry_t *r = lts_coll_registry(op);
    if (!r || !name || !*name || !fn.barrier || !strcmp(name, "all")) return LTS_EINVAL;
    /* the selection grammar's ',' '-' ':' must not occur in names */
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
              *c == '.'))
            return LTS_EINVAL;
    if (lts_reg_find(r, name) >= 0) return LTS_EINVAL;
    if (r->count >= LTS_REGISTRY_MAX) return LTS_ERANGE;
    char *nm = strdup(name), *hp = strdup(help ? help : "user-registered implementation");
    if (!nm || !hp) { free(nm); free(hp); return LTS_ENOMEM; }
    rows[op][views[op].count++] = (lts_coll_alg_t){nm, hp, op, fn};
    return LTS_OK;
}
