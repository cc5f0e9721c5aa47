/* strat_random.c - comparison strategy: a producer of the group drawn at
 * random (splitmix64 seeded by opts->seed, so plans are reproducible). */
#include "strategy.h"
#include "tagg/pattern.h"

static int choose(const tagg_strategy_ctx_t *ctx, int *rank, int *tier, tagg_err_t *err) {
  (void)err;
  uint64_t x = tagg_rng_next(ctx->rng);
  *rank = ctx->prod[x % ctx->nprod].rank;
  *tier = tagg_fixed_tier(ctx);
  return TAGG_OK;
}

const tagg_strategy_t tagg_strategy_random = {
    .name = "random",
    .description = "a random producer of the group (seeded)",
    .choose = choose,
};
