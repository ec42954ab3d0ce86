/* latscope-bench seq: several commands, one after the other, in ONE launch.
 *     latscope-bench seq CMD ARGS... [--then CMD ARGS...]...
 * One mpiexec launch can sit in a slower state for its whole life (docs/measurement.md
 * "Launches"): a model's parameters measured in one launch and the runs it predicts measured in
 * another then differ by the state, not by the model. Run in one launch, both see the same state
 * (docs/barriers.md "One launch": bench/barrier.py interleaves logp and the barrier rows so).
 * Each part is the command exactly as given alone (its own -o, its metadata's command line is
 * the part's: `latscope-bench CMD ARGS...`). Every rank splits the same arguments, so all agree;
 * the sequence stops at the first part that fails, with that part's exit status (bad input: 2),
 * after the parts before it have written their results. */
#include "bench_cli.h"
#include <stdlib.h>
#include <string.h>

#define SEQ_SEP "--then"

static const char *HELP =
    "latscope-bench seq CMD ARGS... [--then CMD ARGS...]...: the commands one after the other in this\n"
    "  one launch (each with its own options and -o; e.g. the LogP parameters and the runs they\n"
    "  predict, measured in the same launch state). Stops at the first part that fails, with its exit\n"
    "  status. seq cannot be nested.\n";

static int cmd_seq(app_t *a, int argc, char **argv, int full_argc, char **full_argv) {
    (void)full_argc;
    if (argc < 2) {
        fail(a, "seq: missing command: latscope-bench seq CMD ARGS... [" SEQ_SEP " CMD ARGS...]...");
        return 1;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (a->me == 0) fputs(HELP, stdout);
        return -1;
    }
    /* check every part's command before running any (a misspelt last part must not cost the run) */
    for (int i = 1, start = 1; i <= argc; i++) {
        if (i < argc && strcmp(argv[i], SEQ_SEP)) continue;
        if (i == start) {
            fail(a, "seq: empty part at argument %d (two '" SEQ_SEP "' in a row, or one at an end)", i);
            return 1;
        }
        if (!strcmp(argv[start], "seq")) {
            fail(a, "seq: part %d is seq: seq cannot be nested", start);
            return 1;
        }
        if (!lts_bench_command_find(argv[start])) {
            fail(a, "seq: unknown command '%s' (a part starts with a command name); see latscope-bench --help",
                 argv[start]);
            return 1;
        }
        start = i + 1;
    }
    /* a part sees argv[0] = its command, and as its full command line `PROGRAM CMD ARGS...` */
    char **part = malloc(((size_t)argc + 2) * sizeof *part);
    if (!part) {
        fail(a, "seq: out of memory");
        return 1;
    }
    int status = 0;
    for (int i = 1; i < argc && status == 0;) {
        int n = 0;
        part[n++] = full_argv[0];
        while (i < argc && strcmp(argv[i], SEQ_SEP)) part[n++] = argv[i++];
        part[n] = NULL;
        i++;   /* past the separator */
        int rc = lts_bench_command_find(part[1])(a, n - 1, part + 1, n, part);
        /* -1: a part's --help was printed; stop there as the command alone would */
        if (rc != 0) status = rc;
    }
    free(part);
    return status;
}

LTS_BENCH_COMMAND("seq", "latscope-bench seq CMD ... [--then CMD ...]  several commands in one launch",
                  cmd_seq)
