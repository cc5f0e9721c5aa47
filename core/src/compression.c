/* compression= resolved for one open file (compression.h). */
#include "compression.h"
#include "sf_stripe_codec.h"

#include <tagg/compress.h>
#include <tagg/tiers.h>

/* compression=auto: the cost model's choice (tagg/compress.h) from the
 * `tiers` file's codec and request lines (tagg-calibrate); without measured
 * codecs, none. */
static unsigned choose_auto(const tagg_config_t *cfg, uint64_t S)
{
    tagg_tiers_t      tiers;
    tagg_fs_perf_t    fs;
    tagg_codec_perf_t cp;
    tagg_err_t        e;
    if (!cfg->tiers || !*cfg->tiers)
        return 0;
    if (tagg_tiers_load(cfg->tiers, &tiers, &e) != TAGG_OK || tagg_fs_perf_load(cfg->tiers, &fs, &e) != TAGG_OK ||
        tagg_codec_perf_load(cfg->tiers, &cp, &e) != TAGG_OK)
        return 0; /* the engine reports a bad tiers file */
    int i = tagg_compress_choose(&cp, &fs, &tiers, S);
    return i < 0 ? 0 : tagg_sfz_id(cp.name[i]);
}

unsigned tagg_compression_codec(const tagg_config_t *cfg, uint64_t S)
{
    switch (cfg->compression) {
    case TAGG_COMP_LZ4: return TAGG_SFZ_LZ4;
    case TAGG_COMP_ZSTD: return TAGG_SFZ_ZSTD;
    case TAGG_COMP_BLOSC_LZ4: return TAGG_SFZ_BLOSC_LZ4;
    case TAGG_COMP_BLOSC_ZSTD: return TAGG_SFZ_BLOSC_ZSTD;
    case TAGG_COMP_AUTO: return choose_auto(cfg, S);
    default: return 0;
    }
}
