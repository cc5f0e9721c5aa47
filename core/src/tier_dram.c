/* Tier DRAM: ordinary memory exposed through an MPI window. mem_alloc leaves
 * the allocation to MPI: MPI_Win_allocate when every rank uses DRAM (MPI may
 * then use shared memory between the ranks of a node), MPI_Alloc_mem + 
 * MPI_Win_create when other nodes use another tier (tier.c). */
#include "tier.h"

#include <stdlib.h>

static int mem_alloc(tagg_tier_buf_t *b, const tagg_config_t *cfg, size_t size, int *enospc)
{
    (void)cfg, (void)size, (void)enospc;
    b->base = NULL; /* MPI allocates */
    return 0;
}

static void mem_free(tagg_tier_buf_t *b)
{
    (void)b; /* MPI_Free_mem / MPI_Win_free (tier.c) */
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
    .mem_free    = mem_free,
    .write       = tagg_tier_rma_write,
    .read        = tagg_tier_rma_read,
    .flush       = tagg_tier_rma_flush,
    .persist     = tagg_tier_no_persist,
    .latency     = latency,
    .bandwidth   = bandwidth,
    .persistency = persistency,
};
