/* strat_topo_aware.c - poster 000_*.txt: min C1 + C2 over the group's nodes,
 * in a fixed aggregation tier (--tier, default the source tier, DRAM).
 * C1 is the max form of the poster or the sum form of MA-TAPIOCA Cost_A,
 * following opts->form. */
#include "strategy.h"

static int choose(const tagg_strategy_ctx_t *ctx, int *rank, int *tier, tagg_err_t *err) {
  return tagg_best_candidate(ctx, tagg_fixed_tier(ctx), rank, tier, err);
}

const tagg_strategy_t tagg_strategy_topo_aware = {
    .name = "topo-aware",
    .description = "poster: min C1 + C2 (producers -> aggregator -> I/O node) in a fixed tier",
    .choose = choose,
};
