#include "latscope/latscope.h"
#include "check.h"
#include <stdlib.h>
#include <string.h>

static int parse(const char *spec, size_t **v, size_t *n, char *msg) { return lts_parse_sizes(spec, v, n, msg, 256); }

int main(void) {
    size_t *v, n;
    char msg[256];
    CHECK(parse("0,8,1K,64K", &v, &n, msg) == LTS_OK && n == 4 && v[0] == 0 && v[1] == 8 && v[2] == 1024 && v[3] == 65536);
    free(v);
    CHECK(parse("1:4M:x2", &v, &n, msg) == LTS_OK && n == 23 && v[0] == 1 && v[22] == 4194304);
    free(v);
    CHECK(parse("0:100K:+1K", &v, &n, msg) == LTS_OK && n == 101 && v[100] == 102400 && v[1] == 1024);
    free(v);
    CHECK(parse("0,1:16:x4,1MiB,2KB", &v, &n, msg) == LTS_OK && n == 6 && v[3] == 16 && v[4] == 1048576 && v[5] == 2048);
    free(v);
    CHECK(parse("1G", &v, &n, msg) == LTS_OK && v[0] == ((size_t)1 << 30));
    free(v);
    /* bad input: the message names the bad item */
    CHECK(parse("-8", &v, &n, msg) == LTS_EINVAL && strstr(msg, "'-8'"));
    CHECK(parse("8,abc", &v, &n, msg) == LTS_EINVAL && strstr(msg, "'abc'"));
    CHECK(parse("2G", &v, &n, msg) == LTS_ERANGE && strstr(msg, "'2G'"));
    CHECK(parse("99999999999999999999999", &v, &n, msg) != LTS_OK);
    CHECK(parse("0:1M:x2", &v, &n, msg) == LTS_EINVAL && strstr(msg, "cannot start at 0"));
    CHECK(parse("1:1M:x1", &v, &n, msg) == LTS_EINVAL && strstr(msg, "factor"));
    CHECK(parse("1:1M:+0", &v, &n, msg) == LTS_EINVAL && strstr(msg, "step"));
    CHECK(parse("8:1:+1", &v, &n, msg) == LTS_EINVAL && strstr(msg, "below start"));
    CHECK(parse("1:2", &v, &n, msg) == LTS_EINVAL);
    CHECK(parse("", &v, &n, msg) == LTS_EINVAL);
    CHECK(parse("0:1G:+1", &v, &n, msg) == LTS_ERANGE && strstr(msg, "more than"));
    CHECK(parse("8K:1K:x2", &v, &n, msg) == LTS_EINVAL);
    /* found by tests/fuzz/fuzz_sizes.c: a factor this close to 1 looped for hours */
    CHECK(parse("1:1G:x1.0000000000000002", &v, &n, msg) == LTS_EINVAL && strstr(msg, "too close to 1"));
    CHECK(parse("1000:2000:x1.00001", &v, &n, msg) == LTS_OK && n == 1001 && v[0] == 1000 && v[1000] == 2000);
    free(v);
    return CHECK_DONE();
}
