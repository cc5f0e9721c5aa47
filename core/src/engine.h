/* The aggregation engine (backend "tapioca"): TAPIOCA's two-phase I/O with
 * aggregators placed by the cost model (model/), after Tessier et al. (seeds
 * 000, 002: MA-TAPIOCA Algorithm 1), with Tsujita's I/O throttling and
 * stepwise aggregation (seed 001).
 *
 * One collective request goes through three steps, each in one file:
 *   engine_plan.c   describe (ranges and byte counts, never data), partition the
 *                   touched range into file domains, elect one aggregator per
 *                   domain (every rank evaluates its own candidacy, MINLOC);
 *   engine_move.c   pipelined rounds: producers MPI_Put (write) or MPI_Get (read)
 *                   round k+1 while aggregators write or read round k;
 *   backend_tapioca.c  the backend ops table, the machine description and the
 *                   aggregation buffers, in the memory tier the model picks per
 *                   node (tier.h, engine_tier.c). */
#ifndef TAGG_ENGINE_H
#define TAGG_ENGINE_H

#include "io.h"
#include "tier.h"

#include <tagg/model.h>
#include <tagg/tiers.h>
#include <tagg/topology.h>

typedef struct tagg_engine_res tagg_engine_res_t; /* backend_tapioca.c */

/* Per-file engine state: the configuration part at open, the resources (topo,
 * win, base, borrowed from res) at the first collective call. */
typedef struct tagg_engine {
    tagg_engine_res_t *res;      /* machine description + window, maybe shared */
    tagg_topology_t  *topo;      /* ranks -> nodes, distances */
    tagg_tiers_t      tiers;     /* memory tiers of a node (model defaults) */
    tagg_model_opts_t opts;      /* N_buff, S_buff, BS, strategy ... */
    const tagg_strategy_t *strategy;
    int               cost_based; /* election by MINLOC over Cost_A + Cost_T */
    uint64_t          bufsize;   /* one round */
    int               nbuf;
    MPI_Win           win;       /* nbuf x bufsize bytes on every rank (buf.win) */
    char             *base;      /* this rank's part (buf.base) */
    tagg_tier_buf_t   buf;       /* the memory tier holding them (tier.h) */
    int               tier;      /* its index in `tiers` (cost of this rank's candidacy) */
    char              tier_text[96]; /* for the summary: "tier=DRAM ..." */
} tagg_engine_t;

/* One piece of a rank's request: part of one extent inside one round of one domain. */
typedef struct tagg_piece {
    uint64_t off, len;
    char    *mem;
    int      domain, round;
} tagg_piece_t;

/* The plan of one collective call. */
typedef struct tagg_call {
    uint64_t      lo, hi;    /* touched range, lo aligned down to unit */
    uint64_t      dsize;     /* file-domain size (multiple of unit) */
    int           ndom;      /* number of domains = aggregators */
    int          *aggr;      /* [ndom] aggregator rank of each domain */
    int           my_dom;    /* domain this rank aggregates, -1 when none */
    int           my_index;  /* its index among aggregators (throttling order) */
    int           throttle;  /* aggregators accessing the file system at once (0: all) */
    int           per_node;  /* aggregators one node may hold (0: no limit) */
    int           nrounds;   /* rounds of the longest domain */
    tagg_piece_t *pieces;    /* this rank's pieces, sorted by round */
    size_t        npieces;
    uint64_t     *cov;       /* aggregator: covered runs of its domain, (off, len) pairs, sorted, merged */
    size_t        ncov;
} tagg_call_t;

/* backend_tapioca.c. Collective: makes (or takes from the cache) the machine
 * description and the aggregation window, once per file; 0 or -1, agreed. */
int tagg_engine_ready(tagg_file_t *f, tagg_engine_t *e);
/* Keeps the library holding the engine mapped until the process exits (for
 * callbacks registered with MPI that run in MPI_Finalize). */
void tagg_engine_pin_library(void);

/* engine_plan.c. Local, once per file before any plan (at open): the MPI
 * objects of the describe reduction. 0 or -1 with an error pushed. */
int tagg_engine_plan_init(void);

/* engine_plan.c. Collective. Returns 0, 1 when the request is empty everywhere
 * (nothing to do), 2 when every rank should access its own extents directly
 * (a rank overlaps itself, the request is file metadata only, or every rank
 * asks for one run of at least a block and no aggregator count is set), or -1 with
 * an error pushed (every rank agrees). */
int  tagg_engine_plan(tagg_file_t *f, tagg_engine_t *e, const tagg_extents_t *x, tagg_call_t *c);
void tagg_engine_call_free(tagg_call_t *c);

/* engine_tier.c. Collective: chooses the tier of this node's buffers (forced
 * by aggr_tier, or the model's choice under capacity and persistency, falling
 * back to the next tier when a tier runs out of space) and allocates them.
 * Returns 0, or -1 on every rank with an error pushed. */
int tagg_engine_tier_setup(tagg_file_t *f, tagg_engine_t *e, MPI_Comm node);

/* engine_move.c. Collective. Returns 0 or -1 (local; the caller agrees). */
int tagg_engine_write(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c);
int tagg_engine_read(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c);

#endif
