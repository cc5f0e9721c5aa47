/* Memory tiers: where a rank's aggregation buffers live (MA-TAPIOCA, seed 002,
 * section 3.1, Listing 1).
 *
 * One ops table per tier, one file each (tier_dram.c, tier_hbm.c, tier_nvr.c,
 * tier_test.c), and a NULL-terminated registry (tier.c). Listing 1 maps to:
 *
 *   memAlloc / memFree     tagg_tier_alloc / tagg_tier_free (collective over the
 *                          file's communicator): each rank gets `size` bytes in
 *                          its tier (ops->mem_alloc, local) and the bytes of
 *                          every rank are exposed in ONE MPI window, so any rank
 *                          can put into or get from any aggregator whatever tier
 *                          that aggregator's node uses;
 *   memWrite / memRead     ops->write / ops->read: one-sided put/get of bytes at
 *                          an offset of the buffer of rank `target`;
 *   memFlush               ops->flush: the operations this rank issued towards
 *                          `target` are complete there (MPI_Win_flush);
 *                          ops->persist additionally makes the local bytes
 *                          durable where the tier can (NVR: msync);
 *   memLatency, memBandwidth, memCapacity, memPersistency
 *                          ops->latency/bandwidth (the built-in vendor figures;
 *                          a tier file measured by tagg-calibrate replaces
 *                          them in the model), ops->capacity (what this node
 *                          really has left: free memory, memkind's report, free
 *                          space of the NVR directory), ops->persistency;
 *   (new)                  ops->available: whether the tier exists here, and
 *                          why not (HBM on a machine without it).
 *
 * The aggregator reads and writes its own buffer through the window's local
 * pointer (b->base) when it moves a round to or from the store: for NVR that
 * pointer is the mapped file. */
#ifndef TAGG_TIER_H
#define TAGG_TIER_H

#include "config.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <tagg/model.h>
#include <tagg/tiers.h>

typedef struct tagg_tier_ops tagg_tier_ops_t;

/* One rank's aggregation memory in one tier, and the window over all ranks. */
typedef struct tagg_tier_buf {
    const tagg_tier_ops_t *ops;
    char                  *base; /* size bytes, local */
    size_t                 size;
    MPI_Win                win;  /* every rank of the communicator, MPI_WIN_NULL when none */
    int                    rank; /* in the communicator */
    int                    mpi_mem; /* base came from MPI (MPI_Win_allocate / MPI_Alloc_mem) */
    void                  *priv;    /* the tier's own state */
} tagg_tier_buf_t;

struct tagg_tier_ops {
    const char      *name; /* "DRAM", "HBM", "NVR", "TEST" */
    tagg_tier_kind_t kind; /* which tier of the model's table it implements */
    /* 1 when usable on this node, else 0 with the reason in `reason`. */
    int (*available)(const tagg_config_t *cfg, char *reason, size_t len);
    /* Bytes this node has left in the tier (before the configuration's cap). */
    uint64_t (*capacity)(const tagg_config_t *cfg);
    /* Local part of memAlloc: sets b->base to size bytes, or leaves it NULL to
     * let MPI allocate window memory (DRAM). Returns 0, or -1 with an error
     * pushed and, in *enospc, 1 when the tier is out of space (the caller may
     * fall back to another tier). */
    int (*mem_alloc)(tagg_tier_buf_t *b, const tagg_config_t *cfg, size_t size, int *enospc);
    /* Local part of memFree (the window is already freed). */
    void (*mem_free)(tagg_tier_buf_t *b);
    /* memWrite / memRead: len bytes at offset off of rank target's buffer. */
    int (*write)(tagg_tier_buf_t *b, const void *src, size_t len, size_t off, int target);
    int (*read)(tagg_tier_buf_t *b, void *dst, size_t len, size_t off, int target);
    /* memFlush: this rank's writes/reads towards target are complete there. */
    int (*flush)(tagg_tier_buf_t *b, int target);
    /* The local bytes reach the tier's durable medium (no-op for memory). */
    int (*persist)(tagg_tier_buf_t *b);
    /* memLatency (seconds) and memBandwidth (bytes/s): built-in figures. */
    double (*latency)(void);
    double (*bandwidth)(void);
    /* memPersistency */
    tagg_persist_t (*persistency)(void);
};

extern const tagg_tier_ops_t tagg_tier_dram, tagg_tier_hbm, tagg_tier_nvr, tagg_tier_test;
extern const tagg_tier_ops_t *const tagg_tier_registry[]; /* NULL-terminated */

/* Lookup by name (case-insensitive: "dram", "HBM", ...) or by the model's kind. */
const tagg_tier_ops_t *tagg_tier_find(const char *name);
const tagg_tier_ops_t *tagg_tier_for_kind(tagg_tier_kind_t kind);

/* memAlloc, collective over comm: every rank passes its own tier (ranks of
 * different nodes may use different tiers). On success b holds the memory and
 * the window on every rank. On failure every rank returns -1 with nothing
 * allocated, an error pushed, and *local_enospc = 1 on the ranks whose tier was
 * out of space. */
int tagg_tier_alloc(const tagg_tier_ops_t *ops, const tagg_config_t *cfg, MPI_Comm comm, size_t size,
                    tagg_tier_buf_t *b, int *local_enospc);
/* memFree, collective. */
void tagg_tier_free(tagg_tier_buf_t *b);

/* Generic one-sided implementations every tier uses (the window hides the tier). */
int tagg_tier_rma_write(tagg_tier_buf_t *b, const void *src, size_t len, size_t off, int target);
int tagg_tier_rma_read(tagg_tier_buf_t *b, void *dst, size_t len, size_t off, int target);
int tagg_tier_rma_flush(tagg_tier_buf_t *b, int target);
int tagg_tier_no_persist(tagg_tier_buf_t *b);
/* Slots shared by the tiers in ordinary memory (DRAM, TEST): always available;
 * capacity = the node's available memory. */
int      tagg_tier_always_available(const tagg_config_t *cfg, char *reason, size_t len);
uint64_t tagg_tier_memory_capacity(const tagg_config_t *cfg);
/* Their buffers: page-aligned heap memory (failure: *enospc, the model's next
 * tier may do; the message names the tier). */
int  tagg_tier_heap_alloc(tagg_tier_buf_t *b, const char *tier, size_t size, int *enospc);
void tagg_tier_heap_free(tagg_tier_buf_t *b);

/* The node-local directory of the NVR tier: cfg->nvr_dir, else $TMPDIR, else
 * /tmp. Shared with the layers that keep data on the node-local SSD. */
const char *tagg_nvr_dir(const tagg_config_t *cfg);
/* Bytes the node can still give to memory (MemAvailable of /proc/meminfo, or
 * free pages from sysconf). */
uint64_t tagg_tier_free_memory(void);

/* ---- tier choice (tier_choice.c): pure, no MPI -------------------------- */

/* What one node offers, per entry of the model's tier table. */
typedef struct tagg_node_tiers {
    int      usable[TAGG_MAX_TIERS];   /* the tier has ops and is available here */
    uint64_t capacity[TAGG_MAX_TIERS]; /* bytes left, after the configuration's caps */
    int      ranks;                    /* ranks of the file on this node (each holds buffers) */
} tagg_node_tiers_t;

typedef struct tagg_tier_choice {
    int         tier;  /* index in the model's table, -1 when none fits */
    tagg_cost_t cost;  /* Cost_A + Cost_T of the choice (nominal group) */
    char        why[256]; /* when tier < 0: why each tier was left out */
} tagg_tier_choice_t;

/* Chooses the tier of one node's aggregation buffers with the cost model
 * (Cost_A + Cost_T under the capacity and persistency rules), skipping tiers
 * whose bit is set in `excluded`. The nominal group: every rank of the topology
 * puts n_buff x s_buff / nranks bytes into an aggregator on this node (rank
 * cand_rank); the capacity rule is applied to the node's footprint, `ranks` x
 * n_buff x s_buff (every rank of the file holds buffers), or to the data when
 * persistency is required. Returns 0 (choice->tier may be -1), or -1 with the
 * model's message in err. */
int tagg_tier_choose(const tagg_topology_t *topo, const tagg_tiers_t *tiers, const tagg_model_opts_t *opts,
                     const tagg_node_tiers_t *node, int cand_rank, unsigned excluded, tagg_tier_choice_t *choice,
                     tagg_err_t *err);

#endif
