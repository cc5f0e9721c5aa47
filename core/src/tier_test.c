/* Tier TEST: ordinary memory that fails on demand, for the error paths
 * (aggr_tier=test; never chosen by the model). Switches, through the
 * test-build fault injection of fault.h:
 *   TAGG_FAULT="tier_alloc:rank=R"          memAlloc fails on rank R as if out of space
 *   TAGG_FAULT="tier_write:rank=R[:after=N]" the (N+1)-th memWrite of rank R fails
 *   TAGG_FAULT="tier_read:rank=R[:after=N]"  likewise for memRead */
#include "tier.h"
#include "error.h"
#include "fault.h"


static int mem_alloc(tagg_tier_buf_t *b, const tagg_config_t *cfg, size_t size, int *enospc)
{
    (void)cfg;
    if (tagg_fault("tier_alloc", b->rank)) {
        *enospc = 1;
        TAGG_ERR(TAGG_E_IO, "tier TEST: no space left for %zu bytes (injected by TAGG_FAULT)", size);
        return -1;
    }
    return tagg_tier_heap_alloc(b, "TEST", size, enospc);
}

static int write_(tagg_tier_buf_t *b, const void *src, size_t len, size_t off, int target)
{
    if (tagg_fault("tier_write", b->rank)) {
        TAGG_ERR(TAGG_E_IO, "tier TEST: memWrite of %zu bytes to rank %d failed (injected by TAGG_FAULT)", len,
                 target);
        return -1;
    }
    return tagg_tier_rma_write(b, src, len, off, target);
}

static int read_(tagg_tier_buf_t *b, void *dst, size_t len, size_t off, int target)
{
    if (tagg_fault("tier_read", b->rank)) {
        TAGG_ERR(TAGG_E_IO, "tier TEST: memRead of %zu bytes from rank %d failed (injected by TAGG_FAULT)", len,
                 target);
        return -1;
    }
    return tagg_tier_rma_read(b, dst, len, off, target);
}

static double latency(void) { return 100e-9; }
static double bandwidth(void) { return 10e9; }
static tagg_persist_t persistency(void) { return TAGG_PERSIST_NONE; }

const tagg_tier_ops_t tagg_tier_test = {
    .name        = "TEST",
    .kind        = TAGG_TIER_DRAM,
    .available   = tagg_tier_always_available,
    .capacity    = tagg_tier_memory_capacity,
    .mem_alloc   = mem_alloc,
    .mem_free    = tagg_tier_heap_free,
    .write       = write_,
    .read        = read_,
    .flush       = tagg_tier_rma_flush,
    .persist     = tagg_tier_no_persist,
    .latency     = latency,
    .bandwidth   = bandwidth,
    .persistency = persistency,
};
