/* topo_torus.c - N-dimensional torus / mesh (5D on Blue Gene/Q, 3D on Cray XE/XK).
 * A node's coordinates are one integer per dimension; with wrap-around the
 * per-dimension distance is min(|dx|, D - |dx|), else |dx| (mesh). */
#include <math.h>
#include <stdlib.h>
#include "internal.h"

static int torus_validate(tagg_topology_t *t, tagg_err_t *err) {
  for (int d = 0; d < t->ndims; d++)
    if (t->wrap[d] != 0 && t->wrap[d] != 1)
      return tagg_seterr(err, TAGG_EINVAL, "%s: wrap[%d] must be 0 or 1", t->name, d);
  return TAGG_OK;
}

static int torus_hops(const tagg_topology_t *t, int a, int b) {
  const int *ca = t->coords + (size_t)a * (size_t)t->ndims, *cb = t->coords + (size_t)b * (size_t)t->ndims;
  int h = 0;
  for (int d = 0; d < t->ndims; d++) {
    int dx = abs(ca[d] - cb[d]);
    if (t->wrap[d] && t->dims[d] - dx < dx) dx = t->dims[d] - dx;
    h += dx;
  }
  return h;
}

static double torus_latency(const tagg_topology_t *t, int a, int b) { (void)a; (void)b; return t->latency; }
/* Dimension-ordered routing uses one link at a time: the route bandwidth is a link's. */
static double torus_bandwidth(const tagg_topology_t *t, int a, int b) { (void)a; (void)b; return t->bandwidth; }

/* Even dimensions go along x, odd ones along y, as nested blocks with a gap. */
static void torus_project(const tagg_topology_t *t, int node, double *x, double *y) {
  const int *c = t->coords + (size_t)node * (size_t)t->ndims;
  double px = 0, py = 0, sx = 1, sy = 1;
  for (int d = t->ndims - 1; d >= 0; d--) {
    if ((t->ndims - 1 - d) % 2 == 0) { px += c[d] * sx; sx *= t->dims[d] + 0.5; }
    else { py += c[d] * sy; sy *= t->dims[d] + 0.5; }
  }
  *x = px;
  *y = py;
}

const tagg_topo_ops_t tagg_topo_torus = {
    .name = "torus",
    .description = "N-dimensional torus with wrap-around (mesh where wrap is 0), e.g. 5D BG/Q",
    .ndims_min = 1,
    .ndims_max = TAGG_MAX_DIMS,
    .validate = torus_validate,
    .hops = torus_hops,
    .link_latency = torus_latency,
    .link_bandwidth = torus_bandwidth,
    .project2d = torus_project,
};
