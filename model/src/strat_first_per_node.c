/* strat_first_per_node.c - what ROMIO does by default (cb_nodes = one
 * aggregator per node, the node's first rank): aggregator list = lowest rank
 * of each node in rank order (ctx->first_ranks, computed once per plan);
 * file domain g goes to entry g mod list size.  The aggregator need not
 * produce data for its group. */
#include "strategy.h"

static int choose(const tagg_strategy_ctx_t *ctx, int *rank, int *tier, tagg_err_t *err) {
  (void)err;
  *rank = ctx->first_ranks[ctx->group % ctx->nfirst];
  *tier = tagg_fixed_tier(ctx);
  return TAGG_OK;
}

const tagg_strategy_t tagg_strategy_first_per_node = {
    .name = "first-per-node",
    .description = "ROMIO default: first rank of each node, domains dealt out in node order",
    .choose = choose,
};
