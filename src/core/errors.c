#include "latscope/errors.h"

const char *lts_strerror(int code) {
    switch (code) {
    case LTS_OK: return "success";
    case LTS_EINVAL: return "invalid value";
    case LTS_ENOMEM: return "out of memory";
    case LTS_ERANGE: return "value out of range";
    case LTS_EIO: return "input/output error";
    case LTS_EMPI: return "MPI call failed";
    case LTS_ENOTFOUND: return "name not found";
    case LTS_ENOTSUP: return "not supported on this machine";
    case LTS_ETOOFEW: return "too few ranks";
    case LTS_ENODATA: return "no valid sample";
    case LTS_ENOELIGIBLE: return "no eligible candidate (medians negative, undefined or not converged)";
    default: return "unknown error";
    }
}
