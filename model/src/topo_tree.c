/* topo_tree.c - helpers shared by switch hierarchies (generic) and fat trees.
 * dims are the arities from the top level down to the leaf switch; a node's
 * coordinates are its digits (top first); the last digit is its leaf port. */
#include <math.h>
#include "internal.h"

/* 0 for the same node, 1 when the lowest common switch is the leaf switch,
 * ..., ndims when it is the top switch. */
int tagg_tree_lca_level(const tagg_topology_t *t, int a, int b) {
  const int *ca = t->coords + (size_t)a * (size_t)t->ndims, *cb = t->coords + (size_t)b * (size_t)t->ndims;
  for (int d = 0; d < t->ndims; d++)
    if (ca[d] != cb[d]) return t->ndims - d;
  return 0;
}

void tagg_tree_project(const tagg_topology_t *t, int node, double *x, double *y) {
  int k = t->dims[t->ndims - 1];
  int leaf = node / k, port = node % k;
  int nleaves = (t->nnodes + k - 1) / k;
  int w = (int)ceil(sqrt((double)k)), h = (k + w - 1) / w;
  int cols = (int)ceil(sqrt((double)nleaves * h / w));
  if (cols < 1) cols = 1;
  *x = (leaf % cols) * (w + 0.8) + port % w;
  *y = (leaf / cols) * (h + 0.8) + port / w;
}
