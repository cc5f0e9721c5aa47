/* compression= resolved for one open file (compression.h). */
#include "compression.h"
#include "sf_stripe_codec.h"

unsigned tagg_compression_codec(const tagg_config_t *cfg, uint64_t S)
{
    (void)S;
    switch (cfg->compression) {
    case TAGG_COMP_LZ4: return TAGG_SFZ_LZ4;
    case TAGG_COMP_ZSTD: return TAGG_SFZ_ZSTD;
    case TAGG_COMP_BLOSC_LZ4: return TAGG_SFZ_BLOSC_LZ4;
    case TAGG_COMP_BLOSC_ZSTD: return TAGG_SFZ_BLOSC_ZSTD;
    default: return 0;
    }
}
