/* internal.h - shared by the model sources only (not installed). */
#ifndef TAGG_MODEL_INTERNAL_H
#define TAGG_MODEL_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "tagg/error.h"
#include "tagg/topology.h"

/* Writes a formatted message into err (if not NULL) and returns code. */
int tagg_seterr(tagg_err_t *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

struct tagg_topology {
  const tagg_topo_ops_t *ops;
  char name[64];
  int ndims;
  int dims[TAGG_MAX_DIMS];      /* torus/dragonfly: extent; trees: arity per level */
  int wrap[TAGG_MAX_DIMS];      /* torus: wrap-around per dimension */
  double level_bw[TAGG_MAX_DIMS]; /* trees/dragonfly: bandwidth per level, 0 = `bandwidth` */
  int nnodes;
  int *coords;                  /* nnodes * ndims */
  int *matrix;                  /* generic: explicit nnodes x nnodes hops, or NULL */
  int nranks;
  int *rank_node;               /* nranks */
  int nio;
  int *io_nodes;                /* nio */
  int *gateway;                 /* nnodes: gateway node of each node */
  int *is_io;                   /* nnodes */
  int io_extra_hops;
  double latency;               /* per hop, s */
  double bandwidth;             /* per link, B/s */
  double global_bw;             /* dragonfly: inter-group links, 0 = `bandwidth` */
};

/* Allocates coords and fills them: row-major enumeration of dims (last fastest). */
int tagg_topo_enumerate(tagg_topology_t *t, tagg_err_t *err);
/* Finishes a topology: validate via ops, gateways, sanity. */
int tagg_topo_finish(tagg_topology_t *t, tagg_err_t *err);
/* Tree helpers shared by generic (switch hierarchy) and fat tree: level of the
 * lowest common switch of two leaves whose coords are digits (top first). */
int tagg_tree_lca_level(const tagg_topology_t *t, int a, int b);
void tagg_tree_project(const tagg_topology_t *t, int node, double *x, double *y);
/* Tree links (topo_tree.c): the up and down link of every subtree below the
 * top switch.  A subtree at level l (0 = a node, 1 = a leaf switch ...) has
 * level_size(l) = product of the last l arities nodes. */
int tagg_tree_nlinks(const tagg_topology_t *t);
int tagg_tree_route_max(const tagg_topology_t *t);
int tagg_tree_route(const tagg_topology_t *t, int a, int b, int *links, int max);
/* Level l and up (1) / down (0) direction of a tree link. */
void tagg_tree_link_level(const tagg_topology_t *t, int link, int *level, int *up);
/* Nodes below a subtree of level l. */
double tagg_tree_level_size(const tagg_topology_t *t, int level);
void tagg_tree_link_name(const tagg_topology_t *t, int link, char *buf, size_t n);

/* Line tokenizer used by the topology and tier parsers. */
typedef struct tagg_lines {
  char *buf;    /* owned copy of the text */
  char *next;
  int lineno;
  const char *name;
  char **tok;   /* tokens of the current line (grown as needed) */
  int cap;
} tagg_lines_t;
int tagg_lines_open_file(tagg_lines_t *L, const char *path, tagg_err_t *err);
int tagg_lines_open_text(tagg_lines_t *L, const char *text, const char *name, tagg_err_t *err);
/* Next non-empty line split into tokens (comments stripped) in L->tok.
 * Returns token count, 0 at end of input, TAGG_ENOMEM on failure. */
int tagg_lines_next(tagg_lines_t *L);
void tagg_lines_close(tagg_lines_t *L);
/* Open text (name: for messages; NULL: "<string>") or a file, run fn over
 * its lines, close: the one wrapper of every text format's parse and load. */
typedef int (*tagg_lines_fn)(tagg_lines_t *L, void *ctx, tagg_err_t *err);
int tagg_lines_parse_text(const char *text, const char *name, tagg_lines_fn fn, void *ctx, tagg_err_t *err);
int tagg_lines_parse_file(const char *path, tagg_lines_fn fn, void *ctx, tagg_err_t *err);
/* Strict integer parse with range; returns 0 on success. */
int tagg_parse_int(const char *s, long lo, long hi, long *out);
int tagg_strcaseeq(const char *a, const char *b);

#endif
