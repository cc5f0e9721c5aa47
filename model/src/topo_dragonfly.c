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
#include <stdio.h>
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

/* Links: injection node -> router (id node), ejection router -> node (id
 * nnodes + node), then per router r = (group x chassis + c) x blades + b a
 * block of blades + chassis + groups slots: green links to the blades of its
 * chassis, black links to the same blade of the other chassis, and one global
 * link per other group to the router at the same (chassis, blade) there.
 * Minimal route: fix the blade, then the chassis, then the group. */
static int df_slots(const tagg_topology_t *t) { return t->dims[DF_BLADE] + t->dims[DF_CHASSIS] + t->dims[DF_GROUP]; }
static int df_nrouters(const tagg_topology_t *t) { return t->dims[DF_GROUP] * t->dims[DF_CHASSIS] * t->dims[DF_BLADE]; }
static int df_nlinks(const tagg_topology_t *t) { return 2 * t->nnodes + df_nrouters(t) * df_slots(t); }
static int df_route_max(const tagg_topology_t *t) { (void)t; return 5; }

static int df_router(const tagg_topology_t *t, int g, int c, int b) {
  return (g * t->dims[DF_CHASSIS] + c) * t->dims[DF_BLADE] + b;
}

static int df_route(const tagg_topology_t *t, int a, int b, int *links, int max) {
  if (a == b) return 0;
  const int *ca = t->coords + (size_t)a * 4, *cb = t->coords + (size_t)b * 4;
  int hop[5], n = 0, g = ca[DF_GROUP], c = ca[DF_CHASSIS], bl = ca[DF_BLADE];
  int base = 2 * t->nnodes, slots = df_slots(t);
  hop[n++] = a;
  if (bl != cb[DF_BLADE]) { hop[n++] = base + df_router(t, g, c, bl) * slots + cb[DF_BLADE]; bl = cb[DF_BLADE]; }
  if (c != cb[DF_CHASSIS]) {
    hop[n++] = base + df_router(t, g, c, bl) * slots + t->dims[DF_BLADE] + cb[DF_CHASSIS];
    c = cb[DF_CHASSIS];
  }
  if (g != cb[DF_GROUP])
    hop[n++] = base + df_router(t, g, c, bl) * slots + t->dims[DF_BLADE] + t->dims[DF_CHASSIS] + cb[DF_GROUP];
  hop[n++] = t->nnodes + b;
  for (int i = 0; i < n && i < max; i++) links[i] = hop[i];
  return n;
}

static double df_link_capacity(const tagg_topology_t *t, int link) {
  int base = 2 * t->nnodes;
  if (link >= base && (link - base) % df_slots(t) >= t->dims[DF_BLADE] + t->dims[DF_CHASSIS] && t->global_bw > 0)
    return t->global_bw;
  return t->bandwidth;
}

static void df_link_name(const tagg_topology_t *t, int link, char *buf, size_t n) {
  if (link < t->nnodes) { snprintf(buf, n, "node %d -> router (injection)", link); return; }
  if (link < 2 * t->nnodes) { snprintf(buf, n, "router -> node %d (ejection)", link - t->nnodes); return; }
  int k = link - 2 * t->nnodes, slots = df_slots(t), r = k / slots, s = k % slots;
  int b = r % t->dims[DF_BLADE], c = (r / t->dims[DF_BLADE]) % t->dims[DF_CHASSIS];
  int g = r / t->dims[DF_BLADE] / t->dims[DF_CHASSIS];
  if (s < t->dims[DF_BLADE]) snprintf(buf, n, "router (%d,%d,%d) -> blade %d (green)", g, c, b, s);
  else if ((s -= t->dims[DF_BLADE]) < t->dims[DF_CHASSIS]) snprintf(buf, n, "router (%d,%d,%d) -> chassis %d (black)", g, c, b, s);
  else snprintf(buf, n, "router (%d,%d,%d) -> group %d (global)", g, c, b, s - t->dims[DF_CHASSIS]);
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
    .nlinks = df_nlinks,
    .route_max = df_route_max,
    .route = df_route,
    .link_capacity = df_link_capacity,
    .link_name = df_link_name,
};
