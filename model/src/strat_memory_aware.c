/* strat_memory_aware.c - MA-TAPIOCA section 3.2: candidates are (node, tier)
 * pairs meeting the capacity and persistency rules; choose min Cost_A + Cost_T. */
#include "strategy.h"

static int choose(const tagg_strategy_ctx_t *ctx, int *rank, int *tier, tagg_err_t *err) {
  return tagg_best_candidate(ctx, -1, rank, tier, err);
}

const tagg_strategy_t tagg_strategy_memory_aware = {
    .name = "memory-aware",
    .description = "MA-TAPIOCA: min Cost_A + Cost_T over eligible (node, tier) pairs",
    .choose = choose,
};
