/* strat_shortest.c - greedy comparison strategy of the poster: the group's
 * node closest to its I/O node (fewest hops d(A, IO)); ties -> lower rank. */
#include "strategy.h"
#include "tagg/topology.h"

static int choose(const tagg_strategy_ctx_t *ctx, int *rank, int *tier, tagg_err_t *err) {
  (void)err;
  int best = -1, bd = 0;
  for (int k = 0; k < ctx->sum->nnodes; k++) {
    int d = tagg_topology_io_hops(ctx->topo, ctx->sum->node[k]);
    int r = ctx->sum->max1_rank[k];
    if (best < 0 || d < bd || (d == bd && r < best)) { best = r; bd = d; }
  }
  *rank = best;
  *tier = tagg_fixed_tier(ctx);
  return TAGG_OK;
}

const tagg_strategy_t tagg_strategy_shortest = {
    .name = "shortest",
    .description = "greedy: the group's node with the shortest path to its I/O node",
    .choose = choose,
};
