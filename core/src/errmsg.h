/* Error messages into a caller's buffer, for the pure-C parts (configuration,
 * subfile index, paths, stripe codec) that tools compile in without the HDF5
 * error stack. No MPI, no HDF5. */
#ifndef TAGG_ERRMSG_H
#define TAGG_ERRMSG_H

#include <stddef.h>

/* printf into err (errlen bytes, truncated); nothing when err is NULL or errlen 0. */
void tagg_errmsg(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
