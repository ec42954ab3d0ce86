/* A plain program with a known number of write() calls, for tests/python/test_systime.py:
 *   systime-writes N           N writes to /dev/null
 *   systime-writes N M K       N writes, lts_systime_start(), M writes, lts_systime_stop(), K writes
 * The window form prints {"write_calls": ..., "write_ns": ...} as lts_systime_read() sees it, and
 * exits 3 when liblatscope_systime.so is not preloaded. Bad arguments: exit 2. */
#include "latscope/systime.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int count(const char *s, long *n) {
    char *end;
    *n = strtol(s, &end, 10);
    return *end == '\0' && end != s && *n >= 0 && *n <= 100000000;
}

static int writes(int fd, long n) {
    char c = 'x';
    for (long i = 0; i < n; i++)
        if (write(fd, &c, 1) != 1) return -1;
    return 0;
}

int main(int argc, char **argv) {
    long n[3] = {0, 0, 0};
    if ((argc != 2 && argc != 4) || !count(argv[1], &n[0]) || (argc == 4 && (!count(argv[2], &n[1]) || !count(argv[3], &n[2])))) {
        fprintf(stderr, "systime-writes: usage: systime-writes N [M K] (counts 0..100000000)\n");
        return 2;
    }
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0) { perror("systime-writes: /dev/null"); return 1; }
    if (argc == 2) return writes(fd, n[0]) ? 1 : 0;
    lts_systime_start_fn start = lts_systime_lookup_start();
    lts_systime_stop_fn stop = lts_systime_lookup_stop();
    lts_systime_read_fn rd = lts_systime_lookup_read();
    if (!start || !stop || !rd) {
        fprintf(stderr, "systime-writes: liblatscope_systime.so is not preloaded\n");
        return 3;
    }
    unsigned long long c = 0, ns = 0;
    if (writes(fd, n[0]) || start() || writes(fd, n[1]) || stop() || writes(fd, n[2]) || rd("write", &c, &ns))
        return 1;
    printf("{\"write_calls\": %llu, \"write_ns\": %llu}\n", c, ns);
    return 0;
}
