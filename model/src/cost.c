/* cost.c - the cost of one aggregator candidate for one group.
 *
 * MA-TAPIOCA section 3.2 (002_*.txt), memory-aware placement:
 *   Cost_A = sum_{i in V_M, i != A} ( l x d(i,A) + omega(i,A) / B_{i->A} )
 *   Cost_T = l x d(A,T) + omega(A,T) / B_{A->T}
 *   MemAware(A) = min over eligible (node, tier) candidates of Cost_A + Cost_T
 * Poster 000_*.txt, topology-aware placement (max form):
 *   C1 = max_{i in V_C, i != A} ( l x d(i,A) + omega(i,A) / B_{i->A} )
 *   C2 = l x d(A,IO) + omega(A,IO) / B_{A->IO}
 *   TopoAware(A) = min (C1 + C2)
 *
 * Interpretation (see model/README.md, "Reading of the formulas"):
 *   l per hop is the network latency of the route; the aggregation tier's own
 *   latency l_A is paid once, when the aggregated buffer is drained towards T
 *   (the "one hop between memory banks" of the toy example); with this reading
 *   the HBM and DRAM columns of Table 2 are reproduced exactly (see tests).
 *   B_{i->A} = min(B_network, B_source, B_A), B_network only when d(i,A) > 0;
 *   B_{A->T} = min(B_network, B_A, B_T).  omega(A,T) is the group's total.
 *   Target latency l_T is common to every candidate and left out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "tagg/model.h"

void tagg_group_summary_free(tagg_group_summary_t *s) {
  if (!s) return;
  free(s->node);
  free(s->count);
  free(s->bytes);
  free(s->max1);
  free(s->max2);
  free(s->max1_rank);
  free(s->sorted);
  free(s->start);
  memset(s, 0, sizeof *s);
}

typedef struct { int node, rank; uint64_t bytes; } nrb_t;
static int cmp_nrb(const void *a, const void *b) {
  const nrb_t *x = a, *y = b;
  if (x->node != y->node) return x->node < y->node ? -1 : 1;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

int tagg_group_summary_build(const tagg_topology_t *topo, const tagg_producer_t *prod, size_t nprod,
                             tagg_group_summary_t *s, tagg_err_t *err) {
  memset(s, 0, sizeof *s);
  if (nprod == 0) return tagg_seterr(err, TAGG_EINVAL, "group has no producers");
  nrb_t *v = malloc(nprod * sizeof *v);
  if (!v) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  for (size_t i = 0; i < nprod; i++) {
    if (prod[i].rank < 0 || prod[i].rank >= topo->nranks) {
      free(v);
      return tagg_seterr(err, TAGG_EINVAL, "producer rank %d outside 0..%d", prod[i].rank, topo->nranks - 1);
    }
    v[i].node = topo->rank_node[prod[i].rank];
    v[i].rank = prod[i].rank;
    v[i].bytes = prod[i].bytes;
  }
  qsort(v, nprod, sizeof *v, cmp_nrb);
  size_t nn = 0;
  for (size_t i = 0; i < nprod; i++) if (i == 0 || v[i].node != v[i - 1].node) nn++;
  s->node = malloc(nn * sizeof(int));
  s->count = malloc(nn * sizeof(int));
  s->max1_rank = malloc(nn * sizeof(int));
  s->bytes = malloc(nn * sizeof(uint64_t));
  s->max1 = malloc(nn * sizeof(uint64_t));
  s->max2 = malloc(nn * sizeof(uint64_t));
  s->start = malloc((nn + 1) * sizeof(size_t));
  s->sorted = malloc(nprod * sizeof(tagg_producer_t));
  if (!s->node || !s->count || !s->max1_rank || !s->bytes || !s->max1 || !s->max2 || !s->start || !s->sorted) {
    free(v);
    tagg_group_summary_free(s);
    return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  }
  int k = -1;
  for (size_t i = 0; i < nprod; i++) {
    if (i == 0 || v[i].node != v[i - 1].node) {
      k++;
      s->node[k] = v[i].node;
      s->count[k] = 0;
      s->bytes[k] = s->max1[k] = s->max2[k] = 0;
      s->max1_rank[k] = v[i].rank;
      s->start[k] = i;
    }
    s->sorted[i].rank = v[i].rank;
    s->sorted[i].bytes = v[i].bytes;
    s->count[k]++;
    s->bytes[k] += v[i].bytes;
    s->total += v[i].bytes;
    if (v[i].bytes > s->max1[k] || s->count[k] == 1) {
      if (s->count[k] > 1) s->max2[k] = s->max1[k];
      s->max1[k] = v[i].bytes;
      s->max1_rank[k] = v[i].rank;
    } else if (v[i].bytes > s->max2[k]) {
      s->max2[k] = v[i].bytes;
    }
  }
  s->start[nn] = nprod;
  s->nnodes = (int)nn;
  s->nprod = nprod;
  free(v);
  return TAGG_OK;
}

/* Index of `node` in the summary (binary search), -1 if absent. */
static int find_node(const tagg_group_summary_t *s, int node) {
  int lo = 0, hi = s->nnodes - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (s->node[mid] == node) return mid;
    if (s->node[mid] < node) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}

/* omega of `rank` inside the group (0 if not a producer). */
static uint64_t own_bytes(const tagg_group_summary_t *s, int k, int rank) {
  if (k < 0) return 0;
  size_t lo = s->start[k], hi = s->start[k + 1];
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->sorted[mid].rank == rank) return s->sorted[mid].bytes;
    if (s->sorted[mid].rank < rank) lo = mid + 1; else hi = mid;
  }
  return 0;
}

void tagg_tier_check(const tagg_tier_t *tier, int is_target, uint64_t group_bytes, const tagg_model_opts_t *opts,
                     tagg_cost_t *c) {
  /* Capacity rule, MA-TAPIOCA section 3.2: persistent -> C_A >= sum of omega;
   * otherwise C_A >= N_buff x S_buff. */
  if (opts->persistency > TAGG_PERSIST_NONE) c->need = group_bytes;
  else c->need = (uint64_t)(opts->n_buff > 0 ? opts->n_buff : 1) * opts->s_buff;
  c->group_bytes = group_bytes;
  c->capacity_ok = tier->capacity >= c->need;
  c->persistency_ok = tier->persistency >= opts->persistency;
  c->eligible = c->capacity_ok && c->persistency_ok && !is_target;
}

static double dmin(double a, double b) { return a < b ? a : b; }

int tagg_candidate_cost_summary(const tagg_topology_t *topo, const tagg_tiers_t *tiers, const tagg_group_summary_t *s,
                                int cand_rank, int tier, const tagg_model_opts_t *opts, tagg_cost_t *out,
                                tagg_err_t *err) {
  memset(out, 0, sizeof *out);
  if (cand_rank < 0 || cand_rank >= topo->nranks)
    return tagg_seterr(err, TAGG_EINVAL, "candidate rank %d outside 0..%d", cand_rank, topo->nranks - 1);
  if (tier < 0 || tier >= tiers->ntiers) return tagg_seterr(err, TAGG_EINVAL, "tier index %d outside 0..%d", tier, tiers->ntiers - 1);
  const tagg_tier_t *ta = &tiers->tier[tier], *src = &tiers->tier[tiers->source], *tt = &tiers->tier[tiers->target];
  int na = topo->rank_node[cand_rank];
  tagg_tier_check(ta, tier == tiers->target, s->total, opts, out);
  int ka = find_node(s, na);
  uint64_t own = own_bytes(s, ka, cand_rank);
  double b_local = dmin(src->bandwidth, ta->bandwidth);
  double ca = 0;
  for (int k = 0; k < s->nnodes; k++) {
    int nk = s->node[k];
    double term;
    if (nk == na) {
      /* d = 0: same node, a copy from the source tier into tier A */
      if (opts->form == TAGG_FORM_SUM) term = (double)(s->bytes[k] - own) / b_local;
      else term = (double)(s->max1_rank[k] == cand_rank ? s->max2[k] : s->max1[k]) / b_local;
      if (s->count[k] == (own ? 1 : 0)) term = 0; /* nobody but A on this node */
    } else {
      int d = topo->ops->hops(topo, nk, na);
      double l = topo->ops->link_latency(topo, nk, na);
      double b = dmin(d > 0 ? topo->ops->link_bandwidth(topo, nk, na) : b_local, b_local);
      if (opts->form == TAGG_FORM_SUM) term = (double)s->count[k] * l * d + (double)s->bytes[k] / b;
      else term = l * d + (double)s->max1[k] / b;
    }
    if (opts->form == TAGG_FORM_SUM) ca += term;
    else if (term > ca) ca = term;
  }
  int gw = topo->gateway[na];
  int dio = topo->ops->hops(topo, na, gw) + topo->io_extra_hops;
  double lio = topo->ops->link_latency(topo, na, gw);
  double bio = dmin(ta->bandwidth, tt->bandwidth);
  if (dio > 0) bio = dmin(bio, topo->ops->link_bandwidth(topo, na, gw));
  out->hops_io = dio;
  out->cost_a = ca;
  out->cost_t = ta->latency + lio * dio + (double)s->total / bio;
  out->total = out->eligible ? out->cost_a + out->cost_t : INFINITY;
  return TAGG_OK;
}

int tagg_candidate_cost(const tagg_topology_t *topo, const tagg_tiers_t *tiers, const tagg_producer_t *prod,
                        size_t nprod, int cand_rank, int tier, const tagg_model_opts_t *opts, tagg_cost_t *out,
                        tagg_err_t *err) {
  tagg_group_summary_t s;
  int rc = tagg_group_summary_build(topo, prod, nprod, &s, err);
  if (rc) return rc;
  rc = tagg_candidate_cost_summary(topo, tiers, &s, cand_rank, tier, opts, out, err);
  tagg_group_summary_free(&s);
  return rc;
}
