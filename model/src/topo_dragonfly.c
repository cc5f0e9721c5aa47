/* topo_dragonfly.c - dragonfly as on Cray XC40 Aries: dims = groups, chassis per
 * group, blades (routers) per chassis, nodes per blade.  Coordinates are
 * (group, chassis, blade, node).
 *
 * Hop distance = 1 + router-to-router links of a minimal route, worst case in
 * the level (Aries: all-to-all green links inside a chassis, black links
 * between chassis of a group, global links between groups):
 *   same node 0, same blade 1, same chassis 2, same group 3,
 *   other group 6 (two local + one global + two local). */
#include <math.h>
#include "internal.h"

enum { DF_GROUP, DF_CHASSIS, DF_BLADE, DF_NODE };
static const int df_level_hops[] = {6, 3, 2, 1, 0}; /* by first differing coordinate */

static int df_validate(tagg_topology_t *t, tagg_err_t *err) {
  if (t->ndims != 4)
    return tagg_seterr(err, TAGG_EINVAL, "%s: dragonfly needs 4 dims (groups chassis blades nodes)", t->name);
  return TAGG_OK;
}

static int df_level(const tagg_topology_t *t, int a, int b) {
  const int *ca = t->coords + (size_t)a * 4, *cb = t->coords + (size_t)b * 4;
  int l = 0;
  while (l < 4 && ca[l] == cb[l]) l++;
  return l; /* 0: other group ... 4: same node */
}

static int df_hops(const tagg_topology_t *t, int a, int b) { return df_level_hops[df_level(t, a, b)]; }
static double df_latency(const tagg_topology_t *t, int a, int b) { (void)a; (void)b; return t->latency; }
static double df_bandwidth(const tagg_topology_t *t, int a, int b) {
  if (df_level(t, a, b) == 0 && t->global_bw > 0 && t->global_bw < t->bandwidth) return t->global_bw;
  return t->bandwidth;
}

/* Groups tiled on a grid; inside a group, chassis are rows and blades
 * columns; the nodes of a blade form a small square. */
static void df_project(const tagg_topology_t *t, int node, double *x, double *y) {
  const int *c = t->coords + (size_t)node * 4;
  int cols = (int)ceil(sqrt((double)t->dims[DF_GROUP]));
  int nb = t->dims[DF_NODE], w = (int)ceil(sqrt((double)nb)), h = (nb + w - 1) / w;
  double bw = w + 0.4, bh = h + 0.4;
  double gw = t->dims[DF_BLADE] * bw + 1.5, gh = t->dims[DF_CHASSIS] * bh + 1.5;
  *x = (c[DF_GROUP] % cols) * gw + c[DF_BLADE] * bw + c[DF_NODE] % w;
  *y = (c[DF_GROUP] / cols) * gh + c[DF_CHASSIS] * bh + c[DF_NODE] / w;
}

const tagg_topo_ops_t tagg_topo_dragonfly = {
    .name = "dragonfly",
    .description = "dragonfly (group / chassis / blade / node) as on Cray XC40 Aries",
    .ndims_min = 4,
    .ndims_max = 4,
    .validate = df_validate,
    .hops = df_hops,
    .link_latency = df_latency,
    .link_bandwidth = df_bandwidth,
    .project2d = df_project,
};
