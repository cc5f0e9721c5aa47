/* plan.c - the whole plan: #Aggr (naggr.c), file domains (partition.c), then
 * one strategy choice per group, costed with tagg_candidate_cost_summary()
 * (cost.c) - the same function an MPI rank calls for its own candidacy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "tagg/model.h"

void tagg_plan_free(tagg_plan_t *plan) {
  if (!plan) return;
  tagg_partition_free(&plan->part);
  free(plan->groups);
  memset(plan, 0, sizeof *plan);
}

static int first_ranks(const tagg_topology_t *topo, int **out, int *n, tagg_err_t *err) {
  unsigned char *mark = calloc((size_t)topo->nnodes, 1);
  int *fr = malloc((size_t)topo->nnodes * sizeof(int));
  if (!mark || !fr) { free(mark); free(fr); return tagg_seterr(err, TAGG_ENOMEM, "out of memory"); }
  int k = 0;
  for (int r = 0; r < topo->nranks; r++) {
    int nd = topo->rank_node[r];
    if (!mark[nd]) { mark[nd] = 1; fr[k++] = r; }
  }
  free(mark);
  *out = fr;
  *n = k;
  return TAGG_OK;
}

int tagg_plan(const tagg_topology_t *topo, const tagg_tiers_t *tiers, const uint64_t *bytes,
              const tagg_model_opts_t *opts, tagg_plan_t *plan, tagg_err_t *err) {
  memset(plan, 0, sizeof *plan);
  if (!topo || !tiers || !bytes || !opts) return tagg_seterr(err, TAGG_EINVAL, "plan: NULL argument");
  int rc = tagg_tiers_validate(tiers, err);
  if (rc) return rc;
  const char *sname = opts->strategy ? opts->strategy : "memory-aware";
  const tagg_strategy_t *strat = tagg_strategy_find(sname);
  if (!strat) {
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; tagg_strategies[i] && used < sizeof list; i++)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", tagg_strategies[i]->name);
    return tagg_seterr(err, TAGG_EINVAL, "unknown strategy '%s' (valid: %s)", sname, list);
  }
  if (opts->aggr_tier >= tiers->ntiers || opts->aggr_tier == tiers->target)
    return tagg_seterr(err, TAGG_EINVAL, "aggregation tier index %d is not an aggregation tier", opts->aggr_tier);
  int nranks = topo->nranks;
  uint64_t d = 0;
  for (int r = 0; r < nranks; r++) d += bytes[r];
  plan->d_tot = d;
  plan->form = opts->form;
  snprintf(plan->strategy, sizeof plan->strategy, "%s", strat->name);
  int naggr = tagg_naggr(d, nranks, opts, &plan->naggr_flags);
  if ((rc = tagg_partition(bytes, nranks, naggr, opts->fs_block, &plan->part, err))) return rc;
  plan->naggr = plan->part.ngroups;
  plan->groups = calloc((size_t)plan->naggr, sizeof *plan->groups);
  int *fr = NULL, nfr = 0;
  if (!plan->groups) { rc = tagg_seterr(err, TAGG_ENOMEM, "out of memory"); goto fail; }
  if ((rc = first_ranks(topo, &fr, &nfr, err))) goto fail;
  uint64_t rng = opts->seed;
  for (int g = 0; g < plan->naggr; g++) {
    const tagg_producer_t *prod = plan->part.prod + plan->part.first[g];
    size_t np = plan->part.first[g + 1] - plan->part.first[g];
    tagg_group_summary_t sum;
    if ((rc = tagg_group_summary_build(topo, prod, np, &sum, err))) goto fail;
    tagg_strategy_ctx_t ctx = {topo, tiers, opts, g, prod, np, &sum, &rng, fr, nfr};
    tagg_group_plan_t *gp = &plan->groups[g];
    rc = strat->choose(&ctx, &gp->aggr_rank, &gp->tier, err);
    if (!rc) rc = tagg_candidate_cost_summary(topo, tiers, &sum, gp->aggr_rank, gp->tier, opts, &gp->cost, err);
    tagg_group_summary_free(&sum);
    if (rc) goto fail;
    if (!gp->cost.eligible) {
      const tagg_tier_t *t = &tiers->tier[gp->tier];
      rc = tagg_seterr(err, TAGG_ENOCAND,
                       "group %d: tier %s cannot aggregate (capacity %llu B, needs %llu B; persistency %s, needs %s)",
                       g, t->name, (unsigned long long)t->capacity, (unsigned long long)gp->cost.need,
                       tagg_persist_name(t->persistency), tagg_persist_name(opts->persistency));
      goto fail;
    }
    gp->offset = plan->part.offset[g];
    gp->length = plan->part.length[g];
    gp->nprod = (int)np;
    gp->aggr_node = topo->rank_node[gp->aggr_rank];
    if (gp->cost.total > plan->worst_total) plan->worst_total = gp->cost.total;
  }
  free(fr);
  return TAGG_OK;
fail:
  free(fr);
  tagg_plan_free(plan);
  return rc;
}

static int cmp_cand(const void *a, const void *b) {
  const tagg_candidate_t *x = a, *y = b;
  if (x->cost.total != y->cost.total) {
    if (isinf(x->cost.total)) return 1;
    if (isinf(y->cost.total)) return -1;
    return x->cost.total < y->cost.total ? -1 : 1;
  }
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return (x->tier > y->tier) - (x->tier < y->tier);
}

int tagg_plan_candidates(const tagg_topology_t *topo, const tagg_tiers_t *tiers, const tagg_plan_t *plan, int g,
                         const tagg_model_opts_t *opts, tagg_candidate_t **out, size_t *n, tagg_err_t *err) {
  *out = NULL;
  *n = 0;
  if (g < 0 || g >= plan->naggr) return tagg_seterr(err, TAGG_EINVAL, "group %d outside 0..%d", g, plan->naggr - 1);
  const tagg_producer_t *prod = plan->part.prod + plan->part.first[g];
  size_t np = plan->part.first[g + 1] - plan->part.first[g];
  tagg_group_summary_t sum;
  int rc = tagg_group_summary_build(topo, prod, np, &sum, err);
  if (rc) return rc;
  tagg_candidate_t *c = malloc(np * (size_t)tiers->ntiers * sizeof *c);
  if (!c) { tagg_group_summary_free(&sum); return tagg_seterr(err, TAGG_ENOMEM, "out of memory"); }
  size_t k = 0;
  for (size_t i = 0; i < np && !rc; i++)
    for (int t = 0; t < tiers->ntiers && !rc; t++) {
      if (t == tiers->target) continue;
      c[k].rank = prod[i].rank;
      c[k].node = topo->rank_node[prod[i].rank];
      c[k].tier = t;
      rc = tagg_candidate_cost_summary(topo, tiers, &sum, prod[i].rank, t, opts, &c[k].cost, err);
      k++;
    }
  tagg_group_summary_free(&sum);
  if (rc) { free(c); return rc; }
  qsort(c, k, sizeof *c, cmp_cand);
  *out = c;
  *n = k;
  return TAGG_OK;
}
