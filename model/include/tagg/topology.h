/* tagg/topology.h - network topology abstraction (MA-TAPIOCA section 3.1, Listing 2).
 *
 * A topology is a set of nodes with coordinates, a rank -> node map, I/O
 * gateway nodes and per-hop latency / route bandwidth.  Each kind (generic
 * cluster, torus, dragonfly, fat tree) is one ops table in its own source file;
 * tagg_topo_kinds[] is the NULL-terminated registry of them.
 *
 * Distances are hop counts: d(u, v) of the poster (000_*.txt) and of
 * MA-TAPIOCA Cost_A / Cost_T.  The distance to the I/O node of a node is the
 * hops to its gateway plus `io_extra_hops` (gateway -> storage). */
#ifndef TAGG_TOPOLOGY_H
#define TAGG_TOPOLOGY_H

#include <stddef.h>
#include <stdio.h>
#include "tagg/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TAGG_TOPO_VERSION 1 /* version of the topology file format */
#define TAGG_MAX_DIMS 8

typedef struct tagg_topology tagg_topology_t; /* opaque */

typedef struct tagg_topo_ops {
  const char *name;        /* value of the `kind` field */
  const char *description;
  int ndims_min, ndims_max;  /* accepted length of `dims` (or `levels`) */
  /* Checks kind-specific fields once nodes/coords are set; fills derived data. */
  int (*validate)(tagg_topology_t *t, tagg_err_t *err);
  /* Hop distance between two nodes: symmetric, 0 iff a == b (except explicit matrices). */
  int (*hops)(const tagg_topology_t *t, int a, int b);
  /* Per-hop latency (s) and bottleneck bandwidth (B/s) of the route a -> b. */
  double (*link_latency)(const tagg_topology_t *t, int a, int b);
  double (*link_bandwidth)(const tagg_topology_t *t, int a, int b);
  /* 2D position of a node for drawing (arbitrary units, >= 0). */
  void (*project2d)(const tagg_topology_t *t, int node, double *x, double *y);
  /* Link level (for flow simulation, tagg_topology_route() and friends):
   * number of directed links, longest route, the links of the route a -> b,
   * a link's capacity and name. */
  int (*nlinks)(const tagg_topology_t *t);
  int (*route_max)(const tagg_topology_t *t);
  int (*route)(const tagg_topology_t *t, int a, int b, int *links, int max);
  double (*link_capacity)(const tagg_topology_t *t, int link);
  void (*link_name)(const tagg_topology_t *t, int link, char *buf, size_t n);
} tagg_topo_ops_t;

extern const tagg_topo_ops_t tagg_topo_generic;
extern const tagg_topo_ops_t tagg_topo_torus;
extern const tagg_topo_ops_t tagg_topo_dragonfly;
extern const tagg_topo_ops_t tagg_topo_fattree;
/* NULL-terminated registry of every topology kind. */
extern const tagg_topo_ops_t *const tagg_topo_kinds[];
const tagg_topo_ops_t *tagg_topo_kind_find(const char *name);

/* ---- construction ------------------------------------------------------- */

/* Reads a topology file (format in model/README.md).  Errors name file, line, field. */
int tagg_topology_load(const char *path, tagg_topology_t **out, tagg_err_t *err);
int tagg_topology_parse(const char *text, const char *name, tagg_topology_t **out, tagg_err_t *err);

/* "Generic cluster" built in memory from a rank -> node array, as the engine
 * derives it from the shared-memory split of MPI_COMM_WORLD: nnodes = 1 + max
 * rank_node[], all nodes on one switch (2 hops between distinct nodes), the
 * gateway is node 0 unless io_nodes is given.  latency in s, bandwidth in B/s. */
int tagg_topology_generic_from_ranks(int nranks, const int *rank_node, int nio, const int *io_nodes,
                                     double latency, double bandwidth, tagg_topology_t **out,
                                     tagg_err_t *err);
void tagg_topology_free(tagg_topology_t *t);

/* ---- queries (arguments are not range-checked for speed; use valid ids) -- */
const tagg_topo_ops_t *tagg_topology_ops(const tagg_topology_t *t);
const char *tagg_topology_name(const tagg_topology_t *t);
int tagg_topology_nnodes(const tagg_topology_t *t);
int tagg_topology_nranks(const tagg_topology_t *t);
int tagg_topology_ndims(const tagg_topology_t *t);
int tagg_topology_dim(const tagg_topology_t *t, int d);
const int *tagg_topology_coords(const tagg_topology_t *t, int node); /* ndims ints */
int tagg_topology_rank_node(const tagg_topology_t *t, int rank);
int tagg_topology_hops(const tagg_topology_t *t, int a, int b);
double tagg_topology_latency(const tagg_topology_t *t, int a, int b);
double tagg_topology_bandwidth(const tagg_topology_t *t, int a, int b);
int tagg_topology_nio(const tagg_topology_t *t);
int tagg_topology_io_node(const tagg_topology_t *t, int i);     /* i-th gateway */
int tagg_topology_gateway(const tagg_topology_t *t, int node);  /* gateway serving node */
int tagg_topology_is_io(const tagg_topology_t *t, int node);
/* d(node, IO): hops to the gateway + io_extra_hops. */
int tagg_topology_io_hops(const tagg_topology_t *t, int node);
void tagg_topology_project2d(const tagg_topology_t *t, int node, double *x, double *y);

/* ---- links and routes (flow-level simulation, tools/tagg-sim) ------------
 * Directed links have ids 0 .. nlinks-1.  Routes:
 *   torus      dimension-order routing, dimension 0 first, the shorter way
 *              round each ring (ties: the + direction); one link per hop.
 *   dragonfly  injection link node -> router, then minimal routing over the
 *              routers, fixing the blade (green link), the chassis (black
 *              link), then the group (global link, one per router and other
 *              group, to the router at the same chassis/blade position), then
 *              the ejection link router -> node.  At most 5 links.
 *   fattree, generic  up links to the lowest common switch, down links from
 *              it; the up link of a subtree of m nodes carries m x the
 *              per-node bandwidth of the level above it (fattree: `bandwidth`,
 *              generic: `level_bandwidth`).  An explicit hop matrix is routed
 *              as one switch (node -> switch -> node).
 * Route lengths need not equal tagg_topology_hops() (dragonfly hops count a
 * level's worst case; a hop matrix is arbitrary): hops stay the latency
 * measure, routes the bandwidth one. */
int tagg_topology_nlinks(const tagg_topology_t *t);
/* Upper bound on the length of any route (size of a route buffer). */
int tagg_topology_route_max(const tagg_topology_t *t);
/* Writes the links of the route a -> b, in order, into links[0 .. max-1] and
 * returns the route's length (0 when a == b; more than max: truncated). */
int tagg_topology_route(const tagg_topology_t *t, int a, int b, int *links, int max);
/* Capacity of a link in B/s. */
double tagg_topology_link_capacity(const tagg_topology_t *t, int link);
/* Readable name of a link, e.g. "(0,1,2,0,1)->d2+" on a torus. */
void tagg_topology_link_name(const tagg_topology_t *t, int link, char *buf, size_t n);

/* Writes a summary (kind, dims, nodes, ranks, I/O nodes, link values). */
void tagg_topology_print(const tagg_topology_t *t, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
