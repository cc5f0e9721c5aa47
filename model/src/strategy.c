/* strategy.c - registry of aggregator placement strategies (one per file,
 * IOR-style NULL-terminated table) and helpers they share. */
#include "strategy.h"
#include <math.h>
#include <string.h>
#include "internal.h"

const tagg_strategy_t *const tagg_strategies[] = {&tagg_strategy_memory_aware, &tagg_strategy_topo_aware,
                                                  &tagg_strategy_shortest,     &tagg_strategy_longest,
                                                  &tagg_strategy_first_per_node, &tagg_strategy_random,
                                                  NULL};

const tagg_strategy_t *tagg_strategy_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; tagg_strategies[i]; i++)
    if (tagg_strcaseeq(tagg_strategies[i]->name, name)) return tagg_strategies[i];
  return NULL;
}

int tagg_fixed_tier(const tagg_strategy_ctx_t *ctx) {
  return ctx->opts->aggr_tier >= 0 ? ctx->opts->aggr_tier : ctx->tiers->source;
}

/* Cheapest (rank, tier) over the group's nodes.  On each node the candidate
 * rank is the producer with the most data (it removes the largest term from
 * Cost_A / C1, so no other rank of that node can be cheaper); ties between
 * nodes go to the lower rank, then the lower tier, as an MPI MINLOC would. */
int tagg_best_candidate(const tagg_strategy_ctx_t *ctx, int tier_only, int *rank, int *tier, tagg_err_t *err) {
  double best = INFINITY;
  int br = -1, bt = -1;
  for (int k = 0; k < ctx->sum->nnodes; k++) {
    int r = ctx->sum->max1_rank[k];
    for (int t = 0; t < ctx->tiers->ntiers; t++) {
      if (t == ctx->tiers->target || (tier_only >= 0 && t != tier_only)) continue;
      tagg_cost_t c;
      int rc = tagg_candidate_cost_summary(ctx->topo, ctx->tiers, ctx->sum, r, t, ctx->opts, &c, err);
      if (rc) return rc;
      if (c.total < best || (c.total == best && isfinite(best) && (r < br || (r == br && t < bt)))) {
        best = c.total;
        br = r;
        bt = t;
      }
    }
  }
  if (br < 0) {
    tagg_cost_t c;
    tagg_tier_check(&ctx->tiers->tier[ctx->tiers->source], 0, ctx->sum->total, ctx->opts, &c);
    return tagg_seterr(err, TAGG_ENOCAND,
                       "group %d: no (node, tier) candidate meets the capacity rule (%llu B per aggregator) "
                       "and the persistency rule (%s)%s",
                       ctx->group, (unsigned long long)c.need, tagg_persist_name(ctx->opts->persistency),
                       tier_only >= 0 ? " in the fixed tier" : "");
  }
  *rank = br;
  *tier = bt;
  return TAGG_OK;
}
