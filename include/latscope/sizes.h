/* Message-size lists: "0,8,1K,64K", geometric "1:4M:x2", arithmetic "0:100K:+1K", mixed with
 * commas. Suffixes K, M, G (binary: 1K = 1024), optional trailing B / iB. */
#ifndef LATSCOPE_SIZES_H
#define LATSCOPE_SIZES_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

#define LTS_SIZE_MAX_BYTES ((size_t)1 << 30)   /* 1 GiB: beyond that a message size is absurd here */
#define LTS_SIZES_MAX_COUNT 100000

/* Parse one size ("64K"). LTS_EINVAL on syntax; LTS_ERANGE above LTS_SIZE_MAX_BYTES. */
int lts_parse_size(const char *s, size_t *out);
/* Parse a list into a newly allocated array (caller frees). On error writes a message naming
 * the bad item and what is allowed. */
int lts_parse_sizes(const char *spec, size_t **out, size_t *count, char *msg, size_t msglen);

/* Parse a duration: a non-negative number with a unit ns, us, ms or s ("30us", "0.5s"); a bare
 * number is seconds. LTS_EINVAL on syntax or a negative value, LTS_ERANGE above one hour. */
int lts_parse_duration(const char *s, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
