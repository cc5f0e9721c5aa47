/* tagg/model.h - the aggregation cost model: how many aggregators, where, in
 * which memory tier.
 *
 * Sources: the poster 000_*.txt ("Number of aggregators", C1 + C2 placement,
 * greedy comparison strategies) and MA-TAPIOCA 002_*.txt section 3.2
 * (Cost_A + Cost_T over (node, tier) candidates with the capacity and
 * persistency rules).  Formulas and their interpretation: model/README.md.
 *
 * Every piece is a pure function so the engine can call it from MPI code:
 *   tagg_naggr()            number-of-aggregators rule
 *   tagg_partition()        contiguous file domains -> groups of producers
 *   tagg_candidate_cost()   cost of ONE candidate (rank, tier) for ONE group
 *   tagg_plan()             the whole plan (uses the three above) */
#ifndef TAGG_MODEL_H
#define TAGG_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tagg/error.h"
#include "tagg/tiers.h"
#include "tagg/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options ------------------------------------------------------------- */

typedef enum {
  TAGG_FORM_SUM = 0, /* MA-TAPIOCA Cost_A: sum over producers */
  TAGG_FORM_MAX = 1  /* poster C1: max over producers */
} tagg_cost_form_t;

typedef struct tagg_model_opts {
  int naggr;                  /* > 0: user override of the number of aggregators */
  int pow2;                   /* 1 (default): #Aggr is a power of two */
  uint64_t fs_block;          /* BS, file-system block (default 8 MiB, Lustre stripe) */
  uint64_t aggr_mem;          /* Mem per aggregator for #Aggr; 0: n_buff * s_buff */
  int n_buff;                 /* N_buff, aggregation buffers (default 2) */
  uint64_t s_buff;            /* S_buff, buffer size (default 16 MiB) */
  tagg_persist_t persistency; /* required persistency of aggregated data */
  tagg_cost_form_t form;      /* sum (default) or max */
  const char *strategy;       /* registry name, default "memory-aware" */
  int aggr_tier;              /* tier for strategies that do not choose one; -1: source tier */
  uint64_t seed;              /* for "random" */
} tagg_model_opts_t;

void tagg_model_opts_default(tagg_model_opts_t *o);

/* ---- number of aggregators ---------------------------------------------- */

enum { TAGG_NAGGR_USER = 1, TAGG_NAGGR_MEM_RELAXED = 2, TAGG_NAGGR_BLOCK_RELAXED = 4,
       TAGG_NAGGR_CLAMPED = 8 };

/* The poster's rule (its printed formula is garbled); its intent, implemented:
 *   lower bound  n_mem = ceil(D_tot / Mem)    every aggregator's share fits Mem
 *   upper bound  n_bs  = floor(D_tot / BS)    every aggregator writes >= 1 block
 *   #Aggr = n_mem rounded up to a power of two, unless that exceeds n_bs
 *   (rounded down), in which case the block bound wins (the aggregators then
 *   use several rounds of N_buff x S_buff, MA-TAPIOCA Algorithm 1); finally
 *   clamped to [1, nranks].  opts->naggr > 0 overrides (clamped to nranks).
 * Returns the count; *flags (may be NULL) gets TAGG_NAGGR_* bits. */
int tagg_naggr(uint64_t d_tot, int nranks, const tagg_model_opts_t *opts, unsigned *flags);

/* ---- stepwise aggregation and throttling (Tsujita et al., seed 001) -------- */

/* Aggregators one node may hold when #Aggr are spread over nnodes:
 * ceil(naggr / nnodes) (several per node only when there are more aggregators
 * than nodes). */
int tagg_aggr_per_node(int naggr, int nnodes);

/* How many of naggr aggregators may access the file system at once: enough
 * concurrent streams to reach the target tier's bandwidth when one stream is
 * limited by the slower of the aggregation tier (aggr_tier, -1: ignore) and
 * the network path to the gateway, ceil(B_target / B_stream), at least one
 * per gateway, at most naggr. */
int tagg_throttle(const tagg_topology_t *topo, const tagg_tiers_t *tiers, int aggr_tier, int naggr);

/* ---- partition ------------------------------------------------------------ */

/* One producer's contribution to a group: omega(i, A) of the seeds. */
typedef struct tagg_producer {
  int rank;
  uint64_t bytes;
} tagg_producer_t;

/* Ranks write in rank order into one contiguous range [0, D_tot) (rank r at
 * offset sum of bytes[0..r-1]).  The range is cut into naggr contiguous file
 * domains of nearly equal size, boundaries rounded to `align` when > 0; group g
 * gets every rank whose bytes intersect domain g (a rank may feed two groups). */
typedef struct tagg_partition {
  int ngroups;
  uint64_t *offset;        /* [ngroups] start of each file domain */
  uint64_t *length;        /* [ngroups] */
  size_t *first;           /* [ngroups + 1] CSR index into prod */
  tagg_producer_t *prod;   /* producers of group g: prod[first[g] .. first[g+1]-1] */
} tagg_partition_t;

int tagg_partition(const uint64_t *bytes, int nranks, int naggr, uint64_t align,
                   tagg_partition_t *out, tagg_err_t *err);
void tagg_partition_free(tagg_partition_t *p);

/* File domains of the engine: [0, span) cut into *ndom <= naggr equal domains of
 * *dsize bytes (the last may be shorter), a multiple of align; with fine > 0, of
 * a power-of-two fraction of align (a multiple of fine) where whole aligns would
 * leave a domain of at least one align more than a sixteenth above span / naggr
 * (partition.c). fine = 0: whole aligns always (a layout's stripes). */
void tagg_partition_range(uint64_t span, int naggr, uint64_t align, uint64_t fine, uint64_t *dsize, int *ndom);

/* ---- cost of one candidate ----------------------------------------------- */

typedef struct tagg_cost {
  double cost_a;      /* Cost_A (sum form) or C1 (max form), seconds */
  double cost_t;      /* Cost_T = C2, seconds */
  double total;       /* cost_a + cost_t; +inf when not eligible */
  uint64_t group_bytes;  /* sum of omega over the group */
  uint64_t need;         /* capacity needed (capacity rule) */
  int capacity_ok;
  int persistency_ok;
  int eligible;          /* capacity_ok && persistency_ok && tier is not the target */
  int hops_io;           /* d(A, IO) */
} tagg_cost_t;

/* Producers of a group summarised per node, so one candidate costs
 * O(nodes in the group) instead of O(producers). */
typedef struct tagg_group_summary {
  int nnodes;
  int *node;           /* [nnodes] distinct nodes */
  int *count;          /* producers on that node */
  uint64_t *bytes;     /* their total bytes */
  uint64_t *max1, *max2; /* largest and second largest producer bytes on it */
  int *max1_rank;      /* rank holding max1 (lowest rank on ties) */
  size_t *start;       /* [nnodes + 1] producers of node k: sorted[start[k] .. start[k+1]-1] */
  tagg_producer_t *sorted; /* producers sorted by (node, rank) */
  size_t nprod;
  uint64_t total;      /* sum of omega over the group */
} tagg_group_summary_t;

int tagg_group_summary_build(const tagg_topology_t *topo, const tagg_producer_t *prod, size_t nprod,
                             tagg_group_summary_t *s, tagg_err_t *err);
void tagg_group_summary_free(tagg_group_summary_t *s);

/* Capacity rule (MA-TAPIOCA section 3.2): persistency required -> capacity >=
 * the group's data; otherwise capacity >= N_buff x S_buff.  Persistency rule:
 * tier persistency >= required.  Fills need/capacity_ok/persistency_ok/eligible. */
void tagg_tier_check(const tagg_tier_t *tier, int is_target, uint64_t group_bytes,
                     const tagg_model_opts_t *opts, tagg_cost_t *c);

/* Cost of aggregator candidate (cand_rank, tier) for one group, on a summary.
 *   Cost_A = sum_{i != A} ( l x d(i,A) + omega(i,A) / B_{i->A} )     [sum form]
 *   C1     = max_{i != A} ( l x d(i,A) + omega(i,A) / B_{i->A} )     [max form]
 *   Cost_T = l_A + l x d(A,IO) + omega(A,T) / B_{A->T}
 * with B_{i->A} = min(B_net(i,A), B_source, B_A) (B_net only when d > 0) and
 * B_{A->T} = min(B_net, B_A, B_T).  Ineligible candidates get total = +inf
 * but their cost terms are still computed (for --explain). */
int tagg_candidate_cost_summary(const tagg_topology_t *topo, const tagg_tiers_t *tiers,
                                const tagg_group_summary_t *s, int cand_rank, int tier,
                                const tagg_model_opts_t *opts, tagg_cost_t *out, tagg_err_t *err);

/* Same, from the raw producer list: what one rank evaluates for its own
 * candidacy before the MINLOC reduction. */
int tagg_candidate_cost(const tagg_topology_t *topo, const tagg_tiers_t *tiers,
                        const tagg_producer_t *prod, size_t nprod, int cand_rank, int tier,
                        const tagg_model_opts_t *opts, tagg_cost_t *out, tagg_err_t *err);

/* ---- strategies ------------------------------------------------------------ */

typedef struct tagg_strategy_ctx {
  const tagg_topology_t *topo;
  const tagg_tiers_t *tiers;
  const tagg_model_opts_t *opts;
  int group;                       /* group index */
  const tagg_producer_t *prod;     /* its producers */
  size_t nprod;
  const tagg_group_summary_t *sum;
  uint64_t *rng;                   /* state for "random", advanced per group */
  const int *first_ranks;          /* lowest rank of each used node, in rank order */
  int nfirst;
} tagg_strategy_ctx_t;

typedef struct tagg_strategy {
  const char *name;
  const char *description;
  /* Chooses the aggregator of one group: *rank and *tier. */
  int (*choose)(const tagg_strategy_ctx_t *ctx, int *rank, int *tier, tagg_err_t *err);
} tagg_strategy_t;

extern const tagg_strategy_t tagg_strategy_memory_aware;
extern const tagg_strategy_t tagg_strategy_topo_aware;
extern const tagg_strategy_t tagg_strategy_shortest;
extern const tagg_strategy_t tagg_strategy_longest;
extern const tagg_strategy_t tagg_strategy_first_per_node;
extern const tagg_strategy_t tagg_strategy_random;
extern const tagg_strategy_t *const tagg_strategies[]; /* NULL-terminated */
const tagg_strategy_t *tagg_strategy_find(const char *name);

/* ---- the plan -------------------------------------------------------------- */

typedef struct tagg_group_plan {
  uint64_t offset, length;   /* file domain */
  int nprod;
  int aggr_rank, aggr_node, tier;
  tagg_cost_t cost;          /* the terms that decided it */
} tagg_group_plan_t;

typedef struct tagg_plan {
  int naggr;
  unsigned naggr_flags;
  uint64_t d_tot;
  char strategy[32];
  tagg_cost_form_t form;
  tagg_partition_t part;
  tagg_group_plan_t *groups;  /* [naggr] */
  double worst_total;         /* max over groups of cost.total (groups run in parallel) */
} tagg_plan_t;

/* bytes[r] = data of rank r (nranks = tagg_topology_nranks(topo)). */
int tagg_plan(const tagg_topology_t *topo, const tagg_tiers_t *tiers, const uint64_t *bytes,
              const tagg_model_opts_t *opts, tagg_plan_t *plan, tagg_err_t *err);
void tagg_plan_free(tagg_plan_t *plan);

/* Every (rank, tier) candidate of group g with its costs, cheapest first;
 * *out is malloc'ed (free()).  For --explain and tests. */
typedef struct tagg_candidate {
  int rank, node, tier;
  tagg_cost_t cost;
} tagg_candidate_t;
int tagg_plan_candidates(const tagg_topology_t *topo, const tagg_tiers_t *tiers,
                         const tagg_plan_t *plan, int g, const tagg_model_opts_t *opts,
                         tagg_candidate_t **out, size_t *n, tagg_err_t *err);

#ifdef __cplusplus
}
#endif
#endif
