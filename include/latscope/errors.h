/* latscope error codes: library functions return 0 or a negative code; the CLI decides. */
#ifndef LATSCOPE_ERRORS_H
#define LATSCOPE_ERRORS_H
#ifdef __cplusplus
extern "C" {
#endif

enum {
    LTS_OK = 0,
    LTS_EINVAL = -1,   /* a value outside what is allowed */
    LTS_ENOMEM = -2,
    LTS_ERANGE = -3,   /* a value too large or too small */
    LTS_EIO = -4,      /* a file could not be opened or written */
    LTS_EMPI = -5,     /* an MPI call failed */
    LTS_ENOTFOUND = -6,/* a name not in a registry */
    LTS_ENOTSUP = -7,  /* not available on this machine */
    LTS_ETOOFEW = -8,  /* too few ranks for the operation */
    LTS_ENODATA = -9,  /* no valid sample (e.g. every repetition rejected) */
    LTS_ENOELIGIBLE = -10 /* a selection with no eligible candidate (medians negative, undefined or not converged) */
};

/* Human-readable text for a code (never NULL). */
const char *lts_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
