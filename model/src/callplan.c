/* callplan.c - the plan of one collective call from the gathered request rows
 * (tagg/callplan.h). Pure: no MPI; every rank of a call runs it on the same
 * rows and gets the same plan.
 *
 * Steps, in the order of MA-TAPIOCA section 3.2 (seed 002):
 *   1. what the rows say: failure, nothing, overlap, metadata only;
 *   2. aggregate or not: the model's cost of direct access (every rank issues
 *      its own runs) against aggregation (a few large requests, plus the copy
 *      and the synchronisations), with the target's latency and bandwidth by
 *      request size (GLEAN's aggregation by message size, seed 003);
 *   3. #Aggr (naggr.c) and the file domains (tagg_partition_range, partition.c);
 *   4. one aggregator per domain: the layout's placement constraint, else the
 *      cost model (Cost_A + Cost_T of each producer as a candidate, with its
 *      node's tier), else the registry strategy; one domain per rank and at
 *      most per_node aggregators per node (stepwise aggregation, seed 001);
 *   5. rounds of the buffers, throttle (stepwise.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "tagg/callplan.h"

void tagg_call_plan_free(tagg_call_plan_t *p) {
  if (!p) return;
  free(p->aggr);
  memset(p, 0, sizeof *p);
}

double tagg_fs_request_time(const tagg_fs_perf_t *fs, const tagg_tiers_t *tiers, uint64_t size) {
  double lat, bw;
  if (!fs || fs->n <= 0) {
    const tagg_tier_t *t = &tiers->tier[tiers->target];
    lat = t->latency, bw = t->bandwidth;
  } else if (fs->n == 1 || size <= fs->size[0]) {
    lat = fs->latency[0], bw = fs->bandwidth[0];
  } else if (size >= fs->size[fs->n - 1]) {
    lat = fs->latency[fs->n - 1], bw = fs->bandwidth[fs->n - 1];
  } else {
    int i = 1;
    while (i < fs->n - 1 && fs->size[i] < size) i++;
    double x0 = log((double)fs->size[i - 1]), x1 = log((double)fs->size[i]), x = log((double)size);
    double w = x1 > x0 ? (x - x0) / (x1 - x0) : 0;
    lat = fs->latency[i - 1] + w * (fs->latency[i] - fs->latency[i - 1]);
    bw = fs->bandwidth[i - 1] + w * (fs->bandwidth[i] - fs->bandwidth[i - 1]);
  }
  return lat + (bw > 0 ? (double)size / bw : 0);
}

/* The runs of one level (count runs of len at stride from lo) inside [a, b). */
static uint64_t runs1(uint64_t lo, uint64_t count, uint64_t len, uint64_t stride, uint64_t a, uint64_t b,
                      void (*emit)(void *ctx, uint64_t off, uint64_t len), void *ctx) {
  uint64_t st = count > 1 ? stride : len, first = 0, n = 0;
  if (a > lo && st) first = (a - lo) / st; /* run `first` is the first that may end after a */
  for (uint64_t i = first; i < count; i++) {
    uint64_t o = lo + i * st, e = o + len;
    if (o >= b) break;
    if (e <= a) continue;
    uint64_t x = o > a ? o : a, y = e < b ? e : b;
    if (emit) emit(ctx, x, y - x);
    n++;
  }
  return n;
}

size_t tagg_req_runs(const tagg_req_desc_t *r, uint64_t a, uint64_t b,
                     void (*emit)(void *ctx, uint64_t off, uint64_t len), void *ctx) {
  if (!r->count || r->lo == UINT64_MAX || b <= r->lo || a >= r->hi) return 0;
  uint64_t c2 = r->count2 ? r->count2 : 1, n = 0, span1 = (r->count - 1) * (r->count > 1 ? r->stride : 0) + r->len;
  uint64_t first = 0;
  if (c2 > 1 && a > r->lo && r->stride2) first = (a - r->lo) / r->stride2;
  if (first) first--; /* a block may reach past the next one's start only if stride2 < span1: start one earlier */
  for (uint64_t j = first; j < c2; j++) {
    uint64_t blo = r->lo + j * (c2 > 1 ? r->stride2 : 0);
    if (blo >= b) break;
    if (blo + span1 <= a) continue;
    n += runs1(blo, r->count, r->len, r->stride, a, b, emit, ctx);
  }
  return (size_t)n;
}

int tagg_req_same_shape(const tagg_req_desc_t *prev, const tagg_req_desc_t *cur, int nranks, int64_t *delta) {
  int have = 0;
  int64_t d = 0;
  for (int r = 0; r < nranks; r++) {
    const tagg_req_desc_t *p = &prev[r], *c = &cur[r];
    if ((p->lo == UINT64_MAX) != (c->lo == UINT64_MAX)) return 0;
    if (c->lo == UINT64_MAX) continue;
    int64_t dr = (int64_t)(c->lo - p->lo);
    if (have && dr != d) return 0;
    d = dr, have = 1;
    if (c->hi - c->lo != p->hi - p->lo || c->bytes != p->bytes || c->nruns != p->nruns || c->count != p->count ||
        c->len != p->len || c->stride != p->stride || c->count2 != p->count2 || c->stride2 != p->stride2 ||
        c->flags != p->flags)
      return 0;
  }
  *delta = d;
  return 1;
}

/* ---- producers of each domain (CSR, O(#ranks x domains met + #domains)) ---- */

typedef struct {
  size_t *first;          /* [ndom + 1] */
  tagg_producer_t *prod;  /* producers of domain d: prod[first[d] .. first[d+1]-1], rank order */
} prodlist_t;

static void prodlist_free(prodlist_t *p) { free(p->first), free(p->prod); }

static int dom_of(const tagg_call_plan_t *c, uint64_t off) {
  uint64_t d = (off - c->lo) / c->dsize;
  return d >= (uint64_t)c->ndom ? c->ndom - 1 : (int)d;
}

/* A row the plan prices: runs not accessed before the plan (TAGG_REQ_DONE),
 * or, judging a speculative guess (as_if), every row with runs. */
static int priced(const tagg_req_desc_t *q, int as_if) {
  return q->lo != UINT64_MAX && q->bytes && (as_if || !(q->flags & TAGG_REQ_DONE));
}

/* A row the plan moves. */
static int has_runs(const tagg_req_desc_t *q) { return priced(q, 0); }

static int prodlist_build(const tagg_call_in_t *in, const tagg_call_plan_t *c, prodlist_t *pl) {
  pl->first = calloc((size_t)c->ndom + 1, sizeof *pl->first);
  if (!pl->first) return -1;
  size_t total = 0;
  for (int r = 0; r < in->nranks; r++) {
    const tagg_req_desc_t *q = &in->req[r];
    if (!has_runs(q)) continue;
    for (int d = dom_of(c, q->lo); d <= dom_of(c, q->hi - 1); d++) pl->first[d + 1]++, total++;
  }
  for (int d = 0; d < c->ndom; d++) pl->first[d + 1] += pl->first[d];
  pl->prod = malloc((total ? total : 1) * sizeof *pl->prod);
  size_t *fill = malloc(((size_t)c->ndom + 1) * sizeof *fill);
  if (!pl->prod || !fill) { free(fill); return -1; }
  memcpy(fill, pl->first, ((size_t)c->ndom + 1) * sizeof *fill);
  for (int r = 0; r < in->nranks; r++) {
    const tagg_req_desc_t *q = &in->req[r];
    if (!has_runs(q)) continue;
    for (int d = dom_of(c, q->lo); d <= dom_of(c, q->hi - 1); d++) {
      uint64_t dlo = c->lo + (uint64_t)d * c->dsize, dhi = dlo + c->dsize;
      uint64_t a = q->lo > dlo ? q->lo : dlo, b = q->hi < dhi ? q->hi : dhi;
      /* omega(i, A): the rank's bytes in the domain, assuming them spread evenly over its range */
      uint64_t w = (uint64_t)((double)q->bytes * (double)(b - a) / (double)(q->hi - q->lo));
      pl->prod[fill[d]++] = (tagg_producer_t){r, w ? w : 1};
    }
  }
  free(fill);
  return 0;
}

/* ---- election ---------------------------------------------------------- */

typedef struct {
  char *taken;    /* [nranks] */
  int *node_aggr; /* [nnodes] */
  int cap;
} elect_t;

static int node_of(const tagg_call_in_t *in, int r) { return tagg_topology_rank_node(in->topo, r); }

static int usable(const tagg_call_in_t *in, const elect_t *e, int r) {
  return !e->taken[r] && (e->cap == 0 || e->node_aggr[node_of(in, r)] < e->cap);
}

/* Next usable rank at or after `from` (cyclically); the node cap relaxed when it cannot be met. */
static int next_free(const tagg_call_in_t *in, const elect_t *e, int from) {
  int P = in->nranks;
  for (int i = 0; i < P; i++)
    if (usable(in, e, (from + i) % P)) return (from + i) % P;
  for (int i = 0; i < P; i++)
    if (!e->taken[(from + i) % P]) return (from + i) % P;
  return -1;
}

static void take(const tagg_call_in_t *in, elect_t *e, tagg_call_plan_t *c, int d, int r) {
  c->aggr[d] = r, e->taken[r] = 1, e->node_aggr[node_of(in, r)]++;
}

static int tier_of(const tagg_call_in_t *in, int r) {
  return in->node_tier ? in->node_tier[node_of(in, r)] : in->tiers->source;
}

/* Cost-based: the cheapest usable producer by Cost_A + Cost_T (lowest rank on ties). */
static int elect_cost(const tagg_call_in_t *in, elect_t *e, const tagg_producer_t *prod, size_t np, int *winner,
                      tagg_err_t *err) {
  tagg_group_summary_t sum;
  int rc = tagg_group_summary_build(in->topo, prod, np, &sum, err);
  if (rc) return rc;
  double best = INFINITY;
  *winner = -1;
  for (size_t i = 0; i < np && !rc; i++) {
    int r = prod[i].rank;
    if (!usable(in, e, r)) continue;
    tagg_cost_t cost;
    rc = tagg_candidate_cost_summary(in->topo, in->tiers, &sum, r, tier_of(in, r), in->opts, &cost, err);
    if (!rc && cost.eligible && cost.total < best) best = cost.total, *winner = r;
  }
  tagg_group_summary_free(&sum);
  return rc;
}

static int elect(const tagg_call_in_t *in, tagg_call_plan_t *c, const prodlist_t *pl, tagg_err_t *err) {
  int P = in->nranks, nn = tagg_topology_nnodes(in->topo), rc = 0, nfirst = 0;
  elect_t e = {calloc((size_t)P, 1), calloc((size_t)(nn > 0 ? nn : 1), sizeof(int)), c->per_node};
  int *first = malloc((size_t)P * sizeof *first), *used = NULL;
  char *seen = calloc((size_t)(nn > 0 ? nn : 1), 1);
  if (in->owner) used = calloc((size_t)P, sizeof *used);
  if (!e.taken || !e.node_aggr || !first || !seen || (in->owner && !used)) {
    rc = tagg_seterr(err, TAGG_ENOMEM, "out of memory");
    goto done;
  }
  for (int r = 0; r < P; r++) /* lowest rank of each node, in rank order (registry strategies) */
    if (!seen[node_of(in, r)]) seen[node_of(in, r)] = 1, first[nfirst++] = r;
  uint64_t rng = in->opts->seed;
  for (int d = 0; d < c->ndom && !rc; d++) {
    const tagg_producer_t *prod = pl->prod + pl->first[d];
    size_t np = pl->first[d + 1] - pl->first[d];
    int w = -1, tier = in->tiers->source;
    if (in->owner) { /* placement constraint: the next allowed rank of the stripe's node not used yet */
      uint64_t off = c->lo + (uint64_t)d * c->dsize;
      int head = in->owner(in->owner_ctx, off, 0);
      w = head >= 0 && head < P ? in->owner(in->owner_ctx, off, used[head]++) : -1;
      if (w < 0 || w >= P) {
        rc = tagg_seterr(err, TAGG_ENOCAND, "no rank left on the node holding address %llu to aggregate it "
                         "(%d domains)", (unsigned long long)off, c->ndom);
        break;
      }
      take(in, &e, c, d, w);
      continue;
    }
    if (np && (in->cost_based || !in->strategy)) {
      rc = elect_cost(in, &e, prod, np, &w, err);
    } else if (np) {
      tagg_group_summary_t sum;
      if (!(rc = tagg_group_summary_build(in->topo, prod, np, &sum, err))) {
        tagg_strategy_ctx_t ctx = {in->topo, in->tiers, in->opts, d, prod, np, &sum, &rng, first, nfirst};
        rc = in->strategy->choose(&ctx, &w, &tier, err);
        tagg_group_summary_free(&sum);
      }
    }
    if (rc) break;
    if (w < 0 || w >= P || !usable(in, &e, w)) /* no eligible candidate left: the first free rank from d's position */
      w = next_free(in, &e, w >= 0 && w < P ? w : (int)((long long)d * P / c->ndom));
    if (w < 0) {
      rc = tagg_seterr(err, TAGG_ENOCAND, "no rank left to aggregate domain %d of %d", d, c->ndom);
      break;
    }
    take(in, &e, c, d, w);
  }
done:
  free(e.taken), free(e.node_aggr), free(first), free(seen), free(used);
  return rc;
}

/* ---- the plan ------------------------------------------------------------ */

/* The calibration's verdict on several writers (readers) of one node: the
 * request lines were measured by fs->ranks ranks together (each got bandwidth
 * B of the largest size), so together they wrote (read) ranks x B; one process
 * alone, the target tier's bandwidth (reads: fs->alone, the 'read_alone'
 * line). Below 1.05 x that, more streams add nothing, and this returns the
 * rate one stream of the node gets: what they got together (they added
 * nothing over one, so one gets no more either), at most the rate measured
 * alone. 0: more streams do add, or nothing was measured.
 * Without such a measurement, a client known to serialise a file's writes
 * (in->serial_writes: FUSE, or direct writes into a rotational local disk)
 * says the same of writes: one writer at the target's rate. */
static int measured_together(const tagg_call_in_t *in) {
  return in->fs && in->fs->n > 0 && in->fs->ranks >= 2 && in->tiers && in->tiers->target >= 0;
}

/* What the fs->ranks streams of a node got together at the largest size
 * (each line's rate is one stream's share; one stream when ranks= is absent). */
static double node_rate(const tagg_fs_perf_t *fs) {
  return fs->bandwidth[fs->n - 1] * (fs->ranks > 1 ? fs->ranks : 1);
}

static double lone_stream_rate(const tagg_call_in_t *in) {
  const tagg_fs_perf_t *fs = in->fs;
  if (!in->tiers || in->tiers->target < 0) return 0;
  double alone = in->read ? (fs ? fs->alone : 0) : in->tiers->tier[in->tiers->target].bandwidth;
  if (!measured_together(in)) return !in->read && in->serial_writes && alone > 0 ? alone : 0;
  double together = node_rate(fs);
  if (!(alone > 0 && together < 1.05 * alone)) return 0;
  /* A reader alone was measured as the node's readers together were (the same
   * file and requests, caches dropped): its rate is what it gets. A writer
   * alone was measured apart (the target tier's sequential rate), which the
   * aggregators did not reach (below). */
  if (in->read) return alone;
  return together < alone ? together : alone;
}

/* The least time the target takes for `total` bytes, whoever accesses them:
 * the target tier's bandwidth (tagg-calibrate: one process writing
 * sequentially). Reads measured by the calibration ('read_request' lines, and
 * 'read_alone') are not bounded by a write's rate: their floor is the best
 * rate a node was measured to read at (its ranks together, or one alone) on
 * every node (until session 25 the write rate bounded reads too: on local
 * disk, 219 MB/s for reads measured at 576-639, every read sent direct as a
 * tie). */
static double target_floor(const tagg_call_in_t *in, uint64_t total) {
  double bw = in->tiers->tier[in->tiers->target].bandwidth;
  if (in->read && in->fs && in->fs->read && in->fs->n > 0 && in->topo) {
    double node = node_rate(in->fs) > in->fs->alone ? node_rate(in->fs) : in->fs->alone;
    int nn = tagg_topology_nnodes(in->topo);
    bw = node * (nn > 0 ? nn : 1);
  }
  return bw > 0 ? (double)total / bw : 0;
}

/* Direct access: rank r's runs as file-system requests, one after the other;
 * a read of a layout that reads whole units (read_unit: the subfile layout's
 * checked stripes), each unit the rank's range touches read whole, once. The
 * range stands for the units the runs touch (exact for dense runs, an upper
 * bound for sparse ones): no allocation, every rank prices every row alike. */
/* How many u-byte units [lo, hi) touches (hi > lo). */
static uint64_t units_touched(uint64_t lo, uint64_t hi, uint64_t u) { return (hi - 1) / u - lo / u + 1; }

static uint64_t direct_units(const tagg_call_in_t *in, const tagg_req_desc_t *q) {
  uint64_t u = in->read_unit;
  return in->read && u && q->hi > q->lo ? units_touched(q->lo, q->hi, u) : 0;
}

/* ... as requests: the units inside one group (read_group) are one request. */
static double rank_direct_time(const tagg_call_in_t *in, const tagg_req_desc_t *q) {
  uint64_t n = q->nruns ? q->nruns : 1, units = direct_units(in, q);
  if (units) {
    uint64_t g = in->read_group > in->read_unit ? in->read_group : in->read_unit;
    uint64_t groups = units_touched(q->lo, q->hi, g);
    groups = groups < units ? groups : units;
    return (double)groups * tagg_fs_request_time(in->fs, in->tiers, units * in->read_unit / groups);
  }
  return (double)n * tagg_fs_request_time(in->fs, in->tiers, q->bytes / n);
}

/* Direct writes into one file through a client that serialises them
 * (serial_writes, no measurement of writers together): a node's ranks take
 * turns, so a node takes the sum of its ranks' times. Estimated as the
 * ranks' total spread evenly over the nodes (exact when the nodes carry
 * equal shares; no allocation before the decision, so every rank decides),
 * and never below the longest rank's own time. */
static double serial_direct_time(const tagg_call_in_t *in, double worst_rank, int as_if) {
  int nn = tagg_topology_nnodes(in->topo);
  double sum = 0;
  for (int r = 0; r < in->nranks; r++) {
    const tagg_req_desc_t *q = &in->req[r];
    if (priced(q, as_if)) sum += rank_direct_time(in, q);
  }
  sum /= nn > 0 ? nn : 1;
  return sum > worst_rank ? sum : worst_rank;
}

/* as_if: the done rows count as any other and the plan stops at the decision
 * (no election): what the call would have been without speculation. */
static int plan_call(const tagg_call_in_t *in, tagg_call_plan_t *c, tagg_err_t *err, int as_if);

int tagg_call_plan(const tagg_call_in_t *in, tagg_call_plan_t *c, tagg_err_t *err) {
  return plan_call(in, c, err, 0);
}

static int plan_call(const tagg_call_in_t *in, tagg_call_plan_t *c, tagg_err_t *err, int as_if) {
  memset(c, 0, sizeof *c);
  c->failed_rank = -1;
  c->bufsize = in ? in->bufsize : 0;
  if (!in || !in->req || !in->tiers || !in->opts || in->nranks < 1 || in->bufsize == 0 || in->nbuf < 1)
    return tagg_seterr(err, TAGG_EINVAL, "call plan: missing input");
  int P = in->nranks, overlap = 0, raw = 0, done = 0;
  uint64_t lo = UINT64_MAX, hi = 0, total = 0, direct_total = 0; /* bytes the file system serves: asked, or whole units */
  double worst_runs = 0, worst_move = 0;
  const tagg_tier_t *src = &in->tiers->tier[in->tiers->source];
  for (int r = 0; r < P; r++) {
    const tagg_req_desc_t *q = &in->req[r];
    if (q->flags & TAGG_REQ_FAILED) {
      c->action = TAGG_CALL_FAILED, c->failed_rank = r, c->why = "a rank failed";
      return TAGG_OK;
    }
    if (q->lo == UINT64_MAX || !q->bytes) continue;
    if (!priced(q, as_if)) { done++; continue; } /* accessed before the gather: left out */
    lo = q->lo < lo ? q->lo : lo, hi = q->hi > hi ? q->hi : hi, total += q->bytes;
    overlap |= (q->flags & TAGG_REQ_OVERLAP) != 0, raw |= (q->flags & TAGG_REQ_RAW) != 0;
    /* direct: this rank's runs as file-system requests, one after the other */
    uint64_t n = q->nruns ? q->nruns : 1;
    double t = rank_direct_time(in, q);
    uint64_t units = direct_units(in, q);
    direct_total += units ? units * in->read_unit : q->bytes;
    worst_runs = t > worst_runs ? t : worst_runs;
    /* aggregated: the same runs as one-sided transfers into the aggregation tier */
    double m = (double)n * src->latency + (double)q->bytes / src->bandwidth;
    worst_move = m > worst_move ? m : worst_move;
  }
  c->done = done;
  if (!total && done) {
    /* The guess is judged as the call would have been planned: a shape whose
     * call would now aggregate (another file system, layout or decomposition
     * of the other ranks) is forgotten, one that would go direct by cost is
     * kept (tagg_spec_learn), one forced direct (aggregate=never) neither. */
    tagg_call_plan_t as;
    tagg_err_t as_err; /* no verdict (without a machine description): the call itself is done */
    if (plan_call(in, &as, &as_err, 1) == TAGG_OK) {
      c->spec_verdict = as.action == TAGG_CALL_AGGREGATE ? TAGG_SPEC_AGGREGATE : as.by_cost ? TAGG_SPEC_DIRECT : 0;
      c->cost_direct = as.cost_direct, c->cost_aggr = as.cost_aggr;
    }
    c->action = TAGG_CALL_DIRECT, c->all_done = 1, c->why = "accessed before the plan (speculative)";
    return TAGG_OK;
  }
  if (!total) { c->action = TAGG_CALL_NOTHING, c->why = "nothing to move"; return TAGG_OK; }
  if (overlap) { c->action = TAGG_CALL_DIRECT, c->why = "a rank's own runs overlap"; return TAGG_OK; }
  if (!raw) { c->action = TAGG_CALL_DIRECT, c->why = "file metadata only"; return TAGG_OK; }
  uint64_t unit = in->unit ? in->unit : 1;
  c->lo = lo / unit * unit, c->hi = hi;
  int owned = in->owner && in->owner(in->owner_ctx, c->lo, 0) >= 0;

  /* partition: #Aggr and the file domains */
  uint64_t span = hi - c->lo;
  int naggr = owned ? (int)((span + unit - 1) / unit) : in->naggr > 0 ? in->naggr : tagg_naggr(total, P, in->opts, NULL);
  if (!owned) naggr = naggr < 1 ? 1 : naggr > P ? P : naggr;
  /* One aggregator per node for accesses of one file (the shared layout, or
   * a single subfile) when the ranks of a node accessing
   * one file together get no more than one process alone (a client that
   * serialises a file's writes, as FUSE does: measured by the calibration, or
   * known from the file system's kind, in->serial_writes; reads: measured
   * only): a second aggregator then adds its exchange and the throttle's
   * token, not bandwidth (GlusterFS testbed, 256 MiB of column blocks: 231
   * MiB/s with one aggregator, 214 with two; session 19: 229 against 162;
   * local disk of this machine, reads of files up to 16 MiB: one reader
   * 14-27 % faster than two, session 25). */
  double lone = 0; /* > 0: one aggregator per node, which moves at this rate, not one share of it */
  if (!owned && in->one_file && in->naggr <= 0 && in->per_node < 0 && in->topo && (lone = lone_stream_rate(in)) > 0) {
    int nn = tagg_topology_nnodes(in->topo);
    if (nn >= 1 && naggr > nn) naggr = nn;
    if (naggr > nn) lone = 0;
  }
  tagg_partition_range(span, naggr, unit, in->unit_fine, &c->dsize, &c->ndom);
  uint64_t dlo = in->dio_block ? lo / in->dio_block * in->dio_block : lo, fit = (uint64_t)in->nbuf * in->bufsize;
  if (dlo < lo && (hi - lo + unit - 1) / unit * unit <= fit && (hi - dlo + unit - 1) / unit * unit > fit)
    dlo = lo; /* one round of the data against several */
  if (!owned && c->ndom == 1 && dlo > c->lo) {
    /* one domain: no boundary between aggregators to align, so it starts where
     * the data does (HDF5's data after its 2 KiB header then fits buffers of
     * the data's size in one round), or at the data's first whole block when
     * the aggregator moves whole blocks directly (each round would otherwise
     * have a buffered head and tail, and go through dio.c's aligned copy),
     * unless that costs the single round the data alone would fit */
    c->lo = dlo, span = hi - dlo;
    tagg_partition_range(span, 1, unit, in->unit_fine, &c->dsize, &c->ndom);
  }
  /* rounds: one slot of nbuf buffers when a domain (or the data) fits them
   * all (no pipeline, one synchronisation). An aggregator holds at most a
   * whole domain, and a single domain no more than the data: its size is
   * rounded up to the unit (a 4 MiB stripe of layout=subfiles), its rounds
   * and requests are not. Until session 26 the 137 KiB of a small 1D write
   * were priced as one 4 MiB request in a subfiled file (1 MiB in a shared
   * one), which sent the subfiled file's write direct where the shared
   * file's aggregated, and with smaller buffers the loop ran rounds past the
   * data's end, each with its synchronisation. */
  uint64_t ext = c->ndom == 1 && hi - c->lo < c->dsize ? hi - c->lo : c->dsize;
  c->round = c->dsize <= fit ? c->dsize : ext <= fit ? ext : in->bufsize;
  c->nrounds = (int)((ext + c->round - 1) / c->round);

  /* aggregate or not (GLEAN, seed 003): the model's cost of each choice */
  uint64_t req = c->round < ext ? c->round : ext;
  double sync = in->sync_cost > 0 ? in->sync_cost : 50e-6 * (1 + log2((double)P));
  double t_fs = target_floor(in, total);
  if (!in->read && in->one_file && in->serial_writes && !measured_together(in) && in->topo)
    worst_runs = serial_direct_time(in, worst_runs, as_if); /* a guess judged: its done rows too */
  double t_fs_direct = direct_total > total ? target_floor(in, direct_total) : t_fs; /* ranks sharing a unit each read it */
  c->cost_direct = worst_runs > t_fs_direct ? worst_runs : t_fs_direct;
  double per_req = tagg_fs_request_time(in->fs, in->tiers, req);
  if (lone > 0 && measured_together(in)) {
    /* The request lines' rate is each of fs->ranks streams' share; the lone
     * stream gets the node's rate (lone_stream_rate): not one process's rate
     * measured apart, which the calibration takes differently (sequential, no
     * neighbour) and which the GlusterFS testbed's aggregator did not reach
     * (HACC, S3D: 221-240 MiB/s against 298 measured alone, 253-257 for the
     * two ranks writing their own runs). */
    double shared = in->fs->bandwidth[in->fs->n - 1];
    per_req += (double)req / lone - (double)req / shared;
    if (per_req < (double)req / lone) per_req = (double)req / lone;
  }
  double file_aggr = (double)c->nrounds * per_req;
  c->cost_aggr = (file_aggr > t_fs ? file_aggr : t_fs) + worst_move + (double)(c->nrounds + 1) * sync;
  if (!owned) {
    if (in->mode == TAGG_AGGREGATE_NEVER) { c->action = TAGG_CALL_DIRECT, c->why = "aggregate=never"; return TAGG_OK; }
    /* Aggregation must win by more than the model's error: within
     * TAGG_AGGR_MIN_GAIN of direct access the two are a tie, and a tie goes
     * to direct access (no exchange, no synchronisation). */
    if (in->mode == TAGG_AGGREGATE_AUTO && in->naggr <= 0 && !(c->cost_aggr < (1 - TAGG_AGGR_MIN_GAIN) * c->cost_direct)) {
      c->action = TAGG_CALL_DIRECT, c->why = "direct access costs less", c->by_cost = 1;
      return TAGG_OK;
    }
  }
  if (!in->topo) return tagg_seterr(err, TAGG_EINVAL, "call plan: aggregation needs the machine description");
  c->action = TAGG_CALL_AGGREGATE;
  if (as_if) return TAGG_OK; /* the decision is all that is asked: no election */
  c->why = owned ? "node-local stripes" : in->mode == TAGG_AGGREGATE_ALWAYS || in->naggr > 0 ? "forced" : "aggregation costs less";

  /* stepwise aggregation and throttling: configured, or the model's rules */
  int tier0 = in->node_tier ? in->node_tier[0] : in->tiers->source;
  c->per_node = in->per_node >= 0 ? in->per_node : tagg_aggr_per_node(c->ndom, tagg_topology_nnodes(in->topo));
  /* Throttling (seed 001) mitigates the contention of writers at the file
   * system; readers take no write locks and a file system serves concurrent
   * reads better than one stream at a time (GlusterFS, column blocks: 416
   * MiB/s one aggregator at a time, 579 all at once, model/README.md), so by
   * default reads are not throttled. A configured throttle limits both. */
  c->throttle = in->throttle >= 0 ? in->throttle
              : in->read        ? 0
                                : tagg_throttle(in->topo, in->tiers, tier0, c->ndom);
  if (c->throttle >= c->ndom) c->throttle = 0; /* no aggregator would ever wait */
  c->exact = 1;
  for (int r = 0; r < P; r++)
    if (has_runs(&in->req[r]) && !in->req[r].count) c->exact = 0;

  prodlist_t pl = {0};
  c->aggr = malloc((size_t)c->ndom * sizeof *c->aggr);
  int rc = c->aggr && prodlist_build(in, c, &pl) == 0 ? TAGG_OK : tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  if (!rc) rc = elect(in, c, &pl, err);
  prodlist_free(&pl);
  if (rc) { /* the decision stands (every rank made it, with its domain count and throttle); only this rank's plan failed */
    int exact = c->exact, ndom = c->ndom, throttle = c->throttle, per_node = c->per_node, done = c->done;
    uint64_t bufsize = c->bufsize;
    tagg_call_plan_free(c);
    c->action = TAGG_CALL_AGGREGATE, c->why = "failed", c->exact = exact;
    c->ndom = ndom, c->throttle = throttle, c->per_node = per_node, c->bufsize = bufsize, c->done = done;
  }
  return rc;
}

/* ---- coverage from the rows ---------------------------------------------- */

typedef struct {
  uint64_t *v;
  size_t n, cap;
  int oom;
} pairs_t;

static void push_pair(void *ctx, uint64_t off, uint64_t len) {
  pairs_t *p = ctx;
  if (p->oom) return;
  if (p->n == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 64;
    uint64_t *v = realloc(p->v, cap * 2 * sizeof *v);
    if (!v) { p->oom = 1; return; }
    p->v = v, p->cap = cap;
  }
  p->v[2 * p->n] = off, p->v[2 * p->n + 1] = len, p->n++;
}

static int cmp_pair(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

int tagg_call_coverage(const tagg_call_in_t *in, const tagg_call_plan_t *c, int d, uint64_t **cov, size_t *ncov,
                       tagg_err_t *err) {
  *cov = NULL, *ncov = 0;
  if (!c->exact || d < 0 || d >= c->ndom) return tagg_seterr(err, TAGG_EINVAL, "coverage: not computable from the rows");
  uint64_t dlo = c->lo + (uint64_t)d * c->dsize, dhi = dlo + c->dsize;
  pairs_t p = {0};
  for (int r = 0; r < in->nranks; r++)
    if (has_runs(&in->req[r])) tagg_req_runs(&in->req[r], dlo, dhi, push_pair, &p);
  if (p.oom) { free(p.v); return tagg_seterr(err, TAGG_ENOMEM, "out of memory"); }
  /* every rank's runs are in file order: usually already sorted when producers do not interleave */
  int sorted = 1;
  for (size_t i = 1; i < p.n && sorted; i++) sorted = p.v[2 * i] >= p.v[2 * (i - 1)];
  if (!sorted) qsort(p.v, p.n, 2 * sizeof *p.v, cmp_pair);
  size_t m = 0;
  for (size_t i = 0; i < p.n; i++) { /* merge overlapping and adjacent runs */
    if (m && p.v[2 * (m - 1)] + p.v[2 * (m - 1) + 1] >= p.v[2 * i]) {
      uint64_t end = p.v[2 * i] + p.v[2 * i + 1];
      if (end > p.v[2 * (m - 1)] + p.v[2 * (m - 1) + 1]) p.v[2 * (m - 1) + 1] = end - p.v[2 * (m - 1)];
    } else {
      p.v[2 * m] = p.v[2 * i], p.v[2 * m + 1] = p.v[2 * i + 1], m++;
    }
  }
  *cov = p.v, *ncov = m;
  return TAGG_OK;
}

size_t tagg_call_plan_scratch_bytes(int nranks, int ndom, int span) {
  size_t P = (size_t)nranks, D = (size_t)ndom;
  return P * sizeof(tagg_req_desc_t)                       /* gathered rows */
         + (P * (size_t)span) * sizeof(tagg_producer_t)    /* producer lists */
         + (D + 1) * sizeof(size_t) * 2                    /* CSR index and fill */
         + D * sizeof(int)                                 /* aggregators */
         + P * (1 + sizeof(int))                           /* election: taken, first ranks */
         + (P + D) * (sizeof(tagg_producer_t) + 4 * sizeof(uint64_t)); /* one group summary at a time (bound) */
}
