/* topo_generic.c - generic cluster: nodes on one switch (levels N), a switch
 * hierarchy (levels a b ... , top-down, possibly oversubscribed through
 * `level_bandwidth`), or an explicit hop matrix (`distance` rows).
 * One switch: 2 hops between distinct nodes (node -> switch -> node). */
#include <math.h>
#include "internal.h"

static int gen_validate(tagg_topology_t *t, tagg_err_t *err) {
  if (!t->matrix) return TAGG_OK;
  int n = t->nnodes;
  for (int a = 0; a < n; a++) {
    if (t->matrix[(size_t)a * n + a] != 0)
      return tagg_seterr(err, TAGG_EINVAL, "%s: distance[%d][%d] must be 0", t->name, a, a);
    for (int b = 0; b < n; b++) {
      int v = t->matrix[(size_t)a * n + b];
      if (v < 0) return tagg_seterr(err, TAGG_EINVAL, "%s: distance[%d][%d] < 0", t->name, a, b);
      if (v != t->matrix[(size_t)b * n + a])
        return tagg_seterr(err, TAGG_EINVAL, "%s: distance matrix not symmetric at [%d][%d]", t->name, a, b);
    }
  }
  return TAGG_OK;
}

static int gen_hops(const tagg_topology_t *t, int a, int b) {
  if (t->matrix) return t->matrix[(size_t)a * (size_t)t->nnodes + (size_t)b];
  return 2 * tagg_tree_lca_level(t, a, b);
}

static double gen_latency(const tagg_topology_t *t, int a, int b) { (void)a; (void)b; return t->latency; }

/* Oversubscribed hierarchy: a route through the level-L switch is limited by
 * the narrowest level_bandwidth up to L (0 entries mean `bandwidth`). */
static double gen_bandwidth(const tagg_topology_t *t, int a, int b) {
  double bw = t->bandwidth;
  if (t->matrix) return bw;
  int lca = tagg_tree_lca_level(t, a, b);
  for (int l = 1; l <= lca; l++) {
    double lb = t->level_bw[t->ndims - l];
    if (lb > 0 && lb < bw) bw = lb;
  }
  return bw;
}

/* Links: a hop matrix is routed as one switch (its coordinates are one
 * digit); a hierarchy's subtree at level l carries its m nodes at the
 * per-node bandwidth of the switch above it (level l + 1): m x
 * level_bandwidth, the oversubscription of the hierarchy. */
static double gen_link_capacity(const tagg_topology_t *t, int link) {
  int l, up;
  tagg_tree_link_level(t, link, &l, &up);
  double bw = t->bandwidth;
  if (!t->matrix) {
    double lb = t->level_bw[t->ndims - (l + 1)];
    if (lb > 0 && lb < bw) bw = lb;
  }
  return tagg_tree_level_size(t, l) * bw;
}

static void gen_project(const tagg_topology_t *t, int node, double *x, double *y) {
  if (!t->matrix) { tagg_tree_project(t, node, x, y); return; }
  int cols = (int)ceil(sqrt((double)t->nnodes));
  *x = node % cols;
  *y = node / cols;
}

const tagg_topo_ops_t tagg_topo_generic = {
    .name = "generic",
    .description = "generic cluster: one switch, a switch hierarchy, or an explicit hop matrix",
    .ndims_min = 1,
    .ndims_max = TAGG_MAX_DIMS,
    .validate = gen_validate,
    .hops = gen_hops,
    .link_latency = gen_latency,
    .link_bandwidth = gen_bandwidth,
    .project2d = gen_project,
    .nlinks = tagg_tree_nlinks,
    .route_max = tagg_tree_route_max,
    .route = tagg_tree_route,
    .link_capacity = gen_link_capacity,
    .link_name = tagg_tree_link_name,
};
