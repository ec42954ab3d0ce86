/* The interface of liblatscope_systime.so, the LD_PRELOAD interposer that counts libc's socket,
 * read/write and polling calls and the cycle-counter time spent inside them
 * (docs/budget.md, "Inside the MPI call"). A program is never linked against the interposer: it
 * looks the functions up at run time, so the same binary runs with and without it:
 *
 *     lts_systime_start_fn start = lts_systime_lookup_start();   NULL: not preloaded
 *
 * Windows: counting runs from process start; lts_systime_start() opens a window and
 * lts_systime_stop() closes it. Once a window has been opened, the exit record and
 * lts_systime_read() report the sum over the windows only (so a benchmark counts just its
 * measured phase, not MPI_Init's connection set-up). Both are cheap (no syscall) and
 * async-signal-unsafe; call them from one thread. */
#ifndef LATSCOPE_SYSTIME_H
#define LATSCOPE_SYSTIME_H
#include <dlfcn.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Entry points exported by liblatscope_systime.so (their names are the dlsym keys). */
#define LTS_SYSTIME_START "lts_systime_start"
#define LTS_SYSTIME_STOP "lts_systime_stop"
#define LTS_SYSTIME_READ "lts_systime_read"

/* Open / close a window. 0; -1 when start is called inside an open window or stop outside one. */
typedef int (*lts_systime_start_fn)(void);
typedef int (*lts_systime_stop_fn)(void);
/* Counts of one call ("send", "recvmsg", ...; "send_like", "recv_like", "wait" for the classes,
 * "all" for every call) so far: the windows' sum once a window was opened (an open window up to
 * now), the whole process otherwise. 0, or -1 for an unknown name. */
typedef int (*lts_systime_read_fn)(const char *call, unsigned long long *calls, unsigned long long *ns);

/* NULL when the interposer is not preloaded. */
static inline lts_systime_start_fn lts_systime_lookup_start(void) {
    return (lts_systime_start_fn)dlsym(RTLD_DEFAULT, LTS_SYSTIME_START);
}
static inline lts_systime_stop_fn lts_systime_lookup_stop(void) {
    return (lts_systime_stop_fn)dlsym(RTLD_DEFAULT, LTS_SYSTIME_STOP);
}
static inline lts_systime_read_fn lts_systime_lookup_read(void) {
    return (lts_systime_read_fn)dlsym(RTLD_DEFAULT, LTS_SYSTIME_READ);
}

#ifdef __cplusplus
}
#endif
#endif
