/* compression= of the configuration (issue 15) resolved for one open file:
 * the stripe codec id of sf_stripe_codec.h (0: none). auto asks the cost
 * model (tagg_compress_pays, model/) with the codec throughput and file
 * system bandwidth of the `tiers` file (tagg-calibrate). */
#ifndef TAGG_COMPRESSION_H
#define TAGG_COMPRESSION_H

#include "config.h"

#include <stdint.h>

/* The codec of whole-stripe writes for stripes of S bytes. Pure (no MPI):
 * the caller makes it identical on all ranks. */
unsigned tagg_compression_codec(const tagg_config_t *cfg, uint64_t S);

#endif
