/* The test hooks in force (include/latscope/hooks.h): one struct, set by the program. */
#include "latscope/hooks.h"
#include <string.h>

static lts_test_hooks_t hooks;   /* all zero: normal operation */

void lts_set_test_hooks(const lts_test_hooks_t *h) {
    if (h) hooks = *h;
    else memset(&hooks, 0, sizeof hooks);
}

const lts_test_hooks_t *lts_test_hooks(void) { return &hooks; }
