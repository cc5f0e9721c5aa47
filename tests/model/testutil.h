/* testutil.h - small helpers shared by the model tests. */
#ifndef TAGG_TESTUTIL_H
#define TAGG_TESTUTIL_H
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "tagg/model.h"
#include "tagg/pattern.h"

#ifndef TAGG_EXAMPLES_DIR
#error "TAGG_EXAMPLES_DIR must be defined by the build"
#endif
#define EX(f) TAGG_EXAMPLES_DIR "/" f

/* Fails with both strings shown when `needle` is not in `hay`. */
#define assert_contains(hay, needle)                                                   \
  do {                                                                                 \
    if (!strstr((hay), (needle))) fail_msg("'%s' does not contain '%s'", (hay), (needle)); \
  } while (0)

static inline tagg_topology_t *topo_from(const char *text) {
  tagg_topology_t *t = NULL;
  tagg_err_t err = {0};
  int rc = tagg_topology_parse(text, "test.topo", &t, &err);
  if (rc) fail_msg("topology did not parse: %s", err.msg);
  return t;
}

/* Node id of coordinates (row-major, as the parser enumerates). */
static inline int node_of(const tagg_topology_t *t, const int *c) {
  int id = 0;
  for (int d = 0; d < tagg_topology_ndims(t); d++) id = id * tagg_topology_dim(t, d) + c[d];
  return id;
}
#endif
