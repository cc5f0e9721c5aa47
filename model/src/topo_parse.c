/* topo_parse.c - the topology file format (version 1), documented in
 * model/README.md.  Every error names the file, the line and the field. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "tagg/pattern.h"

enum { K_NAME, K_KIND, K_DIMS, K_WRAP, K_NODES, K_NODE, K_DISTANCE, K_RPN, K_RANK_NODES, K_NRANKS,
       K_IO_NODES, K_IO_STRIDE, K_IO_EXTRA, K_LATENCY, K_BANDWIDTH, K_GLOBAL_BW, K_LEVEL_BW, K_COUNT };
static const char *const key_names[K_COUNT] = {
    "name", "kind", "dims", "wrap", "nodes", "node", "distance", "ranks_per_node", "rank_nodes",
    "nranks", "io_nodes", "io_stride", "io_extra_hops", "latency", "bandwidth", "global_bandwidth",
    "level_bandwidth"};
/* keys that may appear on several lines */
static int repeatable(int k) { return k == K_NODE || k == K_DISTANCE || k == K_RANK_NODES || k == K_IO_NODES; }

typedef struct intvec { int *v; size_t n, cap; } intvec_t;
static int iv_push(intvec_t *a, int x) {
  if (a->n == a->cap) {
    size_t nc = a->cap ? a->cap * 2 : 64;
    int *nv = realloc(a->v, nc * sizeof *nv);
    if (!nv) return -1;
    a->v = nv;
    a->cap = nc;
  }
  a->v[a->n++] = x;
  return 0;
}

typedef struct pstate {
  const char *file;
  int line[K_COUNT];       /* first line where each key appeared, 0 = absent */
  long nodes, rpn, nranks, io_stride;
  intvec_t node_ids, node_coords, node_lines, dist_rows, dist_vals, rank_nodes, io_nodes;
  int level_bw_n;
} pstate_t;

#define PERR(ln, field, ...) perr(err, P->file, (ln), (field), __VA_ARGS__)
static int perr(tagg_err_t *err, const char *file, int ln, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static int perr(tagg_err_t *err, const char *file, int ln, const char *field, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (ln > 0) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': %s", file, ln, field, what);
  return tagg_seterr(err, TAGG_EPARSE, "%s: field '%s': %s", file, field, what);
}

static int get_int(pstate_t *P, tagg_err_t *err, int ln, const char *field, const char *s, long lo, long hi, long *out) {
  if (tagg_parse_int(s, lo, hi, out))
    return PERR(ln, field, "expected an integer in %ld..%ld, got '%s'", lo, hi, s);
  return 0;
}

static int parse_line(pstate_t *P, tagg_topology_t *t, char **tok, int n, int ln, tagg_err_t *err) {
  int k;
  for (k = 0; k < K_COUNT; k++)
    if (strcmp(tok[0], key_names[k]) == 0) break;
  if (k == K_COUNT) {
    if (strcmp(tok[0], "levels") == 0) k = K_DIMS; /* alias for trees */
    else return PERR(ln, tok[0], "unknown field (valid: name kind dims|levels wrap nodes node distance "
                                 "ranks_per_node rank_nodes nranks io_nodes io_stride io_extra_hops "
                                 "latency bandwidth global_bandwidth level_bandwidth)");
  }
  const char *f = key_names[k];
  if (P->line[k] && !repeatable(k)) return PERR(ln, f, "given twice (first on line %d)", P->line[k]);
  if (!P->line[k]) P->line[k] = ln;
  int nv = n - 1;
  if (nv < 1) return PERR(ln, f, "missing value");
  long v;
  double x;
  switch (k) {
    case K_NAME:
      if (nv != 1) return PERR(ln, f, "expected one word");
      snprintf(t->name, sizeof t->name, "%s", tok[1]);
      return 0;
    case K_KIND:
      if (nv != 1) return PERR(ln, f, "expected one word");
      t->ops = tagg_topo_kind_find(tok[1]);
      if (!t->ops) return PERR(ln, f, "unknown kind '%s' (valid: generic torus dragonfly fattree)", tok[1]);
      return 0;
    case K_DIMS:
    case K_WRAP:
    case K_LEVEL_BW:
      if (nv > TAGG_MAX_DIMS) return PERR(ln, f, "at most %d values", TAGG_MAX_DIMS);
      for (int i = 0; i < nv; i++) {
        if (k == K_DIMS) {
          if (get_int(P, err, ln, f, tok[1 + i], 1, 1 << 20, &v)) return TAGG_EPARSE;
          t->dims[i] = (int)v;
        } else if (k == K_WRAP) {
          if (get_int(P, err, ln, f, tok[1 + i], 0, 1, &v)) return TAGG_EPARSE;
          t->wrap[i] = (int)v;
        } else {
          if (tagg_parse_size(tok[1 + i], &x) || !(x > 0)) return PERR(ln, f, "expected a bandwidth > 0 like 10GB/s, got '%s'", tok[1 + i]);
          t->level_bw[i] = x;
        }
      }
      if (k == K_DIMS) t->ndims = nv;
      else if (k == K_WRAP) { if (nv != t->ndims && t->ndims) return PERR(ln, f, "expected %d values (one per dimension), got %d", t->ndims, nv); if (!t->ndims) return PERR(ln, f, "must come after 'dims'"); }
      else P->level_bw_n = nv;
      return 0;
    case K_NODES:
      if (nv != 1) return PERR(ln, f, "expected one value");
      return get_int(P, err, ln, f, tok[1], 1, 1 << 24, &P->nodes);
    case K_NODE:
      if (!t->ndims) return PERR(ln, f, "must come after 'dims'");
      if (nv != 1 + t->ndims) return PERR(ln, f, "expected an id and %d coordinates, got %d values", t->ndims, nv);
      for (int i = 0; i < nv; i++) {
        if (get_int(P, err, ln, f, tok[1 + i], 0, 1 << 24, &v)) return TAGG_EPARSE;
        if (i > 0 && v >= t->dims[i - 1]) return PERR(ln, f, "coordinate %d is %ld, outside 0..%d", i - 1, v, t->dims[i - 1] - 1);
        if (iv_push(i == 0 ? &P->node_ids : &P->node_coords, (int)v)) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
      }
      if (iv_push(&P->node_lines, ln)) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
      return 0;
    case K_DISTANCE:
      if (!P->nodes) return PERR(ln, f, "must come after 'nodes'");
      if (nv != 1 + P->nodes) return PERR(ln, f, "expected a row index and %ld distances, got %d values", P->nodes, nv);
      for (int i = 0; i < nv; i++) {
        if (get_int(P, err, ln, f, tok[1 + i], 0, i == 0 ? P->nodes - 1 : 1 << 20, &v)) return TAGG_EPARSE;
        if (iv_push(i == 0 ? &P->dist_rows : &P->dist_vals, (int)v)) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
      }
      return 0;
    case K_RPN:
      if (nv != 1) return PERR(ln, f, "expected one value");
      return get_int(P, err, ln, f, tok[1], 1, 1 << 20, &P->rpn);
    case K_NRANKS:
      if (nv != 1) return PERR(ln, f, "expected one value");
      return get_int(P, err, ln, f, tok[1], 1, 1 << 26, &P->nranks);
    case K_IO_STRIDE:
      if (nv != 1) return PERR(ln, f, "expected one value");
      return get_int(P, err, ln, f, tok[1], 1, 1 << 24, &P->io_stride);
    case K_IO_EXTRA:
      if (nv != 1) return PERR(ln, f, "expected one value");
      if (get_int(P, err, ln, f, tok[1], 0, 1000, &v)) return TAGG_EPARSE;
      t->io_extra_hops = (int)v;
      return 0;
    case K_RANK_NODES:
    case K_IO_NODES:
      for (int i = 0; i < nv; i++) {
        if (get_int(P, err, ln, f, tok[1 + i], 0, 1 << 24, &v)) return TAGG_EPARSE;
        if (iv_push(k == K_RANK_NODES ? &P->rank_nodes : &P->io_nodes, (int)v)) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
      }
      return 0;
    case K_LATENCY:
      if (nv != 1 || tagg_parse_time(tok[1], &t->latency)) return PERR(ln, f, "expected one time like 2.5us or 30ms, got '%s'", tok[1]);
      return 0;
    case K_BANDWIDTH:
    case K_GLOBAL_BW:
      if (nv != 1 || tagg_parse_size(tok[1], &x) || !(x > 0)) return PERR(ln, f, "expected one bandwidth > 0 like 1.8GB/s, got '%s'", tok[1]);
      if (k == K_BANDWIDTH) t->bandwidth = x; else t->global_bw = x;
      return 0;
  }
  return 0;
}

/* Cross-field checks once the whole file is read. */
static int build(pstate_t *P, tagg_topology_t *t, tagg_err_t *err) {
  static const int required[] = {K_KIND, K_LATENCY, K_BANDWIDTH};
  for (size_t i = 0; i < sizeof required / sizeof *required; i++)
    if (!P->line[required[i]]) return PERR(0, key_names[required[i]], "missing (required)");
  int matrix = P->line[K_DISTANCE] != 0;
  if (matrix && t->ops != &tagg_topo_generic) return PERR(P->line[K_DISTANCE], "distance", "only allowed with kind generic");
  if (t->ops == &tagg_topo_generic && !t->ndims && P->nodes) { t->ndims = 1; t->dims[0] = (int)P->nodes; }
  if (!t->ndims) return PERR(0, "dims", "missing (required for kind %s)", t->ops->name);
  if (t->ndims < t->ops->ndims_min || t->ndims > t->ops->ndims_max)
    return PERR(P->line[K_DIMS], "dims", "kind %s needs %d..%d values, got %d", t->ops->name, t->ops->ndims_min, t->ops->ndims_max, t->ndims);
  if (P->line[K_WRAP] && t->ops != &tagg_topo_torus) return PERR(P->line[K_WRAP], "wrap", "only allowed with kind torus");
  if (!P->line[K_WRAP]) for (int d = 0; d < t->ndims; d++) t->wrap[d] = 1;
  if (P->line[K_GLOBAL_BW] && t->ops != &tagg_topo_dragonfly) return PERR(P->line[K_GLOBAL_BW], "global_bandwidth", "only allowed with kind dragonfly");
  if (P->line[K_LEVEL_BW] && (t->ops != &tagg_topo_generic || P->level_bw_n != t->ndims))
    return PERR(P->line[K_LEVEL_BW], "level_bandwidth", "only with kind generic, one value per level (%d)", t->ndims);
  int rc = tagg_topo_enumerate(t, err);
  if (rc == TAGG_EINVAL) return PERR(P->line[K_DIMS], "dims", "more than 2^24 nodes");
  if (rc) return rc;
  if (matrix) {
    if ((long)t->nnodes != P->nodes) return PERR(P->line[K_DISTANCE], "distance", "needs dims equal to nodes (%ld)", P->nodes);
    if ((long)P->dist_rows.n != P->nodes) return PERR(P->line[K_DISTANCE], "distance", "%zu rows given, %ld needed", P->dist_rows.n, P->nodes);
    t->matrix = malloc((size_t)P->nodes * (size_t)P->nodes * sizeof(int));
    char *seen = calloc((size_t)P->nodes, 1);
    if (!t->matrix || !seen) { free(seen); return tagg_seterr(err, TAGG_ENOMEM, "out of memory"); }
    for (size_t r = 0; r < P->dist_rows.n; r++) {
      int row = P->dist_rows.v[r];
      if (seen[row]) { free(seen); return PERR(P->line[K_DISTANCE], "distance", "row %d given twice", row); }
      seen[row] = 1;
      memcpy(t->matrix + (size_t)row * (size_t)P->nodes, P->dist_vals.v + r * (size_t)P->nodes, (size_t)P->nodes * sizeof(int));
    }
    free(seen);
  } else if (P->node_ids.n) {
    /* Explicit node list: a partition of the machine, coordinates given. */
    long n = (long)P->node_ids.n;
    if (P->nodes && P->nodes != n) return PERR(P->line[K_NODES], "nodes", "says %ld but %ld 'node' lines given", P->nodes, n);
    int *full = t->coords;
    long cells = t->nnodes;
    char *used = calloc((size_t)cells, 1), *seen = calloc((size_t)n, 1);
    int *coords = malloc((size_t)n * (size_t)t->ndims * sizeof(int));
    if (!used || !seen || !coords) { free(used); free(seen); free(coords); return tagg_seterr(err, TAGG_ENOMEM, "out of memory"); }
    for (long i = 0; i < n; i++) {
      int id = P->node_ids.v[i], ln = P->node_lines.v[i];
      const int *c = P->node_coords.v + i * t->ndims;
      long lin = 0;
      for (int d = 0; d < t->ndims; d++) lin = lin * t->dims[d] + c[d];
      int bad = 0;
      if (id >= n) bad = PERR(ln, "node", "id %d outside 0..%ld (ids must be 0..nodes-1)", id, n - 1);
      else if (seen[id]) bad = PERR(ln, "node", "id %d given twice", id);
      else if (used[lin]) bad = PERR(ln, "node", "coordinates of node %d already used by another node", id);
      if (bad) { free(used); free(seen); free(coords); return bad; }
      seen[id] = 1;
      used[lin] = 1;
      memcpy(coords + (size_t)id * t->ndims, c, (size_t)t->ndims * sizeof(int));
    }
    free(used);
    free(seen);
    free(full);
    t->coords = coords;
    t->nnodes = (int)n;
  } else if (P->nodes && P->nodes != t->nnodes) {
    return PERR(P->line[K_NODES], "nodes", "says %ld but dims give %d nodes (add 'node' lines for a subset)", P->nodes, t->nnodes);
  }
  if (t->ops == &tagg_topo_fattree || (t->ops == &tagg_topo_generic && !matrix)) {
    if (P->node_ids.n) return PERR(P->line[K_NODE], "node", "not allowed for tree kinds (nodes follow from levels)");
  }
  /* ranks */
  if (P->line[K_RPN] && P->line[K_RANK_NODES]) return PERR(P->line[K_RANK_NODES], "rank_nodes", "give either ranks_per_node or rank_nodes, not both");
  if (!P->line[K_RPN] && !P->line[K_RANK_NODES]) return PERR(0, "ranks_per_node", "missing (or give rank_nodes)");
  if (P->line[K_RANK_NODES]) {
    if (P->nranks && P->nranks != (long)P->rank_nodes.n) return PERR(P->line[K_NRANKS], "nranks", "says %ld but rank_nodes lists %zu ranks", P->nranks, P->rank_nodes.n);
    t->nranks = (int)P->rank_nodes.n;
    for (size_t r = 0; r < P->rank_nodes.n; r++)
      if (P->rank_nodes.v[r] >= t->nnodes) return PERR(P->line[K_RANK_NODES], "rank_nodes", "rank %zu on node %d, outside 0..%d", r, P->rank_nodes.v[r], t->nnodes - 1);
    t->rank_node = P->rank_nodes.v;
    P->rank_nodes.v = NULL;
  } else {
    long cap = (long)t->nnodes * P->rpn;
    long nr = P->nranks ? P->nranks : cap;
    if (nr > cap) return PERR(P->line[K_NRANKS], "nranks", "%ld ranks do not fit %d nodes x %ld ranks_per_node", nr, t->nnodes, P->rpn);
    if (nr > (1L << 26)) return PERR(P->line[K_RPN], "ranks_per_node", "too many ranks (%ld)", nr);
    t->nranks = (int)nr;
    t->rank_node = malloc((size_t)nr * sizeof(int));
    if (!t->rank_node) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
    for (long r = 0; r < nr; r++) t->rank_node[r] = (int)(r / P->rpn);
  }
  /* I/O gateways */
  if (P->line[K_IO_NODES] && P->line[K_IO_STRIDE]) return PERR(P->line[K_IO_STRIDE], "io_stride", "give either io_nodes or io_stride, not both");
  if (P->line[K_IO_NODES]) {
    for (size_t i = 0; i < P->io_nodes.n; i++) {
      if (P->io_nodes.v[i] >= t->nnodes) return PERR(P->line[K_IO_NODES], "io_nodes", "node %d outside 0..%d", P->io_nodes.v[i], t->nnodes - 1);
      for (size_t j = 0; j < i; j++)
        if (P->io_nodes.v[j] == P->io_nodes.v[i]) return PERR(P->line[K_IO_NODES], "io_nodes", "node %d listed twice", P->io_nodes.v[i]);
    }
    t->nio = (int)P->io_nodes.n;
    t->io_nodes = P->io_nodes.v;
    P->io_nodes.v = NULL;
  } else if (P->line[K_IO_STRIDE]) {
    t->nio = (int)((t->nnodes + P->io_stride - 1) / P->io_stride);
    t->io_nodes = malloc((size_t)t->nio * sizeof(int));
    if (!t->io_nodes) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
    for (int i = 0; i < t->nio; i++) t->io_nodes[i] = (int)(i * P->io_stride);
  } else {
    return PERR(0, "io_nodes", "missing (or give io_stride)");
  }
  rc = tagg_topo_finish(t, err);
  if (rc && err) { /* messages from finish name the topology; add the file */
    char tmp[TAGG_ERR_MSG_MAX];
    snprintf(tmp, sizeof tmp, "%s", err->msg);
    tagg_seterr(err, rc, "%s: %s", P->file, tmp);
  }
  return rc;
}

static int parse_lines(tagg_lines_t *L, void *ctx, tagg_err_t *err) {
  tagg_topology_t **out = ctx;
  pstate_t PS, *P = &PS;
  memset(P, 0, sizeof *P);
  P->file = L->name;
  tagg_topology_t *t = calloc(1, sizeof *t);
  if (!t) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  t->io_extra_hops = 1;
  snprintf(t->name, sizeof t->name, "unnamed");
  int rc = 0, n = tagg_lines_next(L);
  if (n < 0) rc = tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  else if (n == 0) rc = PERR(0, "tagg-topology", "empty file (expected a first line 'tagg-topology %d')", TAGG_TOPO_VERSION);
  else if (strcmp(L->tok[0], "tagg-topology") != 0 || n != 2)
    rc = PERR(L->lineno, "tagg-topology", "first line must be 'tagg-topology %d'", TAGG_TOPO_VERSION);
  else {
    long v;
    if (tagg_parse_int(L->tok[1], 1, 1000, &v) || v != TAGG_TOPO_VERSION)
      rc = PERR(L->lineno, "tagg-topology", "unsupported version '%s' (this library reads version %d)", L->tok[1], TAGG_TOPO_VERSION);
  }
  while (!rc && (n = tagg_lines_next(L)) > 0) rc = parse_line(P, t, L->tok, n, L->lineno, err);
  if (!rc && n < 0) rc = tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  if (!rc) rc = build(P, t, err);
  intvec_t *vecs[] = {&P->node_ids, &P->node_coords, &P->node_lines, &P->dist_rows, &P->dist_vals, &P->rank_nodes, &P->io_nodes};
  for (size_t i = 0; i < sizeof vecs / sizeof *vecs; i++) free(vecs[i]->v);
  if (rc) { tagg_topology_free(t); *out = NULL; return rc; }
  *out = t;
  return TAGG_OK;
}

int tagg_topology_parse(const char *text, const char *name, tagg_topology_t **out, tagg_err_t *err) {
  *out = NULL;
  return tagg_lines_parse_text(text, name, parse_lines, out, err);
}

int tagg_topology_load(const char *path, tagg_topology_t **out, tagg_err_t *err) {
  *out = NULL;
  return tagg_lines_parse_file(path, parse_lines, out, err);
}
