/* A small mutation-fuzzing driver for the libFuzzer entry point LLVMFuzzerTestOneInput (there is
 * no clang here, so no libFuzzer). Linked with one harness (tests/fuzz/fuzz_*.c) and built with
 * ASan+UBSan in build-asan/ (`make test-asan`, `make fuzz`).
 *
 *   fuzz-NAME [--seconds S] [--runs N] [--seed N] [--max-len N] [--dict FILE] [--artifacts DIR]
 *             [--timeout S] [--quiet] INPUT...
 *
 * INPUTs (files, or directories of files) are run first, in name order; then, if --seconds or
 * --runs is given, random mutations of them (bit flips, byte insert/delete, chunk duplication,
 * splicing between inputs, dictionary tokens) until either limit. Without a limit it only runs
 * the inputs: that is how a saved crash is replayed. The mutation sequence is a function of
 * --seed alone (and of the binary: see coverage below), so `--runs N --seed S` repeats exactly.
 *
 * Feedback: the harness's parser sources are compiled with -fsanitize-coverage=trace-pc, which
 * calls __sanitizer_cov_trace_pc at every basic block; we hash (previous block, block) pairs into
 * a map of hit counts (AFL's edge coverage with count buckets) and keep every mutant that reaches
 * a new (edge, bucket) as a further input. Block addresses are taken relative to main(), so the
 * feedback is the same under address-space randomisation.
 *
 * A crash is a sanitizer report (its death callback), an abort() (a harness invariant), a hang
 * (--timeout, default 5 s for one input) or a leak (LeakSanitizer, checked after an input whose
 * mallocs and frees do not balance): the input is written to ARTIFACTS/crash-NAME-HASH, its path
 * printed, and the exit status is 1. Bad options: a message and exit status 2. */
#define _GNU_SOURCE
#include "fuzz.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
void __sanitizer_set_death_callback(void (*callback)(void));
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
int __lsan_do_recoverable_leak_check(void);
#else
#define FUZZ_ASAN 0
#endif

/* ---- coverage ---------------------------------------------------------------------------- */

#define MAP_BITS 15
#define MAP_SIZE (1u << MAP_BITS)
static uint64_t cov_words[MAP_SIZE / 8];     /* hit counts of this execution, scanned a word at a time */
#define cov_map ((unsigned char *)cov_words)
static unsigned char cov_seen[MAP_SIZE];     /* buckets seen so far, one bit each */
static uintptr_t cov_prev, cov_base;

void __sanitizer_cov_trace_pc(void);
void __sanitizer_cov_trace_pc(void) {
    uintptr_t pc = (uintptr_t)__builtin_return_address(0) - cov_base;
    uintptr_t h = (uintptr_t)((pc * 0x9E3779B97F4A7C15ull) >> (64 - MAP_BITS));
    unsigned char *c = &cov_map[(h ^ cov_prev) & (MAP_SIZE - 1)];
    if (*c < 255) (*c)++;
    cov_prev = h >> 1;
}

/* AFL's buckets: 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+ */
static unsigned char bucket(unsigned char n) {
    return n == 0 ? 0 : n == 1 ? 1 : n == 2 ? 2 : n == 3 ? 4 : n < 8 ? 8 : n < 16 ? 16 : n < 32 ? 32 : n < 128 ? 64 : 128;
}

/* New (edge, bucket) pairs in this execution's map; clears the map for the next one. */
static size_t cov_merge(void) {
    size_t fresh = 0;
    uint64_t *w = cov_words;
    for (size_t i = 0; i < MAP_SIZE / 8; i++) {
        if (!w[i]) continue;
        for (size_t j = i * 8; j < i * 8 + 8; j++) {
            unsigned char b = bucket(cov_map[j]);
            if (b & ~cov_seen[j]) { cov_seen[j] |= b; fresh++; }
        }
        w[i] = 0;
    }
    cov_prev = 0;
    return fresh;
}

static size_t cov_edges(void) {
    size_t n = 0;
    for (size_t i = 0; i < MAP_SIZE; i++) n += cov_seen[i] != 0;
    return n;
}

/* ---- the input being run, for the crash handlers ----------------------------------------- */

static const char *prog = "fuzz";
static const char *artifacts = ".";
static const uint8_t *volatile cur_data;
static volatile size_t cur_len;
static volatile unsigned long long execs;
static volatile int in_exec;
static int timeout_s = 5;

/* Async-signal-safe: called from a sanitizer's death callback or a signal handler. */
static void put(const char *s) { ssize_t r = write(2, s, strlen(s)); (void)r; }
static void save_crash(const char *why) {
    if (!in_exec || !cur_data) { put(prog); put(": "); put(why); put(" outside an input\n"); return; }
    uint64_t h = 1469598103934665603ull;   /* FNV-1a of the input: the same input, the same name */
    for (size_t i = 0; i < cur_len; i++) h = (h ^ cur_data[i]) * 1099511628211ull;
    char path[4096];
    size_t k = 0;
    const char *parts[] = {artifacts, "/crash-", prog, "-"};
    for (size_t p = 0; p < 4; p++)
        for (const char *c = parts[p]; *c && k < sizeof path - 20; c++) path[k++] = *c;
    for (int i = 15; i >= 0; i--) path[k++] = "0123456789abcdef"[(h >> (4 * i)) & 15];
    path[k] = '\0';
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        size_t off = 0;
        while (off < cur_len) {
            ssize_t r = write(fd, (const void *)(cur_data + off), cur_len - off);
            if (r <= 0) break;
            off += (size_t)r;
        }
        close(fd);
    }
    put(prog); put(": "); put(why); put(fd >= 0 ? "; the input is saved in " : "; could not save the input to ");
    put(path); put(" (replay: "); put(prog); put(" "); put(path); put(")\n");
}

static void on_death(void) { save_crash("sanitizer report"); }
static void on_abort(int sig) {
    (void)sig;
    save_crash("abort (a harness invariant, or a UBSan report: see above)");
    _exit(1);
}

/* Watchdog: once a second; an input still running after timeout_s ticks is a hang. */
static unsigned long long wd_execs;
static int wd_ticks;
static void on_alarm(int sig) {
    (void)sig;
    if (!in_exec || execs != wd_execs) { wd_execs = execs; wd_ticks = 0; return; }
    if (++wd_ticks >= timeout_s) {
        save_crash("timeout (one input ran longer than --timeout)");
        _exit(1);
    }
}

/* UBSan (its own runtime under gcc) does not call ASan's death callback: make its report end in
 * abort(), which on_abort turns into a saved input. UBSAN_OPTIONS from the environment still
 * override this. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) { return "abort_on_error=1:print_stacktrace=1:halt_on_error=1"; }

#if FUZZ_ASAN
static volatile long long live_allocs;
static void on_malloc(const volatile void *p, size_t n) { (void)p; (void)n; if (in_exec) live_allocs++; }
static void on_free(const volatile void *p) { if (p && in_exec) live_allocs--; }
#endif

/* ---- random numbers: splitmix64, one stream per --seed ----------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* ---- inputs and the dictionary ------------------------------------------------------------ */

typedef struct blob { uint8_t *p; size_t n; } blob_t;
typedef struct blobs { blob_t *v; size_t n, cap; } blobs_t;

static void blobs_add(blobs_t *b, const uint8_t *p, size_t n) {
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->v = realloc(b->v, b->cap * sizeof *b->v);
        if (!b->v) abort();
    }
    uint8_t *c = malloc(n ? n : 1);
    if (!c) abort();
    if (n) memcpy(c, p, n);
    b->v[b->n++] = (blob_t){c, n};
}

static void die_usage(const char *fmt, const char *arg) {
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: %s [--seconds S] [--runs N] [--seed N] [--max-len N] [--dict FILE] "
                    "[--artifacts DIR] [--timeout S] [--quiet] INPUT...\n", prog);
    exit(2);
}

static int read_file(const char *path, uint8_t **p, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 4096, len = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (!b) { fclose(f); return -1; }
        len += fread(b + len, 1, cap - len, f);
        if (len < cap) break;
        cap *= 2;
        uint8_t *nb = realloc(b, cap);
        if (!nb) free(b);
        b = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(b); return -1; }
    *p = b;
    *n = len;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A file, or every regular file of a directory in name order (the run must not depend on readdir's order). */
static void load_inputs(const char *path, blobs_t *out) {
    struct stat st;
    if (stat(path, &st) != 0) die_usage("input '%s' does not exist (a file or a directory of files)", path);
    if (!S_ISDIR(st.st_mode)) {
        uint8_t *p;
        size_t n;
        if (read_file(path, &p, &n)) die_usage("input '%s' cannot be read", path);
        blobs_add(out, p, n);
        free(p);
        return;
    }
    DIR *d = opendir(path);
    if (!d) die_usage("directory '%s' cannot be read", path);
    char **names = NULL;
    size_t nn = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (nn == cap) {
            cap = cap ? 2 * cap : 32;
            names = realloc(names, cap * sizeof *names);
            if (!names) abort();
        }
        size_t l = strlen(path) + strlen(e->d_name) + 2;
        names[nn] = malloc(l);
        if (!names[nn]) abort();
        snprintf(names[nn], l, "%s/%s", path, e->d_name);
        nn++;
    }
    closedir(d);
    qsort(names, nn, sizeof *names, cmp_str);
    for (size_t i = 0; i < nn; i++) {
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) load_inputs(names[i], out);
        free(names[i]);
    }
    free(names);
}

/* libFuzzer/AFL dictionary: one token a line, `"text"` or `name="text"`, with \\, \" and \xNN
 * escapes; '#' starts a comment line. */
static void load_dict(const char *path, blobs_t *out) {
    uint8_t *text;
    size_t len;
    if (read_file(path, &text, &len)) die_usage("dictionary '%s' cannot be read", path);
    size_t pos = 0;
    int lineno = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        lineno++;
        size_t i = pos;
        while (i < end && (text[i] == ' ' || text[i] == '\t')) i++;
        if (i < end && text[i] != '#') {
            while (i < end && text[i] != '"') i++;
            uint8_t tok[256];
            size_t k = 0;
            int ok = i < end;
            for (i++; ok && i < end && text[i] != '"' && k < sizeof tok; i++) {
                if (text[i] != '\\') { tok[k++] = text[i]; continue; }
                if (++i >= end) { ok = 0; break; }
                if (text[i] == 'x' && i + 2 < end) {
                    char hx[3] = {(char)text[i + 1], (char)text[i + 2], 0};
                    char *e;
                    long v = strtol(hx, &e, 16);
                    if (*e) { ok = 0; break; }
                    tok[k++] = (uint8_t)v;
                    i += 2;
                } else tok[k++] = text[i];
            }
            if (!ok || i >= end || k == 0) {
                char where[64];
                snprintf(where, sizeof where, "%d", lineno);
                fprintf(stderr, "%s: %s:%s: ", prog, path, where);
                die_usage("%s", "a dictionary line is \"token\" or name=\"token\" (escapes \\\\, \\\", \\xNN)");
            }
            blobs_add(out, tok, k);
        }
        pos = end + 1;
    }
    free(text);
}

/* ---- mutations ------------------------------------------------------------------------------ */

static const char *const interesting[] = {"0", "1", "-1", "255", "256", "65535", "4294967295", "4294967296",
                                          "9223372036854775807", "18446744073709551615", "18446744073709551616",
                                          "1e308", "1e-320", "-0", " ", "\t", "\n", "\r\n", ",", ":", "\"", "\\"};

/* Insert n bytes at pos (len grows, up to max). */
static size_t ins(uint8_t *b, size_t len, size_t max, size_t pos, const uint8_t *p, size_t n) {
    if (len + n > max) n = max - len;
    memmove(b + pos + n, b + pos, len - pos);
    memcpy(b + pos, p, n);
    return len + n;
}

static size_t mutate(uint8_t *b, size_t len, size_t max, const blobs_t *corpus, const blobs_t *dict) {
    size_t steps = (size_t)1 << below(4);   /* 1, 2, 4 or 8 stacked mutations */
    for (size_t s = 0; s < steps; s++) {
        switch (below(11)) {
        case 0:   /* flip a bit */
            if (len) b[below(len)] ^= (uint8_t)(1u << below(8));
            break;
        case 1:   /* a random byte, mostly printable: the inputs are text */
            if (len) b[below(len)] = below(4) ? (uint8_t)(0x20 + below(0x5f)) : (uint8_t)rnd();
            break;
        case 2: {   /* insert one to four bytes */
            uint8_t t[4];
            size_t n = 1 + below(4);
            for (size_t i = 0; i < n; i++) t[i] = below(4) ? (uint8_t)(0x20 + below(0x5f)) : (uint8_t)rnd();
            len = ins(b, len, max, below(len + 1), t, n);
            break;
        }
        case 3: {   /* delete a range */
            if (!len) break;
            size_t a = below(len), n = 1 + below(len - a < 16 ? len - a : 16);
            memmove(b + a, b + a + n, len - a - n);
            len -= n;
            break;
        }
        case 4: {   /* duplicate a chunk somewhere else */
            if (!len) break;
            size_t a = below(len), n = 1 + below(len - a < 64 ? len - a : 64);
            uint8_t t[64];
            memcpy(t, b + a, n);
            len = ins(b, len, max, below(len + 1), t, n);
            break;
        }
        case 5:
        case 6: {   /* a dictionary token, inserted or written over */
            if (!dict->n) break;
            const blob_t *t = &dict->v[below(dict->n)];
            size_t pos = below(len + 1);
            if (below(2) || pos + t->n > len) len = ins(b, len, max, pos, t->p, t->n);
            else memcpy(b + pos, t->p, t->n);
            break;
        }
        case 7: {   /* an interesting number or separator */
            const char *t = interesting[below(sizeof interesting / sizeof *interesting)];
            len = ins(b, len, max, below(len + 1), (const uint8_t *)t, strlen(t));
            break;
        }
        case 8: {   /* splice: our head, another input's tail */
            if (!corpus->n) break;
            const blob_t *o = &corpus->v[below(corpus->n)];
            size_t cut = below(len + 1), from = below(o->n + 1), n = o->n - from;
            if (cut + n > max) n = max - cut;
            memcpy(b + cut, o->p + from, n);
            len = cut + n;
            break;
        }
        case 9: {   /* insert a chunk of another input */
            if (!corpus->n) break;
            const blob_t *o = &corpus->v[below(corpus->n)];
            if (!o->n) break;
            size_t a = below(o->n), n = 1 + below(o->n - a < 64 ? o->n - a : 64);
            len = ins(b, len, max, below(len + 1), o->p + a, n);
            break;
        }
        default:   /* nudge a digit or byte by +-1 */
            if (len) b[below(len)] += below(2) ? 1 : 0xff;
            break;
        }
    }
    return len;
}

/* ---- running one input -------------------------------------------------------------------- */

static int leak_checks_left = 16;   /* an allocation a harness keeps on purpose must not cost a scan every time */

/* Runs data[0..n) from a buffer of exactly n bytes; returns the count of new coverage. */
static size_t run_one(const uint8_t *data, size_t n) {
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) abort();
    memcpy(copy, data, n);
    cur_data = copy;
    cur_len = n;
#if FUZZ_ASAN
    live_allocs = 0;
#endif
    in_exec = 1;
    LLVMFuzzerTestOneInput(copy, n);
    in_exec = 0;
#if FUZZ_ASAN
    if (live_allocs != 0 && leak_checks_left > 0) {
        leak_checks_left--;
        if (__lsan_do_recoverable_leak_check()) {
            in_exec = 1;
            save_crash("memory leak (LeakSanitizer report above)");
            _exit(1);
        }
    }
#endif
    execs++;
    cur_data = NULL;
    free(copy);
    return cov_merge();
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned long long parse_count(const char *opt, const char *v, unsigned long long max) {
    char *e;
    errno = 0;
    if (!v || !*v || *v == '-') die_usage("%s needs a non-negative integer", opt);
    unsigned long long x = strtoull(v, &e, 10);
    if (*e || errno || x > max) {
        char m[160];
        snprintf(m, sizeof m, "%s '%%s' is not an integer in 0..%llu", opt, max);
        die_usage(m, v);
    }
    return x;
}

int main(int argc, char **argv) {
    const char *slash = strrchr(argv[0], '/');
    prog = slash ? slash + 1 : argv[0];
    cov_base = (uintptr_t)&main;
    double seconds = -1;
    unsigned long long runs = 0, seed = 1;
    int have_runs = 0, quiet = 0;
    size_t max_len = 4096;
    blobs_t corpus = {0}, dict = {0};
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    size_t npaths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--seconds")) {
            char *e;
            if (!v) die_usage("%s needs a number of seconds", a);
            seconds = strtod(v, &e);
            if (*e || !(seconds >= 0) || seconds > 86400) die_usage("--seconds '%s' is not a duration in 0..86400 s", v);
            i++;
        } else if (!strcmp(a, "--runs")) { runs = parse_count(a, v, ~0ull); have_runs = 1; i++; }
        else if (!strcmp(a, "--seed")) { seed = parse_count(a, v, ~0ull); i++; }
        else if (!strcmp(a, "--max-len")) { max_len = (size_t)parse_count(a, v, 1u << 24); i++; }
        else if (!strcmp(a, "--timeout")) { timeout_s = (int)parse_count(a, v, 3600); if (!timeout_s) timeout_s = 1; i++; }
        else if (!strcmp(a, "--dict")) { if (!v) die_usage("%s needs a file", a); load_dict(v, &dict); i++; }
        else if (!strcmp(a, "--artifacts")) { if (!v) die_usage("%s needs a directory", a); artifacts = v; i++; }
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (a[0] == '-' && a[1]) die_usage("unknown option '%s'", a);
        else paths[npaths++] = a;
    }
    struct stat st;
    if (stat(artifacts, &st) != 0 || !S_ISDIR(st.st_mode)) die_usage("--artifacts '%s' is not a directory", artifacts);
    for (size_t i = 0; i < npaths; i++) load_inputs(paths[i], &corpus);
    free(paths);
    for (size_t i = 0; i < corpus.n; i++)
        if (corpus.v[i].n > max_len) max_len = corpus.v[i].n;   /* never cut a given input */

    signal(SIGABRT, on_abort);
    signal(SIGALRM, on_alarm);
    struct itimerval tick = {{1, 0}, {1, 0}};
    setitimer(ITIMER_REAL, &tick, NULL);
#if FUZZ_ASAN
    __sanitizer_set_death_callback(on_death);
    __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
#endif

    double t0 = now();
    size_t given = corpus.n;
    for (size_t i = 0; i < given; i++) run_one(corpus.v[i].p, corpus.v[i].n);
    int mutating = seconds >= 0 || have_runs;
    unsigned long long mutants = 0;
    size_t added = 0;
    if (mutating) {
        rng_state = seed;
        if (!corpus.n) blobs_add(&corpus, (const uint8_t *)"", 0);
        uint8_t *buf = malloc(max_len + 1);
        if (!buf) abort();
        double next_report = t0 + 10;
        while (!(have_runs && mutants >= runs)) {
            if (seconds >= 0 && now() - t0 >= seconds) break;
            const blob_t *src = &corpus.v[below(corpus.n)];
            memcpy(buf, src->p, src->n);
            size_t n = mutate(buf, src->n, max_len, &corpus, &dict);
            mutants++;
            if (run_one(buf, n) && corpus.n < 1u << 16) { blobs_add(&corpus, buf, n); added++; }
            if (!quiet && (mutants & 1023) == 0 && now() >= next_report) {
                fprintf(stderr, "%s: %llu executions, %.0f/s, %zu inputs, %zu edges\n", prog, execs,
                        execs / (now() - t0), corpus.n, cov_edges());
                next_report += 10;
            }
        }
        free(buf);
    }
    double dt = now() - t0;
    printf("%s: %llu executions in %.1f s (%.0f/s): %zu given inputs, %llu mutants (seed %llu), %zu kept for new "
           "coverage, %zu edges; no crash\n",
           prog, execs, dt, dt > 0 ? execs / dt : 0.0, given, mutants, seed, added, cov_edges());
    for (size_t i = 0; i < corpus.n; i++) free(corpus.v[i].p);
    free(corpus.v);
    for (size_t i = 0; i < dict.n; i++) free(dict.v[i].p);
    free(dict.v);
    return 0;
}
