/* topo_fattree.c - fat tree (folded Clos, e.g. InfiniBand CLOS or Sunway's
 * two-level tree).  dims / `levels` = arities top-down, last = nodes per leaf
 * switch.  Two nodes whose lowest common switch is at level L (1 = leaf) are
 * 2L hops apart.  Full bisection: every route runs at link bandwidth. */
#include "internal.h"

static int ft_hops(const tagg_topology_t *t, int a, int b) { return 2 * tagg_tree_lca_level(t, a, b); }
static double ft_latency(const tagg_topology_t *t, int a, int b) { (void)a; (void)b; return t->latency; }
static double ft_bandwidth(const tagg_topology_t *t, int a, int b) { (void)a; (void)b; return t->bandwidth; }

/* Full bisection: a subtree's up and down links carry every node below it at
 * link bandwidth. */
static double ft_link_capacity(const tagg_topology_t *t, int link) {
  int l, up;
  tagg_tree_link_level(t, link, &l, &up);
  return tagg_tree_level_size(t, l) * t->bandwidth;
}

static int ft_validate(tagg_topology_t *t, tagg_err_t *err) {
  if (t->matrix) return tagg_seterr(err, TAGG_EINVAL, "%s: `distance` rows are only for kind generic", t->name);
  return TAGG_OK;
}

const tagg_topo_ops_t tagg_topo_fattree = {
    .name = "fattree",
    .description = "fat tree / folded Clos with full bisection; levels = arities top-down",
    .ndims_min = 1,
    .ndims_max = TAGG_MAX_DIMS,
    .validate = ft_validate,
    .hops = ft_hops,
    .link_latency = ft_latency,
    .link_bandwidth = ft_bandwidth,
    .project2d = tagg_tree_project,
    .nlinks = tagg_tree_nlinks,
    .route_max = tagg_tree_route_max,
    .route = tagg_tree_route,
    .link_capacity = ft_link_capacity,
    .link_name = tagg_tree_link_name,
};
