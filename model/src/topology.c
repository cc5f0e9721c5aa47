/* topology.c - kind-independent part of the topology abstraction: registry,
 * queries, I/O gateways, the in-memory "generic cluster" constructor. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

const tagg_topo_ops_t *const tagg_topo_kinds[] = {&tagg_topo_generic, &tagg_topo_torus,
                                                  &tagg_topo_dragonfly, &tagg_topo_fattree, NULL};

const tagg_topo_ops_t *tagg_topo_kind_find(const char *name) {
  for (int i = 0; tagg_topo_kinds[i]; i++)
    if (tagg_strcaseeq(tagg_topo_kinds[i]->name, name)) return tagg_topo_kinds[i];
  return NULL;
}

void tagg_topology_free(tagg_topology_t *t) {
  if (!t) return;
  free(t->coords);
  free(t->matrix);
  free(t->rank_node);
  free(t->io_nodes);
  free(t->gateway);
  free(t->is_io);
  free(t);
}

int tagg_topo_enumerate(tagg_topology_t *t, tagg_err_t *err) {
  long n = 1;
  for (int d = 0; d < t->ndims; d++) {
    n *= t->dims[d];
    if (n > (1L << 24)) return tagg_seterr(err, TAGG_EINVAL, "%s: more than 2^24 nodes", t->name);
  }
  t->nnodes = (int)n;
  free(t->coords);
  t->coords = malloc((size_t)n * (size_t)t->ndims * sizeof(int));
  if (!t->coords) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  for (long i = 0; i < n; i++) {
    long r = i;
    for (int d = t->ndims - 1; d >= 0; d--) {
      t->coords[i * t->ndims + d] = (int)(r % t->dims[d]);
      r /= t->dims[d];
    }
  }
  return TAGG_OK;
}

int tagg_topo_finish(tagg_topology_t *t, tagg_err_t *err) {
  if (t->nnodes < 1) return tagg_seterr(err, TAGG_EINVAL, "%s: no nodes", t->name);
  if (t->nranks < 1) return tagg_seterr(err, TAGG_EINVAL, "%s: no ranks", t->name);
  if (!(t->bandwidth > 0)) return tagg_seterr(err, TAGG_EINVAL, "%s: bandwidth must be > 0", t->name);
  if (!(t->latency >= 0)) return tagg_seterr(err, TAGG_EINVAL, "%s: latency must be >= 0", t->name);
  for (int r = 0; r < t->nranks; r++)
    if (t->rank_node[r] < 0 || t->rank_node[r] >= t->nnodes)
      return tagg_seterr(err, TAGG_EINVAL, "%s: rank %d mapped to node %d, outside 0..%d", t->name,
                         r, t->rank_node[r], t->nnodes - 1);
  if (t->nio < 1) return tagg_seterr(err, TAGG_EINVAL, "%s: no I/O node", t->name);
  free(t->is_io);
  t->is_io = calloc((size_t)t->nnodes, sizeof(int));
  if (!t->is_io) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  for (int i = 0; i < t->nio; i++) {
    int n = t->io_nodes[i];
    if (n < 0 || n >= t->nnodes)
      return tagg_seterr(err, TAGG_EINVAL, "%s: I/O node %d outside 0..%d", t->name, n, t->nnodes - 1);
    if (t->is_io[n]) return tagg_seterr(err, TAGG_EINVAL, "%s: I/O node %d listed twice", t->name, n);
    t->is_io[n] = 1;
  }
  if (t->ops->validate) {
    int rc = t->ops->validate(t, err);
    if (rc) return rc;
  }
  /* Each node uses its nearest gateway (lowest listed on ties): the
   * networkDistanceToIONode of MA-TAPIOCA Listing 2. */
  free(t->gateway);
  t->gateway = malloc((size_t)t->nnodes * sizeof(int));
  if (!t->gateway) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  for (int n = 0; n < t->nnodes; n++) {
    int best = t->io_nodes[0], bd = t->ops->hops(t, n, best);
    for (int i = 1; i < t->nio && bd > 0; i++) {
      int d = t->ops->hops(t, n, t->io_nodes[i]);
      if (d < bd) { bd = d; best = t->io_nodes[i]; }
    }
    t->gateway[n] = best;
  }
  return TAGG_OK;
}

int tagg_topology_generic_from_ranks(int nranks, const int *rank_node, int nio, const int *io_nodes,
                                     double latency, double bandwidth, tagg_topology_t **out,
                                     tagg_err_t *err) {
  *out = NULL;
  if (nranks < 1 || !rank_node) return tagg_seterr(err, TAGG_EINVAL, "generic_from_ranks: need >= 1 rank");
  int maxn = -1;
  for (int r = 0; r < nranks; r++) {
    if (rank_node[r] < 0) return tagg_seterr(err, TAGG_EINVAL, "generic_from_ranks: rank %d has node %d < 0", r, rank_node[r]);
    if (rank_node[r] > maxn) maxn = rank_node[r];
  }
  tagg_topology_t *t = calloc(1, sizeof *t);
  if (!t) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  t->ops = &tagg_topo_generic;
  snprintf(t->name, sizeof t->name, "generic-%dnodes", maxn + 1);
  t->ndims = 1;
  t->dims[0] = maxn + 1;
  t->latency = latency;
  t->bandwidth = bandwidth;
  t->io_extra_hops = 1;
  t->nranks = nranks;
  t->rank_node = malloc((size_t)nranks * sizeof(int));
  t->nio = nio > 0 ? nio : 1;
  t->io_nodes = malloc((size_t)t->nio * sizeof(int));
  int rc = TAGG_ENOMEM;
  if (!t->rank_node || !t->io_nodes) { tagg_seterr(err, rc, "out of memory"); goto fail; }
  memcpy(t->rank_node, rank_node, (size_t)nranks * sizeof(int));
  if (nio > 0 && io_nodes) memcpy(t->io_nodes, io_nodes, (size_t)nio * sizeof(int));
  else t->io_nodes[0] = 0;
  if ((rc = tagg_topo_enumerate(t, err)) || (rc = tagg_topo_finish(t, err))) goto fail;
  *out = t;
  return TAGG_OK;
fail:
  tagg_topology_free(t);
  return rc;
}

const tagg_topo_ops_t *tagg_topology_ops(const tagg_topology_t *t) { return t->ops; }
const char *tagg_topology_name(const tagg_topology_t *t) { return t->name; }
int tagg_topology_nnodes(const tagg_topology_t *t) { return t->nnodes; }
int tagg_topology_nranks(const tagg_topology_t *t) { return t->nranks; }
int tagg_topology_ndims(const tagg_topology_t *t) { return t->ndims; }
int tagg_topology_dim(const tagg_topology_t *t, int d) { return (d >= 0 && d < t->ndims) ? t->dims[d] : 0; }
const int *tagg_topology_coords(const tagg_topology_t *t, int node) { return t->coords + (size_t)node * (size_t)t->ndims; }
int tagg_topology_rank_node(const tagg_topology_t *t, int rank) { return t->rank_node[rank]; }
int tagg_topology_hops(const tagg_topology_t *t, int a, int b) { return t->ops->hops(t, a, b); }
double tagg_topology_latency(const tagg_topology_t *t, int a, int b) { return t->ops->link_latency(t, a, b); }
double tagg_topology_bandwidth(const tagg_topology_t *t, int a, int b) { return t->ops->link_bandwidth(t, a, b); }
int tagg_topology_nio(const tagg_topology_t *t) { return t->nio; }
int tagg_topology_io_node(const tagg_topology_t *t, int i) { return t->io_nodes[i]; }
int tagg_topology_gateway(const tagg_topology_t *t, int node) { return t->gateway[node]; }
int tagg_topology_is_io(const tagg_topology_t *t, int node) { return t->is_io[node]; }
int tagg_topology_io_hops(const tagg_topology_t *t, int node) {
  return t->ops->hops(t, node, t->gateway[node]) + t->io_extra_hops;
}
void tagg_topology_project2d(const tagg_topology_t *t, int node, double *x, double *y) {
  t->ops->project2d(t, node, x, y);
}

int tagg_topology_nlinks(const tagg_topology_t *t) { return t->ops->nlinks(t); }
int tagg_topology_route_max(const tagg_topology_t *t) { return t->ops->route_max(t); }
int tagg_topology_route(const tagg_topology_t *t, int a, int b, int *links, int max) {
  return t->ops->route(t, a, b, links, max);
}
double tagg_topology_link_capacity(const tagg_topology_t *t, int link) { return t->ops->link_capacity(t, link); }
void tagg_topology_link_name(const tagg_topology_t *t, int link, char *buf, size_t n) {
  if (n == 0) return;
  if (link < 0 || link >= t->ops->nlinks(t)) { snprintf(buf, n, "link %d (none)", link); return; }
  t->ops->link_name(t, link, buf, n);
}

void tagg_topology_print(const tagg_topology_t *t, FILE *out) {
  fprintf(out, "topology %s: kind %s, %d nodes, %d ranks, dims", t->name, t->ops->name, t->nnodes, t->nranks);
  for (int d = 0; d < t->ndims; d++) fprintf(out, " %d", t->dims[d]);
  fprintf(out, ", %d I/O node(s), latency %.3g s/hop, bandwidth %.3g B/s\n", t->nio, t->latency, t->bandwidth);
}
