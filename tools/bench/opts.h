/* tagg-bench command line (opts.c). */
#ifndef TAGG_BENCH_OPTS_H
#define TAGG_BENCH_OPTS_H

#include "bench.h"

/* Returns 0, 1 for --help, or -1 with a message in err. */
int                   bench_parse(int argc, char **argv, bench_opts_t *o, char *err, size_t len);
void                  bench_usage(void);
const bench_kernel_t *bench_find_kernel(const char *name);

#endif
