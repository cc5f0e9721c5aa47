/* sim.h - one collective write or read at scale, simulated flow by flow
 * (flow.h) over the links of a tagg topology, for a tagg_plan() of the cost
 * model.  The pipelined two-phase algorithm of MA-TAPIOCA (002_*.txt,
 * Algorithm 1): each aggregator's file domain is moved in rounds of S_buff
 * bytes through N_buff buffers; a round's aggregation may overlap the
 * previous rounds' I/O as long as a buffer is free.  Rules and
 * simplifications: tools/tagg-sim/README.md. */
#ifndef TAGG_SIM_SIM_H
#define TAGG_SIM_SIM_H
#include <stdint.h>
#include "tagg/model.h"

typedef enum { SIM_WRITE = 0, SIM_READ = 1 } sim_op_t;

typedef struct sim_opts {
  sim_op_t op;
  int n_buff;          /* aggregation buffers per aggregator */
  uint64_t s_buff;     /* their size */
  double resolution;   /* event batching (flow_run); 0 = exact */
} sim_opts_t;

typedef struct sim_result {
  double time;          /* s, from the start to the last aggregator's last I/O */
  double bandwidth;     /* D_tot / time, B/s */
  double d_tot;
  int naggr;
  long flows;           /* flows simulated */
  long recomputes;      /* max-min computations */
  int hot_link;         /* network link that carried the most bytes (-1: none) */
  double hot_bytes;     /* its bytes */
  double hot_util;      /* hot_bytes / (capacity x time) */
  char hot_name[96];
  double fs_util;       /* busiest I/O node's file-system share: bytes / (B_T x time) */
  double agg_phase;     /* mean over rounds of aggregation (write) / scatter (read) time */
  double io_phase;      /* mean over rounds of flush (write) / fetch (read) time */
} sim_result_t;

/* Simulates the plan.  bytes[r] = data of rank r (the plan's input).
 * Returns TAGG_OK or a TAGG_E* code with a message in err. */
int sim_run(const tagg_topology_t *topo, const tagg_tiers_t *tiers, const uint64_t *bytes,
            const tagg_plan_t *plan, const sim_opts_t *o, sim_result_t *res, tagg_err_t *err);
#endif
