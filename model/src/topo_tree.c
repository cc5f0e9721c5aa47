/* topo_tree.c - helpers shared by switch hierarchies (generic) and fat trees.
 * dims are the arities from the top level down to the leaf switch; a node's
 * coordinates are its digits (top first); the last digit is its leaf port. */
#include <math.h>
#include <stdio.h>
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

/* ---- links: the up and down link of every subtree below the top switch ---- */

/* Subtrees at level l: product of the first ndims - l arities. */
static long tree_count(const tagg_topology_t *t, int l) {
  long c = 1;
  for (int d = 0; d < t->ndims - l; d++) c *= t->dims[d];
  return c;
}

static long tree_offset(const tagg_topology_t *t, int l) {
  long off = 0;
  for (int j = 0; j < l; j++) off += tree_count(t, j);
  return off;
}

/* Index of the level-l subtree holding `node`: its first ndims - l digits. */
static long tree_index(const tagg_topology_t *t, int node, int l) {
  const int *c = t->coords + (size_t)node * (size_t)t->ndims;
  long idx = 0;
  for (int d = 0; d < t->ndims - l; d++) idx = idx * t->dims[d] + c[d];
  return idx;
}

int tagg_tree_nlinks(const tagg_topology_t *t) { return (int)(2 * tree_offset(t, t->ndims)); }
int tagg_tree_route_max(const tagg_topology_t *t) { return 2 * t->ndims; }

double tagg_tree_level_size(const tagg_topology_t *t, int level) {
  double m = 1;
  for (int d = t->ndims - level; d < t->ndims; d++) m *= t->dims[d];
  return m;
}

int tagg_tree_route(const tagg_topology_t *t, int a, int b, int *links, int max) {
  int lca = tagg_tree_lca_level(t, a, b), n = 0;
  for (int l = 0; l < lca; l++, n++)
    if (n < max) links[n] = (int)(2 * (tree_offset(t, l) + tree_index(t, a, l)));
  for (int l = lca - 1; l >= 0; l--, n++)
    if (n < max) links[n] = (int)(2 * (tree_offset(t, l) + tree_index(t, b, l)) + 1);
  return n;
}

static void tree_locate(const tagg_topology_t *t, int link, int *level, long *idx, int *up) {
  long v = link / 2;
  int l = 0;
  for (; l < t->ndims - 1; l++) {
    long c = tree_count(t, l);
    if (v < c) break;
    v -= c;
  }
  *level = l;
  *idx = v;
  *up = link % 2 == 0;
}

void tagg_tree_link_level(const tagg_topology_t *t, int link, int *level, int *up) {
  long idx;
  tree_locate(t, link, level, &idx, up);
}

void tagg_tree_link_name(const tagg_topology_t *t, int link, char *buf, size_t n) {
  int l, up;
  long idx;
  tree_locate(t, link, &l, &idx, &up);
  if (l == 0) snprintf(buf, n, up ? "node %ld -> leaf switch" : "leaf switch -> node %ld", idx);
  else if (up) snprintf(buf, n, "level-%d switch %ld -> level %d", l, idx, l + 1);
  else snprintf(buf, n, "level %d -> level-%d switch %ld", l + 1, l, idx);
}
