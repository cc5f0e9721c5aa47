/* topo_torus.c - N-dimensional torus / mesh (5D on Blue Gene/Q, 3D on Cray XE/XK).
 * A node's coordinates are one integer per dimension; with wrap-around the
 * per-dimension distance is min(|dx|, D - |dx|), else |dx| (mesh). */
#include <math.h>
#include <stdio.h>
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

/* Links: every coordinate of the full grid (also when `node` lines use a
 * subset) has a + and a - link in every dimension:
 *   id = (cell x ndims + d) x 2 + (0 for +, 1 for -),  cell = row-major index. */
static long torus_cells(const tagg_topology_t *t) {
  long c = 1;
  for (int d = 0; d < t->ndims; d++) c *= t->dims[d];
  return c;
}

static int torus_nlinks(const tagg_topology_t *t) { return (int)(torus_cells(t) * t->ndims * 2); }

static int torus_route_max(const tagg_topology_t *t) {
  int m = 0;
  for (int d = 0; d < t->ndims; d++) m += t->wrap[d] ? t->dims[d] / 2 : t->dims[d] - 1;
  return m;
}

/* Dimension-order routing: dimension 0 first; round a ring the shorter way,
 * the + direction on ties (a ring of even extent, half-way across). */
static int torus_route(const tagg_topology_t *t, int a, int b, int *links, int max) {
  int c[TAGG_MAX_DIMS], n = 0;
  const int *ca = t->coords + (size_t)a * (size_t)t->ndims, *cb = t->coords + (size_t)b * (size_t)t->ndims;
  for (int d = 0; d < t->ndims; d++) c[d] = ca[d];
  for (int d = 0; d < t->ndims; d++) {
    int D = t->dims[d], fwd = ((cb[d] - c[d]) % D + D) % D, steps, dir;
    if (!t->wrap[d]) { dir = cb[d] >= c[d] ? 0 : 1; steps = abs(cb[d] - c[d]); }
    else if (fwd <= D - fwd) { dir = 0; steps = fwd; }
    else { dir = 1; steps = D - fwd; }
    for (int s = 0; s < steps; s++, n++) {
      long cell = 0;
      for (int k = 0; k < t->ndims; k++) cell = cell * t->dims[k] + c[k];
      if (n < max) links[n] = (int)((cell * t->ndims + d) * 2 + dir);
      c[d] = dir == 0 ? (c[d] + 1) % D : (c[d] + D - 1) % D;
    }
  }
  return n;
}

static double torus_link_capacity(const tagg_topology_t *t, int link) { (void)link; return t->bandwidth; }

static void torus_link_name(const tagg_topology_t *t, int link, char *buf, size_t n) {
  int dir = link % 2, d = (link / 2) % t->ndims;
  long cell = link / 2 / t->ndims;
  int c[TAGG_MAX_DIMS];
  for (int k = t->ndims - 1; k >= 0; k--) { c[k] = (int)(cell % t->dims[k]); cell /= t->dims[k]; }
  size_t used = (size_t)snprintf(buf, n, "(");
  for (int k = 0; k < t->ndims && used < n; k++) used += (size_t)snprintf(buf + used, n - used, "%s%d", k ? "," : "", c[k]);
  if (used < n) snprintf(buf + used, n - used, ")->d%d%c", d, dir ? '-' : '+');
}

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
    .nlinks = torus_nlinks,
    .route_max = torus_route_max,
    .route = torus_route,
    .link_capacity = torus_link_capacity,
    .link_name = torus_link_name,
};
