/* What every tier implementation shares (tier.h): the one-sided transfers
 * through the window, and the slots of the tiers in ordinary memory. Below
 * the tier files; the registry and the collective memAlloc / memFree (tier.c)
 * sit above them. */
#include "error.h"
#include "tier.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

uint64_t tagg_tier_free_memory(void)
{
    FILE              *f = fopen("/proc/meminfo", "r");
    char               line[256];
    unsigned long long kb = 0;
    int                found = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
            found = 1;
            break;
        }
    if (f)
        fclose(f);
    if (found)
        return (uint64_t)kb * 1024;
    long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
}

int tagg_tier_rma_write(tagg_tier_buf_t *b, const void *src, size_t len, size_t off, int target)
{
    int code = MPI_Put(src, (int)len, MPI_BYTE, target, (MPI_Aint)off, (int)len, MPI_BYTE, b->win);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Put (memWrite)", code);
        return -1;
    }
    return 0;
}

int tagg_tier_rma_read(tagg_tier_buf_t *b, void *dst, size_t len, size_t off, int target)
{
    int code = MPI_Get(dst, (int)len, MPI_BYTE, target, (MPI_Aint)off, (int)len, MPI_BYTE, b->win);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Get (memRead)", code);
        return -1;
    }
    return 0;
}

int tagg_tier_rma_flush(tagg_tier_buf_t *b, int target)
{
    int code = MPI_Win_flush(target, b->win);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Win_flush (memFlush)", code);
        return -1;
    }
    return 0;
}

int tagg_tier_no_persist(tagg_tier_buf_t *b)
{
    (void)b;
    return 0;
}

int tagg_tier_always_available(const tagg_config_t *cfg, char *reason, size_t len)
{
    (void)cfg, (void)reason, (void)len;
    return 1;
}

uint64_t tagg_tier_memory_capacity(const tagg_config_t *cfg)
{
    (void)cfg;
    return tagg_tier_free_memory();
}


int tagg_tier_heap_alloc(tagg_tier_buf_t *b, const char *tier, size_t size, int *enospc)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, size ? size : 1) != 0) {
        *enospc = 1;
        TAGG_ERR(TAGG_E_NOMEM, "tier %s: cannot allocate %zu bytes of aggregation buffers", tier, size);
        return -1;
    }
    b->base = p;
    return 0;
}

void tagg_tier_heap_free(tagg_tier_buf_t *b)
{
    free(b->base);
    b->base = NULL;
}
