/* Tier DRAM: ordinary memory exposed through an MPI window: page-aligned
 * memory from the C library, exposed by MPI_Win_create (engine_tier.c, tier.c).
 * Measured with MPICH 4.0.2 (ch4:ucx) on 2 ranks: MPI_Win_create on such memory
 * takes 0.1-5 ms where MPI_Win_allocate takes 16-56 ms (its shared-memory
 * segment) and MPI_Alloc_mem + MPI_Win_create 0.6-35 ms, and 1024 puts of 4 KiB
 * complete as fast or faster. */
#include "tier.h"


static int mem_alloc(tagg_tier_buf_t *b, const tagg_config_t *cfg, size_t size, int *enospc)
{
    (void)cfg;
    return tagg_tier_heap_alloc(b, "DRAM", size, enospc);
}

static double latency(void) { return 100e-9; }
static double bandwidth(void) { return 90e9; }
static tagg_persist_t persistency(void) { return TAGG_PERSIST_NONE; }

const tagg_tier_ops_t tagg_tier_dram = {
    .name        = "DRAM",
    .kind        = TAGG_TIER_DRAM,
    .available   = tagg_tier_always_available,
    .capacity    = tagg_tier_memory_capacity,
    .mem_alloc   = mem_alloc,
    .mem_free    = tagg_tier_heap_free,
    .write       = tagg_tier_rma_write,
    .read        = tagg_tier_rma_read,
    .flush       = tagg_tier_rma_flush,
    .persist     = tagg_tier_no_persist,
    .latency     = latency,
    .bandwidth   = bandwidth,
    .persistency = persistency,
};
