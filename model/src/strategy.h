/* strategy.h - helpers shared by the strategy files (not installed). */
#ifndef TAGG_STRATEGY_H
#define TAGG_STRATEGY_H
#include "tagg/model.h"

/* The tier used by strategies that do not choose one: opts->aggr_tier or the source tier. */
int tagg_fixed_tier(const tagg_strategy_ctx_t *ctx);
/* Minimum of total cost over (node, tier); tier_only >= 0 restricts the tier. */
int tagg_best_candidate(const tagg_strategy_ctx_t *ctx, int tier_only, int *rank, int *tier, tagg_err_t *err);
#endif
