/* The tier registry and the collective memAlloc / memFree of tier.h. */
#include "tier.h"
#include "error.h"
#include "mpi_wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Model table order; the test tier last (only chosen by aggr_tier=test). */
const tagg_tier_ops_t *const tagg_tier_registry[] = {&tagg_tier_hbm, &tagg_tier_dram, &tagg_tier_nvr,
                                                     &tagg_tier_test, NULL};

const tagg_tier_ops_t *tagg_tier_find(const char *name)
{
    for (int i = 0; tagg_tier_registry[i]; i++)
        if (!strcasecmp(tagg_tier_registry[i]->name, name))
            return tagg_tier_registry[i];
    return NULL;
}

const tagg_tier_ops_t *tagg_tier_for_kind(tagg_tier_kind_t kind)
{
    for (int i = 0; tagg_tier_registry[i]; i++)
        if (tagg_tier_registry[i]->kind == kind && tagg_tier_registry[i] != &tagg_tier_test)
            return tagg_tier_registry[i];
    return NULL;
}

int tagg_tier_alloc(const tagg_tier_ops_t *ops, const tagg_config_t *cfg, MPI_Comm comm, size_t size,
                    tagg_tier_buf_t *b, int *local_enospc)
{
    int enospc = 0, rc, code;
    memset(b, 0, sizeof *b);
    b->ops = ops;
    b->win = MPI_WIN_NULL;
    b->size = size;
    MPI_Comm_rank(comm, &b->rank);
    *local_enospc = 0;
    rc = ops->mem_alloc(b, cfg, size, &enospc);
    /* in[0]: someone failed; in[1]: someone brought its own memory */
    int in[2] = {rc < 0, rc == 0 && b->base != NULL}, out[2];
    code = tagg_mpi_allreduce(in, out, 2, MPI_INT, MPI_MAX, comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (memAlloc agreement)", code);
        out[0] = 1;
    }
    if (out[0]) {
        if (rc == 0)
            ops->mem_free(b);
        else
            *local_enospc = enospc;
        if (!in[0])
            TAGG_ERR(TAGG_E_IO, "allocating the aggregation buffers (%zu bytes per rank) failed on another rank",
                     size);
        memset(b, 0, sizeof *b);
        b->win = MPI_WIN_NULL;
        return -1;
    }
    if (!out[1]) { /* every rank lets MPI allocate: one MPI_Win_allocate */
        code = MPI_Win_allocate((MPI_Aint)size, 1, MPI_INFO_NULL, comm, &b->base, &b->win);
        b->mpi_mem = 1;
        if (code != MPI_SUCCESS)
            TAGG_ERR_MPI("MPI_Win_allocate (aggregation buffers)", code);
    }
    else {
        rc = 0;
        if (!b->base) { /* a DRAM rank among ranks with their own memory */
            code = MPI_Alloc_mem((MPI_Aint)size, MPI_INFO_NULL, &b->base);
            if (code != MPI_SUCCESS) {
                TAGG_ERR_MPI("MPI_Alloc_mem (aggregation buffers)", code);
                b->base = NULL;
                rc      = -1;
            }
            b->mpi_mem = 1;
        }
        in[0] = rc < 0;
        if (tagg_mpi_allreduce(in, out, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS || out[0]) {
            if (!in[0])
                TAGG_ERR(TAGG_E_IO, "allocating the aggregation buffers failed on another rank");
            if (b->mpi_mem && b->base)
                MPI_Free_mem(b->base);
            else if (!b->mpi_mem)
                ops->mem_free(b);
            memset(b, 0, sizeof *b);
            b->win = MPI_WIN_NULL;
            return -1;
        }
        code = MPI_Win_create(b->base, (MPI_Aint)size, 1, MPI_INFO_NULL, comm, &b->win);
        if (code != MPI_SUCCESS)
            TAGG_ERR_MPI("MPI_Win_create (aggregation buffers)", code);
    }
    if (code != MPI_SUCCESS) { /* window creation is collective: MPI reports it on every rank */
        b->win = MPI_WIN_NULL;
        if (!out[1])
            b->base = NULL;
        tagg_tier_free(b);
        return -1;
    }
    return 0;
}

void tagg_tier_free(tagg_tier_buf_t *b)
{
    if (!b->ops)
        return;
    if (b->win != MPI_WIN_NULL) {
        /* MPI_Win_allocate memory goes with the window; MPI_Alloc_mem memory does not. */
        int own_mem = 0;
        int flag    = 0;
        int *model  = NULL;
        MPI_Win_get_attr(b->win, MPI_WIN_CREATE_FLAVOR, &model, &flag);
        own_mem = flag && *model == MPI_WIN_FLAVOR_CREATE;
        MPI_Win_free(&b->win);
        if (own_mem) {
            if (b->mpi_mem)
                MPI_Free_mem(b->base);
            else
                b->ops->mem_free(b);
        }
    }
    else if (b->base) {
        if (b->mpi_mem)
            MPI_Free_mem(b->base);
        else
            b->ops->mem_free(b);
    }
    memset(b, 0, sizeof *b);
    b->win = MPI_WIN_NULL;
}
