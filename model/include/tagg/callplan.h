/* tagg/callplan.h - the plan of one collective call, as one pure computation.
 *
 * The engine describes each rank's request in one fixed-size row
 * (tagg_req_desc_t), gathers the rows (one MPI_Allgather; a local failure
 * rides in its row), and every rank computes the same plan from the same rows:
 * whether to aggregate at all (cost of direct access against aggregation with
 * the target's latency and bandwidth by request size), the file domains
 * (partition), one aggregator per domain (election: cost-based, or a strategy
 * of the registry, under one-domain-per-rank, aggr_per_node and the layout's
 * placement constraint), rounds, throttle. No agreement round is needed: the
 * computation is deterministic. The plan holds O(#domains) numbers; the
 * per-domain producer lists used while electing are O(#ranks + #domains),
 * never a ranks x aggregators matrix (tagg_call_plan_scratch_bytes).
 *
 * MA-TAPIOCA (seed 002, section 3.2): #Aggr (naggr.c), the file domains, and
 * the aggregator placement by Cost_A + Cost_T (cost.c) are the steps below. */
#ifndef TAGG_CALLPLAN_H
#define TAGG_CALLPLAN_H

#include <stddef.h>
#include <stdint.h>
#include "tagg/error.h"
#include "tagg/model.h"
#include "tagg/tiers.h"
#include "tagg/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's request, as every rank sees it after the gather. */
typedef struct tagg_req_desc {
  uint64_t lo, hi;       /* touched range [lo, hi); lo == UINT64_MAX: nothing */
  uint64_t bytes;        /* bytes asked */
  uint64_t nruns;        /* extents (file-system requests if accessed directly) */
  /* Regular shape: `count` runs of `len` bytes, run i at lo + i * stride
   * (stride >= len; count == 1 for one run), repeated `count2` times at
   * `stride2` (a 2D block of a 3D array; count2 == 1: one level). count == 0:
   * irregular, the runs are only known to the rank itself. */
  uint64_t count, len, stride;
  uint64_t count2, stride2;
  uint32_t flags;        /* TAGG_REQ_* */
  uint32_t pad;
} tagg_req_desc_t;

#define TAGG_REQ_FAILED 1u  /* the rank failed locally: every rank fails the call */
#define TAGG_REQ_OVERLAP 2u /* the rank's own runs overlap: access in order, directly */
#define TAGG_REQ_RAW 4u     /* the rank has raw data (not file metadata) */
#define TAGG_REQ_DONE 8u    /* the rank accessed its runs directly before the gather (speculative direct
                               access, tagg_spec_guess): the plan leaves them out */

/* The target file system's cost of one request by size: latency and bandwidth
 * measured at a few sizes (tagg-calibrate); linear interpolation in log(size),
 * the end points beyond. n == 0: the tiers' target latency and bandwidth. */
#define TAGG_FS_POINTS 8
typedef struct tagg_fs_perf {
  int n;
  uint64_t size[TAGG_FS_POINTS];   /* ascending */
  double latency[TAGG_FS_POINTS];  /* seconds per request */
  double bandwidth[TAGG_FS_POINTS]; /* bytes per second of one stream */
  int ranks;                        /* streams measured together (request ... ranks=N; 0: not said) */
  double alone;                     /* reads: bytes per second of one process reading a file's largest
                                       requests alone on its node ('read_alone bandwidth=R'; 0: not
                                       measured). Writes take the target tier's bandwidth */
  int read;                         /* 1: measured reads ('read_request' lines, tagg_fs_read_perf_*) */
} tagg_fs_perf_t;

/* The 'request SIZE latency=T bandwidth=R [ranks=N]' lines of a tier file
 * (written by tagg-calibrate: writes; ranks = how many ranks of one node
 * issued them together, interleaved in one file, R then each one's share);
 * none: fs->n == 0. Errors name file, line, field.
 * The _read_ ones take the 'read_request' lines (reads of that size) and the
 * 'read_alone bandwidth=R' line (fs->alone). */
int tagg_fs_perf_load(const char *path, tagg_fs_perf_t *fs, tagg_err_t *err);
int tagg_fs_perf_parse(const char *text, const char *name, tagg_fs_perf_t *fs, tagg_err_t *err);
int tagg_fs_read_perf_load(const char *path, tagg_fs_perf_t *fs, tagg_err_t *err);
int tagg_fs_read_perf_parse(const char *text, const char *name, tagg_fs_perf_t *fs, tagg_err_t *err);

/* Seconds for one request of `size` bytes. */
double tagg_fs_request_time(const tagg_fs_perf_t *fs, const tagg_tiers_t *tiers, uint64_t size);

typedef enum { TAGG_AGGREGATE_AUTO = 0, TAGG_AGGREGATE_ALWAYS = 1, TAGG_AGGREGATE_NEVER = 2 } tagg_aggregate_t;

/* Placement constraint of the layout, reported once at open: the i-th rank
 * allowed to aggregate the stripe holding `off` (-1 past the last; all -1 for
 * i = 0 means "no constraint"). Used by node-local subfiles, whose stripe k
 * may only be aggregated on the node holding it; domains are then single
 * stripes. */
typedef int (*tagg_owner_fn)(const void *ctx, uint64_t off, int i);

typedef struct tagg_call_in {
  int nranks;
  const tagg_req_desc_t *req;      /* [nranks] */
  const tagg_topology_t *topo;     /* ranks -> nodes */
  const tagg_tiers_t *tiers;
  const int *node_tier;            /* [nnodes] tier index of each node's buffers (NULL: tiers->source) */
  const tagg_model_opts_t *opts;   /* n_buff, s_buff, fs_block, seed, persistency */
  const tagg_strategy_t *strategy; /* registry strategy (NULL or cost_based: Cost_A + Cost_T) */
  int cost_based;
  uint64_t unit;                   /* domain alignment (stripe, else block) */
  uint64_t unit_fine;              /* > 0: domains may align to a power-of-two fraction of unit, a multiple of
                                      this, where whole units leave them unbalanced (the shared layout's
                                      block; tagg_partition_range); 0: whole units (a layout's stripe) */
  uint64_t bufsize;                /* one round buffer */
  int nbuf;                        /* buffers per aggregator */
  int naggr;                       /* forced aggregator count (0: the model's) */
  int per_node, throttle;          /* -1: the model's rule, 0: no limit */
  int read;                        /* the call reads: the throttle rule limits writes only */
  int one_file;                    /* every aggregator writes the same file (shared layout, or one subfile) */
  int serial_writes;               /* the file system's client serialises the writes of a node into one
                                      file (Linux FUSE takes the file's lock for each write), or is
                                      best served one stream at a time (the engine: direct writes into a
                                      local disk on a rotational device, which seeks between streams): without a
                                      calibration of writers together (fs->ranks >= 2), a node's direct
                                      writes take turns and one aggregator per node gets what several would */
  uint64_t dio_block;              /* > 0: the aggregators access the file with O_DIRECT in whole blocks of
                                      this size (their unaligned ends buffered): a single domain starts at a
                                      multiple of it, so that its rounds are whole blocks in the file and in
                                      the buffers; 0: it starts where the data does */
  uint64_t read_unit;              /* reads: > 0 when the layout reads each unit of this size that a rank's
                                      direct read touches whole, the first time that rank reads it (the
                                      subfile layout checks a stripe against its recorded checksum): direct
                                      reads are priced as those whole units, which ranks sharing a unit each
                                      read again, and an aggregator reads once; 0: as the runs asked */
  uint64_t read_group;             /* reads with read_unit: the units a rank's range touches inside one group of
                                      this size (a multiple of read_unit) are one request (the subfile layout
                                      reads a stripe's checked blocks together); 0: each unit one request */
  tagg_aggregate_t mode;
  const tagg_fs_perf_t *fs;        /* NULL: the tiers' target */
  double sync_cost;                /* seconds per synchronisation (0: 20 x the MPI latency) */
  tagg_owner_fn owner;             /* NULL: no placement constraint */
  const void *owner_ctx;
} tagg_call_in_t;

typedef enum { TAGG_CALL_NOTHING = 0, TAGG_CALL_DIRECT, TAGG_CALL_AGGREGATE, TAGG_CALL_FAILED } tagg_call_action_t;

/* aggregate=auto aggregates a call only when the model predicts it at least
 * this share cheaper than direct access; closer is a tie, and a tie goes to
 * direct access. The predictions are good to about this much at best (measured
 * costs of request sizes, modelled exchange), and on the GlusterFS testbed a
 * 0.4 % predicted gain was an 8 % loss (S3D, 256 MiB: model/README.md). */
#define TAGG_AGGR_MIN_GAIN 0.05

/* tagg_call_plan_t.spec_verdict */
enum { TAGG_SPEC_DIRECT = 1, TAGG_SPEC_AGGREGATE = 2 };

typedef struct tagg_call_plan {
  tagg_call_action_t action;
  int failed_rank;          /* TAGG_CALL_FAILED: lowest failing rank */
  const char *why;          /* static text: why this action */
  uint64_t lo, hi;          /* touched range, lo aligned down to unit */
  uint64_t dsize;           /* domain size */
  uint64_t round;           /* bytes of one round (one slot of the buffers) */
  uint64_t bufsize;         /* the round buffer it was planned with (in->bufsize) */
  int ndom;                 /* domains = aggregators */
  int nrounds;              /* rounds of the longest domain */
  int throttle, per_node;
  int *aggr;                /* [ndom] aggregator rank of each domain */
  int exact;                /* every producer's runs follow from the rows (no coverage exchange) */
  double cost_direct, cost_aggr; /* model's estimate of each choice (seconds) */
  int by_cost;              /* TAGG_CALL_DIRECT because direct access costs less (aggregate=auto) */
  int done;                 /* rows accessed before the plan (TAGG_REQ_DONE) */
  int all_done;             /* no other row has bytes: TAGG_CALL_DIRECT with nothing left to access */
  int spec_verdict;         /* all_done: the plan the call would have had with the done rows as any
                               other: TAGG_SPEC_DIRECT (direct, by cost), TAGG_SPEC_AGGREGATE, or 0
                               (direct for another reason: aggregate=never, overlapping runs, metadata).
                               cost_direct and cost_aggr are that plan's */
} tagg_call_plan_t;

/* Returns TAGG_OK, or an error with out->action still telling what every
 * other rank does (the decision is made before anything is allocated). */
int tagg_call_plan(const tagg_call_in_t *in, tagg_call_plan_t *out, tagg_err_t *err);
void tagg_call_plan_free(tagg_call_plan_t *p);

/* Same shape: every rank's row equals the previous call's shifted by one delta
 * (HACC's variables, h5bench timesteps); *delta gets it. */
int tagg_req_same_shape(const tagg_req_desc_t *prev, const tagg_req_desc_t *cur, int nranks, int64_t *delta);

/* The runs of a regular request inside [a, b), in file order: calls emit for
 * each (clipped); returns how many. */
size_t tagg_req_runs(const tagg_req_desc_t *r, uint64_t a, uint64_t b,
                     void (*emit)(void *ctx, uint64_t off, uint64_t len), void *ctx);

/* Domain d's covered runs, sorted and merged, computed from the rows (plan->exact
 * only): *cov gets malloc'd (off, len) pairs. */
int tagg_call_coverage(const tagg_call_in_t *in, const tagg_call_plan_t *plan, int d, uint64_t **cov,
                       size_t *ncov, tagg_err_t *err);

/* Speculative direct access. Each rank remembers the shapes of its own recent
 * requests (tagg_req_desc_t without its position: bytes, runs, regular shape)
 * that the plan sent direct because direct access cost less, per direction.
 * When a new request has one of them, the rank guesses the plan will say
 * direct again: it accesses its runs first and sends its row flagged
 * TAGG_REQ_DONE (with TAGG_REQ_FAILED if the access failed). The plan leaves
 * done rows out; when every row with bytes is done, the call is over and the
 * gather that carried the rows, and any failure, was its only
 * synchronisation: no agreement after the access. A wrong guess costs the
 * call the speculating ranks' share of the aggregation, never correctness:
 * each rank's runs are its own, and every access of an earlier call ended
 * before that call's last collective, which every rank left before it
 * speculates. A shape the plan aggregates is forgotten, and so is one whose
 * call, every row done, would have been aggregated (spec_verdict): the guess
 * is checked on every call, so a shape learnt on one file system, layout or
 * decomposition of the other ranks does not outlive them. A shape accessed
 * direct for another reason than cost (aggregate=never) is not learnt. */
#define TAGG_SPEC_SHAPES 4
typedef struct tagg_spec {
  tagg_req_desc_t shape[2][TAGG_SPEC_SHAPES]; /* [read] most recent first */
  int n[2];
} tagg_spec_t;

/* 1 when `mine` (this rank's row, not empty) has a remembered shape of its direction. */
int tagg_spec_guess(const tagg_spec_t *s, int read, const tagg_req_desc_t *mine);
/* After the plan of a call: remembers mine's shape when the plan went direct by
 * cost (every row done: would have, spec_verdict), forgets it when the plan
 * aggregated or would have. */
void tagg_spec_learn(tagg_spec_t *s, int read, const tagg_req_desc_t *mine, const tagg_call_plan_t *plan);

/* Peak bytes a rank holds while planning (rows + producer lists + plan), for
 * nranks and ndom domains where each rank's range meets `span` domains. */
size_t tagg_call_plan_scratch_bytes(int nranks, int ndom, int span);

#ifdef __cplusplus
}
#endif
#endif
